//! The comparison view, when the results hold more than one label: each other label against
//! the base label (by default the one measured first), as relative QPS per matched point
//! (same parameters, or each side's best at a recall threshold), with the pair tables and
//! the summary statistics of `annbench compare`.

use super::chart::{Axis, Chart, Dataset, Point, colour};
use super::escape::text;
use super::{Context, Section, Tips, chart_box, table};
use crate::report::compare::{Comparison, MatchKind, Matched};
use crate::report::names::algorithm_name;
use crate::report::{compare, render::truncate4};
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
    let mut charts = Vec::new();
    for (n, me) in labels.iter().filter(|l| **l != base).enumerate() {
        let cmp = compare(ctx.points, &base, me, &ctx.options.thresholds)?;
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
        charts.push(ratio_chart(&id, &cmp, tips));
    }
    Ok(Some(Section {
        id: "compare".into(),
        title: "Comparisons".into(),
        html,
        charts,
    }))
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
/// pairs' tooltip texts are appended to `tips`.
pub fn ratio_chart(id: &str, cmp: &Comparison, tips: &mut Tips) -> Chart {
    let mut algorithms: Vec<&str> = cmp.rows.iter().map(|r| r.algorithm.as_str()).collect();
    algorithms.sort();
    algorithms.dedup();
    let mut datasets = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (a, algorithm) in algorithms.iter().enumerate() {
        for (k, kind) in [MatchKind::Params, MatchKind::Recall]
            .into_iter()
            .enumerate()
        {
            let mut points = Vec::new();
            for r in cmp
                .rows
                .iter()
                .filter(|r| r.kind == kind && r.algorithm == *algorithm)
            {
                let x = match kind {
                    MatchKind::Params => r.base_recall,
                    MatchKind::Recall => r.threshold,
                };
                if let (Some(x), Some(y)) = (x, r.ratio) {
                    if x.is_finite() && y.is_finite() {
                        lo = lo.min(x);
                        hi = hi.max(x);
                        tips.push(pair_tip(cmp, r));
                        points.push(Point::new(x, y, tips.len() as i64 - 1));
                    }
                }
            }
            if points.is_empty() {
                continue;
            }
            let what = match kind {
                MatchKind::Params => "matched parameters",
                MatchKind::Recall => "matched recall",
            };
            let label = format!("{} ({what})", algorithm_name(algorithm));
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

fn pair_tip(cmp: &Comparison, r: &Matched) -> Vec<String> {
    let side = |label: &str, name: &Option<String>, recall: Option<f64>, qps: Option<f64>| {
        format!(
            "{label}: {} recall {}, QPS {}",
            name.as_deref().unwrap_or("not reached"),
            recall.map_or("n/a".into(), |r| format!("{:.4}", truncate4(r))),
            qps.map_or("n/a".into(), |q| format!("{q:.1}"))
        )
    };
    let head = match (r.kind, r.threshold) {
        (MatchKind::Recall, Some(t)) => {
            format!(
                "{}: best QPS at recall >= {t}",
                algorithm_name(&r.algorithm)
            )
        }
        _ => r.me_name.clone().unwrap_or_default(),
    };
    vec![
        head,
        format!(
            "{} / {}: {}",
            cmp.me,
            cmp.base,
            r.ratio.map_or("n/a".into(), |x| format!("{x:.3}x"))
        ),
        side(&cmp.base, &r.base_name, r.base_recall, r.base_qps),
        side(&cmp.me, &r.me_name, r.me_recall, r.me_qps),
        format!(
            "{} client{}",
            r.clients,
            if r.clients == 1 { "" } else { "s" }
        ),
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
