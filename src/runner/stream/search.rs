//! A search step: a recall pass scored against exact truth over the rows live at the step,
//! then timed passes for QPS and latency, on the run's search connections.

use super::Env;
use crate::backend::Searcher;
use crate::metrics::{self, interval::median_interval};
use crate::params::Params;
use crate::results::Pass;
use crate::results::stream::SearchFigures;
use crate::runner::assess;
use crate::runner::measure::{Observers, PassBuffers, PassPlan, run_pass};
use crate::runner::progress::Event;
use crate::runner::recall::rescore;
use crate::stream::live::LiveSet;
use crate::stream::truth::StepTruth;
use crate::{Error, Result};
use ndarray::{Array2, ArrayView2};
use std::time::Duration;

/// Distances of the returned tags from each query, from the train row each tag holds at this
/// step: `+inf` for a gap (-1), a repeated tag and a tag that is not live. Returns them, the
/// returned ids that are not live and the queries whose answer repeats an id.
pub fn live_distances(
    data: &crate::dataset::Dataset,
    queries: ArrayView2<'_, f32>,
    neighbors: ArrayView2<'_, i64>,
    live: &LiveSet,
) -> (Array2<f32>, usize, usize) {
    let r = rescore(data, queries, neighbors, |id| {
        usize::try_from(id).ok().and_then(|t| live.row_of(t))
    });
    (r.distances, r.unmapped, r.repeated)
}

/// Recall, not-live ids and short answers of one full pass over the queries.
fn recall_pass(
    env: &Env<'_>,
    searchers: &mut [Box<dyn Searcher>],
    live: &LiveSet,
    truth: &StepTruth,
) -> Result<(f64, usize, usize)> {
    let queries = env.data.test.view();
    let (q, k) = (queries.nrows(), env.opts.count);
    let mut bufs = PassBuffers::new(q, k, searchers.len());
    let plan = PassPlan {
        min_time: Duration::ZERO,
        record_ids: true,
    };
    let std_queries = queries.as_standard_layout();
    run_pass(
        searchers,
        std_queries.view(),
        k,
        plan,
        &mut bufs,
        Observers::default(),
        || env.progress.cancelled(),
    )?;
    env.check_stop()?;
    let neighbors = Array2::from_shape_vec((q, k), bufs.neighbors.clone())
        .map_err(|e| Error::Backend(format!("internal: neighbour buffer shape: {e}")))?;
    let (distances, not_live, repeated) =
        live_distances(env.data, std_queries.view(), neighbors.view(), live);
    if repeated > 0 {
        // As in a sweep: said, and each repeat scored once (it cannot raise recall).
        env.progress.on_event(&Event::Warning(&format!(
            "step {}: {repeated} of {q} queries were answered with an id twice; each counted once",
            truth.step
        )));
    }
    let k_eff = k.min(truth.distances.ncols());
    let recall =
        metrics::knn_recall(truth.distances.view(), distances.view(), k_eff).ok_or_else(|| {
            Error::Dataset(format!(
                "step {}: the live truth is narrower than k={k_eff}",
                truth.step
            ))
        })?;
    Ok((recall, not_live, bufs.short))
}

/// Set `args` on every search connection.
fn apply(searchers: &mut [Box<dyn Searcher>], args: &Params) -> Result<()> {
    searchers
        .iter_mut()
        .try_for_each(|s| s.set_query_args(args))
}

/// Recall alone (before and after a maintenance step), at `args`.
pub fn recall_only(
    env: &Env<'_>,
    searchers: &mut [Box<dyn Searcher>],
    args: &Params,
    live: &LiveSet,
    truth: &StepTruth,
) -> Result<f64> {
    apply(searchers, args)?;
    Ok(recall_pass(env, searchers, live, truth)?.0)
}

