//! The declarations every layer reads, below the backends and the reports: what each database
//! says about itself ([`DatabaseDecl`]: its key, URL schemes, connection variables, server
//! processes) and the [`ServerKind`] that carries it.
//!
//! A database declares itself once, in `src/backend/<database>/decl.rs`, with plain data and
//! pure functions only, so that connection parsing, the CLI flags, the Python keywords,
//! `servers check` and server cost read it without naming the database. Its implementation
//! ([`crate::backend::Database`]) points at the declaration.

mod database;

pub use database::{DatabaseDecl, ForksVars, ServerKind, SocketRule};
