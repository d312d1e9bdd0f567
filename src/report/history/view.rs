//! A [`History`] as text (Otava's layout: one row per element, a marker line at each change),
//! Markdown, CSV (one row per line and element) or JSON (elements, lines, change points with
//! Otava's fields).

use super::{Change, HistMetric, History, Line, LineKey, Values};
use crate::report::render::{Cell, Column, Style, Table, round6, to_csv, to_markdown};
use serde_json::{Value, json};

/// Output format of `annbench history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryFormat {
    #[default]
    Text,
    Markdown,
    Csv,
    Json,
}

impl std::str::FromStr for HistoryFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(HistoryFormat::Text),
            "markdown" | "md" => Ok(HistoryFormat::Markdown),
            "csv" => Ok(HistoryFormat::Csv),
            "json" => Ok(HistoryFormat::Json),
            other => Err(format!(
                "unknown format '{other}': expected text, markdown, csv or json"
            )),
        }
    }
}

impl History {
    pub fn render(&self, format: HistoryFormat) -> crate::Result<String> {
        match format {
            HistoryFormat::Text => Ok(self.text()),
            HistoryFormat::Markdown => Ok(self.markdown()),
            HistoryFormat::Csv => to_csv(&self.long_table()),
            HistoryFormat::Json => crate::report::render::json_pretty(&self.json()),
        }
    }

    fn ratio(&self, line: &Line, i: usize, m: HistMetric) -> Option<f64> {
        let all = line.metric(m);
        let (v, b) = (all[i]?, all[self.base]?);
        (b != 0.0).then(|| v / b)
    }

    /// The text report: the options, then per line a table in Otava's layout, then the change
    /// points and what the newest element lies in.
    fn text(&self) -> String {
        let o = &self.options.change;
        let mut out = format!(
            "history of {} (k={}): {} runs, ratios against '{}'; change points by E-divisive \
             means and a t-test (window {}, p-value below {}, change above {:.1}%)\n",
            self.dataset,
            self.count,
            self.elements.len(),
            self.elements[self.base].label,
            o.window,
            pvalue_text(o.max_pvalue),
            o.min_magnitude * 100.0
        );
        for line in &self.lines {
            out.push('\n');
            out.push_str(&line.name);
            out.push('\n');
            out.push_str(&self.line_text(line));
        }
        out.push('\n');
        out.push_str(&self.summary_text());
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }

