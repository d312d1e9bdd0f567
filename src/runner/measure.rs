//! One timed pass over all test queries with N clients.
//!
//! Client `c` of `n` answers the contiguous share `c*q/n .. (c+1)*q/n` of the queries, each on
//! its own connection ([`Searcher`]), so every query runs exactly once per pass and recall stays
//! per query. The clients start together: they wait on a barrier, the clock starts, then they
//! are released. Wall time runs from that release to the last client's last answer; QPS is
//! queries / wall time. Each query's latency is `Instant` around `search` alone; the timed loop
//! allocates nothing (buffers are reused) and does no recall work.

use crate::backend::Searcher;
use crate::{Error, Result};
use ndarray::ArrayView2;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Raw outputs of a pass, filled in query order.
#[derive(Debug, Clone)]
pub struct PassBuffers {
    /// q x k returned ids, -1 where fewer than k came back.
    pub neighbors: Vec<i64>,
    /// Per-query latency, seconds.
    pub latencies: Vec<f64>,
    /// Queries for which the backend returned more than k ids (truncated to k).
    pub overlong: usize,
}

impl PassBuffers {
    /// Buffers for `queries` queries of `k` neighbours.
    pub fn new(queries: usize, k: usize) -> Self {
        PassBuffers {
            neighbors: vec![-1; queries * k],
            latencies: vec![0.0; queries],
            overlong: 0,
        }
    }
}

/// Timings of a pass.
#[derive(Debug, Clone, Copy)]
pub struct PassTiming {
    pub wall_seconds: f64,
    /// Process CPU (user + system) during the pass, all threads; `None` if unavailable.
    pub client_cpu_seconds: Option<f64>,
}

/// Process CPU seconds (user + system) so far, from getrusage.
pub fn process_cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage writes a plain C struct we own; zeroed is a valid initial value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    (rc == 0).then(|| {
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(usage.ru_utime) + tv(usage.ru_stime)
    })
}

/// Run one pass. `queries` must be in standard (row-major) layout. `done` counts answered
/// queries (for progress); `tick` is called about every 50 ms from this thread and returns
/// `true` to stop the pass early (cancelled).
pub fn run_pass(
    searchers: &mut [Box<dyn Searcher>],
    queries: ArrayView2<'_, f32>,
    k: usize,
    out: &mut PassBuffers,
    done: &AtomicUsize,
    mut tick: impl FnMut() -> bool,
) -> Result<PassTiming> {
    let (q, n) = (queries.nrows(), searchers.len().max(1));
    let rows = queries
        .as_slice()
        .ok_or_else(|| Error::Backend("internal: query matrix is not row-major".into()))?;
    let dim = queries.ncols();
    let stop = AtomicBool::new(false);
    let (ready, go) = (Barrier::new(n + 1), Barrier::new(n + 1));
    let mut overlong = AtomicUsize::new(0);
    let outcome = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        let (mut nb_rest, mut lat_rest) = (&mut out.neighbors[..], &mut out.latencies[..]);
        for (c, searcher) in searchers.iter_mut().enumerate() {
            let (lo, hi) = (c * q / n, (c + 1) * q / n);
            let (nb, rest) = std::mem::take(&mut nb_rest).split_at_mut((hi - lo) * k);
            nb_rest = rest;
            let (lat, rest) = std::mem::take(&mut lat_rest).split_at_mut(hi - lo);
            lat_rest = rest;
            let (ready, go, stop, overlong) = (&ready, &go, &stop, &overlong);
            handles.push(s.spawn(move || -> Result<Instant> {
                let mut ids: Vec<i64> = Vec::with_capacity(k + 1);
                ready.wait();
                go.wait();
                for (j, i) in (lo..hi).enumerate() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let query = &rows[i * dim..(i + 1) * dim];
                    let t = Instant::now();
                    let r = searcher.search(query, k, &mut ids);
                    lat[j] = t.elapsed().as_secs_f64();
                    if let Err(e) = r {
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                    if ids.len() > k {
                        overlong.fetch_add(1, Ordering::Relaxed);
                    }
                    let row = &mut nb[j * k..(j + 1) * k];
                    let m = ids.len().min(k);
                    row[..m].copy_from_slice(&ids[..m]);
                    row[m..].fill(-1);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(Instant::now())
            }));
        }
        ready.wait();
        let cpu0 = process_cpu_seconds();
        let start = Instant::now();
        go.wait();
        // Poll for progress and cancellation; back off to 50 ms so short passes end promptly
        // and long ones cost the client almost no CPU.
        let mut nap = Duration::from_millis(1);
        while !handles.iter().all(|h| h.is_finished()) {
            if tick() {
                stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(50));
        }
        let mut end = start;
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(t)) => end = end.max(t),
                Ok(Err(e)) => first_err = first_err.or(Some(e)),
                Err(_) => {
                    first_err =
                        first_err.or(Some(Error::Backend("a client thread panicked".into())))
                }
            }
        }
        let cpu = process_cpu_seconds()
            .zip(cpu0)
            .map(|(b, a)| (b - a).max(0.0));
        match first_err {
            Some(e) => Err(e),
            None if stop.load(Ordering::Relaxed) => Err(Error::Interrupted),
            None => Ok(PassTiming {
                wall_seconds: (end - start).as_secs_f64(),
                client_cpu_seconds: cpu,
            }),
        }
    });
    out.overlong = *overlong.get_mut();
    outcome
}
