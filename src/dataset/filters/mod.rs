//! Filter workloads: an integer attribute per train row and, per selectivity, the exact
//! ground truth of the filtered queries.
//!
//! The attribute `attr` is a seeded random permutation of `0..n` (n train rows), independent
//! of the vectors. The filter of selectivity `s` is the range `attr < t` with
//! `t = max(1, round(s * n))` ([`threshold`]): exactly `t` rows match, so the selectivity is
//! exact, not expected, and a B-tree on `attr` can serve every filter. Every test query uses
//! the same filter at a given selectivity (VectorDBBench's `id >= x` filters work the same
//! way). The matching rows are a uniform random sample of the table, uncorrelated with the
//! query vectors: the case an HNSW graph handles worst, since the nearest matching rows are
//! scattered over the whole graph.
//!
//! Stored in a sidecar file next to the dataset (see [`store`] for the layout); the sweep
//! reads it when a point has a `selectivity` query arg.

pub mod store;

use super::{Dataset, GroundTruth, groundtruth};
use crate::{Error, Result};
use ndarray::{Array2, Axis};

/// Name of the attribute column in the sidecar and in the database tables.
pub const COLUMN: &str = "attr";

/// Default seed of `annbench datasets filter`.
pub const DEFAULT_SEED: u64 = 42;

/// Ground-truth width per selectivity (fewer where fewer rows match), as ann-benchmarks files.
pub const WIDTH: usize = 100;

/// The filter workload of one dataset.
#[derive(Debug, Clone)]
pub struct Filters {
    /// Seed of the permutation.
    pub seed: u64,
    /// [`crate::dataset::fingerprint::vectors_digest`] of the dataset it was made for.
    pub vectors: String,
    /// The attribute of each train row (a permutation of `0..n`).
    pub attr: Vec<i32>,
    /// One entry per selectivity, ascending.
    pub levels: Vec<Level>,
}

/// One selectivity: its filter and exact filtered ground truth.
#[derive(Debug, Clone)]
pub struct Level {
    /// Canonical text, e.g. `0.01` (as in query args and file names).
    pub selectivity: String,
    /// The filter is `attr < threshold`; exactly `threshold` rows match.
    pub threshold: i64,
    /// Exact nearest matching rows per test query (train ids), nearest first;
    /// `min(WIDTH, threshold)` wide.
    pub truth: GroundTruth,
}

impl Filters {
    /// The level of `selectivity` (canonical text), or an error naming the command that adds it.
    pub fn level(&self, selectivity: &str, dataset: &str) -> Result<&Level> {
        self.levels
            .iter()
            .find(|l| l.selectivity == selectivity)
            .ok_or_else(|| {
                Error::Config(format!(
                    "'{dataset}' has no filtered ground truth for selectivity {selectivity} (it \
                     has {}); add it with `annbench datasets filter {dataset} --selectivity \
                     {}`, listing every selectivity you want",
                    self.selectivities().join(", "),
                    self.selectivities()
                        .into_iter()
                        .chain([selectivity.to_string()])
                        .collect::<Vec<_>>()
                        .join(",")
                ))
            })
    }

    /// The stored selectivities, ascending.
    pub fn selectivities(&self) -> Vec<String> {
        self.levels.iter().map(|l| l.selectivity.clone()).collect()
    }

