//! Filtered points (`selectivity` query arg): the best-QPS-at-recall table per selectivity,
//! with what a filter changes: queries answered short, rows returned per query, and the plan
//! the server used.

use super::render::{Cell, Column, Style, Table};
use super::table::best_at_recall_of;
use crate::results::PointResult;

/// The selectivity of a point (canonical text), `None` for an unfiltered point.
pub fn selectivity(p: &PointResult) -> Option<&str> {
    p.query_args
        .get(crate::backend::filter::SELECTIVITY.name)
        .and_then(|v| v.as_str())
}

/// Whether any point is filtered.
pub fn any_filtered(points: &[PointResult]) -> bool {
    points.iter().any(|p| selectivity(p).is_some())
}

/// Points by selectivity, lowest first; unfiltered points last (`None`: all rows).
pub fn by_selectivity(points: &[PointResult]) -> Vec<(Option<String>, Vec<&PointResult>)> {
    let mut groups: Vec<(Option<String>, Vec<&PointResult>)> = Vec::new();
    for p in points {
        let s = selectivity(p).map(str::to_string);
        match groups.iter_mut().find(|(k, _)| *k == s) {
            Some((_, g)) => g.push(p),
            None => groups.push((s, vec![p])),
        }
    }
    let order =
        |s: &Option<String>| -> f64 { s.as_deref().map_or(2.0, |t| t.parse().unwrap_or(2.0)) };
    groups.sort_by(|a, b| order(&a.0).total_cmp(&order(&b.0)));
    groups
}

/// The plan in a few words (`vector index`, `B-tree + exact sort`), without EXPLAIN's lines.
pub fn plan_short(plan: &str) -> &str {
    plan.split(" (").next().unwrap_or(plan)
}

/// One best-QPS-at-recall table ([`best_at_recall_of`]) per selectivity, stacked, with the
/// columns `selectivity` first and `short`, `mean_rows`, `plan` of each winner last.
pub fn selectivity_table(
    points: &[PointResult],
    thresholds: &[f64],
    base: Option<&str>,
) -> crate::Result<Table> {
    let mut out: Option<Table> = None;
    for (sel, group) in by_selectivity(points) {
        let recall = best_at_recall_of(&group, thresholds, base)?;
        let t = recall.to_table();
        let table = out.get_or_insert_with(|| {
            let mut columns = vec![Column::new("selectivity", "selectivity", Style::Plain)];
            columns.extend(t.columns.iter().cloned());
            columns.push(Column::new("short", "short", Style::Plain));
            columns.push(Column::new("mean_rows", "rows", Style::Fixed(1)));
            columns.push(Column::new("plan", "plan", Style::Plain));
            Table {
                columns,
                rows: Vec::new(),
            }
        });
        // A column a group shows in Markdown (labels, clients that vary) is shown for all.
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(col) = table.columns.get_mut(i + 1) {
                col.in_markdown |= c.in_markdown;
            }
        }
        for (row, cells) in recall.rows.iter().zip(t.rows) {
            let best = row.best.as_ref().map(|b| group[b.index]);
            let mut r = vec![Cell::Text(
                sel.clone().unwrap_or_else(|| "1 (no filter)".into()),
            )];
            r.extend(cells);
            r.push(best.map_or(Cell::Null, |p| Cell::Int(p.metrics.short_results as i64)));
            r.push(best.and_then(|p| p.metrics.mean_rows).into());
            r.push(
                best.and_then(|p| p.metrics.plan.as_deref())
                    .map(plan_short)
                    .into(),
            );
            table.rows.push(r);
        }
    }
    out.ok_or_else(|| crate::Error::Results("no points to table".into()))
}
