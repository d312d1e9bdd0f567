//! Best QPS at recall: for each recall threshold and series (algorithm, label, clients), the
//! point with the highest QPS among those whose recall is at or above the threshold (exactly
//! `>=`, no tolerance).
//!
//! The QPS is each point's figure (the median of its passes, or the best pass after
//! [`super::stats::apply_stat`]). Equal figures go to the higher recall, then the shorter
//! build, then the smaller display name, then the earlier point in the input: the same input
//! always gives the same table. Points whose QPS is not a finite number never win.
//!
//! Each row also names its runner-up (the series' next point at that threshold) and marks a
//! *tie* when the two points' confidence intervals overlap: the winner then won by noise, as
//! far as the measurement can tell.

pub use super::figure_text::{flags_text, interval_text, qps_text};
pub use super::metrics::mebibytes;
use super::names::{algorithm_name, point_name};
use super::params::{flat_params, param_cell};
use super::render::{Cell, Column, Style, Table, truncate4};
use super::series::{Distinct, SeriesKey, check_one_dataset};
use crate::metrics::interval::Interval;
use crate::results::{Flag, PointResult, ServerCost};
use std::cmp::Ordering;
use std::collections::BTreeMap;

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
    /// The QPS interval (`None` for a single pass or `--stat best`).
    pub interval: Option<Interval>,
    pub flags: Vec<Flag>,
    /// The database server's cost per query, where measured.
    pub server: Option<ServerCost>,
    /// The series' next point at this threshold, if any.
    pub runner_up: Option<RunnerUp>,
    /// `(param_<name>, value)` of the build then query parameters.
    pub params: Vec<(String, serde_json::Value)>,
    /// The winner's and the runner-up's intervals overlap.
    pub tie: bool,
}

/// The second-best point of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerUp {
    pub index: usize,
    pub name: String,
    pub qps: f64,
    pub interval: Option<Interval>,
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
    /// The base of `vs_base` (an algorithm or a run label), if any.
    pub base: Option<String>,
    /// Whether labels / client counts vary (Markdown shows those columns only then).
    pub distinct: Distinct,
    /// Add the server cost columns ([`SERVER_COLUMNS`]; `annbench table --server-cost`).
    pub server_cost: bool,
}

/// The server cost columns of [`RecallTable::to_table`] with `server_cost`: CPU (user +
/// system) and context switches per query (local servers), server execution time per query,
/// what the client and network add (mean latency - server time), buffer hits and reads per
/// query; storage reads, KiB read and KiB written per query of the data directory's device,
/// and KiB the server processes read per query (docs/server-cost.md). Times in milliseconds.
pub const SERVER_COLUMNS: [(&str, &str, Style); 10] = [
    ("server_cpu_ms", "server CPU ms/q", Style::Fixed(3)),
    ("server_switches", "ctx sw/q", Style::Fixed(2)),
    ("server_exec_ms", "server exec ms/q", Style::Fixed(3)),
    ("client_network_ms", "client+net ms/q", Style::Fixed(3)),
    ("server_buffer_hits", "buffer hits/q", Style::Fixed(1)),
    ("server_buffer_reads", "buffer reads/q", Style::Fixed(1)),
    ("io_reads", "reads/q", Style::Fixed(3)),
    ("io_read_kib", "rKB/q", Style::Fixed(2)),
    ("io_write_kib", "wKB/q", Style::Fixed(2)),
    ("server_read_kib", "server read KiB/q", Style::Fixed(2)),
];

/// Build the best-QPS-at-recall table of `points` (one dataset and count).
///
/// With `base = Some(algorithm or label)`, each row's QPS is divided by the QPS of the base's
/// row at the same threshold ([`base_qps`]).
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
    if let Some(b) = base {
        check_base(points, b)?;
    }
    // Names once per point; members of each series once.
    let names: Vec<String> = points.iter().map(|p| point_name(p)).collect();
    let mut members: BTreeMap<SeriesKey, Vec<usize>> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        members.entry(SeriesKey::of(p)).or_default().push(i);
    }
    let mut rows = Vec::new();
    for &threshold in thresholds {
        let mut block: Vec<RecallRow> = members
            .iter()
            .map(|(key, idx)| row_for(points, &names, key, idx, threshold))
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
        server_cost: false,
    })
}

