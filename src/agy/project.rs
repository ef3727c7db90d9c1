//! Where a conversation names its project, in agy's own bytes (FORMAT.md
//! 15 row 7): its trajectory metadata (`trajectory_metadata_blob`
//! "main"), whose workspaces each name a folder (1[].1) and a git root
//! (1[].2) and whose workspace_uris (7[]) list them again, with the
//! branch (1[].4) and the project id (18); and the ACP lane's
//! `conversations/<id>.meta` sidecar, whose `cwd` the lane keeps instead
//! (its metadata blob is empty). The index row names the project too
//! (`crate::store::index`); brain transcripts and tool calls name paths in
//! it, which only `agy-edit move --everywhere` touches.
//!
//! Each edit here changes those fields and nothing else: every other byte
//! of the message, or of the sidecar's JSON, stays.

use crate::agy::patch::{self, Rewrite};
use crate::agy::steps::field::trajectory::{
    PROJECT_ID, WORKSPACES, WORKSPACE_BRANCH, WORKSPACE_FOLDER_URI, WORKSPACE_GIT_ROOT_URI,
    WORKSPACE_URIS,
};
use crate::agy::wire::{self, Message, Writer};

/// The URIs the trajectory metadata names its project by, in order: each
/// workspace's folder and git root, then workspace_uris.
pub fn workspace_uris(metadata: &[u8]) -> Vec<String> {
    let meta = Message::new(metadata);
    let mut uris = Vec::new();
    for workspace in meta.repeated_messages(WORKSPACES) {
        for number in [WORKSPACE_FOLDER_URI, WORKSPACE_GIT_ROOT_URI] {
            if let Some(uri) = workspace.get_nonempty_str(number) {
                uris.push(uri.into_owned());
            }
        }
    }
    uris.extend(
        meta.repeated_bytes(WORKSPACE_URIS)
            .map(|uri| wire::lossy_str(uri).into_owned())
            .filter(|uri| !uri.is_empty()),
    );
    uris
}

/// The trajectory metadata with the places that name its project (the
/// workspaces' folders and git roots, workspace_uris) rewritten; `None`
/// when none changed.
pub fn rewrite_workspaces(metadata: &[u8], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    let workspaces = wire::edit_field(metadata, WORKSPACES, |workspace| {
        patch::rewrite_in(
            workspace,
            &[WORKSPACE_FOLDER_URI, WORKSPACE_GIT_ROOT_URI],
            rewrite,
        )
    });
    let bytes = workspaces.as_deref().unwrap_or(metadata);
    let uris = wire::edit_field(bytes, WORKSPACE_URIS, |uri| {
        patch::rewrite_text(uri, rewrite)
    });
    uris.or(workspaces)
}

/// A summaries-file entry (`{1: id, 2: summary}`, agy-store(5)) with the
/// places its summary names the project rewritten: its workspace (9, a
/// copy of the metadata's first workspace) and its copy of the trajectory
/// metadata (17); `None` when none changed.
pub fn rewrite_summary_workspaces(entry: &[u8], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    const SUMMARY: u32 = 2;
    wire::edit_field(entry, SUMMARY, |summary| rewrite_summary(summary, rewrite))
}

/// A summary (an entry's field 2, the index's `raw_summary`) with its
/// workspace (9) and its copy of the trajectory metadata (17) rewritten;
/// `None` when neither changed.
pub fn rewrite_summary(summary: &[u8], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    const SUMMARY_WORKSPACE: u32 = 9;
    const SUMMARY_METADATA: u32 = 17;
    let workspace = wire::edit_field(summary, SUMMARY_WORKSPACE, |workspace| {
        patch::rewrite_in(
            workspace,
            &[WORKSPACE_FOLDER_URI, WORKSPACE_GIT_ROOT_URI],
            rewrite,
        )
    });
    let bytes = workspace.as_deref().unwrap_or(summary);
    wire::edit_field(bytes, SUMMARY_METADATA, |metadata| {
        rewrite_workspaces(metadata, rewrite)
    })
    .or(workspace)
}

/// The trajectory metadata naming `uri` as its project: a conversation
/// that named none (a headless `agy -p`) gets a workspace and a
/// workspace_uris entry, as agy writes them for a conversation started in
/// a directory.
pub fn add_workspace(metadata: &[u8], uri: &str) -> Vec<u8> {
    let mut out = Writer::from_vec(metadata.to_vec());
    out.message(WORKSPACES, |w| {
        w.string(WORKSPACE_FOLDER_URI, uri);
    });
    out.string(WORKSPACE_URIS, uri);
    out.into_bytes()
}

