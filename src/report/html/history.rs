//! The history view: when the points hold a series of runs (three or more labels whose runs
//! started at different times, from one client host), best QPS at each recall threshold and
//! the server's CPU per query over the runs, with their change points (`annbench history`).

use super::chart::{Axis, Chart, Dataset, Point};
use super::{Context, Section, Tips, chart_box, table};
use crate::report::history::{HistMetric, History, HistoryOptions, LineKey, history};
use std::collections::BTreeSet;

pub fn view(ctx: &Context<'_>, _tips: &mut Tips) -> crate::Result<Option<Section>> {
    let starts: BTreeSet<&str> = ctx
        .points
        .iter()
        .filter(|p| p.label.is_some())
        .filter_map(|p| p.environment.started_at.as_deref())
        .collect();
    // One interleaved run of several servers is not a series: its labels share a start.
    if starts.len() < 3 {
        return Ok(None);
    }
    // `annbench history`'s own defaults, so the section shows what that command shows.
    let opts = HistoryOptions::default();
    // A store that mixes hosts gets no history here (`annbench history --hosts any` shows it).
    let Ok(h) = history(ctx.points, &opts) else {
        return Ok(None);
    };
    let mut charts = Vec::new();
    let mut html = format!(
        "<p>The {} labelled runs in the order they started, as <code>annbench history \
         --dataset {}</code> shows them: each recall threshold's best QPS (its 95% interval \
         as a band) and the server CPU per query, with change points found by Apache Otava's \
         method (E-divisive means and a t-test; window {}, p-value below {}, change above \
         {:.0}%) marked by triangles. docs/methodology.md says how they are found.</p>\n",
        h.elements.len(),
        super::escape::text(&h.dataset),
        opts.change.window,
        opts.change.max_pvalue,
        opts.change.min_magnitude * 100.0
    );
    for (metric, id, caption) in [
        (
            HistMetric::Qps,
            "history-qps",
            "Best QPS at each recall threshold over the runs",
        ),
        (
            HistMetric::CpuPerQuery,
            "history-cpu",
            "Server CPU per query of those points over the runs",
        ),
    ] {
        let (chart, lines) = history_chart(&h, metric, Lines::Thresholds, id);
        if lines > 0 && chart.datasets.iter().any(|d| !d.points.is_empty()) {
            html.push_str(&chart_box(id, caption));
            charts.push(chart);
        }
    }
    let changes = h.changes_table();
    if changes.rows.is_empty() {
        html.push_str("<p>No change points.</p>\n");
    } else {
        html.push_str("<h3>Change points</h3>\n");
        html.push_str(&table::to_html(&changes, "history-changes"));
    }
    let runs: Vec<String> = h
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                "<li>run {}: {} ({}, {})</li>",
                i + 1,
                super::escape::text(&e.label),
                super::escape::text(e.time.as_deref().unwrap_or("no time")),
                super::escape::text(&e.server_version)
            )
        })
        .collect();
    html.push_str(&format!(
        "<h3>Runs</h3>\n<ul>\n{}\n</ul>\n",
        runs.join("\n")
    ));
    for n in &h.notes {
        html.push_str(&format!("<p>Note: {}</p>\n", super::escape::text(n)));
    }
    Ok(Some(Section {
        id: "history".into(),
        title: "Over the runs".into(),
        html,
        charts,
    }))
}

/// Which lines a chart draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lines {
    /// The best-QPS-at-recall lines (few, and what the tables show).
    #[default]
    Thresholds,
    /// The lines of fixed parameters.
    Points,
    All,
}

impl std::str::FromStr for Lines {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "thresholds" | "threshold" => Ok(Lines::Thresholds),
            "points" | "point" => Ok(Lines::Points),
            "all" => Ok(Lines::All),
            other => Err(format!(
                "unknown lines '{other}': expected thresholds, points or all"
            )),
        }
    }
}

/// The chart of `metric` over the runs (x: run number from 1), and how many lines it draws.
pub fn history_chart(h: &History, metric: HistMetric, lines: Lines, id: &str) -> (Chart, usize) {
    let mut datasets = Vec::new();
    let mut group = 0;
    for line in &h.lines {
        let keep = matches!(
            (&line.key, lines),
            (_, Lines::All)
                | (LineKey::Threshold { .. }, Lines::Thresholds)
                | (LineKey::Point { .. }, Lines::Points)
        );
        if !keep {
            continue;
        }
        let values = line.metric(metric);
        let at = |i: usize| -> Option<Point> {
            let v = values[i]?;
            let mut p = Point::new((i + 1) as f64, metric.shown(v), -1);
            if metric == HistMetric::Qps {
                p.bar = line.values[i]
                    .as_ref()
                    .and_then(|v| v.qps_interval)
                    .map(|iv| (iv.low, iv.high));
            }
            Some(p)
        };
        let pts: Vec<Point> = (0..values.len()).filter_map(at).collect();
        if pts.is_empty() {
            continue;
        }
        let mut d = Dataset::new(&line.name, group, true, pts);
        d.band = metric == HistMetric::Qps;
        datasets.push(d);
        let marks: Vec<Point> = line
            .changes
            .iter()
            .filter(|c| c.metric == metric)
            .filter_map(|c| at(c.index))
            .map(|mut p| {
                p.bar = None;
                p
            })
            .collect();
        if !marks.is_empty() {
            let mut m = Dataset::new(&format!("{} change points", line.name), group, false, marks);
            m.shape = "triangle";
            m.legend = false;
            datasets.push(m);
        }
        group += 1;
    }
    let chart = Chart {
        id: id.into(),
        x: Axis::linear("Run (series order)"),
        y: Axis::linear(metric.title()),
        datasets,
    };
    (chart, group)
}
