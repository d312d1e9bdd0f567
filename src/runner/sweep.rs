//! The sweep loop of one dataset over every algorithm's grid, in config order.

use super::point::measure_point;
use super::progress::{Event, Progress};
use super::{SweepOptions, SweepPoint, SweepSummary, data};
use crate::backend::{Backend, BuildReport, LoadReport, Searcher, ServerInfo, TableSpec};
use crate::config::{BuildPoint, Grid};
use crate::dataset::Dataset;
use crate::params::Params;
use crate::results::{self, PointKey, PointResult, env::Host};
use crate::{Error, Result};
use ndarray::{CowArray, Ix2};

/// Shared, read-only state of one algorithm's sweep.
struct Ctx<'a> {
    data: &'a Dataset,
    queries: CowArray<'a, f32, Ix2>,
    opts: &'a SweepOptions,
    progress: &'a dyn Progress,
    host: &'a Host,
    algorithm: &'a str,
    server: ServerInfo,
    load: LoadReport,
}

pub fn run(
    mut data: Dataset,
    grids: &[Grid],
    opts: &SweepOptions,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<SweepSummary> {
    data::ensure_ground_truth(&mut data, opts.count, progress)?;
    let host = Host::detect();
    let mut summary = SweepSummary::default();
    for grid in grids {
        for w in &grid.warnings {
            warn(progress, &mut summary, w.clone());
        }
    }
    let queries = data.test.as_standard_layout();
    for grid in grids {
        let per_build: usize = grid.builds.iter().map(|b| b.query_args.len()).sum();
        progress.on_event(&Event::AlgorithmStarted {
            algorithm: &grid.algorithm,
            builds: grid.builds.len(),
            points: per_build * opts.clients.len(),
        });
        let mut backend = factory(&grid.algorithm)?;
        let server = backend.server_info()?;
        let spec = TableSpec {
            dataset: data.name.clone(),
            metric: data.metric,
            dimension: data.dimension(),
        };
        progress.on_event(&Event::LoadStarted {
            algorithm: &grid.algorithm,
            rows: data.train.nrows(),
        });
        let load = backend.load(&spec, data.train.view())?;
        progress.on_event(&Event::LoadFinished {
            algorithm: &grid.algorithm,
            report: &load,
        });
        let ctx = Ctx {
            data: &data,
            queries: queries.view().into(),
            opts,
            progress,
            host: &host,
            algorithm: &grid.algorithm,
            server,
            load,
        };
        for build in &grid.builds {
            let outcome = run_build(&ctx, backend.as_mut(), build, &mut summary);
            if let Err(e) = outcome {
                // Leave the server tidy; the stored points stay and a rerun resumes here.
                let _ = backend.drop_index();
                return Err(e);
            }
        }
        backend.drop_index()?;
    }
    Ok(summary)
}

fn warn(progress: &dyn Progress, summary: &mut SweepSummary, text: String) {
    progress.on_event(&Event::Warning(&text));
    summary.warnings.push(text);
}

/// One build point: skip it when all its points are stored, else build, verify the plan and
/// measure every (query point x clients) that is missing (or all with `force`).
fn run_build(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    summary: &mut SweepSummary,
) -> Result<()> {
    let opts = ctx.opts;
    let mut todo = Vec::new();
    for query_args in &build.query_args {
        for &clients in &opts.clients {
            let key = PointKey {
                dataset: &ctx.data.name,
                count: opts.count,
                algorithm: ctx.algorithm,
                build_args: &build.build_args,
                query_args,
                clients,
                label: opts.label.as_deref(),
            };
            let path = results::point_path(&opts.results_dir, &key)?;
            let stored = if opts.force || !path.exists() {
                None
            } else {
                match results::read_point(&path) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        warn(
                            ctx.progress,
                            summary,
                            format!("{e}; measuring this point again"),
                        );
                        None
                    }
                }
            };
            todo.push((query_args, clients, path, stored));
        }
    }
    if todo.iter().all(|t| t.3.is_some()) {
        ctx.progress.on_event(&Event::BuildSkipped {
            algorithm: ctx.algorithm,
            build_args: &build.build_args,
        });
    } else {
        if ctx.progress.cancelled() {
            return Err(Error::Interrupted);
        }
        ctx.progress.on_event(&Event::BuildStarted {
            algorithm: ctx.algorithm,
            build_args: &build.build_args,
        });
        let report = backend.build(&build.build_args)?;
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
        let first = ctx.queries.row(0).to_vec();
        let first_args = build.query_args.first().cloned().unwrap_or_default();
        backend.verify_index_used(&first, opts.count, &first_args)?;
        let max_clients = opts.clients.iter().copied().max().unwrap_or(1);
        let mut searchers = (0..max_clients)
            .map(|_| backend.searcher())
            .collect::<Result<Vec<_>>>()?;
        for (query_args, clients, path, stored) in &todo {
            if stored.is_some() {
                continue;
            }
            let point = run_point(
                ctx,
                &mut searchers[..*clients],
                &build.build_args,
                &report,
                query_args,
                *clients,
            )?;
            let written = results::write_point(&opts.results_dir, &point)?;
            debug_assert_eq!(&written, path);
            for n in &point.environment.notices {
                if !report.notices.contains(n) {
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
        }
    }
    for (_, _, path, stored) in todo {
        if let Some(point) = stored {
            ctx.progress.on_event(&Event::PointSkipped {
                point: &point,
                path: &path,
            });
            summary.points.push(SweepPoint {
                path,
                skipped: true,
                result: point,
            });
        }
    }
    Ok(())
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

fn run_point(
    ctx: &Ctx<'_>,
    searchers: &mut [Box<dyn Searcher>],
    build_args: &Params,
    build: &BuildReport,
    query_args: &Params,
    clients: usize,
) -> Result<PointResult> {
    let opts = ctx.opts;
    for s in searchers.iter_mut() {
        s.set_query_args(query_args)?;
    }
    ctx.progress.on_event(&Event::PointStarted {
        algorithm: ctx.algorithm,
        build_args,
        query_args,
        clients,
        queries: ctx.queries.nrows(),
        runs: opts.runs,
    });
    let m = measure_point(
        searchers,
        ctx.data,
        ctx.queries.view(),
        opts.count,
        opts.runs,
        ctx.progress,
    )?;
    let mut notices = build.notices.clone();
    notices.extend(m.notices);
    Ok(PointResult {
        dataset: ctx.data.name.clone(),
        distance: ctx.data.metric,
        count: opts.count,
        algorithm: ctx.algorithm.to_string(),
        build_args: build_args.clone(),
        query_args: query_args.clone(),
        clients,
        label: opts.label.clone(),
        load_seconds: Some(ctx.load.seconds),
        build_seconds: build.seconds,
        index_size_bytes: Some(build.index_size_bytes),
        table_size_bytes: ctx.load.table_size_bytes,
        build_phases: build.phases.clone(),
        neighbors: m.neighbors,
        distances: m.distances,
        latencies: m.latencies,
        passes: m.passes,
        metrics: m.metrics,
        environment: ctx.host.environment(&ctx.server, notices),
    })
}
