//! agy-tools: read, edit and write the conversation store of Google's
//! Antigravity CLI (`agy`) as newline-delimited JSON.
//!
//! The binaries are thin; each concern lives in one module here:
//! [`wire`] reads and writes protobuf without a schema, [`record`] is the row
//! stream that every tool speaks, [`store`] moves rows between SQLite and that
//! stream, and [`error`] carries context for messages that name the file,
//! line or row at fault.

pub mod cli;
pub mod decode;
pub mod dump;
pub mod encode;
pub mod error;
pub mod flags;
pub mod format;
pub mod io;
pub mod json;
pub mod message;
pub mod message_reader;
pub mod onto;
pub mod pack;
pub mod record;
pub mod render;
pub mod results;
pub mod root;
pub mod spool;
pub mod steps;
pub mod store;
pub mod system;
pub mod time;
pub mod tools;
pub mod wire;