    fn line_text(&self, line: &Line) -> String {
        let headers = [
            "time",
            "label",
            "qps",
            "95% CI",
            "ratio",
            "recall",
            "cpu_ms/q",
            "switches/q",
        ];
        let metric_col = |m: HistMetric| match m {
            HistMetric::Qps => 2,
            HistMetric::Recall => 5,
            HistMetric::CpuPerQuery => 6,
            HistMetric::SwitchesPerQuery => 7,
        };
        let rows: Vec<Vec<String>> = self
            .elements
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let time = e.time.as_deref().map_or("-".into(), short_time);
                let mut row = vec![time, e.label.clone()];
                match &line.values[i] {
                    None => row.extend(["-"; 6].map(String::from)),
                    Some(v) => row.extend(value_cells(v, self.ratio(line, i, HistMetric::Qps))),
                }
                row
            })
            .collect();
        let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let fmt_row = |cells: &[String]| -> String {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(j, (c, w))| {
                    if j < 2 {
                        format!("{c:<w$}")
                    } else {
                        format!("{c:>w$}")
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = fmt_row(&headers.map(String::from));
        out.push_str(&fmt_row(
            &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
        ));
        for (i, r) in rows.iter().enumerate() {
            let here: Vec<&Change> = line.changes.iter().filter(|c| c.index == i).collect();
            if !here.is_empty() {
                let mut dots = vec![String::new(); widths.len()];
                let mut info = vec![String::new(); widths.len()];
                for c in here {
                    let col = metric_col(c.metric);
                    dots[col] = "·".repeat(widths[col]);
                    info[col] = format!("{:+.1}%", c.forward_change_percent);
                }
                out.push_str(&fmt_row(&dots));
                out.push_str(&fmt_row(&info));
                out.push_str(&fmt_row(&dots));
            }
            out.push_str(&fmt_row(r));
        }
        out
    }

    fn summary_text(&self) -> String {
        let changes: Vec<(&Line, &Change)> = self.changes().collect();
        let mut out = if changes.is_empty() {
            "no change points\n".to_string()
        } else {
            format!("{} change point(s):\n", changes.len())
        };
        for (line, c) in &changes {
            out.push_str(&format!(
                "  {} at run {} ('{}'): {} {:+.1}% ({} -> {}{}), p = {}  [{}]\n",
                if c.regression {
                    "regression"
                } else {
                    "improvement"
                },
                c.index + 1,
                c.label,
                c.metric.name(),
                c.forward_change_percent,
                round6(c.metric.shown(c.mean_before)),
                round6(c.metric.shown(c.mean_after)),
                c.metric.shown_unit(),
                pvalue_text(c.pvalue),
                line.name
            ));
        }
        let now = self.current_regressions();
        let gate = self.gate();
        let newest = &self.elements[self.elements.len() - 1].label;
        if now.is_empty() {
            out.push_str(&format!(
                "the newest run ('{newest}') lies after no regression\n"
            ));
        } else {
            out.push_str(&format!(
                "the newest run ('{newest}') lies after {} regression(s); {} with p below {} \
                 ({} / {} series searched), which --fail-on regression fails on\n",
                now.len(),
                gate.len(),
                pvalue_text(self.gate_pvalue()),
                self.options.change.max_pvalue,
                self.tested_series()
            ));
        }
        out
    }

    fn markdown(&self) -> String {
        let mut out = format!(
            "## History of {} (k={})\n\n{} runs; ratios against '{}'.\n\n",
            self.dataset,
            self.count,
            self.elements.len(),
            self.elements[self.base].label
        );
        out.push_str("### Change points\n\n");
        out.push_str(&to_markdown(&self.changes_table()));
        out.push_str("\n### Series\n\n");
        out.push_str(&to_markdown(&self.long_table()));
        for n in &self.notes {
            out.push_str(&format!("\n- {n}"));
        }
        out.push('\n');
        out
    }

    /// One row per change point.
    pub fn changes_table(&self) -> Table {
        let columns = vec![
            Column::new("line", "line", Style::Plain),
            Column::new("metric", "metric", Style::Plain),
            Column::new("index", "index", Style::Plain).machine_only(),
            Column::new("run", "run", Style::Plain).markdown_only(),
            Column::new("label", "label", Style::Plain),
            Column::new("time", "time", Style::Plain),
            Column::new("kind", "kind", Style::Plain),
            Column::new("unit", "unit", Style::Plain),
            Column::new("forward_change_percent", "change %", Style::Fixed(1)),
            Column::new("magnitude", "magnitude", Style::Fixed(4)),
            Column::new("mean_before", "mean before", Style::Plain),
            Column::new("stddev_before", "sd before", Style::Plain),
            Column::new("mean_after", "mean after", Style::Plain),
            Column::new("stddev_after", "sd after", Style::Plain),
            Column::new("pvalue", "p-value", Style::Plain).machine_only(),
            Column::new("pvalue_text", "p-value", Style::Plain).markdown_only(),
        ];
        let rows = self
            .changes()
            .map(|(line, c)| {
                vec![
                    Cell::Text(line.name.clone()),
                    Cell::Text(c.metric.name().into()),
                    Cell::Int(c.index as i64),
                    Cell::Int(c.index as i64 + 1),
                    Cell::Text(c.label.clone()),
                    c.time.as_deref().into(),
                    Cell::Text(kind(c).into()),
                    Cell::Text(c.metric.unit().into()),
                    Cell::Float(c.forward_change_percent),
                    Cell::Float(c.magnitude),
                    Cell::Float(c.mean_before),
                    Cell::Float(c.stddev_before),
                    Cell::Float(c.mean_after),
                    Cell::Float(c.stddev_after),
                    Cell::Float(c.pvalue),
                    Cell::Text(pvalue_text(c.pvalue)),
                ]
            })
            .collect();
        Table { columns, rows }
    }

    /// One row per line and element, with each metric's ratio to the base element and the
    /// change points that start there.
    pub fn long_table(&self) -> Table {
        let mut columns = vec![
            Column::new("line", "line", Style::Plain),
            Column::new("kind", "kind", Style::Plain).machine_only(),
            Column::new("algorithm", "algorithm", Style::Plain).machine_only(),
            Column::new("clients", "clients", Style::Plain).machine_only(),
            Column::new("threshold", "threshold", Style::Plain).machine_only(),
            Column::new("index", "index", Style::Plain).machine_only(),
            Column::new("run", "run", Style::Plain).markdown_only(),
            Column::new("label", "label", Style::Plain),
            Column::new("time", "time", Style::Plain),
            Column::new("server_version", "server", Style::Plain).machine_only(),
            Column::new("host", "host", Style::Plain).machine_only(),
            Column::new("point", "point", Style::Plain).machine_only(),
            Column::new("qps", "QPS", Style::Fixed(1)),
            Column::new("qps_ci_low", "QPS low", Style::Fixed(1)).machine_only(),
            Column::new("qps_ci_high", "QPS high", Style::Fixed(1)).machine_only(),
        ];
        for m in HistMetric::ALL {
            if m != HistMetric::Qps {
                let style = match m {
                    HistMetric::Recall => Style::Recall,
                    HistMetric::CpuPerQuery => Style::Millis,
                    _ => Style::Fixed(2),
                };
                let title = match m {
                    HistMetric::CpuPerQuery => "server CPU ms/q",
                    HistMetric::SwitchesPerQuery => "switches/q",
                    _ => m.name(),
                };
                columns.push(Column::new(m.name(), title, style));
            }
            columns.push(Column::new(
                &format!("{}_ratio", m.name()),
                &format!("{} ratio", m.name()),
                Style::Ratio,
            ));
        }
        columns.push(Column::new("changes", "change points", Style::Plain));
        let mut rows = Vec::new();
        for line in &self.lines {
            let (line_kind, algorithm, clients, threshold) = match &line.key {
                LineKey::Point {
                    algorithm, clients, ..
                } => ("point", algorithm, *clients, None),
                LineKey::Threshold {
                    algorithm,
                    clients,
                    threshold,
                } => ("threshold", algorithm, *clients, Some(*threshold)),
            };
            for (i, e) in self.elements.iter().enumerate() {
                let v = line.values[i].as_ref();
                let mut row = vec![
                    Cell::Text(line.name.clone()),
                    Cell::Text(line_kind.into()),
                    Cell::Text(algorithm.clone()),
                    Cell::Int(clients as i64),
                    threshold.into(),
                    Cell::Int(i as i64),
                    Cell::Int(i as i64 + 1),
                    Cell::Text(e.label.clone()),
                    e.time.as_deref().into(),
                    Cell::Text(e.server_version.clone()),
                    Cell::Text(e.hosts.join(" ")),
                    v.map(|v| v.point.as_str()).into(),
                    v.map(|v| v.qps).into(),
                    v.and_then(|v| v.qps_interval).map(|i| i.low).into(),
                    v.and_then(|v| v.qps_interval).map(|i| i.high).into(),
                ];
                for m in HistMetric::ALL {
                    if m != HistMetric::Qps {
                        row.push(v.and_then(|v| m.of(v)).into());
                    }
                    row.push(self.ratio(line, i, m).into());
                }
                let here: Vec<String> = line
                    .changes
                    .iter()
                    .filter(|c| c.index == i)
                    .map(|c| {
                        format!(
                            "{} {} {:+.1}% p={}",
                            c.metric.name(),
                            kind(c),
                            c.forward_change_percent,
                            pvalue_text(c.pvalue)
                        )
                    })
                    .collect();
                row.push(Cell::Text(here.join("; ")));
                rows.push(row);
            }
        }
        Table { columns, rows }
    }

    pub fn json(&self) -> Value {
        let o = &self.options.change;
        json!({
            "dataset": self.dataset,
            "count": self.count,
            "options": {
                "window": o.window,
                "max_pvalue": o.max_pvalue,
                "min_magnitude": o.min_magnitude,
                "base": self.elements[self.base].label,
            },
            "elements": self.elements.iter().enumerate().map(|(i, e)| json!({
                "index": i,
                "label": e.label,
                "time": e.time,
                "server_version": e.server_version,
                "hosts": e.hosts,
            })).collect::<Vec<_>>(),
            "lines": self.lines.iter().map(|l| self.line_json(l)).collect::<Vec<_>>(),
            "change_points": self.changes().map(|(l, c)| {
                let mut v = change_json(c);
                v["line"] = json!(l.name);
                v
            }).collect::<Vec<_>>(),
            "newest_after_regression": !self.current_regressions().is_empty(),
            "gate_pvalue": self.gate_pvalue(),
            "gate_fails": !self.gate().is_empty(),
            "notes": self.notes,
        })
    }

    fn line_json(&self, line: &Line) -> Value {
        let key = match &line.key {
            LineKey::Point {
                algorithm,
                params,
                clients,
            } => {
                json!({"kind": "point", "algorithm": algorithm, "point": params, "clients": clients})
            }
            LineKey::Threshold {
                algorithm,
                clients,
                threshold,
            } => {
                json!({"kind": "threshold", "algorithm": algorithm, "clients": clients, "threshold": threshold})
            }
        };
        let values: Vec<Value> = line
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                None => Value::Null,
                Some(v) => {
                    let mut o = json!({
                        "point": v.point,
                        "qps": v.qps,
                        "qps_ci_low": v.qps_interval.map(|x| x.low),
                        "qps_ci_high": v.qps_interval.map(|x| x.high),
                        "recall": v.recall,
                        "server_cpu_per_query": v.cpu_per_query,
                        "server_switches_per_query": v.switches_per_query,
                    });
                    for m in HistMetric::ALL {
                        o[format!("{}_ratio", m.name())] = json!(self.ratio(line, i, m));
                    }
                    o
                }
            })
            .collect();
        json!({
            "name": line.name,
            "key": key,
            "values": values,
            "change_points": line.changes.iter().map(change_json).collect::<Vec<_>>(),
        })
    }
}

