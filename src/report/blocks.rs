//! The best-QPS-at-recall table in the layout of the published MariaDB-vs-pgvector posts
//! (`annbench table --format blocks`): one plain-text block per recall threshold, fastest
//! first, each row's QPS relative to a base, the winner's parameters inline:
//!
//! ```text
//! Best QPS with recall >= 0.99
//! recall  QPS  rel2ma  algorithm
//! 0.993   861  1.00    MariaDB(m=24, ef_search=10)
//! 0.991   370  0.43    PGVector(m=16, ef_construction=256, ef_search=80)
//! ```

use super::table::{RecallRow, RecallTable, base_qps};

/// The blocks of `table` (one per threshold, in its order). `base` is an algorithm id or a run
/// label: the `rel2<first two letters>` column divides each row's QPS by the base's in that
/// block ([`base_qps`]). Without a base, rows are relative to the block's fastest row
/// (`rel2best`). Recall is truncated to 3 decimals (never rounded up to a threshold), QPS
/// rounded to a whole number, `~` before a flagged figure; a series that does not reach the
/// threshold says so with the best recall it got. The label and client count follow the name
/// when they vary.
pub fn blocks_text(table: &RecallTable, base: Option<&str>) -> String {
    let rel = match base {
        Some(b) => format!(
            "rel2{}",
            b.chars().take(2).collect::<String>().to_lowercase()
        ),
        None => "rel2best".to_string(),
    };
    let mut out = String::new();
    let mut start = 0;
    while start < table.rows.len() {
        let threshold = table.rows[start].threshold;
        let end = table.rows[start..]
            .iter()
            .position(|r| r.threshold.to_bits() != threshold.to_bits())
            .map_or(table.rows.len(), |n| start + n);
        let block = &table.rows[start..end];
        if start > 0 {
            out.push('\n');
        }
        out.push_str(&format!("Best QPS with recall >= {threshold}\n"));
        let mut lines = vec![[
            "recall".to_string(),
            "QPS".to_string(),
            rel.clone(),
            "algorithm".to_string(),
        ]];
        let fastest = block.iter().find_map(|r| r.best.as_ref()).map(|b| b.qps);
        lines.extend(block.iter().map(|row| {
            let reference = match base {
                Some(b) => base_qps(block, &row.series, b),
                None => fastest,
            };
            line(table, row, reference)
        }));
        out.push_str(&aligned(&lines));
        start = end;
    }
    out
}

fn line(table: &RecallTable, row: &RecallRow, reference: Option<f64>) -> [String; 4] {
    let mut who = String::new();
    if table.distinct.labels {
        who.push_str(&format!(
            " [{}]",
            row.series.label.as_deref().unwrap_or("-")
        ));
    }
    if table.distinct.clients {
        let n = row.series.clients;
        who.push_str(&format!(" x{n} client{}", if n == 1 { "" } else { "s" }));
    }
    match &row.best {
        Some(b) => {
            let mark = if b.flags.is_empty() { "" } else { "~" };
            let rel = match reference {
                Some(r) if r > 0.0 => format!("{:.2}", b.qps / r),
                _ => "-".to_string(),
            };
            [
                format!("{:.3}", (b.recall * 1000.0 + 1e-9).floor() / 1000.0),
                format!("{mark}{:.0}", b.qps),
                rel,
                format!("{}{who}", b.name),
            ]
        }
        None => {
            let reached = match row.max_recall {
                Some(r) => format!(
                    "not reached (best recall {:.3})",
                    (r * 1000.0).floor() / 1000.0
                ),
                None => "not reached (no recall measured)".to_string(),
            };
            [
                "-".into(),
                "-".into(),
                "-".into(),
                format!(
                    "{}{who}: {reached}",
                    super::names::algorithm_name(&row.series.algorithm)
                ),
            ]
        }
    }
}

/// Columns padded to their widest cell, two spaces apart; the last is not padded.
fn aligned(lines: &[[String; 4]]) -> String {
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        for (cell, w) in l.iter().zip(&widths) {
            out.push_str(&format!("{cell:<w$}  "));
        }
        out.push_str(&l[3]);
        out.push('\n');
    }
    out
}
