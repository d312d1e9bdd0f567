//! `annbench table | export | compare | report`: parse options, load the stored points of one
//! dataset and count, run the report, write it to stdout or `--output`.

use super::out::errln;
use crate::report::build_table::{build_rows_table, build_table};
use crate::report::clients::{clients_rows_table, clients_table};
use crate::report::html::{ReportOptions, html_report, write_report};
use crate::report::pareto::{frontier_table, pareto};
use crate::report::plot::{PlotKind, PlotOptions};
use crate::report::render::{Format, render};
use crate::report::select::select;
use crate::report::series::Distinct;
use crate::report::{CompareOptions, Stat, apply_stat, best_at_recall, compare_with, export_table};
use crate::results::PointResult;
use clap::Args;
use std::path::{Path, PathBuf};

/// `--recall` default: the thresholds of the published tables
/// ([`crate::report::DEFAULT_THRESHOLDS`]).
const THRESHOLDS: &str = "1.0,0.99,0.98,0.97,0.96,0.95";

/// Where the points come from and which of them to use (shared by the three commands).
#[derive(Debug, Args)]
pub struct Source {
    /// Dataset name, as given to `annbench run`.
    #[arg(long)]
    pub dataset: String,
    /// k, the number of neighbours the runs asked for.
    #[arg(long, default_value_t = 10)]
    pub count: usize,
    /// The result store.
    #[arg(
        long,
        env = "ANNBENCH_RESULTS",
        default_value = "results",
        value_name = "DIR"
    )]
    pub results: PathBuf,
    /// Where datasets live (ground truth for ann-benchmarks result files).
    #[arg(long, env = "ANNBENCH_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Only points measured with this many clients.
    #[arg(long)]
    pub clients: Option<usize>,
    /// Write to this file instead of standard output (`-`: standard output). The file is
    /// replaced whole or not at all.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TableArgs {
    #[command(flatten)]
    pub source: Source,
    /// Recall thresholds, highest first.
    #[arg(long, value_delimiter = ',', default_value = THRESHOLDS, value_parser = parse_recall)]
    pub recall: Vec<f64>,
    /// markdown, csv, json, or blocks: one plain-text block per recall threshold, fastest
    /// first, QPS relative to --base, as the published comparisons print it.
    #[arg(long, default_value = "markdown", value_parser = parse_table_format)]
    pub format: TableFormat,
    /// Add each row's QPS relative to this algorithm's (e.g. pgvector) or run label's at the
    /// same threshold.
    #[arg(long, value_name = "ALGORITHM_OR_LABEL")]
    pub base: Option<String>,
    /// Only points of this run label.
    #[arg(long)]
    pub label: Option<String>,
    /// Show QPS vs clients at fixed parameters instead (runs made with --clients 1,2,4...).
    #[arg(long, conflicts_with_all = ["builds", "base"])]
    pub by_clients: bool,
    /// Show the index build table instead (M, ef_construction, isecs, server CPU, sizes,
    /// load seconds).
    #[arg(long, conflicts_with_all = ["base", "pareto"])]
    pub builds: bool,
    /// Add the database server's cost per query: CPU ms and context switches (local servers),
    /// execution ms, client + network ms, buffer hits and reads (docs/server-cost.md).
    #[arg(long, conflicts_with_all = ["by_clients", "builds", "pareto"])]
    pub server_cost: bool,
    /// Show QPS, recall and storage reads per query against the share of the index in
    /// memory instead, cold and warm, one row per algorithm and share (`run --memory`;
    /// docs/memory.md).
    #[arg(long, conflicts_with_all = ["by_clients", "builds", "pareto", "server_cost", "base"])]
    pub by_memory: bool,
    /// Show each series' Pareto frontier (QPS vs recall) instead, by recall ascending.
    #[arg(long, conflicts_with_all = ["base", "by_clients"])]
    pub pareto: bool,
    /// The QPS figure: median (of the passes, with its 95% interval and tie marking) or best
    /// (the best pass, as ann-benchmarks' published tables; no interval).
    #[arg(long, default_value = "median", value_parser = parse_stat)]
    pub stat: Stat,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub source: Source,
    /// csv, json (records; full precision) or markdown.
    #[arg(long, default_value = "csv", value_parser = parse_format)]
    pub format: Format,
    /// Only points of this run label.
    #[arg(long)]
    pub label: Option<String>,
    /// Split every point by query difficulty: lid (local intrinsic dimensionality) or rc
    /// (relative contrast); one row per difficulty bin, easiest first, with the recall and
    /// latency of its queries. Reads the dataset's test vectors and ground truth.
    #[arg(long, value_name = "MEASURE")]
    pub by_difficulty: Option<crate::report::difficulty::Measure>,
    /// With --by-difficulty: the number of equal-count bins.
    #[arg(long, default_value_t = 3, requires = "by_difficulty")]
    pub bins: usize,
    /// The streaming runs (`annbench stream`) of the dataset: one row per step (and query
    /// point at a search step). The default when the dataset has streaming runs and no sweep
    /// points.
    #[arg(long, conflicts_with = "by_difficulty")]
    pub streams: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub source: Source,
    /// Label of the base run.
    #[arg(long)]
    pub base: String,
    /// Label of the run compared with the base. Repeat it (or give labels separated by commas)
    /// for the matrix: one column per server, one row per matched point or recall threshold.
    #[arg(long, required = true, value_delimiter = ',')]
    pub me: Vec<String>,
    /// Recall targets of the matched-recall comparison.
    #[arg(long, value_delimiter = ',', default_value = THRESHOLDS, value_parser = parse_recall)]
    pub recall: Vec<f64>,
    /// markdown, csv, json (json: every pair with its interval and verdict, the summary, the
    /// pairing, the settings that differ and the notes), or blocks: the matrix as plain-text
    /// blocks, one per match kind and recall threshold.
    #[arg(long, default_value = "markdown", value_parser = parse_table_format)]
    pub format: TableFormat,
    /// Differences smaller than this are "within noise" for pairs measured apart (the
    /// unpaired rule): a pair is faster or slower only when the whole 95% interval of its
    /// ratio lies beyond +-noise. E.g. 5% or 0.05.
    #[arg(long, default_value = "5%", value_parser = parse_noise)]
    pub noise: f64,
    /// The same for paired pairs, whose servers ran interleaved in one run (round by round,
    /// docs/methodology.md): pairing cancels the machine's drift, so smaller differences
    /// are called. E.g. 1% or 0.01.
    #[arg(long, default_value = "1%", value_parser = parse_noise)]
    pub paired_noise: f64,
    /// Compare medians (with intervals) or best passes (threshold only).
    #[arg(long, default_value = "median", value_parser = parse_stat)]
    pub stat: Stat,
    /// Judge pairs with a side measured under heavy interference or with a stalled pass by
    /// their intervals too (by default their verdict is "disturbed": no difference claimed).
    #[arg(long)]
    pub judge_disturbed: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Dataset name, as given to `annbench run`.
    #[arg(long)]
    pub dataset: String,
    /// k, the number of neighbours the runs asked for.
    #[arg(long, default_value_t = 10)]
    pub count: usize,
    /// The result store.
    #[arg(
        long,
        env = "ANNBENCH_RESULTS",
        default_value = "results",
        value_name = "DIR"
    )]
    pub results: PathBuf,
    /// Where datasets live (ground truth for ann-benchmarks result files).
    #[arg(long, env = "ANNBENCH_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// The HTML file to write.
    #[arg(long, short, default_value = "report.html")]
    pub output: PathBuf,
    /// Only points of this run label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only points measured with this many clients.
    #[arg(long)]
    pub clients: Option<usize>,
    /// Recall thresholds of the best-QPS table, highest first.
    #[arg(long, value_delimiter = ',', default_value = THRESHOLDS, value_parser = parse_recall)]
    pub recall: Vec<f64>,
    /// Label the other labels are compared with (default: the label measured first).
    #[arg(long)]
    pub base: Option<String>,
    /// Page title (default: "annbench: DATASET (k=COUNT)").
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Which plot.
    #[arg(value_enum)]
    pub kind: PlotKind,
    /// Dataset name, as given to `annbench run`.
    #[arg(long)]
    pub dataset: String,
    /// Image file: .png or .svg.
    #[arg(long, short)]
    pub output: PathBuf,
    /// k, the number of neighbours the runs asked for.
    #[arg(long, default_value_t = 10)]
    pub count: usize,
    /// The result store.
    #[arg(
        long,
        env = "ANNBENCH_RESULTS",
        default_value = "results",
        value_name = "DIR"
    )]
    pub results: PathBuf,
    /// Where datasets live (ground truth for ann-benchmarks result files).
    #[arg(long, env = "ANNBENCH_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Only points of this run label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only points measured with this many clients.
    #[arg(long)]
    pub clients: Option<usize>,
    /// qps-recall: also draw every point off the frontier.
    #[arg(long)]
    pub raw: bool,
    /// qps-clients: best QPS at recall >= this instead of fixed parameters; history: the one
    /// recall threshold drawn (default 0.99, 0.95 and 0.9).
    #[arg(long, value_parser = parse_recall)]
    pub recall: Option<f64>,
    /// relative-qps: label of the base run.
    #[arg(long)]
    pub base: Option<String>,
    /// relative-qps: label of the run compared with the base.
    #[arg(long)]
    pub me: Option<String>,
    /// history: the labels of the series or globs, in order (as `annbench history
    /// --series: comma-separated or repeated, a label that holds a comma named whole);
    /// default: every label, by start time.
    #[arg(long, value_name = "LABELS")]
    pub series: Vec<String>,
    /// history: given, time or version (as `annbench history --order`).
    #[arg(long, value_parser = clap::value_parser!(crate::report::history::order::Order))]
    pub order: Option<crate::report::history::order::Order>,
    /// history: qps, recall, server_cpu_per_query or server_switches_per_query.
    #[arg(long, default_value = "qps", value_parser = clap::value_parser!(crate::report::history::HistMetric))]
    pub metric: crate::report::history::HistMetric,
    /// history: thresholds (best QPS at each recall threshold), points (fixed parameters) or
    /// all.
    #[arg(long, default_value = "thresholds", value_parser = clap::value_parser!(crate::report::html::history::Lines))]
    pub lines: crate::report::html::history::Lines,
    /// history: analyse runs from several client hosts together.
    #[arg(long, default_value = "same", value_parser = ["same", "any"])]
    pub hosts: String,
    /// Plot title.
    #[arg(long)]
    pub title: Option<String>,
    /// Width in inches (times --dpi gives pixels).
    #[arg(long, default_value_t = 8.0)]
    pub width: f64,
    /// Height in inches.
    #[arg(long, default_value_t = 5.5)]
    pub height: f64,
    /// Pixels per inch.
    #[arg(long, default_value_t = 100)]
    pub dpi: u32,
}

