//! One point (query arguments x clients) of one build point, measured pass by pass so the
//! scheduler can interleave points: a recall pass (the first full pass over the queries, which
//! also warms the caches) per build, then timed passes. [`PointRun::finish`] turns the passes
//! into the point's figures (see [`super::assess`]).

use super::assess::{self, Policy};
use super::interference::Watcher;
use super::measure::{Observers, PassBuffers, PassPlan, run_pass};
use super::notices::{FirstRun, point_notices};
use super::progress::{Event, PassKind, Progress};
use super::recall::recompute_distances;
use super::server_cost::Probe;
use crate::backend::{BuildReport, Searcher};
use crate::dataset::Dataset;
use crate::dataset::filters::Filters;
use crate::metrics;
use crate::params::Params;
use crate::results::{BuildRun, Pass, PointMetrics, ServerCost};
use crate::{Error, Result};
use ndarray::{Array2, ArrayView2};
use std::time::{Duration, Instant};

/// What every pass of a build needs.
pub struct PassEnv<'a> {
    pub data: &'a Dataset,
    pub queries: ArrayView2<'a, f32>,
    pub k: usize,
    pub min_time: Duration,
    pub progress: &'a dyn Progress,
    pub algorithm: &'a str,
    /// `None`: interference is not sampled.
    pub watcher: Option<&'a Watcher>,
    /// The filter workload of filtered points (`selectivity` query arg).
    pub filters: Option<&'a Filters>,
    /// `None`: server cost is not sampled.
    pub cost: Option<&'a Probe>,
}

/// Raw data and metrics of a measured point (identity and environment are added by the sweep).
#[derive(Debug)]
pub struct Measured {
    pub neighbors: Array2<i64>,
    pub distances: Array2<f32>,
    pub latencies: Vec<f64>,
    pub passes: Vec<Pass>,
    pub metrics: PointMetrics,
    pub notices: Vec<String>,
    /// Median index build seconds over the builds.
    pub build_seconds: f64,
}

/// Recall of one build.
#[derive(Debug)]
struct RecallRun {
    neighbors: Array2<i64>,
    distances: Array2<f32>,
    duplicates: usize,
    overlong: usize,
    short: usize,
    /// Mean ids returned per query.
    mean_rows: f64,
    build: BuildRun,
}

/// A point being measured.
pub struct PointRun {
    pub query_args: Params,
    pub clients: usize,
    passes: Vec<Pass>,
    recalls: Vec<RecallRun>,
    times: Option<Vec<f64>>,
    /// Seconds of the timed passes of the current build (for `--max-time`).
    seconds: f64,
    build: usize,
    /// Failed (recorded with `--keep-going`): no more passes, never stored.
    pub failed: bool,
    /// The plan EXPLAIN showed for this point's query.
    pub plan: Option<String>,
}

impl PointRun {
    pub fn new(query_args: Params, clients: usize) -> Self {
        PointRun {
            query_args,
            clients,
            passes: Vec::new(),
            recalls: Vec::new(),
            times: None,
            seconds: 0.0,
            build: 0,
            failed: false,
            plan: None,
        }
    }

    /// Set this point's query arguments on its clients' connections.
    pub fn apply_args(&self, searchers: &mut [Box<dyn Searcher>]) -> Result<()> {
        for s in searchers.iter_mut().take(self.clients) {
            s.set_query_args(&self.query_args)?;
        }
        Ok(())
    }

    /// The recall pass on build number `build` (query arguments already applied): one full
    /// pass over the queries, ids kept, recall computed outside any timing.
    pub fn recall_pass(
        &mut self,
        env: &PassEnv<'_>,
        searchers: &mut [Box<dyn Searcher>],
        bufs: &mut PassBuffers,
        build: usize,
        report: &BuildReport,
    ) -> Result<()> {
        self.build = build;
        self.seconds = 0.0;
        let plan = PassPlan {
            min_time: Duration::ZERO,
            record_ids: true,
        };
        // Not counted against --max-time: its length depends on the query count, not on how
        // long the timed passes are.
        self.pass(env, searchers, bufs, plan, PassKind::Recall)?;
        let (q, k) = (env.queries.nrows(), env.k);
        let neighbors = Array2::from_shape_vec((q, k), bufs.neighbors.clone())
            .map_err(|e| Error::Backend(format!("internal: neighbour buffer shape: {e}")))?;
        let (distances, duplicates) = recompute_distances(env.data, env.queries, neighbors.view())?;
        let returned = |ids: ndarray::ArrayView1<'_, i64>| ids.iter().filter(|&&i| i >= 0).count();
        let mean_rows =
            neighbors.rows().into_iter().map(returned).sum::<usize>() as f64 / q.max(1) as f64;
        // A filtered point is scored against the exact answer among the matching rows, over
        // the k nearest of them, or all of them where fewer than k match.
        let (truth, k_eff, short) = match self.filter_level(env)? {
            Some(level) => {
                check_filter(env.algorithm, env.filters, level, neighbors.view())?;
                let k_eff = k.min(level.truth.distances.ncols());
                let short = neighbors
                    .rows()
                    .into_iter()
                    .filter(|ids| returned(*ids) < k_eff)
                    .count();
                (&level.truth, k_eff, short)
            }
            None => {
                let truth =
                    env.data.ground_truth.as_ref().ok_or_else(|| {
                        Error::Dataset(format!("{}: no ground truth", env.data.name))
                    })?;
                (truth, k, bufs.short)
            }
        };
        let recall_of = |f: fn(_, _, usize) -> Option<f64>| {
            f(truth.distances.view(), distances.view(), k_eff).ok_or_else(|| {
                Error::Dataset(format!(
                    "{}: ground truth is narrower than k={k_eff} or has fewer rows than the \
                     queries",
                    env.data.name
                ))
            })
        };
        let build_run = BuildRun {
            build_seconds: report.seconds,
            index_size_bytes: Some(report.index_size_bytes),
            recall: recall_of(metrics::knn_recall)?,
            epsilon_recall: recall_of(metrics::epsilon_recall)?,
            qps: 0.0,
        };
        // Only the first build's ids and distances are stored; later builds keep their recall.
        let (neighbors, distances) = if self.recalls.is_empty() {
            (neighbors, distances)
        } else {
            (Array2::zeros((0, k)), Array2::zeros((0, k)))
        };
        self.recalls.push(RecallRun {
            neighbors,
            distances,
            duplicates,
            overlong: bufs.overlong,
            short,
            mean_rows,
            build: build_run,
        });
        Ok(())
    }

