//! Streaming runs as tables: one row per step (and query point at a search step), the export
//! the Python DataFrame and the HTML timeline are built from, plus the one-line progress of a
//! step and big-ann-benchmarks' score (mean recall over the search steps).
//!
//! Column names follow docs/vocabulary.md: `*_ms` milliseconds, `*_seconds` seconds, `*_mib`
//! MiB, `*_rate` rows per second.

use super::render::{Cell, Column, Style, Table};
use crate::params::describe;
use crate::results::stream::{StepRecord, StreamRun};

/// The columns of [`stream_table`], in order, with what each holds.
pub const STREAM_COLUMNS: &[(&str, &str)] = &[
    ("dataset", "dataset name"),
    ("count", "k"),
    ("algorithm", "algorithm"),
    ("label", "label of the run"),
    ("clients", "search clients at the search steps"),
    ("entry", "runbook entry"),
    (
        "runbook_fingerprint",
        "the runbook's steps (runs of other runbooks differ here)",
    ),
    ("build", "build parameters"),
    ("query", "query parameters (search steps)"),
    ("step", "the runbook's step number"),
    (
        "operation",
        "insert, delete, replace, search or maintenance",
    ),
    ("rows", "the rows the step names"),
    ("live_rows", "rows live after the step"),
    (
        "recall",
        "recall@k against exact truth over the live rows (search steps)",
    ),
    (
        "not_live",
        "returned ids that were not live: deleted or never inserted",
    ),
    (
        "short_results",
        "queries answered with fewer than min(k, live rows) ids",
    ),
    ("qps", "median QPS of the timed passes"),
    ("qps_ci_low", "low end of its interval"),
    ("qps_ci_high", "high end of its interval"),
    ("latency_p50_ms", "median query latency"),
    ("latency_p99_ms", "99th percentile query latency"),
    ("write_rows", "rows the write step names"),
    ("rows_changed", "rows the server reported changed"),
    (
        "undone_rows",
        "rows a stopped earlier run wrote in this step, undone before it ran again",
    ),
    (
        "target_rate",
        "the step's rate (rows/s); empty: unthrottled",
    ),
    ("achieved_rate", "rows/s the writes reached"),
    ("batch_rows", "rows per statement"),
    ("batch_p50_ms", "median statement time of a batch"),
    ("batch_p99_ms", "99th percentile statement time of a batch"),
    (
        "backlog_rows",
        "most rows behind the target rate's schedule",
    ),
    (
        "behind_seconds",
        "how late the last batch ended against the schedule",
    ),
    (
        "freshness_ms",
        "median time from a marker row's commit until a search returned it",
    ),
    (
        "freshness_found",
        "markers found within the bound, of freshness_markers",
    ),
    ("freshness_markers", "marker rows looked for"),
    ("during_clients", "clients searching during the write step"),
    ("during_qps", "their QPS during the writes"),
    ("during_p99_ms", "their p99 during the writes"),
    (
        "baseline_qps",
        "the same clients' QPS just before the writes",
    ),
    ("baseline_p99_ms", "their p99 just before the writes"),
    ("maintenance", "the maintenance statements run"),
    ("maintenance_seconds", "their seconds, together"),
    (
        "recall_before",
        "recall at the first query point before the maintenance",
    ),
    ("recall_after", "and after it"),
    ("table_mib", "table size after the step"),
    ("index_mib", "index size after the step"),
    ("dead_tuples", "dead tuples after the step (PostgreSQL)"),
    (
        "step_seconds",
        "wall seconds of the step, searches included",
    ),
    (
        "started_seconds",
        "when the step started, seconds since the run's first step",
    ),
    ("build_seconds", "seconds of the index build"),
];

fn mib(b: Option<u64>) -> Cell {
    b.map_or(Cell::Null, |b| Cell::Float(b as f64 / 1_048_576.0))
}

/// One row per step of every run, search steps once per query point.
pub fn stream_table(runs: &[StreamRun]) -> Table {
    let columns = STREAM_COLUMNS
        .iter()
        .map(|(name, _)| {
            let style = match *name {
                "recall" | "recall_before" | "recall_after" => Style::Recall,
                "qps" | "qps_ci_low" | "qps_ci_high" | "during_qps" | "baseline_qps"
                | "achieved_rate" | "target_rate" => Style::Fixed(1),
                n if n.ends_with("_ms") || n.ends_with("_mib") || n.ends_with("_seconds") => {
                    Style::Fixed(3)
                }
                _ => Style::Plain,
            };
            Column::new(name, name, style)
        })
        .collect();
    let mut rows = Vec::new();
    for run in runs {
        for step in &run.steps {
            if step.searches.is_empty() {
                rows.push(row(run, step, None));
            } else {
                for i in 0..step.searches.len() {
                    rows.push(row(run, step, Some(i)));
                }
            }
        }
    }
    Table { columns, rows }
}

