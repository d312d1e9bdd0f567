//! Filter workloads: integer attribute columns on the train rows and, per filter kind and
//! selectivity, the exact ground truth of the filtered queries.
//!
//! Two kinds ([`FilterKind`]), both independent of the vectors (the rows a filter keeps are a
//! uniform random sample of the table, scattered over the whole graph of an HNSW index: the
//! case a graph index handles worst):
//!
//! - **range**: the column `attr` is a seeded random permutation of `0..n`; selectivity `s`
//!   is `attr < t` with `t = max(1, round(s * n))` ([`generate::threshold`]);
//! - **label**: category columns `label1`, `label2`, ...; selectivity `s` is `labelN = v`, a
//!   category given to exactly `max(1, round(s * n))` rows ([`labels`]).
//!
//! Either way exactly the stated number of rows match, so a selectivity is exact, not
//! expected. Every test query uses the same filter at a given selectivity (VectorDBBench's
//! filters work the same way). Stored in a sidecar file next to the dataset (see [`store`]
//! for the layout); the sweep reads it when a point has a `selectivity` query arg.

pub mod generate;
pub mod labels;
pub mod store;

pub use generate::{attributes, generate, parse_selectivity, threshold, truth_over};

use super::{Dataset, GroundTruth};
use crate::{Error, Result};
use std::fmt;

/// Name of the range filter's column in the sidecar and in the database tables.
pub const COLUMN: &str = "attr";

/// Default seed of `annbench datasets filter`.
pub const DEFAULT_SEED: u64 = 42;

/// Ground-truth width per selectivity (fewer where fewer rows match), as ann-benchmarks files.
pub const WIDTH: usize = 100;

/// The two filters a workload holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FilterKind {
    /// `attr < t` on a permutation column.
    Range,
    /// `labelN = v` on a category column.
    Label,
}

impl FilterKind {
    /// Both kinds, in the order tables list them.
    pub const ALL: [FilterKind; 2] = [FilterKind::Range, FilterKind::Label];

    /// As in query args, the sidecar and tables: `range`, `label`.
    pub fn as_str(self) -> &'static str {
        match self {
            FilterKind::Range => "range",
            FilterKind::Label => "label",
        }
    }

    /// `range` or `label` (ignoring case and spaces).
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "range" => Ok(FilterKind::Range),
            "label" => Ok(FilterKind::Label),
            _ => Err(format!(
                "'{text}' is not a filter kind: give range (attr < t) or label (labelN = v)"
            )),
        }
    }
}

impl fmt::Display for FilterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One integer attribute column: a value per train row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// `attr`, `label1`, `label2`, ... (identifiers, as in the database tables).
    pub name: String,
    pub values: Vec<i32>,
}

/// The filter workload of one dataset.
#[derive(Debug, Clone)]
pub struct Filters {
    /// Seed of the columns.
    pub seed: u64,
    /// [`crate::dataset::fingerprint::vectors_digest`] of the dataset it was made for.
    pub vectors: String,
    /// The attribute columns: `attr` (range filters), then `label1`, `label2`, ...
    pub columns: Vec<Column>,
    /// One entry per kind and selectivity: range levels first, each kind by ascending
    /// selectivity.
    pub levels: Vec<Level>,
}

/// One filter: its condition and exact filtered ground truth.
#[derive(Debug, Clone)]
pub struct Level {
    pub kind: FilterKind,
    /// Canonical text, e.g. `0.01` (as in query args and file names).
    pub selectivity: String,
    /// The column the condition reads.
    pub column: String,
    /// Range: the bound `t` of `column < t`; label: the category `v` of `column = v`.
    pub value: i64,
    /// How many rows match (exactly).
    pub count: i64,
    /// Exact nearest matching rows per test query (train ids), nearest first;
    /// `min(WIDTH, count)` wide.
    pub truth: GroundTruth,
}