/// `base` names an algorithm or a run label of `points`; else an error listing both.
pub fn check_base(points: &[&PointResult], base: &str) -> crate::Result<()> {
    if points
        .iter()
        .any(|p| p.algorithm == base || p.label.as_deref() == Some(base))
    {
        return Ok(());
    }
    let algos: std::collections::BTreeSet<&str> =
        points.iter().map(|p| p.algorithm.as_str()).collect();
    let labels: std::collections::BTreeSet<&str> =
        points.iter().filter_map(|p| p.label.as_deref()).collect();
    let algos: Vec<&str> = algos.into_iter().collect();
    let labels: Vec<&str> = labels.into_iter().collect();
    let labels = if labels.is_empty() {
        "no labels".to_string()
    } else {
        format!("labels {}", labels.join(", "))
    };
    Err(crate::Error::Config(format!(
        "--base {base}: no results for that algorithm or label; the results have algorithms \
         {} and {labels}",
        algos.join(", ")
    )))
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

fn row_for(
    points: &[&PointResult],
    names: &[String],
    key: &SeriesKey,
    members: &[usize],
    threshold: f64,
) -> RecallRow {
    let max_recall = members
        .iter()
        .map(|&i| points[i].metrics.recall)
        .filter(|r| r.is_finite())
        .reduce(f64::max);
    let rank = |i: usize| {
        let p = points[i];
        let m = &p.metrics;
        (m.qps, m.recall, p.build_seconds, names[i].as_str(), i)
    };
    let mut reached: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| points[i].metrics.recall >= threshold && points[i].metrics.qps.is_finite())
        .collect();
    reached.sort_by(|&a, &b| rank_order(rank(a), rank(b)));
    let runner_up = reached.get(1).map(|&i| RunnerUp {
        index: i,
        name: names[i].clone(),
        qps: points[i].metrics.qps,
        interval: points[i].metrics.qps_interval(),
    });
    let best = reached.first().map(|&i| {
        let interval = points[i].metrics.qps_interval();
        let tie = match (interval, runner_up.as_ref().and_then(|r| r.interval)) {
            (Some(a), Some(b)) => a.overlaps(&b),
            _ => false,
        };
        Best {
            index: i,
            name: names[i].clone(),
            recall: points[i].metrics.recall,
            qps: points[i].metrics.qps,
            build_seconds: points[i].build_seconds,
            index_size_bytes: points[i].index_size_bytes,
            interval,
            flags: points[i].metrics.flags.clone(),
            server: points[i].metrics.server.clone(),
            runner_up: runner_up.clone(),
            params: flat_params(points[i]),
            tie,
        }
    });
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
    rank_order(
        (a.qps, a.recall, a.build_seconds, &a.name, a.index),
        (b.qps, b.recall, b.build_seconds, &b.name, b.index),
    )
}

/// (qps, recall, build seconds, name, input index): higher QPS, then higher recall, then
/// shorter build, then smaller name, then earlier input ranks first.
type Rank<'a> = (f64, f64, f64, &'a str, usize);

fn rank_order(a: Rank<'_>, b: Rank<'_>) -> Ordering {
    b.0.total_cmp(&a.0)
        .then(b.1.total_cmp(&a.1))
        .then(a.2.total_cmp(&b.2))
        .then_with(|| a.3.cmp(b.3))
        .then(a.4.cmp(&b.4))
}

fn set_ratios(block: &mut [RecallRow], base: &str) {
    let ratios: Vec<Option<f64>> = block
        .iter()
        .map(
            |row| match (base_qps(block, &row.series, base), &row.best) {
                (Some(bq), Some(b)) if bq > 0.0 => Some(b.qps / bq),
                _ => None,
            },
        )
        .collect();
    for (row, ratio) in block.iter_mut().zip(ratios) {
        row.vs_base = ratio;
    }
}

