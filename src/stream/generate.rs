//! Seeded runbook generators for any dataset, after big-ann-benchmarks' runbooks (their
//! semantics, not their code). Every generated runbook passes [`Runbook::validate`] and is
//! written in big-ann's format ([`Runbook::to_yaml`]); `max_pts` is `--max-pts` when given,
//! else the true peak of the live count.
//!
//! - `simple`: insert the rows, search, delete the first half, search, insert it again,
//!   search (big-ann's simple_runbook.yaml).
//! - `sliding-window`: the rows in `steps` chunks; each step deletes the oldest chunk once the
//!   window (`--max-pts` rows, default half the chunks) is full, inserts the next, searches
//!   (as msturing-10M_slidingwindow_runbook.yaml).
//! - `expiration`: `steps` chunks inserted one per time step, each expiring (deleted) after a
//!   lifetime drawn per chunk: never with probability 1/19, `steps / 2` time steps with 3/19,
//!   `steps / 10` with 15/19 (the classes and odds of gen_expiration_time_runbook.py, whose
//!   lifetimes of 100 and 20 steps are scaled to the runbook's length); deletes and replaces
//!   due at a time step follow its insert, then it searches. With `replace`, each chunk
//!   inserts a random 50-90% of its rows and, halfway through its lifetime (or through the
//!   time left, for chunks that never expire), replaces as many of its tags as it can with
//!   its unused rows (the `_replace_delete` runbooks).
//! - `random-replace`: `steps` chunks, each inserting a random 50-90% of its rows, a search
//!   after each; then `steps` replaces, each of a random-length run of one chunk's tags (each
//!   chunk once, in random order) with another chunk's unused rows (each once), a search
//!   after each (as random_replace_runbook.yaml).
//! - `clustered` ([`clustered`]): a copy of the dataset whose train rows are grouped by a
//!   seeded k-means clustering (`steps` clusters, k-means++ then 10 rounds on a sample of up
//!   to 100,000 rows; cosine for angular sets), named `<dataset>-clustered`, with its ground
//!   truth remapped to the new row ids; the runbook inserts one cluster after another, with a
//!   search after each (as clustered_data_gen.py and clustered_runbook.yaml).
//!
//! `--max-pts` caps the live rows: the window of `sliding-window`, and the rows used (a
//! prefix of the train set) by the others (`clustered` uses every row and refuses it).
//! `maintenance_every: N` adds a maintenance step after every N writing steps (an annbench
//! extension: such a runbook runs in annbench only).

use super::runbook::Runbook;
use super::step::{Maintenance, Operation, Step};
use crate::dataset::rng::Rng;
use crate::dataset::{Dataset, GroundTruth};
use crate::{Error, Result};
use ndarray::Axis;

/// What a generated runbook does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Simple,
    SlidingWindow,
    Expiration,
    Clustered,
    RandomReplace,
}

impl Kind {
    /// Every kind, in the order of the documentation.
    pub const ALL: [Kind; 5] = [
        Kind::Simple,
        Kind::SlidingWindow,
        Kind::Expiration,
        Kind::Clustered,
        Kind::RandomReplace,
    ];

    /// The command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Simple => "simple",
            Kind::SlidingWindow => "sliding-window",
            Kind::Expiration => "expiration",
            Kind::Clustered => "clustered",
            Kind::RandomReplace => "random-replace",
        }
    }

    /// The kind named `name`, or an error listing the kinds.
    pub fn parse(name: &str) -> Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| {
                let all: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
                Error::Config(format!(
                    "unknown runbook kind '{name}'; known: {}",
                    all.join(", ")
                ))
            })
    }

    /// What `--steps` counts for the kind.
    pub fn unit(self) -> &'static str {
        match self {
            Kind::Simple => "steps",
            Kind::SlidingWindow | Kind::RandomReplace => "chunks",
            Kind::Expiration => "time steps",
            Kind::Clustered => "clusters",
        }
    }

    /// The step count used when none is given: chunks, time steps or clusters.
    pub fn default_steps(self) -> usize {
        match self {
            Kind::Simple => 0,
            Kind::SlidingWindow => 20,
            Kind::Expiration => 100,
            Kind::Clustered | Kind::RandomReplace => 32,
        }
    }
}

