//! Exact ground truth of every search step of a runbook: the `k` nearest live tags of each
//! test query over the rows live at that step, nearest first, ties by lower tag.
//!
//! Exact as [`crate::dataset::groundtruth`] is (it does the scanning: f64 distances, proven
//! candidate sets), and incremental: each query keeps a list of `(key, tag)` of length at most
//! `depth` (D > k) that is the exact top-|list| of the live set, ordered by the f64 key
//! (squared L2 or cosine distance) then tag.
//!
//! - An insert computes the top-D of the new rows only and merges it with the list. Every live
//!   row missing from the old list ranks after the list's last entry when the list was cut
//!   (it held fewer entries than the old live set), and every new row missing from the new
//!   top-D ranks after that one's last entry when it was cut (more than D new rows). So the
//!   merged list is exact up to the smaller of those cut points, and is kept up to it (at most
//!   D entries): it holds at least as many entries as the shorter cut input, and D when only
//!   the new rows' list was cut.
//! - A delete removes the tags from the lists (what remains is still an exact prefix).
//! - A replace deletes the tags' old rows and inserts their new rows under the same tags.
//! - At a search step, a query whose list holds fewer than `min(k, live)` entries is rescanned
//!   over the whole live set (counted in [`Computed::rescans`]); the others are answered from
//!   their lists.
//!
//! The steps between two searches are applied in order. Results do not depend on D (a larger D
//! means fewer rescans); [`default_depth`] is `max(2k, k + 50)`. When fewer than `k` tags are
//! live, the rest of a row holds tag -1 at distance +inf.

use super::live::LiveSet;
use super::runbook::Runbook;
use super::step::Operation;
use crate::dataset::{Dataset, groundtruth};
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView1, ArrayView2, Axis, s};
use rayon::prelude::*;
use std::cmp::Ordering;

/// The exact nearest live tags of every test query at one search step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTruth {
    /// The search step's number.
    pub step: u32,
    /// Tags, q x k, nearest first (-1 past the live count).
    pub ids: Array2<i64>,
    /// Their distances, q x k, ascending (+inf past the live count).
    pub distances: Array2<f32>,
}

/// The ground truth of every search step, and how much rescanning it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    /// One per search step, in step order.
    pub steps: Vec<StepTruth>,
    /// Query lists rescanned over the whole live set because they ran shorter than k.
    pub rescans: usize,
}

/// The list depth used when none is given: `max(2k, k + 50)`.
pub fn default_depth(k: usize) -> usize {
    (2 * k).max(k + 50)
}

/// One candidate: f64 ranking key and tag.
type Entry = (f64, u32);

fn order(a: &Entry, b: &Entry) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// The exact ground truth of every search step of `runbook` over `ds` (its train rows, test
/// queries and metric) for `k` neighbours, with query lists `depth` deep (`depth >= k`). The
/// runbook is validated against the dataset first.
pub fn compute(ds: &Dataset, runbook: &Runbook, k: usize, depth: usize) -> Result<Computed> {
    compute_observed(ds, runbook, k, depth, &|_| true)
}

/// Work units of [`compute_observed`] known up front: query x row pairs of the rows the
/// runbook's inserts and replaces bring in (the rescans of short lists come on top).
pub fn work_units(runbook: &Runbook, queries: usize) -> u64 {
    let rows: u64 = runbook
        .steps
        .iter()
        .map(|s| match &s.op {
            Operation::Insert { .. } | Operation::Replace { .. } => s.op.rows() as u64,
            _ => 0,
        })
        .sum();
    rows * queries as u64
}

