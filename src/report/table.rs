//! Best QPS at recall: for each recall threshold and series (algorithm, label, clients), the
//! point with the highest QPS among those whose recall is at or above the threshold (exactly
//! `>=`, no tolerance).
//!
//! Ties in QPS (exactly equal) go to the higher recall, then the shorter build, then the
//! smaller display name, then the earlier point in the input: the same input always gives the
//! same table. Points whose QPS is not a finite number never win.

use super::names::{algorithm_name, point_name};
use super::render::{Cell, Column, Style, Table, truncate4};
use super::series::{Distinct, SeriesKey, check_one_dataset, series_keys};
use crate::results::PointResult;
use std::cmp::Ordering;

/// Thresholds of the published tables.
pub const DEFAULT_THRESHOLDS: [f64; 6] = [1.0, 0.99, 0.98, 0.97, 0.96, 0.95];

/// The winning point of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Best {
    /// Index of the point in the slice given to [`best_at_recall`].
    pub index: usize,
    /// Display name, e.g. `MariaDB(m=12, ef_search=10)`.
    pub name: String,
    pub recall: f64,
    pub qps: f64,
    /// Index build seconds (isecs).
    pub build_seconds: f64,
    pub index_size_bytes: Option<u64>,
}

/// One (threshold, series) row.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallRow {
    pub threshold: f64,
    pub series: SeriesKey,
    /// The best point, or `None` when no point of the series reaches the threshold.
    pub best: Option<Best>,
    /// The highest recall any point of the series reached (`None` if none is a number).
    pub max_recall: Option<f64>,
    /// This row's QPS divided by the base algorithm's at the same threshold (see
    /// [`best_at_recall`]); `None` without a base or when either side did not reach it.
    pub vs_base: Option<f64>,
}

/// Rows by threshold (in the given order), then reached rows by QPS, best first (ties as in
/// the module docs), then rows that did not reach the threshold, in series order.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallTable {
    pub rows: Vec<RecallRow>,
    /// The base algorithm of `vs_base`, if any.
    pub base: Option<String>,
    /// Whether labels / client counts vary (Markdown shows those columns only then).
    pub distinct: Distinct,
}

/// Build the best-QPS-at-recall table of `points` (one dataset and count).
///
/// With `base = Some(algorithm)`, each row's QPS is divided by the QPS of that algorithm's
/// row at the same threshold, taken from the base series with the same client count and
/// label, or else the only base series with that client count (none if ambiguous).
pub fn best_at_recall(
    points: &[PointResult],
    thresholds: &[f64],
    base: Option<&str>,
) -> crate::Result<RecallTable> {
    let refs: Vec<&PointResult> = points.iter().collect();
    best_at_recall_of(&refs, thresholds, base)
}

/// [`best_at_recall`] over borrowed points (`Best::index` indexes `points`).
pub fn best_at_recall_of(
    points: &[&PointResult],
    thresholds: &[f64],
    base: Option<&str>,
) -> crate::Result<RecallTable> {
    if points.is_empty() {
        return Err(crate::Error::Results("no points to table".into()));
    }
    check_one_dataset(points.iter().copied(), "recall table")?;
    check_thresholds(thresholds)?;
    let keys = series_keys(points.iter().copied());
    if let Some(b) = base {
        if !keys.iter().any(|k| k.algorithm == b) {
            let mut algos: Vec<&str> = keys.iter().map(|k| k.algorithm.as_str()).collect();
            algos.dedup();
            return Err(crate::Error::Config(format!(
                "--base {b}: no results for that algorithm; the results have {}",
                algos.join(", ")
            )));
        }
    }
    let mut rows = Vec::new();
    for &threshold in thresholds {
        let mut block: Vec<RecallRow> = keys
            .iter()
            .map(|key| row_for(points, key, threshold))
            .collect();
        if let Some(b) = base {
            set_ratios(&mut block, b);
        }
        block.sort_by(|x, y| match (&x.best, &y.best) {
            (Some(a), Some(b)) => better(a, b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => x.series.cmp(&y.series),
        });
        rows.extend(block);
    }
    Ok(RecallTable {
        rows,
        base: base.map(str::to_string),
        distinct: Distinct::of(points.iter().copied()),
    })
}

fn check_thresholds(thresholds: &[f64]) -> crate::Result<()> {
    if thresholds.is_empty() {
        return Err(crate::Error::Config(
            "no recall thresholds: give --recall a list such as 0.99,0.95".into(),
        ));
    }
    match thresholds.iter().find(|t| !(0.0..=1.0).contains(*t)) {
        Some(t) => Err(crate::Error::Config(format!(
            "recall threshold {t} is outside 0..1: give values such as 0.99,0.95"
        ))),
        None => Ok(()),
    }
}

fn row_for(points: &[&PointResult], key: &SeriesKey, threshold: f64) -> RecallRow {
    let members = points
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, p)| SeriesKey::of(p) == *key);
    let max_recall = members
        .clone()
        .map(|(_, p)| p.metrics.recall)
        .filter(|r| r.is_finite())
        .reduce(f64::max);
    let best = members
        .filter(|(_, p)| p.metrics.recall >= threshold && p.metrics.qps.is_finite())
        .map(|(i, p)| Best {
            index: i,
            name: point_name(p),
            recall: p.metrics.recall,
            qps: p.metrics.qps,
            build_seconds: p.build_seconds,
            index_size_bytes: p.index_size_bytes,
        })
        .min_by(better);
    RecallRow {
        threshold,
        series: key.clone(),
        best,
        max_recall,
        vs_base: None,
    }
}

