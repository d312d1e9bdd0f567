//! Where a point lives: `results/<dataset>/<count>/<algorithm>/<name>.hdf5`, as ann-benchmarks
//! lays out its results, so its tools find ours.
//!
//! Names are injective: two different points never share a file. Text a user chooses (the
//! label, the dataset name) is percent-encoded where it holds a character that is not safe or
//! not unambiguous in a file name, never stripped, so `v1 a`, `v1_a`, `日本` and `中国` get
//! four different files. Names made of `[A-Za-z0-9._-]` are written as they are, which keeps
//! them identical to the names of earlier annbench versions.

use super::PointResult;
use crate::params::Params;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Longest file name most file systems accept (bytes, NAME_MAX).
pub const MAX_FILE_NAME: usize = 255;

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

impl<'a> PointKey<'a> {
    /// The key of one point; every key is made here, so a field added to the identity is
    /// given everywhere.
    pub fn new(
        dataset: &'a str,
        count: usize,
        algorithm: &'a str,
        build_args: &'a Params,
        query_args: &'a Params,
        clients: usize,
        label: Option<&'a str>,
    ) -> PointKey<'a> {
        PointKey {
            dataset,
            count,
            algorithm,
            build_args,
            query_args,
            clients,
            label,
        }
    }
}

impl PointResult {
    /// This point's identity in the store.
    pub fn key(&self) -> PointKey<'_> {
        PointKey::new(
            &self.dataset,
            self.count,
            &self.algorithm,
            &self.build_args,
            &self.query_args,
            self.clients,
            self.label.as_deref(),
        )
    }
}

impl PointKey<'_> {
    /// True when both keys name the same point (argument order does not matter).
    pub fn same_point(&self, other: &PointKey<'_>) -> bool {
        self.dataset == other.dataset
            && self.count == other.count
            && self.algorithm == other.algorithm
            && self.build_args == other.build_args
            && self.query_args == other.query_args
            && self.clients == other.clients
            && self.label == other.label
    }
}

/// `%XX` for every byte of `text` that `keep` rejects (and for `%` itself), so decoding is
/// unique and distinct texts stay distinct.
fn encode(text: &str, keep: impl Fn(usize, char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c != '%' && keep(i, c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// A label in a file name: `[A-Za-z0-9._-]` as is, everything else `%XX`. The label is the
/// last part of a name, after `_label_`, which nothing before it can contain (parameter
/// values never hold `_`), so `_` may stay.
fn encode_label(label: &str) -> String {
    encode(label, |_, c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
    })
}

/// A parameter value: like a label but `_` is encoded too, so a value cannot be mistaken for
/// a key boundary (`key_value_key_value`).
fn encode_value(value: &str) -> String {
    encode(value, |_, c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '-')
    })
}

/// A dataset name as a directory: only what a directory name cannot hold or would hide is
/// encoded (`/`, `\`, NUL, control characters, `%`, a leading `.`), so every name earlier
/// versions accepted maps to the same directory.
fn encode_dataset(name: &str) -> String {
    encode(name, |i, c| {
        !(c.is_control() || matches!(c, '/' | '\\') || (i == 0 && c == '.'))
    })
}

/// Runs of non-word characters become one `_`: the names of annbench's first result format,
/// still looked up so a rerun finds points stored by earlier versions.
fn legacy_sanitize(text: &str) -> String {
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
fn args_part(args: &Params, value: &dyn Fn(&str) -> String) -> Vec<String> {
    let mut pairs: Vec<(&String, &serde_json::Value)> = args.iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}_{}", value(s)),
            other => format!("{k}_{}", value(&other.to_string())),
        })
        .collect()
}

/// File stem of a point, e.g. `M_16_ef_construction_64_ef_search_40_clients_1_label_v1`.
pub fn point_name(key: &PointKey<'_>) -> String {
    let mut parts = args_part(key.build_args, &encode_value);
    parts.extend(args_part(key.query_args, &encode_value));
    parts.push(format!("clients_{}", key.clients));
    if let Some(label) = key.label {
        parts.push(format!("label_{}", encode_label(label)));
    }
    parts.join("_")
}

