//! The `annbench` command line: parse into validated options, call the library, print one
//! error chain. One file per subcommand group.

mod algorithms;
mod datasets;
mod history;
mod merge;
mod out;
mod report;
mod run;
mod runbook;
mod server_urls;
mod servers;
mod shell;
mod stream;

use clap::{Parser, Subcommand};
use out::errln;
use std::ffi::OsString;
use std::process::ExitCode;

/// Benchmark vector indexes inside databases (MariaDB MHNSW, PostgreSQL pgvector).
#[derive(Debug, Parser)]
#[command(name = "annbench", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress bars or per-point lines; results, warnings and errors only.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Also print each timed pass of `run` as a line (with its QPS and interference).
    #[arg(long, short, global = true)]
    verbose: bool,
}

// Parsed once per process: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// List, download, inspect, create and subset datasets; compute ground truth.
    #[command(subcommand, after_help = DATASETS_EXAMPLES)]
    Datasets(datasets::DatasetsCommand),
    /// The algorithms annbench runs: parameters, ranges, rules, servers.
    Algorithms(algorithms::AlgorithmsArgs),
    /// Check the database servers annbench connects to.
    #[command(subcommand)]
    Servers(servers::ServersCommand),
    /// Run a sweep of build and query parameters against one or more algorithms.
    #[command(after_help = RUN_EXAMPLES)]
    Run(run::RunArgs),
    /// Run a streaming runbook (inserts, deletes, replaces, searches) against one algorithm,
    /// with recall at each search step against exact truth over the live rows.
    #[command(after_help = STREAM_EXAMPLES)]
    Stream(stream::StreamArgs),
    /// Best QPS at each recall threshold, per algorithm.
    #[command(after_help = TABLE_EXAMPLES)]
    Table(report::TableArgs),
    /// Every stored point with every metric, as CSV, JSON or Markdown.
    #[command(after_help = EXPORT_EXAMPLES)]
    Export(report::ExportArgs),
    /// Relative QPS of one labelled run against another.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(report::CompareArgs),
    /// A series of labelled runs (nightly, per version): each point's and recall threshold's
    /// QPS, recall, server CPU and switches per query over the runs, with change points
    /// (Apache Otava's method) and a regression gate.
    #[command(after_help = HISTORY_EXAMPLES)]
    History(history::HistoryArgs),
    /// Write a self-contained HTML report (interactive charts, tables, metadata) that opens
    /// offline.
    Report(report::ReportArgs),
    /// Plot stored results as PNG or SVG (by the --output extension).
    Plot(report::PlotArgs),
    /// Generate and check streaming runbooks (big-ann-benchmarks' format) for `stream`.
    #[command(subcommand, after_help = RUNBOOK_EXAMPLES)]
    Runbook(runbook::RunbookCommand),
    /// Combine result stores (the shards of a sweep, runs from several nodes) into one.
    Merge(merge::MergeArgs),
    /// Print the shell completion script: annbench completions bash > /etc/bash_completion.d/annbench
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff): annbench man > annbench.1 (--dir DIR: one page per command).
    Man(shell::ManArgs),
}

const HISTORY_EXAMPLES: &str = "\
Examples:
  annbench history --dataset sift-128-euclidean --series 'nightly-*'
  annbench history --dataset sift-128-euclidean --order version --algorithm mariadb
  annbench history --dataset sift-128-euclidean --fail-on regression --p-value 0.001 --magnitude 5%
  annbench history --dataset sift-128-euclidean --format json -o history.json";

const RUN_EXAMPLES: &str = "\
Examples:
  annbench run --dataset sift-5k-128-euclidean --algorithm mariadb --algorithm pgvector
  annbench run --dataset glove-twitter-25-angular --algorithm pgvector \\
      --build m=16 --build ef_construction=64 --query ef_search=10,20,40 --clients 1,4
  annbench run --dataset my.hdf5 --config grid.yml --label mariadb-11.8 --dry-run";

const STREAM_EXAMPLES: &str = "\
Examples:
  annbench runbook generate simple --dataset sift-5k-128-euclidean --output simple.yaml
  annbench stream --dataset sift-5k-128-euclidean --runbook simple.yaml --algorithm pgvector
  annbench stream --dataset glove-25 --runbook big-ann.yaml --entry glove --algorithm mariadb \\
      --build m=16 --query ef_search=20,40";