/// `Less` when `a` ranks before (is better than) `b`: the tie rule of the module docs.
pub fn better(a: &Best, b: &Best) -> Ordering {
    b.qps
        .total_cmp(&a.qps)
        .then(b.recall.total_cmp(&a.recall))
        .then(a.build_seconds.total_cmp(&b.build_seconds))
        .then_with(|| a.name.cmp(&b.name))
        .then(a.index.cmp(&b.index))
}

fn set_ratios(block: &mut [RecallRow], base: &str) {
    let base_qps: Vec<(SeriesKey, Option<f64>)> = block
        .iter()
        .filter(|r| r.series.algorithm == base)
        .map(|r| (r.series.clone(), r.best.as_ref().map(|b| b.qps)))
        .collect();
    for row in block.iter_mut() {
        let same_clients: Vec<&(SeriesKey, Option<f64>)> = base_qps
            .iter()
            .filter(|(k, _)| k.clients == row.series.clients)
            .collect();
        let chosen = same_clients
            .iter()
            .find(|(k, _)| k.label == row.series.label)
            .or(if same_clients.len() == 1 {
                same_clients.first()
            } else {
                None
            });
        row.vs_base = match (chosen.and_then(|(_, q)| *q), &row.best) {
            (Some(bq), Some(b)) if bq > 0.0 => Some(b.qps / bq),
            _ => None,
        };
    }
}

impl RecallTable {
    /// As a [`Table`]: columns `recall_threshold, algorithm, label, clients, reached, name,
    /// recall, qps, build_seconds, index_mb` (MB = 10^6 bytes), `best_recall`, and `vs_base`
    /// with a base. Markdown hides `reached` and `best_recall` (a row that did not reach its
    /// threshold says so in the name column) and shows label / clients only when they vary.
    pub fn to_table(&self) -> Table {
        let mut columns = vec![
            Column::new("recall_threshold", "recall >=", Style::Plain),
            Column::new("algorithm", "algorithm", Style::Plain),
            shown(
                Column::new("label", "label", Style::Plain),
                self.distinct.labels,
            ),
            shown(
                Column::new("clients", "clients", Style::Plain),
                self.distinct.clients,
            ),
            Column::new("reached", "reached", Style::Plain).machine_only(),
            Column::new("name", "parameters", Style::Plain),
            Column::new("recall", "recall", Style::Recall),
            Column::new("qps", "QPS", Style::Fixed(1)),
            Column::new("build_seconds", "isecs", Style::Fixed(1)),
            Column::new("index_mb", "index MB", Style::Fixed(1)),
            Column::new("best_recall", "best recall", Style::Recall).machine_only(),
        ];
        if let Some(base) = &self.base {
            let title = format!("vs {}", algorithm_name(base));
            columns.push(Column::new("vs_base", &title, Style::Ratio));
        }
        let rows = self.rows.iter().map(|r| self.cells(r)).collect();
        Table { columns, rows }
    }

    fn cells(&self, row: &RecallRow) -> Vec<Cell> {
        let mut cells = vec![
            Cell::Float(row.threshold),
            Cell::Text(algorithm_name(&row.series.algorithm)),
            Cell::from(row.series.label.as_deref()),
            Cell::Int(row.series.clients as i64),
            Cell::Bool(row.best.is_some()),
        ];
        match &row.best {
            Some(b) => cells.extend([
                Cell::Text(b.name.clone()),
                Cell::Float(b.recall),
                Cell::Float(b.qps),
                Cell::Float(b.build_seconds),
                Cell::from(b.index_size_bytes.map(megabytes)),
            ]),
            None => {
                let reason = match row.max_recall {
                    Some(r) => format!("not reached (best recall {:.4})", truncate4(r)),
                    None => "not reached (no recall measured)".to_string(),
                };
                cells.push(Cell::Missing(reason));
                cells.extend(std::iter::repeat_n(Cell::Null, 4));
            }
        }
        cells.push(Cell::from(row.max_recall));
        if self.base.is_some() {
            cells.push(Cell::from(row.vs_base));
        }
        cells
    }
}

fn shown(column: Column, visible: bool) -> Column {
    if visible {
        column
    } else {
        column.machine_only()
    }
}

/// Bytes as MB (10^6 bytes).
pub fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}
