//! The store of streaming runs (`annbench stream`): one JSON file per (runbook entry, build
//! point, query points, clients, label), rewritten atomically after every step, so a killed run
//! loses at most the step it was in.
//!
//! Layout: `<results>/<dataset>/<count>/<algorithm>/streams/<entry>_<runbook fingerprint>/
//! <point name>.json` — a directory below the algorithm's, which the readers of sweep points
//! (`*.hdf5` one level below each algorithm directory) never look into.

use super::path::{PointKey, dataset_dir, point_name};
use crate::metrics::LatencySummary;
use crate::params::Params;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the file layout. A file of another version is refused by [`read_stream`] (see
/// [`crate::fsutil::Versioned`]), never measured again over.
pub const STREAM_FORMAT: u32 = 1;

/// Stream result files: what this annbench writes and reads.
const VERSIONED: crate::fsutil::Versioned = crate::fsutil::Versioned {
    kind: "a stream result",
    current: STREAM_FORMAT as u64,
    oldest: STREAM_FORMAT as u64,
    aside: "(out of the result store) to measure the run again with this annbench",
};

/// What a stored streaming run is of: a rerun resumes only a file whose identity is equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamIdentity {
    pub dataset: String,
    /// [`crate::dataset::fingerprint`] of the data file.
    pub dataset_fingerprint: String,
    pub entry: String,
    /// [`crate::stream::runbook::Runbook::fingerprint`]: the steps, not the file's bytes.
    pub runbook_fingerprint: String,
    pub algorithm: String,
    pub build_args: Params,
    /// Query points measured at each search step, in order.
    pub query_args: Vec<Params>,
    pub clients: usize,
    pub count: usize,
    pub label: Option<String>,
}

/// A streaming run: its identity, the server it ran on and every completed step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamRun {
    pub format: u32,
    #[serde(flatten)]
    pub identity: StreamIdentity,
    /// The runbook file as given (for the reader; the fingerprint decides).
    pub runbook: String,
    /// Server version and settings, as with sweep points.
    pub server: Option<crate::results::ServerInfo>,
    /// Seconds of the index build, and when it ran (before the first step, or after the first
    /// insert for indexes that need data, e.g. IVFFlat).
    pub build_seconds: Option<f64>,
    pub build_after_step: Option<u32>,
    pub steps: Vec<StepRecord>,
    /// True once every step of the runbook is stored.
    pub complete: bool,
}

impl StreamRun {
    /// Mean recall over the search steps (big-ann-benchmarks' score), per query point.
    pub fn mean_recall(&self) -> Vec<(Params, f64)> {
        self.identity
            .query_args
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                let r: Vec<f64> = self
                    .steps
                    .iter()
                    .filter_map(|s| s.searches.get(i).map(|x| x.recall))
                    .collect();
                (!r.is_empty()).then(|| (q.clone(), r.iter().sum::<f64>() / r.len() as f64))
            })
            .collect()
    }
}

/// One completed step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    /// The runbook's step number.
    pub step: u32,
    /// `insert`, `delete`, `replace`, `search` or `maintenance`.
    pub operation: String,
    /// The rows it names, e.g. `0..10000`, or `tags 0..100 <- ids 900..1000`.
    pub rows: String,
    /// Rows live after the step.
    pub live_rows: usize,
    /// Seconds since the run's first step started, when this one started.
    pub started: f64,
    /// Wall seconds of the step (searches included).
    pub seconds: f64,
    pub write: Option<WriteFigures>,
    /// Searches run concurrently with a write step (`during: {clients: N}`).
    pub during: Option<DuringFigures>,
    /// One per query point at a search step.
    pub searches: Vec<SearchFigures>,
    pub maintenance: Option<MaintenanceFigures>,
    /// Table and index after a write or maintenance step.
    pub sizes: Option<SizeFigures>,
    /// Rows an earlier run wrote in this step before it was stopped, undone before the step
    /// ran again whole (absent when the step ran once). A replace's tags are all given back
    /// their earlier vectors: MariaDB counts those that had changed, PostgreSQL every row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_rows: Option<u64>,
}

/// An insert, delete or replace step's writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriteFigures {
    /// Rows the step names, and rows the server reported changed.
    pub rows: u64,
    pub rows_changed: u64,
    pub batches: usize,
    /// Rows per batch (one statement or transaction each).
    pub batch_rows: usize,
    /// The runbook's `rate` (rows/s); `None`: unthrottled.
    pub target_rate: Option<f64>,
    /// Rows / wall seconds of the step's writes.
    pub achieved_rate: f64,
    /// Seconds per batch, its statement alone.
    pub batch_latency: LatencySummary,
    /// With a target rate: the most rows the writes were behind schedule, and how far behind
    /// the schedule the last batch ended (seconds; 0 when the target was met).
    pub backlog_rows: u64,
    pub behind_seconds: f64,
    /// How the batches were sent, e.g. `COPY BINARY`.
    pub method: String,
    /// Insert steps: seconds from a marker row's commit until a search finds it (median over
    /// the markers), and markers not found within the bound.
    pub freshness: Option<Freshness>,
}

/// Time from an insert's commit until a search returns the row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Freshness {
    pub markers: usize,
    pub found: usize,
    /// Median and largest seconds until found, over the markers found.
    pub median_seconds: Option<f64>,
    pub max_seconds: Option<f64>,
    /// How long each marker was looked for.
    pub bound_seconds: f64,
}

/// Searches during a write step, beside the same clients' figures just before it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DuringFigures {
    pub clients: usize,
    pub queries: usize,
    pub qps: f64,
    pub latency: LatencySummary,
    pub baseline_qps: f64,
    pub baseline_latency: LatencySummary,
}

