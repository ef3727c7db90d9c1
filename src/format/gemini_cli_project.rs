//! Where `agy-decode --format gemini-cli --out-dir HOME` puts a session:
//! `HOME/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of id>.jsonl`,
//! HOME being what Gemini CLI calls `~/.gemini`.
//!
//! Gemini CLI (0.61.0) finds a project's slug in `HOME/projects.json`
//! (`{"projects": {"/abs/dir": "slug"}}`), and checks it against the
//! `.project_root` marker (the directory's path) in `HOME/tmp/<slug>/` and
//! `HOME/history/<slug>/`. A new project gets its directory's name
//! lowercased, every other character `-`, runs of `-` squeezed and cut at
//! both ends (`project` if nothing is left), with `-1`, `-2`, ... added
//! while the slug is registered or marked for another directory. This
//! module does the same, holding the CLI's lock on the registry
//! (`projects.json.lock`, a directory) while it reads and writes it, and
//! never replaces a registry it cannot read: that is an error.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

use super::write::write_file;
use crate::error::{Error, Result};

const REGISTRY: &str = "projects.json";
const MARKER: &str = ".project_root";
/// The directories under HOME whose `<slug>/` holds a marker.
const MARKED: &[&str] = &["tmp", "history"];
/// How long to wait for the registry's lock, and when a lock left behind
/// counts as stale (the CLI's lock library uses 10 s for both).
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Gemini CLI's slug for a directory name.
pub fn slugify(name: &str) -> String {
    let mut slug = String::new();
    for c in name.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && slug.ends_with('-')) {
            slug.push(c);
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "project".to_string()
    } else {
        slug.to_string()
    }
}

/// The file name Gemini CLI gives a session that started at `start`
/// (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
pub fn session_file_name(start: &str, session: &str) -> String {
    let minute: String = start.chars().take(16).collect();
    let short: String = session.chars().take(8).collect();
    format!("session-{}-{short}.jsonl", minute.replace(':', "-"))
}

/// Writes a session's `lines` for `project` under `home`, registering the
/// project first if it is new, and returns the file's path. A session with
/// this id that exists in the project (under any start time) is an error
/// unless `force`, which replaces it.
pub fn write_session(
    home: &Path,
    project: &str,
    session: &str,
    start: &str,
    lines: &[u8],
    force: bool,
) -> Result<PathBuf> {
    let slug = project_slug(home, project)?;
    let chats = home.join("tmp").join(&slug).join("chats");
    let path = chats.join(session_file_name(start, session));
    let others = same_session(&chats, session)?;
    if !force {
        if let Some(other) = others.first() {
            return Err(Error::data(format!(
                "{}: a session with this id exists (--force replaces it)",
                other.display()
            )));
        }
    }
    write_file(&chats, &path, lines, force)?;
    for other in others.iter().filter(|o| **o != path) {
        fs::remove_file(other).map_err(|e| Error::io(other.display(), e))?;
    }
    Ok(path)
}

/// How old a session may be before Gemini CLI deletes it when it starts,
/// unless `general.sessionRetention` in its settings says otherwise.
const RETENTION_DAYS: i64 = 30;

