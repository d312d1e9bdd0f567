//! One build point of a sweep: skip it when every point is stored for this data, else build
//! the index (`--rebuilds` times), verify the plan, measure each missing (query point x client
//! count) on every build, and store each point after its last build. With `--keep-going` a
//! failing build or point is recorded and the sweep goes on.

pub(super) mod memory;
pub(super) mod restart;

use super::ctx::{Ctx, warn};
use super::interference::Watcher;
use super::measure::PassBuffers;
use super::point::{Measured, PassEnv, PointRun};
use super::progress::{Event, Progress};
use super::schedule::{self, BuildStep};
use super::server_cost::{Probe, WholeServer};
use super::stored::{self, Stored};
use super::{SweepPoint, SweepSummary};
use crate::backend::{Backend, BuildReport, BuildStatus, BuildWatch};
use crate::config::BuildPoint;
use crate::params::Params;
use crate::results::{self, PointKey, PointResult};
use crate::{Error, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A point of this build still to measure, or stored.
pub(super) struct Todo<'a> {
    pub(super) query_args: &'a Params,
    pub(super) clients: usize,
    pub(super) path: PathBuf,
    pub(super) stored: Option<PointResult>,
    pub(super) supersedes: Option<PathBuf>,
}

/// One build point: skip it when all its points are stored, else build, verify the plan and
/// measure every (query point x clients) that is missing (or all with `force`). An error of
/// the build fails all of its points; with `keep_going` it is recorded and `Ok` returned.
pub(super) fn run_build(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    summary: &mut SweepSummary,
) -> Result<()> {
    let todo = todo_of(ctx, build, summary)?;
    let all_stored = match todo.iter().all(|t| t.stored.is_some()) {
        true => memory_stored(ctx, build)?,
        false => None,
    };
    if let Some(series) = all_stored {
        ctx.progress.on_event(&Event::BuildSkipped {
            algorithm: ctx.algorithm,
            build_args: &build.build_args,
        });
        report_stored(ctx, todo, summary);
        // The share series are the sweep's points too (its table, --expect).
        for (series_ctx, todo) in series {
            report_stored(&series_ctx, todo, summary);
        }
        return Ok(());
    }
    if let Err(e) = measure_builds(ctx, backend, build, &todo, summary) {
        // Nothing of this build is measured from here on: its missing points failed.
        let f = ctx.failure(&build.build_args, None, None);
        ctx.fail(summary, f, e)?;
    }
    report_stored(ctx, todo, summary);
    Ok(())
}

/// The points of this build (query point x clients), each stored or to measure; a point whose
/// lookup fails is recorded as failed (with `--keep-going`) and left out.
pub(super) fn todo_of<'b>(
    ctx: &Ctx<'_>,
    build: &'b BuildPoint,
    summary: &mut SweepSummary,
) -> Result<Vec<Todo<'b>>> {
    let opts = ctx.opts;
    let mut todo = Vec::new();
    let mut whys = Vec::new();
    for query_args in &build.query_args {
        for &clients in &opts.clients {
            let key = PointKey::new(
                &ctx.data.name,
                opts.count,
                ctx.algorithm,
                &build.build_args,
                query_args,
                clients,
                ctx.label.as_deref(),
            );
            let found = results::point_path(&opts.results_dir, &key)
                .and_then(|path| Ok((stored::lookup(ctx, summary, &key, &path)?, path)));
            let (found, path) = match found {
                Ok(f) => f,
                Err(e) => {
                    let f = ctx.failure(&build.build_args, Some(query_args), Some(clients));
                    ctx.fail(summary, f, e)?;
                    continue;
                }
            };
            let (stored, supersedes) = match found {
                Stored::Reuse(p) => (Some(*p), None),
                Stored::Measure { supersedes, why } => {
                    whys.extend(why);
                    (None, supersedes)
                }
            };
            todo.push(Todo {
                query_args,
                clients,
                path,
                stored,
                supersedes,
            });
        }
    }
    let described = crate::params::describe(&build.build_args);
    stored::explain(ctx, summary, &described, &whys);
    Ok(todo)
}

