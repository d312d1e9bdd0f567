//! The `annbench` command line: parse into validated options, call the library, print one
//! error chain. One file per subcommand group.

mod algorithms;
mod datasets;
mod merge;
mod out;
mod report;
mod run;
mod servers;

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
}

// Parsed once per process: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// List, download, inspect, create and subset datasets; compute ground truth.
    #[command(subcommand)]
    Datasets(datasets::DatasetsCommand),
    /// The algorithms annbench runs: parameters, ranges, rules, servers.
    Algorithms(algorithms::AlgorithmsArgs),
    /// Check the database servers annbench connects to.
    #[command(subcommand)]
    Servers(servers::ServersCommand),
    /// Run a sweep of build and query parameters against one or more algorithms.
    Run(run::RunArgs),
    /// Best QPS at each recall threshold, per algorithm.
    Table(report::TableArgs),
    /// Every stored point with every metric, as CSV, JSON or Markdown.
    Export(report::ExportArgs),
    /// Relative QPS of one labelled run against another.
    Compare(report::CompareArgs),
    /// Write a self-contained HTML report (interactive charts, tables, metadata) that opens
    /// offline.
    Report(report::ReportArgs),
    /// Plot stored results as PNG or SVG (by the --output extension).
    Plot(report::PlotArgs),
    /// Combine result stores (the shards of a sweep, runs from several nodes) into one.
    Merge(merge::MergeArgs),
}

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
    crate::dataset::bars::enable();
    let result = match cli.command {
        Command::Datasets(cmd) => datasets::run(cmd),
        Command::Algorithms(args) => algorithms::run(args),
        Command::Servers(cmd) => servers::run(cmd),
        Command::Run(args) => run::run(args),
        Command::Table(args) => report::table(args),
        Command::Export(args) => report::export(args),
        Command::Compare(args) => report::compare(args),
        Command::Report(args) => report::report(args),
        Command::Plot(args) => report::plot(args),
        Command::Merge(args) => merge::run(args),
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