fn row(run: &StreamRun, step: &StepRecord, search: Option<usize>) -> Vec<Cell> {
    let id = &run.identity;
    let s = search.and_then(|i| step.searches.get(i));
    let w = step.write.as_ref();
    let d = step.during.as_ref();
    let m = step.maintenance.as_ref();
    let z = step.sizes.as_ref();
    let fresh = w.and_then(|w| w.freshness.as_ref());
    STREAM_COLUMNS
        .iter()
        .map(|(name, _)| match *name {
            "dataset" => Cell::Text(id.dataset.clone()),
            "count" => Cell::Int(id.count as i64),
            "algorithm" => Cell::Text(id.algorithm.clone()),
            "label" => Cell::from(id.label.as_deref()),
            "clients" => Cell::Int(id.clients as i64),
            "entry" => Cell::Text(id.entry.clone()),
            "runbook_fingerprint" => Cell::Text(id.runbook_fingerprint.clone()),
            "build" => Cell::Text(describe(&id.build_args)),
            "query" => s.map_or(Cell::Null, |s| Cell::Text(describe(&s.query_args))),
            "step" => Cell::Int(i64::from(step.step)),
            "operation" => Cell::Text(step.operation.clone()),
            "rows" => Cell::Text(step.rows.clone()),
            "live_rows" => Cell::Int(step.live_rows as i64),
            "recall" => Cell::from(s.map(|s| s.recall)),
            "not_live" => s.map_or(Cell::Null, |s| Cell::Int(s.not_live as i64)),
            "short_results" => s.map_or(Cell::Null, |s| Cell::Int(s.short as i64)),
            "qps" => Cell::from(s.map(|s| s.qps)),
            "qps_ci_low" => Cell::from(s.map(|s| s.qps_low)),
            "qps_ci_high" => Cell::from(s.map(|s| s.qps_high)),
            "latency_p50_ms" => Cell::from(s.map(|s| s.latency.p50 * 1e3)),
            "latency_p99_ms" => Cell::from(s.map(|s| s.latency.p99 * 1e3)),
            "write_rows" => w.map_or(Cell::Null, |w| Cell::Int(w.rows as i64)),
            "rows_changed" => w.map_or(Cell::Null, |w| Cell::Int(w.rows_changed as i64)),
            "undone_rows" => step.undone_rows.map_or(Cell::Null, |n| Cell::Int(n as i64)),
            "target_rate" => Cell::from(w.and_then(|w| w.target_rate)),
            "achieved_rate" => Cell::from(w.map(|w| w.achieved_rate)),
            "batch_rows" => w.map_or(Cell::Null, |w| Cell::Int(w.batch_rows as i64)),
            "batch_p50_ms" => Cell::from(w.map(|w| w.batch_latency.p50 * 1e3)),
            "batch_p99_ms" => Cell::from(w.map(|w| w.batch_latency.p99 * 1e3)),
            "backlog_rows" => w.map_or(Cell::Null, |w| Cell::Int(w.backlog_rows as i64)),
            "behind_seconds" => Cell::from(w.map(|w| w.behind_seconds)),
            "freshness_ms" => Cell::from(fresh.and_then(|f| f.median_seconds).map(|x| x * 1e3)),
            "freshness_found" => fresh.map_or(Cell::Null, |f| Cell::Int(f.found as i64)),
            "freshness_markers" => fresh.map_or(Cell::Null, |f| Cell::Int(f.markers as i64)),
            "during_clients" => d.map_or(Cell::Null, |d| Cell::Int(d.clients as i64)),
            "during_qps" => Cell::from(d.map(|d| d.qps)),
            "during_p99_ms" => Cell::from(d.map(|d| d.latency.p99 * 1e3)),
            "baseline_qps" => Cell::from(d.map(|d| d.baseline_qps)),
            "baseline_p99_ms" => Cell::from(d.map(|d| d.baseline_latency.p99 * 1e3)),
            "maintenance" => m.map_or(Cell::Null, |m| {
                Cell::Text(
                    m.operations
                        .iter()
                        .map(|(o, _)| o.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            }),
            "maintenance_seconds" => {
                Cell::from(m.map(|m| m.operations.iter().map(|(_, s)| s).sum::<f64>()))
            }
            "recall_before" => Cell::from(m.map(|m| m.recall_before)),
            "recall_after" => Cell::from(m.map(|m| m.recall_after)),
            "table_mib" => mib(z.and_then(|z| z.table_bytes)),
            "index_mib" => mib(z.and_then(|z| z.index_bytes)),
            "dead_tuples" => z
                .and_then(|z| z.dead_tuples)
                .map_or(Cell::Null, |n| Cell::Int(n as i64)),
            "step_seconds" => Cell::Float(step.seconds),
            "started_seconds" => Cell::Float(step.started),
            "build_seconds" => Cell::from(run.build_seconds),
            _ => Cell::Null,
        })
        .collect()
}

/// The columns a terminal summary of one run shows.
const SUMMARY: &[&str] = &[
    "step",
    "operation",
    "rows",
    "live_rows",
    "query",
    "recall",
    "not_live",
    "qps",
    "latency_p99_ms",
    "achieved_rate",
    "batch_p99_ms",
    "during_qps",
    "baseline_qps",
    "maintenance_seconds",
    "recall_before",
    "recall_after",
    "index_mib",
    "dead_tuples",
];

/// [`stream_table`] cut to the columns of a terminal summary.
pub fn summary_table(runs: &[StreamRun]) -> Table {
    let full = stream_table(runs);
    let keep: Vec<usize> = SUMMARY
        .iter()
        .filter_map(|n| full.columns.iter().position(|c| c.name == *n))
        .collect();
    Table {
        columns: keep.iter().map(|&i| full.columns[i].clone()).collect(),
        rows: full
            .rows
            .iter()
            .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
            .collect(),
    }
}

/// `  step 4 search: 5000 live, recall 0.9812 (0 not live), 2310.4 QPS` and the like.
pub fn step_line(r: &StepRecord) -> String {
    let mut parts = vec![format!(
        "  step {} {} {}: {} live",
        r.step, r.operation, r.rows, r.live_rows
    )];
    for s in &r.searches {
        parts.push(format!(
            "{}: recall {:.4} ({} not live), {:.1} QPS [{:.1}, {:.1}], p99 {:.3} ms",
            describe(&s.query_args),
            s.recall,
            s.not_live,
            s.qps,
            s.qps_low,
            s.qps_high,
            s.latency.p99 * 1e3
        ));
    }
    if let Some(w) = &r.write {
        let target = w
            .target_rate
            .map_or("unthrottled".to_string(), |t| format!("target {t:.0}/s"));
        parts.push(format!(
            "{:.0} rows/s ({target}), batch p99 {:.3} ms",
            w.achieved_rate,
            w.batch_latency.p99 * 1e3
        ));
    }
    if let Some(d) = &r.during {
        parts.push(format!(
            "searches during: {:.1} QPS, p99 {:.3} ms (before: {:.1} QPS, p99 {:.3} ms)",
            d.qps,
            d.latency.p99 * 1e3,
            d.baseline_qps,
            d.baseline_latency.p99 * 1e3
        ));
    }
    if let Some(m) = &r.maintenance {
        let secs: f64 = m.operations.iter().map(|(_, s)| s).sum();
        parts.push(format!(
            "{secs:.2} s, recall {:.4} -> {:.4}",
            m.recall_before, m.recall_after
        ));
    }
    parts.join("; ")
}

/// big-ann-benchmarks' score of each run: the mean recall over its search steps, per query
/// point, as `algorithm(build) query: 0.9731 over 3 search steps`.
pub fn score_lines(runs: &[StreamRun]) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs {
        let searches = run.steps.iter().filter(|s| !s.searches.is_empty()).count();
        for (q, mean) in run.mean_recall() {
            out.push(format!(
                "{}({}) {}: mean recall {mean:.4} over {searches} search step(s){}",
                run.identity.algorithm,
                describe(&run.identity.build_args),
                describe(&q),
                if run.complete {
                    ""
                } else {
                    " (incomplete run)"
                }
            ));
        }
    }
    out
}
