//! `annbench run --dry-run`: the builds and points a run would measure (this shard's, when
//! sharded), which of them are stored, and how the plan splits over the shards. Reads the grid
//! files and the result store; opens no dataset and touches no server.

use crate::cli::out::outln;
use crate::params::describe;
use crate::results::{PointKey, point_path};
use crate::runner::{self, SweepOptions};
use crate::shard::{self, Assignment};
use crate::{Result, dataset};
use std::path::Path;

/// The dataset name a sweep stores points under: the file stem of a path, else the name.
pub fn dataset_name(name_or_path: &str) -> String {
    let looks_like_path = name_or_path.contains('/')
        || name_or_path.contains(std::path::MAIN_SEPARATOR)
        || name_or_path.ends_with(".hdf5");
    if looks_like_path {
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
    if rows.is_none() {
        outln!(
            "{} is not found here: `auto` grid values are shown unresolved, and the split may \
             differ from a run's",
            opts.dataset
        );
    }
    Ok(())
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
        let mut have = 0;
        for query_args in &build.query_args {
            for &clients in &opts.clients {
                let key = PointKey {
                    dataset,
                    count: opts.count,
                    algorithm: &u.algorithm,
                    build_args: &build.build_args,
                    query_args,
                    clients,
                    label: opts.label.as_deref(),
                };
                if !opts.force && point_path(&opts.results_dir, &key)?.is_file() {
                    have += 1;
                }
            }
        }
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