/// The stem earlier annbench versions gave this point (non-word runs squeezed to `_`, which
/// let different labels share a file); `None` when it equals [`point_name`].
pub fn legacy_point_name(key: &PointKey<'_>) -> Option<String> {
    let legacy_value = |s: &str| legacy_sanitize(s);
    let mut parts: Vec<String> = args_part(key.build_args, &legacy_value)
        .into_iter()
        .chain(args_part(key.query_args, &legacy_value))
        .map(|p| legacy_sanitize(&p))
        .collect();
    parts.push(format!("clients_{}", key.clients));
    if let Some(label) = key.label {
        parts.push(format!("label_{}", legacy_sanitize(label)));
    }
    let name = parts.join("_");
    (name != point_name(key)).then_some(name)
}

/// `results_dir/<dataset>`: the directory of every point of `dataset`.
pub fn dataset_dir(results_dir: &Path, dataset: &str) -> Result<PathBuf> {
    if dataset.is_empty() {
        return Err(Error::Results(
            "an empty dataset name cannot name a directory in the result store".into(),
        ));
    }
    Ok(results_dir.join(encode_dataset(dataset)))
}

/// The directory earlier versions used for `dataset` when it differs from [`dataset_dir`]
/// (names with `%` or a leading `.`), so their points are still read.
pub fn legacy_dataset_dir(results_dir: &Path, dataset: &str) -> Option<PathBuf> {
    let ok = !matches!(dataset, "" | "." | "..") && !dataset.contains(['/', '\\', '\0']);
    (ok && encode_dataset(dataset) != dataset).then(|| results_dir.join(dataset))
}

/// Refuse algorithm names that would escape the results directory (they are annbench's own
/// names, so nothing needs encoding).
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

/// `results_dir/<dataset>/<count>/<algorithm>`.
fn point_dir(results_dir: &Path, key: &PointKey<'_>) -> Result<PathBuf> {
    Ok(dataset_dir(results_dir, key.dataset)?
        .join(key.count.to_string())
        .join(component("algorithm name", key.algorithm)?))
}

/// `results_dir/<dataset>/<count>/<algorithm>/<name>.hdf5`. A name longer than file systems
/// allow (a long label) is an error that says by how much to shorten the label.
pub fn point_path(results_dir: &Path, key: &PointKey<'_>) -> Result<PathBuf> {
    let file = format!("{}.hdf5", point_name(key));
    // The temp file of an atomic write adds a dot and a suffix of up to 16 bytes.
    let room = MAX_FILE_NAME - 17;
    if file.len() > room {
        return Err(Error::Config(match key.label {
            Some(l) => format!(
                "--label '{l}' is too long: the result file names would be {} bytes, the limit \
                 is {room}; shorten the label by {} bytes or more (each character other than \
                 A-Z a-z 0-9 . _ - counts 3 bytes per UTF-8 byte)",
                file.len(),
                file.len() - room
            ),
            None => format!(
                "the result file name of this point would be {} bytes, over the limit of {room}",
                file.len()
            ),
        }));
    }
    Ok(point_dir(results_dir, key)?.join(file))
}

/// Where earlier annbench versions stored this point, when that differs from [`point_path`].
pub fn legacy_point_path(results_dir: &Path, key: &PointKey<'_>) -> Option<PathBuf> {
    let name = legacy_point_name(key);
    let dir = legacy_dataset_dir(results_dir, key.dataset);
    if name.is_none() && dir.is_none() {
        return None;
    }
    let name = name.unwrap_or_else(|| point_name(key));
    let dir = match dir {
        Some(d) => d,
        None => dataset_dir(results_dir, key.dataset).ok()?,
    };
    let path = dir
        .join(key.count.to_string())
        .join(component("algorithm name", key.algorithm).ok()?)
        .join(format!("{name}.hdf5"));
    Some(path)
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
