//! agy's store on disk: conversation databases and the data root.
//!
//! [`sqlite`] holds agy's schema and moves rows between SQLite and the row
//! stream, or reads agy's databases from their files directly ([`vfs`]
//! lets SQLite read a WAL without writing beside it), [`root`] finds the data root and checks paths under it, and
//! [`dump`] walks databases and brain directories into the row stream
//! (agy-dump's library side); [`index`] is agy's index of conversations,
//! [`project`] where a conversation names its project, and [`lock`] the
//! file locks that tell a live writer from a dead one.
//!
//! Imports: the ground floor, [`crate::agy`] and [`crate::stream`].

pub mod dump;
pub mod index;
pub mod lock;
pub mod project;
pub mod root;
pub mod side;
pub mod sqlite;
pub mod vfs;
