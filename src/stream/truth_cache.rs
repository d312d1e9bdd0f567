//! The streaming ground truth cached beside its dataset, so a runbook's truth is computed once
//! per data, runbook and k.
//!
//! The file sits in the dataset file's directory, named
//! `<dataset>.<entry>.k<k>.<16 hex digits>.stream-gt`: the digits start the cache key, a hash
//! of the vectors and metric ([`crate::dataset::fingerprint::vectors_digest`]), the runbook's
//! data steps ([`Runbook::data_fingerprint`]: rates, concurrency and maintenance do not change
//! the truth), k and the metric. A file is reused when its full key matches; else the truth
//! is computed again and written atomically, and older files of the same dataset, entry and k
//! are removed.
//!
//! Layout, little-endian:
//! 1. the 8 bytes `ANNBSGT1`;
//! 2. a u64 byte length, then that many bytes of JSON: `{"key", "dataset", "entry", "k",
//!    "metric", "queries", "steps": [search step numbers], "rescans"}`;
//! 3. per search step in order: q x k i64 tags (-1 past the live count), then q x k f32
//!    distances (+inf there), row-major;
//! 4. the xxHash3-128 of everything before it (16 bytes), so a damaged file is recomputed,
//!    never trusted.
//!
//! The cache never stops a measurement: a truth that cannot be cached (a read-only data dir, a
//! full disk) is computed, used and reported as not cached. A file of a newer format (the
//! digit after `ANNBSGT`) is neither read nor replaced nor removed as stale: the truth is
//! computed and not cached (see [`crate::fsutil::Versioned`]). A FIFO, device or directory at
//! the cache's path is refused, never waited on.

use super::runbook::Runbook;
use super::truth::{Computed, StepTruth, compute_observed};
use crate::Result;
use crate::dataset::Dataset;
use ndarray::Array2;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use twox_hash::XxHash3_128;

const MAGIC: &[u8; 8] = b"ANNBSGT1";
const SUFFIX: &str = ".stream-gt";
/// What the cache is called in messages.
const WHAT: &str = "the live-set ground-truth cache";

/// The cache's format is the digit ending [`MAGIC`]; this annbench reads only its own.
const VERSIONED: crate::fsutil::Versioned = crate::fsutil::Versioned {
    kind: "a live-set ground-truth cache",
    current: (MAGIC[7] - b'0') as u64,
    oldest: (MAGIC[7] - b'0') as u64,
    aside: "to cache this annbench's truth there",
};

/// Whether the ground truth came from the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// Read from the file, whose key matched.
    Reused,
    /// Computed now and written; `why` says why the cache could not be used.
    Computed { why: String },
}

/// The ground truth of a runbook's search steps, and where it is cached.
#[derive(Debug, Clone)]
pub struct Truths {
    /// One per search step, in step order.
    pub steps: Vec<StepTruth>,
    /// Queries rescanned over the whole live set when the truth was computed.
    pub rescans: usize,
    /// The cache file.
    pub path: PathBuf,
    /// Reused or computed, and why.
    pub status: CacheStatus,
    /// Why a computed truth is not in the cache (it is computed again next time).
    pub not_cached: Option<String>,
}

impl Truths {
    /// The warning of a run whose truth was computed: why, and where it is cached or why not.
    pub fn warning(&self) -> Option<String> {
        let CacheStatus::Computed { why } = &self.status else {
            return None;
        };
        let computed = format!(
            "live-set ground truth computed ({why}; {} quer(ies) rescanned)",
            self.rescans
        );
        Some(match &self.not_cached {
            Some(not) => format!("{computed}; {not}"),
            None => format!("{computed} and cached in {}", self.path.display()),
        })
    }
}

/// The cache key: vectors and metric, the runbook's data steps, k.
fn cache_key(ds: &Dataset, runbook: &Runbook, k: usize) -> String {
    let mut h = XxHash3_128::new();
    h.write(b"annbench stream truth v1\0");
    h.write(crate::dataset::fingerprint::vectors_digest(ds).as_bytes());
    h.write(runbook.data_fingerprint().as_bytes());
    h.write(&(k as u64).to_le_bytes());
    h.write(ds.metric.as_str().as_bytes());
    format!("{:032x}", h.finish_128())
}

