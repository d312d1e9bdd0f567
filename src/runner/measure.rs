//! One pass over the test queries with N clients.
//!
//! Client `c` of `n` answers the contiguous share `c*q/n .. (c+1)*q/n` of the queries, each on
//! its own connection ([`Searcher`]), cycling through its share until the pass has lasted the
//! plan's minimum time, stopping at the first query that ends past it (and never before every
//! query of its share ran once). Every pass starts at each share's first query, so passes do
//! the same work. The clients start together: they wait on a barrier, the clock starts, then
//! they are released. Wall time runs from that release to the last client's last answer; QPS
//! is queries answered / wall time. Each query's latency is `Instant` around `search` alone;
//! the timed loop does no recall work and allocates only if a client outgrows the latency
//! capacity reserved from the previous pass. Interference is sampled right before the clock
//! starts and right after the last client ends.

use super::interference::Watcher;
use super::server_cost::{Probe, Sample as ServerSample};
use crate::backend::Searcher;
use crate::results::{Interference, PassServerCost};
use crate::{Error, Result};
use ndarray::ArrayView2;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

/// How long a pass runs and what it keeps.
#[derive(Debug, Clone, Copy)]
pub struct PassPlan {
    /// Keep cycling until this much time has passed (zero: one cycle over the queries).
    pub min_time: Duration,
    /// Keep the returned ids of each query's first run (the recall pass).
    pub record_ids: bool,
}

/// Raw outputs of a pass, reused from pass to pass.
#[derive(Debug, Clone)]
pub struct PassBuffers {
    /// q x k ids of each query's first run (recall passes only), -1 where fewer came back.
    pub neighbors: Vec<i64>,
    /// Per client, the latency of every query it answered, in order (seconds).
    pub latencies: Vec<Vec<f64>>,
    /// Queries for which the backend returned more than k ids (truncated to k), first runs.
    pub overlong: usize,
    /// Queries answered with fewer than k ids, first runs.
    pub short: usize,
}

impl PassBuffers {
    /// Buffers for `queries` queries of `k` neighbours and `clients` clients.
    pub fn new(queries: usize, k: usize, clients: usize) -> Self {
        PassBuffers {
            neighbors: vec![-1; queries * k],
            latencies: vec![Vec::with_capacity(queries); clients.max(1)],
            overlong: 0,
            short: 0,
        }
    }

    /// Each query's latency in its first run, in query order (`queries` long when every client
    /// completed its share).
    pub fn first_run_latencies(&self, queries: usize) -> Vec<f64> {
        let n = self.latencies.len().max(1);
        let mut out = Vec::with_capacity(queries);
        for (c, lat) in self.latencies.iter().enumerate() {
            let share = (c + 1) * queries / n - c * queries / n;
            out.extend(lat.iter().take(share));
        }
        out
    }
}

/// What is sampled around a pass besides its timings (outside the timed window).
#[derive(Debug, Clone, Copy, Default)]
pub struct Observers<'a> {
    /// What else used the machine.
    pub interference: Option<&'a Watcher>,
    /// What the database server spent.
    pub server: Option<&'a Probe>,
}

