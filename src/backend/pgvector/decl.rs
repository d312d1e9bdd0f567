//! The declarations of pgvector's HNSW index, three ways (`pgvector`, `pgvector_halfvec`,
//! `pgvector_halfvec_column`), and the HNSW parameters `pgvector_binary` shares. Compiled as
//! `registry::decls::pgvector` (see `src/registry/decls.rs`): it reads only the registry.

use crate::registry::decls::postgres::{
    ITERATIVE_SCAN_PARAM, MAINTENANCE_WORK_MEM, MAX_SCAN_TUPLES_PARAM,
};
use crate::registry::filter::{FILTER, FILTER_INDEX, FILTER_RULE, SELECTIVITY};
use crate::registry::{ALL_METRICS, AlgorithmDecl, Contract, Param, Rule, ServerKind, StreamBuild};

/// HNSW's graph degree (pgvector: 2..=100).
pub const M: Param = Param::int("M", 2, 100, "neighbours per node and layer of the graph");
/// HNSW's candidate list while building (pgvector: 4..=1000).
pub const EF_CONSTRUCTION: Param = Param::int(
    "ef_construction",
    4,
    1000,
    "candidate list size while building the graph",
);
/// HNSW's candidate list per query, `hnsw.ef_search` (pgvector: 1..=1000).
pub const EF_SEARCH: Param = Param::int(
    "ef_search",
    1,
    1000,
    "candidate list size per query (hnsw.ef_search)",
)
.optional("the server's hnsw.ef_search")
.sets(EF_SEARCH_SETTING);
/// The session setting of [`EF_SEARCH`].
pub const EF_SEARCH_SETTING: &str = "hnsw.ef_search";
/// pgvector refuses a build with `ef_construction < 2 * m`.
pub const EF_CONSTRUCTION_RULE: Rule = Rule::AtLeast {
    key: "ef_construction",
    factor: 2,
    other: "M",
};

const BUILD: &[Param] = &[M, EF_CONSTRUCTION, MAINTENANCE_WORK_MEM, FILTER_INDEX];
const QUERY: &[Param] = &[
    EF_SEARCH,
    ITERATIVE_SCAN_PARAM,
    MAX_SCAN_TUPLES_PARAM,
    SELECTIVITY,
    FILTER,
];
const CONTRACT: Contract = Contract {
    build: "M=8, ef_construction=32",
    thorough_query: "ef_search=1000",
    slow_build: "M=48, ef_construction=400",
};

/// One HNSW variant's declaration: all three take the same parameters and rules.
const fn hnsw(
    name: &'static str,
    display: &'static str,
    summary: &'static str,
    min_version: (u32, u32),
    max_dimension: usize,
    grid: &'static str,
) -> AlgorithmDecl {
    AlgorithmDecl {
        name,
        display,
        summary,
        database: Some(ServerKind::Postgres),
        min_version,
        build: BUILD,
        query: QUERY,
        rules: &[EF_CONSTRUCTION_RULE, FILTER_RULE],
        max_dimension,
        metrics: ALL_METRICS,
        grid,
        contract: CONTRACT,
        build_cost: Some(build_cost),
        stream_build: Some(StreamBuild::BeforeFirstInsert),
    }
}

/// Relative build cost (`shard::cost`), `fixed + a * ef * M + b * M^2` with `ef =
/// ef_construction` (default 64) and `M` default 16, fitted to build seconds on
/// sift-5k-128-euclidean; `vector` and `halfvec` alike.
fn build_cost(build_args: &crate::params::Params) -> f64 {
    let m = crate::params::positive(build_args, "M").unwrap_or(16.0);
    let ef = crate::params::positive(build_args, "ef_construction").unwrap_or(64.0);
    0.74 + 0.000_51 * ef * m + 0.003_5 * m * m
}

pub static VECTOR: AlgorithmDecl = hnsw(
    "pgvector",
    "PGVector",
    "pgvector HNSW index on a float32 vector column",
    (0, 5),
    2000,
    include_str!("../../../algorithms/pgvector/config.yml"),
);

pub static HALFVEC: AlgorithmDecl = hnsw(
    "pgvector_halfvec",
    "PGVector_halfvec",
    "pgvector HNSW index on v::halfvec(d) over the float32 column (a float16 index)",
    (0, 7),
    4000,
    include_str!("../../../algorithms/pgvector_halfvec/config.yml"),
);

pub static HALFVEC_COLUMN: AlgorithmDecl = hnsw(
    "pgvector_halfvec_column",
    "PGVector_halfvec_column",
    "pgvector HNSW index on a halfvec(d) column: half the table size, vectors and queries \
     rounded to float16, values beyond +-65504 refused",
    (0, 7),
    4000,
    include_str!("../../../algorithms/pgvector_halfvec_column/config.yml"),
);
