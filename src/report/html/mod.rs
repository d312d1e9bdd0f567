//! The HTML report: one self-contained file with interactive charts (Chart.js, embedded), the
//! best-QPS-at-recall, build and clients tables, comparisons between labelled runs and the
//! run metadata. It loads nothing from the network (its Content-Security-Policy forbids it),
//! so it opens offline and as a CI artifact.
//!
//! The page is a list of views ([`VIEWS`]): each looks at the points and returns a section
//! (HTML and chart specs) or nothing when it does not apply. A new view (filtered search,
//! server cost) is one module and one line in [`VIEWS`]. Tables come from the report module's
//! [`Table`](crate::report::Table)s, so columns added there show up here unchanged.

mod builds;
mod chart;
mod clients;
mod compare;
mod escape;
mod frontier;
pub mod history;
mod meta;
mod page;
mod qps;
mod table;
mod timeline;
mod tips;

pub use chart::{Axis, Chart, Dataset, Point, colour};
pub use clients::clients_chart;
pub use compare::ratio_chart;
pub use frontier::frontier;
pub use qps::{qps_bars, recall_chart};

use crate::report::render::{Cell, Table};
use crate::report::series::{Distinct, SeriesKey, check_one_dataset, cmp_points};
use crate::results::PointResult;
use std::path::Path;

/// What the report shows besides the points themselves.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Recall thresholds of the best-QPS-at-recall table, highest first.
    pub thresholds: Vec<f64>,
    /// The label the other labels are compared with; by default the label measured first.
    pub base_label: Option<String>,
    /// Page title; by default `annbench: <dataset> (k=<count>)`.
    pub title: Option<String>,
    /// The command that made the report, shown in its footer.
    pub command: Option<String>,
    /// The dataset's streaming runs (`annbench stream`), shown as a timeline.
    pub streams: Vec<crate::results::stream::StreamRun>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            thresholds: crate::report::DEFAULT_THRESHOLDS.to_vec(),
            base_label: None,
            title: None,
            command: None,
            streams: Vec::new(),
        }
    }
}

/// One part of the page.
#[derive(Debug, Default)]
pub struct Section {
    /// Anchor id, also the prefix of its charts' ids.
    pub id: String,
    pub title: String,
    /// The section body (charts are `<canvas>` placeholders, see [`chart_box`]).
    pub html: String,
    pub charts: Vec<Chart>,
}

/// What every view gets: the points in report order and the options.
pub struct Context<'a> {
    pub points: &'a [PointResult],
    pub options: &'a ReportOptions,
    pub distinct: Distinct,
    /// Series (algorithm, label, clients) in report order; a series' colour is its position.
    pub series: Vec<SeriesKey>,
    /// The export table of the points (row i is point i): every figure by column name,
    /// including columns added to the export after this module was written.
    pub export: Table,
}

/// Tooltip texts shared by all charts: a chart point refers to one by index. The first
/// `points.len()` are the points' own.
pub type Tips = Vec<Vec<String>>;

/// A view: a section of the page, or `None` when the results have nothing for it.
pub type View = fn(&Context<'_>, &mut Tips) -> crate::Result<Option<Section>>;

/// The views, in page order.
pub const VIEWS: &[View] = &[
    qps::view,
    builds::view,
    clients::view,
    compare::view,
    history::view,
    timeline::view,
    meta::view,
];

impl<'a> Context<'a> {
    /// The context of `points`, which [`prepare`] has checked and sorted.
    pub fn new(points: &'a [PointResult], options: &'a ReportOptions) -> Self {
        Context {
            points,
            options,
            distinct: Distinct::of(points),
            series: crate::report::series::series_keys(points),
            export: crate::report::export_table(points),
        }
    }

    /// The number in column `name` of point `i`'s export row, if the column exists and the
    /// cell holds a number.
    pub fn number(&self, i: usize, name: &str) -> Option<f64> {
        let col = self.export.columns.iter().position(|c| c.name == name)?;
        match self.export.rows.get(i)?.get(col)? {
            Cell::Float(x) => Some(*x),
            Cell::Int(n) => Some(*n as f64),
            _ => None,
        }
    }

    /// Whether the export has column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.export.columns.iter().any(|c| c.name == name)
    }
}

/// Check that `points` are some points of one dataset and count, and put them in report
/// order (the order chart points and tooltips refer to).
pub fn prepare(points: &mut [PointResult]) -> crate::Result<()> {
    if points.is_empty() {
        return Err(crate::Error::Results("no points to report".into()));
    }
    check_one_dataset(points.iter(), "report")?;
    points.sort_by(cmp_points);
    Ok(())
}

/// The report of `points` (one dataset and count) as one HTML document.
pub fn html_report(mut points: Vec<PointResult>, options: &ReportOptions) -> crate::Result<String> {
    // A dataset with streaming runs alone gets their view alone.
    let streams_only = points.is_empty() && !options.streams.is_empty();
    if !streams_only {
        prepare(&mut points)?;
    }
    let ctx = Context::new(&points, options);
    let mut tips: Tips = tips::point_tips(&points, &ctx.export);
    let mut sections = Vec::new();
    let views: &[View] = if streams_only {
        &[timeline::view]
    } else {
        VIEWS
    };
    for view in views {
        if let Some(section) = view(&ctx, &mut tips)? {
            sections.push(section);
        }
    }
    page::render(&ctx, &sections, &tips)
}

/// Write `html` to `path` atomically ([`crate::fsutil::write_atomic`]), so a reader never
/// sees half a report and a failed write leaves the old one.
pub fn write_report(path: &Path, html: &str) -> crate::Result<()> {
    crate::fsutil::check_report_output(path, "the report")?;
    crate::fsutil::write_atomic(path, html.as_bytes(), "the report")
}

/// The placeholder of a chart in a section's HTML.
pub fn chart_box(id: &str, caption: &str) -> String {
    format!(
        "<figure class=\"chart\"><div class=\"canvas\"><canvas id=\"chart-{id}\"></canvas></div>\
         <figcaption>{}</figcaption></figure>\n",
        escape::text(caption)
    )
}

/// The display name of a series in legends: the algorithm, then the label and client count
/// when those vary.
pub fn series_name(key: &SeriesKey, distinct: Distinct) -> String {
    let mut name = crate::report::names::algorithm_name(&key.algorithm);
    if distinct.labels {
        name.push_str(&format!(
            " [{}]",
            key.label.as_deref().unwrap_or("no label")
        ));
    }
    if distinct.clients {
        name.push_str(&format!(" x{} clients", key.clients));
    }
    if let Some(s) = &key.selectivity {
        name.push_str(&format!(" @ selectivity {s}"));
    }
    if let Some(k) = key
        .filter
        .filter(|k| *k != crate::dataset::filters::FilterKind::Range)
    {
        name.push_str(&format!(" ({k} filter)"));
    }
    name
}