/// Says on stderr when Gemini CLI will delete the session at `path` the
/// next time it starts (it deletes every session last updated more than
/// 30 days ago, but the one it resumes), unless `HOME/settings.json`
/// turns that off. The file itself keeps the conversation's own times,
/// so that the same conversation always gives the same bytes.
pub fn warn_if_expiring(home: &Path, path: &Path, last_updated: &str) {
    let settings: Value = fs::read_to_string(home.join("settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let retention = &settings["general"]["sessionRetention"];
    if retention["enabled"] == false || retention.get("maxAge").is_some() {
        return;
    }
    let Ok(then) = crate::time::Timestamp::parse(last_updated) else {
        return;
    };
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let days = (now - then.seconds) / 86_400;
    if days > RETENTION_DAYS {
        crate::error::warn(
            "agy-decode",
            format_args!(
                "{}: last updated {days} days ago; Gemini CLI deletes sessions older than 30 days \
                 when it starts, except the one it resumes (set general.sessionRetention in {} to keep it)",
                path.display(),
                home.join("settings.json").display()
            ),
        );
    }
}

/// The session files in `chats` whose header names `session`.
fn same_session(chats: &Path, session: &str) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(chats) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(chats.display(), e)),
    };
    let short: String = session.chars().take(8).collect();
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(chats.display(), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.starts_with("session-")
            && (name.ends_with(&format!("-{short}.jsonl"))
                || name.ends_with(&format!("-{short}.json")));
        if !ours {
            continue;
        }
        let text = fs::read_to_string(entry.path()).unwrap_or_default();
        let names_it = text
            .lines()
            .next()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .is_some_and(|h| h.get("sessionId").and_then(Value::as_str) == Some(session));
        if names_it {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

/// The slug of `project` under `home`, registered (and marked) when new.
pub fn project_slug(home: &Path, project: &str) -> Result<String> {
    fs::create_dir_all(home).map_err(|e| Error::io(home.display(), e))?;
    let registry = home.join(REGISTRY);
    let _lock = Lock::acquire(&registry)?;
    let mut data = read_registry(&registry)?;
    let projects = data
        .get_mut("projects")
        .and_then(Value::as_object_mut)
        .expect("read_registry checked projects");
    if let Some(slug) = projects.get(project).and_then(Value::as_str) {
        if owner_matches(home, slug, project)? {
            let slug = slug.to_string();
            mark(home, &slug, project)?;
            return Ok(slug);
        }
    }
    let slug = match marked_slug(home, project)? {
        Some(slug) => slug,
        None => claim(home, project, projects)?,
    };
    mark(home, &slug, project)?;
    projects.insert(project.to_string(), slug.as_str().into());
    let mut text = serde_json::to_string_pretty(&Value::Object(data))
        .expect("serializing to a String cannot fail");
    text.truncate(text.trim_end().len());
    write_file(home, &registry, text.as_bytes(), true)?;
    Ok(slug)
}

/// The registry as an object whose `projects` maps paths to slugs; an
/// absent file is an empty one.
fn read_registry(path: &Path) -> Result<Map<String, Value>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(path.display(), e)),
    };
    let bad = |why: &str| {
        Error::data(format!(
            "{}: not a Gemini CLI project registry ({why}); it is left as it is",
            path.display()
        ))
    };
    let mut data = if text.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(bad("not a JSON object")),
            Err(e) => return Err(bad(&e.to_string())),
        }
    };
    let projects = data
        .entry("projects")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(projects) = projects.as_object() else {
        return Err(bad("\"projects\" is not an object"));
    };
    if let Some((dir, _)) = projects
        .iter()
        .find(|(_, slug)| !slug.as_str().is_some_and(is_slug))
    {
        return Err(bad(&format!("the slug of {dir:?} is not [a-z0-9-]+")));
    }
    Ok(data)
}

