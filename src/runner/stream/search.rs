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

/// Recall@k of a step's answers (their `distances`, +inf where an id is missing, repeated or
/// not live) and the queries answered short, scored as the sweep's filtered points are:
/// against the `min(k, live)` true neighbours, and an answer with fewer ids than that is
/// short. The truth's columns past the live count are +inf, which a missing answer (+inf
/// too) would otherwise match: never compared.
pub fn score(
    truth: &StepTruth,
    distances: ArrayView2<'_, f32>,
    neighbors: ArrayView2<'_, i64>,
    live: usize,
    k: usize,
) -> Result<(f64, usize)> {
    let k_eff = k.min(live).min(truth.distances.ncols());
    let recall =
        metrics::knn_recall(truth.distances.view(), distances, k_eff).ok_or_else(|| {
            Error::Dataset(format!(
                "step {}: nothing to score: {live} rows are live and the live truth holds {} \
             neighbours per query (k={k})",
                truth.step,
                truth.distances.ncols()
            ))
        })?;
    let short = neighbors
        .rows()
        .into_iter()
        .filter(|ids| ids.iter().filter(|&&i| i >= 0).count() < k_eff)
        .count();
    Ok((recall, short))
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
    let (recall, short) = score(truth, distances.view(), neighbors.view(), live.len(), k)?;
    Ok((recall, not_live, short))
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

    /// Five rows live, k = 3 and k = 10: the true answer of a query at the origin is tags 0..5
    /// (distances 0..5), padded with -1 at +inf past them.
    fn five_live(k: usize) -> StepTruth {
        let mut ids = Array2::from_elem((1, k), -1i64);
        let mut distances = Array2::from_elem((1, k), f32::INFINITY);
        for j in 0..k.min(5) {
            ids[[0, j]] = j as i64;
            distances[[0, j]] = j as f32;
        }
        StepTruth {
            step: 4,
            ids,
            distances,
        }
    }

    #[test]
    fn fewer_live_rows_than_k_score_missing_answers_as_misses() {
        let truth = five_live(10);
        // Two of the five live neighbours returned, then nothing: 2 of min(10, 5).
        let neighbors = array![[0i64, 1, -1, -1, -1, -1, -1, -1, -1, -1]];
        let mut d = Array2::from_elem((1, 10), f32::INFINITY);
        d[[0, 0]] = 0.0;
        d[[0, 1]] = 1.0;
        let (recall, short) = score(&truth, d.view(), neighbors.view(), 5, 10).unwrap();
        assert!((recall - 0.4).abs() < 1e-9, "{recall}");
        assert_eq!(short, 1);
        // All five returned: a full score, and not short (min(k, live) ids).
        let neighbors = array![[0i64, 1, 2, 3, 4, -1, -1, -1, -1, -1]];
        let mut d = Array2::from_elem((1, 10), f32::INFINITY);
        for j in 0..5 {
            d[[0, j]] = j as f32;
        }
        let (recall, short) = score(&truth, d.view(), neighbors.view(), 5, 10).unwrap();
        assert_eq!((recall, short), (1.0, 0));
        // An empty answer scores nothing.
        let none = Array2::from_elem((1, 10), -1i64);
        let inf = Array2::from_elem((1, 10), f32::INFINITY);
        let (recall, short) = score(&truth, inf.view(), none.view(), 5, 10).unwrap();
        assert_eq!((recall, short), (0.0, 1));
        // With more live rows than k, k is the bar.
        let truth = five_live(3);
        let neighbors = array![[0i64, 1, -1]];
        let mut d = Array2::from_elem((1, 3), f32::INFINITY);
        d[[0, 0]] = 0.0;
        d[[0, 1]] = 1.0;
        let (recall, short) = score(&truth, d.view(), neighbors.view(), 5, 3).unwrap();
        assert!((recall - 2.0 / 3.0).abs() < 1e-9, "{recall}");
        assert_eq!(short, 1);
    }

    #[test]
    fn no_live_rows_is_an_error_not_a_score() {
        let truth = five_live(10);
        let none = Array2::from_elem((1, 10), -1i64);
        let inf = Array2::from_elem((1, 10), f32::INFINITY);
        let e = score(&truth, inf.view(), none.view(), 0, 10).unwrap_err();
        assert!(e.to_string().contains("nothing to score"), "{e}");
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