/// Generator options (the command line's `--steps`, `--seed`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Chunks, time steps or clusters (see the module docs); `None`: [`Kind::default_steps`].
    pub steps: Option<usize>,
    /// Seed of the random draws.
    pub seed: u64,
    /// The most rows live at once.
    pub max_pts: Option<usize>,
    /// A maintenance step after every N writing steps.
    pub maintenance_every: Option<usize>,
    /// What those maintenance steps do.
    pub maintenance: Vec<Maintenance>,
    /// `expiration` only: replace part of each chunk before it expires.
    pub replace: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            steps: None,
            seed: 1,
            max_pts: None,
            maintenance_every: None,
            maintenance: vec![Maintenance::Vacuum],
            replace: false,
        }
    }
}

/// A runbook of `kind` (any but [`Kind::Clustered`], which needs the vectors: see
/// [`clustered`]) for a dataset of `train_rows` rows, under entry `entry`.
pub fn generate(kind: Kind, entry: &str, train_rows: usize, opts: &Options) -> Result<Runbook> {
    if opts.replace && kind != Kind::Expiration {
        return Err(Error::Config(format!(
            "--replace applies to the expiration kind, not {}",
            kind.as_str()
        )));
    }
    let (rows, steps) = rows_and_steps(kind, train_rows, opts)?;
    let mut rng = Rng::new(opts.seed);
    let ops = match kind {
        Kind::Simple => simple(rows),
        Kind::SlidingWindow => sliding_window(rows, steps, opts.max_pts)?,
        Kind::Expiration => expiration(rows, steps, opts.replace, &mut rng)?,
        Kind::RandomReplace => random_replace(rows, steps, &mut rng)?,
        Kind::Clustered => {
            return Err(Error::Config(
                "the clustered kind writes a permuted copy of the dataset: use \
                 stream::generate::clustered"
                    .into(),
            ));
        }
    };
    finish(ops, entry, train_rows, opts)
}

/// The clustered copy of `ds` (named `<name>-clustered`) and its runbook: see the module docs.
pub fn clustered(ds: &Dataset, opts: &Options) -> Result<(Dataset, Runbook)> {
    if opts.max_pts.is_some() {
        return Err(Error::Config(
            "--max-pts does not apply to the clustered kind (it inserts every train row); make a \
             smaller set first with `annbench datasets subset`"
                .into(),
        ));
    }
    if opts.replace {
        return Err(Error::Config(
            "--replace applies to the expiration kind, not clustered".into(),
        ));
    }
    let name = clustered_name(&ds.name)?;
    let (n, clusters) = rows_and_steps(Kind::Clustered, ds.train.nrows(), opts)?;
    let labels = super::kmeans::labels(ds, clusters, opts.seed)?;
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by_key(|&r| (labels[r], r));
    let mut ops = Vec::new();
    let mut start = 0;
    while start < n {
        let label = labels[perm[start]];
        let mut end = start;
        while end < n && labels[perm[end]] == label {
            end += 1;
        }
        ops.push(Operation::Insert { start, end });
        ops.push(Operation::Search);
        start = end;
    }
    let copy = Dataset {
        name: name.clone(),
        metric: ds.metric,
        train: ds.train.select(Axis(0), &perm),
        test: ds.test.clone(),
        ground_truth: ds.ground_truth.as_ref().map(|gt| remap(gt, &perm)),
    };
    let rb = finish(ops, &name, n, opts)?;
    Ok((copy, rb))
}

/// The name of the clustered copy of dataset `name`: `<name>-clustered`, checked before any
/// work (its file is written to the data directory under that name).
pub fn clustered_name(name: &str) -> Result<String> {
    let copy = format!("{name}-clustered");
    match crate::dataset::datafile::name_problem(&copy) {
        None => Ok(copy),
        Some(why) => Err(Error::Config(format!(
            "the clustered copy of '{name}' would be named {copy:?}, which cannot be a dataset \
             name: {why}; copy the dataset to a file with a shorter plain name and give that \
             file to --dataset"
        ))),
    }
}