/// Timings of a pass.
#[derive(Debug, Clone, Copy)]
pub struct PassTiming {
    pub wall_seconds: f64,
    /// Queries answered by all clients.
    pub queries: usize,
    /// Process CPU (user + system) during the pass, all threads; `None` if unavailable.
    pub client_cpu_seconds: Option<f64>,
    /// `None` without a watcher or a readable `/proc`.
    pub interference: Option<Interference>,
    /// What the server spent; `None` without a probe.
    pub server: Option<PassServerCost>,
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

/// Run one pass with `searchers[..]` (one per client). `queries` must be row-major. `tick`
/// is called about every 50 ms from this thread and returns `true` to stop the pass early
/// (cancelled).
pub fn run_pass(
    searchers: &mut [Box<dyn Searcher>],
    queries: ArrayView2<'_, f32>,
    k: usize,
    plan: PassPlan,
    out: &mut PassBuffers,
    observe: Observers<'_>,
    mut tick: impl FnMut() -> bool,
) -> Result<PassTiming> {
    let (watcher, cost) = (observe.interference, observe.server);
    let (q, n) = (queries.nrows(), searchers.len().max(1));
    let rows = queries
        .as_slice()
        .ok_or_else(|| Error::Backend("internal: query matrix is not row-major".into()))?;
    let dim = queries.ncols();
    out.latencies.resize_with(n, Vec::new);
    let stop = AtomicBool::new(false);
    let (ready, go) = (Barrier::new(n + 1), Barrier::new(n + 1));
    let started: OnceLock<Instant> = OnceLock::new();
    let (overlong, short) = (AtomicUsize::new(0), AtomicUsize::new(0));
    // Server cost: statement statistics outside the /proc window, which is the clock's.
    let (mut server_before, mut server_after) = (ServerSample::default(), ServerSample::default());
    if let (Some(c), Some(first)) = (cost, searchers.first_mut()) {
        c.sample_statements(first.as_mut(), &mut server_before);
    }
    let outcome = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        let mut nb_rest = &mut out.neighbors[..];
        for ((c, searcher), lat) in searchers.iter_mut().enumerate().zip(&mut out.latencies) {
            let (lo, hi) = (c * q / n, (c + 1) * q / n);
            let take = ((hi - lo) * k).min(nb_rest.len());
            let (nb, rest) = std::mem::take(&mut nb_rest).split_at_mut(take);
            nb_rest = rest;
            let (ready, go, stop, started) = (&ready, &go, &stop, &started);
            let (overlong, short) = (&overlong, &short);
            handles.push(s.spawn(move || -> Result<(Instant, usize)> {
                let mut ids: Vec<i64> = Vec::with_capacity(k + 1);
                let share = hi - lo;
                lat.clear();
                ready.wait();
                go.wait();
                let deadline = started.get().map(|t| *t + plan.min_time);
                let mut answered = 0usize;
                let mut last = Instant::now();
                while share > 0 && !stop.load(Ordering::Relaxed) {
                    let j = answered % share;
                    let query = &rows[(lo + j) * dim..(lo + j + 1) * dim];
                    let t = Instant::now();
                    let r = searcher.search(query, k, &mut ids);
                    last = Instant::now();
                    lat.push((last - t).as_secs_f64());
                    if let Err(e) = r {
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                    if answered < share {
                        overlong.fetch_add(usize::from(ids.len() > k), Ordering::Relaxed);
                        short.fetch_add(usize::from(ids.len() < k), Ordering::Relaxed);
                        if plan.record_ids && nb.len() >= (j + 1) * k {
                            let row = &mut nb[j * k..(j + 1) * k];
                            let m = ids.len().min(k);
                            row[..m].copy_from_slice(&ids[..m]);
                            row[m..].fill(-1);
                        }
                    }
                    answered += 1;
                    if answered >= share && deadline.is_none_or(|d| last >= d) {
                        break;
                    }
                }
                Ok((last, answered))
            }));
        }
        ready.wait();
        // The speed probe runs outside the sampled window, so its own time is in neither the
        // pass nor the interference figures.
        let probe_before = watcher.and_then(|_| super::speed::probe());
        let before = watcher.and_then(Watcher::sample);
        let cpu0 = process_cpu_seconds();
        if let Some(c) = cost {
            c.sample_procs(&mut server_before);
        }
        let start = *started.get_or_init(Instant::now);
        go.wait();
        // Poll for cancellation; back off to 50 ms so short passes end promptly and long ones
        // cost the client almost no CPU.
        let mut nap = Duration::from_millis(1);
        while !handles.iter().all(|h| h.is_finished()) {
            if tick() {
                stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(50));
        }
        let (mut end, mut answered) = (start, 0);
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok((t, a))) => {
                    end = end.max(t);
                    answered += a;
                }
                Ok(Err(e)) => first_err = first_err.or(Some(e)),
                Err(_) => {
                    first_err =
                        first_err.or(Some(Error::Backend("a client thread panicked".into())))
                }
            }
        }
        if let Some(c) = cost {
            c.sample_procs(&mut server_after);
        }
        let cpu = process_cpu_seconds()
            .zip(cpu0)
            .map(|(b, a)| (b - a).max(0.0));
        let interference = match (watcher, before, watcher.and_then(Watcher::sample)) {
            (Some(w), Some(a), Some(b)) => {
                let probe = probe_before
                    .zip(super::speed::probe())
                    .map(|(x, y)| (x + y) / 2.0);
                Some(w.between(&a, &b, probe))
            }
            _ => None,
        };
        match first_err {
            Some(e) => Err(e),
            None if stop.load(Ordering::Relaxed) => Err(Error::Interrupted),
            None => Ok(PassTiming {
                wall_seconds: (end - start).as_secs_f64(),
                queries: answered,
                client_cpu_seconds: cpu,
                interference,
                server: None,
            }),
        }
    });
    let outcome = outcome.map(|mut t| {
        if let (Some(c), Some(first)) = (cost, searchers.first_mut()) {
            c.sample_statements(first.as_mut(), &mut server_after);
            t.server = Some(c.between(&server_before, &server_after));
        }
        t
    });
    out.overlong = overlong.into_inner();
    out.short = short.into_inner();
    outcome
}