    /// The filter of this point, if it has a `selectivity` query arg.
    fn filter_level<'e>(
        &self,
        env: &PassEnv<'e>,
    ) -> Result<Option<&'e crate::dataset::filters::Level>> {
        let Some((kind, sel)) = crate::backend::filter::filter_of(&self.query_args) else {
            return Ok(None);
        };
        let f = env.filters.ok_or_else(|| {
            Error::Config(format!(
                "{kind} filter at selectivity {sel}: the sweep has no filter attributes for \
                 '{}'",
                env.data.name
            ))
        })?;
        f.level(kind, sel, &env.data.name).map(Some)
    }

    /// One timed pass (query arguments already applied).
    pub fn timed_pass(
        &mut self,
        env: &PassEnv<'_>,
        searchers: &mut [Box<dyn Searcher>],
        bufs: &mut PassBuffers,
        policy: &Policy,
    ) -> Result<()> {
        let extra = self.passes.iter().filter(|p| p.build == self.build).count() >= policy.runs;
        let kind = if extra {
            PassKind::Extra
        } else {
            PassKind::Timed
        };
        let plan = PassPlan {
            min_time: env.min_time,
            record_ids: false,
        };
        let t = self.pass(env, searchers, bufs, plan, kind)?;
        self.seconds += t.wall_seconds;
        let mut all: Vec<f64> = bufs.latencies.iter().flatten().copied().collect();
        let latency = metrics::summarize_in_place(&mut all);
        if self.times.is_none() {
            self.times = Some(bufs.first_run_latencies(env.queries.nrows()));
        }
        self.passes.push(Pass {
            wall_seconds: t.wall_seconds,
            queries: t.queries,
            client_cpu_seconds: t.client_cpu_seconds,
            build: self.build,
            latency: Some(latency),
            interference: t.interference,
            stalled: false,
            used: true,
            server: t.server,
            round: None,
        });
        assess::mark_stalls(&mut self.passes);
        assess::choose(&mut self.passes, policy.runs);
        Ok(())
    }

    fn pass(
        &self,
        env: &PassEnv<'_>,
        searchers: &mut [Box<dyn Searcher>],
        bufs: &mut PassBuffers,
        plan: PassPlan,
        kind: PassKind,
    ) -> Result<super::measure::PassTiming> {
        if env.progress.cancelled() {
            return Err(Error::Interrupted);
        }
        let clients = &mut searchers[..self.clients];
        let started = Instant::now();
        let t = run_pass(
            clients,
            env.queries,
            env.k,
            plan,
            bufs,
            Observers {
                interference: env.watcher,
                server: env.cost,
            },
            || env.progress.cancelled(),
        )?;
        env.progress.on_event(&Event::PassFinished {
            algorithm: env.algorithm,
            query_args: &self.query_args,
            clients: self.clients,
            kind,
            qps: metrics::qps(t.queries, t.wall_seconds),
            seconds: started.elapsed().as_secs_f64(),
            heavy: t.interference.is_some_and(|i| i.heavy),
        });
        Ok(t)
    }

    /// Whether the current build of this point needs another timed pass.
    /// Mark the pass just measured as one of round `round` of an interleaved run.
    pub fn set_round(&mut self, round: usize) {
        if let Some(p) = self.passes.last_mut() {
            p.round = Some(round);
        }
    }

    pub fn needs_more(&self, policy: &Policy) -> bool {
        !self.failed && assess::needs_more(&self.passes, self.build, policy, self.seconds)
    }

    /// The point's figures, raw data and notices (the run is left empty).
    pub fn finish(&mut self, policy: &Policy) -> Result<Measured> {
        let f = assess::figures(&self.passes);
        let mut recalls = std::mem::take(&mut self.recalls);
        if recalls.is_empty() {
            return Err(Error::Backend(
                "internal: a point finished without a recall pass".into(),
            ));
        }
        let n = recalls.len() as f64;
        let recall = recalls.iter().map(|r| r.build.recall).sum::<f64>() / n;
        let epsilon_recall = recalls.iter().map(|r| r.build.epsilon_recall).sum::<f64>() / n;
        let build_seconds = metrics::interval::median(
            &recalls
                .iter()
                .map(|r| r.build.build_seconds)
                .collect::<Vec<_>>(),
        )
        .unwrap_or(0.0);
        let builds: Vec<BuildRun> = if recalls.len() > 1 {
            recalls
                .iter()
                .zip(&f.build_medians)
                .map(|(r, &qps)| BuildRun {
                    qps,
                    ..r.build.clone()
                })
                .collect()
        } else {
            Vec::new()
        };
        let first = recalls.swap_remove(0);
        let notices = point_notices(
            &self.passes,
            self.clients,
            &f,
            &FirstRun {
                k: first.neighbors.ncols(),
                queries: first.neighbors.nrows(),
                duplicates: first.duplicates,
                overlong: first.overlong,
                short: first.short,
            },
            policy,
        );
        let lat = f.latency.unwrap_or_default();
        let metrics = PointMetrics {
            recall,
            epsilon_recall,
            qps: f.qps,
            qps_ci_low: f.interval.map(|i| i.low),
            qps_ci_high: f.interval.map(|i| i.high),
            qps_ci_level: f.interval.map(|i| i.level),
            qps_best: f.best,
            qps_cv: f.cv,
            passes: f.used,
            qps_passes: self.passes.iter().map(Pass::qps).collect(),
            latency_mean: lat.mean,
            latency_p50: lat.p50,
            latency_p95: lat.p95,
            latency_p99: lat.p99,
            latency_p999: lat.p999,
            short_results: first.short,
            mean_rows: Some(first.mean_rows),
            plan: self.plan.clone(),
            flags: f.flags.clone(),
            builds,
            server: self
                .passes
                .iter()
                .any(|p| p.server.is_some())
                .then(|| ServerCost::from_passes(&self.passes, lat.mean)),
            recall_rule: Some(metrics::KNN_RULE.to_string()),
            interleave: None,
        };
        Ok(Measured {
            neighbors: first.neighbors,
            distances: first.distances,
            latencies: self.times.take().unwrap_or_default(),
            passes: std::mem::take(&mut self.passes),
            metrics,
            notices,
            build_seconds,
        })
    }
}

