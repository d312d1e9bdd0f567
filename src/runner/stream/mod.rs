//! `annbench stream`: a big-ann-benchmarks runbook (insert, delete, replace, search and
//! maintenance steps, [`crate::stream::runbook`]) run against one algorithm's index in its
//! database, measuring at each search step recall against exact truth over the rows live at
//! that step ([`crate::stream::truth`]), QPS and latency; at each write step the rate reached,
//! batch latency, freshness and the searches run during it; after each write, table and index
//! size.
//!
//! The table starts empty, and the index is created before the first insert, or after it for
//! an index whose structure comes from the rows (IVFFlat's lists). Each step is stored as soon
//! as it is done ([`crate::results::stream`]); a rerun resumes after the last stored step on
//! the table brought back to the state that step left, or starts again and says why
//! ([`resume`]).

mod checks;
mod resume;
mod search;
mod writes;

pub use checks::check_runbook;

use super::progress::{Event, Progress};
use super::{PassOrder, SweepOptions};
use crate::backend::stream::StreamBuild;
use crate::backend::{Backend, BackendOptions, TableSpec};
use crate::config::Grid;
use crate::dataset::Dataset;
use crate::params::Params;
use crate::results::stream::{
    MaintenanceFigures, STREAM_FORMAT, SizeFigures, StepRecord, StreamIdentity, StreamRun,
    read_stream, stream_path, write_stream,
};
use crate::stream::live::LiveSet;
use crate::stream::runbook::Runbook;
use crate::stream::step::{Operation, Step};
use crate::stream::truth::StepTruth;
use crate::{Error, Result};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Rows per write statement when the runbook gives no `batch`.
pub const DEFAULT_BATCH: usize = 1000;
/// Marker rows per insert step whose time to be found is measured (freshness).
pub const DEFAULT_MARKERS: usize = 5;

/// Everything `annbench stream` accepts (the CLI and Python fill it).
#[derive(Debug, Clone)]
pub struct StreamOptions {
    pub dataset: String,
    pub data_dir: PathBuf,
    pub runbook: PathBuf,
    /// The runbook entry; `None`: the one named like the dataset.
    pub entry: Option<String>,
    pub algorithm: String,
    pub config_file: Option<PathBuf>,
    pub build_overrides: Vec<String>,
    pub query_overrides: Vec<String>,
    /// k.
    pub count: usize,
    /// Timed passes per search step and query point, after its recall pass (at least).
    pub runs: usize,
    pub min_time: Duration,
    /// As `run`'s ([`SweepOptions::max_time`]): time of a query point's timed passes at a
    /// search step after which no extra pass starts (extra passes re-measure a point whose
    /// passes stalled or whose interval is wide). `None`: twice `runs` x `min_time`.
    pub max_time: Option<Duration>,
    /// Search clients at the search steps.
    pub clients: usize,
    /// Rows per write statement when a step gives no `batch`.
    pub batch: usize,
    /// Marker rows per insert step (freshness); 0: not measured.
    pub markers: usize,
    pub results_dir: PathBuf,
    /// Run again from the first step even when the stored run is complete or resumable.
    pub force: bool,
    pub label: Option<String>,
    /// Longest one index build or write statement may take.
    pub timeout: Option<Duration>,
    pub backend: BackendOptions,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            dataset: String::new(),
            data_dir: crate::dataset::default_data_dir(),
            runbook: PathBuf::new(),
            entry: None,
            algorithm: String::new(),
            config_file: None,
            build_overrides: Vec::new(),
            query_overrides: Vec::new(),
            count: 10,
            runs: 3,
            min_time: Duration::from_millis(500),
            max_time: None,
            clients: 1,
            batch: DEFAULT_BATCH,
            markers: DEFAULT_MARKERS,
            results_dir: PathBuf::from("results"),
            force: false,
            label: None,
            timeout: None,
            backend: BackendOptions::default(),
        }
    }
}

