//! Where a point lives: `results/<dataset>/<count>/<algorithm>/<name>.hdf5`, as ann-benchmarks
//! lays out its results, so its tools find ours.

use super::PointResult;
use crate::params::Params;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The identity of one point: everything that makes its result file distinct.
#[derive(Debug, Clone, Copy)]
pub struct PointKey<'a> {
    pub dataset: &'a str,
    pub count: usize,
    pub algorithm: &'a str,
    pub build_args: &'a Params,
    pub query_args: &'a Params,
    pub clients: usize,
    pub label: Option<&'a str>,
}

impl PointResult {
    /// This point's identity in the store.
    pub fn key(&self) -> PointKey<'_> {
        PointKey {
            dataset: &self.dataset,
            count: self.count,
            algorithm: &self.algorithm,
            build_args: &self.build_args,
            query_args: &self.query_args,
            clients: self.clients,
            label: self.label.as_deref(),
        }
    }
}

/// Runs of non-word characters become one `_` (ann-benchmarks' rule for file names).
fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// `key_value` pairs with keys sorted, so the name does not depend on config key order.
fn args_part(args: &Params) -> Vec<String> {
    let mut pairs: Vec<(&String, &serde_json::Value)> = args.iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => sanitize(&format!("{k}_{s}")),
            other => sanitize(&format!("{k}_{other}")),
        })
        .collect()
}

/// File stem of a point, e.g. `M_16_ef_construction_64_ef_search_40_clients_1`.
pub fn point_name(key: &PointKey<'_>) -> String {
    let mut parts = args_part(key.build_args);
    parts.extend(args_part(key.query_args));
    parts.push(format!("clients_{}", key.clients));
    if let Some(label) = key.label {
        parts.push(format!("label_{}", sanitize(label)));
    }
    parts.join("_")
}

/// Refuse names that would escape the results directory.
fn component<'a>(what: &str, text: &'a str) -> Result<&'a str> {
    let ok = !text.is_empty() && text != "." && text != ".." && !text.contains(['/', '\\', '\0']);
    if ok {
        Ok(text)
    } else {
        Err(Error::Results(format!(
            "{what} '{text}' cannot be used as a directory name in the result store"
        )))
    }
}

/// `results_dir/<dataset>/<count>/<algorithm>/<name>.hdf5`.
pub fn point_path(results_dir: &Path, key: &PointKey<'_>) -> Result<PathBuf> {
    Ok(results_dir
        .join(component("dataset name", key.dataset)?)
        .join(key.count.to_string())
        .join(component("algorithm name", key.algorithm)?)
        .join(format!("{}.hdf5", point_name(key))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_sort_keys_and_sanitize() {
        let b: Params = serde_json::from_value(json!({"M": 16, "engine": "My ISAM"})).unwrap();
        let b2: Params = serde_json::from_value(json!({"engine": "My ISAM", "M": 16})).unwrap();
        let q: Params = serde_json::from_value(json!({"ef_search": 40})).unwrap();
        let key = PointKey {
            dataset: "d",
            count: 10,
            algorithm: "mariadb",
            build_args: &b,
            query_args: &q,
            clients: 2,
            label: Some("v11.8 run#1"),
        };
        let name = point_name(&key);
        assert_eq!(
            name,
            "M_16_engine_My_ISAM_ef_search_40_clients_2_label_v11.8_run_1"
        );
        assert_eq!(
            point_name(&PointKey {
                build_args: &b2,
                ..key
            }),
            name
        );
        let p = point_path(Path::new("r"), &key).unwrap();
        assert_eq!(p, Path::new("r/d/10/mariadb").join(format!("{name}.hdf5")));
        assert!(
            point_path(
                Path::new("r"),
                &PointKey {
                    dataset: "../x",
                    ..key
                }
            )
            .is_err()
        );
    }
}