/// A search step at one query point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchFigures {
    pub query_args: Params,
    /// recall@k against exact truth over the rows live at the step.
    pub recall: f64,
    /// Returned ids that are not live (deleted, or never inserted): an error of the index.
    pub not_live: usize,
    /// Queries answered with fewer than k ids.
    pub short: usize,
    /// Median QPS of the timed passes with its 95% interval, and every pass.
    pub qps: f64,
    pub qps_low: f64,
    pub qps_high: f64,
    pub pass_qps: Vec<f64>,
    pub latency: LatencySummary,
}

/// A maintenance step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MaintenanceFigures {
    /// Each statement run and its seconds.
    pub operations: Vec<(String, f64)>,
    pub notes: Vec<String>,
    /// Recall at the first query point before and after.
    pub recall_before: f64,
    pub recall_after: f64,
}

/// Table and index after a step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeFigures {
    pub rows: u64,
    pub table_bytes: Option<u64>,
    pub index_bytes: Option<u64>,
    pub dead_tuples: Option<u64>,
}

/// Where the run of `identity` is stored.
pub fn stream_path(results_dir: &Path, identity: &StreamIdentity) -> Result<PathBuf> {
    let first = identity.query_args.first().cloned().unwrap_or_default();
    let key = PointKey::new(
        &identity.dataset,
        identity.count,
        &identity.algorithm,
        &identity.build_args,
        &first,
        identity.clients,
        identity.label.as_deref(),
    );
    let mut name = point_name(&key);
    if identity.query_args.len() > 1 {
        name.push_str(&format!("_points_{}", identity.query_args.len()));
    }
    let fp: String = identity.runbook_fingerprint.chars().take(12).collect();
    let entry: String = identity
        .entry
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(dataset_dir(results_dir, &identity.dataset)?
        .join(identity.count.to_string())
        .join(&identity.algorithm)
        .join("streams")
        .join(format!("{entry}_{fp}"))
        .join(format!("{name}.json")))
}

/// Write `run` atomically (creating its directories).
pub fn write_stream(path: &Path, run: &StreamRun) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create", e))?;
    }
    let text = serde_json::to_vec_pretty(run)
        .map_err(|e| Error::Results(format!("cannot encode {}: {e}", path.display())))?;
    crate::fsutil::write_atomic(path, &text, "a stream result file")
}

/// What is wrong with the fields of a JSON file that parsed: a missing or unknown field by
/// name, or a value of the wrong type (serde's own words are not for users).
fn data_problem(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let name = || text.split('`').nth(1).unwrap_or("?").to_string();
    if text.starts_with("missing field") {
        format!("no field `{}`, which annbench writes", name())
    } else if text.starts_with("unknown field") {
        format!("a field `{}` annbench does not write", name())
    } else if text.starts_with("invalid") {
        "a value of another type or range than annbench writes".into()
    } else {
        "fields annbench does not write".into()
    }
}

/// The run stored at `path`; `None` when there is none. A file that cannot be read is an
/// error naming it (the store is written atomically, so something else changed it), and so
/// is a file of another format: a rerun never writes over it (see [`VERSIONED`]).
pub fn read_stream(path: &Path) -> Result<Option<StreamRun>> {
    let Some(text) = crate::fsutil::read_if_any(path, "a stream result")? else {
        return Ok(None);
    };
    let unreadable = |e: serde_json::Error| {
        let what = match e.classify() {
            serde_json::error::Category::Data => data_problem(&e),
            _ => "JSON that is damaged or cut short".into(),
        };
        Error::Results(format!(
            "cannot read stream result file {}: it holds {what} (line {}, column {}); move it \
             out of the result store to continue",
            path.display(),
            e.line(),
            e.column()
        ))
    };
    /// The format, read before the rest, whose layout it decides.
    #[derive(Deserialize)]
    struct Head {
        format: u64,
    }
    let head: Head = serde_json::from_slice(&text).map_err(unreadable)?;
    VERSIONED.check(path, head.format)?;
    serde_json::from_slice(&text).map(Some).map_err(unreadable)
}

/// Every streaming run stored for (`dataset`, `count`), sorted by path.
pub fn load_streams(results_dir: &Path, dataset: &str, count: usize) -> Result<Vec<StreamRun>> {
    let root = dataset_dir(results_dir, dataset)?.join(count.to_string());
    let mut files = Vec::new();
    let Ok(algos) = std::fs::read_dir(&root) else {
        return Ok(Vec::new());
    };
    for algo in algos.flatten() {
        let streams = algo.path().join("streams");
        let Ok(entries) = std::fs::read_dir(&streams) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(runs) = std::fs::read_dir(entry.path()) else {
                continue;
            };
            for f in runs.flatten() {
                let p = f.path();
                let hidden = p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_none_or(|n| n.starts_with('.'));
                if !hidden && p.extension().is_some_and(|e| e == "json") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for p in files {
        // A file of another format is an error naming it, as an unreadable one is: a report
        // that silently left runs out would be worse than none.
        out.extend(read_stream(&p)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::data_problem;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        a: u32,
    }

    #[test]
    fn field_problems_are_named_in_words() {
        // A missing field or a wrong type was once reported as fields annbench does not write.
        let e = serde_json::from_str::<T>("{}").unwrap_err();
        assert_eq!(data_problem(&e), "no field `a`, which annbench writes");
        let e = serde_json::from_str::<T>(r#"{"a": 1, "b": 2}"#).unwrap_err();
        assert_eq!(data_problem(&e), "a field `b` annbench does not write");
        let e = serde_json::from_str::<T>(r#"{"a": "1"}"#).unwrap_err();
        assert_eq!(
            data_problem(&e),
            "a value of another type or range than annbench writes"
        );
    }
}