const TABLE_EXAMPLES: &str = "\
Examples:
  annbench table --dataset sift-5k-128-euclidean
  annbench table --dataset sift-5k-128-euclidean --format blocks --base mariadb --recall 0.99,0.95
  annbench table --dataset sift-5k-128-euclidean --builds --format csv
  annbench table --dataset sift-5k-128-euclidean --by-clients";

const EXPORT_EXAMPLES: &str = "\
Examples:
  annbench export --dataset sift-5k-128-euclidean > points.csv
  annbench export --dataset sift-5k-128-euclidean --format json --output points.json
  annbench export --dataset sift-5k-128-euclidean --by-difficulty lid --bins 3
Columns and units: docs/vocabulary.md";

const COMPARE_EXAMPLES: &str = "\
Examples:
  annbench compare --dataset sift-5k-128-euclidean --base mariadb-11.4 --me mariadb-11.8
  annbench compare --dataset sift-5k-128-euclidean --base v1 --me v2 --noise 3% --format json";

const RUNBOOK_EXAMPLES: &str = "\
Examples:
  annbench runbook generate sliding-window --dataset random-xs-20-euclidean --steps 10 \\
      --output sliding.yaml
  annbench runbook generate expiration --dataset random-xs-20-euclidean --replace --seed 7
  annbench runbook check simple_runbook.yaml --dataset random-xs-20-euclidean --entry random-xs";

const DATASETS_EXAMPLES: &str = "\
Examples:
  annbench datasets list
  annbench datasets get fashion-mnist-784-euclidean
  annbench datasets info sift-5k-128-euclidean
  annbench datasets subset dbpedia-openai-1000k-angular --train 100000 --test 10000
  annbench datasets create my.npy --metric angular --name my-384-angular";

/// Entry point shared by the binary and the Python `annbench` command.
pub fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout and usage errors to stderr itself.
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if parse_only() {
        return check_only(cli.command);
    }
    out::set_verbosity(if cli.quiet {
        out::Verbosity::Quiet
    } else if cli.verbose {
        out::Verbosity::Verbose
    } else {
        out::Verbosity::Normal
    });
    if !cli.quiet {
        crate::dataset::bars::enable();
    }
    let result = match cli.command {
        Command::Datasets(cmd) => datasets::run(cmd),
        Command::Algorithms(args) => algorithms::run(args),
        Command::Servers(cmd) => servers::run(cmd),
        Command::Run(args) => run::run(args),
        Command::Stream(args) => stream::run(args),
        Command::Table(args) => report::table(args),
        Command::Export(args) => report::export(args),
        Command::Compare(args) => report::compare(args),
        Command::History(args) => history::run(args),
        Command::Report(args) => report::report(args),
        Command::Plot(args) => report::plot(args),
        Command::Runbook(cmd) => runbook::run(cmd),
        Command::Merge(args) => merge::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
    };
    // A write error on standard output other than a closed pipe fails the command.
    let result = result.and_then(|()| match out::finish() {
        None => Ok(()),
        Some(e) => Err(crate::Error::Io {
            context: "cannot write to standard output".into(),
            source: e,
        }),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // 128 + SIGINT, as shells report a command stopped by Ctrl-C; the command has said
        // what was kept.
        Err(crate::Error::Interrupted) => ExitCode::from(130),
        Err(crate::Error::Regression(text)) => {
            errln!("{text}");
            ExitCode::FAILURE
        }
        Err(err) => {
            print_error(&err);
            ExitCode::FAILURE
        }
    }
}

/// `error: top-level message` then `  caused by: ...` for each source.
fn print_error(err: &crate::Error) {
    let text = err.to_string();
    errln!("error: {text}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        // `Error::Io` already ends with its source's text.
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            errln!("  caused by: {cause_text}");
        }
        source = cause.source();
    }
}

/// `ANNBENCH_PARSE_ONLY=1` (hidden, for tests): parse and validate the arguments, then stop
/// without reading a dataset, touching a server or writing a file. The documentation walk
/// (`tests/python/test_docs_walk.py`) checks this way the documented command lines that are
/// too long to run in a test or need a cluster.
fn parse_only() -> bool {
    std::env::var_os("ANNBENCH_PARSE_ONLY").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The checks of [`parse_only`] beyond clap's: `run`'s options (`--shard I/N`). The
/// scheduler's variables are not read: only what the command line says is checked. Exit
/// status 0, or 2 (a usage error) with the message.
fn check_only(command: Command) -> ExitCode {
    let checked = match command {
        Command::Run(args) => args.options(&|_| None).map(drop),
        _ => Ok(()),
    };
    match checked {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            print_error(&err);
            ExitCode::from(2)
        }
    }
}