/// The `--memory` series of this build with their stored points when every one is stored
/// (none without `--memory`); `None` when one is missing.
#[allow(clippy::type_complexity)]
fn memory_stored<'a, 'b>(
    ctx: &Ctx<'a>,
    build: &'b BuildPoint,
) -> Result<Option<Vec<(Ctx<'a>, Vec<Todo<'b>>)>>> {
    let mut out = Vec::new();
    for label in memory::series_labels(ctx) {
        let series = Ctx {
            label: Some(label),
            ..ctx.clone()
        };
        // A lookup's notes and failures are the sweep's to report, when it measures them.
        let quiet = &mut SweepSummary::default();
        let todo = todo_of(&series, build, quiet)?;
        memory::check_stored(&todo)?;
        if todo.iter().any(|t| t.stored.is_none()) {
            return Ok(None);
        }
        out.push((series, todo));
    }
    Ok(Some(out))
}

/// Report the stored points of `todo` as skipped, in the summary too.
pub(super) fn report_stored(ctx: &Ctx<'_>, todo: Vec<Todo<'_>>, summary: &mut SweepSummary) {
    for t in todo {
        if let Some(point) = t.stored {
            ctx.progress.on_event(&Event::PointSkipped {
                point: &point,
                path: &t.path,
            });
            summary.points.push(SweepPoint {
                path: t.path,
                skipped: true,
                result: point,
            });
        }
    }
}

/// The server memory the build needs, from the backend's plan: sent as an event; a shortfall
/// is a warning (returned, to be recorded with the points), or an error before building when
/// annbench would refuse the built index anyway.
fn plan_memory(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    summary: &mut SweepSummary,
) -> Result<Option<String>> {
    let rows = ctx.data.train.nrows();
    let Some(plan) = backend.memory_plan(rows, ctx.data.dimension(), &build.build_args)? else {
        return Ok(None);
    };
    ctx.progress.on_event(&Event::MemoryPlanned { plan: &plan });
    if !ctx.opts.memory.is_empty() {
        if let Some(d) = crate::backend::algorithm(ctx.algorithm).and_then(|a| a.database) {
            memory::plan_shares(ctx, d.kind, plan.need_bytes, summary);
        }
    }
    if plan.fits() {
        return Ok(None);
    }
    let text = format!("memory plan: {}", plan.describe());
    if plan.enforced && plan.clearly_short() {
        return Err(Error::Backend(format!("{text} (refused before building)")));
    }
    warn(ctx.progress, summary, text.clone());
    Ok(Some(text))
}

/// `mariadb(m=16, ef_search=40) x2 clients`, for messages.
pub fn point_label(p: &PointResult) -> String {
    let args: Vec<String> = [&p.build_args, &p.query_args]
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| crate::params::describe(a))
        .collect();
    format!(
        "{}({}) x{} clients",
        p.algorithm,
        args.join(", "),
        p.clients
    )
}

