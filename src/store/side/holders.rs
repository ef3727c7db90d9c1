//! Whether a running agy, or the desktop app, holds a data root: agy and
//! the app keep the side files in memory and write them back whole (the
//! app on exit), so an entry written while they run is lost, and a
//! conversation open in a session is being written to.
//!
//! What the store lets one tell (agy-store(5)):
//! - a session holds an `flock(2)` on `presence/<id>.lock` for as long as
//!   it runs [A: `/proc/locks` and `flock -n` on agy 1.2.13]; the file
//!   stays after it exits, so only the lock says anything;
//! - a running agy (or Antigravity) process keeps files of its root open:
//!   its conversations' databases, the index. On Linux `/proc` shows them.
//!
//! The second is asked only of processes named as agy's are (`agy`,
//! `language_server…`, anything with "antigravity" in its name), so that
//! agy-tools' own readers in the same pipeline (`agy-dump ROOT | … |
//! agy-pack --root ROOT`), and a user's `sqlite3`, are not taken for agy.

use std::path::{Path, PathBuf};

use crate::store::lock::try_flock;

/// Something that holds a root or a conversation of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    /// A session's presence lock on the conversation.
    Presence { lock: PathBuf },
    /// A process of agy's with a file of the root open.
    Process {
        pid: u32,
        name: String,
        file: PathBuf,
    },
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Holder::Presence { lock } => write!(
                f,
                "a running agy session holds {} (its lock is taken)",
                lock.display()
            ),
            Holder::Process { pid, name, file } => {
                write!(f, "{name} (process {pid}) has {} open", file.display())
            }
        }
    }
}

/// The session holding conversation `id` of `root`, if one does: its
/// presence lock is taken. A lock file left by a session that ended is
/// not held, and says nothing.
pub fn presence(root: &Path, id: &str) -> Option<Holder> {
    let lock = root.join("presence").join(format!("{id}.lock"));
    let file = std::fs::File::open(&lock).ok()?;
    // Taking the lock and closing the file at once: only a live holder
    // makes this fail, and for the moment we hold it agy would wait.
    match try_flock(&file) {
        Ok(false) => Some(Holder::Presence { lock }),
        _ => None,
    }
}

/// A process of agy's that has a file under `root` open, if any (Linux;
/// elsewhere `None`, as nothing can be asked).
pub fn process(root: &Path) -> Option<Holder> {
    let root = std::fs::canonicalize(root).ok()?;
    let me = std::process::id();
    let procs = std::fs::read_dir("/proc").ok()?;
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let dir = entry.path();
        let Some(name) = agy_name(&dir) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(file) = std::fs::read_link(fd.path()) {
                if file.starts_with(&root) {
                    return Some(Holder::Process { pid, name, file });
                }
            }
        }
    }
    None
}

/// The process's name when it is one of agy's: its executable's, or its
/// first argument's, file name.
fn agy_name(dir: &Path) -> Option<String> {
    let exe = std::fs::read_link(dir.join("exe")).ok();
    let argv0 = std::fs::read(dir.join("cmdline")).ok().and_then(|cmdline| {
        let first = cmdline.split(|&b| b == 0).next()?.to_vec();
        Some(PathBuf::from(String::from_utf8(first).ok()?))
    });
    [exe, argv0]
        .into_iter()
        .flatten()
        .filter_map(|path| Some(path.file_name()?.to_string_lossy().into_owned()))
        .find(|name| is_agy_name(name))
}

/// `agy`, the language server it runs, or the desktop app; never one of
/// agy-tools' `agy-*` binaries.
pub fn is_agy_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "agy"
        || lower.starts_with("language_server")
        || (lower.contains("antigravity") && !lower.starts_with("agy-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agy_is_told_from_agy_tools() {
        for name in [
            "agy",
            "language_server_linux_x64",
            "Antigravity",
            "antigravity",
        ] {
            assert!(is_agy_name(name), "{name}");
        }
        for name in ["agy-dump", "agy-pack", "sqlite3", "agyx", "bash"] {
            assert!(!is_agy_name(name), "{name}");
        }
    }

    #[test]
    fn a_presence_lock_counts_only_while_it_is_held() {
        let root = std::env::temp_dir().join(format!("agy-holders-{}", std::process::id()));
        std::fs::create_dir_all(root.join("presence")).unwrap();
        let path = root.join("presence").join("c1.lock");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(presence(&root, "c1"), None, "a lock left behind");
        let held = std::fs::File::open(&path).unwrap();
        assert!(try_flock(&held).unwrap());
        assert_eq!(presence(&root, "c1"), Some(Holder::Presence { lock: path }));
        drop(held);
        assert_eq!(presence(&root, "c1"), None);
        assert_eq!(presence(&root, "c2"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
