//! Tooltip text of a point: its name and every figure of the export table, grouped into
//! short lines. The registry says which metrics those lines show
//! ([`MetricSpec::tip_line`](crate::report::metrics::MetricSpec::tip_line)); the other columns
//! are listed after them under their own names, so a metric the export gains shows without a
//! change here.

use super::Tips;
use crate::report::metrics::metric;
use crate::report::render::{Cell, Style, Table, display_text};
use crate::results::PointResult;

/// The tooltip lines of each point, in the order of `points` (which must be in report order,
/// the export table's own).
pub fn point_tips(points: &[PointResult], table: &Table) -> Tips {
    let col = |name: &str| table.columns.iter().position(|c| c.name == name);
    table
        .rows
        .iter()
        .zip(points)
        .map(|(row, p)| {
            let get = |name: &str| col(name).map_or(&Cell::Null, |i| &row[i]);
            let num = |name: &str| match get(name) {
                Cell::Float(x) => Some(*x),
                Cell::Int(i) => Some(*i as f64),
                _ => None,
            };
            let mut lines = vec![text(get("name"))];
            lines.push(format!(
                "recall {} (epsilon {})",
                recall(num("recall")),
                recall(num("epsilon_recall"))
            ));
            let mut qps = format!("QPS {}", fixed(num("qps"), 1));
            if let (Some(lo), Some(hi)) = (num("qps_ci_low"), num("qps_ci_high")) {
                let level = num("qps_ci_level").unwrap_or(0.95) * 100.0;
                qps.push_str(&format!(
                    " ({level:.0}% interval {} to {})",
                    fixed(Some(lo), 1),
                    fixed(Some(hi), 1)
                ));
            }
            lines.push(qps);
            if let (Some(lo), Some(hi)) = (num("qps_min"), num("qps_max")) {
                let n = num("passes").map_or(p.metrics.qps_passes.len(), |n| n as usize);
                let mut line = format!(
                    "{n} pass{}: QPS {} to {}",
                    if n == 1 { "" } else { "es" },
                    fixed(Some(lo), 1),
                    fixed(Some(hi), 1)
                );
                if let Some(total) = num("passes_total").filter(|&t| t as usize > n) {
                    line.push_str(&format!(" ({} left out)", total as usize - n));
                }
                if let Some(cv) = num("qps_cv") {
                    line.push_str(&format!(", CV {:.1}%", cv * 100.0));
                }
                lines.push(line);
            }
            if let Cell::Text(f) = get("flags") {
                if !f.is_empty() {
                    lines.push(format!("flagged: {}", f.replace(',', ", ")));
                }
            }
            if let Some(other) = num("other_cpu_share") {
                lines.push(format!(
                    "worst interference: other processes {:.0}% of the CPU, steal {}%, load \
                     average {}",
                    other * 100.0,
                    fixed(num("steal_share").map(|s| s * 100.0), 0),
                    fixed(num("load_average"), 1)
                ));
            }
            if let Some(n) = num("short_results").filter(|&n| n > 0.0) {
                lines.push(format!("{n:.0} queries answered with fewer than k ids"));
            }
            lines.push(format!(
                "latency ms: mean {}, p50 {}, p95 {}, p99 {}, p99.9 {}",
                fixed(num("latency_mean_ms"), 3),
                fixed(num("latency_p50_ms"), 3),
                fixed(num("latency_p95_ms"), 3),
                fixed(num("latency_p99_ms"), 3),
                fixed(num("latency_p999_ms"), 3)
            ));
            lines.push(format!(
                "index build {} s, index {} MiB, table {} MiB, load {} s",
                fixed(num("build_seconds"), 2),
                fixed(num("index_mib"), 1),
                fixed(num("table_mib"), 1),
                fixed(num("load_seconds"), 2)
            ));
            let label = p
                .label
                .as_deref()
                .map_or(String::new(), |l| format!("label {l}, "));
            lines.push(format!("{label}{} client{}", p.clients, plural(p.clients)));
            for (c, cell) in table.columns.iter().zip(row) {
                let known =
                    metric(&c.name).is_some_and(|m| m.tip_line) || c.name.starts_with("param_");
                if !known && !matches!(cell, Cell::Null | Cell::Missing(_)) {
                    lines.push(format!("{}: {}", c.name, display_text(cell, Style::Plain)));
                }
            }
            lines
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn text(cell: &Cell) -> String {
    display_text(cell, Style::Plain)
}

/// A number with `d` decimals, or `n/a`.
pub fn fixed(x: Option<f64>, d: usize) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.d$}"),
        _ => "n/a".into(),
    }
}

/// A recall, truncated to 4 decimals like the tables, or `n/a`.
pub fn recall(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => display_text(&Cell::Float(x), Style::Recall),
        _ => "n/a".into(),
    }
}

/// Seconds as milliseconds with 3 decimals, or `n/a`.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    #[test]
    fn every_figure_is_in_the_tip() {
        let mut p = point(
            "mariadb",
            &[("M", 16)],
            &[("ef_search", 40)],
            0.98999,
            1234.56,
        );
        p.label = Some("v2".into());
        p.clients = 4;
        p.metrics.qps_passes = vec![1000.0, 1234.56, 1100.0];
        p.metrics.passes = 3;
        let pts = [p];
        let tip = &point_tips(&pts, &crate::report::export_table(&pts))[0];
        assert_eq!(tip[0], "MariaDB(m=16, ef_search=40)");
        assert_eq!(tip[1], "recall 0.9899 (epsilon 0.9899)");
        assert_eq!(tip[2], "QPS 1234.6");
        assert_eq!(tip[3], "3 passes: QPS 1000.0 to 1234.6");
        assert!(
            tip[4].starts_with("latency ms: mean 0.810, p50 0.810"),
            "{tip:?}"
        );
        assert_eq!(
            tip[5],
            "index build 10.00 s, index 4.8 MiB, table 7.6 MiB, load 2.00 s"
        );
        assert_eq!(tip[6], "label v2, 4 clients");
        assert_eq!(tip.len(), 7, "{tip:?}");
    }
}
