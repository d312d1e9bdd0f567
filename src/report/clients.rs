//! QPS vs clients at fixed parameters: the classic "clients | QPS" table, one group per
//! (algorithm, label, build args, query args) that was run with more than one client count.

use super::metrics::spec;
use super::names::point_name;
use super::render::{Cell, Column, Style, Table};
use super::series::{cmp_points, params_identity};
use crate::results::PointResult;
use std::collections::HashMap;

/// One client count of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientsRow {
    /// Index of the point in the slice given to [`clients_table`].
    pub index: usize,
    pub clients: usize,
    /// Measured throughput: the point's figure (median pass QPS), all clients together.
    pub qps: f64,
    /// Its 95% interval.
    pub qps_interval: Option<crate::metrics::interval::Interval>,
    /// Latency percentiles over all clients' queries, seconds.
    pub latency_p50: f64,
    pub latency_p99: f64,
    pub recall: f64,
    /// QPS divided by the QPS at the group's smallest client count.
    pub scaling: f64,
    /// Client CPU seconds / (wall seconds x clients) of the median pass: near 1.0 means each
    /// connection kept a client core busy, so the client may be the bottleneck. `None` when
    /// the passes were not recorded with CPU time.
    pub client_cpu_per_connection: Option<f64>,
    /// `cached` or `io-bound` (docs/server-cost.md), where the server's storage reads were
    /// measured.
    pub storage: Option<&'static str>,
}

/// The points of one parameter set, by client count ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientsGroup {
    pub algorithm: String,
    pub label: Option<String>,
    /// Display name, e.g. `MariaDB(m=16, ef_search=40)`.
    pub name: String,
    pub rows: Vec<ClientsRow>,
}

/// Groups of `points` that differ only in client count, for parameter sets run with at least
/// two client counts, in report order.
pub fn clients_table(points: &[PointResult]) -> Vec<ClientsGroup> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| cmp_points(&points[a], &points[b]).then(a.cmp(&b)));
    // Groups in report order of their first point; members by clients (the sort order).
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut slot: HashMap<(&str, usize, Option<&str>, String), usize> = HashMap::new();
    for i in order {
        let p = &points[i];
        let key = (
            p.dataset.as_str(),
            p.count,
            p.label.as_deref(),
            params_identity(p),
        );
        match slot.get(&key) {
            Some(&g) => groups[g].1.push(i),
            None => {
                slot.insert(key, groups.len());
                groups.push((i, vec![i]));
            }
        }
    }
    groups
        .into_iter()
        .filter(|(_, m)| m.iter().any(|&i| points[i].clients != points[m[0]].clients))
        .map(|(first, members)| group(points, first, &members))
        .collect()
}

fn group(points: &[PointResult], first: usize, members: &[usize]) -> ClientsGroup {
    let base_qps = points[members[0]].metrics.qps;
    let rows = members
        .iter()
        .map(|&i| {
            let p = &points[i];
            ClientsRow {
                index: i,
                clients: p.clients,
                qps: p.metrics.qps,
                qps_interval: p.metrics.qps_interval(),
                latency_p50: p.metrics.latency_p50,
                latency_p99: p.metrics.latency_p99,
                recall: p.metrics.recall,
                scaling: p.metrics.qps / base_qps,
                client_cpu_per_connection: cpu_per_connection(p),
                storage: p
                    .metrics
                    .server
                    .as_ref()
                    .and_then(|s| s.storage())
                    .map(|s| s.as_str()),
            }
        })
        .collect();
    let p = &points[first];
    ClientsGroup {
        algorithm: p.algorithm.clone(),
        label: p.label.clone(),
        name: point_name(p),
        rows,
    }
}

fn cpu_per_connection(p: &PointResult) -> Option<f64> {
    let mut used: Vec<&crate::results::Pass> = p
        .passes
        .iter()
        .filter(|s| s.used && s.wall_seconds > 0.0)
        .collect();
    used.sort_by(|a, b| a.qps().total_cmp(&b.qps()));
    let median = used.get(used.len().saturating_sub(1) / 2)?;
    let cpu = median.client_cpu_seconds?;
    Some(cpu / (median.wall_seconds * p.clients.max(1) as f64))
}

/// The groups as one [`Table`]; `algorithm` is the registry id, latencies in ms.
pub fn clients_rows_table(groups: &[ClientsGroup], show_label: bool) -> Table {
    // The registry's metrics with their titles and styles, then this table's own.
    let metric = |name: &str| spec(name).column();
    let mut label = metric("label");
    label.in_markdown = show_label;
    let mut storage = metric("storage");
    storage.in_markdown = groups
        .iter()
        .any(|g| g.rows.iter().any(|r| r.storage.is_some()));
    let columns = vec![
        metric("algorithm"),
        label,
        metric("name"),
        metric("clients"),
        metric("qps"),
        metric("qps_ci_low").machine_only(),
        metric("qps_ci_high").machine_only(),
        metric("latency_p50_ms"),
        metric("latency_p99_ms"),
        metric("recall"),
        Column::new("scaling", "scaling", Style::Ratio),
        Column::new(
            "client_cpu_per_connection",
            "client CPU/conn",
            Style::Fixed(2),
        ),
        storage,
    ];
    let mut rows = Vec::new();
    for g in groups {
        for r in &g.rows {
            rows.push(vec![
                Cell::Text(g.algorithm.clone()),
                Cell::from(g.label.as_deref()),
                Cell::Text(g.name.clone()),
                Cell::Int(r.clients as i64),
                Cell::Float(r.qps),
                Cell::from(r.qps_interval.map(|i| i.low)),
                Cell::from(r.qps_interval.map(|i| i.high)),
                Cell::Float(r.latency_p50 * 1e3),
                Cell::Float(r.latency_p99 * 1e3),
                Cell::Float(r.recall),
                Cell::Float(r.scaling),
                Cell::from(r.client_cpu_per_connection),
                Cell::from(r.storage),
            ]);
        }
    }
    Table { columns, rows }
}
