//! The index-build view: build time and index size against the recall each build reached
//! (per series, the cheapest build at each recall as a line), and the build table.

use super::chart::Axis;
use super::qps::{dropped_note, recall_chart};
use super::{Context, Section, Tips, chart_box, table};
use crate::report::build_table::{build_rows_table, build_table};

pub fn view(ctx: &Context<'_>, _tips: &mut Tips) -> crate::Result<Option<Section>> {
    let (time, time_dropped) = recall_chart(
        ctx,
        "build-time",
        Axis::log("Index build seconds (log scale)"),
        false,
        |p| Some(p.build_seconds),
        |_| None,
    );
    let (size, size_dropped) = recall_chart(
        ctx,
        "index-size",
        Axis::log("Index size (MiB, log scale)"),
        false,
        |p| p.index_size_bytes.map(crate::report::metrics::mebibytes),
        |_| None,
    );
    let mut html = String::from(
        "<p>Every query point at the build time or index size of the index it ran on. The \
         step line of a series is the least cost that reached at least each recall (the \
         points no other point of the series beats on both recall and cost). Build time is \
         the index build statement alone, without the table load; index size is what the \
         server reports.</p>\n<div class=\"pair\">\n",
    );
    html.push_str(&chart_box(
        "build-time",
        "Index build time (log scale) against recall",
    ));
    html.push_str(&chart_box(
        "index-size",
        "Index size (log scale) against recall",
    ));
    html.push_str("</div>\n");
    html.push_str(&dropped_note(time_dropped, "without a positive build time"));
    html.push_str(&dropped_note(size_dropped, "without a known index size"));
    html.push_str("<h3>Index builds</h3>\n");
    html.push_str(&table::to_html(
        &build_rows_table(&build_table(ctx.points), ctx.distinct),
        "builds",
    ));
    Ok(Some(Section {
        id: "builds".into(),
        title: "Index builds".into(),
        html,
        charts: vec![time, size],
    }))
}
