//! Relative cost of an index build, to balance shards. Only ratios matter: every build of a
//! plan is over the same table.
//!
//! An HNSW insert searches the graph with a candidate list of `ef` entries and compares each
//! candidate's layer-0 neighbours (up to `2 * M`) with the new vector, so its work grows with
//! `ef * 2M`:
//! - pgvector (`vector` and `halfvec`): `ef = ef_construction` (default 64), `M` default 16;
//! - MariaDB MHNSW: `ef = max(10, 2M)` (its fixed `ef_construction` is 10, and the insert asks
//!   for `2M` neighbours), `M` default 6.
//!
//! It orders the builds of one algorithm well; across algorithms it is rough (the servers'
//! per-comparison costs differ), which is all balancing needs. Other algorithms have no
//! estimate.

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
            Some(ef * 2.0 * m)
        }
        "mariadb" => {
            let m = int("M").unwrap_or(6.0);
            Some((2.0 * m).max(10.0) * 2.0 * m)
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
        assert_eq!(pg(16, 64), 2048.0);
        assert!(pg(16, 128) > pg(16, 64) && pg(32, 64) > pg(16, 64));
        assert_eq!(estimate("pgvector_halfvec", &p(json!({}))), Some(2048.0));
        let maria = |m: i64| estimate("mariadb", &p(json!({"M": m}))).unwrap();
        assert_eq!(maria(4), 80.0); // ef = max(10, 8)
        assert_eq!(maria(16), 1024.0);
        assert!(maria(48) > maria(16));
        assert_eq!(
            estimate("mariadb", &p(json!({"m": 16, "engine": "MyISAM"}))),
            Some(1024.0)
        );
        assert_eq!(estimate("exact", &p(json!({}))), None);
        assert_eq!(estimate("faiss", &p(json!({"M": 16}))), None);
    }
}
