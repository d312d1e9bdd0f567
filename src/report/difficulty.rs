//! Results split by query difficulty: the queries are ranked by a difficulty measure of the
//! dataset (LID or RC, [`crate::dataset::difficulty`]) and cut into equal-count bins, easiest
//! first; each point gets one row per bin with the recall and latency of those queries only.
//! An index that looks fine on average can fail on the hard third; this shows it.

use super::metrics::{Group, in_group, spec};
use super::names::point_name;
use super::params::{flat_params, param_cell};
use super::render::{Cell, Column, Style, Table};
use super::series::cmp_points;
use crate::dataset::difficulty::Difficulty;
use crate::metrics::{epsilon_threshold, knn_threshold, mean, percentile_sorted};
use crate::results::PointResult;
use crate::{Error, Result};
use ndarray::ArrayView2;
use std::collections::BTreeSet;

/// A difficulty measure to split by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Local intrinsic dimensionality: higher is harder.
    Lid,
    /// Relative contrast: lower is harder.
    Rc,
}

impl std::str::FromStr for Measure {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "lid" => Ok(Measure::Lid),
            "rc" => Ok(Measure::Rc),
            other => Err(Error::Config(format!(
                "unknown difficulty measure '{other}': expected lid or rc"
            ))),
        }
    }
}

impl Measure {
    fn name(self) -> &'static str {
        match self {
            Measure::Lid => "lid",
            Measure::Rc => "rc",
        }
    }

    /// Each query's value, oriented so that larger is harder.
    fn hardness(self, d: &Difficulty) -> Vec<Option<f64>> {
        match self {
            Measure::Lid => d.lid.clone(),
            Measure::Rc => d.rc.iter().map(|v| v.map(|x| -x)).collect(),
        }
    }
}

/// Query ids per bin (easiest bin first) and each bin's range of the measure; queries whose
/// measure is undefined are left out.
pub fn bins(d: &Difficulty, measure: Measure, count: usize) -> Vec<(Vec<usize>, f64, f64)> {
    let hard = measure.hardness(d);
    let mut ids: Vec<usize> = (0..hard.len()).filter(|&i| hard[i].is_some()).collect();
    ids.sort_by(|&a, &b| hard[a].unwrap_or(0.0).total_cmp(&hard[b].unwrap_or(0.0)));
    let count = count.clamp(1, ids.len().max(1));
    let value = |i: usize| {
        let h = hard[i].unwrap_or(0.0);
        if measure == Measure::Rc { -h } else { h }
    };
    (0..count)
        .filter_map(|b| {
            let part = &ids[b * ids.len() / count..(b + 1) * ids.len() / count];
            let (lo, hi) = part
                .iter()
                .map(|&i| value(i))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(v), h.max(v))
                });
            (!part.is_empty()).then(|| (part.to_vec(), lo, hi))
        })
        .collect()
}

/// Per-query recall of one point (the rules of [`crate::metrics`]), from its stored distances.
fn query_recalls(p: &PointResult, truth: ArrayView2<f32>, epsilon: bool) -> Vec<f64> {
    let k = p.count;
    p.distances
        .rows()
        .into_iter()
        .zip(truth.rows())
        .map(|(run, t)| {
            let kth = t[k.min(t.len()) - 1];
            let limit = if epsilon {
                epsilon_threshold(kth)
            } else {
                knn_threshold(kth)
            };
            run.iter().take(k).filter(|&&d| d <= limit).count() as f64 / k as f64
        })
        .collect()
}

