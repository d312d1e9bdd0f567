//! Relative cost of an index build, to balance shards. Only ratios matter: every build of a
//! plan is over the same table.
//!
//! An HNSW build scans the table (a fixed cost per build), searches the graph for each new
//! vector with a candidate list of `ef` entries, comparing each candidate's layer-0 neighbours
//! (up to `2M`), and then repairs up to `2M` neighbour lists of `2M` entries. So the estimate is
//! `fixed + a * ef * M + b * M^2`:
//! - pgvector (`vector` and `halfvec`): `ef = ef_construction` (default 64), `M` default 16;
//! - MariaDB MHNSW: its `ef_construction` is fixed at 10 and an insert asks for `2M` neighbours,
//!   so `ef = 2M` and both terms grow with `M^2`; `M` default 6.
//!
//! The constants are least-squares fits to measured build seconds on `sift-5k-128-euclidean`
//! (docs/distributed.md has the figures): the unit is "seconds on that set", which keeps
//! MariaDB and pgvector builds comparable with each other. Other algorithms (`exact`,
//! `pgvector_binary`, `pgvector_ivfflat`: no measured builds to fit yet) have no estimate.

use crate::params::Params;

/// Relative build cost of `algorithm` at `build_args`, or `None` when annbench has no model.
pub fn estimate(algorithm: &str, build_args: &Params) -> Option<f64> {
    let int = |key: &str| {
        build_args
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .and_then(|(_, v)| v.as_i64())
            .filter(|v| *v > 0)
            .map(|v| v as f64)
    };
    match algorithm {
        "pgvector" | "pgvector_halfvec" | "pgvector_halfvec_column" => {
            let m = int("M").unwrap_or(16.0);
            let ef = int("ef_construction").unwrap_or(64.0);
            Some(0.74 + 0.000_51 * ef * m + 0.003_5 * m * m)
        }
        "mariadb" => {
            let m = int("M").unwrap_or(6.0);
            Some(0.79 + 0.012_4 * m * m)
        }
        _ => None,
    }
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
