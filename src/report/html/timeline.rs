//! The streaming view: for each streaming run of the dataset (`annbench stream`), recall and
//! QPS at each search step and the rows/s each write step reached, over the runbook's steps,
//! and the per-step table.

use super::chart::{Axis, Chart, Dataset, Point};
use super::{Context, Section, Tips, chart_box, table};
use crate::params::describe;
use crate::report::stream::{score_lines, summary_table};

pub fn view(ctx: &Context<'_>, tips: &mut Tips) -> crate::Result<Option<Section>> {
    let runs = &ctx.options.streams;
    if runs.is_empty() {
        return Ok(None);
    }
    let mut recall = Vec::new();
    let mut qps = Vec::new();
    let mut rate = Vec::new();
    let mut group = 0usize;
    for run in runs {
        let base = format!(
            "{}({}){}",
            run.identity.algorithm,
            describe(&run.identity.build_args),
            run.identity
                .label
                .as_deref()
                .map(|l| format!(" [{l}]"))
                .unwrap_or_default()
        );
        for (i, q) in run.identity.query_args.iter().enumerate() {
            let name = format!("{base} {}", describe(q));
            let mut r = Vec::new();
            let mut s = Vec::new();
            for step in &run.steps {
                if let Some(f) = step.searches.get(i) {
                    let tip = tips.len() as i64;
                    tips.push(vec![
                        name.clone(),
                        format!("step {}: {} live rows", step.step, step.live_rows),
                        format!("recall {:.4}, {} not live", f.recall, f.not_live),
                        format!("{:.1} QPS [{:.1}, {:.1}]", f.qps, f.qps_low, f.qps_high),
                    ]);
                    r.push(Point::new(f64::from(step.step), f.recall, tip));
                    let mut p = Point::new(f64::from(step.step), f.qps, tip);
                    p.bar = Some((f.qps_low, f.qps_high));
                    s.push(p);
                }
            }
            recall.push(Dataset::new(&name, group, true, r));
            qps.push(Dataset::new(&name, group, true, s));
            group += 1;
        }
        let w: Vec<Point> = run
            .steps
            .iter()
            .filter_map(|step| {
                step.write
                    .as_ref()
                    .map(|w| Point::new(f64::from(step.step), w.achieved_rate, -1))
            })
            .collect();
        rate.push(Dataset::new(&base, group.saturating_sub(1), false, w));
    }
    let x = || Axis::linear("Runbook step");
    let charts = vec![
        Chart {
            id: "stream-recall".into(),
            x: x(),
            y: Axis::linear("Recall (live rows)"),
            datasets: recall,
        },
        Chart {
            id: "stream-qps".into(),
            x: x(),
            y: Axis::linear("Queries per second"),
            datasets: qps,
        },
        Chart {
            id: "stream-rate".into(),
            x: x(),
            y: Axis::linear("Rows per second written"),
            datasets: rate,
        },
    ];
    let mut html = String::from(
        "<p>Streaming runs (<code>annbench stream</code>): recall at each search step against \
         exact truth over the rows live at that step, QPS with its interval, and the rows per \
         second each insert, delete or replace step reached. docs/streaming.md says what each \
         figure includes.</p>\n",
    );
    html.push_str(&chart_box("stream-recall", "Recall at each search step"));
    html.push_str(&chart_box("stream-qps", "QPS at each search step"));
    html.push_str(&chart_box("stream-rate", "Write rate at each write step"));
    html.push_str("<ul>\n");
    for line in score_lines(runs) {
        html.push_str(&format!("<li>{}</li>\n", super::escape::text(&line)));
    }
    html.push_str("</ul>\n<h3>Steps</h3>\n");
    html.push_str(&table::to_html(&summary_table(runs), "stream-steps"));
    Ok(Some(Section {
        id: "streams".into(),
        title: "Data that changes".into(),
        html,
        charts,
    }))
}
