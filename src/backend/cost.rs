//! What a database vertical tells the runner about a connection's server cost
//! (`runner::server_cost` measures it): which server processes serve the connection, for
//! `/proc`, and the server's own cumulative statement statistics for the search statement
//! (PostgreSQL `pg_stat_statements`, MariaDB `performance_schema` digests), which work for
//! remote servers too.

pub use crate::procfs::ProcessHint;

/// The commands of every declared database's server processes
/// ([`crate::registry::DatabaseDecl::server_commands`]): what [`crate::procfs`] counts as a
/// server when it looks for the servers this process is connected to.
pub fn all_server_commands() -> Vec<&'static str> {
    super::databases()
        .iter()
        .flat_map(|d| d.kind.decl().server_commands.iter().copied())
        .collect()
}

/// [`crate::procfs::describe_local`] with every database's server commands, for
/// `servers check`.
pub fn describe_local(hint: ProcessHint) -> String {
    crate::procfs::describe_local(hint, &all_server_commands())
}

/// Cumulative counters of the server's statistics for the search statement.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatementCounters {
    /// Executions counted.
    pub calls: u64,
    /// Server execution time of those executions, seconds.
    pub exec_seconds: f64,
    /// Buffer (page) reads served from memory, if the source has them.
    pub buffer_hits: Option<u64>,
    /// Buffer (page) reads that went to the storage layer, if the source has them.
    pub buffer_reads: Option<u64>,
}

/// The statement statistics of a connection's server, or why there are none.
#[derive(Debug, Clone, PartialEq)]
pub enum Statements {
    /// Read from `source`, e.g. `pg_stat_statements`.
    Counters {
        counters: StatementCounters,
        source: &'static str,
    },
    /// Unavailable: why, and how to enable it.
    Unavailable(String),
}

impl Statements {
    pub fn unavailable(why: impl Into<String>) -> Self {
        Statements::Unavailable(why.into())
    }
}

/// The server's data directory, for the block device whose reads and writes count as the
/// server's storage I/O (`procfs::storage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataDirectory {
    /// The path the server reports, in its own root directory.
    Path(String),
    /// The server refused to say: why, and how to allow it. The server process's working
    /// directory stands for it (PostgreSQL and MariaDB run in their data directory).
    Refused(String),
    /// The backend does not ask: the server process's working directory stands for it.
    NotSaid,
}

/// `(name, state)` lines `servers check` shows for the server-cost sources of one server,
/// e.g. `("pg_stat_statements", "available")`.
pub type CostSources = Vec<(String, String)>;
