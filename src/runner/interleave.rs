//! Several servers of one database in one sweep (`--postgres a=URL --postgres b=URL`), their
//! passes interleaved: each server gets the same table and every build point, builds run one
//! server at a time, and then in every round each point's timed pass runs on every server back
//! to back, in a seeded order that changes from round to round. The machine's slow drift (CPU
//! clock, background jobs, caches) then hits both sides of a round alike and cancels in their
//! ratio, which `annbench compare` takes round by round ([`crate::results::Interleave`]).
//!
//! A point missing on one server is measured again on all of them, so that every stored point
//! of a server has partners of the same run on the others.

use super::SweepSummary;
use super::build::{self, BuildCost, Prepared, Searchers, Todo};
use super::ctx::Ctx;
use super::measure::PassBuffers;
use super::point::PointRun;
use super::progress::Event;
use super::schedule::BuildStep;
use crate::backend::Backend;
use crate::config::BuildPoint;
use crate::dataset::rng::Rng;
use crate::results::Interleave;
use crate::{Error, Result};

/// The servers of one algorithm's interleaved run, and the run's identity.
pub(super) struct Together {
    interleave: Interleave,
}

impl Together {
    /// A new run over the servers of `ctxs` (their labels), with a fresh id and seed.
    pub(super) fn new(ctxs: &[Ctx<'_>]) -> Together {
        let seed = fresh_seed();
        Together {
            interleave: Interleave {
                run: format!("{}-{:08x}", crate::results::env::now_rfc3339(), seed as u32),
                servers: ctxs
                    .iter()
                    .map(|c| c.label.clone().unwrap_or_default())
                    .collect(),
                seed,
            },
        }
    }

    /// One build point on every server: skipped when every server has all its points, else
    /// built on each in turn (`--rebuilds` times) and measured interleaved.
    pub(super) fn run_build(
        &self,
        ctxs: &[Ctx<'_>],
        backends: &mut [Box<dyn Backend>],
        build: &BuildPoint,
        summary: &mut SweepSummary,
    ) -> Result<()> {
        let mut todos = Vec::with_capacity(ctxs.len());
        for ctx in ctxs {
            todos.push(build::todo_of(ctx, build, summary)?);
        }
        align(&mut todos);
        if todos.iter().flatten().all(|t| t.stored.is_some()) {
            ctxs[0].progress.on_event(&Event::BuildSkipped {
                algorithm: ctxs[0].algorithm,
                build_args: &build.build_args,
            });
        } else if let Err(e) = self.measure_builds(ctxs, backends, build, &todos, summary) {
            let f = ctxs[0].failure(&build.build_args, None, None);
            ctxs[0].fail(summary, f, e)?;
        }
        for (ctx, todo) in ctxs.iter().zip(todos) {
            build::report_stored(ctx, todo, summary);
        }
        Ok(())
    }

    fn measure_builds(
        &self,
        ctxs: &[Ctx<'_>],
        backends: &mut [Box<dyn Backend>],
        build: &BuildPoint,
        todos: &[Vec<Todo<'_>>],
        summary: &mut SweepSummary,
    ) -> Result<()> {
        let opts = ctxs[0].opts;
        let missing: Vec<Vec<&Todo<'_>>> = todos
            .iter()
            .map(|t| t.iter().filter(|t| t.stored.is_none()).collect())
            .collect();
        // The same points, in the same order, on every server (index i is one point).
        let mut keys: Vec<(&crate::params::Params, usize)> = Vec::new();
        for t in missing.iter().flatten() {
            if !keys.contains(&(t.query_args, t.clients)) {
                keys.push((t.query_args, t.clients));
            }
        }
        let mut runs: Vec<Vec<PointRun>> = missing
            .iter()
            .map(|m| {
                keys.iter()
                    .map(|&(q, c)| {
                        let mut run = PointRun::new(q.clone(), c);
                        // Its lookup failed on this server (recorded): not measured there.
                        run.failed = !m.iter().any(|t| t.query_args == q && t.clients == c);
                        run
                    })
                    .collect()
            })
            .collect();
        let mut bufs = PassBuffers::new(
            ctxs[0].queries.nrows(),
            opts.count,
            build::max_clients(opts),
        );
        let mut costs: Vec<BuildCost> = ctxs.iter().map(BuildCost::find).collect();
        // Each server's recall of each point on the last build, for the check after a restart.
        let mut warm: Vec<Vec<_>> = vec![Vec::new(); ctxs.len()];
        for b in 0..opts.rebuilds {
            // One server's build at a time: a build is never measured beside another.
            let mut ready: Vec<(Prepared, Searchers)> = Vec::with_capacity(ctxs.len());
            for (l, ctx) in ctxs.iter().enumerate() {
                let r = build::prepare(
                    ctx,
                    backends[l].as_mut(),
                    build,
                    &mut runs[l],
                    &mut costs[l],
                    summary,
                )
                .map_err(|e| ctx.on_server(e))?;
                ready.push(r);
            }
            let (prepared, mut searchers): (Vec<Prepared>, Vec<Searchers>) =
                ready.into_iter().unzip();
            let steps: Vec<BuildStep<'_>> = prepared
                .iter()
                .zip(ctxs)
                .map(|(p, ctx)| p.step(ctx, build, b))
                .collect();
            let last = b + 1 == opts.rebuilds;
            let mut done = |l: usize, run: &mut PointRun, failed: Option<Error>| -> Result<()> {
                let ctx = &ctxs[l];
                backends[l].check_index().map_err(|e| ctx.on_server(e))?;
                if let Some(e) = failed {
                    let f =
                        ctx.failure(&build.build_args, Some(&run.query_args), Some(run.clients));
                    return ctx.fail(summary, f, ctx.on_server(e));
                }
                if !last {
                    return Ok(());
                }
                let point = build::finish(
                    ctx,
                    build,
                    run,
                    &prepared[l].probe,
                    &costs[l],
                    Some(&self.interleave),
                )?;
                warm[l].push((run.query_args.clone(), run.clients, point.metrics.recall));
                let todo = build::find_todo(&missing[l], run)?;
                build::store_point(ctx, &costs[l].first_report, point, todo, summary)
            };
            let order = Order {
                seed: self.interleave.seed,
                build: b,
            };
            measure(
                &steps,
                &order,
                &mut runs,
                &mut searchers,
                &mut bufs,
                &mut done,
            )?;
        }
        if opts.restart {
            // One server at a time: each cold series runs with the others idle.
            for (l, ctx) in ctxs.iter().enumerate() {
                super::build::restart::cold_series(
                    ctx,
                    backends[l].as_mut(),
                    build,
                    &costs[l].first_report,
                    &missing[l],
                    &warm[l],
                    summary,
                )
                .map_err(|e| ctx.on_server(e))?;
            }
        }
        Ok(())
    }
}

/// Every server measures the same points: a point stored on one server but missing on another,
/// or stored from another interleaved run (other partners), is measured again on all, so each
/// stored point has its partners in the same run.
fn align(todos: &mut [Vec<Todo<'_>>]) {
    let run_of = |q: &crate::params::Params, c: usize, lane: &[Todo<'_>]| {
        lane.iter()
            .find(|t| t.query_args == q && t.clients == c)
            .and_then(|t| t.stored.as_ref())
            .map(|p| p.metrics.interleave.as_ref().map(|i| i.run.clone()))
    };
    let mut again = Vec::new();
    for t in todos.iter().flatten() {
        let runs: Vec<_> = todos
            .iter()
            .map(|lane| run_of(t.query_args, t.clients, lane))
            .collect();
        // Stored on every server, all from one interleaved run.
        let together = runs.iter().all(|r| matches!(r, Some(Some(_))))
            && runs.windows(2).all(|w| w[0] == w[1]);
        if !together {
            again.push((t.query_args, t.clients));
        }
    }
    for t in todos.iter_mut().flatten() {
        if again.contains(&(t.query_args, t.clients)) {
            t.stored = None;
        }
    }
}

/// Called with each server's point once measured (or failed): server index, run, error.
type Done<'d> = dyn FnMut(usize, &mut PointRun, Option<Error>) -> Result<()> + 'd;

/// The seeded order of the servers within each round.
struct Order {
    seed: u64,
    build: usize,
}

impl Order {
    /// The servers' order for point `point` in round `round`: a permutation of `0..n` drawn
    /// from the seed, the build, the round and the point (Fisher-Yates).
    fn of(&self, round: usize, point: usize, n: usize) -> Vec<usize> {
        let mix = self.seed
            ^ (self.build as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (round as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (point as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        let mut rng = Rng::new(mix);
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, rng.below(i + 1));
        }
        order
    }
}

/// Measure every point of one build on every server: all recall passes first, then rounds; in
/// a round, each point that any server still needs passes for runs on every server, back to
/// back, in [`Order`]'s order (so a server may run past its own `--max-time` to partner
/// another's extra pass). `runs[l]`, `searchers[l]` and `steps[l]` are server `l`'s.
fn measure(
    steps: &[BuildStep<'_>],
    order: &Order,
    runs: &mut [Vec<PointRun>],
    searchers: &mut [Searchers],
    bufs: &mut PassBuffers,
    done: &mut Done<'_>,
) -> Result<()> {
    let lanes = steps.len();
    let env0 = &steps[0].env;
    let live = |runs: &[Vec<PointRun>]| runs.iter().flatten().filter(|r| !r.failed).count();
    env0.progress.on_event(&Event::MeasureStarted {
        algorithm: env0.algorithm,
        build_args: steps[0].build_args,
        points: live(runs),
        passes: live(runs) * (steps[0].policy.runs + 1),
    });
    let points = runs.first().map_or(0, Vec::len);
    // The query args the searchers of each server are set to.
    let mut current: Vec<Option<usize>> = vec![None; lanes];
    let mut select = |l: usize, i: usize, run: &PointRun, s: &mut Searchers| -> Result<()> {
        if current[l] != Some(i) {
            current[l] = None;
            run.apply_args(s)?;
            current[l] = Some(i);
        }
        Ok(())
    };
    // `i` is the point, the same index in every server's runs.
    #[allow(clippy::needless_range_loop)]
    for i in 0..points {
        for l in order.of(0, i, lanes) {
            let (step, run) = (&steps[l], &mut runs[l][i]);
            if run.failed {
                continue;
            }
            let r = select(l, i, run, &mut searchers[l]).and_then(|()| {
                step.env.progress.on_event(&Event::PointStarted {
                    algorithm: step.env.algorithm,
                    build_args: step.build_args,
                    query_args: &run.query_args,
                    clients: run.clients,
                    queries: step.env.queries.nrows(),
                    runs: step.policy.runs,
                });
                run.recall_pass(&step.env, &mut searchers[l], bufs, step.build, step.report)
            });
            settle(l, run, r, done)?;
        }
    }
    for round in 0.. {
        let needy: Vec<usize> = (0..points)
            .filter(|&i| (0..lanes).any(|l| runs[l][i].needs_more(&steps[l].policy)))
            .collect();
        if needy.is_empty() {
            break;
        }
        for i in needy {
            for l in order.of(round + 1, i, lanes) {
                let (step, run) = (&steps[l], &mut runs[l][i]);
                if run.failed {
                    continue;
                }
                let r = select(l, i, run, &mut searchers[l]).and_then(|()| {
                    run.timed_pass(&step.env, &mut searchers[l], bufs, &step.policy)?;
                    run.set_round(round);
                    Ok(())
                });
                settle(l, run, r, done)?;
            }
        }
    }
    for (l, lane) in runs.iter_mut().enumerate() {
        for run in lane.iter_mut().filter(|r| !r.failed) {
            let r = done(l, run, None);
            settle(l, run, r, done)?;
        }
    }
    Ok(())
}

/// A point's step on server `l` went wrong: hand the error to `done` and skip the point there
/// from here on (the other servers go on, their passes then unpaired for it).
fn settle(l: usize, run: &mut PointRun, r: Result<()>, done: &mut Done<'_>) -> Result<()> {
    if let Err(e) = r {
        run.failed = true;
        done(l, run, Some(e))?;
    }
    Ok(())
}

/// A seed from the clock and the process id: each interleaved run orders its passes anew.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::new(nanos ^ (u64::from(std::process::id()) << 32));
    rng.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(run: &str) -> Option<crate::results::PointResult> {
        let mut p = crate::report::testutil::point("mariadb", &[], &[], 0.9, 100.0);
        p.metrics.interleave = Some(Interleave {
            run: run.into(),
            servers: vec!["a".into(), "b".into()],
            seed: 1,
        });
        Some(p)
    }

    #[test]
    fn points_stored_on_every_server_by_one_run_are_kept_and_the_others_measured_again() {
        let (q1, q2, q3) = (
            crate::report::testutil::params(&[("ef_search", 10)]),
            crate::report::testutil::params(&[("ef_search", 20)]),
            crate::report::testutil::params(&[("ef_search", 40)]),
        );
        let todo = |q, p| Todo {
            query_args: q,
            clients: 1,
            path: "p.hdf5".into(),
            stored: p,
            supersedes: None,
        };
        let mut todos = vec![
            vec![
                todo(&q1, stored("r1")),
                todo(&q2, stored("r1")),
                todo(&q3, stored("r1")),
            ],
            // q2: missing here; q3: stored by another run (other partners).
            vec![
                todo(&q1, stored("r1")),
                todo(&q2, None),
                todo(&q3, stored("r2")),
            ],
        ];
        align(&mut todos);
        let kept: Vec<Vec<bool>> = todos
            .iter()
            .map(|lane| lane.iter().map(|t| t.stored.is_some()).collect())
            .collect();
        assert_eq!(
            kept,
            vec![vec![true, false, false], vec![true, false, false]]
        );
    }

    #[test]
    fn the_order_is_a_permutation_that_changes_from_round_to_round() {
        let order = Order { seed: 42, build: 0 };
        let mut firsts = [0usize; 2];
        for round in 0..200 {
            let o = order.of(round, 3, 2);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![0, 1]);
            firsts[o[0]] += 1;
        }
        // Each server goes first in some rounds (a fixed A-then-B order would bias the pairs).
        assert!(firsts.iter().all(|&n| n > 50), "{firsts:?}");
        assert_eq!(order.of(5, 1, 3), Order { seed: 42, build: 0 }.of(5, 1, 3));
    }
}
