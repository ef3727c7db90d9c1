//! agy's step kinds as messages, both ways: the tables that say what each
//! kind means in the message stream, read by agy-decode and agy-encode
//! alike so that one direction cannot drift from the other.
//!
//! [`results`] says what a tool-executing step reports as the call's
//! result; [`system`] turns bookkeeping steps into `system` messages.
//!
//! Imports: the ground floor, [`crate::agy`] and [`crate::stream`].

pub mod results;
pub mod system;