/// `table --format`: a rendering of the table, or the published blocks layout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableFormat {
    Table(Format),
    Blocks,
}

fn parse_table_format(s: &str) -> Result<TableFormat, String> {
    if s.eq_ignore_ascii_case("blocks") {
        Ok(TableFormat::Blocks)
    } else {
        parse_format(s)
            .map(TableFormat::Table)
            .map_err(|e| e.replace("markdown, csv or json", "markdown, csv, json or blocks"))
    }
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse().map_err(|e: crate::Error| e.to_string())
}

fn parse_stat(s: &str) -> Result<Stat, String> {
    s.parse().map_err(|e: crate::Error| e.to_string())
}

/// `5%` or `0.05` -> 0.05 (zero allowed: call every significant difference).
pub(super) fn parse_noise(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if (0.0..1.0).contains(&(v * scale)) => Ok(v * scale),
        _ => Err(format!(
            "'{text}': give a share such as 5% or 0.05 (0 to below 100%)"
        )),
    }
}

pub fn table(args: TableArgs) -> crate::Result<()> {
    let src = &args.source;
    // --by-memory: --label names the run whose share series (`<label>-mem50`, ...) to show.
    let label = args.label.as_deref().filter(|_| !args.by_memory);
    let mut points = select(load(src)?, label, src.clients)?;
    if let (true, Some(run)) = (args.by_memory, args.label.as_deref()) {
        points.retain(|p| crate::report::memory::run_label(p).as_deref() == Some(run));
    }
    apply_stat(&mut points, args.stat);
    let distinct = Distinct::of(&points);
    let format = match args.format {
        TableFormat::Table(f) => f,
        TableFormat::Blocks => return blocks(&args, &points),
    };
    let table = if args.by_memory {
        crate::report::memory::memory_table(&points).ok_or_else(|| match &args.label {
            Some(l) => crate::Error::Config(format!(
                "--label {l}: no --memory series of that run (series `{l}-mem<P>`); leave out \
                 --label to see every run's"
            )),
            None => crate::Error::Config(format!(
                "no point of {} was measured with --memory: run `annbench run --dataset {} \
                 --memory 100%,50%,25%,10%` on an instance scripts/databases.sh manages first \
                 (docs/memory.md)",
                src.dataset, src.dataset
            )),
        })?
    } else if args.by_clients {
        let groups = clients_table(&points);
        if groups.is_empty() {
            return Err(crate::Error::Config(format!(
                "no parameter set of {} was measured with more than one client count: run \
                 `annbench run --dataset {} --clients 1,2,4` first",
                src.dataset, src.dataset
            )));
        }
        clients_rows_table(&groups, distinct.labels)
    } else if args.pareto {
        frontier_table(&pareto(&points), distinct)
    } else if args.builds {
        build_rows_table(&build_table(&points), distinct)
    } else if crate::report::filtered::any_filtered(&points) {
        // Filtered points: one table per selectivity (points at different selectivities
        // answer different questions).
        crate::report::filtered::selectivity_table(&points, &args.recall, args.base.as_deref())?
    } else {
        let mut t = best_at_recall(&points, &args.recall, args.base.as_deref())?;
        t.server_cost = args.server_cost;
        t.to_table()
    };
    emit(src, &render(&table, format)?)
}