/// The branch the first workspace names.
pub fn branch(metadata: &[u8]) -> Option<String> {
    Message::new(metadata)
        .get_message(WORKSPACES)
        .and_then(|w| w.get_nonempty_str(WORKSPACE_BRANCH))
        .map(|b| b.into_owned())
}

/// The trajectory metadata with the first workspace's branch set to
/// `branch` (where it was, or after its other fields); `None` when it has
/// no workspace to hold one.
pub fn set_branch(metadata: &[u8], branch: &str) -> Option<Vec<u8>> {
    let mut first = true;
    wire::edit_field(metadata, WORKSPACES, |workspace| {
        if !std::mem::take(&mut first) {
            return None;
        }
        Some(wire::set_field(workspace, WORKSPACE_BRANCH, &[branch]))
    })
}

/// The project id (18): `default-cli-project` in the CLI,
/// `outside-of-project` or a project's UUID in the desktop app.
pub fn project_id(metadata: &[u8]) -> Option<String> {
    Message::new(metadata)
        .get_str(PROJECT_ID)
        .map(|p| p.into_owned())
}

/// The trajectory metadata with its project id `id`, where it was; `None`
/// when it has none (a conversation that names no project keeps naming
/// none).
pub fn set_project_id(metadata: &[u8], id: &str) -> Option<Vec<u8>> {
    wire::edit_field(metadata, PROJECT_ID, |old| {
        (old != id.as_bytes()).then(|| id.as_bytes().to_vec())
    })
}

/// The `cwd` of an ACP sidecar (`{"cwd":"/home/me/app","mode_id":…}`).
pub fn sidecar_cwd(json: &[u8]) -> Option<String> {
    let (_, raw) = sidecar_cwd_span(json)?;
    serde_json::from_str(raw).ok()
}

/// The sidecar with its `cwd` rewritten, every other byte as it was;
/// `None` when it did not change.
pub fn rewrite_sidecar_cwd(json: &[u8], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    let (at, raw) = sidecar_cwd_span(json)?;
    // The value as it stands, escapes and all: the move knows a path's
    // JSON-escaped forms.
    let moved = patch::rewrite_text(raw.as_bytes(), rewrite)?;
    let mut out = Vec::with_capacity(json.len() + moved.len());
    out.extend_from_slice(&json[..at]);
    out.extend_from_slice(&moved);
    out.extend_from_slice(&json[at + raw.len()..]);
    Some(out)
}

/// The sidecar with its `cwd` set to `cwd`: where it was, else as a new
/// first key.
pub fn set_sidecar_cwd(json: &[u8], cwd: &str) -> Option<Vec<u8>> {
    let value = serde_json::to_string(cwd).expect("a string serializes");
    match sidecar_cwd_span(json) {
        Some((at, raw)) => {
            let mut out = json[..at].to_vec();
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(&json[at + raw.len()..]);
            Some(out)
        }
        None => {
            let open = json.iter().position(|&b| b == b'{')?;
            let rest = &json[open + 1..];
            let empty = rest.iter().all(|b| b.is_ascii_whitespace() || *b == b'}');
            let mut out = json[..=open].to_vec();
            out.extend_from_slice(format!("\"cwd\":{value}").as_bytes());
            if !empty {
                out.push(b',');
            }
            out.extend_from_slice(rest);
            Some(out)
        }
    }
}

