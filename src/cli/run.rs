//! `annbench run ...`: parse into [`SweepOptions`], run the sweep with indicatif progress,
//! print a summary table.

mod dry_run;
pub(crate) mod progress;

use super::out::{errln, outln};
use super::server_urls::ServerUrls;
use crate::backend::BackendOptions;
use crate::runner::{self, PassOrder, Progress, SweepOptions, SweepSummary};
use crate::{Error, Result, terminal};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Run a sweep of build and query parameters.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Dataset name (looked up in --data-dir) or path to an ann-benchmarks HDF5 file.
    #[arg(long)]
    pub dataset: String,
    #[arg(long = "algorithm", value_name = "NAME", help = algorithm_help(), value_parser = parse_algorithm)]
    pub algorithms: Vec<String>,
    /// Grid file replacing the built-in grid of the algorithm it names (repeatable).
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Neighbours per query (k).
    #[arg(long, default_value_t = 10, value_parser = parse_whole)]
    pub count: usize,
    /// Timed passes per point at least, after its recall pass; the figure is their median
    /// with a 95% interval (6 or more passes reach 95%), and every pass is stored.
    #[arg(long, default_value_t = runner::DEFAULT_RUNS, value_parser = parse_whole)]
    pub runs: usize,
    /// Shortest timed pass (clients cycle through the queries until it has passed), e.g. 1s,
    /// 500ms, 0 (one pass over the queries).
    #[arg(long, default_value = "1s", value_parser = parse_min_time, value_name = "DURATION")]
    pub min_time: Duration,
    /// Add passes until the QPS interval lies within +-this share of the median, e.g. 2%
    /// (bounded by --max-time).
    #[arg(long, value_parser = parse_share, value_name = "PERCENT")]
    pub target_ci: Option<f64>,
    #[command(flatten)]
    pub max_time: MaxTime,
    /// Build every index this many times and fold the build-to-build spread into the QPS
    /// interval (HNSW builds are randomised).
    #[arg(long, default_value_t = 1, value_parser = parse_whole)]
    pub rebuilds: usize,
    /// After each build point's warm passes, restart the server (one scripts/databases.sh
    /// manages) and measure each point once more, right after the restart: the first pass and
    /// the recall, stored under the label `<label>-cold` (or `cold`). A recall that differs
    /// from the one before the restart is a warning.
    #[arg(long)]
    pub restart: bool,
    /// Shares of each index's size to give its server, e.g. 100%,50%,25%,10%: after each
    /// build, restart the server (an instance scripts/databases.sh manages) with its caches at
    /// each share, read past the OS cache, and measure each point right after the restart
    /// (series mem<P>-cold) and warm (mem<P>). Not for Redis (all in memory). docs/memory.md.
    #[arg(long, value_parser = runner_memory_shares, value_name = "SHARES")]
    pub memory: Option<MemoryShares>,
    /// Pass order within a build: rounds (pass 1 of every point, then pass 2 of every point...,
    /// so drift affects all points alike) or points (each point finished before the next).
    #[arg(long, default_value = "rounds", value_parser = parse_order)]
    pub order: PassOrder,
    /// Concurrent client connections, e.g. 1,2,4,8: every point is measured with each.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = parse_whole)]
    pub clients: Vec<usize>,
    /// Result store directory.
    #[arg(
        long = "results",
        env = "ANNBENCH_RESULTS",
        default_value = "results",
        value_name = "DIR"
    )]
    pub results: PathBuf,
    /// Measure again and overwrite points that are already stored.
    #[arg(long)]
    pub force: bool,
    /// Go on after a failing point, build or algorithm; list the failures at the end and exit
    /// non-zero. Without it the first failure stops the sweep.
    #[arg(long)]
    pub keep_going: bool,
    /// What the points' storage reads should say: cached (the index answered from memory)
    /// or io-bound (from storage). Each point that says the other is a warning at the end
    /// (docs/server-cost.md).
    #[arg(long, value_parser = parse_expect, value_name = "cached|io-bound")]
    pub expect: Option<crate::results::Storage>,
    /// Label stored with every point, e.g. mariadb-11.8 (for `annbench compare`).
    #[arg(long)]
    pub label: Option<String>,
    /// Longest one index build may take, e.g. 600, 90s, 10m, 2h.
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Directory of dataset files.
    #[arg(long, default_value = "data", env = "ANNBENCH_DATA_DIR")]
    pub data_dir: PathBuf,
    /// Override build values in every group, e.g. --build M=8,16 (repeatable).
    #[arg(long = "build", value_name = "KEY=V1,V2")]
    pub build: Vec<String>,
    /// Override query values in every group, e.g. --query ef_search=10,20 (repeatable).
    #[arg(long = "query", value_name = "KEY=V1,V2")]
    pub query: Vec<String>,
    /// One URL flag per database (`--mariadb URL`, `--postgres URL`, ...).
    #[command(flatten)]
    pub servers: ServerUrls,
    /// MariaDB database and PostgreSQL schema that hold annbench's tables (default annbench);
    /// sweeps that share a server pair at the same time need one each.
    #[arg(long, env = "ANNBENCH_SCHEMA", value_name = "NAME")]
    pub schema: Option<String>,
    /// Run shard I of N (1 <= I <= N): a cost-balanced share of the plan's index builds, the N
    /// shards covering the plan once. Without it: ANNBENCH_SHARD=I/N, a Slurm array task or a
    /// Kubernetes Indexed Job pod picks the shard (docs/distributed.md); 1/1 runs everything.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// List the builds and points this run would measure (with --shard: this shard's, and how
    /// the plan splits) and which are stored; then the server memory each build needs (when the
    /// servers answer) and time estimates from earlier results. Builds and measures nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: first time one build and one query point of each algorithm on the first
    /// ROWS train rows (e.g. 20000), on the servers, and estimate from that too.
    #[arg(long, value_name = "ROWS", requires = "dry_run")]
    pub calibrate: Option<usize>,
}