/// Build the index `--rebuilds` times, measure every point of `todo` not stored on each build,
/// and store each point once its last build is measured. Errors of one point go to `ctx.fail`
/// (recorded with `keep_going`); an error returned is the build's own.
fn measure_builds(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    todo: &[Todo<'_>],
    summary: &mut SweepSummary,
) -> Result<()> {
    let opts = ctx.opts;
    let missing: Vec<&Todo<'_>> = todo.iter().filter(|t| t.stored.is_none()).collect();
    let mut runs: Vec<PointRun> = missing
        .iter()
        .map(|t| PointRun::new(t.query_args.clone(), t.clients))
        .collect();
    let mut bufs = PassBuffers::new(ctx.queries.nrows(), opts.count, max_clients(opts));
    let mut cost = BuildCost::find(ctx);
    // Each point's recall on the last build, for the check after a restart.
    let mut warm = Vec::new();
    for b in 0..opts.rebuilds {
        let (ready, mut searchers) = prepare(ctx, backend, build, &mut runs, &mut cost, summary)?;
        let step = ready.step(ctx, build, b);
        let last = b + 1 == opts.rebuilds;
        let mut done = |run: &mut PointRun, failed: Option<Error>| -> Result<()> {
            // Passes measured on another session's index, or on none, are never stored: the
            // build is abandoned ([`Backend::check_index`]).
            backend.check_index()?;
            if let Some(e) = failed {
                let f = ctx.failure(&build.build_args, Some(&run.query_args), Some(run.clients));
                return ctx.fail(summary, f, e);
            }
            if !last {
                return Ok(());
            }
            let point = finish(ctx, build, run, &ready.probe, &cost, None)?;
            warm.push((run.query_args.clone(), run.clients, point.metrics.recall));
            store_point(
                ctx,
                &cost.first_report,
                point,
                find_todo(&missing, run)?,
                summary,
            )
        };
        schedule::measure(&step, &mut runs, &mut searchers, &mut bufs, &mut done)?;
    }
    if opts.restart {
        restart::cold_series(
            ctx,
            backend,
            build,
            &cost.first_report,
            &missing,
            &warm,
            summary,
        )?;
    }
    if !opts.memory.is_empty() {
        memory::sweep(ctx, backend, build, &cost.first_report, &warm, summary)?;
    }
    Ok(())
}

/// The most clients of any point.
pub(super) fn max_clients(opts: &super::SweepOptions) -> usize {
    opts.clients.iter().copied().max().unwrap_or(1)
}

/// The todo entry of a measured point.
pub(super) fn find_todo<'t>(missing: &[&'t Todo<'t>], run: &PointRun) -> Result<&'t Todo<'t>> {
    missing
        .iter()
        .copied()
        .find(|t| *t.query_args == run.query_args && t.clients == run.clients)
        .ok_or_else(|| Error::Backend("internal: a measured point not in the todo".into()))
}

/// What a build point's server spent on its first build, recorded with every point, and that
/// build's report.
pub(super) struct BuildCost {
    server: Option<WholeServer>,
    /// Server CPU seconds of the first build and the server's memory after it.
    spent: Option<(Option<f64>, Option<u64>)>,
    pub(super) first_report: BuildReport,
}

impl BuildCost {
    /// The local server of this context's algorithm (on its lane's port), if visible.
    pub(super) fn find(ctx: &Ctx<'_>) -> BuildCost {
        let server = crate::backend::algorithm(ctx.algorithm)
            .and_then(|a| a.database)
            .and_then(|d| WholeServer::find_at(d.kind, ctx.port()));
        BuildCost {
            server,
            spent: None,
            first_report: BuildReport::default(),
        }
    }
}

/// One build of a build point, ready to measure: its report and how the server's cost and the
/// machine's interference are read (its query connections are returned beside it).
pub(super) struct Prepared {
    pub(super) report: BuildReport,
    pub(super) probe: Probe,
    watcher: Option<Watcher>,
}

/// The query connections of one build, one per client.
pub(super) type Searchers = Vec<Box<dyn crate::backend::Searcher>>;

impl Prepared {
    /// The schedule's view of this build.
    pub(super) fn step<'s>(
        &'s self,
        ctx: &'s Ctx<'_>,
        build: &'s BuildPoint,
        b: usize,
    ) -> BuildStep<'s> {
        let opts = ctx.opts;
        BuildStep {
            env: PassEnv {
                data: ctx.data,
                queries: ctx.queries.view(),
                k: opts.count,
                min_time: opts.min_time,
                progress: ctx.progress,
                algorithm: ctx.algorithm,
                watcher: self.watcher.as_ref(),
                filters: ctx.filters,
                cost: self.probe.measures().then_some(&self.probe),
            },
            policy: opts.policy(),
            order: opts.order,
            build_args: &build.build_args,
            build: b,
            report: &self.report,
        }
    }
}

/// Build the index once (cancellable; its server CPU into `cost` on the first build), verify
/// every point's plan on it and open the query connections.
pub(super) fn prepare(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    runs: &mut [PointRun],
    cost: &mut BuildCost,
    summary: &mut SweepSummary,
) -> Result<(Prepared, Searchers)> {
    if ctx.progress.cancelled() {
        return Err(Error::Interrupted);
    }
    let before = cost.server.as_ref().map(WholeServer::sample);
    let report = build_index(ctx, backend, build, summary)?;
    if cost.spent.is_none() {
        let cpu = cost
            .server
            .as_ref()
            .zip(before)
            .map(|(s, a)| s.cpu_seconds(&a, &s.sample()));
        let memory = cost.server.as_ref().and_then(WholeServer::resident_bytes);
        cost.spent = Some((cpu, memory));
        cost.first_report = report.clone();
    }
    connect(ctx, backend, report, runs, summary)
}

