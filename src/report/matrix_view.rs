//! Rendering of a [`Matrix`]: for CSV and JSON one record per cell (row x server, the tidy
//! form tools pivot); for Markdown and the plain-text blocks one table per match kind with a
//! column per server, as the published relative-QPS tables.

use super::compare::{MatchKind, Matched, Rule, Verdict};
use super::compare_view::{count_verdict, pairing_json, ratio_text};
use super::matrix::{Matrix, MatrixRow};
use super::names::algorithm_name;
use super::render::{
    Cell, Column, Format, Style, Table, json_pretty, to_csv, to_json_records, to_markdown,
};

/// Marks a cell whose verdict is beyond the noise threshold (faster or slower).
pub const SIGNIFICANT: &str = "*";

/// Marks a cell rated by the unpaired rule in a matrix where other cells are paired.
pub const UNPAIRED: &str = "(u)";

impl Matrix {
    /// One record per (row, server): `match, algorithm, clients, recall_threshold, base_name,
    /// base_<measure>, server, me_name, me_<measure>, ratio, ratio_ci_low, ratio_ci_high,
    /// verdict, significant, rule, rounds, paired_half_width, build_half_width, cpu_ratio,
    /// cpu_ratio_ci_low, cpu_ratio_ci_high, cpu_verdict, me_storage, read_ratio,
    /// read_ratio_ci_low, read_ratio_ci_high, read_verdict` (storage reads:
    /// docs/server-cost.md).
    pub fn cells_table(&self) -> Table {
        let q = self.options().measure.name();
        let plain = |n: &str| Column::new(n, n, Style::Plain);
        let ratio = |n: &str| Column::new(n, n, Style::Ratio);
        let columns = vec![
            plain("match"),
            plain("algorithm"),
            plain("clients"),
            plain("recall_threshold"),
            plain("base_name"),
            Column::new(&format!("base_{q}"), &format!("base_{q}"), Style::Fixed(1)),
            plain("server"),
            plain("me_name"),
            Column::new(&format!("me_{q}"), &format!("me_{q}"), Style::Fixed(1)),
            ratio("ratio"),
            ratio("ratio_ci_low"),
            ratio("ratio_ci_high"),
            plain("verdict"),
            plain("significant"),
            plain("rule"),
            plain("rounds"),
            plain("paired_half_width"),
            plain("build_half_width"),
            ratio("cpu_ratio"),
            ratio("cpu_ratio_ci_low"),
            ratio("cpu_ratio_ci_high"),
            plain("cpu_verdict"),
            plain("me_storage"),
            ratio("read_ratio"),
            ratio("read_ratio_ci_low"),
            ratio("read_ratio_ci_high"),
            plain("read_verdict"),
        ];
        let mut rows = Vec::new();
        for row in &self.rows {
            for (s, server) in self.servers.iter().enumerate() {
                let Some(m) = self.cell(row, s) else { continue };
                rows.push(self.record(row, server, m));
            }
        }
        Table { columns, rows }
    }

    fn record(&self, row: &MatrixRow, server: &str, m: &Matched) -> Vec<Cell> {
        let i = m.ratio_interval;
        let c = m.cpu.as_ref();
        let rd = m.reads.as_ref();
        let p = m.paired.as_ref();
        vec![
            Cell::Text(row.kind.as_str().into()),
            Cell::Text(row.algorithm.clone()),
            Cell::Int(row.clients as i64),
            Cell::from(row.threshold),
            Cell::from(row.base_name.as_deref()),
            Cell::from(row.base_value),
            Cell::Text(server.into()),
            Cell::from(m.me.as_ref().map(|s| s.name.as_str())),
            Cell::from(m.me.as_ref().map(|s| s.value)),
            Cell::from(m.ratio),
            Cell::from(i.map(|i| i.low)),
            Cell::from(i.map(|i| i.high)),
            Cell::from(m.verdict.map(|v| self.verdict_text(v)).as_deref()),
            m.verdict.map_or(Cell::Null, |v| Cell::Bool(significant(v))),
            Cell::from(m.ratio.map(|_| m.rule.as_str())),
            p.map_or(Cell::Null, |p| Cell::Int(p.rounds as i64)),
            Cell::from(p.map(|p| p.paired_half_width)),
            Cell::from(p.and_then(|p| p.build_half_width)),
            Cell::from(c.map(|c| c.ratio)),
            Cell::from(c.and_then(|c| c.ratio_interval).map(|i| i.low)),
            Cell::from(c.and_then(|c| c.ratio_interval).map(|i| i.high)),
            Cell::from(c.map(|c| cost_verdict(c.verdict))),
            Cell::from(m.me.as_ref().and_then(|s| s.storage).map(|s| s.as_str())),
            Cell::from(rd.map(|c| c.ratio)),
            Cell::from(rd.and_then(|c| c.ratio_interval).map(|i| i.low)),
            Cell::from(rd.and_then(|c| c.ratio_interval).map(|i| i.high)),
            Cell::from(rd.map(|c| count_verdict(c.verdict))),
        ]
    }

