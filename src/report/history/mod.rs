//! A series of labelled runs of one dataset (nightly runs, one run per server version), its
//! lines and their change points: "when did it get slower?".
//!
//! Each *element* of the series is one label. Each *line* follows one thing through the
//! elements: a point (same algorithm, build and query parameters, clients) or a best-QPS-at-
//! recall row (same algorithm and clients at a threshold). Each line holds per element the
//! QPS with its interval, the recall, the server's CPU and context switches per query; each
//! of these four *metrics* is split into levels by [`crate::metrics::changepoint`] (Apache
//! Otava's method), and each change point is a regression or an improvement by the metric's
//! direction. An element where a line has no point is shown as missing and left out of that
//! line's analysis (Otava would fill it from the element before; a filled copy of one
//! measurement would be t-tested as if measured again, and a grid changed mid-series would
//! raise false alarms).

pub mod order;
pub mod view;

use super::names::point_name;
use super::series::{check_one_dataset, params_identity};
use super::table::best_at_recall_of;
use crate::metrics::changepoint::{self, ChangePoint};
use crate::metrics::interval::Interval;
use crate::results::PointResult;
use order::{LabelFacts, Order};
use std::collections::BTreeMap;

pub use view::HistoryFormat;

/// Default `--window`: 8 runs. Otava's 50 misses a level that returns within a short series
/// (4 runs down in 12: its first cut is tested against all the rest), which a nightly series
/// must show as two change points; on noise alone a window of 8 finds about as few change
/// points as 50 (docs/methodology.md gives the rates).
pub const DEFAULT_WINDOW: usize = 8;

/// Default `--magnitude`: a change point must move its metric by more than 2% (Otava's own
/// default is 0; QPS on a shared machine moves by a percent or two between runs).
pub const DEFAULT_MIN_MAGNITUDE: f64 = 0.02;

/// Default recall thresholds of the best-QPS-at-recall lines (fewer than a table's: each
/// is a line of its own).
pub const DEFAULT_THRESHOLDS: [f64; 3] = [0.99, 0.95, 0.9];

/// The options of [`history`].
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryOptions {
    /// Labels or globs (`nightly-*`) making the series; empty: every label.
    pub series: Vec<String>,
    pub order: Order,
    /// Ratios against this label (default: the first element).
    pub base: Option<String>,
    /// Only these algorithms (empty: all).
    pub algorithms: Vec<String>,
    pub thresholds: Vec<f64>,
    pub change: changepoint::Options,
    /// Analyse runs from several client hosts together.
    pub hosts_any: bool,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            series: Vec::new(),
            order: Order::Time,
            base: None,
            algorithms: Vec::new(),
            thresholds: DEFAULT_THRESHOLDS.to_vec(),
            change: changepoint::Options {
                window: DEFAULT_WINDOW,
                max_pvalue: changepoint::DEFAULT_MAX_PVALUE,
                min_magnitude: DEFAULT_MIN_MAGNITUDE,
            },
            hosts_any: false,
        }
    }
}

/// What a line measures at each element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum HistMetric {
    #[default]
    Qps,
    Recall,
    /// Server CPU seconds per query (local servers).
    CpuPerQuery,
    /// Server context switches (voluntary + involuntary) per query.
    SwitchesPerQuery,
}

impl HistMetric {
    pub const ALL: [HistMetric; 4] = [
        HistMetric::Qps,
        HistMetric::Recall,
        HistMetric::CpuPerQuery,
        HistMetric::SwitchesPerQuery,
    ];

    /// The machine name (JSON, CSV, Otava's `metric`).
    pub fn name(self) -> &'static str {
        match self {
            HistMetric::Qps => "qps",
            HistMetric::Recall => "recall",
            HistMetric::CpuPerQuery => "server_cpu_per_query",
            HistMetric::SwitchesPerQuery => "server_switches_per_query",
        }
    }

    /// Higher is better for QPS and recall; CPU and switches per query are costs.
    pub fn higher_is_better(self) -> bool {
        matches!(self, HistMetric::Qps | HistMetric::Recall)
    }

    fn of(self, v: &Values) -> Option<f64> {
        match self {
            HistMetric::Qps => Some(v.qps),
            HistMetric::Recall => Some(v.recall),
            HistMetric::CpuPerQuery => v.cpu_per_query,
            HistMetric::SwitchesPerQuery => v.switches_per_query,
        }
        .filter(|x| x.is_finite())
    }
}

