//! The declaration of pgvector's binary-quantized HNSW index with re-ranking
//! (`pgvector_binary`). Compiled as `registry::decls::pgvector_binary` (see
//! `src/registry/decls.rs`): it reads only the registry.

use crate::registry::decls::pgvector::{
    EF_CONSTRUCTION, EF_CONSTRUCTION_RULE, EF_SEARCH_SETTING, M,
};
use crate::registry::decls::postgres::{
    ITERATIVE_SCAN_PARAM, MAINTENANCE_WORK_MEM, MAX_SCAN_TUPLES_PARAM,
};
use crate::registry::filter::{FILTER, FILTER_INDEX, FILTER_RULE, SELECTIVITY};
use crate::registry::{ALL_METRICS, AlgorithmDecl, Contract, Param, Rule, ServerKind, StreamBuild};

pub static ALGORITHM: AlgorithmDecl = AlgorithmDecl {
    name: "pgvector_binary",
    display: "PGVector_binary",
    summary: "pgvector HNSW index on binary_quantize(v)::bit(d) (Hamming), candidates re-ranked \
              by the exact distance",
    database: Some(ServerKind::Postgres),
    min_version: (0, 7),
    build: &[M, EF_CONSTRUCTION, MAINTENANCE_WORK_MEM, FILTER_INDEX],
    query: &[
        Param::int(
            "candidates",
            1,
            1000,
            "rows taken by Hamming distance through the index, then re-ranked exactly",
        ),
        Param::int(
            "ef_search",
            1,
            1000,
            "candidate list size of the bit index (hnsw.ef_search)",
        )
        .optional("candidates")
        .sets(EF_SEARCH_SETTING),
        ITERATIVE_SCAN_PARAM,
        MAX_SCAN_TUPLES_PARAM,
        SELECTIVITY,
        FILTER,
    ],
    rules: &[
        EF_CONSTRUCTION_RULE,
        FILTER_RULE,
        // Without an iterative scan HNSW returns at most ef_search rows.
        Rule::AtLeast {
            key: "ef_search",
            factor: 1,
            other: "candidates",
        },
    ],
    // The float32 column's limit; the bit index itself takes up to 64000.
    max_dimension: 16000,
    metrics: ALL_METRICS,
    grid: include_str!("../../../algorithms/pgvector_binary/config.yml"),
    contract: Contract {
        build: "M=16, ef_construction=64",
        thorough_query: "candidates=1000",
        slow_build: "M=48, ef_construction=400",
    },
    build_cost: None,
    stream_build: Some(StreamBuild::BeforeFirstInsert),
};