/// The QPS `series` is compared with in one threshold's `block`: of the series whose
/// algorithm or label is `base`, the one with the same client count and the same label (base
/// an algorithm) or algorithm (base a label), or else the only one with that client count;
/// `None` when there is none, it did not reach the threshold, or the choice is ambiguous.
pub fn base_qps(block: &[RecallRow], series: &SeriesKey, base: &str) -> Option<f64> {
    let by_algorithm = block.iter().any(|r| r.series.algorithm == base);
    let same_clients: Vec<&RecallRow> = block
        .iter()
        .filter(|r| {
            let k = &r.series;
            k.clients == series.clients
                && if by_algorithm {
                    k.algorithm == base
                } else {
                    k.label.as_deref() == Some(base)
                }
        })
        .collect();
    let chosen = same_clients
        .iter()
        .find(|r| {
            if by_algorithm {
                r.series.label == series.label
            } else {
                r.series.algorithm == series.algorithm
            }
        })
        .or(if same_clients.len() == 1 {
            same_clients.first()
        } else {
            None
        });
    chosen.and_then(|r| r.best.as_ref()).map(|b| b.qps)
}

impl RecallTable {
    /// As a [`Table`]: columns `recall_threshold, algorithm` (the registry id), `label,
    /// clients, reached, name, recall, qps, qps_ci_low, qps_ci_high, flags, build_seconds,
    /// index_mib` (MiB = 2^20 bytes), `best_recall, tie, runner_up, runner_up_qps,
    /// runner_up_ci_low, runner_up_ci_high`, `vs_base` with a base, the server columns with
    /// `server_cost`, then the winner's `param_<name>` columns (machine formats only). Markdown hides `reached` and
    /// `best_recall` (a row that did not reach its threshold says so in the name column),
    /// shows QPS as `~figure [low, high]` (`~` when flagged), the runner-up of a tie, and label /
    /// clients only when they vary.
    pub fn to_table(&self) -> Table {
        let any_tie = self
            .rows
            .iter()
            .any(|r| r.best.as_ref().is_some_and(|b| b.tie));
        let any_storage = self.rows.iter().any(|r| storage_of(r).is_some());
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
            Column::new("qps", "QPS", Style::Fixed(1)).machine_only(),
            Column::new("qps_ci_low", "low", Style::Fixed(1)).machine_only(),
            Column::new("qps_ci_high", "high", Style::Fixed(1)).machine_only(),
            Column::new("flags", "flags", Style::Plain).machine_only(),
            Column::new("qps_text", "QPS [95% CI]", Style::Plain).markdown_only(),
            shown(Column::new("storage", "storage", Style::Plain), any_storage),
            Column::new("build_seconds", "isecs", Style::Fixed(1)),
            Column::new("index_mib", "index MiB", Style::Fixed(1)),
            Column::new("best_recall", "best recall", Style::Recall).machine_only(),
            Column::new("tie", "tie", Style::Plain).machine_only(),
            Column::new("runner_up", "runner-up", Style::Plain).machine_only(),
            Column::new("runner_up_qps", "runner-up QPS", Style::Fixed(1)).machine_only(),
            Column::new("runner_up_ci_low", "low", Style::Fixed(1)).machine_only(),
            Column::new("runner_up_ci_high", "high", Style::Fixed(1)).machine_only(),
            shown(
                Column::new("tie_text", "tie with (runner-up)", Style::Plain),
                any_tie,
            )
            .markdown_only(),
        ];
        if let Some(base) = &self.base {
            let title = format!("vs {}", algorithm_name(base));
            columns.push(Column::new("vs_base", &title, Style::Ratio));
        }
        if self.server_cost {
            columns.extend(SERVER_COLUMNS.iter().map(|(n, t, s)| Column::new(n, t, *s)));
        }
        let params = self.param_names();
        columns.extend(
            params
                .iter()
                .map(|n| Column::new(n, n, Style::Plain).machine_only()),
        );
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut cells = self.cells(r);
                let mine = r.best.as_ref().map(|b| b.params.as_slice()).unwrap_or(&[]);
                cells.extend(params.iter().map(|name| {
                    mine.iter()
                        .find(|(k, _)| k == name)
                        .map_or(Cell::Null, |(_, v)| param_cell(v))
                }));
                cells
            })
            .collect();
        Table { columns, rows }
    }

    /// The `param_<name>` columns of the winners, sorted by name.
    fn param_names(&self) -> Vec<String> {
        let names: std::collections::BTreeSet<String> = self
            .rows
            .iter()
            .filter_map(|r| r.best.as_ref())
            .flat_map(|b| b.params.iter().map(|(k, _)| k.clone()))
            .collect();
        names.into_iter().collect()
    }

    fn cells(&self, row: &RecallRow) -> Vec<Cell> {
        let mut cells = vec![
            Cell::Float(row.threshold),
            Cell::Text(row.series.algorithm.clone()),
            Cell::from(row.series.label.as_deref()),
            Cell::Int(row.series.clients as i64),
            Cell::Bool(row.best.is_some()),
        ];
        match &row.best {
            Some(b) => {
                cells.extend([
                    Cell::Text(b.name.clone()),
                    Cell::Float(b.recall),
                    Cell::Float(b.qps),
                    Cell::from(b.interval.map(|i| i.low)),
                    Cell::from(b.interval.map(|i| i.high)),
                    Cell::Text(flags_text(&b.flags)),
                    Cell::Text(qps_text(b.qps, b.interval, !b.flags.is_empty())),
                    Cell::from(storage_of(row)),
                    Cell::Float(b.build_seconds),
                    Cell::from(b.index_size_bytes.map(mebibytes)),
                    Cell::from(row.max_recall),
                ]);
                let r = b.runner_up.as_ref();
                let ri = r.and_then(|r| r.interval);
                cells.extend([
                    Cell::Bool(b.tie),
                    Cell::from(r.map(|r| r.name.as_str())),
                    Cell::from(r.map(|r| r.qps)),
                    Cell::from(ri.map(|i| i.low)),
                    Cell::from(ri.map(|i| i.high)),
                    match r {
                        Some(r) if b.tie => {
                            Cell::Text(format!("{}: {}", r.name, qps_text(r.qps, ri, false)))
                        }
                        _ => Cell::Null,
                    },
                ]);
            }
            None => {
                let reason = match row.max_recall {
                    Some(r) => format!("not reached (best recall {:.4})", truncate4(r)),
                    None => "not reached (no recall measured)".to_string(),
                };
                cells.push(Cell::Missing(reason));
                cells.extend(std::iter::repeat_n(Cell::Null, 9));
                cells.push(Cell::from(row.max_recall));
                cells.extend(std::iter::repeat_n(Cell::Null, 6));
            }
        }
        if self.base.is_some() {
            cells.push(Cell::from(row.vs_base));
        }
        if self.server_cost {
            let s = row.best.as_ref().and_then(|b| b.server.as_ref());
            let ms = |v: Option<f64>| Cell::from(v.map(|x| x * 1e3));
            let switches = s.and_then(|s| {
                Some(s.voluntary_switches_per_query? + s.involuntary_switches_per_query?)
            });
            cells.extend([
                ms(s.and_then(|s| s.cpu_per_query)),
                Cell::from(switches),
                ms(s.and_then(|s| s.exec_per_query)),
                ms(s.and_then(|s| s.client_network_per_query)),
                Cell::from(s.and_then(|s| s.buffer_hits_per_query)),
                Cell::from(s.and_then(|s| s.buffer_reads_per_query)),
                Cell::from(s.and_then(|s| s.io_reads_per_query)),
                Cell::from(s.and_then(|s| s.io_read_kib_per_query)),
                Cell::from(s.and_then(|s| s.io_write_kib_per_query)),
                Cell::from(s.and_then(|s| s.server_read_kib_per_query)),
            ]);
        }
        cells
    }
}

/// `cached` or `io-bound` of a row's best point, where its storage reads were measured.
fn storage_of(row: &RecallRow) -> Option<&'static str> {
    let server = row.best.as_ref()?.server.as_ref()?;
    server.storage().map(|s| s.as_str())
}

fn shown(column: Column, visible: bool) -> Column {
    if visible {
        column
    } else {
        column.machine_only()
    }
}