/// Where the sidecar's `cwd` string is: its offset, and its JSON text
/// (quotes included). `None` when it is not an object with a string `cwd`.
fn sidecar_cwd_span(json: &[u8]) -> Option<(usize, &str)> {
    let object: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_slice(json).ok()?;
    let raw = object.get("cwd")?.get();
    if !raw.starts_with('"') {
        return None;
    }
    let at = raw.as_ptr() as usize - json.as_ptr() as usize;
    Some((at, raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::paths::Move;

    fn metadata() -> Vec<u8> {
        let mut w = Writer::new();
        w.message(WORKSPACES, |ws| {
            ws.string(1, "file:///work/app")
                .string(2, "file:///work")
                .message(3, |r| {
                    r.string(7, "/work/app/vendor");
                })
                .string(4, "main");
        })
        .message(2, |t| {
            t.varint(1, 1_795_000_000);
        })
        .string(6, "c1")
        .string(WORKSPACE_URIS, "file:///work/app")
        .string(PROJECT_ID, "default-cli-project")
        .string(99, "/work/app in an unknown field");
        w.into_bytes()
    }

    #[test]
    fn only_the_project_places_move() {
        let meta = metadata();
        assert_eq!(
            workspace_uris(&meta),
            ["file:///work/app", "file:///work", "file:///work/app"]
        );
        let m = Move::new("/work/app", "/srv/app").unwrap();
        let moved = rewrite_workspaces(&meta, &m).unwrap();
        assert_eq!(m.take_count(), 2);
        assert_eq!(
            workspace_uris(&moved),
            ["file:///srv/app", "file:///work", "file:///srv/app"]
        );
        let m2 = Message::new(&moved);
        assert_eq!(
            m2.get_str(99).unwrap(),
            "/work/app in an unknown field",
            "only the project's places"
        );
        let repo = m2.get_message(WORKSPACES).unwrap().get_message(3).unwrap();
        assert_eq!(repo.get_str(7).unwrap(), "/work/app/vendor");
        let back = Move::new("/srv/app", "/work/app").unwrap();
        assert_eq!(rewrite_workspaces(&moved, &back).unwrap(), meta);
        let elsewhere = Move::new("/other", "/x").unwrap();
        assert_eq!(rewrite_workspaces(&meta, &elsewhere), None);
        // The git root moves with a directory above it.
        let up = Move::new("/work", "/srv").unwrap();
        assert_eq!(
            workspace_uris(&rewrite_workspaces(&meta, &up).unwrap()),
            ["file:///srv/app", "file:///srv", "file:///srv/app"]
        );
    }

    #[test]
    fn branch_and_project_id_are_set_in_place() {
        let meta = metadata();
        assert_eq!(branch(&meta).as_deref(), Some("main"));
        let renamed = set_branch(&meta, "feature/x").unwrap();
        assert_eq!(branch(&renamed).as_deref(), Some("feature/x"));
        assert_eq!(set_branch(&renamed, "main").unwrap(), meta);
        assert_eq!(set_branch(b"", "main"), None);
        assert_eq!(project_id(&meta).as_deref(), Some("default-cli-project"));
        let desktop = set_project_id(&meta, "outside-of-project").unwrap();
        assert_eq!(project_id(&desktop).as_deref(), Some("outside-of-project"));
        assert_eq!(
            set_project_id(&desktop, "default-cli-project").unwrap(),
            meta
        );
        assert_eq!(set_project_id(&meta, "default-cli-project"), None);
        assert_eq!(set_project_id(b"", "x"), None);
        let added = add_workspace(b"", "file:///new");
        assert_eq!(workspace_uris(&added), ["file:///new", "file:///new"]);
    }

    #[test]
    fn the_sidecar_keeps_its_bytes() {
        let json = br#"{"cwd":"/work/app","mode_id":"default", "other":"/work/app"}"#;
        assert_eq!(sidecar_cwd(json).as_deref(), Some("/work/app"));
        let m = Move::new("/work/app", "/srv/my app").unwrap();
        let moved = rewrite_sidecar_cwd(json, &m).unwrap();
        assert_eq!(
            moved,
            br#"{"cwd":"/srv/my app","mode_id":"default", "other":"/work/app"}"#
        );
        assert_eq!(sidecar_cwd(&moved).as_deref(), Some("/srv/my app"));
        let windows = br#"{"cwd":"C:\\Users\\me\\app"}"#;
        let m = Move::new(r"C:\Users\me", r"D:\me").unwrap();
        assert_eq!(
            rewrite_sidecar_cwd(windows, &m).unwrap(),
            br#"{"cwd":"D:\\me\\app"}"#
        );
        assert_eq!(
            set_sidecar_cwd(json, "/x").unwrap(),
            br#"{"cwd":"/x","mode_id":"default", "other":"/work/app"}"#
        );
        assert_eq!(set_sidecar_cwd(b"{}", "/x").unwrap(), br#"{"cwd":"/x"}"#);
        assert_eq!(
            set_sidecar_cwd(br#"{"mode_id":"m"}"#, "/x").unwrap(),
            br#"{"cwd":"/x","mode_id":"m"}"#
        );
        assert_eq!(sidecar_cwd(b"not json"), None);
    }
}