/// Verify every point's plan on the index just built (or reconnected to) and open the query
/// connections, with how their server cost is read.
pub(super) fn connect(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    report: BuildReport,
    runs: &mut [PointRun],
    summary: &mut SweepSummary,
) -> Result<(Prepared, Searchers)> {
    let opts = ctx.opts;
    // The plan of every point, as EXPLAIN shows it on this build (a filter can change it
    // from one selectivity to the next); a plan with no usable index fails the build.
    let first_query = ctx.queries.row(0).to_vec();
    for run in runs.iter_mut() {
        let plan = backend.verify_index_used(&first_query, opts.count, &run.query_args)?;
        run.plan = Some(plan);
    }
    let mut searchers = (0..max_clients(opts))
        .map(|_| backend.searcher())
        .collect::<Result<Vec<_>>>()?;
    let probe = Probe::discover_at(&mut searchers, ctx.port());
    for note in &probe.notes() {
        let text = format!("{}: server cost: {note}", ctx.algorithm);
        if !summary.warnings.contains(&text) {
            warn(ctx.progress, summary, text);
        }
    }
    let ready = Prepared {
        report,
        probe,
        watcher: opts.watch_interference.then(Watcher::discover),
    };
    Ok((ready, searchers))
}

/// A point measured on every build, as a result: its figures, server cost and build.
pub(super) fn finish(
    ctx: &Ctx<'_>,
    build: &BuildPoint,
    run: &mut PointRun,
    probe: &Probe,
    cost: &BuildCost,
    interleave: Option<&crate::results::Interleave>,
) -> Result<PointResult> {
    let mut m = run.finish(&ctx.opts.policy())?;
    if probe.measures() || !probe.notes().is_empty() {
        let mut server = probe.annotate(m.metrics.server.take().unwrap_or_default());
        (server.build_cpu_seconds, server.memory_after_build_bytes) =
            cost.spent.unwrap_or_default();
        server.memory_after_passes_bytes =
            cost.server.as_ref().and_then(WholeServer::resident_bytes);
        m.metrics.server = Some(server);
    }
    m.metrics.interleave = interleave.cloned();
    Ok(assemble(ctx, &build.build_args, &cost.first_report, run, m))
}

/// Build the index once (cancellable), report it and check the plan uses it.
pub(super) fn build_index(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    summary: &mut SweepSummary,
) -> Result<BuildReport> {
    let plan_note = plan_memory(ctx, backend, build, summary)?;
    ctx.progress.on_event(&Event::BuildStarted {
        algorithm: ctx.algorithm,
        build_args: &build.build_args,
    });
    let mut report = build_polling_cancel(backend, ctx.algorithm, &build.build_args, ctx.progress)?;
    ctx.progress.on_event(&Event::BuildFinished {
        algorithm: ctx.algorithm,
        build_args: &build.build_args,
        report: &report,
    });
    for n in &report.notices {
        warn(
            ctx.progress,
            summary,
            format!(
                "{} build {}: {n}",
                ctx.algorithm,
                crate::params::describe(&build.build_args)
            ),
        );
    }
    // Recorded with every point of this build (it was shown as a warning already).
    if let Some(note) = plan_note {
        report.notices.insert(0, note);
    }
    Ok(report)
}

/// Write a measured point (removing the file it supersedes), warn about its notices, report
/// it.
pub(super) fn store_point(
    ctx: &Ctx<'_>,
    build: &BuildReport,
    point: PointResult,
    todo: &Todo<'_>,
    summary: &mut SweepSummary,
) -> Result<()> {
    let written = results::write_point(&ctx.opts.results_dir, &point)?;
    debug_assert_eq!(written, todo.path);
    if let Some(old) = &todo.supersedes {
        if let Err(e) = std::fs::remove_file(old) {
            warn(
                ctx.progress,
                summary,
                format!(
                    "cannot remove {}, now replaced by {}: {e}",
                    old.display(),
                    written.display()
                ),
            );
        }
    }
    for n in &point.environment.notices {
        if !build.notices.contains(n) && !super::notices::is_noise(n) {
            warn(
                ctx.progress,
                summary,
                format!("{}: {n}", point_label(&point)),
            );
        }
    }
    ctx.progress.on_event(&Event::PointFinished {
        point: &point,
        path: &written,
    });
    summary.points.push(SweepPoint {
        path: written,
        skipped: false,
        result: point,
    });
    Ok(())
}

