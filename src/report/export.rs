//! Every point with every metric as one flat table: the export the Python DataFrame is built
//! from. Column names are a stable interface and say their unit (docs/vocabulary.md):
//! `*_ms` milliseconds (per-query times), `*_seconds` seconds (loads, builds), `*_mib` MiB.

use super::names::point_name;
use super::render::{Cell, Column, Style, Table};
use super::series::cmp_points;
use crate::results::PointResult;
use serde_json::Value;
use std::collections::BTreeSet;

/// The fixed columns, in order; `param_<name>` columns follow, sorted by name.
pub const EXPORT_COLUMNS: [&str; 51] = [
    "dataset",
    "count",
    "algorithm",
    "label",
    "clients",
    "name",
    "recall",
    "epsilon_recall",
    "qps",
    "qps_ci_low",
    "qps_ci_high",
    "qps_ci_level",
    "qps_best",
    "qps_min",
    "qps_max",
    "qps_cv",
    "passes",
    "passes_total",
    "flags",
    "other_cpu_share",
    "steal_share",
    "load_average",
    "cpu_probe_us",
    "filter",
    "short_results",
    "mean_rows",
    "plan",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "build_seconds",
    "load_seconds",
    "index_mib",
    "table_mib",
    "server_cpu_ms",
    "server_cpu_user_ms",
    "server_cpu_system_ms",
    "server_cpu_cv",
    "server_voluntary_switches",
    "server_involuntary_switches",
    "server_exec_ms",
    "client_network_ms",
    "server_buffer_hits",
    "server_buffer_reads",
    "build_cpu_seconds",
    "server_memory_after_build_mib",
    "server_memory_after_passes_mib",
    "server_cpu_source",
    "server_statements_source",
];

/// Every point (sorted by dataset, count, algorithm, label, clients, build then query
/// parameters) with the [`EXPORT_COLUMNS`] and one `param_<name>` column per build or query
/// parameter, lower-cased (`param_m`, `param_ef_construction`, `param_ef_search`). A query
/// parameter with the name of a build parameter gets `param_<name>_query`.
///
/// `qps` is the median of the passes in use with its interval `qps_ci_low..qps_ci_high`
/// (coverage `qps_ci_level`), `qps_best` the best pass, `qps_min` / `qps_max` / `qps_cv`
/// the spread of the passes in use (`passes` of `passes_total`), `flags` the reasons for
/// caution (`interference,spread,stalled`), and `other_cpu_share`, `steal_share` and
/// `load_average` the worst interference among the passes in use (shares of the machine's
/// CPU), `cpu_probe_us` the CPU speed probe (median over those passes of the CPU microseconds
/// a fixed piece of work took around each pass; higher is a slower CPU). `filter`: the filter kind of filtered points (`range`, `label`; the `selectivity`
/// query arg is `param_selectivity`), empty for unfiltered points. `short_results`: queries
/// answered with fewer than k ids (filtered points: fewer than min(k, matching rows)); `mean_rows`: ids returned per query; `plan`: the plan EXPLAIN
/// showed, in a few words (`vector index`, `B-tree + exact sort`). Latencies are of the
/// median pass, in ms. The `server_*` columns are the database server's cost per query
/// (docs/server-cost.md): CPU ms (user + system) and context switches of local servers,
/// execution ms and buffer hits and reads from the server's statistics, `client_network_ms`
/// = mean latency - server execution time, the build's server CPU seconds next to
/// `build_seconds`, the server's resident memory in MiB, and the sources; empty where not
/// measured. Sizes are in MiB (2^20 bytes).
pub fn export_table(points: &[PointResult]) -> Table {
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| cmp_points(a, b));
    let params: BTreeSet<String> = sorted
        .iter()
        .flat_map(|p| flat_params(p))
        .map(|(k, _)| k)
        .collect();
    let mut columns: Vec<Column> = EXPORT_COLUMNS
        .iter()
        .map(|n| Column::new(n, n, column_style(n)))
        .collect();
    columns.extend(params.iter().map(|n| Column::new(n, n, Style::Plain)));
    let rows = sorted
        .iter()
        .map(|p| {
            let mut row = fixed_cells(p);
            let mine = flat_params(p);
            row.extend(params.iter().map(|name| {
                mine.iter()
                    .find(|(k, _)| k == name)
                    .map_or(Cell::Null, |(_, v)| param_cell(v))
            }));
            row
        })
        .collect();
    Table { columns, rows }
}

/// Recalls are truncated in CSV and Markdown (never rounded up to a threshold).
fn column_style(name: &str) -> Style {
    if name.ends_with("recall") {
        Style::Recall
    } else {
        Style::Plain
    }
}

