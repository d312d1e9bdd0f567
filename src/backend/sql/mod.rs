//! Machinery every SQL database backend shares, written once over a small connection trait
//! ([`SqlConn`], implemented by each database vertical for its driver) and the server's SQL
//! flavour ([`Dialect`], implemented once per database in `src/backend/<database>/dialect.rs`);
//! nothing here names a database:
//!
//! - [`meta`]: the metadata table `annbench_tables`, one row per table annbench loaded;
//! - [`reuse`]: reuse a table that holds exactly the train matrix (by fingerprint), or
//!   (re)create and fill it;
//! - [`watch`]: run a long statement (an index build) while a helper thread stops it on
//!   request (Ctrl-C) and samples its phases;
//! - [`guard`]: a server-side lock per table, and the build id that proves a measured index is
//!   the one built;
//! - [`stream`]: the stream tables of streaming runbooks, and their bounded, stoppable writes;
//! - [`attrs`]: the filter attribute column of filtered queries and its B-tree;
//! - [`dialect`]: the statements and fragments servers spell differently.

pub mod attrs;
pub mod dialect;
pub mod guard;
pub mod meta;
pub mod reuse;
pub mod stream;
pub mod watch;

pub use dialect::Dialect;

use crate::Result;

/// A bound statement argument.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    Null,
    Text(&'a str),
    Int(i64),
    Float(f64),
}

/// A value read back.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

impl Cell {
    pub fn int(&self) -> Option<i64> {
        match self {
            Cell::Int(n) => Some(*n),
            _ => None,
        }
    }

    pub fn float(&self) -> Option<f64> {
        match self {
            Cell::Float(x) => Some(*x),
            Cell::Int(n) => Some(*n as f64),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            Cell::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// One connection to a SQL server, as the shared machinery uses it. Errors name `what` was
/// being done and separate a lost server ([`crate::Error::Server`]) from a failed statement.
pub trait SqlConn {
    /// The server's SQL flavour.
    fn dialect(&self) -> &'static dyn Dialect;

    /// Run one or more statements without arguments or results.
    fn run(&mut self, sql: &str, what: &str) -> Result<()>;

    /// Run `CREATE ... IF NOT EXISTS`; a concurrent session creating the same object at the
    /// same moment is not an error.
    fn create_if_missing(&mut self, sql: &str, what: &str) -> Result<()> {
        self.run(sql, what)
    }

    /// Run one statement with bound arguments.
    fn run_args(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<()>;

    /// The first row of a query with bound arguments, if any.
    fn first_row(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<Option<Vec<Cell>>>;

    /// The first column of every row of a query with bound arguments, as integers (an integer
    /// column; NULLs are left out).
    fn int_column(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<Vec<i64>>;
}

/// A table annbench owns: schema (the namespace the server keeps its tables in) and name, both
/// checked identifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    pub schema: String,
    pub name: String,
}

impl TableName {
    /// `schema.name` as the server spells it ([`Dialect::qualified`]).
    pub fn qualified(&self, d: &dyn Dialect) -> String {
        d.qualified(self)
    }
}

/// `SELECT COUNT(*)` of a table.
pub fn count_rows(c: &mut dyn SqlConn, table: &TableName) -> Result<u64> {
    let sql = format!("SELECT COUNT(*) FROM {}", table.qualified(c.dialect()));
    let n = c.first_row(&sql, &[], "counting rows")?;
    Ok(n.and_then(|r| r.first().and_then(Cell::int)).unwrap_or(0) as u64)
}
