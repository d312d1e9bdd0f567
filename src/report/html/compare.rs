//! The comparison view, when the results hold more than one label: each other label against
//! the base label (by default the one measured first), as relative QPS per matched point
//! (same parameters, or each side's best at a recall threshold), with the pair tables and
//! the summary statistics of `annbench compare`.

use super::chart::{Axis, Chart, Dataset, Point, colour, drawable};
use super::escape::text;
use super::tips::{fixed, recall};
use super::{Context, Section, Tips, chart_box, table};
use crate::report::compare::{CompareOptions, Comparison, MatchKind, compare_with};
use crate::report::render::{Cell, Table};
use crate::report::settings::settings_table;
use crate::results::PointResult;
use std::collections::BTreeMap;

pub fn view(ctx: &Context<'_>, tips: &mut Tips) -> crate::Result<Option<Section>> {
    let labels = labels_by_first_measured(ctx.points);
    if labels.len() < 2 {
        return Ok(None);
    }
    let base = match &ctx.options.base_label {
        Some(b) if labels.contains(b) => b.clone(),
        Some(b) => {
            return Err(crate::Error::Config(format!(
                "--base {b}: no results have that label; labels present: {}",
                labels.join(", ")
            )));
        }
        None => labels[0].clone(),
    };
    let mut html = format!(
        "<p>QPS of each label relative to <b>{}</b> (ratio = label / {}), at matched \
         parameters (same algorithm, parameters and clients; x = recall of the {} point) and \
         at matched recall targets (each side's best QPS at recall &gt;= the threshold; \
         triangles, x = threshold). Above 1.0 the label is faster. Each label built its own \
         indexes, and HNSW builds are randomised: the ratios include build-to-build variance \
         as well as the difference being compared.</p>\n",
        text(&base),
        text(&base),
        text(&base)
    );
    let others: Vec<String> = labels.iter().filter(|l| **l != base).cloned().collect();
    let opts = CompareOptions {
        thresholds: ctx.options.thresholds.clone(),
        ..CompareOptions::default()
    };
    if others.len() > 1 {
        html.push_str(&matrix_html(ctx.points, &base, &others, &opts)?);
    }
    let mut charts = Vec::new();
    for (n, me) in others.iter().enumerate() {
        let cmp = compare_with(ctx.points, &base, me, &opts)?;
        let id = format!("compare-{n}");
        html.push_str(&format!("<h3>{} against {}</h3>\n", text(me), text(&base)));
        html.push_str(&chart_box(&id, &format!("QPS of {me} / QPS of {base}")));
        for (kind, title) in [
            (MatchKind::Params, "At matched parameters"),
            (MatchKind::Recall, "At matched recall targets"),
        ] {
            html.push_str(&format!("<h4>{title}</h4>\n"));
            html.push_str(&table::to_html(&cmp.pairs_table(Some(kind)), "pairs"));
        }
        html.push_str("<h4>Summary of the ratios</h4>\n");
        html.push_str(&table::to_html(&cmp.summary_table(), "summary"));
        if !cmp.settings.is_empty() {
            html.push_str("<h4>Settings that differ</h4>\n");
            html.push_str(&table::to_html(
                &settings_table(&cmp.settings, &[&base, me]),
                "settings",
            ));
        }
        html.push_str(&notes_html(&cmp.notes));
        charts.push(ratio_chart(&id, &cmp, tips));
    }
    Ok(Some(Section {
        id: "compare".into(),
        title: "Comparisons".into(),
        html,
        charts,
    }))
}

/// The matrix of every other label against the base: one table per match kind, a column
/// per label (ratio, interval, `*` when significant), and the settings that differ.
fn matrix_html(
    points: &[PointResult],
    base: &str,
    others: &[String],
    opts: &CompareOptions,
) -> crate::Result<String> {
    let m = crate::report::matrix(points, base, others, opts)?;
    let mut html = format!(
        "<h3>Every label against {}</h3>\n<p>Each cell: the label's QPS / {}'s with its 95% \
         interval; * when the whole interval lies beyond +-{:.0}% (paired: the labels ran \
         interleaved in one run) or +-{:.0}% (unpaired).</p>\n",
        text(base),
        text(base),
        opts.paired_noise * 100.0,
        opts.noise * 100.0
    );
    for (kind, title) in [
        (MatchKind::Params, "At matched parameters"),
        (MatchKind::Recall, "Best QPS at matched recall targets"),
    ] {
        let t = m.wide_table(kind);
        if !t.rows.is_empty() {
            html.push_str(&format!("<h4>{title}</h4>\n"));
            html.push_str(&table::to_html(&t, "matrix"));
        }
    }
    if !m.settings.is_empty() {
        html.push_str("<h4>Settings that differ</h4>\n");
        html.push_str(&table::to_html(
            &settings_table(&m.settings, &m.labels()),
            "settings",
        ));
    }
    Ok(html)
}

/// The comparison's notes as a list.
fn notes_html(notes: &[String]) -> String {
    let items: String = notes
        .iter()
        .map(|n| format!("<li>{}</li>\n", text(n)))
        .collect();
    format!("<ul class=\"notes\">\n{items}</ul>\n")
}

/// The distinct labels, the one whose first point finished earliest first (points without a
/// time last), then by name.
fn labels_by_first_measured(points: &[PointResult]) -> Vec<String> {
    let mut first: BTreeMap<&str, &str> = BTreeMap::new();
    for p in points {
        if let Some(l) = &p.label {
            let t = p.environment.finished_at.as_str();
            let slot = first.entry(l).or_insert(t);
            if !t.is_empty() && (slot.is_empty() || t < *slot) {
                *slot = t;
            }
        }
    }
    let mut labels: Vec<(&str, &str)> = first.into_iter().collect();
    labels.sort_by_key(|&(l, t)| (t.is_empty(), t, l));
    labels.into_iter().map(|(l, _)| l.to_string()).collect()
}