/// The rows the kind uses (all, or the `--max-pts` prefix; sliding-window keeps all) and its
/// step count (chunks, time steps or clusters), each chunk holding at least its least rows.
/// Too few rows blame the input that makes them few: `--max-pts` when it caps them, else the
/// dataset; the fixes are the values that work.
fn rows_and_steps(kind: Kind, train_rows: usize, opts: &Options) -> Result<(usize, usize)> {
    let n = match kind {
        Kind::Simple if opts.steps.is_some() => {
            return Err(Error::Config(
                "--steps does not apply to the simple kind (it has 6 steps)".into(),
            ));
        }
        Kind::Simple => 1,
        _ => opts.steps.unwrap_or(kind.default_steps()),
    };
    if n == 0 {
        return Err(Error::Config("--steps 0: give at least 1".into()));
    }
    let min_chunk = match kind {
        Kind::Expiration if opts.replace => 4,
        Kind::RandomReplace => 4,
        _ => 1,
    };
    // Simple halves its rows; every kind needs two rows at least.
    let least = n.saturating_mul(min_chunk).max(2);
    let cap = opts
        .max_pts
        .filter(|&m| kind != Kind::SlidingWindow && m < train_rows);
    let rows = cap.unwrap_or(train_rows);
    if rows >= least {
        return Ok((rows, n));
    }
    let source = match cap {
        Some(m) => format!("--max-pts {m} is"),
        None => format!("the dataset's {train_rows} train rows are"),
    };
    let need = if kind == Kind::Simple {
        "2 rows".to_string()
    } else {
        let steps = match opts.steps {
            Some(_) => format!("--steps {n}"),
            None => format!("the default --steps {n}"),
        };
        let each = if min_chunk == 1 { "row" } else { "rows" };
        format!(
            "{least} rows: {n} {} ({steps}) of at least {min_chunk} {each} each",
            kind.unit()
        )
    };
    let mut fixes = Vec::new();
    if cap.is_some() && least <= train_rows {
        fixes.push(format!("--max-pts {least} or more"));
    }
    if kind != Kind::Simple && rows >= 2 && rows >= min_chunk {
        fixes.push(format!("--steps {} or less", rows / min_chunk));
    }
    if least > train_rows {
        fixes.push("a dataset with more train rows".into());
    }
    Err(Error::Config(format!(
        "{source} too few for {}, which uses at least {need}; give {}",
        kind.as_str(),
        fixes.join(", or ")
    )))
}

fn simple(rows: usize) -> Vec<Operation> {
    let half = rows / 2;
    vec![
        Operation::Insert {
            start: 0,
            end: rows,
        },
        Operation::Search,
        Operation::Delete {
            start: 0,
            end: half,
        },
        Operation::Search,
        Operation::Insert {
            start: 0,
            end: half,
        },
        Operation::Search,
    ]
}

fn sliding_window(
    rows: usize,
    chunks: usize,
    window_rows: Option<usize>,
) -> Result<Vec<Operation>> {
    let c = rows / chunks;
    let window = match window_rows {
        None => (chunks / 2).max(1),
        Some(m) if m < c => {
            return Err(Error::Config(format!(
                "--max-pts {m} is smaller than one chunk ({c} rows of {rows} in {chunks} \
                 chunks); give --max-pts {c} or more, or more --steps"
            )));
        }
        Some(m) => m / c,
    };
    let chunk = |i: usize| (i * c, (i + 1) * c);
    let mut ops = Vec::new();
    for i in 0..chunks {
        if i >= window {
            let (start, end) = chunk(i - window);
            ops.push(Operation::Delete { start, end });
        }
        let (start, end) = chunk(i);
        ops.push(Operation::Insert { start, end });
        ops.push(Operation::Search);
    }
    Ok(ops)
}

/// A uniform fraction of 50% to 90% of `c` rows, leaving at least one row unused.
fn part_of(c: usize, rng: &mut Rng) -> usize {
    let f = 0.5 + 0.4 * rng.uniform();
    ((f * c as f64) as usize).clamp(1, c - 1)
}

