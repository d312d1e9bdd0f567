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
use crate::Result;
use crate::backend::{BuildReport, Searcher};
use crate::params::Params;

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
/// passes of this build (in rounds, all at the end).
pub(super) fn measure(
    step: &BuildStep<'_>,
    runs: &mut [PointRun],
    searchers: &mut [Box<dyn Searcher>],
    bufs: &mut PassBuffers,
    done: &mut dyn FnMut(&mut PointRun) -> Result<()>,
) -> Result<()> {
    let env = &step.env;
    env.progress.on_event(&Event::MeasureStarted {
        algorithm: env.algorithm,
        build_args: step.build_args,
        points: runs.len(),
        passes: runs.len() * (step.policy.runs + 1),
    });
    let mut current: Option<usize> = None;
    let mut select = |i: usize, run: &PointRun, s: &mut [Box<dyn Searcher>]| -> Result<()> {
        if current != Some(i) {
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
            for (i, run) in runs.iter_mut().enumerate() {
                select(i, run, searchers)?;
                start(run);
                run.recall_pass(env, searchers, bufs, step.build, step.report)?;
            }
            loop {
                let needy: Vec<usize> = (0..runs.len())
                    .filter(|&i| runs[i].needs_more(&step.policy))
                    .collect();
                if needy.is_empty() {
                    break;
                }
                for i in needy {
                    select(i, &runs[i], searchers)?;
                    runs[i].timed_pass(env, searchers, bufs, &step.policy)?;
                }
            }
            for run in runs.iter_mut() {
                done(run)?;
            }
        }
        PassOrder::Points => {
            for (i, run) in runs.iter_mut().enumerate() {
                select(i, run, searchers)?;
                start(run);
                run.recall_pass(env, searchers, bufs, step.build, step.report)?;
                while run.needs_more(&step.policy) {
                    run.timed_pass(env, searchers, bufs, &step.policy)?;
                }
                done(run)?;
            }
        }
    }
    Ok(())
}