impl StreamOptions {
    /// The sweep options whose checks (grid, servers, result paths, data) a stream shares.
    fn as_sweep(&self) -> SweepOptions {
        SweepOptions {
            dataset: self.dataset.clone(),
            data_dir: self.data_dir.clone(),
            algorithms: vec![self.algorithm.clone()],
            config_files: self.config_file.iter().cloned().collect(),
            build_overrides: self.build_overrides.clone(),
            query_overrides: self.query_overrides.clone(),
            count: self.count,
            runs: self.runs,
            min_time: self.min_time,
            max_time: self.max_time,
            order: PassOrder::Rounds,
            clients: vec![self.clients],
            results_dir: self.results_dir.clone(),
            force: self.force,
            label: self.label.clone(),
            timeout: self.timeout,
            backend: self.backend.clone(),
            ..SweepOptions::default()
        }
    }

    /// A grid given by the user (`--config`, `--build`, `--query`) runs whole; else the
    /// default grid's first build point at one query point (the middle of its list).
    fn narrow(&self, mut grid: Grid) -> Grid {
        let given = self.config_file.is_some()
            || !self.build_overrides.is_empty()
            || !self.query_overrides.is_empty();
        if !given {
            grid.builds.truncate(1);
            if let Some(b) = grid.builds.first_mut() {
                let mid = b.query_args.len() / 2;
                b.query_args = b.query_args.get(mid).cloned().into_iter().collect();
            }
        }
        grid
    }

    /// A stream runs on one server. Named as `run` names one (`--postgres NAME=URL`), it is
    /// that server, and NAME the run's label; two or more are refused, as is `--label` beside
    /// a name.
    fn on_named_server(&self) -> Result<StreamOptions> {
        let named = self.backend.named_for(&self.algorithm);
        let Some(first) = named.first() else {
            return Ok(self.clone());
        };
        let flag = first.kind.decl().flag;
        if named.len() > 1 {
            let names: Vec<&str> = named.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::Config(format!(
                "stream runs on one server, and {flag} names {} ({}): give one {flag} NAME=URL \
                 and run stream once per server (`run` interleaves several)",
                named.len(),
                names.join(", ")
            )));
        }
        if self.label.is_some() {
            return Err(Error::Config(format!(
                "--label and a named server ({flag} {}=URL) together: the name is the label of \
                 the run; leave --label out",
                first.name
            )));
        }
        Ok(StreamOptions {
            label: Some(first.name.clone()),
            backend: self.backend.for_server(first),
            ..self.clone()
        })
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        let most = crate::stream::runbook::MAX_BATCH;
        if self.batch == 0 || self.batch > most {
            return bad(format!(
                "--batch {}: give 1 to {most} rows per write statement, e.g. 1000",
                self.batch
            ));
        }
        if self.clients == 0 || self.clients > super::MAX_CLIENTS {
            return bad(format!(
                "--clients {}: give 1 to {} search clients",
                self.clients,
                super::MAX_CLIENTS
            ));
        }
        Ok(())
    }
}

/// One build point's run.
#[derive(Debug, Clone)]
pub struct StreamOutcome {
    pub path: PathBuf,
    pub run: StreamRun,
    /// Already complete and stored: not run again.
    pub skipped: bool,
    /// The step after which this run resumed, if it did.
    pub resumed_after: Option<u32>,
}

/// What `annbench stream` did.
#[derive(Debug, Clone, Default)]
pub struct StreamSummary {
    pub runs: Vec<StreamOutcome>,
    pub warnings: Vec<String>,
}

