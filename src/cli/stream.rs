//! `annbench stream ...`: run a streaming runbook (big-ann-benchmarks' format) against one
//! algorithm, print a line per step as it is stored, then the per-step table and the mean
//! recall over the search steps.

use super::out::{errln, outln};
use super::run::progress::CliProgress;
use super::server_urls::ServerUrls;
use crate::backend::BackendOptions;
use crate::report::render::{Format, render};
use crate::runner::stream::{self, StreamOptions};
use crate::{Error, Result};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Run a streaming runbook: inserts, deletes, replaces and searches, with recall at each
/// search step against exact truth over the rows live at that step.
#[derive(Debug, Args)]
pub struct StreamArgs {
    /// Dataset name (looked up in --data-dir) or path to an ann-benchmarks HDF5 file.
    #[arg(long)]
    pub dataset: String,
    /// Runbook file in big-ann-benchmarks' format (`annbench runbook generate` writes one).
    #[arg(long, value_name = "FILE")]
    pub runbook: PathBuf,
    /// The runbook's entry to run, when it is not named like the dataset.
    #[arg(long, value_name = "KEY")]
    pub entry: Option<String>,
    /// The algorithm (one): mariadb, pgvector, pgvector_halfvec, pgvector_ivfflat, ...
    #[arg(long)]
    pub algorithm: String,
    /// Grid file for the algorithm: every build point runs the runbook, every query point is
    /// measured at each search step. Without it (and --build/--query), the default grid's first
    /// build point at one query point.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override build values, e.g. --build M=16 (repeatable).
    #[arg(long = "build", value_name = "KEY=V1,V2")]
    pub build: Vec<String>,
    /// Override query values, e.g. --query ef_search=40 (repeatable).
    #[arg(long = "query", value_name = "KEY=V1,V2")]
    pub query: Vec<String>,
    /// Neighbours per query (k).
    #[arg(long, default_value_t = 10, value_parser = super::run::parse_whole)]
    pub count: usize,
    /// Timed passes per search step and query point at least, after its recall pass.
    #[arg(long, default_value_t = 5, value_parser = super::run::parse_whole)]
    pub runs: usize,
    /// Shortest timed pass, e.g. 300ms, 1s.
    #[arg(long, default_value = "300ms", value_parser = super::run::parse_min_time, value_name = "DURATION")]
    pub min_time: Duration,
    #[command(flatten)]
    pub max_time: super::run::MaxTime,
    /// Search clients at the search steps.
    #[arg(long, default_value_t = 1, value_parser = super::run::parse_whole)]
    pub clients: usize,
    /// Rows per write statement where a step gives no `batch`.
    #[arg(long, default_value_t = stream::DEFAULT_BATCH, value_parser = super::run::parse_whole)]
    pub batch: usize,
    /// Marker rows per insert step whose time to be found by a search is measured (0: none).
    #[arg(long, default_value_t = stream::DEFAULT_MARKERS, value_parser = super::run::parse_whole)]
    pub markers: usize,
    /// Result store directory.
    #[arg(
        long = "results",
        env = "ANNBENCH_RESULTS",
        default_value = "results",
        value_name = "DIR"
    )]
    pub results: PathBuf,
    /// Run every step again, even when the stored run is complete or can resume.
    #[arg(long)]
    pub force: bool,
    /// Label stored with the run.
    #[arg(long)]
    pub label: Option<String>,
    /// Longest one index build may take, e.g. 600, 90s, 10m.
    #[arg(long, value_parser = super::run::parse_duration)]
    pub timeout: Option<Duration>,
    /// Directory of dataset files (the live-set ground truth is cached there too).
    #[arg(long, default_value = "data", env = "ANNBENCH_DATA_DIR")]
    pub data_dir: PathBuf,
    /// One URL flag per database (`--mariadb URL`, `--postgres URL`, ...).
    #[command(flatten)]
    pub servers: ServerUrls,
    /// MariaDB database and PostgreSQL schema that hold annbench's tables (default annbench).
    #[arg(long, env = "ANNBENCH_SCHEMA", value_name = "NAME")]
    pub schema: Option<String>,
    /// Format of the final per-step table: markdown, csv or json.
    #[arg(long, default_value = "markdown")]
    pub format: Format,
}

impl StreamArgs {
    /// The library options these arguments stand for.
    pub fn options(self) -> Result<StreamOptions> {
        let algorithm = crate::backend::find_algorithm(&self.algorithm)?
            .name
            .to_string();
        Ok(StreamOptions {
            dataset: self.dataset,
            data_dir: self.data_dir,
            runbook: self.runbook,
            entry: self.entry,
            algorithm,
            config_file: self.config,
            build_overrides: self.build,
            query_overrides: self.query,
            count: self.count,
            runs: self.runs,
            min_time: self.min_time,
            max_time: self.max_time.max_time,
            clients: self.clients,
            batch: self.batch,
            markers: self.markers,
            results_dir: self.results,
            force: self.force,
            label: self.label,
            timeout: self.timeout,
            backend: self.servers.apply(BackendOptions {
                schema: self.schema,
                build_timeout: self.timeout,
                ..BackendOptions::default()
            })?,
        })
    }
}

pub fn run(args: StreamArgs) -> Result<()> {
    let format = args.format;
    let opts = args.options()?;
    let progress = CliProgress::new();
    let summary = stream::run_stream(&opts, &progress);
    progress.clear();
    let summary = match summary {
        Err(_) if crate::runner::Progress::cancelled(&progress) => {
            errln!("interrupted: every completed step is stored; run again to resume");
            return Err(Error::Interrupted);
        }
        Err(Error::Interrupted) => {
            errln!("interrupted: every completed step is stored; run again to resume");
            return Err(Error::Interrupted);
        }
        other => other?,
    };
    for w in &summary.warnings {
        errln!("warning: {w}");
    }
    let runs: Vec<_> = summary.runs.iter().map(|o| o.run.clone()).collect();
    for o in &summary.runs {
        if o.skipped {
            errln!(
                "already complete, not run again (--force runs it again): {}",
                o.path.display()
            );
        } else if let Some(step) = o.resumed_after {
            errln!("resumed after step {step}: {}", o.path.display());
        }
    }
    outln!(
        "{}",
        render(&crate::report::stream::summary_table(&runs), format)?
    );
    for line in crate::report::stream::score_lines(&runs) {
        outln!("{line}");
    }
    Ok(())
}
