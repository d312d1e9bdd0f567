//! The sweep loop of one dataset over every algorithm's grid, in config order.

use super::ctx::{Ctx, fail, warn};
use super::progress::{Event, Progress};
use super::{Failure, SweepOptions, SweepSummary, data};
use crate::backend::filter::{Attributes, SELECTIVITY, filter_of};
use crate::backend::{Backend, LoadReport, NamedServer, ServerInfo, TableSpec};
use crate::config::Grid;
use crate::dataset::Dataset;
use crate::dataset::filters::{FilterKind, Filters};
use crate::results::env::Host;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// The filters (kind, selectivity) the grids' query points use, each once.
pub fn selectivities(grids: &[Grid]) -> Vec<(FilterKind, String)> {
    let mut out: Vec<(FilterKind, String)> = Vec::new();
    let all = grids
        .iter()
        .flat_map(|g| &g.builds)
        .flat_map(|b| &b.query_args);
    for (kind, s) in all.filter_map(filter_of) {
        if !out.iter().any(|(k, o)| *k == kind && o == s) {
            out.push((kind, s.to_string()));
        }
    }
    out
}

/// The filters the grids need, checked: every selectivity present, made for this data.
/// `None` when no point is filtered.
pub fn check_filters<'f>(
    data: &Dataset,
    grids: &[Grid],
    filters: Option<&'f Filters>,
) -> Result<Option<&'f Filters>> {
    let wanted = selectivities(grids);
    if wanted.is_empty() {
        return Ok(None);
    }
    let f = filters.ok_or_else(|| {
        let mut sels: Vec<&str> = Vec::new();
        for (_, s) in &wanted {
            if !sels.contains(&s.as_str()) {
                sels.push(s);
            }
        }
        Error::Config(format!(
            "a filtered sweep (selectivity {}) needs the attributes of '{}', which it has none \
             of: create them with `annbench datasets filter {} --selectivity {}`",
            sels.join(", "),
            data.name,
            data.name,
            sels.join(",")
        ))
    })?;
    for (kind, s) in &wanted {
        f.level(*kind, s, &data.name)?;
    }
    f.check_for(data)?;
    Ok(Some(f))
}

/// Connects a backend of an algorithm: to its database's one server (`None`), or to one of
/// its named servers.
pub type Factory<'a> = dyn Fn(&str, Option<&NamedServer>) -> Result<Box<dyn Backend>> + 'a;

/// The servers an algorithm's points are measured on: its database's named servers
/// (`--postgres NAME=URL`), else the one server (`None`).
fn lanes_of<'o>(opts: &'o SweepOptions, algorithm: &str) -> Vec<Option<&'o NamedServer>> {
    let named = opts.backend.named_for(algorithm);
    if named.is_empty() {
        vec![None]
    } else {
        named.into_iter().map(Some).collect()
    }
}

/// Connect one server's backend and load its table (and filter attributes when needed).
fn open_lane(
    grid: &Grid,
    lane: Option<&NamedServer>,
    spec: &TableSpec,
    data: &Dataset,
    attributes: Option<&Attributes>,
    progress: &dyn Progress,
    factory: &Factory<'_>,
) -> Result<(Box<dyn Backend>, ServerInfo, LoadReport)> {
    let mut backend = factory(&grid.algorithm, lane)?;
    let server = backend.server_info()?;
    progress.on_event(&Event::LoadStarted {
        algorithm: &grid.algorithm,
        rows: data.train.nrows(),
    });
    let mut load = backend.load(spec, data.train.view())?;
    let filtered = grid
        .builds
        .iter()
        .flat_map(|b| &b.query_args)
        .any(|q| q.contains_key(SELECTIVITY.name));
    if let (Some(a), true) = (attributes, filtered) {
        let seconds = backend.load_attributes(a)?;
        // Counted apart from the vectors' load: the attribute columns are added after.
        load.method = if seconds > 0.0 {
            format!("{}; attribute columns added in {seconds:.2} s", load.method)
        } else {
            format!("{}; attribute columns kept", load.method)
        };
    }
    progress.on_event(&Event::LoadFinished {
        algorithm: &grid.algorithm,
        report: &load,
    });
    Ok((backend, server, load))
}