    /// The rows of `kind` with a column per server (Markdown): the base's point, its
    /// figure, then each server's ratio `1.04x [1.02, 1.06] *` and, when measured, its server
    /// CPU per query ratio.
    pub fn wide_table(&self, kind: MatchKind) -> Table {
        let (b, title) = (&self.base, self.options().measure.title());
        let any_cpu = self.any(|m| m.cpu.is_some());
        let mut columns = vec![Column::new("algorithm", "algorithm", Style::Plain)];
        if kind == MatchKind::Recall {
            columns.push(Column::new("recall_threshold", "recall >=", Style::Plain));
        }
        columns.extend([
            Column::new("base_name", &format!("{b} parameters"), Style::Plain),
            Column::new("clients", "clients", Style::Plain),
            Column::new("base_value", &format!("{b} {title}"), Style::Fixed(1)),
        ]);
        for s in &self.servers {
            columns.push(Column::new(s, &format!("{s} / {b}"), Style::Plain));
            if any_cpu {
                columns.push(Column::new(
                    &format!("{s}_cpu"),
                    &format!("{s} CPU/q"),
                    Style::Plain,
                ));
            }
        }
        let rows = self
            .rows
            .iter()
            .filter(|r| r.kind == kind)
            .map(|row| {
                let mut cells = vec![Cell::Text(row.algorithm.clone())];
                if kind == MatchKind::Recall {
                    cells.push(Cell::from(row.threshold));
                }
                cells.extend([
                    match &row.base_name {
                        Some(n) => Cell::Text(n.clone()),
                        None => Cell::Missing("not reached".into()),
                    },
                    Cell::Int(row.clients as i64),
                    Cell::from(row.base_value),
                ]);
                for s in 0..self.servers.len() {
                    let m = self.cell(row, s);
                    cells.push(Cell::Text(m.map_or("-".into(), |m| self.cell_text(m))));
                    if any_cpu {
                        let cpu = m.and_then(|m| m.cpu.as_ref());
                        cells.push(Cell::Text(cpu.map_or("-".into(), |c| {
                            let mark = if significant(c.verdict) { " *" } else { "" };
                            format!("{}{mark}", ratio_text(c.ratio, c.ratio_interval))
                        })));
                    }
                }
                cells
            })
            .collect();
        Table { columns, rows }
    }

    fn any(&self, f: impl Fn(&Matched) -> bool) -> bool {
        self.comparisons.iter().flat_map(|c| &c.rows).any(f)
    }

    /// `1.04x [1.02, 1.06] *`: the ratio, its interval, the marks.
    fn cell_text(&self, m: &Matched) -> String {
        let Some(x) = m.ratio else {
            return match m.me {
                None => "not reached".into(),
                Some(_) => "-".into(),
            };
        };
        let mut t = ratio_text(x, m.ratio_interval);
        match m.verdict {
            Some(Verdict::Disturbed) => t.push_str(" disturbed"),
            Some(v) if significant(v) => t.push_str(&format!(" {SIGNIFICANT}")),
            _ => {}
        }
        if m.rule == Rule::Unpaired && self.any(|m| m.rule == Rule::Paired) {
            t.push_str(&format!(" {UNPAIRED}"));
        }
        t
    }

    fn verdict_text(&self, v: Verdict) -> String {
        let (up, down) = self.options().measure.verdict_words();
        match v {
            Verdict::Above => up.into(),
            Verdict::Below => down.into(),
            Verdict::WithinNoise => "within noise".into(),
            Verdict::Disturbed => "disturbed".into(),
        }
    }

    /// The matrix in `format`: Markdown with a table per match kind, the settings that
    /// differ and the notes; CSV as [`Self::cells_table`]; JSON as `{base, servers, measure,
    /// noise, paired_noise, cells: [...], pairing: {server: {...}}, settings_differ: [...],
    /// notes: {server: [...]}}`.
    pub fn render(&self, format: Format) -> crate::Result<String> {
        match format {
            Format::Markdown => Ok(self.markdown()),
            Format::Csv => to_csv(&self.cells_table()),
            Format::Json => json_pretty(&self.to_json()),
        }
    }

    /// The JSON document of [`Self::render`].
    pub fn to_json(&self) -> serde_json::Value {
        let per_server = |f: &dyn Fn(&super::compare::Comparison) -> serde_json::Value| {
            self.comparisons
                .iter()
                .map(|c| (c.me.clone(), f(c)))
                .collect::<serde_json::Map<_, _>>()
        };
        let o = self.options();
        serde_json::json!({
            "base": self.base,
            "servers": self.servers,
            "measure": o.measure.name(),
            "noise": o.noise,
            "paired_noise": o.paired_noise,
            "cells": to_json_records(&self.cells_table()),
            "pairing": per_server(&|c| pairing_json(&c.pairing)),
            "settings_differ": super::settings::to_json(&self.settings, &self.labels()),
            "notes": per_server(&|c| serde_json::json!(c.notes)),
        })
    }

