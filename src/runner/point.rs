//! Measure one point: a warm-up pass, then `runs` timed passes; keep the best pass's raw data,
//! record every pass, and compute recall (outside any timed loop) from the returned ids.

use super::measure::{PassBuffers, run_pass};
use super::progress::{Event, Progress};
use crate::backend::Searcher;
use crate::dataset::Dataset;
use crate::metrics;
use crate::results::{Pass, PointMetrics};
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView2};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The client used more than this share of a core per connection: it may be the bottleneck.
pub const CLIENT_CPU_WARN_SHARE: f64 = 0.5;

/// Raw data and metrics of a measured point (identity and environment are added by the sweep).
#[derive(Debug)]
pub struct Measured {
    pub neighbors: Array2<i64>,
    pub distances: Array2<f32>,
    pub latencies: Vec<f64>,
    pub passes: Vec<Pass>,
    pub metrics: PointMetrics,
    pub notices: Vec<String>,
}

/// Run the passes of one point on `searchers` (one per client, query args already set).
pub fn measure_point(
    searchers: &mut [Box<dyn Searcher>],
    data: &Dataset,
    queries: ArrayView2<'_, f32>,
    k: usize,
    runs: usize,
    progress: &dyn Progress,
) -> Result<Measured> {
    let q = queries.nrows();
    let total = q * (runs + 1);
    let done = AtomicUsize::new(0);
    let mut tick = || {
        let n = done.load(Ordering::Relaxed);
        progress.on_event(&Event::QueriesDone { done: n, total });
        progress.cancelled()
    };
    let (mut cur, mut best) = (PassBuffers::new(q, k), PassBuffers::new(q, k));
    run_pass(searchers, queries, k, &mut cur, &done, &mut tick)?; // warm-up, not recorded
    let mut passes = Vec::with_capacity(runs);
    let mut best_qps = f64::NEG_INFINITY;
    for _ in 0..runs {
        if progress.cancelled() {
            return Err(Error::Interrupted);
        }
        let t = run_pass(searchers, queries, k, &mut cur, &done, &mut tick)?;
        let qps = metrics::qps(q, t.wall_seconds);
        passes.push(Pass {
            wall_seconds: t.wall_seconds,
            queries: q,
            client_cpu_seconds: t.client_cpu_seconds,
        });
        if qps > best_qps {
            best_qps = qps;
            std::mem::swap(&mut cur, &mut best);
        }
    }
    progress.on_event(&Event::QueriesDone { done: total, total });

    let neighbors = Array2::from_shape_vec((q, k), best.neighbors)
        .map_err(|e| Error::Backend(format!("internal: neighbour buffer shape: {e}")))?;
    let (distances, duplicates) = recompute_distances(data, queries, neighbors.view())?;
    let truth = data
        .ground_truth
        .as_ref()
        .ok_or_else(|| Error::Dataset(format!("{}: no ground truth", data.name)))?;
    let recall_of = |f: fn(_, _, usize) -> Option<f64>| {
        f(truth.distances.view(), distances.view(), k).ok_or_else(|| {
            Error::Dataset(format!(
                "{}: ground truth is narrower than k={k} or has fewer rows than the queries",
                data.name
            ))
        })
    };
    let lat = metrics::summarize_latencies([&best.latencies[..]]);
    let qps_passes: Vec<f64> = passes
        .iter()
        .map(|p| metrics::qps(p.queries, p.wall_seconds))
        .collect();
    let mut notices = Vec::new();
    if duplicates > 0 {
        notices.push(format!(
            "the backend returned the same id twice for {duplicates} queries; repeats were not counted"
        ));
    }
    if best.overlong > 0 {
        notices.push(format!(
            "the backend returned more than k={k} ids for {} queries",
            best.overlong
        ));
    }
    notices.extend(client_cpu_notice(&passes, searchers.len()));
    Ok(Measured {
        metrics: PointMetrics {
            recall: recall_of(metrics::knn_recall)?,
            epsilon_recall: recall_of(metrics::epsilon_recall)?,
            qps: metrics::best_pass(&qps_passes).map_or(0.0, |i| qps_passes[i]),
            qps_passes,
            latency_mean: lat.mean,
            latency_p50: lat.p50,
            latency_p95: lat.p95,
            latency_p99: lat.p99,
            latency_p999: lat.p999,
        },
        neighbors,
        distances,
        latencies: best.latencies,
        passes,
        notices,
    })
}