pub fn run(
    mut data: Dataset,
    filters: Option<&Filters>,
    grids: &[Grid],
    opts: &SweepOptions,
    progress: &dyn Progress,
    factory: &Factory<'_>,
) -> Result<SweepSummary> {
    let mut host = Host::detect();
    let mut summary = SweepSummary::default();
    // A shard sweeps its share of the plan and records which share with every point.
    let selected;
    let grids = match &opts.shard {
        None => grids,
        Some(shard) => {
            let s = crate::shard::select(
                grids,
                shard,
                &data.name,
                opts.count,
                opts.label.as_deref(),
                &opts.clients,
            );
            host.shard = Some(s.info);
            selected = s.grids;
            if selected.is_empty() {
                // An empty store still lets `annbench merge results-*` name every shard.
                std::fs::create_dir_all(&opts.results_dir).map_err(|e| {
                    crate::Error::io(&opts.results_dir, "cannot create results directory", e)
                })?;
                let text = format!(
                    "shard {shard} owns no builds: the plan has {} in all; use fewer shards",
                    s.assignment.units.len()
                );
                warn(progress, &mut summary, text);
                return Ok(summary);
            }
            &selected
        }
    };
    let filters = check_filters(&data, grids, filters)?;
    super::preflight::check_data(grids, &data)?;
    data::ensure_ground_truth(&mut data, opts.count, progress)?;
    for grid in grids {
        for w in &grid.warnings {
            warn(progress, &mut summary, w.clone());
        }
    }
    let queries = data.test.as_standard_layout();
    let fingerprint = crate::dataset::fingerprint(&data, opts.count);
    let filter_prints: BTreeMap<(FilterKind, String), String> = filters
        .map(|f| {
            f.levels
                .iter()
                .map(|l| {
                    let print = crate::dataset::filters::fingerprint(&fingerprint, f, l);
                    ((l.kind, l.selectivity.clone()), print)
                })
                .collect()
        })
        .unwrap_or_default();
    let attributes = filters.map(Attributes::of);
    // Counted per server: an interleaved run measures each point on each of its servers.
    let servers = |g: &Grid| lanes_of(opts, &g.algorithm).len();
    // --memory measures each point again cold and warm at every share.
    let series = 1 + 2 * opts.memory.len();
    progress.on_event(&Event::SweepStarted {
        algorithms: grids.len(),
        builds: grids.iter().map(|g| g.builds.len() * servers(g)).sum(),
        points: grids
            .iter()
            .map(|g| g.builds.iter().map(|b| b.query_args.len()).sum::<usize>() * servers(g))
            .sum::<usize>()
            * opts.clients.len()
            * series,
    });
    for grid in grids {
        let per_build: usize = grid.builds.iter().map(|b| b.query_args.len()).sum();
        progress.on_event(&Event::AlgorithmStarted {
            algorithm: &grid.algorithm,
            builds: grid.builds.len() * servers(grid),
            points: per_build * opts.clients.len() * servers(grid) * series,
        });
        let spec = TableSpec {
            dataset: data.name.clone(),
            metric: data.metric,
            dimension: data.dimension(),
        };
        let lanes = lanes_of(opts, &grid.algorithm);
        let mut opened = Vec::new();
        for lane in &lanes {
            let ready = open_lane(
                grid,
                *lane,
                &spec,
                &data,
                attributes.as_ref(),
                progress,
                factory,
            );
            match ready {
                Ok(r) => opened.push((*lane, r)),
                Err(e) => {
                    let f = Failure::of_algorithm(&grid.algorithm);
                    let e = match lane {
                        Some(s) => s.error(e),
                        None => e,
                    };
                    fail(opts, progress, &mut summary, f, e)?;
                    opened.clear();
                    break;
                }
            }
        }
        if opened.is_empty() {
            continue;
        }
        let mut backends = Vec::new();
        let mut ctxs = Vec::new();
        for (lane, (backend, server, load)) in opened {
            backends.push(backend);
            ctxs.push(Ctx {
                data: &data,
                queries: queries.view().into(),
                opts,
                progress,
                host: &host,
                algorithm: &grid.algorithm,
                label: lane
                    .map(|s| s.name.clone())
                    .or_else(|| run_label(opts.label.as_deref()?, &server)),
                named: lane.cloned(),
                server,
                load,
                fingerprint: fingerprint.clone(),
                filters,
                filter_prints: filter_prints.clone(),
            });
        }
        let together = (ctxs.len() > 1).then(|| super::interleave::Together::new(&ctxs));
        for build in &grid.builds {
            let outcome = match &together {
                None => {
                    super::build::run_build(&ctxs[0], backends[0].as_mut(), build, &mut summary)
                }
                Some(t) => t.run_build(&ctxs, &mut backends, build, &mut summary),
            };
            if let Err(e) = outcome {
                // Leave the servers tidy; the stored points stay and a rerun resumes here.
                for b in &mut backends {
                    let _ = b.drop_index();
                }
                return Err(e);
            }
        }
        for (b, ctx) in backends.iter_mut().zip(&ctxs) {
            if let Err(e) = b.drop_index() {
                let f = Failure::of_algorithm(&grid.algorithm);
                fail(opts, progress, &mut summary, f, ctx.on_server(e))?;
            }
        }
    }
    Ok(summary)
}

/// `--label auto`: each run's label is its server's version string (`MariaDB 11.8.3`,
/// `PostgreSQL 17.6, pgvector 0.8.0`), so a series of runs over versions labels itself.
pub const AUTO_LABEL: &str = "auto";

/// The label of the points measured on `server`: `--label`, or the server's version for
/// [`AUTO_LABEL`].
fn run_label(label: &str, server: &crate::results::ServerInfo) -> Option<String> {
    Some(if label == AUTO_LABEL {
        server.version.clone()
    } else {
        label.to_string()
    })
}