fn assemble(
    ctx: &Ctx<'_>,
    build_args: &Params,
    build: &BuildReport,
    run: &PointRun,
    m: Measured,
) -> PointResult {
    let opts = ctx.opts;
    let mut notices = build.notices.clone();
    notices.extend(m.notices);
    PointResult {
        dataset: ctx.data.name.clone(),
        distance: ctx.data.metric,
        count: opts.count,
        algorithm: ctx.algorithm.to_string(),
        build_args: build_args.clone(),
        query_args: run.query_args.clone(),
        clients: run.clients,
        label: ctx.label.clone(),
        dataset_fingerprint: Some(ctx.fingerprint_for(&run.query_args)),
        load_seconds: Some(ctx.load.seconds),
        build_seconds: m.build_seconds,
        index_size_bytes: Some(build.index_size_bytes),
        table_size_bytes: ctx.load.table_size_bytes,
        build_phases: build.phases.clone(),
        neighbors: m.neighbors,
        distances: m.distances,
        latencies: m.latencies,
        passes: m.passes,
        metrics: m.metrics,
        environment: ctx.host.environment(&ctx.server, notices),
    }
}

/// How often the coordinating thread asks whether to cancel while an index builds.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// Fewest seconds between two build progress events of the same phase.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Build on a helper thread while this, the coordinating thread, polls `progress.cancelled()`
/// and relays a cancel to the backend. Progress implementations may only see Ctrl-C on this
/// thread (Python checks signals on its main thread); the build itself blocks in the server.
/// A cancel that arrives as the build completes still wins: the new index is dropped, so a
/// Ctrl-C during a build never lets the sweep go on to measure it.
fn build_polling_cancel(
    backend: &mut dyn Backend,
    algorithm: &str,
    build_args: &Params,
    progress: &dyn Progress,
) -> Result<BuildReport> {
    let stop = AtomicBool::new(false);
    let built = build_relaying_cancel(backend, algorithm, build_args, progress, &stop)?;
    if stop.load(Ordering::Relaxed) || progress.cancelled() {
        backend.drop_index()?;
        return Err(Error::Interrupted);
    }
    Ok(built)
}

fn build_relaying_cancel(
    backend: &mut dyn Backend,
    algorithm: &str,
    build_args: &Params,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<BuildReport> {
    let watch = BuildWatch::default();
    let started = Instant::now();
    let mut shown: Option<BuildStatus> = None;
    let mut sent = started;
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let watch = &watch;
        let builder = s.spawn(move || {
            let cancel = || stop.load(Ordering::Relaxed);
            let r = backend.build_watched(build_args, &cancel, watch);
            let _ = tx.send(r);
        });
        loop {
            match rx.recv_timeout(CANCEL_POLL) {
                Ok(r) => return r,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if !stop.load(Ordering::Relaxed) && progress.cancelled() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    let now = watch.get();
                    let phase_changed =
                        now.as_ref().map(|n| &n.phase) != shown.as_ref().map(|n| &n.phase);
                    let due = phase_changed || sent.elapsed() >= PROGRESS_EVERY;
                    if now.is_some() && now != shown && due {
                        sent = Instant::now();
                        if let Some(st) = &now {
                            progress.on_event(&Event::BuildProgress {
                                algorithm,
                                build_args,
                                phase: &st.phase,
                                percent: st.percent,
                                elapsed_seconds: started.elapsed().as_secs_f64(),
                            });
                        }
                        shown = now;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // Joined here so the panic becomes this error instead of the scope's.
                    let _ = builder.join();
                    return Err(Error::Backend("the index build thread panicked".into()));
                }
            }
        }
    })
}
