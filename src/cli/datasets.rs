//! `annbench datasets ...`: thin wrappers over `crate::dataset`.

use super::out::{errln, outln};
use crate::dataset::{self, create::CreateOptions, download, registry};
use crate::{Error, Metric, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The data directory option shared by the subcommands.
#[derive(Debug, Args)]
pub struct DataDir {
    /// Where datasets are stored and looked up.
    #[arg(long, env = "ANNBENCH_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum DatasetsCommand {
    /// Known dataset names, and which are present locally.
    List(DataDir),
    /// Download (or generate, for random-*; write out, for bundled sets) into the data dir.
    Get {
        /// Dataset names.
        #[arg(required = true)]
        names: Vec<String>,
        #[command(flatten)]
        dir: DataDir,
        /// Download address prefix; `{base}/{name}.hdf5` is fetched.
        #[arg(long, env = "ANNBENCH_DATASET_URL", default_value = registry::DEFAULT_BASE_URL)]
        base_url: String,
        /// Fetch again even if a valid file is present.
        #[arg(long)]
        force: bool,
    },
    /// Shape, metric, dimension, ground truth and file size of a file or name.
    Info {
        /// HDF5 file or dataset name.
        dataset: String,
        #[command(flatten)]
        dir: DataDir,
    },
    /// A smaller dataset: the first N train (and M test) vectors, ground truth recomputed.
    Subset {
        /// Source HDF5 file or dataset name.
        source: String,
        /// Train vectors to keep.
        #[arg(long)]
        train: usize,
        /// Test vectors to keep (default: all).
        #[arg(long)]
        test: Option<usize>,
        /// Ground-truth neighbours per query (`--k` is its old name).
        #[arg(long = "count", alias = "k", default_value_t = 100)]
        k: usize,
        /// Output file (default: `{data-dir}/{name}.hdf5`).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Name (default: source name with the size before the metric, e.g. glove-25-100k-angular).
        #[arg(long)]
        name: Option<String>,
        /// Replace the output file if it exists.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        dir: DataDir,
    },
    /// Build a dataset from your own vectors (.npy, .fvecs or raw float32).
    Create(CreateArgs),
    /// Recompute exact ground truth and store it in the file.
    Groundtruth {
        /// HDF5 file or dataset name.
        dataset: String,
        /// Neighbours per query (`--k` is its old name).
        #[arg(long = "count", alias = "k", default_value_t = 100)]
        k: usize,
        /// Only time the computation; do not write the file.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        dir: DataDir,
    },
    /// Add a filter workload: integer attribute columns on the train rows and, per kind and
    /// selectivity s, the exact ground truth of the filtered queries, in a sidecar file
    /// `<name>.filters.h5` next to the dataset. Range: `attr < round(s * n)`, attr a seeded
    /// permutation of 0..n. Label: `labelN = v`, category v given to round(s * n) rows
    /// (categories packed into as few columns as hold them).
    Filter {
        /// HDF5 file or dataset name.
        dataset: String,
        /// Shares of the rows the filters keep, in (0, 1], e.g. 0.001,0.01,0.1,0.5,0.9 (or 1%).
        #[arg(long, value_delimiter = ',', required = true)]
        selectivity: Vec<String>,
        /// Filter kinds: range, label or range,label (the default: both).
        #[arg(long, value_delimiter = ',')]
        kind: Vec<String>,
        /// Seed of the attribute columns.
        #[arg(long, default_value_t = dataset::filters::DEFAULT_SEED)]
        seed: u64,
        #[command(flatten)]
        dir: DataDir,
    },
    /// Generate a seeded synthetic set with exact ground truth into the data dir.
    Generate {
        /// A name whose source is `generate` in `annbench datasets list`: random-xs-20-euclidean,
        /// random-s-100-angular, ..., clustered-1536-{10k,100k,250k,500k,1000k}-angular.
        name: String,
        #[command(flatten)]
        dir: DataDir,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Vector file: .npy (float32, float64 or uint8), .fvecs, or raw little-endian float32 with --dim.
    input: PathBuf,
    /// Distance.
    #[arg(long, value_enum)]
    metric: MetricArg,
    /// Dimension, for raw float32 input.
    #[arg(long)]
    dim: Option<usize>,
    /// Separate query vectors (same format); otherwise --test vectors are split off the input.
    #[arg(long)]
    queries: Option<PathBuf>,
    /// Test vectors split off the input (default: 10%, at most 10,000).
    #[arg(long)]
    test: Option<usize>,
    /// Seed of the train/test split.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Ground-truth neighbours per query (`--k` is its old name).
    #[arg(long = "count", alias = "k", default_value_t = 100)]
    k: usize,
    /// Dataset name (default: `{input stem}-{dim}-{metric}`).
    #[arg(long)]
    name: Option<String>,
    /// Output file (default: `{data-dir}/{name}.hdf5`).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    dir: DataDir,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum MetricArg {
    Euclidean,
    Angular,
}

impl From<MetricArg> for Metric {
    fn from(m: MetricArg) -> Metric {
        match m {
            MetricArg::Euclidean => Metric::Euclidean,
            MetricArg::Angular => Metric::Angular,
        }
    }
}

pub fn run(cmd: DatasetsCommand) -> Result<()> {
    match cmd {
        DatasetsCommand::List(d) => list(&d.data_dir),
        DatasetsCommand::Get {
            names,
            dir,
            base_url,
            force,
        } => {
            for name in names {
                let path = download::get(&name, &dir.data_dir, &base_url, force, true)?;
                outln!("{name}: {}", path.display());
            }
            Ok(())
        }
        DatasetsCommand::Info { dataset, dir } => info(&dataset, &dir.data_dir),
        DatasetsCommand::Subset {
            source,
            train,
            test,
            k,
            output,
            name,
            force,
            dir,
        } => {
            let src = dataset::resolve(&source, &dir.data_dir)?;
            let info = dataset::info(&src)?;
            let name = name
                .unwrap_or_else(|| dataset::subset::default_name(&info.name, info.metric, train));
            let ds = dataset::subset::subset(&src, train, test, k, &name)?;
            write(&ds, output, &dir.data_dir, force)
        }
        DatasetsCommand::Create(a) => {
            let opts = CreateOptions {
                input: a.input,
                format: None,
                dim: a.dim,
                queries: a.queries,
                name: a.name,
                metric: a.metric.into(),
                test: a.test,
                seed: a.seed,
                k: a.k,
            };
            let ds = dataset::create::create(&opts)?;
            check_name_suffix(&ds)?;
            write(&ds, a.output, &a.dir.data_dir, a.force)
        }
        DatasetsCommand::Groundtruth {
            dataset,
            k,
            dry_run,
            dir,
        } => groundtruth(&dataset, k, dry_run, &dir.data_dir),
        DatasetsCommand::Filter {
            dataset,
            selectivity,
            kind,
            seed,
            dir,
        } => filter(&dataset, &selectivity, &kind, seed, &dir.data_dir),
        DatasetsCommand::Generate { name, dir } => {
            let entry = registry::lookup(&name)?;
            let (path, t) = dataset::synthetic::generate_to_timed(entry, &dir.data_dir)?;
            outln!(
                "{name}: {} (vectors {:.1} s, exact ground truth k=100 {:.1} s with {} threads, \
                 writing {:.1} s)",
                path.display(),
                t.vectors,
                t.ground_truth,
                rayon::current_num_threads(),
                t.write
            );
            Ok(())
        }
    }
}

/// A name in ann-benchmarks' form `...-{dim}-{metric}` must say the vectors' dimension and
/// metric: `my-384-angular` on 16-d vectors would mislead every table and file name.
fn check_name_suffix(ds: &dataset::Dataset) -> Result<()> {
    let parts: Vec<&str> = ds.name.rsplitn(3, '-').collect();
    let metric_word = parts.first().copied().unwrap_or("");
    let named_metric = ["angular", "euclidean"].contains(&metric_word);
    if named_metric && metric_word != ds.metric.as_str() {
        return Err(Error::Config(format!(
            "--name {}: the name says {metric_word} but the dataset is {}; name it ...-{}",
            ds.name,
            ds.metric,
            ds.metric.as_str()
        )));
    }
    if let Some(dim) = parts.get(1).and_then(|d| d.parse::<usize>().ok()) {
        if named_metric && dim != ds.dimension() {
            return Err(Error::Config(format!(
                "--name {}: the name says dimension {dim} but the vectors have {}; name it \
                 ...-{}-{}",
                ds.name,
                ds.dimension(),
                ds.dimension(),
                ds.metric.as_str()
            )));
        }
    }
    Ok(())
}

fn write(
    ds: &dataset::Dataset,
    output: Option<PathBuf>,
    data_dir: &Path,
    force: bool,
) -> Result<()> {
    let path = match output {
        Some(p) => p,
        None => {
            dataset::datafile::check_name(&ds.name)?;
            dataset::datafile::ensure_dir(data_dir)?;
            data_dir.join(format!("{}.hdf5", ds.name))
        }
    };
    if path.exists() && !force {
        return Err(Error::Config(format!(
            "{} exists: give --force to replace it, or another --name or --output",
            path.display()
        )));
    }
    dataset::save(ds, &path)?;
    outln!(
        "{}: {} train, {} test, dimension {}, {}, ground truth k={} -> {}",
        ds.name,
        ds.train.nrows(),
        ds.test.nrows(),
        ds.dimension(),
        ds.metric,
        ds.ground_truth.as_ref().map_or(0, |g| g.neighbors.ncols()),
        path.display()
    );
    Ok(())
}

fn list(data_dir: &Path) -> Result<()> {
    outln!(
        "{:<30} {:>5} {:<9} {:>10} {:>7}  {:<9} local",
        "name",
        "dim",
        "metric",
        "train",
        "test",
        "source"
    );
    for e in registry::all() {
        let local = data_dir.join(e.file_name());
        let source = e.source.as_str();
        let here = if local.is_file() {
            local.display().to_string()
        } else {
            "-".into()
        };
        outln!(
            "{:<30} {:>5} {:<9} {:>10} {:>7}  {:<9} {here}",
            e.name,
            e.dimension,
            e.metric,
            e.train,
            e.test,
            source
        );
    }
    // Files of the data dir that are no known name: created, subsets, copies.
    for (path, info) in dataset::datadir::local_files(data_dir) {
        let stem = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into());
        match info {
            Some(i) => outln!(
                "{:<30} {:>5} {:<9} {:>10} {:>7}  {:<9} {}",
                stem,
                i.dimension,
                i.metric,
                i.train,
                i.test,
                "local",
                path.display()
            ),
            None => outln!(
                "{:<30} {:>5} {:<9} {:>10} {:>7}  {:<9} {} (not a readable dataset)",
                stem,
                "?",
                "?",
                "?",
                "?",
                "local",
                path.display()
            ),
        }
    }
    Ok(())
}

/// Say on standard error what resolving `dataset` writes into the data dir (a bundled set
/// written out, a synthetic set generated), so no file appears unannounced.
fn announce_write(dataset: &str, data_dir: &Path) {
    if let Some((source, path)) = dataset::datadir::would_write(dataset, data_dir) {
        let what = match source {
            registry::Source::Synthetic => "generating",
            _ => "writing the bundled set",
        };
        errln!(
            "{dataset}: {what} to {} (--data-dir or ANNBENCH_DATA_DIR to put it elsewhere)",
            path.display()
        );
    }
}

fn info(dataset: &str, data_dir: &Path) -> Result<()> {
    announce_write(dataset, data_dir);
    let path = dataset::resolve(dataset, data_dir)?;
    let i = dataset::info(&path)?;
    outln!("name:         {}", i.name);
    outln!("file:         {}", path.display());
    outln!(
        "file size:    {} bytes ({:.1} MiB)",
        i.file_size,
        i.file_size as f64 / (1 << 20) as f64
    );
    outln!("metric:       {}", i.metric);
    outln!("dimension:    {}", i.dimension);
    outln!("train:        {} x {}", i.train, i.dimension);
    outln!("test:         {} x {}", i.test, i.dimension);
    print_filters(&path, dataset)?;
    match i.ground_truth_k {
        Some(k) => outln!("ground truth: yes, k={k}"),
        None => {
            outln!("ground truth: no (compute with `annbench datasets groundtruth {dataset}`)");
            return Ok(());
        }
    }
    if let Some((d, _)) = dataset::difficulty::of_file(&path)? {
        print_difficulty(&d, i.train);
    }
    Ok(())
}

/// `annbench datasets filter`: generate and store the filter workload.
fn filter(
    dataset: &str,
    selectivity: &[String],
    kind: &[String],
    seed: u64,
    data_dir: &Path,
) -> Result<()> {
    use dataset::filters::FilterKind;
    let mut kinds: Vec<FilterKind> = Vec::new();
    for k in kind {
        let k = FilterKind::parse(k).map_err(|e| Error::Config(format!("--kind: {e}")))?;
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    if kinds.is_empty() {
        kinds = FilterKind::ALL.to_vec();
    }
    let path = dataset::resolve(dataset, data_dir)?;
    let ds = dataset::open(&path)?;
    let start = Instant::now();
    let f = dataset::filters::generate(&ds, selectivity, &kinds, seed)?;
    let secs = start.elapsed().as_secs_f64();
    let out = dataset::filters::store::save(&f, &path)?;
    let columns: Vec<&str> = f.columns.iter().map(|c| c.name.as_str()).collect();
    outln!(
        "{}: attribute columns {} (seed {seed}) and exact filtered ground truth for {} filters \
         in {secs:.2} s -> {}",
        ds.name,
        columns.join(", "),
        f.levels.len(),
        out.display()
    );
    print_filters(&path, dataset)
}

/// The filter workload of the dataset at `path`, if it has one.
fn print_filters(path: &Path, dataset: &str) -> Result<()> {
    let Some(f) = dataset::filters::store::load(path)? else {
        outln!(
            "filters:      none (add with `annbench datasets filter {dataset} --selectivity 0.01,0.1,0.5`)"
        );
        return Ok(());
    };
    let n = f.rows();
    let columns: Vec<&str> = f.columns.iter().map(|c| c.name.as_str()).collect();
    outln!(
        "filters:      {} on columns {} of {n} rows (seed {}), in {}",
        f.kinds()
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(" and "),
        columns.join(", "),
        f.seed,
        dataset::filters::store::sidecar_path(path).display()
    );
    outln!(
        "  {:<6} {:>11}  {:<16} {:>10} {:>9}  exact filtered ground truth",
        "kind",
        "selectivity",
        "filter",
        "rows",
        "share"
    );
    for l in &f.levels {
        outln!(
            "  {:<6} {:>11}  {:<16} {:>10} {:>8.4}%  k={}",
            l.kind.as_str(),
            l.selectivity,
            l.condition(),
            l.count,
            100.0 * l.count as f64 / n.max(1) as f64,
            l.truth.neighbors.ncols()
        );
    }
    Ok(())
}

/// The per-query difficulty distributions of `datasets info`.
fn print_difficulty(d: &dataset::difficulty::Difficulty, train: usize) {
    use dataset::difficulty::{LID_K, RC_K, RC_SAMPLE, summarize};
    outln!(
        "difficulty:   per query (Aumüller & Ceccarello); LID: higher is harder, RC: lower is \
         harder"
    );
    outln!(
        "  {:<13} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "",
        "mean",
        "min",
        "p10",
        "p25",
        "p50",
        "p75",
        "p90",
        "max"
    );
    let sample = RC_SAMPLE.min(train);
    for (name, values) in [
        (format!("LID (k={LID_K})"), &d.lid),
        (format!("RC (k={RC_K})"), &d.rc),
    ] {
        match summarize(values) {
            Some(s) => outln!(
                "  {name:<13} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2}{}",
                s.mean,
                s.min,
                s.p10,
                s.p25,
                s.p50,
                s.p75,
                s.p90,
                s.max,
                if s.undefined > 0 {
                    format!(
                        "  ({} queries undefined: duplicate neighbours)",
                        s.undefined
                    )
                } else {
                    String::new()
                }
            ),
            None => outln!("  {name:<13} undefined for every query (duplicate neighbours)"),
        }
    }
    outln!(
        "  (distances: Euclidean, chord distance for angular; RC's mean over ~{sample} evenly \
         spaced train rows)"
    );
}

fn groundtruth(dataset: &str, k: usize, dry_run: bool, data_dir: &Path) -> Result<()> {
    let path = dataset::resolve(dataset, data_dir)?;
    // The file's own ground truth is not needed, and may be what failed its checks.
    let ds = dataset::open_vectors(&path)?;
    if k == 0 {
        return Err(Error::Config("--count must be at least 1".into()));
    }
    let start = Instant::now();
    let (gt, stats) = dataset::bars::ground_truth(ds.train.view(), ds.test.view(), ds.metric, k)?;
    let secs = start.elapsed().as_secs_f64();
    outln!(
        "ground truth: {} queries x {} train x {} dims, k={}, {} threads: {secs:.3} s \
         (computation only; excludes reading and writing the file; {} queries rescanned exactly)",
        ds.test.nrows(),
        ds.train.nrows(),
        ds.dimension(),
        gt.neighbors.ncols(),
        rayon::current_num_threads(),
        stats.fallbacks
    );
    if !dry_run {
        // The vectors are already in the file: only the ground truth is written.
        drop(ds);
        dataset::hdf5_io::store_ground_truth(&path, &gt)?;
        outln!("stored in {}", path.display());
    }
    Ok(())
}
