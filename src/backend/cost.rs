//! What a database vertical tells the runner about a connection's server cost
//! (`runner::server_cost` measures it): which server processes serve the connection, for
//! `/proc`, and the server's own cumulative statement statistics for the search statement
//! (PostgreSQL `pg_stat_statements`, MariaDB `performance_schema` digests), which work for
//! remote servers too.

/// Which local processes serve a connection (the runner checks that they belong to a server
/// this process is connected to before it reads them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessHint {
    /// Not a server connection (in-process backends).
    None,
    /// The one process serving this connection, e.g. PostgreSQL's `pg_backend_pid()`; its
    /// server's exited children (parallel workers) count too.
    Backend(i32),
    /// Every thread of the server process with one of these commands (MariaDB: one process,
    /// one thread per connection plus background threads).
    WholeServer(&'static [&'static str]),
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

/// `(name, state)` lines `servers check` shows for the server-cost sources of one server,
/// e.g. `("pg_stat_statements", "available")`.
pub type CostSources = Vec<(String, String)>;