/// Run the runbook of `opts`: every check (options, grid, runbook against the dataset, servers)
/// before any server work, then the exact truth of every search step (cached beside the
/// dataset), then each build point's run.
pub fn run_stream(opts: &StreamOptions, progress: &dyn Progress) -> Result<StreamSummary> {
    opts.check()?;
    let opts = &opts.on_named_server()?;
    let sweep = opts.as_sweep();
    let grids = super::plan(&sweep, None)?;
    checks::refuse_unsupported(&opts.algorithm)?;
    let path = crate::dataset::resolve(&opts.dataset, &opts.data_dir)?;
    let info = crate::dataset::info(&path)?;
    if opts.count > info.train {
        // As `run`: the truth of a search step never holds more than the train rows.
        return Err(Error::Config(format!(
            "--count {} is larger than the {} train vectors of '{}'; give at most {}",
            opts.count, info.train, info.name, info.train
        )));
    }
    let runbook = Runbook::load(&opts.runbook, &info.name, opts.entry.as_deref())?;
    runbook.validate(info.train)?;
    checks::check_runbook(&runbook, &opts.algorithm)?;
    super::preflight::check_servers(&sweep, &grids)?;
    let grids = super::check_plan(&sweep, &path)?;
    let grid = grids
        .into_iter()
        .next()
        .map(|g| opts.narrow(g))
        .ok_or_else(|| Error::Config("no grid for the algorithm".into()))?;
    super::preflight::check_privileges(&sweep, std::slice::from_ref(&grid))?;
    checks::check_connections(&runbook, opts, &sweep, &grid)?;
    let (data, _) = super::check_data(std::slice::from_ref(&grid), &path)?;
    // Maintenance steps are scored before and after too: their truth is computed as a search
    // step's would be.
    let mut scored = runbook.clone();
    for step in &mut scored.steps {
        if matches!(step.op, Operation::Maintenance(_)) {
            step.op = Operation::Search;
        }
    }
    let depth = crate::stream::truth::default_depth(opts.count);
    let truth = live_truth(&data, &path, &scored, opts.count, depth, progress)?;
    if let Some(w) = truth.warning() {
        progress.on_event(&Event::Warning(&w));
    }
    let backend_opts = BackendOptions {
        build_timeout: opts.timeout,
        ..opts.backend.clone()
    };
    let mut backend = crate::backend::create(&grid.algorithm, &backend_opts)?;
    let mut summary = StreamSummary::default();
    for w in &grid.warnings {
        summary.warnings.push(w.clone());
    }
    let server = backend.server_info()?;
    let fingerprint = crate::dataset::fingerprint(&data, opts.count);
    let env = Env {
        opts,
        data: &data,
        runbook: &runbook,
        truth: &truth.steps,
        progress,
        fingerprint,
        server,
    };
    for build in &grid.builds {
        let outcome = run_build(&env, backend.as_mut(), &grid.algorithm, build);
        // The stream table stays (a rerun may resume on it); the index stays with it.
        summary.runs.push(outcome?);
    }
    Ok(summary)
}

/// The live-set truth of `runbook` from its cache, or computed with progress events and
/// stopped by Ctrl-C (nothing is cached then).
fn live_truth(
    data: &Dataset,
    path: &std::path::Path,
    runbook: &Runbook,
    k: usize,
    depth: usize,
    progress: &dyn Progress,
) -> Result<crate::stream::truth_cache::Truths> {
    let total = crate::stream::truth::work_units(runbook, data.test.nrows());
    crate::runner::data::observed(progress, total, |observe| {
        crate::stream::truth_cache::load_or_compute(data, path, runbook, k, depth, observe)
    })
    .unwrap_or_else(|_| {
        Err(Error::Dataset(
            "the live-set ground truth computation panicked".into(),
        ))
    })
}

/// The rows a step names, as its record shows them.
fn rows_text(op: &Operation) -> String {
    match op {
        Operation::Insert { start, end } | Operation::Delete { start, end } => {
            format!("{start}..{end}")
        }
        Operation::Replace { tags, ids } => format!(
            "tags {}..{} <- ids {}..{}",
            tags.start, tags.end, ids.start, ids.end
        ),
        Operation::Search => String::new(),
        Operation::Maintenance(ops) => ops
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What every step of a run needs.
struct Env<'a> {
    opts: &'a StreamOptions,
    data: &'a Dataset,
    runbook: &'a Runbook,
    truth: &'a [StepTruth],

    progress: &'a dyn Progress,
    fingerprint: String,
    server: crate::results::ServerInfo,
}

impl Env<'_> {
    fn identity(&self, algorithm: &str, build: &crate::config::BuildPoint) -> StreamIdentity {
        StreamIdentity {
            dataset: self.data.name.clone(),
            dataset_fingerprint: self.fingerprint.clone(),
            entry: self.runbook.entry.clone(),
            runbook_fingerprint: self.runbook.fingerprint(),
            algorithm: algorithm.to_string(),
            build_args: build.build_args.clone(),
            query_args: build.query_args.clone(),
            clients: self.opts.clients,
            count: self.opts.count,
            label: self.opts.label.clone(),
        }
    }

    /// The live-set truth of a search or maintenance step.
    fn truth_of(&self, step: &Step) -> Result<&StepTruth> {
        self.truth
            .iter()
            .find(|t| t.step == step.number)
            .ok_or_else(|| {
                Error::Dataset(format!(
                    "internal: no ground truth for step {} ({})",
                    step.number,
                    step.op.name()
                ))
            })
    }

    fn check_stop(&self) -> Result<()> {
        if self.progress.cancelled() {
            return Err(Error::Interrupted);
        }
        Ok(())
    }
}