/// `--max-time`, one definition for every command that times passes (`run`, `stream`).
#[derive(Debug, Args)]
pub struct MaxTime {
    /// Time of a point's timed passes (per build) after which no extra pass starts: extra
    /// passes re-measure points flagged for interference (run), stalls or a wide interval,
    /// and come from --target-ci (run). Default: twice --runs x --min-time.
    #[arg(long, value_parser = parse_min_time, value_name = "DURATION")]
    pub max_time: Option<Duration>,
}

/// `--algorithm`'s help, listing the registered algorithms.
/// A registered algorithm id; anything else is a usage error (exit status 2) listing them.
pub(crate) fn parse_algorithm(name: &str) -> std::result::Result<String, String> {
    crate::backend::find_algorithm(name)
        .map(|a| a.name.to_string())
        .map_err(|e| e.to_string())
}

fn algorithm_help() -> String {
    format!(
        "Algorithm to sweep (repeatable): {}; `annbench algorithms` describes each",
        crate::backend::algorithm_names()
    )
}

/// `600`, `90s`, `500ms`, `10m`, `2h` -> seconds.
fn parse_seconds(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    // The unit is a suffix (`1e3s` is a thousand seconds, not `1` and a unit `e3s`).
    let (num, unit) = ["ms", "s", "m", "h"]
        .iter()
        .find_map(|u| t.strip_suffix(u).map(|n| (n, *u)))
        .unwrap_or((t, "s"));
    let n: f64 = num.trim().parse().map_err(|_| {
        format!("'{text}' is not a duration like 600, 90s, 500ms, 10m or 2h (units ms, s, m, h)")
    })?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => n,
    };
    if secs.is_finite() && (0.0..=1e9).contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "'{text}': give a duration from 0 to 1e9 s (about 31 years)"
        ))
    }
}

/// A whole number of 0 or more (`--count`, `--runs`, `--batch`, ...): the message says what
/// is wrong in words, not the parser's (`invalid digit found in string`).
pub(crate) fn parse_whole(text: &str) -> std::result::Result<usize, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<usize>() {
        return Ok(n);
    }
    Err(match t.parse::<f64>() {
        Ok(x) if x < 0.0 => format!("'{text}' is negative: give a whole number of 0 or more"),
        Ok(x) if x.fract() == 0.0 && x.is_finite() => {
            format!("'{text}' is too large: give a whole number written in digits, e.g. 1000")
        }
        Ok(_) => format!("'{text}' is not a whole number: give digits only, e.g. 1000"),
        Err(_) if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) => {
            format!("'{text}' is too large: give a smaller whole number")
        }
        Err(_) => format!("'{text}' is not a whole number: give digits only, e.g. 1000"),
    })
}

/// A positive duration (`--timeout`).
pub(crate) fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let s = parse_seconds(text)?;
    if s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(format!("'{text}': the timeout must be positive"))
    }
}

/// A duration of zero or more (`--min-time`, `--max-time`).
pub(crate) fn parse_min_time(text: &str) -> std::result::Result<Duration, String> {
    parse_seconds(text).map(Duration::from_secs_f64)
}

