//! An insert, delete or replace step: its rows cut into batches of `batch` rows (one statement
//! or transaction each), paced to the step's `rate` when it has one; with `during: {clients}`,
//! searches run on their own connections for as long as the writes do (and, as the baseline,
//! for `min_time` just before); on insert steps, marker rows measure freshness: the time from
//! a batch's commit until a search returns one of its rows.

use super::Env;
use crate::backend::{Backend, Searcher};
use crate::metrics::{self, LatencySummary};
use crate::params::Params;
use crate::results::stream::{DuringFigures, Freshness, WriteFigures};
use crate::runner::progress::{stopping, wait_until};
use crate::stream::step::{Operation, Step};
use crate::{Error, Result};
use ndarray::Array2;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a marker row is looked for before it counts as not found.
const FRESHNESS_BOUND: Duration = Duration::from_secs(2);

/// An instant no run reaches (about 34 years from now).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(1 << 30)
}

/// One batch to write.
enum Batch {
    Insert { ids: Vec<i64>, rows: Vec<usize> },
    Delete { start: i64, end: i64 },
    Replace { ids: Vec<i64>, rows: Vec<usize> },
}

impl Batch {
    fn len(&self) -> usize {
        match self {
            Batch::Insert { ids, .. } | Batch::Replace { ids, .. } => ids.len(),
            Batch::Delete { start, end } => (end - start) as usize,
        }
    }
}

/// The step's batches, in order.
fn batches(step: &Step, batch: usize) -> Vec<Batch> {
    let chunks = |start: usize, end: usize| {
        (start..end)
            .step_by(batch.max(1))
            .map(move |s| (s, (s + batch).min(end)))
    };
    match &step.op {
        Operation::Insert { start, end } => chunks(*start, *end)
            .map(|(s, e)| Batch::Insert {
                ids: (s as i64..e as i64).collect(),
                rows: (s..e).collect(),
            })
            .collect(),
        Operation::Delete { start, end } => chunks(*start, *end)
            .map(|(s, e)| Batch::Delete {
                start: s as i64,
                end: e as i64,
            })
            .collect(),
        Operation::Replace { tags, ids } => chunks(tags.start, tags.end)
            .map(|(s, e)| Batch::Replace {
                ids: (s as i64..e as i64).collect(),
                rows: (ids.start + (s - tags.start)..ids.start + (e - tags.start)).collect(),
            })
            .collect(),
        Operation::Search | Operation::Maintenance(_) => Vec::new(),
    }
}

/// Rows `rows` of the train set as one matrix.
fn gather(env: &Env<'_>, rows: &[usize]) -> Array2<f32> {
    let d = env.data.dimension();
    let mut out = Array2::zeros((rows.len(), d));
    for (i, &r) in rows.iter().enumerate() {
        out.row_mut(i).assign(&env.data.train.row(r));
    }
    out
}

/// Searches of `clients` connections over the queries until `stop`; (queries, wall seconds,
/// latencies).
fn search_until(
    env: &Env<'_>,
    searchers: &mut [Box<dyn Searcher>],
    stop: &AtomicBool,
    until: Option<Instant>,
) -> Result<(usize, f64, Vec<f64>)> {
    let queries = env.data.test.as_standard_layout();
    let (q, d, k) = (queries.nrows(), queries.ncols(), env.opts.count);
    let rows = queries
        .as_slice()
        .ok_or_else(|| Error::Backend("internal: query matrix is not row-major".into()))?;
    let n = searchers.len().max(1);
    let start = Instant::now();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = searchers
            .iter_mut()
            .enumerate()
            .map(|(c, searcher)| {
                s.spawn(move || -> Result<Vec<f64>> {
                    let (lo, hi) = (c * q / n, (c + 1) * q / n);
                    let share = (hi - lo).max(1);
                    let mut ids = Vec::with_capacity(k + 1);
                    let mut lat = Vec::new();
                    let mut j = 0usize;
                    // The baseline's window is annbench's own: a stop ends it.
                    while !stop.load(Ordering::Relaxed)
                        && until.is_none_or(|u| Instant::now() < u)
                        && !stopping(env.progress)
                    {
                        let i = lo + j % share;
                        let t = Instant::now();
                        searcher.search(&rows[i * d..(i + 1) * d], k, &mut ids)?;
                        lat.push(t.elapsed().as_secs_f64());
                        j += 1;
                    }
                    Ok(lat)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Backend("a search thread panicked".into())))
            })
            .collect::<Vec<_>>()
    });
    let wall = start.elapsed().as_secs_f64();
    let mut all = Vec::new();
    for r in results {
        all.extend(r?);
    }
    Ok((all.len(), wall, all))
}