/// Otava's change point fields, unrounded, with the direction.
fn change_json(c: &Change) -> Value {
    json!({
        "metric": c.metric.name(),
        "index": c.index,
        "label": c.label,
        "time": c.time,
        "forward_change_percent": c.forward_change_percent,
        "magnitude": c.magnitude,
        "mean_before": c.mean_before,
        "stddev_before": c.stddev_before,
        "mean_after": c.mean_after,
        "stddev_after": c.stddev_after,
        "pvalue": c.pvalue,
        "higher_is_better": c.metric.higher_is_better(),
        "kind": kind(c),
    })
}

fn kind(c: &Change) -> &'static str {
    if c.regression {
        "regression"
    } else {
        "improvement"
    }
}

/// A p-value as Otava prints it (6 decimals), or in exponent form below that.
fn pvalue_text(p: f64) -> String {
    if p >= 1e-6 || p == 0.0 {
        format!("{p:.6}")
    } else {
        format!("{p:.1e}")
    }
}

/// `2026-12-02T10:00:00Z` -> `2026-12-02 10:00:00`.
fn short_time(t: &str) -> String {
    t.replace('T', " ")
        .trim_end_matches('Z')
        .split('.')
        .next()
        .unwrap_or(t)
        .to_string()
}

/// QPS, its 95% interval, the QPS ratio, recall, CPU ms and switches per query.
fn value_cells(v: &Values, ratio: Option<f64>) -> [String; 6] {
    let interval = v
        .qps_interval
        .map_or("-".into(), |i| format!("[{:.1}, {:.1}]", i.low, i.high));
    [
        format!("{:.1}", v.qps),
        interval,
        ratio.map_or("-".into(), |r| format!("{r:.3}")),
        format!("{:.4}", crate::report::render::truncate4(v.recall)),
        v.cpu_per_query
            .map_or("-".into(), |c| format!("{:.3}", c * 1000.0)),
        v.switches_per_query
            .map_or("-".into(), |s| format!("{s:.2}")),
    ]
}