    /// Checks that these filters belong to `ds` (same vectors, one attribute per row).
    pub fn check_for(&self, ds: &Dataset) -> Result<()> {
        let n = ds.train.nrows();
        let fresh = || {
            format!(
                "recreate them with `annbench datasets filter {} --selectivity ...`",
                ds.name
            )
        };
        if self.attr.len() != n {
            return Err(Error::Dataset(format!(
                "the filters of '{}' have {} attributes but the train set has {n} rows; {}",
                ds.name,
                self.attr.len(),
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
        Ok(())
    }
}

/// 32 hex digits naming `base` (the dataset's fingerprint) with the filter of `level`: its
/// seed, bound, every attribute and the filtered ground truth. Stored with each filtered
/// point, so a point is reused only with the same filter workload.
pub fn fingerprint(base: &str, f: &Filters, level: &Level) -> String {
    let mut h = twox_hash::XxHash3_128::new();
    h.write(b"annbench filter fingerprint v1\0");
    h.write(base.as_bytes());
    h.write(&f.seed.to_le_bytes());
    h.write(&level.threshold.to_le_bytes());
    for a in &f.attr {
        h.write(&a.to_le_bytes());
    }
    for (i, d) in level.truth.neighbors.iter().zip(&level.truth.distances) {
        h.write(&i.to_le_bytes());
        h.write(&d.to_bits().to_le_bytes());
    }
    format!("{:032x}", h.finish_128())
}

/// `s` as a selectivity in (0, 1]: a number, or text like `0.01` or `1%`. Returns the value
/// and its canonical text (shortest decimal, e.g. `0.001`, `0.5`, `1`).
pub fn parse_selectivity(value: &serde_json::Value) -> std::result::Result<(f64, String), String> {
    let bad = || {
        format!("{value} is not a selectivity: give a share of the rows in (0, 1], e.g. 0.01 or 1%")
    };
    let s = match value {
        serde_json::Value::Number(n) => n.as_f64().ok_or_else(bad)?,
        serde_json::Value::String(t) => {
            let t = t.trim();
            match t.strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
                None => t.parse::<f64>().map_err(|_| bad())?,
            }
        }
        _ => return Err(bad()),
    };
    if !(s > 0.0 && s <= 1.0) {
        return Err(format!(
            "selectivity {value} is outside (0, 1]: give the share of rows the filter keeps, \
             e.g. 0.01 for 1%"
        ));
    }
    // Six decimals name every selectivity down to one in a million; trailing zeros dropped.
    let text = format!("{s:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    if text == "0" {
        return Err(format!(
            "selectivity {value} is below 0.000001, the finest annbench names"
        ));
    }
    Ok((s, text))
}

/// The filter's bound for selectivity `s` on `rows` rows: `attr < threshold` keeps exactly
/// `threshold` rows, at least one.
pub fn threshold(s: f64, rows: usize) -> i64 {
    ((s * rows as f64).round() as i64).clamp(1, rows.max(1) as i64)
}

/// A seeded permutation of `0..n`.
pub fn attributes(n: usize, seed: u64) -> Vec<i32> {
    let mut v: Vec<i32> = (0..n as i32).collect();
    super::rng::Rng::new(seed).shuffle(&mut v);
    v
}

/// The filter workload of `ds` at `selectivities` (any text [`parse_selectivity`] takes):
/// attributes from `seed`, exact filtered ground truth per selectivity.
pub fn generate(ds: &Dataset, selectivities: &[String], seed: u64) -> Result<Filters> {
    let n = ds.train.nrows();
    if n > i32::MAX as usize {
        return Err(Error::Dataset(format!(
            "'{}': {n} train rows do not fit int32 attributes",
            ds.name
        )));
    }
    if selectivities.is_empty() {
        return Err(Error::Config(
            "--selectivity: give at least one share of rows in (0, 1], e.g. 0.001,0.01,0.1".into(),
        ));
    }
    let mut parsed: Vec<(f64, String)> = Vec::new();
    for s in selectivities {
        let p = parse_selectivity(&serde_json::Value::String(s.clone()))
            .map_err(|e| Error::Config(format!("--selectivity: {e}")))?;
        if !parsed.iter().any(|(_, t)| *t == p.1) {
            parsed.push(p);
        }
    }
    parsed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let attr = attributes(n, seed);
    let levels = parsed
        .into_iter()
        .map(|(s, text)| {
            let t = threshold(s, n);
            Ok(Level {
                selectivity: text,
                threshold: t,
                truth: filtered_truth(ds, &attr, t)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Filters {
        seed,
        vectors: super::fingerprint::vectors_digest(ds),
        attr,
        levels,
    })
}

/// Exact ground truth over the rows with `attr < t`, ids mapped back to train rows.
pub fn filtered_truth(ds: &Dataset, attr: &[i32], t: i64) -> Result<GroundTruth> {
    let ids: Vec<usize> = (0..attr.len())
        .filter(|&i| i64::from(attr[i]) < t)
        .collect();
    let sub = ds.train.select(Axis(0), &ids);
    let width = WIDTH.min(ids.len());
    let gt = groundtruth::try_compute(sub.view(), ds.test.view(), ds.metric, width)?;
    let neighbors: Array2<i32> = gt.neighbors.mapv(|j| ids[j as usize] as i32);
    Ok(GroundTruth {
        neighbors,
        distances: gt.distances,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;
    use serde_json::json;

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
    fn selectivities_parse_canonically_and_refuse_out_of_range() {
        let p = |v| parse_selectivity(&v).map(|(_, t)| t);
        assert_eq!(p(json!(0.01)).unwrap(), "0.01");
        assert_eq!(p(json!("1%")).unwrap(), "0.01");
        assert_eq!(p(json!("0.100")).unwrap(), "0.1");
        assert_eq!(p(json!(1)).unwrap(), "1");
        for bad in [json!(0), json!(1.5), json!(-0.1), json!("x"), json!("0")] {
            let e = p(bad.clone()).unwrap_err();
            assert!(
                e.contains("(0, 1]") || e.contains("not a selectivity"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn thresholds_keep_exact_row_counts() {
        assert_eq!(threshold(0.001, 4500), 5);
        assert_eq!(threshold(0.5, 4500), 2250);
        assert_eq!(threshold(1.0, 4500), 4500);
        assert_eq!(threshold(0.000001, 10), 1, "at least one row");
        let a = attributes(1000, 7);
        assert_eq!(a, attributes(1000, 7), "seeded");
        assert_ne!(a, attributes(1000, 8));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<i32>>(), "a permutation");
    }

    #[test]
    fn filtered_truth_only_holds_matching_rows() {
        let ds = random("t", 600, 20);
        let f = generate(&ds, &["0.5".into(), "0.01".into(), "1%".into()], 5).unwrap();
        assert_eq!(f.selectivities(), ["0.01", "0.5"]);
        let low = f.level("0.01", "t").unwrap();
        assert_eq!(low.threshold, 6);
        assert_eq!(
            low.truth.neighbors.ncols(),
            6,
            "as wide as the matching rows"
        );
        for &id in &f.level("0.5", "t").unwrap().truth.neighbors {
            assert!(f.attr[id as usize] < 300);
        }
        let e = f.level("0.2", "t").unwrap_err().to_string();
        assert!(e.contains("--selectivity 0.01,0.5,0.2"), "{e}");
        f.check_for(&ds).unwrap();
    }
}