/// Ratio against recall, one dataset per (algorithm, match kind), and the parity line; the
/// pairs' tooltip texts are appended to `tips`. It reads the comparison's pairs table by
/// column name, so columns the comparison gains (a ratio's interval, a verdict) show up as a
/// bar and in the tooltip.
pub fn ratio_chart(id: &str, cmp: &Comparison, tips: &mut Tips) -> Chart {
    let table = cmp.pairs_table(None);
    let pairs: Vec<Pair<'_>> = table
        .rows
        .iter()
        .map(|row| Pair { table: &table, row })
        .collect();
    let mut algorithms: Vec<String> = pairs.iter().filter_map(|p| p.text("algorithm")).collect();
    algorithms.sort();
    algorithms.dedup();
    let mut datasets = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (a, algorithm) in algorithms.iter().enumerate() {
        for (k, (kind, x_column, what)) in [
            ("params", "base_recall", "matched parameters"),
            ("recall", "recall_threshold", "matched recall"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut points = Vec::new();
            for p in pairs.iter().filter(|p| {
                p.text("match").as_deref() == Some(kind)
                    && p.text("algorithm").as_deref() == Some(algorithm.as_str())
            }) {
                if let (Some(x), Some(y)) = (p.num(x_column), p.num("ratio")) {
                    if x.is_finite() && y.is_finite() {
                        lo = lo.min(x);
                        hi = hi.max(x);
                        tips.push(pair_tip(cmp, p));
                        let bar = p.num("ratio_ci_low").zip(p.num("ratio_ci_high"));
                        points.push(Point {
                            bar,
                            ..Point::new(x, y, tips.len() as i64 - 1)
                        });
                    }
                }
            }
            let (points, _) = drawable(points, false);
            if points.is_empty() {
                continue;
            }
            let label = format!("{algorithm} ({what})");
            let mut d = Dataset::new(&label, 2 * a + k, false, points);
            d.colour = colour(a).into();
            d.shape = if k == 0 { "circle" } else { "triangle" };
            datasets.push(d);
        }
    }
    if lo.is_finite() {
        let ends = vec![Point::new(lo, 1.0, -1), Point::new(hi, 1.0, -1)];
        let mut parity = Dataset::new("parity (1.0)", 2 * algorithms.len(), true, ends);
        parity.colour = "#555555".into();
        parity.shape = "none";
        datasets.push(parity);
    }
    Chart {
        id: id.into(),
        x: Axis::linear("Recall (matched parameters) or recall threshold (matched recall)"),
        y: Axis::linear(&format!("QPS {} / QPS {}", cmp.me, cmp.base)),
        datasets,
    }
}

/// One row of the pairs table, read by column name.
struct Pair<'a> {
    table: &'a Table,
    row: &'a [Cell],
}

impl Pair<'_> {
    fn cell(&self, name: &str) -> Option<&Cell> {
        let i = self.table.columns.iter().position(|c| c.name == name)?;
        self.row.get(i)
    }

    fn num(&self, name: &str) -> Option<f64> {
        match self.cell(name)? {
            Cell::Float(x) => Some(*x),
            Cell::Int(n) => Some(*n as f64),
            _ => None,
        }
    }

    fn text(&self, name: &str) -> Option<String> {
        match self.cell(name)? {
            Cell::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

fn pair_tip(cmp: &Comparison, p: &Pair<'_>) -> Vec<String> {
    let (base, me) = (&cmp.base, &cmp.me);
    let side = |label: &str, who: &str| {
        format!(
            "{label}: {} recall {}, QPS {}",
            p.text(&format!("{who}_name"))
                .unwrap_or_else(|| "not reached".into()),
            recall(p.num(&format!("{who}_recall"))),
            fixed(p.num(&format!("{who}_qps")), 1)
        )
    };
    let head = match (p.text("match").as_deref(), p.num("recall_threshold")) {
        (Some("recall"), Some(t)) => format!(
            "{}: best QPS at recall >= {t}",
            p.text("algorithm").unwrap_or_default()
        ),
        _ => p.text("me_name").unwrap_or_default(),
    };
    let mut ratio = format!("{me} / {base}: {}", fixed(p.num("ratio"), 3));
    if let (Some(l), Some(h)) = (p.num("ratio_ci_low"), p.num("ratio_ci_high")) {
        let level = p.num("ratio_ci_level").unwrap_or(0.95) * 100.0;
        ratio.push_str(&format!(
            " ({level:.0}% interval {} to {})",
            fixed(Some(l), 3),
            fixed(Some(h), 3)
        ));
    }
    if let Some(v) = p.text("verdict") {
        ratio.push_str(&format!(", {v}"));
    }
    let clients = p.num("clients").unwrap_or(1.0) as usize;
    vec![
        head,
        ratio,
        side(base, "base"),
        side(me, "me"),
        format!("{clients} client{}", if clients == 1 { "" } else { "s" }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    #[test]
    fn labels_in_order_of_first_measurement() {
        let at = |label: &str, t: &str| {
            let mut p = point("mariadb", &[], &[], 0.9, 10.0);
            p.label = Some(label.into());
            p.environment.finished_at = t.into();
            p
        };
        let pts = [
            at("new", "2026-01-02T00:00:00Z"),
            at("old", "2026-01-03T00:00:00Z"),
            at("old", "2026-01-01T00:00:00Z"),
            at("unknown", ""),
        ];
        assert_eq!(labels_by_first_measured(&pts), ["old", "new", "unknown"]);
    }
}
