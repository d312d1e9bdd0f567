//! The QPS-vs-clients view, for parameter sets measured with more than one client count: one
//! line per parameter set, and the clients table (scaling, client CPU per connection).

use super::chart::{Axis, Chart, Dataset, Point, drawable};
use super::qps::dropped_note;
use super::{Context, Section, Tips, chart_box, table};
use crate::report::clients::{clients_rows_table, clients_table};
use crate::report::names::algorithm_name;
use std::collections::BTreeMap;

pub fn view(ctx: &Context<'_>, _tips: &mut Tips) -> crate::Result<Option<Section>> {
    let groups = clients_table(ctx.points);
    let Some((chart, dropped)) = clients_chart(ctx, None) else {
        return Ok(None);
    };
    let mut html = String::from(
        "<p>Measured throughput (all clients together) at fixed parameters, for each \
         parameter set run with more than one client count. In the table, scaling is QPS \
         over the QPS at the smallest client count; client CPU per connection near 1.0 means \
         the client, not the server, may be the bottleneck.</p>\n",
    );
    html.push_str(&chart_box("qps-clients", "QPS against concurrent clients"));
    html.push_str(&dropped_note(dropped, "without a QPS"));
    html.push_str(&table::to_html(
        &clients_rows_table(&groups, ctx.distinct.labels),
        "clients",
    ));
    Ok(Some(Section {
        id: "clients".into(),
        title: "QPS vs clients".into(),
        html,
        charts: vec![chart],
    }))
}

/// A line's legend name and its (clients, QPS) points.
type Line = (String, Vec<Point>);
type BestByClients = BTreeMap<usize, (f64, usize)>;

/// QPS against clients: without `recall`, one line per parameter set measured with more than
/// one client count; with it, one line per algorithm and label through the best QPS at
/// recall >= `recall` of each client count. `None` when there is no such line.
pub fn clients_chart(ctx: &Context<'_>, recall: Option<f64>) -> Option<(Chart, usize)> {
    let lines: Vec<Line> = match recall {
        None => clients_table(ctx.points)
            .iter()
            .map(|g| {
                let mut name = g.name.clone();
                if ctx.distinct.labels {
                    name.push_str(&format!(" [{}]", g.label.as_deref().unwrap_or("no label")));
                }
                let xy = g
                    .rows
                    .iter()
                    .map(|r| Point::new(r.clients as f64, r.qps, r.index as i64));
                (name, xy.collect())
            })
            .collect(),
        Some(r) => best_at_recall_lines(ctx, r),
    };
    let mut dropped_total = 0;
    let mut datasets = Vec::new();
    for (group, (name, xy)) in lines.into_iter().enumerate() {
        let (kept, dropped) = drawable(xy, false);
        dropped_total += dropped;
        if !kept.is_empty() {
            datasets.push(Dataset::new(&name, group, true, kept));
        }
    }
    if datasets.is_empty() {
        return None;
    }
    let chart = Chart {
        id: "qps-clients".into(),
        x: Axis::linear("Concurrent clients"),
        y: Axis::linear("Queries per second (1/s)"),
        datasets,
    };
    Some((chart, dropped_total))
}

/// Per algorithm and label: at each client count, the point with the highest QPS among those
/// with recall >= `recall`.
fn best_at_recall_lines(ctx: &Context<'_>, recall: f64) -> Vec<Line> {
    // (algorithm, label) -> clients -> (best QPS, point index)
    let mut lines: BTreeMap<(&str, Option<&str>), BestByClients> = BTreeMap::new();
    for (i, p) in ctx.points.iter().enumerate() {
        if !(p.metrics.recall >= recall && p.metrics.qps.is_finite()) {
            continue;
        }
        let line = lines
            .entry((p.algorithm.as_str(), p.label.as_deref()))
            .or_default();
        let best = line.entry(p.clients).or_insert((p.metrics.qps, i));
        if p.metrics.qps > best.0 {
            *best = (p.metrics.qps, i);
        }
    }
    lines
        .into_iter()
        .map(|((algorithm, label), best)| {
            let mut name = algorithm_name(algorithm);
            if ctx.distinct.labels {
                name.push_str(&format!(" [{}]", label.unwrap_or("no label")));
            }
            let xy = best
                .into_iter()
                .map(|(c, (qps, i))| Point::new(c as f64, qps, i as i64))
                .collect();
            (name, xy)
        })
        .collect()
}
