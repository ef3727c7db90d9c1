//! What agy-edit writes where no fact says what agy writes: each choice
//! made once, here, with its reason, so one line changes when a fact
//! arrives. The man page (agy-edit(1), CHOICES) says the same.
//!
//! The facts these rest on are FORMAT.md section 15 (agy 1.2.0 measured
//! around its own `/fork`, `/rewind` and resume) and a public capture of
//! agy 1.2.0 stores (pond's fixtures: a rewound conversation `07439cf3` and
//! its `/fork` `3abd71a7`), which show that:
//! - a rewind's `parent_references` row is a FORK (2) reference naming the
//!   conversation's own previous trajectory, and a fork inherits it;
//! - a fork's FORK reference names the parent's last copied step ("the fork
//!   cut at the parent's step 3" of a parent whose steps were 0-3, all
//!   copied);
//! - agy's own fork starts its brain transcript afresh (its chunk held only
//!   the fork's own steps), and agy's own rewind leaves the removed steps'
//!   transcript lines in place.
//!
//! One choice departs from those facts on purpose, and is made in
//! `trim.rs`, where the transcripts are cut: a rewind and a fork leave the
//! removed steps' lines out of the brain transcripts (and a fork keeps the
//! parent's lines of the steps it keeps), so that a transcript never shows a
//! step the conversation no longer has. No fact says agy reads its
//! transcripts back.

use uuid::Uuid;

use crate::agy::steps::field::reference;
use crate::agy::wire::Writer;

/// The namespace of every id agy-edit derives (a fixed random UUID), so the
/// same input gives the same ids and `cmp` works on the output.
const NAMESPACE: Uuid = Uuid::from_u128(0x8c1e_57a2_4b3d_4f69_9e07_d2a4_6b18_c35f);

/// The reference type a rewind records: FORK, as agy 1.2.0's own rewind
/// did (seen, not guessed; see the module documentation).
pub const REWIND_REFERENCE_TYPE: u64 = reference::FORK;

/// The reference type a fork records.
pub const FORK_REFERENCE_TYPE: u64 = reference::FORK;

/// The id of the fork of `parent` that keeps the steps up to
/// `keep_through`, when the user names none.
pub fn fork_id(parent: &str, keep_through: i64) -> String {
    derive(&format!("fork\0{parent}\0{keep_through}"))
}

/// A fork's own trajectory id. A conversation of the ACP lane names its
/// trajectory by its own id (FORMAT.md 2.2), and so does its fork; a CLI
/// fork gets a new one, as agy's own `/fork` gives it (the copied steps
/// keep naming the parent's).
pub fn fork_trajectory_id(parent_trajectory: &str, parent: &str, fork: &str) -> String {
    if parent_trajectory == parent {
        fork.to_string()
    } else {
        derive(&format!("trajectory\0{fork}"))
    }
}

/// The trajectory id a rewind rotates to: new for each rewind, and the
/// same for the same rewind of the same conversation.
pub fn rewind_trajectory_id(old_trajectory: &str, keep_through: i64) -> String {
    derive(&format!("rewind\0{old_trajectory}\0{keep_through}"))
}

/// A CortexTrajectoryReference: the trajectory and the last step the new
/// one continues from, its type, and the conversation it names (a fork's
/// parent, or for a rewind the conversation itself).
///
/// The step is the last step kept, for a rewind as for a fork: agy's fork
/// names the last step it copied, and no fact says what its rewind names.
pub fn reference(trajectory_id: &str, last_kept: i64, kind: u64, conversation: &str) -> Vec<u8> {
    let mut w = Writer::new();
    w.string(reference::TRAJECTORY_ID, trajectory_id)
        .varint(reference::STEP_INDEX, last_kept as u64)
        .varint(reference::REFERENCE_TYPE, kind)
        .string(reference::CONVERSATION_ID, conversation);
    w.into_bytes()
}

fn derive(name: &str) -> String {
    crate::id::v5(&NAMESPACE, name.as_bytes()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::wire::Message;

    #[test]
    fn ids_are_derived_and_distinct() {
        let a = fork_id("p", 3);
        assert_eq!(a, fork_id("p", 3));
        assert_ne!(a, fork_id("p", 4));
        assert_ne!(a, fork_id("q", 3));
        assert_eq!(a.len(), 36);
        assert_eq!(fork_trajectory_id("p", "p", "f"), "f");
        assert_ne!(fork_trajectory_id("t", "p", "f"), "f");
        assert_ne!(rewind_trajectory_id("t", 3), rewind_trajectory_id("t", 4));
    }

    #[test]
    fn a_reference_holds_what_it_names() {
        let bytes = reference("traj", 7, REWIND_REFERENCE_TYPE, "conv");
        let m = Message::new(&bytes);
        assert_eq!(m.get_str(reference::TRAJECTORY_ID).unwrap(), "traj");
        assert_eq!(m.get_i64(reference::STEP_INDEX), Some(7));
        assert_eq!(m.get_u64(reference::REFERENCE_TYPE), Some(2));
        assert_eq!(m.get_str(reference::CONVERSATION_ID).unwrap(), "conv");
    }
}