fn expiration(rows: usize, t_max: usize, replace: bool, rng: &mut Rng) -> Result<Vec<Operation>> {
    let c = rows / t_max;
    let short = (t_max / 10).max(1);
    let long = (t_max / 2).max(2);
    let mut deletes: Vec<Vec<Operation>> = vec![Vec::new(); t_max];
    let mut replaces: Vec<Vec<Operation>> = vec![Vec::new(); t_max];
    let mut ops = Vec::new();
    for i in 0..t_max {
        let start = i * c;
        let inserted = if replace { part_of(c, rng) } else { c };
        ops.push(Operation::Insert {
            start,
            end: start + inserted,
        });
        // 1 in 19 never expires, 3 in 19 live long, 15 in 19 live short.
        let lifetime = match rng.below(19) {
            0 => None,
            1..=3 => Some(long),
            _ => Some(short),
        };
        if let Some(t) = lifetime.map(|l| i + l).filter(|&t| t < t_max) {
            deletes[t].push(Operation::Delete {
                start,
                end: start + inserted,
            });
        }
        if replace {
            let len = (c - inserted).min(inserted);
            let at = match lifetime {
                None => i + (t_max - i) / 2,
                Some(l) => i + l / 2,
            };
            if at < t_max {
                replaces[at].push(Operation::Replace {
                    tags: start..start + len,
                    ids: start + inserted..start + inserted + len,
                });
            }
        }
        ops.append(&mut deletes[i]);
        ops.append(&mut replaces[i]);
        ops.push(Operation::Search);
    }
    Ok(ops)
}

fn random_replace(rows: usize, chunks: usize, rng: &mut Rng) -> Result<Vec<Operation>> {
    let c = rows / chunks;
    let inserted: Vec<usize> = (0..chunks).map(|_| part_of(c, rng)).collect();
    let mut ops = Vec::new();
    for (i, &ins) in inserted.iter().enumerate() {
        ops.push(Operation::Insert {
            start: i * c,
            end: i * c + ins,
        });
        ops.push(Operation::Search);
    }
    let mut tags: Vec<usize> = (0..chunks).collect();
    let mut pools: Vec<usize> = (0..chunks).collect();
    rng.shuffle(&mut tags);
    rng.shuffle(&mut pools);
    for (&j, &u) in tags.iter().zip(&pools) {
        let most = inserted[j].min(c - inserted[u]);
        let len = 1 + rng.below(most);
        let ids = u * c + inserted[u];
        ops.push(Operation::Replace {
            tags: j * c..j * c + len,
            ids: ids..ids + len,
        });
        ops.push(Operation::Search);
    }
    Ok(ops)
}

/// Numbers the steps, adds maintenance, sets max_pts and validates.
fn finish(ops: Vec<Operation>, entry: &str, train_rows: usize, opts: &Options) -> Result<Runbook> {
    if opts.maintenance_every == Some(0) {
        return Err(Error::Config(
            "--maintenance-every 0: give the number of writing steps between maintenance steps"
                .into(),
        ));
    }
    if opts.maintenance_every.is_some() && opts.maintenance.is_empty() {
        return Err(Error::Config(
            "--maintenance-every needs at least one --maintenance action (vacuum, reindex or \
             optimize)"
                .into(),
        ));
    }
    let mut steps = Vec::new();
    let mut writes = 0;
    let push = |steps: &mut Vec<Step>, op| steps.push(Step::new(steps.len() as u32 + 1, op));
    for op in ops {
        let write = op.writes();
        push(&mut steps, op);
        if write {
            writes += 1;
            if opts.maintenance_every.is_some_and(|m| writes % m == 0) {
                push(&mut steps, Operation::Maintenance(opts.maintenance.clone()));
            }
        }
    }
    let mut rb = Runbook {
        entry: entry.to_string(),
        source: "generated".into(),
        max_pts: usize::MAX,
        steps,
    };
    let peak = rb.live_counts()?.into_iter().max().unwrap_or(0);
    rb.max_pts = opts.max_pts.unwrap_or(peak).max(peak);
    rb.validate(train_rows)?;
    Ok(rb)
}

/// Ground truth with train rows renumbered by `perm` (new row i is old row `perm[i]`); equal
/// distances ordered by the new ids, as a fresh computation would.
fn remap(gt: &GroundTruth, perm: &[usize]) -> GroundTruth {
    let mut new_of = vec![0i32; perm.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_of[old] = new as i32;
    }
    let mut neighbors = gt.neighbors.mapv(|old| new_of[old as usize]);
    for (mut ids, dist) in neighbors.rows_mut().into_iter().zip(gt.distances.rows()) {
        let mut pairs: Vec<(f32, i32)> = dist.iter().copied().zip(ids.iter().copied()).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (slot, (_, id)) in ids.iter_mut().zip(pairs) {
            *slot = id;
        }
    }
    GroundTruth {
        neighbors,
        distances: gt.distances.clone(),
    }
}

#[cfg(test)]
#[path = "generate_tests.rs"]
mod tests;
