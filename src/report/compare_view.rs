//! Rendering of a [`Comparison`]: one flat table of matched pairs for CSV and JSON, and for
//! Markdown a table per match kind plus the summary statistics.

use super::compare::{Comparison, MatchKind, Matched};
use super::names::algorithm_name;
use super::render::{
    Cell, Column, Format, Style, Table, json_pretty, to_csv, to_json_records, to_markdown,
};
use super::stats::Summary;

impl Comparison {
    /// Matched pairs of `kind` (or all, with `None`) as a [`Table`] with columns `match,
    /// algorithm, clients, recall_threshold, base_name, me_name, base_recall, me_recall,
    /// base_qps, me_qps, ratio` (ratio = me_qps / base_qps).
    pub fn pairs_table(&self, kind: Option<MatchKind>) -> Table {
        let params_only = kind == Some(MatchKind::Params);
        let (b, m) = (&self.base, &self.me);
        let mut columns = vec![
            Column::new("match", "match", Style::Plain),
            Column::new("algorithm", "algorithm", Style::Plain),
            Column::new("clients", "clients", Style::Plain),
            Column::new("recall_threshold", "recall >=", Style::Plain),
            Column::new("base_name", &format!("{b} parameters"), Style::Plain),
            Column::new("me_name", &format!("{m} parameters"), Style::Plain),
            Column::new("base_recall", &format!("{b} recall"), Style::Recall),
            Column::new("me_recall", &format!("{m} recall"), Style::Recall),
            Column::new("base_qps", &format!("{b} QPS"), Style::Fixed(1)),
            Column::new("me_qps", &format!("{m} QPS"), Style::Fixed(1)),
            Column::new("ratio", &format!("{m} / {b}"), Style::Ratio),
        ];
        if kind.is_some() {
            columns[0].in_markdown = false;
        }
        if params_only {
            columns[3].in_markdown = false;
            columns[4].title = "parameters".into();
            columns[5].in_markdown = false;
        }
        let rows = self
            .rows
            .iter()
            .filter(|r| kind.is_none_or(|k| r.kind == k))
            .map(cells)
            .collect();
        Table { columns, rows }
    }

    /// The summary statistics, one row per match kind with at least one ratio.
    pub fn summary_table(&self) -> Table {
        let columns = ["match", "n", "min", "max", "mean", "median", "stddev"]
            .iter()
            .map(|n| {
                // A spread of ratios is not itself a ratio: no `x`.
                let style = match *n {
                    "match" | "n" => Style::Plain,
                    "stddev" => Style::Fixed(3),
                    _ => Style::Ratio,
                };
                Column::new(n, n, style)
            })
            .collect();
        let rows = [
            (MatchKind::Params, &self.params_summary),
            (MatchKind::Recall, &self.recall_summary),
        ]
        .into_iter()
        .filter_map(|(k, s)| s.as_ref().map(|s| summary_cells(k, s)))
        .collect();
        Table { columns, rows }
    }

    /// The comparison in `format`: Markdown with headed sections; CSV as the flat pairs table
    /// (the statistics follow from it); JSON as `{base, me, pairs: [...], summary: [...]}`.
    pub fn render(&self, format: Format) -> crate::Result<String> {
        match format {
            Format::Markdown => Ok(self.markdown()),
            Format::Csv => to_csv(&self.pairs_table(None)),
            Format::Json => json_pretty(&serde_json::json!({
                "base": self.base,
                "me": self.me,
                "pairs": to_json_records(&self.pairs_table(None)),
                "summary": to_json_records(&self.summary_table()),
            })),
        }
    }

    fn markdown(&self) -> String {
        let (b, m) = (&self.base, &self.me);
        let mut out = format!("# QPS of {m} relative to {b} ({m} / {b})\n");
        for (kind, title) in [
            (MatchKind::Params, "At matched parameters"),
            (
                MatchKind::Recall,
                "At matched recall targets (best QPS of each)",
            ),
        ] {
            out.push_str(&format!("\n## {title}\n\n"));
            let t = self.pairs_table(Some(kind));
            if t.rows.is_empty() {
                out.push_str("No matching points.\n");
            } else {
                out.push_str(&to_markdown(&t));
            }
        }
        out.push_str("\n## Summary of the ratios\n\n");
        let s = self.summary_table();
        if s.rows.is_empty() {
            out.push_str("No ratios to summarise.\n");
        } else {
            out.push_str(&to_markdown(&s));
        }
        out
    }
}

fn cells(r: &Matched) -> Vec<Cell> {
    let name = |n: &Option<String>| match n {
        Some(n) => Cell::Text(n.clone()),
        None => Cell::Missing("not reached".into()),
    };
    vec![
        Cell::Text(r.kind.as_str().into()),
        Cell::Text(algorithm_name(&r.algorithm)),
        Cell::Int(r.clients as i64),
        Cell::from(r.threshold),
        name(&r.base_name),
        name(&r.me_name),
        Cell::from(r.base_recall),
        Cell::from(r.me_recall),
        Cell::from(r.base_qps),
        Cell::from(r.me_qps),
        Cell::from(r.ratio),
    ]
}

fn summary_cells(kind: MatchKind, s: &Summary) -> Vec<Cell> {
    vec![
        Cell::Text(kind.as_str().into()),
        Cell::Int(s.n as i64),
        Cell::Float(s.min),
        Cell::Float(s.max),
        Cell::Float(s.mean),
        Cell::Float(s.median),
        Cell::from(s.stddev),
    ]
}