/// One element of the series: a label and what identifies its run.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub label: String,
    /// When its run started (RFC 3339), or finished for older files.
    pub time: Option<String>,
    pub server_version: String,
    pub hosts: Vec<String>,
}

/// What a line follows.
#[derive(Debug, Clone, PartialEq)]
pub enum LineKey {
    /// One point's parameters.
    Point {
        algorithm: String,
        params: String,
        clients: usize,
    },
    /// The best QPS at a recall threshold.
    Threshold {
        algorithm: String,
        clients: usize,
        threshold: f64,
    },
}

/// A line's figures at one element.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    /// The point these figures come from (its name, e.g. `MariaDB(m=16, ef_search=40)`).
    pub point: String,
    pub qps: f64,
    pub qps_interval: Option<Interval>,
    pub recall: f64,
    pub cpu_per_query: Option<f64>,
    pub switches_per_query: Option<f64>,
}

/// A change point of one metric of one line, with Otava's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: HistMetric,
    /// The first element of the new level.
    pub index: usize,
    pub label: String,
    pub time: Option<String>,
    pub forward_change_percent: f64,
    pub magnitude: f64,
    pub mean_before: f64,
    pub stddev_before: f64,
    pub mean_after: f64,
    pub stddev_after: f64,
    pub pvalue: f64,
    /// Worse by the metric's direction (QPS or recall down, CPU or switches per query up).
    pub regression: bool,
}

/// One line through the series.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub key: LineKey,
    /// Display name, e.g. `MariaDB(m=16, ef_search=40), 1 client`.
    pub name: String,
    /// One entry per element; `None` where the element has no such point.
    pub values: Vec<Option<Values>>,
    /// By index, then metric.
    pub changes: Vec<Change>,
}

impl Line {
    /// The metric at every element, `None` where missing.
    pub fn metric(&self, m: HistMetric) -> Vec<Option<f64>> {
        self.values
            .iter()
            .map(|v| v.as_ref().and_then(|v| m.of(v)))
            .collect()
    }
}

/// A series and its change points.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub dataset: String,
    pub count: usize,
    pub elements: Vec<Element>,
    /// Index of the element ratios are taken against.
    pub base: usize,
    pub lines: Vec<Line>,
    pub options: HistoryOptions,
    pub notes: Vec<String>,
}

impl History {
    /// Every change point, with its line.
    pub fn changes(&self) -> impl Iterator<Item = (&Line, &Change)> {
        self.lines
            .iter()
            .flat_map(|l| l.changes.iter().map(move |c| (l, c)))
    }

    /// The regressions the newest element lies in: per line and metric, the last change point
    /// when it is a regression (a regression followed by a recovery is not one).
    pub fn current_regressions(&self) -> Vec<(&Line, &Change)> {
        let mut out = Vec::new();
        // A line the newest run did not measure says nothing about it.
        for line in self
            .lines
            .iter()
            .filter(|l| l.values.last().is_some_and(Option::is_some))
        {
            for m in HistMetric::ALL {
                let last = line.changes.iter().rfind(|c| c.metric == m);
                if let Some(c) = last.filter(|c| c.regression) {
                    out.push((line, c));
                }
            }
        }
        out
    }

    /// How many (line, metric) series were searched for change points: the family the gate
    /// corrects for.
    pub fn tested_series(&self) -> usize {
        self.lines
            .iter()
            .map(|l| {
                HistMetric::ALL
                    .iter()
                    .filter(|m| l.metric(**m).iter().any(Option::is_some))
                    .count()
            })
            .sum()
    }

    /// The p-value a current regression must be below to fail `--fail-on regression`: the
    /// change point threshold divided by the series searched (Bonferroni). Each series alone
    /// shows a change point on noise now and then (1 to 5% of noise-only series of 12 to 30
    /// runs at the defaults), so with 40 series an uncorrected gate would fail a run without
    /// any change one time in three to seven (docs/methodology.md).
    pub fn gate_pvalue(&self) -> f64 {
        self.options.change.max_pvalue / self.tested_series().max(1) as f64
    }

    /// The current regressions that fail the gate.
    pub fn gate(&self) -> Vec<(&Line, &Change)> {
        let limit = self.gate_pvalue();
        self.current_regressions()
            .into_iter()
            .filter(|(_, c)| c.pvalue < limit)
            .collect()
    }
}