/// The entry name as a file-name part: letters, digits, `-`, `_` and `.` kept, others `_`.
fn file_part(entry: &str) -> String {
    entry
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The prefix shared by every cache file of `dataset`, `entry` and `k`.
fn prefix(dataset: &str, entry: &str, k: usize) -> String {
    format!("{dataset}.{}.k{k}.", file_part(entry))
}

/// The cache file of `runbook`'s truth over `ds` for `k`, next to the dataset file at
/// `dataset_path`.
pub fn cache_path(dataset_path: &Path, ds: &Dataset, runbook: &Runbook, k: usize) -> PathBuf {
    let dir = dataset_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let key = cache_key(ds, runbook, k);
    dir.join(format!(
        "{}{}{SUFFIX}",
        prefix(&ds.name, &runbook.entry, k),
        &key[..16]
    ))
}

/// The ground truth of `runbook` over `ds` for `k`: read from the cache next to the dataset
/// file at `dataset_path` when its key matches, else computed (lists `depth` deep, see
/// [`super::truth`]; `observe` as [`super::truth::compute_observed`] takes it) and cached.
pub fn load_or_compute(
    ds: &Dataset,
    dataset_path: &Path,
    runbook: &Runbook,
    k: usize,
    depth: usize,
    observe: &(dyn Fn(u64) -> bool + Sync),
) -> Result<Truths> {
    runbook.validate(ds.train.nrows())?;
    let key = cache_key(ds, runbook, k);
    let path = cache_path(dataset_path, ds, runbook, k);
    // Something the user put at the path (a FIFO blocks a reader) is theirs: refused, with
    // the path, before any work.
    crate::fsutil::refuse_special(&path, WHAT)?;
    let (why, mut not_cached) = match read(&path, &key, ds.test.nrows(), k) {
        Found::Hit(steps, rescans) => {
            return Ok(Truths {
                steps,
                rescans,
                path,
                status: CacheStatus::Reused,
                not_cached: None,
            });
        }
        Found::Missing => match stale_files(&path, &ds.name, &runbook.entry, k).first() {
            Some(old) => (
                format!(
                    "{} was made for other data, another runbook or metric",
                    old.display()
                ),
                None,
            ),
            None => (
                "no cached ground truth for this data, runbook and k".to_string(),
                None,
            ),
        },
        Found::Unusable(why) => (format!("{} cannot be used ({why})", path.display()), None),
        Found::Newer(refusal) => (
            "the cached file is of a newer format".to_string(),
            Some(format!("not cached: {refusal}")),
        ),
    };
    let Computed { steps, rescans } = compute_observed(ds, runbook, k, depth, observe)?;
    if not_cached.is_none() {
        match write(&path, &key, ds, runbook, k, &steps, rescans) {
            Ok(()) => {
                for old in stale_files(&path, &ds.name, &runbook.entry, k) {
                    let _ = std::fs::remove_file(old);
                }
            }
            // The truth is in memory: a cache that cannot be written costs the next run the
            // computation, never this run its measurement.
            Err(e) => {
                not_cached = Some(format!(
                    "could not cache the live-set truth in {}: {}; it will be computed again \
                     next time; give a writable --data-dir to cache it",
                    path.display(),
                    reason(&e)
                ))
            }
        }
    }
    Ok(Truths {
        steps,
        rescans,
        path,
        status: CacheStatus::Computed { why },
        not_cached,
    })
}

/// Why a write failed, without the path the warning names already (a full disk keeps its
/// figures).
fn reason(e: &crate::Error) -> String {
    match e {
        crate::Error::Io { source, .. } if !crate::fsutil::is_no_space(source) => {
            source.to_string()
        }
        other => other.to_string(),
    }
}

/// Other cache files of the same dataset, entry and k in `path`'s directory.
fn stale_files(path: &Path, dataset: &str, entry: &str, k: usize) -> Vec<PathBuf> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let head = prefix(dataset, entry, k);
    let Ok(items) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = items
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p != path)
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&head) && n.ends_with(SUFFIX))
        })
        // A newer annbench's cache is not stale to it, and what is not a regular file is not
        // annbench's: both left alone.
        .filter(|p| p.is_file() && !format_of(p).is_some_and(|f| VERSIONED.is_newer(f)))
        .collect();
    out.sort();
    out
}