impl Level {
    /// Whether a row whose column holds `x` satisfies the filter.
    pub fn matches(&self, x: i32) -> bool {
        match self.kind {
            FilterKind::Range => i64::from(x) < self.value,
            FilterKind::Label => i64::from(x) == self.value,
        }
    }

    /// The SQL condition, e.g. `attr < 11` or `label2 = 3` (column names are identifiers).
    pub fn condition(&self) -> String {
        let op = match self.kind {
            FilterKind::Range => "<",
            FilterKind::Label => "=",
        };
        format!("{} {op} {}", self.column, self.value)
    }
}

impl Filters {
    /// Train rows the columns describe.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// The values of column `name`.
    pub fn column(&self, name: &str) -> Option<&[i32]> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.values.as_slice())
    }

    /// The kinds this workload holds levels of.
    pub fn kinds(&self) -> Vec<FilterKind> {
        FilterKind::ALL
            .into_iter()
            .filter(|k| self.levels.iter().any(|l| l.kind == *k))
            .collect()
    }

    /// The stored selectivities of `kind`, ascending.
    pub fn selectivities(&self, kind: FilterKind) -> Vec<String> {
        self.levels
            .iter()
            .filter(|l| l.kind == kind)
            .map(|l| l.selectivity.clone())
            .collect()
    }

    /// The level of `kind` at `selectivity` (canonical text), or an error naming the command
    /// that adds it (every stored selectivity and kind, and the missing ones).
    pub fn level(&self, kind: FilterKind, selectivity: &str, dataset: &str) -> Result<&Level> {
        if let Some(l) = self
            .levels
            .iter()
            .find(|l| l.kind == kind && l.selectivity == selectivity)
        {
            return Ok(l);
        }
        let mut all: Vec<String> = Vec::new();
        for s in self
            .levels
            .iter()
            .map(|l| l.selectivity.as_str())
            .chain([selectivity])
        {
            if !all.iter().any(|a| a == s) {
                all.push(s.to_string());
            }
        }
        let mut kinds = self.kinds();
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
        kinds.sort();
        let kind_arg = if kinds.len() == FilterKind::ALL.len() {
            String::new()
        } else {
            format!(" --kind {}", kinds[0])
        };
        let have = self.selectivities(kind);
        let what = if have.is_empty() {
            format!(
                "no {kind} filters (its filter file holds {} filters only)",
                self.kinds()
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        } else {
            format!(
                "no {kind} filter ground truth for selectivity {selectivity} (it has {})",
                have.join(", ")
            )
        };
        Err(Error::Config(format!(
            "'{dataset}' has {what}; add it with `annbench datasets filter {dataset} \
             --selectivity {}{kind_arg}`, listing every selectivity you want",
            all.join(",")
        )))
    }

    /// Checks that these filters belong to `ds` (same vectors, one value per row in every
    /// column) and that each filter's ground truth is that of `ds`'s vectors (the checks of
    /// [`super::gtcheck`]: sorted rows, each id once, distances of the stored ids).
    pub fn check_for(&self, ds: &Dataset) -> Result<()> {
        let n = ds.train.nrows();
        let fresh = || {
            format!(
                "recreate them with `annbench datasets filter {} --selectivity ...`",
                ds.name
            )
        };
        if let Some(c) = self.columns.iter().find(|c| c.values.len() != n) {
            return Err(Error::Dataset(format!(
                "the filters of '{}' have {} values in column {} but the train set has {n} \
                 rows; {}",
                ds.name,
                c.values.len(),
                c.name,
                fresh()
            )));
        }
        if self.vectors != super::fingerprint::vectors_digest(ds) {
            return Err(Error::Dataset(format!(
                "the filters of '{}' were made for other vectors (the file changed since); {}",
                ds.name,
                fresh()
            )));
        }
        // Each filter's ground truth is checked as the main file's is: recall is scored
        // against it.
        let vectors = super::gtcheck::Vectors {
            train: ds.train.view(),
            test: ds.test.view(),
            metric: ds.metric,
        };
        for l in &self.levels {
            let at = |e: String| {
                Error::Dataset(format!(
                    "the filters of '{}', {} filter at selectivity {}: {e}",
                    ds.name, l.kind, l.selectivity
                ))
            };
            super::validate::check_ground_truth(&l.truth, n, ds.test.nrows()).map_err(|e| {
                at(e.replace(
                    "recompute with `annbench datasets groundtruth FILE`",
                    &fresh(),
                ))
            })?;
            super::gtcheck::verify_truth(&vectors, &l.truth, super::gtcheck::FULL_BUDGET, &fresh())
                .map_err(at)?;
        }
        Ok(())
    }
}

