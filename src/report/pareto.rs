//! Pareto frontier of QPS vs recall per series: the points no other point of the series beats
//! on both (recall at least as high and QPS at least as high, one of them strictly).

use super::names::point_name;
use super::render::{Cell, Column, Style, Table};
use super::series::{Distinct, SeriesKey};
use crate::results::PointResult;
use std::collections::BTreeMap;

/// One point on a frontier.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierPoint {
    /// Index of the point in the slice given to [`pareto`].
    pub index: usize,
    pub name: String,
    pub recall: f64,
    pub qps: f64,
}

/// The frontier of one series, by recall ascending (so QPS descending): ready to plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontier {
    pub series: SeriesKey,
    pub points: Vec<FrontierPoint>,
}

/// The Pareto frontier of each series (algorithm, label, clients) in series order. Points with
/// a recall or QPS that is not a finite number are left out; of several points with the same
/// recall and QPS, the first in the input stays.
pub fn pareto(points: &[PointResult]) -> Vec<Frontier> {
    let mut series: BTreeMap<SeriesKey, Vec<(usize, &PointResult)>> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        series.entry(SeriesKey::of(p)).or_default().push((i, p));
    }
    series
        .into_iter()
        .map(|(key, members)| Frontier {
            points: frontier(&members),
            series: key,
        })
        .collect()
}

fn frontier(members: &[(usize, &PointResult)]) -> Vec<FrontierPoint> {
    let mut cands: Vec<&(usize, &PointResult)> = members
        .iter()
        .filter(|(_, p)| p.metrics.recall.is_finite() && p.metrics.qps.is_finite())
        .collect();
    // Recall descending, then QPS descending, then input order: a point is on the frontier
    // exactly when its QPS beats every point before it.
    cands.sort_by(|(ia, a), (ib, b)| {
        b.metrics
            .recall
            .total_cmp(&a.metrics.recall)
            .then(b.metrics.qps.total_cmp(&a.metrics.qps))
            .then(ia.cmp(ib))
    });
    let mut out = Vec::new();
    let mut best_qps = f64::NEG_INFINITY;
    for (i, p) in cands {
        if p.metrics.qps > best_qps {
            best_qps = p.metrics.qps;
            out.push(FrontierPoint {
                index: *i,
                name: point_name(p),
                recall: p.metrics.recall,
                qps: p.metrics.qps,
            });
        }
    }
    out.reverse();
    out
}

/// The frontiers as one [`Table`] (`algorithm, label, clients, name, recall, qps`), series
/// after series; Markdown shows label and clients only when they vary.
pub fn frontier_table(frontiers: &[Frontier], distinct: Distinct) -> Table {
    let mut label = Column::new("label", "label", Style::Plain);
    label.in_markdown = distinct.labels;
    let mut clients = Column::new("clients", "clients", Style::Plain);
    clients.in_markdown = distinct.clients;
    let columns = vec![
        Column::new("algorithm", "algorithm", Style::Plain),
        label,
        clients,
        Column::new("name", "parameters", Style::Plain),
        Column::new("recall", "recall", Style::Recall),
        Column::new("qps", "QPS", Style::Fixed(1)),
    ];
    let rows = frontiers
        .iter()
        .flat_map(|f| {
            f.points.iter().map(move |p| {
                vec![
                    Cell::Text(f.series.algorithm.clone()),
                    Cell::from(f.series.label.as_deref()),
                    Cell::Int(f.series.clients as i64),
                    Cell::Text(p.name.clone()),
                    Cell::Float(p.recall),
                    Cell::Float(p.qps),
                ]
            })
        })
        .collect();
    Table { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    #[test]
    fn frontier_by_hand() {
        // (recall, qps): a(0.90, 900) b(0.95, 500) c(0.93, 400: dominated by b)
        // d(0.99, 100) e(0.95, 500: duplicate of b) f(0.80, 800: dominated by a)
        let pts: Vec<PointResult> = [
            (0.90, 900.0),
            (0.95, 500.0),
            (0.93, 400.0),
            (0.99, 100.0),
            (0.95, 500.0),
            (0.80, 800.0),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(r, q))| point("mariadb", &[("M", 8)], &[("ef_search", i as i64)], r, q))
        .collect();
        let f = pareto(&pts);
        assert_eq!(f.len(), 1);
        let idx: Vec<usize> = f[0].points.iter().map(|p| p.index).collect();
        assert_eq!(idx, vec![0, 1, 3]);
        assert_eq!(f[0].points[0].name, "MariaDB(m=8, ef_search=0)");
    }

    #[test]
    fn one_frontier_per_series_and_nan_left_out() {
        let mut pts = vec![
            point("pgvector", &[], &[], 0.9, 10.0),
            point("mariadb", &[], &[], f64::NAN, 10.0),
            point("mariadb", &[], &[], 0.5, 20.0),
        ];
        pts[0].clients = 4;
        let f = pareto(&pts);
        let keys: Vec<(&str, usize, usize)> = f
            .iter()
            .map(|s| {
                (
                    s.series.algorithm.as_str(),
                    s.series.clients,
                    s.points.len(),
                )
            })
            .collect();
        assert_eq!(keys, vec![("mariadb", 1, 1), ("pgvector", 4, 1)]);
    }
}
