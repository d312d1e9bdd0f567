//! What a store holds, for merging: every point file (`<dataset>/<count>/<algorithm>/*.hdf5`,
//! by its path inside the store) and, for annbench files, who measured it and when.

use super::super::h5util::read_attr_str;
use super::super::store::{EXTRAS_ATTR, VERSIONED};
use crate::shard::ShardInfo;
use crate::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One point file of a store.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Path inside the store, e.g. `sift/10/mariadb/M_16_ef_search_40_clients_1.hdf5`: the
    /// point's identity (two files with one path are two measurements of one point).
    pub rel: PathBuf,
    pub path: PathBuf,
    pub len: u64,
}

/// Every point file under `store`, sorted; other files (reports, in-flight temp files, whose
/// names start with a dot) are left alone.
pub fn point_files(store: &Path) -> Result<Vec<Entry>> {
    let list = |dir: &Path| -> Result<Vec<PathBuf>> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, "cannot list", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.'))
            })
            .collect();
        out.sort();
        Ok(out)
    };
    let dirs = |dir: &Path| -> Result<Vec<PathBuf>> {
        Ok(list(dir)?.into_iter().filter(|p| p.is_dir()).collect())
    };
    let mut out = Vec::new();
    for dataset in dirs(store)? {
        let counts = dirs(&dataset)?.into_iter().filter(|c| {
            c.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.parse::<usize>().is_ok())
        });
        for count in counts {
            for algo in dirs(&count)? {
                for file in list(&algo)? {
                    if file.extension().is_none_or(|e| e != "hdf5") {
                        continue;
                    }
                    // A FIFO or directory under a point's name is named, not skipped unseen.
                    crate::fsutil::refuse_special(&file, "a result file")?;
                    let len = std::fs::metadata(&file)
                        .map_err(|e| Error::io(&file, "cannot read", e))?
                        .len();
                    let rel = file.strip_prefix(store).unwrap_or(&file).to_path_buf();
                    out.push(Entry {
                        rel,
                        path: file,
                        len,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Who measured an annbench point, and when (read from its `annbench` attribute only).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    pub label: Option<String>,
    pub hostname: String,
    pub finished_at: String,
    pub shard: Option<ShardInfo>,
    /// The timed passes as stored: with the host and finish time, what makes a measurement.
    pub passes: serde_json::Value,
    /// `algorithm(args) x2 clients` for messages.
    pub what: String,
    /// The dataset name, k and fingerprint of the data it was measured on (`None` in files of
    /// earlier versions), with its query args (a filtered point's fingerprint is its filter's).
    pub dataset: String,
    pub count: usize,
    pub fingerprint: Option<String>,
    pub query_args: crate::params::Params,
}

#[derive(Deserialize)]
struct Extras {
    #[serde(default)]
    format: u64,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    build_args: crate::params::Params,
    #[serde(default)]
    query_args: crate::params::Params,
    #[serde(default)]
    clients: usize,
    #[serde(default)]
    passes: serde_json::Value,
    #[serde(default)]
    environment: Env,
    #[serde(default)]
    dataset_fingerprint: Option<String>,
}

#[derive(Deserialize, Default)]
struct Env {
    #[serde(default)]
    hostname: String,
    #[serde(default)]
    finished_at: String,
    #[serde(default)]
    shard: Option<ShardInfo>,
}

/// The measurement facts of an annbench file; `None` for an ann-benchmarks file. A file HDF5
/// cannot open is an error naming it (a store holds whole files only).
pub fn measured(path: &Path) -> Result<Option<Measured>> {
    let broken = |e: String| {
        Error::Results(format!(
            "cannot read result file {}: {e}; it was not written by a finished annbench run \
             (move it out of the store to merge the rest)",
            path.display()
        ))
    };
    crate::fsutil::refuse_special(path, "a result file")?;
    let file = hdf5::File::open(path).map_err(|e| broken(e.to_string()))?;
    if file.attr(EXTRAS_ATTR).is_err() {
        return Ok(None);
    }
    let json = read_attr_str(&file, EXTRAS_ATTR).map_err(|e| broken(e.to_string()))?;
    let x: Extras = serde_json::from_str(&json).map_err(|e| broken(e.to_string()))?;
    // A newer annbench's point is neither copied over nor replaced by an older one's.
    if VERSIONED.is_newer(x.format) {
        VERSIONED.check(path, x.format)?;
    }
    let algorithm = read_attr_str(&file, "algo").unwrap_or_default();
    let dataset = read_attr_str(&file, "dataset").unwrap_or_default();
    let count = file
        .attr("count")
        .and_then(|a| a.read_scalar::<i64>())
        .map_or(0, |c| usize::try_from(c).unwrap_or(0));
    let args: Vec<String> = [&x.build_args, &x.query_args]
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| crate::params::describe(a))
        .collect();
    Ok(Some(Measured {
        what: format!("{algorithm}({}) x{} clients", args.join(", "), x.clients),
        label: x.label,
        hostname: x.environment.hostname,
        finished_at: x.environment.finished_at,
        shard: x.environment.shard,
        passes: x.passes,
        dataset,
        count,
        fingerprint: x.dataset_fingerprint,
        query_args: x.query_args,
    }))
}

/// Whether two files hold the same bytes.
pub fn same_bytes(a: &Entry, b: &Entry) -> Result<bool> {
    if a.len != b.len {
        return Ok(false);
    }
    let read = |p: &Path| {
        crate::fsutil::read_if_any(p, "a result file")?
            .ok_or_else(|| Error::Results(format!("{} was removed during the merge", p.display())))
    };
    Ok(read(&a.path)? == read(&b.path)?)
}