/// Writes through to the file and the running checksum.
struct Hashing<W: Write> {
    inner: W,
    hash: XxHash3_128,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.write(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write(
    path: &Path,
    key: &str,
    ds: &Dataset,
    runbook: &Runbook,
    k: usize,
    steps: &[StepTruth],
    rescans: usize,
) -> Result<()> {
    let header = serde_json::json!({
        "key": key,
        "dataset": ds.name,
        "entry": runbook.entry,
        "k": k,
        "metric": ds.metric.as_str(),
        "queries": ds.test.nrows(),
        "steps": steps.iter().map(|s| s.step).collect::<Vec<_>>(),
        "rescans": rescans,
    })
    .to_string();
    let needed = (8 + 8 + header.len() + 16 + steps.len() * ds.test.nrows() * k * 12) as u64;
    let what = "the streaming ground truth";
    crate::fsutil::write_atomic_with(path, what, needed, |tmp| {
        let err = |e: std::io::Error| crate::fsutil::write_error(path, what, needed, e);
        let file = std::fs::File::create(tmp).map_err(err)?;
        let mut w = Hashing {
            inner: BufWriter::with_capacity(1 << 20, file),
            hash: XxHash3_128::new(),
        };
        let body = (|| -> std::io::Result<()> {
            w.write_all(MAGIC)?;
            w.write_all(&(header.len() as u64).to_le_bytes())?;
            w.write_all(header.as_bytes())?;
            for s in steps {
                for &t in s.ids.iter() {
                    w.write_all(&t.to_le_bytes())?;
                }
                for &d in s.distances.iter() {
                    w.write_all(&d.to_le_bytes())?;
                }
            }
            let sum = w.hash.finish_128().to_le_bytes();
            w.inner.write_all(&sum)?;
            w.inner.flush()
        })();
        body.map_err(err)
    })
}

/// The format of the cache file at `path` (the digit after `ANNBSGT`), `None` when it is not
/// a regular file of that kind.
fn format_of(path: &Path) -> Option<u64> {
    let mut head = [0u8; 8];
    crate::fsutil::open_read(path, WHAT)
        .ok()??
        .read_exact(&mut head)
        .ok()?;
    (head[..7] == MAGIC[..7] && head[7].is_ascii_digit()).then(|| u64::from(head[7] - b'0'))
}

/// What the cache file at a path holds for a key.
enum Found {
    /// The steps and rescans of the key's truth.
    Hit(Vec<StepTruth>, usize),
    /// No file.
    Missing,
    /// A file that cannot be used, and why (it is replaced).
    Unusable(String),
    /// A file of a newer format, with its refusal (it is left as it is).
    Newer(String),
}

/// What the file at `path` holds for `key`'s truth for `q` queries and `k`.
fn read(path: &Path, key: &str, q: usize, k: usize) -> Found {
    match read_file(path, key, q, k) {
        Ok(Some((steps, rescans))) => Found::Hit(steps, rescans),
        Ok(None) => Found::Missing,
        Err(why) => match format_of(path) {
            Some(f) if VERSIONED.is_newer(f) => {
                Found::Newer(VERSIONED.refusal(path, f).unwrap_or_default())
            }
            _ => Found::Unusable(why),
        },
    }
}

/// The cached steps and rescans when the file at `path` holds `key`'s truth for `q` queries
/// and `k`; `Ok(None)` when there is no file; `Err(why)` when it cannot be used.
type Cached = Option<(Vec<StepTruth>, usize)>;

fn read_file(path: &Path, key: &str, q: usize, k: usize) -> std::result::Result<Cached, String> {
    let file = match crate::fsutil::open_read(path, WHAT) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut hash = XxHash3_128::new();
    let mut take = |n: usize, hash: &mut XxHash3_128| -> std::result::Result<Vec<u8>, String> {
        let mut buf = vec![0u8; n];
        r.read_exact(&mut buf)
            .map_err(|e| format!("truncated: {e}"))?;
        hash.write(&buf);
        Ok(buf)
    };
    if take(8, &mut hash)? != MAGIC {
        return Err("not an annbench streaming ground-truth file".into());
    }
    let hlen = u64::from_le_bytes(take(8, &mut hash)?.try_into().unwrap_or_default());
    if hlen > len.min(1 << 24) {
        return Err("damaged header".into());
    }
    let header: serde_json::Value = serde_json::from_slice(&take(hlen as usize, &mut hash)?)
        .map_err(|e| format!("damaged header: {e}"))?;
    if header["key"].as_str() != Some(key) {
        return Err("made for other data, another runbook or metric".into());
    }
    if header["queries"].as_u64() != Some(q as u64) || header["k"].as_u64() != Some(k as u64) {
        return Err("another query count or k".into());
    }
    let numbers: Vec<u32> = header["steps"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64())
                .map(|v| v as u32)
                .collect()
        })
        .unwrap_or_default();
    let want = 8 + 8 + hlen + numbers.len() as u64 * (q * k * 12) as u64 + 16;
    if len != want {
        return Err(format!("{len} bytes where {want} were expected"));
    }
    let mut steps = Vec::with_capacity(numbers.len());
    for step in numbers {
        let ids: Vec<i64> = take(q * k * 8, &mut hash)?
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let distances: Vec<f32> = take(q * k * 4, &mut hash)?
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let shape = |e: ndarray::ShapeError| e.to_string();
        steps.push(StepTruth {
            step,
            ids: Array2::from_shape_vec((q, k), ids).map_err(shape)?,
            distances: Array2::from_shape_vec((q, k), distances).map_err(shape)?,
        });
    }
    let sum = hash.finish_128().to_le_bytes();
    let mut stored = [0u8; 16];
    r.read_exact(&mut stored)
        .map_err(|e| format!("truncated: {e}"))?;
    if stored != sum {
        return Err("checksum mismatch (a damaged file)".into());
    }
    let rescans = header["rescans"].as_u64().unwrap_or(0) as usize;
    Ok(Some((steps, rescans)))
}

impl std::fmt::Display for CacheStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheStatus::Reused => f.write_str("reused the cached ground truth"),
            CacheStatus::Computed { why } => write!(f, "computed the ground truth: {why}"),
        }
    }
}