/// The split table of `points` against the dataset's ground-truth distances `truth` and its
/// per-query difficulty.
pub fn split_table(
    points: &[PointResult],
    truth: ArrayView2<f32>,
    difficulty: &Difficulty,
    measure: Measure,
    count: usize,
) -> Result<Table> {
    let parts = bins(difficulty, measure, count);
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| cmp_points(a, b));
    for p in &sorted {
        if p.distances.nrows() != truth.nrows() || truth.ncols() < p.count {
            return Err(Error::Results(format!(
                "{}: the point has {} queries (k={}) but the dataset's ground truth is {} x {}; \
                 was it measured on another version of '{}'?",
                point_name(p),
                p.distances.nrows(),
                p.count,
                truth.nrows(),
                truth.ncols(),
                p.dataset
            )));
        }
    }
    let params: BTreeSet<String> = sorted
        .iter()
        .flat_map(|p| flat_params(p))
        .map(|(k, _)| k)
        .collect();
    // The point's columns and its figures from the registry (headed by their names), the
    // bin's own in between.
    let named = |name: &str, style: Style| Column::new(name, name, style);
    let mut columns: Vec<Column> = in_group(Group::Point)
        .map(|m| named(m.name, m.style))
        .collect();
    columns.extend([
        named("difficulty", Style::Plain),
        named("bin", Style::Plain),
        named("bin_low", Style::Fixed(2)),
        named("bin_high", Style::Fixed(2)),
        named("queries", Style::Plain),
    ]);
    columns.extend(
        [
            "recall",
            "epsilon_recall",
            "latency_mean_ms",
            "latency_p50_ms",
            "latency_p99_ms",
        ]
        .map(|name| named(name, spec(name).style)),
    );
    columns.extend(params.iter().map(|n| Column::new(n, n, Style::Plain)));
    let mut rows = Vec::new();
    for p in sorted {
        let recall = query_recalls(p, truth, false);
        let eps = query_recalls(p, truth, true);
        let mine = flat_params(p);
        for (b, (ids, lo, hi)) in parts.iter().enumerate() {
            let mut lat: Vec<f64> = ids
                .iter()
                .filter_map(|&i| p.latencies.get(i).copied())
                .collect();
            lat.sort_by(f64::total_cmp);
            let pick = |v: &[f64]| mean(&ids.iter().map(|&i| v[i]).collect::<Vec<_>>());
            let mut row = vec![
                Cell::Text(p.dataset.clone()),
                Cell::Int(p.count as i64),
                Cell::Text(p.algorithm.clone()),
                Cell::from(p.label.as_deref()),
                Cell::Int(p.clients as i64),
                Cell::Text(point_name(p)),
                Cell::Text(measure.name().into()),
                Cell::Int(b as i64 + 1),
                Cell::Float(*lo),
                Cell::Float(*hi),
                Cell::Int(ids.len() as i64),
                Cell::Float(pick(&recall)),
                Cell::Float(pick(&eps)),
                Cell::Float(mean(&lat) * 1e3),
                Cell::Float(percentile_sorted(&lat, 50.0) * 1e3),
                Cell::Float(percentile_sorted(&lat, 99.0) * 1e3),
            ];
            row.extend(params.iter().map(|name| {
                mine.iter()
                    .find(|(k, _)| k == name)
                    .map_or(Cell::Null, |(_, v)| param_cell(v))
            }));
            rows.push(row);
        }
    }
    Ok(Table { columns, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_equal_count_and_oriented_by_hardness() {
        let d = Difficulty {
            lid: vec![
                Some(5.0),
                Some(1.0),
                None,
                Some(3.0),
                Some(9.0),
                Some(7.0),
                Some(2.0),
            ],
            rc: vec![
                Some(1.1),
                Some(3.0),
                Some(2.0),
                None,
                Some(1.5),
                Some(2.5),
                Some(1.2),
            ],
        };
        let lid = bins(&d, Measure::Lid, 3);
        assert_eq!(
            lid.iter().map(|b| b.0.clone()).collect::<Vec<_>>(),
            vec![vec![1, 6], vec![3, 0], vec![5, 4]]
        );
        assert_eq!((lid[2].1, lid[2].2), (7.0, 9.0));
        // RC: the easiest bin has the highest contrast.
        let rc = bins(&d, Measure::Rc, 2);
        assert_eq!(rc[0].0, vec![1, 5, 2]);
        assert_eq!((rc[0].1, rc[0].2), (2.0, 3.0));
        assert_eq!(rc[1].0, vec![4, 6, 0]);
        assert_eq!("LID".parse::<Measure>().unwrap(), Measure::Lid);
        assert!("x".parse::<Measure>().is_err());
    }
}
