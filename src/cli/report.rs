//! `annbench table | export | compare`: parse options, load the stored points of one dataset
//! and count, run the report, write it to stdout or `--output`.

use crate::report::build_table::{build_rows_table, build_table};
use crate::report::clients::{clients_rows_table, clients_table};
use crate::report::pareto::{frontier_table, pareto};
use crate::report::render::{Format, render};
use crate::report::select::select;
use crate::report::series::Distinct;
use crate::report::{best_at_recall, compare as compare_labels, export_table};
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
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Where datasets live (ground truth for ann-benchmarks result files).
    #[arg(long, env = "ANNBENCH_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Only points measured with this many clients.
    #[arg(long)]
    pub clients: Option<usize>,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TableArgs {
    #[command(flatten)]
    pub source: Source,
    /// Recall thresholds, highest first.
    #[arg(long, value_delimiter = ',', default_value = THRESHOLDS)]
    pub recall: Vec<f64>,
    /// markdown, csv or json.
    #[arg(long, default_value = "markdown", value_parser = parse_format)]
    pub format: Format,
    /// Add each row's QPS relative to this algorithm's at the same threshold (e.g. pgvector).
    #[arg(long)]
    pub base: Option<String>,
    /// Only points of this run label.
    #[arg(long)]
    pub label: Option<String>,
    /// Show QPS vs clients at fixed parameters instead (runs made with --clients 1,2,4...).
    #[arg(long, conflicts_with_all = ["builds", "base"])]
    pub by_clients: bool,
    /// Show the index build table instead (M, ef_construction, isecs, sizes, load seconds).
    #[arg(long, conflicts_with_all = ["base", "pareto"])]
    pub builds: bool,
    /// Show each series' Pareto frontier (QPS vs recall) instead, by recall ascending.
    #[arg(long, conflicts_with_all = ["base", "by_clients"])]
    pub pareto: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub source: Source,
    /// csv, json (records) or markdown.
    #[arg(long, value_parser = parse_format)]
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
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub source: Source,
    /// Label of the base run.
    #[arg(long)]
    pub base: String,
    /// Label of the run compared with the base.
    #[arg(long)]
    pub me: String,
    /// Recall targets of the matched-recall comparison.
    #[arg(long, value_delimiter = ',', default_value = THRESHOLDS)]
    pub recall: Vec<f64>,
    /// markdown, csv or json.
    #[arg(long, default_value = "markdown", value_parser = parse_format)]
    pub format: Format,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse().map_err(|e: crate::Error| e.to_string())
}

pub fn table(args: TableArgs) -> crate::Result<()> {
    let src = &args.source;
    let points = select(load(src)?, args.label.as_deref(), src.clients)?;
    let distinct = Distinct::of(&points);
    let table = if args.by_clients {
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
    } else {
        best_at_recall(&points, &args.recall, args.base.as_deref())?.to_table()
    };
    emit(src, &render(&table, args.format)?)
}

pub fn export(args: ExportArgs) -> crate::Result<()> {
    let src = &args.source;
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
    let points = select(load(src)?, None, src.clients)?;
    let comparison = compare_labels(&points, &args.base, &args.me, &args.recall)?;
    emit(src, &comparison.render(args.format)?)
}

/// The stored points of the dataset and count; an error naming the directory when none.
fn load(src: &Source) -> crate::Result<Vec<PointResult>> {
    let points = crate::results::load_points(&src.results, &src.dataset, src.count, &src.data_dir)?;
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

fn emit(src: &Source, text: &str) -> crate::Result<()> {
    match &src.output {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| crate::Error::io(path, "cannot write", e))
        }
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
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
