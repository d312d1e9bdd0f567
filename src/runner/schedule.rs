//! The order of the passes of one build. By default in rounds: every point's recall pass
//! first, then pass 1 of every point, pass 2 of every point, and so on, so slow drift of the
//! machine (thermal, background jobs, caches) affects all points alike instead of the last
//! ones. Extra passes (a `--target-ci` not met, a flagged point) follow in rounds among the
//! points that need them. With `--order points` each point is finished before the next
//! starts, so a killed sweep keeps every point measured before it.

use super::assess::Policy;
use super::measure::PassBuffers;
use super::point::{PassEnv, PointRun};
use super::progress::Event;
use crate::backend::{BuildReport, Searcher};
use crate::params::Params;
use crate::{Error, Result};

/// How the passes of a build's points are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PassOrder {
    /// Pass 1 of every point, then pass 2 of every point... (the default).
    #[default]
    Rounds,
    /// Every pass of a point before the next point.
    Points,
}

impl std::str::FromStr for PassOrder {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "rounds" => Ok(PassOrder::Rounds),
            "points" => Ok(PassOrder::Points),
            other => Err(crate::Error::Config(format!(
                "unknown pass order '{other}': expected rounds or points"
            ))),
        }
    }
}

/// One build of the points in `runs`.
pub(super) struct BuildStep<'a> {
    pub env: PassEnv<'a>,
    pub policy: Policy,
    pub order: PassOrder,
    pub build_args: &'a Params,
    /// Build number (0..`--rebuilds`) and its report.
    pub build: usize,
    pub report: &'a BuildReport,
}

/// Measure every point of `runs` on this build; `done` gets each point once it has all its
/// passes of this build (in rounds, all at the end) with `None`, or once it fails with the
/// error (then it is marked failed and skipped from here on, if `done` returns `Ok`: the
/// caller records it under `--keep-going`). An error `done` returns stops the build.
pub(super) fn measure(
    step: &BuildStep<'_>,
    runs: &mut [PointRun],
    searchers: &mut [Box<dyn Searcher>],
    bufs: &mut PassBuffers,
    done: &mut dyn FnMut(&mut PointRun, Option<Error>) -> Result<()>,
) -> Result<()> {
    let env = &step.env;
    env.progress.on_event(&Event::MeasureStarted {
        algorithm: env.algorithm,
        build_args: step.build_args,
        points: runs.iter().filter(|r| !r.failed).count(),
        passes: runs.iter().filter(|r| !r.failed).count() * (step.policy.runs + 1),
    });
    let mut current: Option<usize> = None;
    let mut select = |i: usize, run: &PointRun, s: &mut [Box<dyn Searcher>]| -> Result<()> {
        if current != Some(i) {
            current = None;
            run.apply_args(s)?;
            current = Some(i);
        }
        Ok(())
    };
    let start = |run: &PointRun| {
        env.progress.on_event(&Event::PointStarted {
            algorithm: env.algorithm,
            build_args: step.build_args,
            query_args: &run.query_args,
            clients: run.clients,
            queries: env.queries.nrows(),
            runs: step.policy.runs,
        })
    };
    match step.order {
        PassOrder::Rounds => {
            for (i, run) in runs.iter_mut().enumerate().filter(|(_, r)| !r.failed) {
                let r = select(i, run, searchers).and_then(|()| {
                    start(run);
                    run.recall_pass(env, searchers, bufs, step.build, step.report)
                });
                settle(run, r, done)?;
            }
            loop {
                let needy: Vec<usize> = (0..runs.len())
                    .filter(|&i| runs[i].needs_more(&step.policy))
                    .collect();
                if needy.is_empty() {
                    break;
                }
                for i in needy {
                    let run = &mut runs[i];
                    let r = select(i, run, searchers)
                        .and_then(|()| run.timed_pass(env, searchers, bufs, &step.policy));
                    settle(run, r, done)?;
                }
            }
            for run in runs.iter_mut().filter(|r| !r.failed) {
                let r = done(run, None);
                settle(run, r, done)?;
            }
        }
        PassOrder::Points => {
            for (i, run) in runs.iter_mut().enumerate().filter(|(_, r)| !r.failed) {
                let r = select(i, run, searchers).and_then(|()| {
                    start(run);
                    run.recall_pass(env, searchers, bufs, step.build, step.report)?;
                    while run.needs_more(&step.policy) {
                        run.timed_pass(env, searchers, bufs, &step.policy)?;
                    }
                    done(run, None)
                });
                settle(run, r, done)?;
            }
        }
    }
    Ok(())
}

/// A point's step went wrong: hand the error to `done` (which records it, or returns it to
/// stop the sweep) and skip the point from here on.
fn settle(
    run: &mut PointRun,
    r: Result<()>,
    done: &mut dyn FnMut(&mut PointRun, Option<Error>) -> Result<()>,
) -> Result<()> {
    if let Err(e) = r {
        run.failed = true;
        done(run, Some(e))?;
    }
    Ok(())
}