fn run_build(
    env: &Env<'_>,
    backend: &mut dyn Backend,
    algorithm: &str,
    build: &crate::config::BuildPoint,
) -> Result<StreamOutcome> {
    let identity = env.identity(algorithm, build);
    let path = stream_path(&env.opts.results_dir, &identity)?;
    let spec = TableSpec {
        dataset: env.data.name.clone(),
        metric: env.data.metric,
        dimension: env.data.dimension(),
    };
    let stored = read_stream(&path)?;
    let start = resume::start(
        env,
        backend.stream_table()?,
        &spec,
        stored,
        &identity,
        &build.build_args,
        &path,
    )?;
    let decl = crate::registry::algorithm(algorithm)
        .ok_or_else(|| Error::Config(format!("unknown algorithm '{algorithm}'")))?;
    let (mut run, mut live, resumed_after, mut undone) = match start {
        resume::Start::Complete(run) => {
            return Ok(StreamOutcome {
                path,
                run,
                skipped: true,
                resumed_after: None,
            });
        }
        resume::Start::Resume {
            run,
            after,
            live,
            undone,
        } => (run, live, Some(after), undone),
        resume::Start::Fresh(why) => {
            if let Some(r) = why {
                env.progress.on_event(&Event::Warning(&r));
            }
            backend.stream_table()?.create_empty(&spec)?;
            let run = StreamRun {
                format: STREAM_FORMAT,
                identity: identity.clone(),
                runbook: env.opts.runbook.display().to_string(),
                server: Some(env.server.clone()),
                build_seconds: None,
                build_after_step: None,
                steps: Vec::new(),
                complete: false,
            };
            (run, LiveSet::default(), None, 0)
        }
    };
    let mut built = run.build_seconds.is_some();
    if !built && decl.stream_build == Some(StreamBuild::BeforeFirstInsert) {
        run.build_seconds = Some(backend.build(&build.build_args)?.seconds);
        built = true;
    }
    let clock = Instant::now();
    let offset = run.steps.last().map_or(0.0, |s| s.started + s.seconds);
    let mut searchers = Vec::new();
    let mut verified = false;
    for step in &env.runbook.steps {
        if resumed_after.is_some_and(|last| step.number <= last) {
            continue;
        }
        env.check_stop()?;
        let started = offset + clock.elapsed().as_secs_f64();
        let t0 = Instant::now();
        let mut record = StepRecord {
            step: step.number,
            operation: step.op.name().to_string(),
            rows: rows_text(&step.op),
            live_rows: 0,
            started,
            seconds: 0.0,
            write: None,
            during: None,
            searches: Vec::new(),
            maintenance: None,
            sizes: None,
            undone_rows: (undone > 0).then_some(undone),
        };
        if undone > 0 {
            env.progress.on_event(&Event::Warning(&format!(
                "step {} was stopped part-way in an earlier run: {undone} rows it had written \
                 were undone (a replace's given back their earlier vectors), and it runs again \
                 whole",
                step.number
            )));
            undone = 0;
        }
        let needs_index = matches!(step.op, Operation::Search | Operation::Maintenance(_));
        if needs_index && !built {
            return Err(Error::Config(format!(
                "step {} of runbook entry '{}' searches before any insert: {algorithm} builds \
                 its index from the rows (after the first insert step)",
                step.number, env.runbook.entry
            )));
        }
        if built && searchers.is_empty() {
            searchers = open_searchers(backend, env.opts.clients, &build.query_args[0])?;
        }
        match &step.op {
            Operation::Insert { .. } | Operation::Delete { .. } | Operation::Replace { .. } => {
                let (write, during) =
                    writes::run_step(env, backend, step, &build.query_args[0], built)?;
                record.write = Some(write);
                record.during = during;
            }
            Operation::Search => {
                let truth = env.truth_of(step)?;
                if !verified {
                    let q = env.data.test.row(0).to_vec();
                    for args in &build.query_args {
                        backend.verify_index_used(&q, env.opts.count, args)?;
                    }
                    verified = true;
                }
                for args in &build.query_args {
                    let f = search::measure(env, &mut searchers, args, &live, truth)?;
                    if f.short > 0 {
                        // As a sweep says it: a low recall's cause in words.
                        env.progress.on_event(&Event::Warning(&format!(
                            "step {} at {}: the backend returned fewer than min(k, live rows) \
                             = {} ids for {} of {} queries (for pgvector: ef_search below k, or \
                             iterative scans off); missing ids count as misses",
                            step.number,
                            crate::params::describe(args),
                            env.opts.count.min(live.len()),
                            f.short,
                            env.data.test.nrows()
                        )));
                    }
                    record.searches.push(f);
                }
                backend.check_index()?;
            }
            Operation::Maintenance(ops) => {
                record.maintenance = Some(maintenance(
                    env,
                    backend,
                    &mut searchers,
                    ops,
                    &live,
                    step,
                    build,
                )?);
            }
        }
        live.apply(step)?;
        if !built && decl.stream_build == Some(StreamBuild::AfterFirstInsert) {
            run.build_seconds = Some(backend.build(&build.build_args)?.seconds);
            run.build_after_step = Some(step.number);
            built = true;
        }
        if !matches!(step.op, Operation::Search) {
            let s = backend.stream_table()?.sizes()?;
            resume::check_count(step, s.rows, &live)?;
            record.sizes = Some(SizeFigures {
                rows: s.rows,
                table_bytes: s.table_bytes,
                index_bytes: s.index_bytes,
                dead_tuples: s.dead_tuples,
            });
        }
        record.live_rows = live.len();
        record.seconds = t0.elapsed().as_secs_f64();
        run.steps.push(record);
        run.complete =
            run.steps.last().map(|s| s.step) == env.runbook.steps.last().map(|s| s.number);
        // The table's marker first: a file that claims a step the table has not is never
        // resumed on the wrong state.
        backend
            .stream_table()?
            .set_progress(&resume::marker(&identity, step.number))?;
        write_stream(&path, &run)?;
        if let Some(last) = run.steps.last() {
            env.progress.on_event(&Event::StreamStep {
                record: last,
                path: &path,
            });
        }
    }
    Ok(StreamOutcome {
        path,
        run,
        skipped: false,
        resumed_after,
    })
}

