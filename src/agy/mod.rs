//! What agy's bytes mean, and nothing about files or streams.
//!
//! [`wire`] reads and writes protobuf without a schema, [`steps`] names the
//! field and type numbers of agy's step schema, and [`tools`] maps agy's
//! native tool names and argument keys to the ones people know from Claude
//! Code. Everything above reads agy's blobs through these three.
//!
//! Imports: the ground floor ([`crate::error`], [`crate::time`]) only.

pub mod steps;
pub mod tools;
pub mod wire;
