//! `annbench run --dry-run`: first the builds and points a run would measure (this shard's,
//! when sharded), which of them are stored, and how the plan splits over the shards (reads the
//! grid files and the result store only); then the estimates of [`crate::runner::dryrun`]:
//! server memory per build (when the servers answer) and time from earlier results.

use super::progress::CliProgress;
use crate::backend::BackendOptions;
use crate::cli::out::outln;
use crate::params::describe;
use crate::results::{PointKey, point_path};
use crate::runner::dryrun::{DryRun, dry_run_after_check};
use crate::runner::estimate::{Estimate, human_seconds};
use crate::runner::{self, SweepOptions};
use crate::shard::{self, Assignment};
use crate::{Result, dataset};
use std::path::Path;

/// The dataset name a sweep stores points under: the file stem of a path, else the name.
pub fn dataset_name(name_or_path: &str) -> String {
    if dataset::datadir::looks_like_path(name_or_path) {
        dataset::hdf5_io::name_of(Path::new(name_or_path))
    } else {
        name_or_path.to_string()
    }
}

/// The dataset's name in the store and its train rows, as a run will see them: from the
/// file's shape (no vectors are read) or the registry; nothing is written or downloaded.
/// Rows are `None` when neither knows the dataset.
fn dataset_shape(opts: &SweepOptions) -> (String, Option<usize>) {
    let candidates = [
        Path::new(&opts.dataset).to_path_buf(),
        opts.data_dir.join(format!("{}.hdf5", opts.dataset)),
        opts.data_dir.join(&opts.dataset),
    ];
    let file = candidates.into_iter().find(|p| p.is_file());
    if let Some(info) = file.and_then(|p| dataset::info(&p).ok()) {
        return (info.name, Some(info.train));
    }
    match dataset::registry::lookup(&opts.dataset) {
        Ok(entry) => (entry.name.clone(), Some(entry.train)),
        Err(_) => (dataset_name(&opts.dataset), None),
    }
}

/// Print the plan; nothing is measured.
pub fn print(opts: &SweepOptions) -> Result<()> {
    // The same plan a run makes: repeats dropped, `auto` values resolved against the rows.
    let opts = &runner::without_repeats(opts);
    let (name, rows) = dataset_shape(opts);
    let grids = runner::plan(opts, rows)?;
    let shards = opts.shard.as_ref().map_or(1, |s| s.count);
    let label = opts.label.as_deref();
    let a = shard::assign(&grids, shards, &name, opts.count, label, &opts.clients);
    let algorithms: Vec<&str> = grids.iter().map(|g| g.algorithm.as_str()).collect();
    let clients: Vec<String> = opts.clients.iter().map(usize::to_string).collect();
    outln!(
        "plan {}: {name}, k={}{}, clients {}: {} build(s), {} point(s) of {}",
        a.digest,
        opts.count,
        label.map(|l| format!(", label {l}")).unwrap_or_default(),
        clients.join(","),
        a.units.len(),
        a.total_points(),
        algorithms.join(", ")
    );
    let mine = match &opts.shard {
        None => None,
        Some(s) => {
            print_shares(&a, s.index);
            outln!("this is shard {s} (from {})", s.source);
            Some(s.index)
        }
    };
    print_builds(opts, &name, &a, &grids, mine)?;
    if !opts.memory.is_empty() {
        print_memory(opts, &name, &a, &grids, mine)?;
    }
    if rows.is_none() {
        outln!(
            "{} is not found here: `auto` grid values are shown unresolved, and the split may \
             differ from a run's",
            opts.dataset
        );
    }
    Ok(())
}

/// The series `--memory` adds after each build: per share a cold and a warm series of the
/// build's points, and how many of them are stored.
fn print_memory(
    opts: &SweepOptions,
    dataset: &str,
    a: &Assignment,
    grids: &[crate::config::Grid],
    shard: Option<usize>,
) -> Result<()> {
    let (mut points, mut stored) = (0, 0);
    let mut labels = Vec::new();
    for &share in &opts.memory {
        for cold in [true, false] {
            labels.push(runner::memory_series_label(
                opts.label.as_deref(),
                share,
                cold,
            ));
        }
    }
    for u in a
        .units
        .iter()
        .filter(|u| shard.is_none_or(|s| u.shard == s))
    {
        let build = &grids[u.grid].builds[u.build];
        for label in &labels {
            points += build.query_args.len() * opts.clients.len();
            stored += stored_points(opts, dataset, &u.algorithm, build, Some(label))?;
        }
    }
    outln!(
        "--memory: after each build, its server restarted at each share of the index size, \
         then the build's points measured cold and warm: series {}; {points} more point(s): {} \
         to measure, {stored} stored",
        labels.join(", "),
        points - stored
    );
    Ok(())
}

/// How many points of `build` (query points x clients) are stored under `label` (none with
/// `--force`, which measures them again).
fn stored_points(
    opts: &SweepOptions,
    dataset: &str,
    algorithm: &str,
    build: &crate::config::BuildPoint,
    label: Option<&str>,
) -> Result<usize> {
    let mut stored = 0;
    for query_args in &build.query_args {
        for &clients in &opts.clients {
            let key = PointKey::new(
                dataset,
                opts.count,
                algorithm,
                &build.build_args,
                query_args,
                clients,
                label,
            );
            if !opts.force && point_path(&opts.results_dir, &key)?.is_file() {
                stored += 1;
            }
        }
    }
    Ok(stored)
}

