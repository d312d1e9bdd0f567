//! MariaDB's declaration and its one algorithm's, MHNSW: what the CLI, Python, URL parsing,
//! server cost, config validation, help, reports and shard balancing read about them.
//! Compiled as `registry::decls::mariadb` (see `src/registry/decls.rs`): it reads only the
//! registry.

use crate::params::Params;
use crate::registry::filter::{FILTER, FILTER_INDEX, FILTER_RULE, SELECTIVITY};
use crate::registry::{
    ALL_METRICS, AlgorithmDecl, Contract, DatabaseDecl, ForksVars, MaintenanceOp, Param,
    ServerKind, SocketRule, StreamBuild,
};

pub static DECL: DatabaseDecl = DatabaseDecl {
    key: "mariadb",
    name: "MariaDB",
    flag: "--mariadb",
    url_var: "ANNBENCH_MARIADB_URL",
    schemes: &["mysql", "mariadb"],
    example_url: "mysql://user:password@127.0.0.1:3306/annbench",
    forks: Some(ForksVars {
        conn_args: "MARIADB_CONN_ARGS",
        db_name: "MARIADB_DB_NAME",
    }),
    server_commands: &["mariadbd", "mysqld"],
    unix_socket: SocketRule::QueryParameter("socket"),
    no_restart: None,
    // Its stream table's `maintenance` (stream.rs) runs these.
    stream_maintenance: &[MaintenanceOp::Optimize, MaintenanceOp::Reindex],
};

#[allow(non_upper_case_globals)]
impl ServerKind {
    /// MariaDB (named like the enum variant it replaced, which callers still spell).
    pub const MariaDb: ServerKind = ServerKind::of(&DECL);
}

/// The first MariaDB with the VECTOR type and MHNSW index.
pub const MIN_MARIADB: (u32, u32) = (11, 7);

/// The server setting of the `ef_search` query arg.
pub const EF_SEARCH_SETTING: &str = "mhnsw_ef_search";

pub static ALGORITHM: AlgorithmDecl = AlgorithmDecl {
    name: "mariadb",
    display: "MariaDB",
    summary: "MariaDB MHNSW vector index (VECTOR INDEX) on a VECTOR(d) column",
    database: Some(ServerKind::MariaDb),
    min_version: MIN_MARIADB,
    build: &[
        Param::int("M", 3, 200, "neighbours per node and layer of the graph"),
        Param::choice(
            "engine",
            &["InnoDB", "MyISAM"],
            "storage engine of the table (each engine gets a table of its own)",
        )
        .optional("InnoDB"),
        FILTER_INDEX,
    ],
    query: &[
        Param::int(
            "ef_search",
            1,
            10_000,
            "candidate list size per query (mhnsw_ef_search)",
        )
        .optional("the server's mhnsw_ef_search")
        .sets(EF_SEARCH_SETTING),
        SELECTIVITY,
        FILTER,
    ],
    rules: &[FILTER_RULE],
    // VECTOR(16383) is the type's limit, but with the INT id the row would pass the 65535
    // bytes MariaDB allows a row.
    max_dimension: 16382,
    metrics: ALL_METRICS,
    grid: include_str!("../../../algorithms/mariadb/config.yml"),
    contract: Contract {
        build: "M=8",
        thorough_query: "ef_search=1000",
        slow_build: "M=48",
    },
    build_cost: Some(build_cost),
    stream_build: Some(StreamBuild::BeforeFirstInsert),
};

/// Relative build cost (`shard::cost`): MHNSW's `ef_construction` is fixed at 10 and an
/// insert asks for `2M` neighbours, so both terms of `fixed + a * ef * M + b * M^2` grow with
/// `M^2`; a least-squares fit to build seconds on sift-5k-128-euclidean (M default 6).
fn build_cost(build_args: &Params) -> f64 {
    let m = crate::params::positive(build_args, "M").unwrap_or(6.0);
    0.79 + 0.012_4 * m * m
}