/// Poll for marker rows on their own connection: each arrives with its commit instant and
/// vector; the time until a search returns its id is recorded (or `None` past the bound).
fn freshness_worker(
    env: &Env<'_>,
    searcher: &mut dyn Searcher,
    k: usize,
    markers: mpsc::Receiver<(i64, Vec<f32>, Instant)>,
) -> Result<Vec<Option<f64>>> {
    let mut out = Vec::new();
    let mut ids = Vec::with_capacity(k + 1);
    for (id, vector, committed) in markers {
        let mut found = None;
        // A stop ends the looking at once (the run is interrupted; nothing of it is stored).
        while committed.elapsed() < FRESHNESS_BOUND && !stopping(env.progress) {
            searcher.search(&vector, k, &mut ids)?;
            if ids.contains(&id) {
                found = Some(committed.elapsed().as_secs_f64());
                break;
            }
        }
        out.push(found);
    }
    Ok(out)
}

/// Run one write step; returns its figures and those of the searches run during it.
pub fn run_step(
    env: &Env<'_>,
    backend: &mut dyn Backend,
    step: &Step,
    args: &Params,
    indexed: bool,
) -> Result<(WriteFigures, Option<DuringFigures>)> {
    let batch = step.batch.unwrap_or(env.opts.batch);
    let list = batches(step, batch);
    let during_clients = step.during.as_ref().map(|d| d.clients).filter(|_| indexed);
    let mut during_searchers = match during_clients {
        Some(n) => super::open_searchers(backend, n, args)?,
        None => Vec::new(),
    };
    // The baseline: the same clients, just before the writes, for --min-time (at least 1 s:
    // shorter windows spread too much on a shared machine to compare with).
    let baseline = if during_searchers.is_empty() {
        None
    } else {
        let stop = AtomicBool::new(false);
        let until = Instant::now() + env.opts.min_time.max(Duration::from_secs(1));
        Some(search_until(
            env,
            &mut during_searchers,
            &stop,
            Some(until),
        )?)
    };
    env.check_stop()?;
    let is_insert = matches!(step.op, Operation::Insert { .. });
    let markers = if is_insert && indexed {
        env.opts.markers
    } else {
        0
    };
    // `markers` batches spread over the step (all of them when it has fewer); none when no
    // markers are asked for or there is no index to find them with.
    let marker_every = (markers > 0).then(|| list.len().div_ceil(markers).max(1));
    let mut fresh_searcher = if markers > 0 {
        super::open_searchers(backend, 1, args)?.pop()
    } else {
        None
    };
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(i64, Vec<f32>, Instant)>();
    let k = env.opts.count;
    let table = backend.stream_table()?;
    let outcome = std::thread::scope(|s| {
        let searches = (!during_searchers.is_empty())
            .then(|| s.spawn(|| search_until(env, &mut during_searchers, &stop, None)));
        let fresh = fresh_searcher
            .as_mut()
            .map(|f| s.spawn(move || freshness_worker(env, f.as_mut(), k, rx)));
        let writes = write_batches(env, table, &list, batch, step.rate, marker_every, &tx);
        drop(tx);
        stop.store(true, Ordering::Relaxed);
        let searched = searches.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::Backend("a search thread panicked".into())))
        });
        let fresh = fresh.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::Backend("the freshness thread panicked".into())))
        });
        (writes, searched, fresh)
    });
    let (writes, searched, fresh) = outcome;
    let (mut w, sent) = writes?;
    if let Some(f) = fresh {
        let found: Vec<f64> = f?.into_iter().flatten().collect();
        w.freshness = Some(Freshness {
            markers: sent,
            found: found.len(),
            median_seconds: metrics::interval::median(&found),
            max_seconds: found.iter().copied().reduce(f64::max),
            bound_seconds: FRESHNESS_BOUND.as_secs_f64(),
        });
    }
    let during = match (searched, baseline) {
        (Some(r), Some((bq, bwall, mut blat))) => {
            let (queries, wall, mut lat) = r?;
            Some(DuringFigures {
                clients: during_searchers.len(),
                queries,
                qps: metrics::qps(queries, wall),
                latency: metrics::summarize_in_place(&mut lat),
                baseline_qps: metrics::qps(bq, bwall),
                baseline_latency: metrics::summarize_in_place(&mut blat),
            })
        }
        _ => None,
    };
    Ok((w, during))
}

