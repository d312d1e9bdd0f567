//! Redis's declaration: what the CLI, Python, URL parsing and server cost read about it
//! ([`DECL`]), its one algorithm's ([`ALGORITHM`]: HNSW in a vector set), and the other facts
//! of its own that its backend uses. Compiled as `registry::decls::redis` (see
//! `src/registry/decls.rs`): it reads only the registry.

use crate::Metric;
use crate::registry::filter::{FILTER, FILTER_RULE, SELECTIVITY};
use crate::registry::{AlgorithmDecl, Contract, DatabaseDecl, Param, Rule, ServerKind, SocketRule};

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
    no_restart: Some(
        "the servers scripts/databases.sh starts keep no data on disk: a restart empties them",
    ),
    // No streaming runbooks (its backend has no stream table).
    stream_maintenance: &[],
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

pub static ALGORITHM: AlgorithmDecl = AlgorithmDecl {
    name: "redis",
    display: "Redis",
    summary: "Redis 8 vector set (VADD / VSIM): HNSW with Q8, float32 or binary vectors; cosine only",
    database: Some(ServerKind::Redis),
    min_version: MIN_VERSION,
    build: &[
        Param::int(
            "M",
            4,
            4096,
            "neighbours per node of the HNSW graph (VADD M)",
        ),
        Param::int(
            "ef_construction",
            1,
            1_000_000,
            "candidate list size while inserting (VADD EF, the build exploration factor)",
        )
        .optional("200, Redis' default"),
        Param::choice(
            "quantization",
            &["Q8", "NOQUANT", "BIN"],
            "how the set stores vectors: Q8 (int8, Redis' default), NOQUANT (float32) or BIN \
             (one bit per dimension); required, so every point names it",
        ),
    ],
    query: &[
        Param::int(
            "ef_search",
            1,
            1_000_000,
            "candidate list size per query (VSIM EF, the search exploration factor)",
        )
        .optional("100, Redis' default"),
        SELECTIVITY,
        FILTER,
        FILTER_EF,
    ],
    rules: &[FILTER_RULE, FILTER_EF_RULE],
    // Redis sets no limit of its own (a vector is an FP32 blob); 65,536 dimensions (256 KiB
    // a row) is the widest annbench has run.
    max_dimension: 65_536,
    metrics: &[Metric::Angular],
    grid: include_str!("../../../algorithms/redis/config.yml"),
    contract: Contract {
        build: "M=16, ef_construction=100, quantization=NOQUANT",
        thorough_query: "ef_search=1000",
        slow_build: "M=64, ef_construction=500, quantization=NOQUANT",
    },
    // No measured builds to fit a model to yet (src/shard/cost.rs).
    build_cost: None,
    stream_build: None,
};

/// The query arg bounding the nodes a filtered query visits.
pub const FILTER_EF: Param = Param::int(
    "filter_ef",
    1,
    100_000_000,
    "most graph nodes a filtered query visits looking for matches (VSIM FILTER-EF); needs \
     selectivity",
)
.optional("COUNT * 100, Redis' default");

/// `filter_ef` means nothing without a selectivity.
pub const FILTER_EF_RULE: Rule = Rule::Requires {
    key: "filter_ef",
    other: "selectivity",
};