/// `table --format blocks`: the best-QPS-at-recall table in the published layout.
fn blocks(args: &TableArgs, points: &[PointResult]) -> crate::Result<()> {
    let other = [
        (args.by_clients, "--by-clients"),
        (args.by_memory, "--by-memory"),
        (args.builds, "--builds"),
        (args.pareto, "--pareto"),
        (args.server_cost, "--server-cost"),
    ];
    if let Some((_, flag)) = other.iter().find(|(on, _)| *on) {
        return Err(crate::Error::Config(format!(
            "--format blocks shows the best QPS at each recall; {flag} has no blocks layout: \
             drop {flag} or use --format markdown, csv or json"
        )));
    }
    if crate::report::filtered::any_filtered(points) {
        return Err(crate::Error::Config(
            "--format blocks does not lay out filtered points (one table per selectivity); \
             use --format markdown, csv or json"
                .into(),
        ));
    }
    let table = best_at_recall(points, &args.recall, args.base.as_deref())?;
    let text = crate::report::blocks::blocks_text(&table, args.base.as_deref());
    emit(&args.source, &text)
}

pub fn export(args: ExportArgs) -> crate::Result<()> {
    let src = &args.source;
    let key = crate::results::dataset_key(&src.dataset);
    let streams = crate::results::stream::load_streams(&src.results, &key, src.count)?;
    let has_points = crate::results::load_points(&src.results, &key, src.count, &src.data_dir)
        .map(|p| !p.is_empty())
        .unwrap_or(true);
    if args.streams || (!has_points && !streams.is_empty()) {
        let runs: Vec<_> = streams
            .into_iter()
            .filter(|r| args.label.is_none() || r.identity.label == args.label)
            .filter(|r| src.clients.is_none_or(|c| r.identity.clients == c))
            .collect();
        if runs.is_empty() {
            return Err(crate::Error::Results(format!(
                "no streaming runs for dataset '{}' with k={} in {}: run `annbench stream \
                 --dataset {} --runbook FILE --algorithm NAME` first",
                src.dataset,
                src.count,
                src.results.display(),
                src.dataset
            )));
        }
        let table = crate::report::stream::stream_table(&runs);
        return emit(src, &render(&table, args.format)?);
    }
    if !streams.is_empty() {
        errln!(
            "{} streaming run(s) of '{}' are not in this export: --streams exports their steps",
            streams.len(),
            src.dataset
        );
    }
    let points = select(load(src)?, args.label.as_deref(), src.clients)?;
    let table = match args.by_difficulty {
        None => export_table(&points),
        Some(measure) => {
            let path = src.data_dir.join(format!("{}.hdf5", src.dataset));
            let (d, gt) = crate::dataset::difficulty::of_file(&path)?.ok_or_else(|| {
                crate::Error::Dataset(format!(
                    "{}: no ground truth to rank queries by difficulty; compute it with \
                     `annbench datasets groundtruth {}`",
                    path.display(),
                    src.dataset
                ))
            })?;
            crate::report::difficulty::split_table(
                &points,
                gt.distances.view(),
                &d,
                measure,
                args.bins,
            )?
        }
    };
    emit(src, &render(&table, args.format)?)
}

