//! `exact`'s declaration: what config validation, help, reports and docs read about it.
//! Compiled as `registry::decls::exact` (see `src/registry/decls.rs`): it reads only the
//! registry.

use crate::registry::{ALL_METRICS, AlgorithmDecl, Contract};

pub static ALGORITHM: AlgorithmDecl = AlgorithmDecl {
    name: "exact",
    display: "Exact",
    summary: "in-process brute-force search: the recall 1.0 reference, no server",
    database: None,
    min_version: (0, 0),
    build: &[],
    query: &[],
    rules: &[],
    max_dimension: usize::MAX,
    metrics: ALL_METRICS,
    grid: include_str!("../../../algorithms/exact/config.yml"),
    contract: Contract {
        build: "",
        thorough_query: "",
        slow_build: "",
    },
    build_cost: None,
    stream_build: None,
};