/// Send the batches of up to `batch_rows` rows, paced to `rate` rows/s when given: batch `i`
/// starts no earlier than `rows before it / rate` after the first. Records each batch's
/// statement seconds, the most rows behind schedule, and how late the last batch ended. With
/// `marker_every`, the first row of every such insert batch is sent to `markers` as it
/// commits; returns the figures (no freshness yet) and the markers sent.
fn write_batches(
    env: &Env<'_>,
    table: &mut dyn crate::backend::stream::StreamTable,
    list: &[Batch],
    batch_rows: usize,
    rate: Option<f64>,
    marker_every: Option<usize>,
    markers: &mpsc::Sender<(i64, Vec<f32>, Instant)>,
) -> Result<(WriteFigures, usize)> {
    let start = Instant::now();
    let mut done = 0usize;
    let mut changed = 0u64;
    let mut latencies = Vec::with_capacity(list.len());
    let mut backlog = 0u64;
    let mut method = String::new();
    let mut marker_count = 0usize;
    for (i, b) in list.iter().enumerate() {
        env.check_stop()?;
        if let Some(r) = rate {
            // The reader bounds the rate (`RATES`), so this fits; were it not to, no wait ends
            // but on a stop.
            let due = Duration::try_from_secs_f64(done as f64 / r).unwrap_or(Duration::MAX);
            let now = start.elapsed();
            if now < due {
                // Woken at once by Ctrl-C: annbench's own schedule, not the server, holds it.
                wait_until(env.progress, start.checked_add(due).unwrap_or(far_future()))?;
            } else {
                // Rows that should have been written by now but were not.
                let expected = (now.as_secs_f64() * r) as u64;
                backlog = backlog.max(expected.saturating_sub(done as u64));
            }
        }
        let report = match b {
            Batch::Insert { ids, rows } => table.insert(ids, gather(env, rows).view())?,
            Batch::Delete { start, end } => table.delete(*start, *end)?,
            Batch::Replace { ids, rows } => table.replace(ids, gather(env, rows).view())?,
        };
        let committed = Instant::now();
        if let Batch::Insert { ids, rows } = b {
            if marker_every.is_some_and(|n| i % n == 0) && !ids.is_empty() {
                let vector = env.data.train.row(rows[0]).to_vec();
                let _ = markers.send((ids[0], vector, committed));
                marker_count += 1;
            }
        }
        latencies.push(report.seconds);
        changed += report.rows;
        method = report.method.to_string();
        done += b.len();
    }
    let wall = start.elapsed().as_secs_f64();
    let behind = rate.map_or(0.0, |r| (wall - done as f64 / r).max(0.0));
    let batch_latency: LatencySummary = metrics::summarize_in_place(&mut latencies);
    let figures = WriteFigures {
        rows: done as u64,
        rows_changed: changed,
        batches: list.len(),
        batch_rows,
        target_rate: rate,
        achieved_rate: metrics::qps(done, wall),
        batch_latency,
        backlog_rows: backlog,
        behind_seconds: behind,
        method,
        freshness: None,
    };
    Ok((figures, marker_count))
}