/// `clients` search connections with `args` applied.
fn open_searchers(
    backend: &dyn Backend,
    clients: usize,
    args: &Params,
) -> Result<Vec<Box<dyn crate::backend::Searcher>>> {
    let mut out = Vec::with_capacity(clients);
    for _ in 0..clients {
        let mut s = backend.searcher()?;
        s.set_query_args(args)?;
        out.push(s);
    }
    Ok(out)
}

/// A maintenance step: recall at the first query point before, each operation timed, recall
/// after.
fn maintenance(
    env: &Env<'_>,
    backend: &mut dyn Backend,
    searchers: &mut [Box<dyn crate::backend::Searcher>],
    ops: &[crate::stream::step::Maintenance],
    live: &LiveSet,
    step: &Step,
    build: &crate::config::BuildPoint,
) -> Result<MaintenanceFigures> {
    let truth = env.truth_of(step)?;
    let args = &build.query_args[0];
    let before = search::recall_only(env, searchers, args, live, truth)?;
    let mut operations = Vec::new();
    let mut notes = Vec::new();
    for op in ops {
        env.check_stop()?;
        let r = backend.stream_table()?.maintenance((*op).into())?;
        operations.push((r.op, r.seconds));
        notes.extend(r.notes);
    }
    let after = search::recall_only(env, searchers, args, live, truth)?;
    Ok(MaintenanceFigures {
        operations,
        notes,
        recall_before: before,
        recall_after: after,
    })
}
