//! What agy's bytes mean, and nothing about files or streams.
//!
//! [`wire`] reads and writes protobuf without a schema, [`steps`] names the
//! field and type numbers of agy's step schema, and [`tools`] maps agy's
//! native tool names and argument keys to the ones people know from Claude
//! Code. Everything above reads agy's blobs through these three. [`patch`]
//! edits a step's bytes in place (a text replaced at every depth, a step
//! renumbered), for every tool that changes a conversation, and [`brain`]
//! says which brain files and transcript lines belong to which step;
//! [`uri`] turns the `file://` URIs agy stores paths as into paths and back,
//! [`paths`] finds a directory in every form agy writes a path in, and
//! moves it, and [`project`] reads and edits where a conversation names its
//! project.
//!
//! Imports: the ground floor ([`crate::error`], [`crate::time`]) only.

pub mod brain;
pub mod patch;
pub mod paths;
pub mod project;
pub mod steps;
pub mod tools;
pub mod uri;
pub mod wire;