/// One line per shard: builds, points and share of the estimated cost.
fn print_shares(a: &Assignment, mine: usize) {
    let total = a.total_cost().max(f64::MIN_POSITIVE);
    for s in 0..a.shards {
        let share = a.share(s);
        outln!(
            "  shard {}/{}: {} build(s), {} point(s), {:.1}% of the estimated build cost{}",
            s + 1,
            a.shards,
            share.builds,
            share.points,
            100.0 * share.cost / total,
            if s == mine { "  <- this shard" } else { "" }
        );
    }
}

/// The builds of `shard` (all when `None`) with their query points and what is stored.
fn print_builds(
    opts: &SweepOptions,
    dataset: &str,
    a: &Assignment,
    grids: &[crate::config::Grid],
    shard: Option<usize>,
) -> Result<()> {
    let total = a.total_cost().max(f64::MIN_POSITIVE);
    let mut rows = Vec::new();
    let (mut points, mut stored) = (0, 0);
    for u in a
        .units
        .iter()
        .filter(|u| shard.is_none_or(|s| u.shard == s))
    {
        let build = &grids[u.grid].builds[u.build];
        let have = stored_points(opts, dataset, &u.algorithm, build, opts.label.as_deref())?;
        let queries: Vec<String> = build.query_args.iter().map(describe).collect();
        rows.push([
            u.algorithm.clone(),
            describe(&u.build_args),
            format!(
                "{}{:.1}%",
                if u.estimated { "" } else { "~" },
                100.0 * u.cost / total
            ),
            u.points.to_string(),
            have.to_string(),
            queries.join(" | "),
        ]);
        points += u.points;
        stored += have;
    }
    let head = [
        "algorithm",
        "build",
        "cost",
        "points",
        "stored",
        "query points",
    ];
    let width = |c: usize| {
        rows.iter()
            .map(|r| r[c].len())
            .chain([head[c].len()])
            .max()
            .unwrap_or(0)
    };
    let w: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |r: [&str; 6]| {
        outln!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4]
        )
    };
    outln!();
    line(head);
    for r in &rows {
        line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]);
    }
    let clients: Vec<String> = opts.clients.iter().map(usize::to_string).collect();
    outln!(
        "\n{} build(s), {points} point(s) (query points x clients {}): {} to measure, {stored} \
         stored in {}",
        rows.len(),
        clients.join(","),
        points - stored,
        opts.results_dir.display()
    );
    outln!("cost: share of the plan's estimated build cost (~: no estimate, weighs as the median)");
    Ok(())
}

/// Memory plans and time estimates of the builds and points this run would measure (the
/// shard's, when sharded); the servers are asked for memory plans only when they answer.
/// The caller made the run's checks first ([`crate::runner::dryrun::check`]).
pub fn estimates(opts: &SweepOptions, calibrate: Option<usize>) -> Result<()> {
    let backend_opts = BackendOptions {
        build_timeout: opts.timeout,
        ..opts.backend.clone()
    };
    let progress = CliProgress::new();
    let plan = dry_run_after_check(opts, calibrate, &progress, &|name| {
        crate::backend::create(name, &backend_opts)
    });
    progress.clear();
    match plan {
        Ok(plan) => print_estimates(&plan, opts),
        Err(e) if calibrate.is_some() => return Err(e),
        // The plan above stands without the dataset or the servers; say why estimates are missing.
        Err(e) => outln!("\nno estimates: {e}"),
    }
    Ok(())
}

fn est(e: &Option<Estimate>) -> String {
    match e {
        Some(e) => format!(
            "~{:>8}  (n^{:.2} {}, from {})",
            human_seconds(e.seconds),
            e.exponent,
            if e.fitted { "fitted" } else { "assumed" },
            e.basis.first().map_or("", String::as_str)
        ),
        None => "   no estimate".into(),
    }
}

fn print_estimates(p: &DryRun, opts: &SweepOptions) {
    outln!(
        "dry run: {} ({} x {}, {} queries), k={}, {} timed pass(es) after a warm-up, clients {:?}",
        p.dataset,
        p.rows,
        p.dimension,
        p.queries,
        opts.count,
        opts.runs,
        opts.clients
    );
    for a in &p.algorithms {
        outln!("\n{}:", a.algorithm);
        outln!("  {:<44} {}", format!("load {} rows", p.rows), est(&a.load));
        if let Some(note) = &a.server_note {
            outln!("  (no memory plan: {note})");
        }
        for b in &a.builds {
            let label = format!("build {}", describe(&b.build_args));
            if b.skipped {
                outln!("  {label:<44} all points stored: skipped");
                continue;
            }
            outln!("  {label:<44} {}", est(&b.build));
            if let Some(m) = &b.memory {
                let mark = if m.fits() { "" } else { "WARNING " };
                outln!("    {mark}memory: {}", m.describe());
            }
            for q in &b.points {
                let label = format!("{} x{}", describe(&q.query_args), q.clients);
                if q.stored {
                    outln!("    {label:<42} stored");
                } else {
                    outln!("    {label:<42} {}", est(&q.seconds));
                }
            }
        }
    }
    let (total, unknown) = p.total();
    outln!(
        "\ntotal: ~{}{}",
        human_seconds(total),
        if unknown > 0 {
            format!(" plus {unknown} step(s) without an estimate")
        } else {
            String::new()
        }
    );
    for n in &p.notes {
        outln!("({n})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_names_follow_the_store() {
        assert_eq!(
            dataset_name("sift-5k-128-euclidean"),
            "sift-5k-128-euclidean"
        );
        assert_eq!(dataset_name("data/my-set.hdf5"), "my-set");
        assert_eq!(dataset_name("my-set.hdf5"), "my-set");
    }
}