pub fn compare(args: CompareArgs) -> crate::Result<()> {
    let src = &args.source;
    let mut points = select(load(src)?, None, src.clients)?;
    apply_stat(&mut points, args.stat);
    let opts = CompareOptions {
        thresholds: args.recall.clone(),
        noise: args.noise,
        paired_noise: args.paired_noise,
        stat: args.stat,
        judge_disturbed: args.judge_disturbed,
        ..CompareOptions::default()
    };
    // One server: the pairs in full; several (or blocks): the matrix.
    let text = match (args.me.as_slice(), args.format) {
        ([me], TableFormat::Table(format)) => {
            compare_with(&points, &args.base, me, &opts)?.render(format)?
        }
        (mes, format) => {
            let m = crate::report::matrix(&points, &args.base, mes, &opts)?;
            match format {
                TableFormat::Table(f) => m.render(f)?,
                TableFormat::Blocks => m.blocks_text(),
            }
        }
    };
    emit(src, &text)
}

pub fn report(args: ReportArgs) -> crate::Result<()> {
    let src = Source {
        dataset: args.dataset.clone(),
        count: args.count,
        results: args.results.clone(),
        data_dir: args.data_dir.clone(),
        clients: args.clients,
        output: Some(args.output.clone()),
    };
    let key = crate::results::dataset_key(&args.dataset);
    let streams = crate::results::stream::load_streams(&args.results, &key, args.count)?;
    let points = match load(&src) {
        // A dataset with streaming runs alone: their timeline alone.
        Err(_) if !streams.is_empty() => Vec::new(),
        other => select(other?, args.label.as_deref(), args.clients)?,
    };
    let n = points.len();
    let options = ReportOptions {
        thresholds: args.recall.clone(),
        base_label: args.base.clone(),
        title: args.title.clone(),
        command: Some(report_command(&args)),
        streams,
    };
    let runs = options.streams.len();
    let html = html_report(points, &options)?;
    write_report(&args.output, &html)?;
    let streams = if runs > 0 {
        format!(", {runs} streaming run(s)")
    } else {
        String::new()
    };
    println!(
        "wrote {} ({} kB, {n} points{streams})",
        args.output.display(),
        html.len().div_ceil(1000)
    );
    Ok(())
}

