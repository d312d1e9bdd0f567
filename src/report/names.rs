//! Display names of algorithms and points, the one place they are made (docs/vocabulary.md):
//! `MariaDB(m=12, ef_search=10)`, `PGVector(m=16, ef_construction=96, ef_search=20)`.
//! Machine-readable columns carry the registry id (`mariadb`) instead.

use crate::params::Params;
use crate::results::PointResult;
use serde_json::Value;

/// The display name of an algorithm as its registry entry declares it: `mariadb` ->
/// `MariaDB`, `pgvector` -> `PGVector`, `pgvector_halfvec` -> `PGVector_halfvec`; any other
/// name (e.g. an ann-benchmarks algorithm such as `hnswlib`) is shown as stored.
pub fn algorithm_name(algorithm: &str) -> String {
    crate::registry::algorithm(algorithm)
        .map_or_else(|| algorithm.to_string(), |a| a.display.to_string())
}

/// The name of a parameter in every output: lower-cased, as `annbench algorithms` lists it
/// and `run` prints it (`M` -> `m`; `ef_construction` stays whole).
pub fn param_name(name: &str) -> String {
    name.to_lowercase()
}

/// A parameter value as written in names: strings without quotes, everything else as JSON.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `m=16, ef_construction=96` for the given parameter maps, in order (build args first).
pub fn params_text<'a>(maps: impl IntoIterator<Item = &'a Params>) -> String {
    maps.into_iter()
        .flat_map(|m| m.iter())
        .map(|(k, v)| format!("{}={}", param_name(k), value_text(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The display name of a point: algorithm name and its build then query parameters,
/// e.g. `PGVector_halfvec(m=16, ef_construction=96, ef_search=20)`.
pub fn point_name(point: &PointResult) -> String {
    format!(
        "{}({})",
        algorithm_name(&point.algorithm),
        params_text([&point.build_args, &point.query_args])
    )
}

/// The display name of an index build: algorithm name and its build parameters only,
/// e.g. `MariaDB(m=12)`.
pub fn build_name(algorithm: &str, build_args: &Params) -> String {
    format!(
        "{}({})",
        algorithm_name(algorithm),
        params_text([build_args])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn published_names() {
        let b = params(json!({"M": 16, "ef_construction": 96}));
        let q = params(json!({"ef_search": 20}));
        assert_eq!(
            format!("{}({})", algorithm_name("pgvector"), params_text([&b, &q])),
            "PGVector(m=16, ef_construction=96, ef_search=20)"
        );
        assert_eq!(
            build_name("mariadb", &params(json!({"M": 12, "engine": "InnoDB"}))),
            "MariaDB(m=12, engine=InnoDB)"
        );
        assert_eq!(algorithm_name("pgvector_halfvec"), "PGVector_halfvec");
        assert_eq!(algorithm_name("pgvector_ivfflat"), "PGVector_ivfflat");
        assert_eq!(algorithm_name("hnswlib"), "hnswlib");
    }

    #[test]
    fn empty_params_give_empty_parentheses() {
        assert_eq!(build_name("exact", &Params::new()), "Exact()");
    }
}
