//! The declaration of pgvector's IVFFlat index (`pgvector_ivfflat`). Compiled as
//! `registry::decls::pgvector_ivfflat` (see `src/registry/decls.rs`): it reads only the
//! registry.

use crate::registry::decls::postgres::MAINTENANCE_WORK_MEM;
use crate::registry::filter::{FILTER, FILTER_INDEX, FILTER_RULE, SELECTIVITY};
use crate::registry::{ALL_METRICS, AlgorithmDecl, Auto, Contract, Param, ServerKind, StreamBuild};

/// The session setting of the `probes` query arg.
pub const PROBES: &str = "ivfflat.probes";
/// The session setting of the `iterative_scan` query arg.
pub const ITERATIVE_SCAN: &str = "ivfflat.iterative_scan";

/// pgvector's guidance: rows/1000 lists up to 1M rows, sqrt(rows) beyond.
const LISTS_AUTO: Auto = Auto {
    value: |rows| {
        if rows <= 1_000_000 {
            (rows / 1000).max(1) as i64
        } else {
            (rows as f64).sqrt().round() as i64
        }
    },
    doc: "rows/1000 up to 1M rows, sqrt(rows) beyond (pgvector's guidance)",
};

pub static ALGORITHM: AlgorithmDecl = AlgorithmDecl {
    name: "pgvector_ivfflat",
    display: "PGVector_ivfflat",
    summary: "pgvector IVFFlat index on a float32 vector column (k-means lists, probes per query)",
    database: Some(ServerKind::Postgres),
    min_version: (0, 5),
    build: &[
        Param::int("lists", 1, 32768, "k-means cells the rows are split into")
            .with_auto(LISTS_AUTO),
        MAINTENANCE_WORK_MEM,
        FILTER_INDEX,
    ],
    query: &[
        Param::int(
            "probes",
            1,
            32768,
            "cells scanned per query (ivfflat.probes)",
        )
        .optional("the server's ivfflat.probes")
        .sets(PROBES),
        Param::choice(
            "iterative_scan",
            &["off", "relaxed_order"],
            "scan more cells when too few rows are found (ivfflat.iterative_scan, pgvector 0.8)",
        )
        .optional("off")
        .sets(ITERATIVE_SCAN),
        SELECTIVITY,
        FILTER,
    ],
    rules: &[FILTER_RULE],
    max_dimension: 2000,
    metrics: ALL_METRICS,
    grid: include_str!("../../../algorithms/pgvector_ivfflat/config.yml"),
    contract: Contract {
        build: "lists=10",
        thorough_query: "probes=10",
        slow_build: "lists=1000",
    },
    build_cost: None,
    stream_build: Some(StreamBuild::AfterFirstInsert),
};
