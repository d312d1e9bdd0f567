//! Client-side overhead of the timed loop, per query, with a searcher that does no work: the
//! floor the harness adds to every measured latency. A figure, not a pass/fail test:
//! `cargo test --test runner_overhead -- --ignored --nocapture`.

use annbench::backend::Searcher;
use annbench::params::Params;
use annbench::runner::measure::{PassBuffers, PassPlan, process_cpu_seconds, run_pass};
use ndarray::Array2;
use std::time::Duration;

/// Answers instantly with ids 0..k (what a driver hands back, minus the network).
struct Instant0;

impl Searcher for Instant0 {
    fn set_query_args(&mut self, _: &Params) -> annbench::Result<()> {
        Ok(())
    }
    fn search(&mut self, _q: &[f32], k: usize, ids: &mut Vec<i64>) -> annbench::Result<()> {
        ids.clear();
        ids.extend(0..k as i64);
        Ok(())
    }
}

/// 10,000 queries of 784 dimensions (MNIST's shape), seeded pseudo-random bytes: the no-op
/// searcher never reads them, so only their shape matters.
fn queries() -> Array2<f32> {
    let mut rng = annbench::dataset::rng::Rng::new(7);
    Array2::from_shape_fn((10_000, 784), |_| rng.below(256) as f32)
}

#[test]
#[ignore = "prints a figure; run with --ignored --nocapture"]
fn harness_overhead_per_query() {
    let q = queries();
    let k = 10;
    for clients in [1usize, 2] {
        let mut searchers: Vec<Box<dyn Searcher>> =
            (0..clients).map(|_| Box::new(Instant0) as _).collect();
        let mut buf = PassBuffers::new(q.nrows(), k, clients);
        // One pass over the queries each time (no minimum time), as the recall pass runs.
        let plan = PassPlan {
            min_time: Duration::ZERO,
            record_ids: true,
        };
        let mut best = f64::INFINITY;
        let mut cpu_best = 0.0;
        for _ in 0..5 {
            let c0 = process_cpu_seconds().unwrap_or(0.0);
            let t = run_pass(
                &mut searchers,
                q.view(),
                k,
                plan,
                &mut buf,
                Default::default(),
                || false,
            )
            .unwrap();
            let cpu = process_cpu_seconds().unwrap_or(0.0) - c0;
            if t.wall_seconds < best {
                best = t.wall_seconds;
                cpu_best = cpu;
            }
        }
        let lat: f64 = buf.latencies.iter().flatten().sum::<f64>() / q.nrows() as f64;
        println!(
            "clients={clients}: {} queries of {} dims, k={k}: wall {:.3} ms, {:.0} ns wall/query, \
             {:.0} ns client CPU/query, {:.0} ns mean timed latency (no-op search)",
            q.nrows(),
            q.ncols(),
            best * 1e3,
            best / q.nrows() as f64 * 1e9,
            cpu_best / q.nrows() as f64 * 1e9,
            lat * 1e9
        );
    }
}
