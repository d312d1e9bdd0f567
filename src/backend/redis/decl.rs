//! Redis's declaration: what the CLI, Python, URL parsing and server cost read about it
//! ([`DECL`]), and the other facts of its own that its backend uses.

use crate::registry::{DatabaseDecl, ServerKind, SocketRule};

pub static DECL: DatabaseDecl = DatabaseDecl {
    key: KEY,
    name: DISPLAY,
    flag: FLAG,
    url_var: ENV_URL,
    schemes: SCHEMES,
    example_url: EXAMPLE_URL,
    // No ann-benchmarks fork names a Redis server.
    forks: None,
    server_commands: PROCESS_NAMES,
    // annbench's client connects over TCP only.
    unix_socket: SocketRule::Never,
};

#[allow(non_upper_case_globals)]
impl ServerKind {
    /// Redis.
    pub const Redis: ServerKind = ServerKind::of(&DECL);
}

/// The database's key: CLI flag `--redis`, `servers check` section, result files.
pub const KEY: &str = "redis";

/// As people write it, in messages and tables.
pub const DISPLAY: &str = "Redis";

/// URL schemes a Redis URL may have. `rediss://` (TLS) is recognised only to be refused with
/// its fix: the client is built without TLS support ([`TLS_REFUSAL`]).
pub const SCHEMES: &[&str] = &["redis", "rediss"];

/// The scheme annbench connects with.
pub const SCHEME: &str = "redis";

/// An example URL for messages (a password without a user name is Redis' `default` user).
pub const EXAMPLE_URL: &str = "redis://:password@127.0.0.1:6379/0";

/// The environment variable (and `servers.env` line) holding the URL.
pub const ENV_URL: &str = "ANNBENCH_REDIS_URL";

/// The CLI flag naming the URL.
pub const FLAG: &str = "--redis";

/// Commands of the server's process (the whole server: one process, command threads and the
/// threads `VSIM` runs its searches on).
pub const PROCESS_NAMES: &[&str] = &["redis-server"];

/// What an algorithm's `min_version` is a version of.
pub const VERSIONED: &str = "Redis";

/// The first Redis with vector sets (`VADD`, `VSIM`) built in.
pub const MIN_VERSION: (u32, u32) = (8, 0);

/// The port Redis listens on when the URL names none.
pub const DEFAULT_PORT: u16 = 6379;

/// Why a `rediss://` URL is refused.
pub const TLS_REFUSAL: &str = "annbench's Redis client is built without TLS, so rediss:// URLs \
     are refused: use redis:// to a server on a trusted network or loopback, or a TLS tunnel \
     (e.g. stunnel) to the server";