/// One query point at a search step: the recall pass (which also warms the caches), then
/// `runs` timed passes of at least `min_time`.
pub fn measure(
    env: &Env<'_>,
    searchers: &mut [Box<dyn Searcher>],
    args: &Params,
    live: &LiveSet,
    truth: &StepTruth,
) -> Result<SearchFigures> {
    apply(searchers, args)?;
    let (recall, not_live, short) = recall_pass(env, searchers, live, truth)?;
    let queries = env.data.test.as_standard_layout();
    let (q, k) = (queries.nrows(), env.opts.count);
    let mut bufs = PassBuffers::new(q, k, searchers.len());
    let plan = PassPlan {
        min_time: env.opts.min_time,
        record_ids: false,
    };
    let mut pass_qps = Vec::with_capacity(env.opts.runs);
    let mut latencies: Vec<f64> = Vec::new();
    // `run`'s stopping rule: `runs` passes, then extra ones while they stall or spread
    // widely, until they have lasted --max-time.
    let policy = env.opts.as_sweep().policy();
    let (mut passes, mut seconds) = (Vec::new(), 0.0);
    while assess::needs_more(&passes, 0, &policy, seconds) {
        let t = run_pass(
            searchers,
            queries.view(),
            k,
            plan,
            &mut bufs,
            Observers::default(),
            || env.progress.cancelled(),
        )?;
        env.check_stop()?;
        pass_qps.push(metrics::qps(t.queries, t.wall_seconds));
        let mut this_pass: Vec<f64> = bufs.latencies.iter().flatten().copied().collect();
        latencies.extend_from_slice(&this_pass);
        passes.push(Pass {
            wall_seconds: t.wall_seconds,
            queries: t.queries,
            latency: Some(metrics::summarize_in_place(&mut this_pass)),
            ..Pass::default()
        });
        assess::mark_stalls(&mut passes);
        seconds += t.wall_seconds;
    }
    let qps = metrics::interval::median(&pass_qps).unwrap_or(0.0);
    let (qps_low, qps_high) =
        median_interval(&pass_qps, 0.95).map_or((qps, qps), |i| (i.low, i.high));
    Ok(SearchFigures {
        query_args: args.clone(),
        recall,
        not_live,
        short,
        qps,
        qps_low,
        qps_high,
        pass_qps,
        latency: metrics::summarize_in_place(&mut latencies),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::step::{Operation, Step};
    use ndarray::array;

    fn step(number: u32, op: Operation) -> Step {
        Step::new(number, op)
    }

    #[test]
    fn a_returned_row_that_is_not_live_is_counted_and_scores_nothing() {
        let data = crate::dataset::Dataset {
            name: "t".into(),
            metric: crate::Metric::Euclidean,
            train: array![
                [0.0f32, 0.0],
                [1.0, 0.0],
                [2.0, 0.0],
                [3.0, 0.0],
                [9.0, 9.0]
            ],
            test: array![[0.0f32, 0.0]],
            ground_truth: None,
        };
        let mut live = LiveSet::default();
        live.apply(&step(1, Operation::Insert { start: 0, end: 4 }))
            .unwrap();
        live.apply(&step(2, Operation::Delete { start: 1, end: 2 }))
            .unwrap();
        // Tag 3 now holds train row 4, (9, 9).
        live.apply(&step(
            3,
            Operation::Replace {
                tags: 3..4,
                ids: 4..5,
            },
        ))
        .unwrap();
        // 0 live, 1 deleted, 7 never inserted, 3 replaced, a gap, 0 repeated.
        let neighbors = array![[0i64, 1, 7, 3, -1, 0]];
        let (d, not_live, repeated) =
            live_distances(&data, data.test.view(), neighbors.view(), &live);
        assert_eq!(not_live, 2, "the deleted and the never inserted row");
        assert_eq!(repeated, 1, "the query whose answer repeats tag 0");
        assert_eq!(d[[0, 0]], 0.0);
        assert!(d[[0, 1]].is_infinite() && d[[0, 2]].is_infinite());
        // A replaced row is scored by the vector it holds now.
        assert!(
            (d[[0, 3]] - (162.0f32).sqrt()).abs() < 1e-4,
            "{}",
            d[[0, 3]]
        );
        assert!(d[[0, 4]].is_infinite() && d[[0, 5]].is_infinite());
    }
}
