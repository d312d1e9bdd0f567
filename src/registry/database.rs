//! One database's declaration and the [`ServerKind`] every URL carries.

use super::MaintenanceOp;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// What a database declares about itself: names, URLs, the variables that name its server,
/// the processes that serve it. Plain data (comparable, so that its [`ServerKind`] constants
/// work in `match` patterns): adding a database adds one of these in its folder.
#[derive(Debug, PartialEq, Eq)]
pub struct DatabaseDecl {
    /// The word for it on the command line and in Python: `mariadb` gives `--mariadb URL`,
    /// the keyword `mariadb=`, the variable `ANNBENCH_MARIADB_URL`; also `servers drop-tables
    /// --server mariadb`.
    pub key: &'static str,
    /// As people write it: `MariaDB`.
    pub name: &'static str,
    /// `--mariadb`: the URL flag (the key with two dashes).
    pub flag: &'static str,
    /// `ANNBENCH_MARIADB_URL`, also the key of its line in `servers.env`.
    pub url_var: &'static str,
    /// URL schemes it accepts, the usual one first (`mysql`, `mariadb`).
    pub schemes: &'static [&'static str],
    /// An example URL for messages and help.
    pub example_url: &'static str,
    /// The ann-benchmarks forks' variables naming its server, where they have some.
    pub forks: Option<ForksVars>,
    /// The names of its server processes (`/proc/PID/comm`), for server cost per query.
    pub server_commands: &'static [&'static str],
    /// How a URL says it reaches the server through a unix socket, not TCP (recorded with
    /// every result: the transport changes latency and client CPU).
    pub unix_socket: SocketRule,
    /// Why `run --restart` cannot measure it across a restart (`None`: its tables and index
    /// survive one and its backend reconnects).
    pub no_restart: Option<&'static str>,
    /// The maintenance operations its streaming runbooks' tables run (`annbench stream`), in
    /// the order messages list them; `annbench runbook check --algorithm` and `stream` refuse
    /// a runbook that asks for another before any server work.
    pub stream_maintenance: &'static [MaintenanceOp],
}

/// How a database's URLs name a unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketRule {
    /// A query parameter holds the socket's path (MariaDB's `?socket=PATH`).
    QueryParameter(&'static str),
    /// The host is a percent-encoded directory (libpq's `%2Frun%2Fpostgresql`).
    HostIsDirectory,
    /// Its URLs always mean TCP.
    Never,
}

impl SocketRule {
    /// True when `url` names a unix socket by this rule.
    pub fn applies(self, url: &url::Url) -> bool {
        match self {
            SocketRule::QueryParameter(key) => url.query_pairs().any(|(k, _)| k == key),
            SocketRule::HostIsDirectory => url.host_str().is_some_and(|h| {
                percent_encoding::percent_decode_str(h)
                    .decode_utf8_lossy()
                    .starts_with('/')
            }),
            SocketRule::Never => false,
        }
    }
}

/// The forks' `user:password:host:port` variable and the database-name variable beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForksVars {
    /// e.g. `MARIADB_CONN_ARGS`.
    pub conn_args: &'static str,
    /// e.g. `MARIADB_DB_NAME`.
    pub db_name: &'static str,
}

/// Which database a URL is for: a handle on its [`DatabaseDecl`], ordered and hashed by key.
/// Each database's folder defines its constant (`ServerKind::MariaDb`, `ServerKind::Postgres`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ServerKind(&'static DatabaseDecl);

impl ServerKind {
    /// The kind declared by `decl`.
    pub const fn of(decl: &'static DatabaseDecl) -> Self {
        ServerKind(decl)
    }

    /// Its declaration.
    pub fn decl(self) -> &'static DatabaseDecl {
        self.0
    }

    /// `mariadb`.
    pub fn key(self) -> &'static str {
        self.0.key
    }

    /// `MariaDB`.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// `--mariadb`.
    pub fn flag(self) -> &'static str {
        self.0.flag
    }

    /// An example URL, e.g. `mysql://user:password@127.0.0.1:3306/annbench`.
    pub fn example(self) -> &'static str {
        self.0.example_url
    }
}

impl PartialOrd for ServerKind {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ServerKind {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key.cmp(other.0.key)
    }
}

// Keys are unique in the registry, so ordering and hashing by key agree with equality.
impl Hash for ServerKind {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.key.hash(state);
    }
}

impl fmt::Debug for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerKind({})", self.0.key)
    }
}
