//! Filtered points (`selectivity` and `filter` query args): the best-QPS-at-recall table per
//! filter kind and selectivity, with what a filter changes: queries answered short, rows
//! returned per query, and the plan the server used.

pub use super::point_filter::{filter_kind, plan_short, selectivity};
use super::render::{Cell, Column, Style, Table};
use super::table::best_at_recall_of;
use crate::dataset::filters::FilterKind;
use crate::registry::filter::filter_of;
use crate::results::PointResult;

/// Whether any point is filtered.
pub fn any_filtered(points: &[PointResult]) -> bool {
    points.iter().any(|p| selectivity(p).is_some())
}

/// A group of points with one filter: (kind, selectivity), `None` for unfiltered points.
pub type FilterGroup<'a> = (Option<(FilterKind, String)>, Vec<&'a PointResult>);

/// Points by filter: ascending selectivity, range before label at one selectivity;
/// unfiltered points last (all rows).
pub fn by_filter(points: &[PointResult]) -> Vec<FilterGroup<'_>> {
    let mut groups: Vec<FilterGroup<'_>> = Vec::new();
    for p in points {
        let key = filter_of(&p.query_args).map(|(k, s)| (k, s.to_string()));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    let order = |k: &Option<(FilterKind, String)>| -> (f64, Option<FilterKind>) {
        match k {
            Some((kind, s)) => (s.parse().unwrap_or(2.0), Some(*kind)),
            None => (2.0, None),
        }
    };
    groups.sort_by(|a, b| {
        let (x, y) = (order(&a.0), order(&b.0));
        x.0.total_cmp(&y.0).then(x.1.cmp(&y.1))
    });
    groups
}

/// One best-QPS-at-recall table ([`best_at_recall_of`]) per filter kind and selectivity,
/// stacked, with the columns `filter` (the kind; in Markdown only where both kinds occur) and
/// `selectivity` first and `short`, `mean_rows`, `plan` of each winner last.
pub fn selectivity_table(
    points: &[PointResult],
    thresholds: &[f64],
    base: Option<&str>,
) -> crate::Result<Table> {
    let kinds: std::collections::BTreeSet<FilterKind> =
        points.iter().filter_map(filter_kind).collect();
    let mut out: Option<Table> = None;
    for (key, group) in by_filter(points) {
        let recall = best_at_recall_of(&group, thresholds, base)?;
        let t = recall.to_table();
        let table = out.get_or_insert_with(|| {
            let mut kind = Column::new("filter", "filter", Style::Plain);
            kind.in_markdown = kinds.len() > 1;
            let mut columns = vec![
                kind,
                Column::new("selectivity", "selectivity", Style::Plain),
            ];
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
            if let Some(col) = table.columns.get_mut(i + 2) {
                col.in_markdown |= c.in_markdown;
            }
        }
        for (row, cells) in recall.rows.iter().zip(t.rows) {
            let best = row.best.as_ref().map(|b| group[b.index]);
            let mut r = match &key {
                Some((kind, s)) => vec![Cell::Text(kind.to_string()), Cell::Text(s.clone())],
                None => vec![Cell::Null, Cell::Text("1 (no filter)".into())],
            };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::render::{Format, render};
    use crate::report::series::SeriesKey;
    use crate::report::testutil::point;
    use serde_json::json;

    /// A pgvector point at `selectivity`, of `kind` (`None`: no `filter` arg, range).
    fn filtered(selectivity: &str, kind: Option<&str>, recall: f64, qps: f64) -> PointResult {
        let mut p = point("pgvector", &[("M", 16)], &[("ef_search", 40)], recall, qps);
        p.query_args
            .insert("selectivity".into(), json!(selectivity));
        if let Some(k) = kind {
            p.query_args.insert("filter".into(), json!(k));
        }
        p.metrics.plan = Some("vector index (Limit | ...)".into());
        p
    }

    #[test]
    fn one_block_per_kind_and_selectivity() {
        let points = vec![
            filtered("0.1", Some("label"), 0.97, 300.0),
            filtered("0.01", None, 0.99, 100.0),
            filtered("0.1", None, 0.98, 200.0),
            filtered("0.01", Some("label"), 0.99, 150.0),
        ];
        let keys: Vec<_> = by_filter(&points).into_iter().map(|(k, _)| k).collect();
        let key = |k, s: &str| Some((k, s.to_string()));
        assert_eq!(
            keys,
            [
                key(FilterKind::Range, "0.01"),
                key(FilterKind::Label, "0.01"),
                key(FilterKind::Range, "0.1"),
                key(FilterKind::Label, "0.1"),
            ]
        );
        let t = selectivity_table(&points, &[0.95], None).unwrap();
        assert_eq!(t.columns[0].name, "filter");
        assert!(t.columns[0].in_markdown, "both kinds: the kind is shown");
        let md = render(&t, Format::Markdown).unwrap();
        let row = |kind: &str| {
            md.lines()
                .any(|l| l.starts_with(&format!("| {kind} ")) && l.contains("| 0.01 "))
        };
        assert!(row("label") && row("range"), "{md}");
        let csv = render(&t, Format::Csv).unwrap();
        assert!(csv.starts_with("filter,selectivity,"), "{csv}");
        // One kind only: the Markdown table reads as before.
        let range: Vec<PointResult> = points[1..3].to_vec();
        let t = selectivity_table(&range, &[0.95], None).unwrap();
        assert!(!t.columns[0].in_markdown);
        // Kinds never share a series (frontiers, comparisons).
        let (a, b) = (SeriesKey::of(&points[1]), SeriesKey::of(&points[3]));
        assert_ne!(a, b);
        assert_eq!(a.to_string(), "pgvector x1 clients at selectivity 0.01");
        assert_eq!(
            b.to_string(),
            "pgvector x1 clients at selectivity 0.01 (label filter)"
        );
    }
}