    fn markdown(&self) -> String {
        let b = &self.base;
        let o = self.options();
        let title = o.measure.title();
        let mut out = format!("# {title} of each server relative to {b} (server / {b})\n");
        out.push_str(&format!(
            "\nEach cell: the ratio with its 95% interval; {SIGNIFICANT} when the whole interval \
             lies beyond +-{:.0}% for paired cells (--paired-noise) or +-{:.0}% for unpaired \
             ones (--noise){}.\n",
            o.paired_noise * 100.0,
            o.noise * 100.0,
            if self.any(|m| m.rule == Rule::Paired)
                && self.any(|m| m.rule == Rule::Unpaired && m.ratio.is_some())
            {
                format!("; {UNPAIRED}: rated unpaired (the servers did not share the rounds)")
            } else {
                String::new()
            }
        ));
        for (kind, heading) in [
            (MatchKind::Params, "At matched parameters"),
            (MatchKind::Recall, "Best QPS at matched recall targets"),
        ] {
            out.push_str(&format!("\n## {heading}\n\n"));
            let t = self.wide_table(kind);
            if t.rows.is_empty() {
                out.push_str("No matching points.\n");
            } else {
                out.push_str(&to_markdown(&t));
            }
        }
        if !self.settings.is_empty() {
            out.push_str("\n## Settings that differ\n\n");
            out.push_str(&to_markdown(&super::settings::settings_table(
                &self.settings,
                &self.labels(),
            )));
        }
        out.push_str("\n## Notes\n");
        for c in &self.comparisons {
            out.push_str(&format!("\n{} against {b}:\n\n", c.me));
            for n in &c.notes {
                out.push_str(&format!("- {n}\n"));
            }
        }
        out
    }

    /// The plain-text blocks of the published tables: one block for the matched
    /// parameters, one per recall threshold; the base's figure, then each server's ratio
    /// (`*` significant, `(u)` unpaired), then the point.
    pub fn blocks_text(&self) -> String {
        let b = &self.base;
        let title = self.options().measure.title();
        let mut out = String::new();
        let mut block = |heading: String, rows: Vec<&MatrixRow>| {
            if rows.is_empty() {
                return;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&heading);
            out.push('\n');
            let mut head = vec![format!("{b} {title}")];
            head.extend(self.servers.iter().map(|s| format!("{s}/{b}")));
            head.push("algorithm".into());
            let mut lines = vec![head];
            for row in rows {
                let mut l = vec![row.base_value.map_or("-".into(), |v| format!("{v:.0}"))];
                for s in 0..self.servers.len() {
                    l.push(self.cell(row, s).map_or("-".into(), |m| self.block_cell(m)));
                }
                let who = match &row.base_name {
                    Some(n) => n.clone(),
                    None => format!("{}: not reached", algorithm_name(&row.algorithm)),
                };
                let clients = if row.clients == 1 {
                    String::new()
                } else {
                    format!(" x{} clients", row.clients)
                };
                l.push(format!("{who}{clients}"));
                lines.push(l);
            }
            out.push_str(&aligned(&lines));
        };
        block(
            format!("{title} relative to {b} at matched parameters"),
            self.rows
                .iter()
                .filter(|r| r.kind == MatchKind::Params)
                .collect(),
        );
        for t in &self.options().thresholds {
            block(
                format!("Best {title} with recall >= {t}, relative to {b}"),
                self.rows
                    .iter()
                    .filter(|r| r.kind == MatchKind::Recall && r.threshold == Some(*t))
                    .collect(),
            );
        }
        out
    }

    /// `1.04*` / `0.99` / `1.10(u)`: the ratio to 2 decimals and the marks.
    fn block_cell(&self, m: &Matched) -> String {
        let Some(x) = m.ratio else {
            return "-".into();
        };
        let mut t = format!("{x:.2}");
        if m.verdict.is_some_and(significant) {
            t.push_str(SIGNIFICANT);
        }
        if m.verdict == Some(Verdict::Disturbed) {
            t.push('?');
        }
        if m.rule == Rule::Unpaired && self.any(|m| m.rule == Rule::Paired) {
            t.push_str(UNPAIRED);
        }
        t
    }
}

fn significant(v: Verdict) -> bool {
    matches!(v, Verdict::Above | Verdict::Below)
}

fn cost_verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Above => "costlier",
        Verdict::Below => "cheaper",
        Verdict::WithinNoise => "within noise",
        Verdict::Disturbed => "disturbed",
    }
}

/// Columns padded to their widest cell, two spaces apart; the last is not padded.
fn aligned(lines: &[Vec<String>]) -> String {
    let n = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n.saturating_sub(1))
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        for (i, cell) in l.iter().enumerate() {
            match widths.get(i) {
                Some(w) if i + 1 < l.len() => out.push_str(&format!("{cell:<w$}  ")),
                _ => out.push_str(cell),
            }
        }
        out.push('\n');
    }
    out
}