fn is_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The directory a `.project_root` marker names, if there is one.
fn marker_owner(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(owner) => Ok(Some(owner.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// No marker of `slug` names another directory than `project`.
fn owner_matches(home: &Path, slug: &str, project: &str) -> Result<bool> {
    for base in MARKED {
        let marker = home.join(base).join(slug).join(MARKER);
        if marker_owner(&marker)?.is_some_and(|owner| owner != project) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A slug whose marker names `project` although the registry does not.
fn marked_slug(home: &Path, project: &str) -> Result<Option<String>> {
    for base in MARKED {
        let dir = home.join(base);
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            if marker_owner(&dir.join(&name).join(MARKER))?.as_deref() == Some(project) {
                return Ok(Some(name));
            }
        }
    }
    Ok(None)
}

/// A new slug for `project`: its name's slug, then `-1`, `-2`, ... while
/// that is registered or marked for another directory.
fn claim(home: &Path, project: &str, projects: &Map<String, Value>) -> Result<String> {
    let name = Path::new(project)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = slugify(&name);
    for counter in 0u64.. {
        let candidate = if counter == 0 {
            base.clone()
        } else {
            format!("{base}-{counter}")
        };
        let registered = projects.values().any(|s| s.as_str() == Some(&candidate));
        if !registered && owner_matches(home, &candidate, project)? {
            return Ok(candidate);
        }
    }
    unreachable!("some counter is free")
}

/// Writes the `.project_root` markers of `slug` that are missing.
fn mark(home: &Path, slug: &str, project: &str) -> Result<()> {
    for base in MARKED {
        let dir = home.join(base).join(slug);
        let marker = dir.join(MARKER);
        if marker_owner(&marker)?.is_none() {
            fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display(), e))?;
            fs::write(&marker, project).map_err(|e| Error::io(marker.display(), e))?;
        }
    }
    Ok(())
}

/// The lock Gemini CLI takes on the registry: the directory
/// `projects.json.lock`, made atomically; one older than [`LOCK_WAIT`] was
/// left by a process that died.
struct Lock {
    path: PathBuf,
}

impl Lock {
    fn acquire(registry: &Path) -> Result<Lock> {
        let mut path = registry.as_os_str().to_owned();
        path.push(".lock");
        let path = PathBuf::from(path);
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match fs::create_dir(&path) {
                Ok(()) => return Ok(Lock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > LOCK_WAIT);
                    if stale {
                        let _ = fs::remove_dir(&path);
                        continue;
                    }
                    if Instant::now() > deadline {
                        return Err(Error::data(format!(
                            "{}: the project registry stayed locked for {} s",
                            path.display(),
                            LOCK_WAIT.as_secs()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(Error::io(path.display(), e)),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_file_names_follow_gemini_cli() {
        assert_eq!(slugify("work"), "work");
        assert_eq!(slugify("My_Repo.rs"), "my-repo-rs");
        assert_eq!(slugify("--a  b--"), "a-b");
        assert_eq!(slugify("日本"), "project");
        assert_eq!(
            session_file_name(
                "2026-12-01T15:06:50.703Z",
                "d5ba0c90-b3e8-48ec-a5f5-e2d52cd396bb"
            ),
            "session-2026-12-01T15-06-d5ba0c90.jsonl"
        );
    }

    #[test]
    fn registry_is_merged_and_slugs_collide_into_counters() {
        let home = std::env::temp_dir().join(format!("agy-gemini-project-{}", std::process::id()));
        let _ = fs::remove_dir_all(&home);
        fs::create_dir_all(&home).unwrap();
        fs::write(
            home.join(REGISTRY),
            r#"{"projects": {"/else/work": "work"}, "other": 1}"#,
        )
        .unwrap();
        assert_eq!(project_slug(&home, "/here/work").unwrap(), "work-1");
        assert_eq!(project_slug(&home, "/here/work").unwrap(), "work-1");
        let data: Value =
            serde_json::from_str(&fs::read_to_string(home.join(REGISTRY)).unwrap()).unwrap();
        assert_eq!(
            data,
            serde_json::json!({"projects": {"/else/work": "work", "/here/work": "work-1"}, "other": 1})
        );
        assert_eq!(
            fs::read_to_string(home.join("tmp/work-1/.project_root")).unwrap(),
            "/here/work"
        );
        assert!(home.join("history/work-1/.project_root").exists());
        assert!(!home.join("projects.json.lock").exists());
        // A registry the CLI could not read either is left alone.
        fs::write(home.join(REGISTRY), "{not json").unwrap();
        let err = project_slug(&home, "/x/y").unwrap_err().to_string();
        assert!(err.contains("not a Gemini CLI project registry"), "{err}");
        assert_eq!(
            fs::read_to_string(home.join(REGISTRY)).unwrap(),
            "{not json"
        );
        fs::remove_dir_all(&home).unwrap();
    }
}
