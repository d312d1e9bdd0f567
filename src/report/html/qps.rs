//! The QPS-vs-recall view: each series' Pareto frontier (log QPS), its other points faded,
//! and the best-QPS-at-recall table.

use super::chart::{Axis, Chart, Dataset, Point, drawable};
use super::frontier::frontier;
use super::{Context, Section, Tips, chart_box, series_name, table};
use crate::report::best_at_recall;
use crate::report::series::SeriesKey;
use crate::results::PointResult;

pub fn view(ctx: &Context<'_>, _tips: &mut Tips) -> crate::Result<Option<Section>> {
    let (bars, bars_are) = qps_bars(ctx);
    let (chart, dropped) = recall_chart(
        ctx,
        "qps-recall",
        Axis::log("Queries per second (1/s, log scale)"),
        true,
        |p| Some(p.metrics.qps),
        bars,
    );
    let best = best_at_recall(ctx.points, &ctx.options.thresholds, None)?;
    let mut html = String::from(
        "<p>Each line joins one series' Pareto frontier: the points no other point of the \
         series beats on both recall and QPS. Faded markers are its other points. QPS is the \
         figure <code>annbench table</code> shows; the bar through a point is ",
    );
    html.push_str(bars_are);
    html.push_str(
        ". Hover a point for its parameters and every figure; click a legend entry to hide or \
         show a series.</p>\n",
    );
    html.push_str(&chart_box("qps-recall", "QPS (log scale) against recall"));
    html.push_str(&dropped_note(dropped, "without a positive QPS"));
    html.push_str(
        "<h3>Best QPS at recall</h3>\n<p>For each recall threshold and series, the point with \
         the highest QPS among those whose recall is at or above it.</p>\n",
    );
    html.push_str(&table::to_html(&best.to_table(), "best"));
    Ok(Some(Section {
        id: "qps".into(),
        title: "QPS vs recall".into(),
        html,
        charts: vec![chart],
    }))
}

/// The bars of the QPS figures: the confidence interval where the results carry one, else the
/// range of the passes; and what they are, for the page.
pub fn qps_bars<'a>(
    ctx: &'a Context<'a>,
) -> (impl Fn(usize) -> Option<(f64, f64)> + 'a, &'static str) {
    let (low, high, what) = if ctx.has("qps_ci_low") {
        ("qps_ci_low", "qps_ci_high", "its confidence interval")
    } else {
        (
            "qps_min",
            "qps_max",
            "the range of its timed passes (slowest to fastest)",
        )
    };
    let bar = move |i: usize| Some((ctx.number(i, low)?, ctx.number(i, high)?));
    (bar, what)
}

/// A chart of `value` against recall: per series, a line through its frontier (the best
/// value at each recall, higher or lower being better) and its other points faded; `bar`
/// gives point i's bar, if any. Returns the chart and how many points it could not draw.
pub fn recall_chart(
    ctx: &Context<'_>,
    id: &str,
    y: Axis,
    higher_is_better: bool,
    value: impl Fn(&PointResult) -> Option<f64>,
    bar: impl Fn(usize) -> Option<(f64, f64)>,
) -> (Chart, usize) {
    let mut datasets = Vec::new();
    let mut dropped_total = 0;
    for (group, key) in ctx.series.iter().enumerate() {
        let members = ctx
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| SeriesKey::of(p) == *key)
            .map(|(i, p)| Point {
                bar: bar(i),
                ..Point::new(p.metrics.recall, value(p).unwrap_or(f64::NAN), i as i64)
            });
        let (kept, dropped) = drawable(members, y.log);
        dropped_total += dropped;
        if kept.is_empty() {
            continue;
        }
        let xy: Vec<(f64, f64)> = kept.iter().map(|p| (p.x, p.y)).collect();
        let front = frontier(&xy, higher_is_better);
        let name = series_name(key, ctx.distinct);
        let line = front.iter().map(|&i| kept[i]).collect();
        let mut front_set = Dataset::new(&name, group, true, line);
        front_set.stepped = !higher_is_better;
        datasets.push(front_set);
        let rest: Vec<_> = (0..kept.len())
            .filter(|i| !front.contains(i))
            .map(|i| kept[i])
            .collect();
        if !rest.is_empty() {
            datasets
                .push(Dataset::new(&format!("{name} (other points)"), group, false, rest).faded());
        }
    }
    let chart = Chart {
        id: id.into(),
        x: Axis::linear("Recall"),
        y,
        datasets,
    };
    (chart, dropped_total)
}

/// A note under a chart about points it could not draw (none: empty).
pub fn dropped_note(dropped: usize, why: &str) -> String {
    match dropped {
        0 => String::new(),
        n => format!(
            "<p class=\"note\">{n} point{} {why} {} not drawn (the tables list them).</p>\n",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" }
        ),
    }
}
