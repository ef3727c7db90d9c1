//! The two NDJSON contracts every tool speaks, and their I/O.
//!
//! [`record`] is the row stream (agy-dump and agy-pack's side: SQLite rows
//! and brain files), [`message`] and [`message_reader`] the message stream
//! (agy-decode and agy-encode's side: chat messages). [`json`] writes JSON
//! text straight into a buffer, [`io`] reads numbered lines (and
//! [`ahead`] message records, parsed on a second thread) and writes
//! buffered output (to a pipe through [`writer`]'s thread, with
//! [`heads`] kept of what it wrote when asked), [`carry`] reads back as
//! lines what another part of the process wrote, [`spool`]
//! holds output that has to wait, and [`simd`] says which instruction set
//! the vectored routines (here and in the renderer) use.
//!
//! Imports: the ground floor and [`crate::agy`] (a tool call's arguments
//! keep agy's argument order).

pub mod ahead;
pub mod carry;
pub mod heads;
pub mod io;
pub mod json;
pub mod message;
pub mod message_reader;
pub mod record;
pub mod simd;
pub mod spool;
pub mod writer;
