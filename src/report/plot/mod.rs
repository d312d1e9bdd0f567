//! `annbench plot`: the common plots as PNG or SVG without Python. They are the charts of the
//! HTML report (same specs, same frontiers), drawn with plotters instead of Chart.js.

mod draw;

use crate::report::html::{Axis, Chart};
use crate::report::html::{
    Context, ReportOptions, clients_chart, prepare, qps_bars, ratio_chart, recall_chart,
};
use crate::results::PointResult;
use draw::LegendAt;
use std::path::Path;

/// Which plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlotKind {
    /// QPS (log) against recall: each series' Pareto frontier (--raw: every point too).
    QpsRecall,
    /// Index build seconds (log) against recall: the cheapest build reaching each recall.
    BuildTimeRecall,
    /// Index size (log) against recall: the smallest index reaching each recall.
    IndexSizeRecall,
    /// QPS against concurrent clients, at fixed parameters (or the best at --recall).
    QpsClients,
    /// QPS of --me relative to --base against recall, per matched point.
    RelativeQps,
    /// A metric (--metric) over a series of labelled runs (`annbench history`), one line per
    /// recall threshold (--lines points: per point), change points marked, QPS interval as a
    /// band.
    History,
    /// QPS (log) against the share of the index in memory, cold and warm (run --memory).
    QpsMemory,
    /// Storage reads per query against the share of the index in memory (run --memory).
    ReadsMemory,
}

/// What to draw and how big.
#[derive(Debug, Clone)]
pub struct PlotOptions {
    pub kind: PlotKind,
    /// qps-recall: also draw the points off the frontier.
    pub raw: bool,
    /// qps-clients: best QPS at recall >= this instead of fixed parameters.
    pub recall: Option<f64>,
    /// relative-qps: the labels compared.
    pub base: Option<String>,
    pub me: Option<String>,
    pub title: Option<String>,
    /// Pixels.
    pub size: (u32, u32),
    /// history: the series, its metric and which lines.
    pub history: HistoryPlot,
}

/// What `plot history` draws.
#[derive(Debug, Clone, Default)]
pub struct HistoryPlot {
    pub options: crate::report::history::HistoryOptions,
    pub metric: crate::report::history::HistMetric,
    pub lines: crate::report::html::history::Lines,
}

/// Draw `options.kind` of `points` (one dataset and count) into `path` (`.png` or `.svg`).
pub fn plot(mut points: Vec<PointResult>, options: &PlotOptions, path: &Path) -> crate::Result<()> {
    prepare(&mut points)?;
    let report = ReportOptions::default();
    let ctx = Context::new(&points, &report);
    let (chart, what, legend) = chart(&ctx, options)?;
    let title = options
        .title
        .clone()
        .unwrap_or_else(|| format!("{what} ({}, k={})", points[0].dataset, points[0].count));
    draw::save(&chart, &title, legend, path, options.size)
}