/// `2%` or `0.02` -> 0.02.
fn parse_share(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v * scale > 0.0 && v * scale < 1.0 => Ok(v * scale),
        _ => Err(format!(
            "'{text}': give a share of the median such as 2% or 0.02 (above 0, below 100%)"
        )),
    }
}

fn parse_expect(text: &str) -> std::result::Result<crate::results::Storage, String> {
    text.parse().map_err(|e: Error| e.to_string())
}

fn parse_order(text: &str) -> std::result::Result<PassOrder, String> {
    text.parse().map_err(|e: Error| e.to_string())
}

impl RunArgs {
    /// The library options these arguments stand for; the shard from `--shard` or the
    /// scheduler's variables in `var`.
    pub fn options(self, var: &dyn Fn(&str) -> Option<String>) -> Result<SweepOptions> {
        let shard = crate::shard::detect(self.shard.as_deref(), var)?;
        Ok(SweepOptions {
            dataset: self.dataset,
            data_dir: self.data_dir,
            algorithms: self.algorithms,
            config_files: self.configs,
            build_overrides: self.build,
            query_overrides: self.query,
            count: self.count,
            runs: self.runs,
            min_time: self.min_time,
            target_ci: self.target_ci,
            max_time: self.max_time.max_time,
            rebuilds: self.rebuilds,
            restart: self.restart,
            memory: self.memory.map(|m| m.0).unwrap_or_default(),
            order: self.order,
            watch_interference: true,
            clients: self.clients,
            results_dir: self.results,
            force: self.force,
            label: self.label,
            timeout: self.timeout,
            shard,
            keep_going: self.keep_going,
            backend: self.servers.apply(BackendOptions {
                schema: self.schema,
                build_timeout: self.timeout,
                ..BackendOptions::default()
            })?,
        })
    }
}

pub fn run(args: RunArgs) -> Result<()> {
    let (dry, calibrate, expect) = (args.dry_run, args.calibrate, args.expect);
    let opts = args.options(&|name| std::env::var(name).ok())?;
    if dry {
        // Every check the run makes before server work fails the dry run the same way.
        runner::dryrun::check(&opts)?;
        dry_run::print(&opts)?;
        return dry_run::estimates(&opts, calibrate);
    }
    if let Some(shard) = &opts.shard {
        errln!("shard {shard} (from {})", shard.source);
    }
    let progress = progress::CliProgress::new();
    let summary = runner::run_sweep(&opts, &progress);
    progress.clear();
    let summary = match summary {
        // After a stop signal, an error is the stop's doing (a statement cancelled, or a
        // connection to a server that did not let go closed by the watchdog).
        Err(_) if progress.cancelled() => {
            errln!("interrupted: every point measured so far is stored; run again to resume");
            return Err(Error::Interrupted);
        }
        Err(Error::Interrupted) => {
            errln!("interrupted: every point measured so far is stored; run again to resume");
            return Err(Error::Interrupted);
        }
        other => other?,
    };
    let mut summary = summary;
    if let Some(expect) = expect {
        let points = summary.points.iter().map(|p| &p.result);
        let warnings = runner::expect::warnings(points, expect);
        summary.warnings.extend(warnings);
    }
    print_summary(&summary, &opts);
    if summary.failures.is_empty() {
        return Ok(());
    }
    Err(Error::Backend(format!(
        "{} part(s) of the sweep failed (listed above); every other point is stored, and a \
         rerun measures only what is missing",
        summary.failures.len()
    )))
}

fn print_summary(summary: &SweepSummary, opts: &SweepOptions) {
    print_points(summary, opts);
    if !summary.failures.is_empty() {
        outln!("\nfailed ({}):", summary.failures.len());
        for f in &summary.failures {
            outln!("  {}: {}", f.what(), f.error);
        }
    }
    for w in &summary.warnings {
        errln!("warning: {w}");
    }
}