pub fn plot(args: PlotArgs) -> crate::Result<()> {
    let px = |inches: f64, what: &str| {
        let px = inches * f64::from(args.dpi);
        if px.is_finite() && (50.0..=20_000.0).contains(&px) {
            Ok(px.round() as u32)
        } else {
            Err(crate::Error::Config(format!(
                "--{what} {inches} at --dpi {}: the image would be {px:.0} pixels; give a \
                 size between 50 and 20000 pixels",
                args.dpi
            )))
        }
    };
    let size = (px(args.width, "width")?, px(args.height, "height")?);
    let src = Source {
        dataset: args.dataset.clone(),
        count: args.count,
        results: args.results.clone(),
        data_dir: args.data_dir.clone(),
        clients: args.clients,
        output: Some(args.output.clone()),
    };
    let points = select(load(&src)?, args.label.as_deref(), args.clients)?;
    let options = PlotOptions {
        kind: args.kind,
        raw: args.raw,
        recall: args.recall,
        base: args.base,
        me: args.me,
        title: args.title,
        size,
        history: crate::report::plot::HistoryPlot {
            options: crate::report::history::HistoryOptions {
                thresholds: args
                    .recall
                    .map_or(crate::report::history::DEFAULT_THRESHOLDS.to_vec(), |r| {
                        vec![r]
                    }),
                order: args
                    .order
                    .unwrap_or(crate::report::history::order::Order::default_for(
                        &args.series,
                    )),
                series: args.series,
                hosts_any: args.hosts == "any",
                ..Default::default()
            },
            metric: args.metric,
            lines: args.lines,
        },
    };
    crate::report::plot::plot(points, &options, &args.output)?;
    println!("wrote {}", args.output.display());
    Ok(())
}