fn chart(ctx: &Context<'_>, o: &PlotOptions) -> crate::Result<(Chart, String, LegendAt)> {
    let none =
        |what: &str, fix: &str| crate::Error::Results(format!("{what}: nothing to draw; {fix}"));
    let recall = |id: &str, y: Axis, higher, value: fn(&PointResult) -> Option<f64>| {
        recall_chart(ctx, id, y, higher, value, |_| None).0
    };
    Ok(match o.kind {
        PlotKind::QpsRecall => {
            // Bars: the figure's confidence interval (or the range of its passes).
            let (bars, _) = qps_bars(ctx);
            let (mut c, _) = recall_chart(
                ctx,
                "qps-recall",
                Axis::log("Queries per second (1/s)"),
                true,
                |p| Some(p.metrics.qps),
                bars,
            );
            if !o.raw {
                c.datasets.retain(|d| !d.faded);
            }
            (c, "QPS vs recall".into(), LegendAt::LowerLeft)
        }
        PlotKind::BuildTimeRecall => (
            recall(
                "build-time",
                Axis::log("Index build time (s)"),
                false,
                |p| Some(p.build_seconds),
            ),
            "Build time vs recall".into(),
            LegendAt::UpperLeft,
        ),
        PlotKind::IndexSizeRecall => (
            recall("index-size", Axis::log("Index size (MiB)"), false, |p| {
                p.index_size_bytes.map(crate::report::metrics::mebibytes)
            }),
            "Index size vs recall".into(),
            LegendAt::UpperLeft,
        ),
        PlotKind::QpsClients => {
            let (c, _) = clients_chart(ctx, o.recall).ok_or_else(|| match o.recall {
                None => none(
                    "qps-clients",
                    "no parameter set was measured at two or more client counts; run with \
                     --clients 1,2,4,8 or pass --recall to plot the best QPS at a recall",
                ),
                Some(r) => none(
                    "qps-clients",
                    &format!("no point reaches recall >= {r}; pass a lower --recall"),
                ),
            })?;
            let what = match o.recall {
                Some(r) => format!("Throughput vs clients at recall >= {r}"),
                None => "Throughput vs clients".into(),
            };
            (c, what, LegendAt::UpperLeft)
        }
        PlotKind::History => {
            let h = crate::report::history::history(ctx.points, &o.history.options)?;
            let metric = o.history.metric;
            let (c, lines) =
                crate::report::html::history::history_chart(&h, metric, o.history.lines, "history");
            if lines == 0 {
                return Err(none(
                    "history",
                    "no line of that kind; pass --lines points or --lines all",
                ));
            }
            (
                c,
                format!("{} over {} runs", metric.title(), h.elements.len()),
                LegendAt::UpperRight,
            )
        }
        PlotKind::QpsMemory | PlotKind::ReadsMemory => {
            let (id, y, figure, what): (_, _, crate::report::memory::Figure, _) =
                if o.kind == PlotKind::QpsMemory {
                    let y = Axis::log("Queries per second (1/s)");
                    ("qps-memory", y, crate::report::memory::qps, "QPS vs memory")
                } else {
                    let y = Axis::linear("Storage reads per query");
                    (
                        "reads-memory",
                        y,
                        crate::report::memory::reads,
                        "Reads vs memory",
                    )
                };
            let c = crate::report::memory::memory_chart(ctx.points, id, y, figure).ok_or_else(
                || {
                    none(
                        id,
                        "no point was measured with run --memory (or none has the figure)",
                    )
                },
            )?;
            (c, what.into(), LegendAt::UpperLeft)
        }
        PlotKind::RelativeQps => {
            let (Some(base), Some(me)) = (&o.base, &o.me) else {
                return Err(crate::Error::Config(
                    "relative-qps needs --base LABEL and --me LABEL".into(),
                ));
            };
            let cmp =
                crate::report::compare(ctx.points, base, me, &crate::report::DEFAULT_THRESHOLDS)?;
            let c = ratio_chart("relative-qps", &cmp, &mut Vec::new());
            if c.datasets.is_empty() {
                return Err(none(
                    "relative-qps",
                    &format!("no point of {me} matches one of {base} with a ratio"),
                ));
            }
            (
                c,
                format!("Relative QPS, {me} / {base}"),
                LegendAt::UpperLeft,
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    fn options(kind: PlotKind) -> PlotOptions {
        PlotOptions {
            kind,
            raw: true,
            recall: None,
            base: None,
            me: None,
            title: None,
            size: (640, 420),
            history: HistoryPlot::default(),
        }
    }

    #[test]
    fn png_and_svg_of_each_recall_plot() {
        let dir = tempfile::tempdir().unwrap();
        let pts: Vec<PointResult> = [(0.9, 3000.0), (0.95, 2000.0), (0.99, 900.0), (0.93, 1000.0)]
            .iter()
            .enumerate()
            .map(|(i, &(r, q))| point("mariadb", &[("M", 8)], &[("ef_search", i as i64)], r, q))
            .collect();
        for kind in [
            PlotKind::QpsRecall,
            PlotKind::BuildTimeRecall,
            PlotKind::IndexSizeRecall,
        ] {
            for ext in ["png", "svg"] {
                let path = dir.path().join(format!("{kind:?}.{ext}"));
                plot(pts.clone(), &options(kind), &path).unwrap();
                let bytes = std::fs::read(&path).unwrap();
                if ext == "png" {
                    assert_eq!(&bytes[1..4], b"PNG");
                } else {
                    let svg = String::from_utf8(bytes).unwrap();
                    assert!(svg.contains("<svg") && svg.contains("Recall"), "{kind:?}");
                    assert!(svg.contains("test-10-euclidean, k=10"), "{kind:?}");
                }
            }
        }
        // The frontier's 3 points and the dominated one, drawn as circles.
        let svg = std::fs::read_to_string(dir.path().join("QpsRecall.svg")).unwrap();
        assert_eq!(
            svg.matches("<circle").count(),
            4 + 1,
            "4 points + 1 legend mark"
        );
    }

    #[test]
    fn clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let pts = vec![point("mariadb", &[], &[], 0.9, 10.0)];
        let err = |kind, path: &str| {
            plot(pts.clone(), &options(kind), &dir.path().join(path))
                .unwrap_err()
                .to_string()
        };
        assert!(err(PlotKind::QpsRecall, "x.jpg").contains("use a .png or .svg"));
        assert!(err(PlotKind::QpsClients, "x.png").contains("--clients 1,2,4,8"));
        assert!(err(PlotKind::RelativeQps, "x.png").contains("--base LABEL and --me LABEL"));
    }
}