/// Distances of the returned ids, recomputed from the train vectors (`+inf` for missing or
/// repeated ids). Returns them and the number of queries with a repeated id. An id outside the
/// table is an error: the backend is answering from some other data.
pub fn recompute_distances(
    data: &Dataset,
    queries: ArrayView2<'_, f32>,
    neighbors: ArrayView2<'_, i64>,
) -> Result<(Array2<f32>, usize)> {
    let n = data.train.nrows() as i64;
    let metric: Metric = data.metric;
    let mut out = Array2::from_elem(neighbors.raw_dim(), f32::INFINITY);
    let mut duplicates = 0;
    for (i, ids) in neighbors.rows().into_iter().enumerate() {
        let query = queries.row(i);
        let query = query.as_slice().unwrap_or(&[]);
        let mut repeated = false;
        for (j, &id) in ids.iter().enumerate() {
            if id == -1 {
                continue;
            }
            if !(0..n).contains(&id) {
                return Err(Error::Backend(format!(
                    "query {i}: the backend returned id {id}, but the train set has rows 0..{n}"
                )));
            }
            if ids.iter().take(j).any(|&p| p == id) {
                repeated = true;
                continue;
            }
            let row = data.train.row(id as usize);
            out[[i, j]] = match row.as_slice() {
                Some(r) => metric.distance(r, query),
                None => metric.distance(&row.to_vec(), query),
            };
        }
        duplicates += usize::from(repeated);
    }
    Ok((out, duplicates))
}

/// A notice when the best pass's client CPU exceeded [`CLIENT_CPU_WARN_SHARE`] of a core per
/// connection: the numbers may then measure the client rather than the server.
fn client_cpu_notice(passes: &[Pass], clients: usize) -> Option<String> {
    let best = passes
        .iter()
        .min_by(|a, b| a.wall_seconds.total_cmp(&b.wall_seconds))?;
    let cpu = best.client_cpu_seconds?;
    if best.wall_seconds <= 0.0 {
        return None;
    }
    let share = cpu / best.wall_seconds / clients.max(1) as f64;
    (share > CLIENT_CPU_WARN_SHARE).then(|| {
        format!(
            "client CPU was {:.0}% of a core per connection ({cpu:.3} s over {:.3} s wall, {clients} \
             client(s)): the client may be the bottleneck, not the server",
            share * 100.0,
            best.wall_seconds
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn distances_are_recomputed_and_repeats_or_gaps_never_count() {
        let data = Dataset {
            name: "t".into(),
            metric: Metric::Euclidean,
            train: array![[0.0f32, 0.0], [3.0, 4.0], [6.0, 8.0]],
            test: array![[0.0f32, 0.0]],
            ground_truth: None,
        };
        let ids = array![[1i64, 1, -1, 2]];
        let (d, dups) = recompute_distances(&data, data.test.view(), ids.view()).unwrap();
        assert_eq!(d.row(0).to_vec(), [5.0, f32::INFINITY, f32::INFINITY, 10.0]);
        assert_eq!(dups, 1);
        let bad = array![[3i64]];
        assert!(recompute_distances(&data, data.test.view(), bad.view()).is_err());
    }

    #[test]
    fn client_cpu_notice_uses_the_best_pass_per_connection() {
        let pass = |wall: f64, cpu: f64| Pass {
            wall_seconds: wall,
            queries: 10,
            client_cpu_seconds: Some(cpu),
        };
        // Best pass: 1 s wall, 1.2 s CPU over 2 clients = 60% per connection -> notice.
        let n = client_cpu_notice(&[pass(2.0, 0.1), pass(1.0, 1.2)], 2).unwrap();
        assert!(n.contains("60%"), "{n}");
        assert!(client_cpu_notice(&[pass(1.0, 0.4)], 1).is_none());
        assert!(client_cpu_notice(&[], 1).is_none());
    }
}
