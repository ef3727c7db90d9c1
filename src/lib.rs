//! agy-tools: read, edit and write the conversation store of Google's
//! Antigravity CLI (`agy`) as newline-delimited JSON.
//!
//! The library is laid out by layer, lowest first; a layer imports only the
//! layers listed before it:
//!
//! 1. the ground floor: [`error`] (errors that name the file, line or row at
//!    fault, and warnings) and [`time`];
//! 2. [`agy`]: what agy's bytes mean (protobuf, step numbers, tool names);
//! 3. [`stream`]: the row stream and the message stream, and their I/O;
//! 4. [`kinds`]: step kinds as messages, both ways; [`store`]: SQLite
//!    databases and the data root;
//! 5. one folder per tool: [`decode`] (rows to messages), then [`encode`]
//!    (messages to rows, and `--onto` edits), [`edit`] (rows to rows:
//!    conversation surgery), [`pack`] (rows to databases), [`list`] (a
//!    root's conversations, agy-ls) and [`usage`] (what they consumed,
//!    agy-usage); then [`mod@format`] (other agents' formats)
//!    and [`render`] (pages for people);
//! 6. [`cli`]: the flags and the shell around a binary.
//!
//! The binaries in `src/bin/` are thin mains over [`cli`] and the tool
//! folders.

// The documentation is for the people who work on these tools, private
// items included (`cargo doc --document-private-items`): a module's
// overview links to the private functions that do its work.
#![allow(rustdoc::private_intra_doc_links)]

pub mod error;
pub mod id;
pub mod time;

pub mod agy;
pub mod stream;

pub mod kinds;
pub mod store;

pub mod decode;
pub mod edit;
pub mod encode;
pub mod format;
pub mod list;
pub mod pack;
pub mod render;
pub mod usage;

pub mod cli;