/// The series of `points` (one dataset and count) and its change points.
pub fn history(points: &[PointResult], opts: &HistoryOptions) -> crate::Result<History> {
    check_options(opts)?;
    if points.is_empty() {
        return Err(crate::Error::Results(
            "no stored results for this dataset and count: run `annbench run --label NAME` \
             first, or point the result store (and count) at the runs"
                .into(),
        ));
    }
    check_one_dataset(points, "history")?;
    let present: std::collections::BTreeSet<&str> =
        points.iter().map(|p| p.algorithm.as_str()).collect();
    let points: Vec<&PointResult> = points
        .iter()
        .filter(|p| opts.algorithms.is_empty() || opts.algorithms.contains(&p.algorithm))
        .collect();
    if points.is_empty() {
        return Err(crate::Error::Config(format!(
            "--algorithm {}: no stored point of that algorithm; the store holds {}",
            opts.algorithms.join(","),
            present.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    // A `run --memory` sweep's share series are one run at several memory sizes, not runs
    // over time: left out unless --series names them.
    let mut notes = Vec::new();
    let (shares, points): (Vec<&PointResult>, Vec<&PointResult>) = points
        .into_iter()
        .partition(|p| opts.series.is_empty() && crate::report::memory::memory_share(p).is_some());
    if !shares.is_empty() {
        let labels: std::collections::BTreeSet<&str> =
            shares.iter().filter_map(|p| p.label.as_deref()).collect();
        notes.push(format!(
            "{} --memory share series left out ({}): they are one run at several memory sizes \
             (table --by-memory); name them in --series to follow them",
            labels.len(),
            labels.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if points.iter().all(|p| p.label.is_none()) && !shares.is_empty() {
        return Err(crate::Error::Config(
            "the store's labelled runs are --memory share series only: name the ones to follow \
             with --series (e.g. --series 'mem*'), or read them with table --by-memory"
                .into(),
        ));
    }
    let facts = order::label_facts(points.iter().copied());
    let labels = order::series_labels(&facts, &opts.series, opts.order)?;
    check_hosts(&labels, &facts, opts.hosts_any, &mut notes)?;
    if labels.len() < 3 {
        notes.push(format!(
            "the series has {} element(s): change points need at least 3",
            labels.len()
        ));
    }
    let elements: Vec<Element> = labels
        .iter()
        .map(|l| {
            let f = &facts[l];
            Element {
                label: l.clone(),
                time: f.time.clone(),
                server_version: f.versions.join("; "),
                hosts: f.hosts.clone(),
            }
        })
        .collect();
    if labels.iter().any(|l| facts[l].time_is_finish) {
        notes.push(
            "some runs were stored before annbench recorded start times: their time is when \
             their first point finished"
                .into(),
        );
    }
    let base = match &opts.base {
        None => 0,
        Some(b) => labels.iter().position(|l| l == b).ok_or_else(|| {
            crate::Error::Config(format!(
                "--base {b}: not an element of the series ({})",
                labels.join(", ")
            ))
        })?,
    };
    let by_label: Vec<Vec<&PointResult>> = labels
        .iter()
        .map(|l| {
            points
                .iter()
                .copied()
                .filter(|p| p.label.as_deref() == Some(l))
                .collect()
        })
        .collect();
    let mut thresholds: Vec<f64> = Vec::new();
    for &t in &opts.thresholds {
        if !thresholds.contains(&t) {
            thresholds.push(t);
        }
    }
    let mut lines = point_lines(&by_label);
    let points_only = lines.len();
    lines.extend(threshold_lines(&by_label, &thresholds)?);
    let unreached: Vec<String> = thresholds
        .iter()
        .filter(|t| {
            !lines[points_only..]
                .iter()
                .any(|l| matches!(l.key, LineKey::Threshold { threshold, .. } if threshold == **t))
        })
        .map(f64::to_string)
        .collect();
    if !unreached.is_empty() {
        notes.push(format!(
            "no run reaches recall >= {}: no line for that threshold",
            unreached.join(", ")
        ));
    }
    let mut partial = 0;
    for line in &mut lines {
        partial += usize::from(line.values.iter().any(Option::is_none));
        line.changes = line_changes(line, &elements, opts.change);
    }
    // A threshold the newest run no longer reaches has no value there, so no change point
    // can say so: said in words, as the recall loss it is.
    for line in &lines[points_only..] {
        let reached_before = line.values.iter().rev().skip(1).any(Option::is_some);
        if let (Some(None), true) = (line.values.last(), reached_before) {
            notes.push(format!(
                "{}: the newest run ('{}') no longer reaches this recall, which earlier runs \
                 reached: a recall loss (see its points' recall)",
                line.name,
                elements[elements.len() - 1].label
            ));
        }
    }
    if partial > 0 {
        notes.push(format!(
            "{partial} line(s) lack some runs (a run without that point, or a threshold it did \
             not reach): their change points come from the runs that measured them, and one \
             the newest run lacks does not count for the gate"
        ));
    }
    Ok(History {
        dataset: points[0].dataset.clone(),
        count: points[0].count,
        elements,
        base,
        lines,
        options: opts.clone(),
        notes,
    })
}

fn check_options(opts: &HistoryOptions) -> crate::Result<()> {
    let c = opts.change;
    if c.window < 2 {
        return Err(crate::Error::Config(format!(
            "--window {}: give 2 or more elements",
            c.window
        )));
    }
    if !(c.max_pvalue > 0.0 && c.max_pvalue <= 1.0) {
        return Err(crate::Error::Config(format!(
            "--p-value {}: give a probability above 0 and at most 1, e.g. 0.001",
            c.max_pvalue
        )));
    }
    if !(c.min_magnitude >= 0.0 && c.min_magnitude.is_finite()) {
        return Err(crate::Error::Config(format!(
            "--magnitude {}: give a share of 0 or more, e.g. 2% or 0.02",
            c.min_magnitude
        )));
    }
    Ok(())
}

/// Runs from several client hosts are refused unless `--hosts any`: a host change would look
/// like a change point.
fn check_hosts(
    labels: &[String],
    facts: &BTreeMap<String, LabelFacts>,
    any: bool,
    notes: &mut Vec<String>,
) -> crate::Result<()> {
    let mut hosts: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for l in labels {
        for h in &facts[l].hosts {
            hosts.entry(h).or_default().push(l);
        }
    }
    if hosts.len() < 2 {
        return Ok(());
    }
    let list: Vec<String> = hosts
        .iter()
        .map(|(h, ls)| format!("{h} ({})", ls.join(", ")))
        .collect();
    if any {
        notes.push(format!(
            "the runs come from {} hosts, analysed together (--hosts any): {}",
            hosts.len(),
            list.join("; ")
        ));
        return Ok(());
    }
    Err(crate::Error::Config(format!(
        "the series mixes runs from {} client hosts: {}. A change of host would look like a \
         change point; pick one host's runs with --series, or give --hosts any to analyse \
         them together",
        hosts.len(),
        list.join("; ")
    )))
}

fn values_of(p: &PointResult) -> Values {
    let server = p.metrics.server.as_ref();
    let switches = server.and_then(|s| {
        Some(s.voluntary_switches_per_query? + s.involuntary_switches_per_query.unwrap_or(0.0))
    });
    Values {
        point: point_name(p),
        qps: p.metrics.qps,
        qps_interval: p.metrics.qps_interval(),
        recall: p.metrics.recall,
        cpu_per_query: server.and_then(|s| s.cpu_per_query),
        switches_per_query: switches,
    }
}

fn clients_text(clients: usize) -> String {
    if clients == 1 {
        "1 client".into()
    } else {
        format!("{clients} clients")
    }
}

/// One line per (algorithm, parameters, clients) found in any element; in an element with
/// several such points the fastest stands for them (as `compare` does).
fn point_lines(by_label: &[Vec<&PointResult>]) -> Vec<Line> {
    let mut keys: BTreeMap<(String, usize, String), (String, &PointResult)> = BTreeMap::new();
    for pts in by_label {
        for p in pts {
            let id = params_identity(p);
            keys.entry((p.algorithm.clone(), p.clients, id))
                .or_insert((point_name(p), p));
        }
    }
    let mut ordered: Vec<_> = keys.into_iter().collect();
    ordered.sort_by(|((a1, c1, _), (_, p1)), ((a2, c2, _), (_, p2))| {
        (a1, c1)
            .cmp(&(a2, c2))
            .then_with(|| super::series::cmp_params(&p1.build_args, &p2.build_args))
            .then_with(|| super::series::cmp_params(&p1.query_args, &p2.query_args))
    });
    ordered
        .into_iter()
        .map(|((algorithm, clients, id), (name, _))| {
            let values = by_label
                .iter()
                .map(|pts| {
                    pts.iter()
                        .filter(|p| {
                            p.algorithm == algorithm
                                && p.clients == clients
                                && params_identity(p) == id
                        })
                        .max_by(|a, b| a.metrics.qps.total_cmp(&b.metrics.qps))
                        .map(|p| values_of(p))
                })
                .collect();
            Line {
                name: format!("{name}, {}", clients_text(clients)),
                key: LineKey::Point {
                    algorithm,
                    params: name,
                    clients,
                },
                values,
                changes: Vec::new(),
            }
        })
        .collect()
}

/// One line per (algorithm, clients, threshold) reached in any element.
fn threshold_lines(by_label: &[Vec<&PointResult>], thresholds: &[f64]) -> crate::Result<Vec<Line>> {
    let tables = by_label
        .iter()
        .map(|pts| best_at_recall_of(pts, thresholds, None))
        .collect::<crate::Result<Vec<_>>>()?;
    let mut lines: Vec<Line> = Vec::new();
    for &t in thresholds {
        let mut keys: Vec<(String, usize)> = tables
            .iter()
            .flat_map(|tab| tab.rows.iter())
            .filter(|r| r.threshold == t && r.best.is_some())
            .map(|r| (r.series.algorithm.clone(), r.series.clients))
            .collect();
        keys.sort();
        keys.dedup();
        for (algorithm, clients) in keys {
            let values = tables
                .iter()
                .zip(by_label)
                .map(|(tab, pts)| {
                    tab.rows
                        .iter()
                        .find(|r| {
                            r.threshold == t
                                && r.series.algorithm == algorithm
                                && r.series.clients == clients
                        })
                        .and_then(|r| r.best.as_ref())
                        .map(|b| values_of(pts[b.index]))
                })
                .collect();
            lines.push(Line {
                name: format!(
                    "best {} at recall >= {t}, {}",
                    super::names::algorithm_name(&algorithm),
                    clients_text(clients)
                ),
                key: LineKey::Threshold {
                    algorithm,
                    clients,
                    threshold: t,
                },
                values,
                changes: Vec::new(),
            });
        }
    }
    Ok(lines)
}

fn line_changes(line: &Line, elements: &[Element], opts: changepoint::Options) -> Vec<Change> {
    let mut out = Vec::new();
    for m in HistMetric::ALL {
        // The runs that measured this metric, and where they are in the series.
        let (at, series): (Vec<usize>, Vec<f64>) = line
            .metric(m)
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .unzip();
        for ChangePoint { index, stats } in changepoint::change_points(&series, opts) {
            let index = at[index];
            let forward = stats.forward_change();
            out.push(Change {
                metric: m,
                index,
                label: elements[index].label.clone(),
                time: elements[index].time.clone(),
                forward_change_percent: forward * 100.0,
                magnitude: stats.magnitude(),
                mean_before: stats.mean_before,
                stddev_before: stats.stddev_before,
                mean_after: stats.mean_after,
                stddev_after: stats.stddev_after,
                pvalue: stats.pvalue,
                regression: (forward < 0.0) == m.higher_is_better() && forward != 0.0,
            });
        }
    }
    out.sort_by_key(|c| (c.index, c.metric));
    out
}

impl HistMetric {
    /// The axis title.
    pub fn title(self) -> &'static str {
        match self {
            HistMetric::Qps => "Queries per second",
            HistMetric::Recall => "Recall",
            HistMetric::CpuPerQuery => "Server CPU ms per query",
            HistMetric::SwitchesPerQuery => "Server context switches per query",
        }
    }

    /// The unit of the metric's values in JSON, CSV and the change point table.
    pub fn unit(self) -> &'static str {
        match self {
            HistMetric::Qps => "queries/s",
            HistMetric::Recall => "share",
            HistMetric::CpuPerQuery => "s/query",
            HistMetric::SwitchesPerQuery => "switches/query",
        }
    }

    /// The unit of [`HistMetric::shown`] values in text: ` ms` for CPU, none else.
    pub fn shown_unit(self) -> &'static str {
        if self == HistMetric::CpuPerQuery {
            " ms"
        } else {
            ""
        }
    }

    /// Shown values: CPU seconds as milliseconds.
    pub fn shown(self, v: f64) -> f64 {
        if self == HistMetric::CpuPerQuery {
            v * 1000.0
        } else {
            v
        }
    }
}

impl std::str::FromStr for HistMetric {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        HistMetric::ALL
            .into_iter()
            .find(|m| m.name() == s || (s == "cpu" && *m == HistMetric::CpuPerQuery))
            .ok_or_else(|| {
                format!(
                    "unknown metric '{s}': expected qps, recall, server_cpu_per_query or \
                     server_switches_per_query"
                )
            })
    }
}

#[cfg(test)]
mod tests;