/// The command line that makes the same report (shown in its footer).
fn report_command(args: &ReportArgs) -> String {
    let mut cmd = format!("annbench report --dataset {}", args.dataset);
    if args.count != 10 {
        cmd.push_str(&format!(" --count {}", args.count));
    }
    cmd.push_str(&format!(" --results {}", args.results.display()));
    if let Some(l) = &args.label {
        cmd.push_str(&format!(" --label {l}"));
    }
    if let Some(c) = args.clients {
        cmd.push_str(&format!(" --clients {c}"));
    }
    if args.recall != crate::report::DEFAULT_THRESHOLDS {
        let r: Vec<String> = args.recall.iter().map(f64::to_string).collect();
        cmd.push_str(&format!(" --recall {}", r.join(",")));
    }
    if let Some(b) = &args.base {
        cmd.push_str(&format!(" --base {b}"));
    }
    cmd
}

/// A recall threshold: above 0 and at most 1 (a usage error otherwise, as a bad flag is).
pub(super) fn parse_recall(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 1.0 => Ok(r),
        _ => Err(format!(
            "'{text}': a recall threshold is above 0 and at most 1, e.g. 0.95"
        )),
    }
}

/// The stored points of the dataset and count; an error naming the directory when none.
pub(super) fn load(src: &Source) -> crate::Result<Vec<PointResult>> {
    // An output that cannot be written fails before any work.
    if let Some(path) = output_file(src) {
        crate::fsutil::check_report_output(path, "the output")?;
    }
    let key = crate::results::dataset_key(&src.dataset);
    let points = crate::results::load_points(&src.results, &key, src.count, &src.data_dir)?;
    if points.is_empty() {
        return Err(crate::Error::Results(format!(
            "no results for dataset '{}' with k={} in {}: run `annbench run --dataset {}` \
             first, or point --results (and --count) at the runs to report",
            src.dataset,
            src.count,
            src.results.display(),
            src.dataset
        )));
    }
    Ok(points)
}

/// `--output`, unless it is absent or `-` (standard output).
fn output_file(src: &Source) -> Option<&Path> {
    src.output.as_deref().filter(|p| *p != Path::new("-"))
}

/// Write `text` to `--output` atomically (an old file stays whole when the write fails), or to
/// standard output.
pub(super) fn emit(src: &Source, text: &str) -> crate::Result<()> {
    match output_file(src) {
        Some(path) => {
            crate::fsutil::check_report_output(path, "the output")?;
            crate::fsutil::write_atomic(path, text.as_bytes(), "the output")
        }
        None => {
            use std::io::{IsTerminal, Write};
            let mut out = std::io::stdout().lock();
            // On a terminal, a label's or dataset name's control characters are shown, not
            // obeyed; a file or pipe gets the text as it is.
            let shown;
            let text = if out.is_terminal() {
                shown = text
                    .split('\n')
                    .map(crate::terminal::escape)
                    .collect::<Vec<_>>()
                    .join("\n");
                shown.as_str()
            } else {
                text
            };
            // A closed pipe (`| head`) is not an error worth a message.
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                other => {
                    other.map_err(|e| crate::Error::io(Path::new("<stdout>"), "cannot write", e))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_default_is_the_library_default() {
        let parsed: Vec<f64> = THRESHOLDS.split(',').map(|t| t.parse().unwrap()).collect();
        assert_eq!(parsed, crate::report::DEFAULT_THRESHOLDS);
    }
}
