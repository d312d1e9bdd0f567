//! Every point with every metric as one flat table: the export the Python DataFrame is built
//! from. Column names are a stable interface and say their unit (docs/vocabulary.md):
//! `*_ms` milliseconds (per-query times), `*_seconds` seconds (loads, builds), `*_mib` MiB.

use super::figure_text::flags_text;
use super::metrics::{METRICS, mebibytes};
use super::names::point_name;
use super::params::{flat_params, param_cell};
use super::point_filter::{filter_kind, plan_short};
use super::render::{Cell, Column, Style, Table};
use super::series::cmp_points;
use crate::results::{PointResult, ServerCost};
use std::collections::BTreeSet;

/// The fixed columns, in order: the names of the registry's [`METRICS`](super::metrics::METRICS)
/// (their meanings and units are declared there); `param_<name>` columns follow, sorted by
/// name.
pub const EXPORT_COLUMNS: [&str; super::metrics::NAMES.len()] = super::metrics::NAMES;

/// Every point (sorted by dataset, count, algorithm, label, clients, build then query
/// parameters) with the [`EXPORT_COLUMNS`] and one `param_<name>` column per build or query
/// parameter, lower-cased (`param_m`, `param_ef_construction`, `param_ef_search`). A query
/// parameter with the name of a build parameter gets `param_<name>_query`.
///
/// What each fixed column holds, in which unit, is declared with it in
/// [`super::metrics::METRICS`]; the `server_*` columns are empty where not measured
/// (docs/server-cost.md). Sizes are in MiB (2^20 bytes).
pub fn export_table(points: &[PointResult]) -> Table {
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| cmp_points(a, b));
    let params: BTreeSet<String> = sorted
        .iter()
        .flat_map(|p| flat_params(p))
        .map(|(k, _)| k)
        .collect();
    let mut columns: Vec<Column> = METRICS
        .iter()
        .map(|m| Column::new(m.name, m.name, m.export_style()))
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

/// The cells of the registry's metrics, in its order.
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
    let s = m.server.as_ref();
    let f = |g: fn(&ServerCost) -> Option<f64>| Cell::from(s.and_then(g));
    let ms = |g: fn(&ServerCost) -> Option<f64>| Cell::from(s.and_then(g).map(|x| x * 1e3));
    let b = |g: fn(&ServerCost) -> Option<u64>| mib(s.and_then(g));
    let t = |g: fn(&ServerCost) -> Option<&String>| Cell::from(s.and_then(g).map(String::as_str));
    METRICS
        .iter()
        .map(|spec| match spec.name {
            "dataset" => Cell::Text(p.dataset.clone()),
            "count" => Cell::Int(p.count as i64),
            "algorithm" => Cell::Text(p.algorithm.clone()),
            "label" => Cell::from(p.label.as_deref()),
            "clients" => Cell::Int(p.clients as i64),
            "name" => Cell::Text(point_name(p)),
            "recall" => Cell::Float(m.recall),
            "epsilon_recall" => Cell::Float(m.epsilon_recall),
            "qps" => Cell::Float(m.qps),
            "qps_ci_low" => Cell::from(m.qps_ci_low),
            "qps_ci_high" => Cell::from(m.qps_ci_high),
            "qps_ci_level" => Cell::from(m.qps_ci_level),
            "qps_best" => Cell::Float(m.qps_best),
            "qps_min" => Cell::from(min),
            "qps_max" => Cell::from(max),
            "qps_cv" => Cell::from(m.qps_cv),
            "passes" => Cell::Int(m.passes as i64),
            "passes_total" => Cell::Int(m.qps_passes.len() as i64),
            "flags" => Cell::Text(flags_text(&m.flags)),
            "other_cpu_share" => Cell::from(worst(&|i| i.other_share())),
            "steal_share" => Cell::from(worst(&|i| Some(i.steal_share()))),
            "load_average" => Cell::from(worst(&|i| Some(i.load_average))),
            "cpu_probe_us" => Cell::from(p.cpu_probe_us()),
            "filter" => Cell::from(filter_kind(p).map(|k| k.as_str())),
            "short_results" => Cell::Int(m.short_results as i64),
            "mean_rows" => Cell::from(m.mean_rows),
            "plan" => Cell::from(m.plan.as_deref().map(plan_short)),
            "latency_mean_ms" => Cell::Float(m.latency_mean * 1e3),
            "latency_p50_ms" => Cell::Float(m.latency_p50 * 1e3),
            "latency_p95_ms" => Cell::Float(m.latency_p95 * 1e3),
            "latency_p99_ms" => Cell::Float(m.latency_p99 * 1e3),
            "latency_p999_ms" => Cell::Float(m.latency_p999 * 1e3),
            "build_seconds" => Cell::Float(p.build_seconds),
            "load_seconds" => Cell::from(p.load_seconds),
            "index_mib" => mib(p.index_size_bytes),
            "table_mib" => mib(p.table_size_bytes),
            "server_cpu_ms" => ms(|s| s.cpu_per_query),
            "server_cpu_user_ms" => ms(|s| s.cpu_user_per_query),
            "server_cpu_system_ms" => ms(|s| s.cpu_system_per_query),
            "server_cpu_cv" => f(|s| s.cpu_cv),
            "server_voluntary_switches" => f(|s| s.voluntary_switches_per_query),
            "server_involuntary_switches" => f(|s| s.involuntary_switches_per_query),
            "server_exec_ms" => ms(|s| s.exec_per_query),
            "client_network_ms" => ms(|s| s.client_network_per_query),
            "server_buffer_hits" => f(|s| s.buffer_hits_per_query),
            "server_buffer_reads" => f(|s| s.buffer_reads_per_query),
            "storage" => Cell::from(s.and_then(|s| s.storage()).map(|x| x.as_str())),
            "io_reads" => f(|s| s.io_reads_per_query),
            "io_read_kib" => f(|s| s.io_read_kib_per_query),
            "io_writes" => f(|s| s.io_writes_per_query),
            "io_write_kib" => f(|s| s.io_write_kib_per_query),
            "server_read_kib" => f(|s| s.server_read_kib_per_query),
            "server_write_kib" => f(|s| s.server_write_kib_per_query),
            "build_cpu_seconds" => f(|s| s.build_cpu_seconds),
            "server_memory_after_build_mib" => b(|s| s.memory_after_build_bytes),
            "server_memory_after_passes_mib" => b(|s| s.memory_after_passes_bytes),
            "server_cpu_source" => t(|s| s.cpu_source.as_ref()),
            "server_statements_source" => t(|s| s.statements_source.as_ref()),
            "io_source" => t(|s| s.io_source.as_ref()),
            other => unreachable!("the export has no cell for metric {other}"),
        })
        .collect()
}

fn mib(b: Option<u64>) -> Cell {
    Cell::from(b.map(mebibytes))
}
