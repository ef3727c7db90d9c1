//! Where a conversation names its project, gathered from all it has
//! (FORMAT.md 15 row 7): its trajectory metadata's workspaces and
//! workspace_uris ([`crate::agy::project`]), its row of agy's index
//! (`workspace_uris`) and the ACP lane's sidecar (`cwd`). `agy-edit move`
//! moves a conversation when one of them is at or under OLD, and
//! `agy-ls --under` lists it when one is at or under DIR: the same rule,
//! here.

use crate::agy::paths::Dir;
use crate::agy::project;
use crate::store::index::IndexRow;

/// A place where a conversation names its project.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    TrajectoryMetadata,
    IndexRow,
    Sidecar,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::TrajectoryMetadata => "trajectory metadata",
            Place::IndexRow => "index row",
            Place::Sidecar => "sidecar",
        }
    }
}

/// Each path or URI a conversation names its project by, with where,
/// from what it has of `metadata` (the "main" trajectory metadata blob),
/// `index` (its index row) and `sidecar` (the ACP `.meta` JSON).
pub fn places(
    metadata: Option<&[u8]>,
    index: Option<&IndexRow>,
    sidecar: Option<&[u8]>,
) -> Vec<(Place, String)> {
    let mut places = Vec::new();
    for uri in metadata.map(project::workspace_uris).unwrap_or_default() {
        places.push((Place::TrajectoryMetadata, uri));
    }
    for uri in index.map(IndexRow::workspace_uris).unwrap_or_default() {
        places.push((Place::IndexRow, uri));
    }
    if let Some(cwd) = sidecar.and_then(project::sidecar_cwd) {
        places.push((Place::Sidecar, cwd));
    }
    places
}

/// Whether a conversation with these places has its project at or under
/// `dir`.
pub fn is_under(places: &[(Place, String)], dir: &Dir) -> bool {
    places.iter().any(|(_, path)| dir.contains(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::wire::Writer;

    #[test]
    fn every_place_counts() {
        let mut meta = Writer::new();
        meta.message(1, |w| {
            w.string(1, "file:///work/app").string(2, "file:///work");
        });
        let meta = meta.into_bytes();
        let found = places(Some(&meta), None, Some(br#"{"cwd":"/srv/x"}"#));
        assert_eq!(
            found,
            [
                (Place::TrajectoryMetadata, "file:///work/app".to_string()),
                (Place::TrajectoryMetadata, "file:///work".to_string()),
                (Place::Sidecar, "/srv/x".to_string()),
            ]
        );
        let dir = |d: &str| Dir::parse(d).unwrap();
        assert!(is_under(&found, &dir("/work/app")));
        assert!(is_under(&found, &dir("/work")));
        assert!(is_under(&found, &dir("/srv")));
        assert!(!is_under(&found, &dir("/work/ap")));
        assert!(!is_under(&places(None, None, None), &dir("/")));
    }
}