/// [`compute`] that calls `observe(pairs)` from the worker threads as blocks of query x row
/// pairs are done (see [`work_units`]), for a progress bar. When `observe` returns false the
/// computation stops early with [`Error::Interrupted`].
pub fn compute_observed(
    ds: &Dataset,
    runbook: &Runbook,
    k: usize,
    depth: usize,
    observe: &(dyn Fn(u64) -> bool + Sync),
) -> Result<Computed> {
    runbook.validate(ds.train.nrows())?;
    if k == 0 {
        return Err(Error::Config(
            "ground truth needs k >= 1 neighbours per query".into(),
        ));
    }
    if depth < k {
        return Err(Error::Config(format!(
            "list depth {depth} is below k = {k}: give a depth of at least k (the default is \
             max(2k, k + 50))"
        )));
    }
    if ds.train.nrows() > u32::MAX as usize {
        return Err(Error::Dataset(format!(
            "{}: more train rows than 32-bit tags can address",
            ds.name
        )));
    }
    let mut state = State {
        train: ds.train.view(),
        test: ds.test.view(),
        metric: ds.metric,
        k,
        depth,
        lists: vec![Vec::new(); ds.test.nrows()],
        rescans: 0,
        observe,
    };
    let mut live = LiveSet::new();
    let mut steps = Vec::with_capacity(runbook.search_steps());
    for step in &runbook.steps {
        match &step.op {
            Operation::Insert { start, end } => {
                state.insert(*start..*end, *start, live.len())?;
            }
            Operation::Delete { start, end } => state.remove(*start..*end),
            Operation::Replace { tags, ids } => {
                state.remove(tags.clone());
                state.insert(ids.clone(), tags.start, live.len() - tags.len())?;
            }
            Operation::Search => {}
            Operation::Maintenance(_) => {}
        }
        live.apply(step)?;
        if step.op == Operation::Search {
            state.rescan_short(&live)?;
            steps.push(state.truth(step.number));
        }
    }
    Ok(Computed {
        steps,
        rescans: state.rescans,
    })
}

struct State<'a> {
    train: ArrayView2<'a, f32>,
    test: ArrayView2<'a, f32>,
    metric: Metric,
    k: usize,
    depth: usize,
    /// Per query: the exact top-|list| of the live set, sorted by [`order`].
    lists: Vec<Vec<Entry>>,
    rescans: usize,
    observe: &'a (dyn Fn(u64) -> bool + Sync),
}

