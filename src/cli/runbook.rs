//! `annbench runbook ...`: generate and check streaming runbooks (`crate::stream`).

use super::datasets::DataDir;
use super::out::{errln, outln};
use crate::dataset;
use crate::stream::generate::{self, Kind, Options};
use crate::stream::{Maintenance, Operation, Runbook, Step, truth, truth_cache};
use crate::{Error, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum RunbookCommand {
    /// Write a seeded runbook in big-ann-benchmarks' format for a dataset (to standard output,
    /// or --output FILE).
    Generate(GenerateArgs),
    /// Read a runbook, validate it against a dataset and print its steps (exit 1 on an
    /// invalid runbook).
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What the runbook does: simple (insert, delete half, reinsert), sliding-window,
    /// expiration (chunks expire after random lifetimes), clustered (writes
    /// <dataset>-clustered with rows grouped by k-means, inserted cluster by cluster),
    /// random-replace.
    #[arg(value_enum)]
    kind: KindArg,
    /// Dataset name or HDF5 file.
    #[arg(long)]
    dataset: String,
    /// Chunks (sliding-window, random-replace), time steps (expiration) or clusters
    /// (clustered); defaults 20, 100, 32, 32.
    #[arg(long)]
    steps: Option<usize>,
    /// Seed of the random draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The most rows live at once: the window of sliding-window, the rows used by simple,
    /// expiration and random-replace.
    #[arg(long)]
    max_pts: Option<usize>,
    /// Add a maintenance step after every N writing steps (annbench extension: such a
    /// runbook runs in annbench only).
    #[arg(long, value_name = "N")]
    maintenance_every: Option<usize>,
    /// What those maintenance steps do.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "vacuum")]
    maintenance: Vec<MaintenanceArg>,
    /// expiration: insert 50-90% of each chunk and replace part of it with the rest before it
    /// expires.
    #[arg(long)]
    replace: bool,
    /// Runbook file to write (atomically); default: standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Replace an existing --output file (and, for clustered, the clustered copy of the
    /// dataset in --data-dir).
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    dir: DataDir,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Runbook YAML file (big-ann-benchmarks' format).
    file: PathBuf,
    /// Dataset name or HDF5 file the runbook runs on.
    #[arg(long)]
    dataset: String,
    /// The runbook entry to read, when its key is not the dataset's name.
    #[arg(long)]
    entry: Option<String>,
    /// Also check the runbook against the algorithm that will run it, as `stream` does
    /// before any write: that it runs streaming runbooks, and every maintenance step is one
    /// its database runs.
    #[arg(long, value_name = "NAME", value_parser = super::run::parse_algorithm)]
    algorithm: Option<String>,
    /// Also compute the exact ground truth of every search step for K neighbours (or reuse
    /// it), cached beside the dataset file for `stream`.
    #[arg(long, value_name = "K")]
    truth: Option<usize>,
    #[command(flatten)]
    dir: DataDir,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum KindArg {
    Simple,
    SlidingWindow,
    Expiration,
    Clustered,
    RandomReplace,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Simple => Kind::Simple,
            KindArg::SlidingWindow => Kind::SlidingWindow,
            KindArg::Expiration => Kind::Expiration,
            KindArg::Clustered => Kind::Clustered,
            KindArg::RandomReplace => Kind::RandomReplace,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum MaintenanceArg {
    Vacuum,
    Reindex,
    Optimize,
}

impl From<MaintenanceArg> for Maintenance {
    fn from(m: MaintenanceArg) -> Maintenance {
        match m {
            MaintenanceArg::Vacuum => Maintenance::Vacuum,
            MaintenanceArg::Reindex => Maintenance::Reindex,
            MaintenanceArg::Optimize => Maintenance::Optimize,
        }
    }
}

pub fn run(cmd: RunbookCommand) -> Result<()> {
    match cmd {
        RunbookCommand::Generate(a) => generate(a),
        RunbookCommand::Check(a) => check(a),
    }
}

/// Refuses to replace an existing file without --force; `other` is the other way out.
fn refuse_existing(path: &Path, force: bool, other: &str) -> Result<()> {
    if path.exists() && !force {
        return Err(Error::Config(format!(
            "{} exists: give --force to replace it, or {other}",
            path.display()
        )));
    }
    Ok(())
}

fn generate(a: GenerateArgs) -> Result<()> {
    let kind = Kind::from(a.kind);
    let opts = Options {
        steps: a.steps,
        seed: a.seed,
        max_pts: a.max_pts,
        maintenance_every: a.maintenance_every,
        maintenance: a.maintenance.iter().map(|&m| m.into()).collect(),
        replace: a.replace,
    };
    if let Some(out) = &a.output {
        refuse_existing(out, a.force, "another --output")?;
        crate::fsutil::check_report_output(out, "the runbook")?;
    }
    let path = dataset::resolve(&a.dataset, &a.dir.data_dir)?;
    let rb = if kind == Kind::Clustered {
        let ds = dataset::open(&path)?;
        // The copy's file is checked before the clustering, which is the long part.
        let dest = a
            .dir
            .data_dir
            .join(format!("{}.hdf5", generate::clustered_name(&ds.name)?));
        refuse_existing(
            &dest,
            a.force,
            "move it away first (it is the clustered copy of the dataset, written to \
             --data-dir by an earlier `runbook generate clustered`)",
        )?;
        let (copy, rb) = generate::clustered(&ds, &opts)?;
        dataset::datafile::ensure_dir(&a.dir.data_dir)?;
        dataset::save(&copy, &dest)?;
        outln!(
            "{}: {} train rows of {} grouped into {} clusters (seed {}) -> {}",
            copy.name,
            copy.train.nrows(),
            ds.name,
            rb.steps
                .iter()
                .filter(|s| matches!(s.op, Operation::Insert { .. }))
                .count(),
            a.seed,
            dest.display()
        );
        rb
    } else {
        let info = dataset::info(&path)?;
        generate::generate(kind, &info.name, info.train, &opts)?
    };
    let text = format!(
        "# annbench runbook generate {} (seed {}); big-ann-benchmarks' runbook format\n{}",
        kind.as_str(),
        a.seed,
        rb.to_yaml()
    );
    match &a.output {
        None => outln!("{}", text.trim_end()),
        Some(out) => {
            crate::fsutil::write_atomic(out, text.as_bytes(), "the runbook")?;
            outln!(
                "{}: {} runbook for {}: {} steps, {} search steps, max_pts {}",
                out.display(),
                kind.as_str(),
                rb.entry,
                rb.steps.len(),
                rb.search_steps(),
                rb.max_pts
            );
        }
    }
    Ok(())
}

fn check(a: CheckArgs) -> Result<()> {
    let path = dataset::resolve(&a.dataset, &a.dir.data_dir)?;
    let info = dataset::info(&path)?;
    let rb = Runbook::load(&a.file, &info.name, a.entry.as_deref())?;
    rb.validate(info.train)?;
    if let Some(algorithm) = &a.algorithm {
        crate::runner::stream::check_runbook(&rb, algorithm)?;
    }
    let counts = rb.live_counts()?;
    outln!(
        "{:>5}  {:<11}  {:<40}  {:>10}  extensions",
        "step",
        "operation",
        "range",
        "live after"
    );
    for (s, live) in rb.steps.iter().zip(&counts) {
        let line = format!(
            "{:>5}  {:<11}  {:<40}  {:>10}  {}",
            s.number,
            s.op.name(),
            range_text(&s.op),
            live,
            extensions(s)
        );
        outln!("{}", line.trim_end());
    }
    let peak = counts.iter().copied().max().unwrap_or(0);
    outln!(
        "{}: entry '{}', {} steps, {} search steps; peak {peak} live of max_pts {}; train rows \
         used up to {} of {} in {}",
        a.file.display(),
        rb.entry,
        rb.steps.len(),
        rb.search_steps(),
        rb.max_pts,
        rb.rows_needed(),
        info.train,
        info.name
    );
    if let Some(k) = a.truth {
        let ds = dataset::open(&path)?;
        let start = std::time::Instant::now();
        let bar = dataset::bars::bar(
            truth::work_units(&rb, ds.test.nrows()),
            &format!("live-set ground truth, {} queries", ds.test.nrows()),
        );
        let t = truth_cache::load_or_compute(&ds, &path, &rb, k, truth::default_depth(k), &|n| {
            bar.inc(n);
            true
        });
        bar.finish_and_clear();
        let t = t?;
        outln!(
            "ground truth k={k} for {} search steps x {} queries: {} ({:.2} s, {} query lists \
             rescanned when computed) -> {}{}",
            t.steps.len(),
            ds.test.nrows(),
            t.status,
            start.elapsed().as_secs_f64(),
            t.rescans,
            t.path.display(),
            if t.not_cached.is_some() {
                " (not cached)"
            } else {
                ""
            }
        );
        if let Some(not) = &t.not_cached {
            errln!("warning: {not}");
        }
    }
    if rb
        .steps
        .iter()
        .any(|s| matches!(s.op, Operation::Maintenance(_)))
    {
        let checked = match &a.algorithm {
            Some(algorithm) => format!("{algorithm} runs every one of them"),
            None => "give --algorithm NAME to check them against the algorithm that will run \
                     them"
                .into(),
        };
        outln!(
            "note: maintenance steps are an annbench extension; big-ann-benchmarks does not run \
             this runbook ({checked})"
        );
    }
    Ok(())
}

/// The range column: rows inserted, tags deleted, tags and the rows they get, or the actions.
fn range_text(op: &Operation) -> String {
    match op {
        Operation::Insert { start, end } => format!("rows [{start}, {end})"),
        Operation::Delete { start, end } => format!("tags [{start}, {end})"),
        Operation::Replace { tags, ids } => format!(
            "tags [{}, {}) <- rows [{}, {})",
            tags.start, tags.end, ids.start, ids.end
        ),
        Operation::Search => String::new(),
        Operation::Maintenance(what) => what
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn extensions(s: &Step) -> String {
    let mut parts = Vec::new();
    if let Some(r) = s.rate {
        parts.push(format!("rate {r}/s"));
    }
    if let Some(b) = s.batch {
        parts.push(format!("batch {b}"));
    }
    if let Some(d) = s.during {
        parts.push(format!("{} search clients during", d.clients));
    }
    parts.join(", ")
}