/// 32 hex digits naming `base` (the dataset's fingerprint) with the filter of `level`: its
/// kind, seed, column, condition, every value of its column and the filtered ground truth.
/// Stored with each filtered point, so a point is reused only with the same filter.
pub fn fingerprint(base: &str, f: &Filters, level: &Level) -> String {
    let mut h = twox_hash::XxHash3_128::new();
    // Range levels hash as before label filters existed, so their points stay reusable.
    match level.kind {
        FilterKind::Range => h.write(b"annbench filter fingerprint v1\0"),
        FilterKind::Label => {
            h.write(b"annbench label filter fingerprint v1\0");
            h.write(level.column.as_bytes());
            h.write(b"\0");
            h.write(&level.count.to_le_bytes());
        }
    }
    h.write(base.as_bytes());
    h.write(&f.seed.to_le_bytes());
    h.write(&level.value.to_le_bytes());
    for a in f.column(&level.column).unwrap_or_default() {
        h.write(&a.to_le_bytes());
    }
    for (i, d) in level.truth.neighbors.iter().zip(&level.truth.distances) {
        h.write(&i.to_le_bytes());
        h.write(&d.to_bits().to_le_bytes());
    }
    format!("{:032x}", h.finish_128())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Metric;
    use ndarray::Array2;

    /// `n` train and `q` test rows of normal 8-d vectors.
    pub(crate) fn random(name: &str, n: usize, q: usize) -> Dataset {
        let mut rng = crate::dataset::rng::Rng::new(11);
        let mut m = |rows| Array2::from_shape_simple_fn((rows, 8), || rng.normal() as f32);
        Dataset {
            name: name.into(),
            metric: Metric::Euclidean,
            train: m(n),
            test: m(q),
            ground_truth: None,
        }
    }

    #[test]
    fn kinds_parse_and_missing_levels_name_the_command() {
        assert_eq!(FilterKind::parse(" Label"), Ok(FilterKind::Label));
        assert!(FilterKind::parse("ranges").unwrap_err().contains("range"));
        let ds = random("t", 400, 5);
        let f = generate(&ds, &["0.1".into()], &[FilterKind::Range], 1).unwrap();
        let e = f
            .level(FilterKind::Label, "0.1", "t")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no label filters") && e.contains("--selectivity 0.1`"),
            "{e}"
        );
        let e = f
            .level(FilterKind::Range, "0.2", "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--selectivity 0.1,0.2 --kind range`"), "{e}");
        let both = generate(&ds, &["0.1".into()], &FilterKind::ALL, 1).unwrap();
        let e = both
            .level(FilterKind::Label, "0.5", "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--selectivity 0.1,0.5`"), "{e}");
    }

    #[test]
    fn fingerprints_cover_the_level() {
        let ds = random("t", 300, 4);
        let f = generate(&ds, &["0.1".into(), "0.5".into()], &FilterKind::ALL, 2).unwrap();
        let prints: std::collections::BTreeSet<String> = f
            .levels
            .iter()
            .map(|l| fingerprint("base", &f, l))
            .collect();
        assert_eq!(prints.len(), 4, "one per kind and selectivity");
        let again = generate(&ds, &["0.1".into(), "0.5".into()], &FilterKind::ALL, 2).unwrap();
        assert_eq!(
            fingerprint("base", &f, &f.levels[3]),
            fingerprint("base", &again, &again.levels[3])
        );
    }
}