impl State<'_> {
    /// Merges train rows `rows` entering under tags from `first_tag` (in order); `old_live`
    /// tags were live before them.
    fn insert(
        &mut self,
        rows: std::ops::Range<usize>,
        first_tag: usize,
        old_live: usize,
    ) -> Result<()> {
        let block = self.train.slice(s![rows.clone(), ..]);
        let gt = self.exact(block, self.test)?;
        let new_cut = rows.len() > gt.neighbors.ncols();
        let (test, metric, depth) = (self.test, self.metric, self.depth);
        self.lists
            .par_iter_mut()
            .zip(gt.neighbors.axis_iter(Axis(0)).into_par_iter())
            .enumerate()
            .for_each(|(i, (list, near))| {
                let q = test.row(i);
                let mut fresh: Vec<Entry> = near
                    .iter()
                    .map(|&j| {
                        let j = j as usize;
                        (key(metric, q, block.row(j)), (first_tag + j) as u32)
                    })
                    .collect();
                fresh.sort_unstable_by(order);
                let old_cut = list.len() < old_live;
                if old_cut && list.is_empty() {
                    // Nothing is known about the old live rows: a rescan will answer.
                    return;
                }
                let bound = [
                    old_cut.then(|| list[list.len() - 1]),
                    new_cut.then(|| fresh[fresh.len() - 1]),
                ]
                .into_iter()
                .flatten()
                .min_by(order);
                *list = merge(list, &fresh, bound, depth);
            });
        Ok(())
    }

    /// The exact `depth` nearest of `rows` for each of `queries`, observed.
    fn exact(
        &self,
        rows: ArrayView2<'_, f32>,
        queries: ArrayView2<'_, f32>,
    ) -> Result<crate::dataset::GroundTruth> {
        groundtruth::check_input(rows, queries, self.depth)?;
        groundtruth::compute_observed(rows, queries, self.metric, self.depth, self.observe)
            .map(|(gt, _)| gt)
            .ok_or(Error::Interrupted)
    }

    /// Drops `tags` from every list.
    fn remove(&mut self, tags: std::ops::Range<usize>) {
        self.lists.par_iter_mut().for_each(|list| {
            list.retain(|&(_, t)| !tags.contains(&(t as usize)));
        });
    }

    /// Rescans, over the whole live set, the queries whose lists hold fewer than
    /// `min(k, live)` entries.
    fn rescan_short(&mut self, live: &LiveSet) -> Result<()> {
        let need = self.k.min(live.len());
        let short: Vec<usize> = (0..self.lists.len())
            .filter(|&i| self.lists[i].len() < need)
            .collect();
        if short.is_empty() {
            return Ok(());
        }
        let tags: Vec<u32> = live.live_tags().map(|t| t as u32).collect();
        let d = self.train.ncols();
        let mut rows = Array2::<f32>::zeros((tags.len(), d));
        for (mut dst, (_, row)) in rows.axis_iter_mut(Axis(0)).zip(live.entries()) {
            dst.assign(&self.train.row(row));
        }
        let queries = self.test.select(Axis(0), &short);
        let gt = self.exact(rows.view(), queries.view())?;
        let metric = self.metric;
        for (near, &i) in gt.neighbors.axis_iter(Axis(0)).zip(&short) {
            let q = self.test.row(i);
            let mut list: Vec<Entry> = near
                .iter()
                .map(|&j| (key(metric, q, rows.row(j as usize)), tags[j as usize]))
                .collect();
            list.sort_unstable_by(order);
            self.lists[i] = list;
        }
        self.rescans += short.len();
        Ok(())
    }

    /// The first k entries of every list, as tags and distances.
    fn truth(&self, step: u32) -> StepTruth {
        let q = self.lists.len();
        let mut ids = Array2::<i64>::from_elem((q, self.k), -1);
        let mut distances = Array2::<f32>::from_elem((q, self.k), f32::INFINITY);
        for (i, list) in self.lists.iter().enumerate() {
            for (j, &(key, tag)) in list.iter().take(self.k).enumerate() {
                ids[[i, j]] = i64::from(tag);
                distances[[i, j]] = key_to_distance(self.metric, key);
            }
        }
        StepTruth {
            step,
            ids,
            distances,
        }
    }
}

/// `a` and `b` merged in [`order`], kept up to `bound` (inclusive) and `depth` entries.
fn merge(a: &[Entry], b: &[Entry], bound: Option<Entry>, depth: usize) -> Vec<Entry> {
    let mut out = Vec::with_capacity((a.len() + b.len()).min(depth));
    let (mut i, mut j) = (0, 0);
    while out.len() < depth && (i < a.len() || j < b.len()) {
        let next = if j >= b.len() || (i < a.len() && order(&a[i], &b[j]).is_le()) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if bound.is_some_and(|bd| order(&next, &bd).is_gt()) {
            break;
        }
        out.push(next);
    }
    out
}

/// The f64 ranking key `crate::dataset::groundtruth` orders by: squared L2 distance, or
/// cosine distance (1 for a zero vector), summed in the same order.
fn key(metric: Metric, q: ArrayView1<f32>, x: ArrayView1<f32>) -> f64 {
    match metric {
        Metric::Euclidean => q
            .iter()
            .zip(x.iter())
            .map(|(&a, &b)| {
                let t = f64::from(a) - f64::from(b);
                t * t
            })
            .sum(),
        Metric::Angular => {
            let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
            for (&a, &b) in q.iter().zip(x.iter()) {
                let (a, b) = (f64::from(a), f64::from(b));
                dot += a * b;
                na += a * a;
                nb += b * b;
            }
            if na == 0.0 || nb == 0.0 {
                1.0
            } else {
                1.0 - dot / (na.sqrt() * nb.sqrt())
            }
        }
    }
}

fn key_to_distance(metric: Metric, key: f64) -> f32 {
    match metric {
        Metric::Euclidean => key.sqrt() as f32,
        Metric::Angular => key as f32,
    }
}

#[cfg(test)]
#[path = "truth_tests.rs"]
mod tests;