fn fixed_cells(p: &PointResult) -> Vec<Cell> {
    let m = &p.metrics;
    let used: Vec<f64> = if p.passes.is_empty() {
        m.qps_passes.clone()
    } else {
        p.passes
            .iter()
            .filter(|x| x.used)
            .map(|x| x.qps())
            .collect()
    };
    let min = used.iter().copied().reduce(f64::min);
    let max = used.iter().copied().reduce(f64::max);
    let worst = |f: &dyn Fn(&crate::results::Interference) -> Option<f64>| {
        p.passes
            .iter()
            .filter(|x| x.used)
            .filter_map(|x| x.interference.as_ref().and_then(f))
            .reduce(f64::max)
    };
    let mut cells = vec![
        Cell::Text(p.dataset.clone()),
        Cell::Int(p.count as i64),
        Cell::Text(p.algorithm.clone()),
        Cell::from(p.label.as_deref()),
        Cell::Int(p.clients as i64),
        Cell::Text(point_name(p)),
        Cell::Float(m.recall),
        Cell::Float(m.epsilon_recall),
        Cell::Float(m.qps),
        Cell::from(m.qps_ci_low),
        Cell::from(m.qps_ci_high),
        Cell::from(m.qps_ci_level),
        Cell::Float(m.qps_best),
        Cell::from(min),
        Cell::from(max),
        Cell::from(m.qps_cv),
        Cell::Int(m.passes as i64),
        Cell::Int(m.qps_passes.len() as i64),
        Cell::Text(super::table::flags_text(&m.flags)),
        Cell::from(worst(&|i| i.other_share())),
        Cell::from(worst(&|i| Some(i.steal_share()))),
        Cell::from(worst(&|i| Some(i.load_average))),
        Cell::from(p.cpu_probe_us()),
        Cell::from(super::filtered::filter_kind(p).map(|k| k.as_str())),
        Cell::Int(m.short_results as i64),
        Cell::from(m.mean_rows),
        Cell::from(m.plan.as_deref().map(super::filtered::plan_short)),
        Cell::Float(m.latency_mean * 1e3),
        Cell::Float(m.latency_p50 * 1e3),
        Cell::Float(m.latency_p95 * 1e3),
        Cell::Float(m.latency_p99 * 1e3),
        Cell::Float(m.latency_p999 * 1e3),
        Cell::Float(p.build_seconds),
        Cell::from(p.load_seconds),
        mib(p.index_size_bytes),
        mib(p.table_size_bytes),
    ];
    cells.extend(server_cells(m.server.as_ref()));
    cells
}

/// The `server_*` columns (empty without a measured server cost).
fn server_cells(s: Option<&crate::results::ServerCost>) -> Vec<Cell> {
    let f = |g: fn(&crate::results::ServerCost) -> Option<f64>| Cell::from(s.and_then(g));
    let ms = |g: fn(&crate::results::ServerCost) -> Option<f64>| {
        Cell::from(s.and_then(g).map(|x| x * 1e3))
    };
    let b = |g: fn(&crate::results::ServerCost) -> Option<u64>| mib(s.and_then(g));
    let t = |g: fn(&crate::results::ServerCost) -> Option<&String>| {
        Cell::from(s.and_then(g).map(String::as_str))
    };
    vec![
        ms(|s| s.cpu_per_query),
        ms(|s| s.cpu_user_per_query),
        ms(|s| s.cpu_system_per_query),
        f(|s| s.cpu_cv),
        f(|s| s.voluntary_switches_per_query),
        f(|s| s.involuntary_switches_per_query),
        ms(|s| s.exec_per_query),
        ms(|s| s.client_network_per_query),
        f(|s| s.buffer_hits_per_query),
        f(|s| s.buffer_reads_per_query),
        f(|s| s.build_cpu_seconds),
        b(|s| s.memory_after_build_bytes),
        b(|s| s.memory_after_passes_bytes),
        t(|s| s.cpu_source.as_ref()),
        t(|s| s.statements_source.as_ref()),
    ]
}

/// (column name, value) of the point's build then query parameters.
pub(crate) fn flat_params(p: &PointResult) -> Vec<(String, Value)> {
    let column = |k: &str| format!("param_{}", k.to_lowercase());
    let build: Vec<(String, Value)> = p
        .build_args
        .iter()
        .map(|(k, v)| (column(k), v.clone()))
        .collect();
    let query = p.query_args.iter().map(|(k, v)| {
        let name = column(k);
        if build.iter().any(|(b, _)| *b == name) {
            (format!("{name}_query"), v.clone())
        } else {
            (name, v.clone())
        }
    });
    let mut all = build.clone();
    all.extend(query);
    all
}

pub(crate) fn param_cell(v: &Value) -> Cell {
    match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map(Cell::Int)
            .or_else(|| n.as_f64().map(Cell::Float))
            .unwrap_or_else(|| Cell::Text(n.to_string())),
        Value::String(s) => Cell::Text(s.clone()),
        other => Cell::Text(other.to_string()),
    }
}

fn mib(b: Option<u64>) -> Cell {
    Cell::from(b.map(super::table::mebibytes))
}
