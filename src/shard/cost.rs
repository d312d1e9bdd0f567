//! Relative cost of an index build, to balance shards. Only ratios matter: every build of a
//! plan is over the same table.
//!
//! Each algorithm declares its model ([`crate::registry::AlgorithmDecl::build_cost`]). For HNSW: a
//! build scans the table (a fixed cost per build), searches the graph for each new vector with
//! a candidate list of `ef` entries, comparing each candidate's layer-0 neighbours (up to
//! `2M`), and then repairs up to `2M` neighbour lists of `2M` entries, so the estimate is
//! `fixed + a * ef * M + b * M^2`. The constants are least-squares fits to measured build
//! seconds on `sift-5k-128-euclidean` (docs/distributed.md has the figures): the unit is
//! "seconds on that set", which keeps the databases' builds comparable with each other.
//! Algorithms without measured builds to fit have no estimate.

use crate::params::Params;

/// Relative build cost of `algorithm` at `build_args`, or `None` when annbench has no model
/// (each algorithm declares its own, [`crate::registry::AlgorithmDecl::build_cost`]).
pub fn estimate(algorithm: &str, build_args: &Params) -> Option<f64> {
    crate::registry::algorithm(algorithm)?
        .build_cost
        .map(|f| f(build_args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: serde_json::Value) -> Params {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn hnsw_builds_grow_with_m_and_ef_construction() {
        let pg = |m: i64, ef: i64| {
            estimate("pgvector", &p(json!({"M": m, "ef_construction": ef}))).unwrap()
        };
        assert!(pg(16, 128) > pg(16, 64) && pg(32, 64) > pg(16, 64));
        // Measured on sift-5k: 2.2-2.3 s at M=16, ef_construction=96; 13-14.5 s at M=48, 192.
        assert!((pg(16, 96) - 2.42).abs() < 0.01, "{}", pg(16, 96));
        assert!((pg(48, 192) - 13.5).abs() < 0.1, "{}", pg(48, 192));
        assert_eq!(
            estimate("pgvector_halfvec", &p(json!({}))),
            Some(pg(16, 64))
        );
        let maria = |m: i64| estimate("mariadb", &p(json!({"M": m}))).unwrap();
        // Measured: 4.0-4.2 s at M=16, 27-29 s at M=48.
        assert!((maria(16) - 3.96).abs() < 0.01 && (maria(48) - 29.36).abs() < 0.01);
        assert_eq!(
            estimate("mariadb", &p(json!({"m": 16, "engine": "MyISAM"}))),
            Some(maria(16))
        );
        assert_eq!(estimate("exact", &p(json!({}))), None);
        assert_eq!(estimate("faiss", &p(json!({"M": 16}))), None);
        assert_eq!(estimate("pgvector_ivfflat", &p(json!({"lists": 4}))), None);
    }
}