fn print_points(summary: &SweepSummary, opts: &SweepOptions) {
    if summary.points.is_empty() {
        outln!("no points");
        return;
    }
    let rows: Vec<(&crate::results::PointResult, String, bool)> = summary
        .points
        .iter()
        .map(|p| {
            let r = &p.result;
            let args: Vec<String> = [&r.build_args, &r.query_args]
                .iter()
                .filter(|a| !a.is_empty())
                .map(|a| crate::params::describe(a))
                .collect();
            (r, args.join(", "), p.skipped)
        })
        .collect();
    // Columns as wide as their longest entry, so long algorithm names stay aligned.
    let wa = rows.iter().map(|r| r.0.algorithm.len()).fold(9, usize::max);
    let wp = rows.iter().map(|r| r.1.len()).fold(10, usize::max);
    let intervals: Vec<String> = rows.iter().map(|r| interval_text(r.0)).collect();
    let wi = intervals.iter().map(String::len).fold(10, usize::max);
    // A label column when some point has one (named servers, --label).
    let labelled = rows.iter().any(|r| r.0.label.is_some());
    let wl = rows
        .iter()
        .filter_map(|r| r.0.label.as_ref().map(|l| terminal::for_terminal(l).len()))
        .fold(5, usize::max);
    let label_cell = |l: Option<&str>| match labelled {
        true => format!("{:<wl$} ", terminal::for_terminal(l.unwrap_or("-"))),
        false => String::new(),
    };
    outln!(
        "\n{}{:<wa$} {:<wp$} {:>7} {:>8} {:>11} {:<wi$} {:>6} {:>9} {:>9} {:>9}",
        label_cell(Some("label")),
        "algorithm",
        "parameters",
        "clients",
        "recall",
        "QPS",
        "95% CI",
        "passes",
        "p50 ms",
        "p99 ms",
        "isecs"
    );
    for ((r, args, skipped), ci) in rows.iter().zip(&intervals) {
        let m = &r.metrics;
        let mark = if m.flags.is_empty() { "" } else { "~" };
        let qps = format!("{mark}{:.1}", m.qps);
        outln!(
            "{}{:<wa$} {:<wp$} {:>7} {:>8.4} {qps:>11} {ci:<wi$} {:>6} {:>9.3} {:>9.3} {:>9.2}{}",
            label_cell(r.label.as_deref()),
            r.algorithm,
            args,
            r.clients,
            m.recall,
            m.passes,
            m.latency_p50 * 1e3,
            m.latency_p99 * 1e3,
            r.build_seconds,
            if *skipped { "  (stored)" } else { "" }
        );
    }
    let noise = runner::noise::Noise::of(&summary.points);
    let lines = noise.lines();
    if !lines.is_empty() {
        outln!();
    }
    for line in lines {
        outln!("{line}");
    }
    outln!(
        "\n{} point(s) measured, {} already stored; results in {}",
        summary.measured(),
        summary.points.len() - summary.measured(),
        opts.results_dir.display()
    );
}

/// `[low, high]` (with its coverage below 95%), or `-` without an interval (one pass).
fn interval_text(p: &crate::results::PointResult) -> String {
    match p.metrics.qps_interval() {
        Some(i) => crate::report::figure_text::interval_text(i, 1),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("600"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("0").is_err() && parse_duration("5d").is_err());
        assert_eq!(parse_min_time("0"), Ok(Duration::ZERO));
        assert_eq!(parse_min_time("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_min_time("-1").is_err());
    }

    #[test]
    fn shares_parse() {
        assert_eq!(parse_share("2%"), Ok(0.02));
        assert_eq!(parse_share("0.05"), Ok(0.05));
        assert!(parse_share("0").is_err() && parse_share("150%").is_err());
        assert!(parse_share("x").is_err());
    }
}

#[cfg(test)]
mod number_tests {
    use super::{parse_min_time, parse_whole};
    use std::time::Duration;

    #[test]
    fn numbers_and_durations_are_refused_in_words() {
        // Once clap's `invalid digit found in string`, and `unit must be ms, s, m or h` for a
        // duration whose unit was s.
        assert_eq!(parse_whole("1000"), Ok(1000));
        for (text, want) in [
            ("1e40", "too large"),
            ("2.5", "not a whole number"),
            ("-3", "negative"),
            ("99999999999999999999999", "too large"),
            ("x", "not a whole number"),
        ] {
            let e = parse_whole(text).unwrap_err();
            assert!(
                e.contains(want) && !e.contains("invalid digit"),
                "{text}: {e}"
            );
        }
        assert_eq!(parse_min_time("1e3s"), Ok(Duration::from_secs(1000)));
        assert_eq!(parse_min_time("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_min_time("2m"), Ok(Duration::from_secs(120)));
        let e = parse_min_time("1e300s").unwrap_err();
        assert!(e.contains("from 0 to 1e9 s") && !e.contains("unit"), "{e}");
        let e = parse_min_time("5x").unwrap_err();
        assert!(e.contains("not a duration"), "{e}");
    }
}

/// `--memory 100%,50%`: the shares of the index size, each in (0, 100%] and once.
#[derive(Debug, Clone)]
pub struct MemoryShares(pub Vec<f64>);

fn runner_memory_shares(s: &str) -> std::result::Result<MemoryShares, String> {
    crate::runner::memory_shares(s).map(MemoryShares)
}