/// Refuse an answer with a row that fails the filter: the server answered another query.
fn check_filter(
    algorithm: &str,
    filters: Option<&Filters>,
    level: &crate::dataset::filters::Level,
    neighbors: ArrayView2<'_, i64>,
) -> Result<()> {
    let column = filters
        .and_then(|f| f.column(&level.column))
        .unwrap_or_default();
    for (q, ids) in neighbors.rows().into_iter().enumerate() {
        for &id in ids.iter().filter(|&&i| i >= 0) {
            let value = usize::try_from(id)
                .ok()
                .and_then(|i| column.get(i))
                .copied();
            if !value.is_some_and(|v| level.matches(v)) {
                let shown =
                    value.map_or_else(|| "no value (no such row)".into(), |v| v.to_string());
                return Err(Error::Backend(format!(
                    "{}: query {q} with the {} filter at selectivity {} returned row {id}, whose \
                     {} is {shown}: it fails the filter {}",
                    algorithm,
                    level.kind,
                    level.selectivity,
                    level.column,
                    level.condition()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::filters::{FilterKind, generate};

    #[test]
    fn a_row_outside_the_filter_stops_the_point() {
        let ds = crate::dataset::filters::tests::random("t", 500, 2);
        let f = generate(&ds, &["0.1".into()], &FilterKind::ALL, 3).unwrap();
        let level = f.level(FilterKind::Label, "0.1", "t").unwrap();
        let labels = f.column(&level.column).unwrap();
        let inside: Vec<i64> = (0..500i64)
            .filter(|&i| level.matches(labels[i as usize]))
            .take(4)
            .collect();
        let outside = (0..500i64)
            .find(|&i| !level.matches(labels[i as usize]))
            .unwrap();
        let ok = Array2::from_shape_vec((2, 2), inside.clone()).unwrap();
        check_filter("x", Some(&f), level, ok.view()).unwrap();
        let short = Array2::from_shape_vec((2, 2), vec![inside[0], -1, inside[1], -1]).unwrap();
        check_filter("x", Some(&f), level, short.view()).unwrap();
        let bad =
            Array2::from_shape_vec((2, 2), vec![inside[0], inside[1], outside, 7000]).unwrap();
        let e = check_filter("x", Some(&f), level, bad.view())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "query 1 with the label filter at selectivity 0.1 returned row {outside}"
            )) && e.contains(&level.condition()),
            "{e}"
        );
        let gone = Array2::from_shape_vec((1, 2), vec![inside[0], 7000]).unwrap();
        let e = check_filter("x", Some(&f), level, gone.view())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such row"), "{e}");
    }
}
