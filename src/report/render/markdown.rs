//! Markdown (GitHub pipe table) rendering, with per-column rounding.

use super::{Cell, Style, Table};

/// The table as a GitHub-flavoured Markdown pipe table, numbers right-aligned. Columns marked
/// machine-only are left out. Ends with a newline.
pub fn to_markdown(table: &Table) -> String {
    let shown: Vec<usize> = (0..table.columns.len())
        .filter(|&i| table.columns[i].in_markdown)
        .collect();
    let header: Vec<String> = shown
        .iter()
        .map(|&i| escape(&table.columns[i].title))
        .collect();
    let body: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| {
            shown
                .iter()
                .map(|&i| cell_text(&row[i], table.columns[i].style))
                .collect()
        })
        .collect();
    let numeric: Vec<bool> = shown
        .iter()
        .map(|&i| {
            table.rows.iter().any(|r| is_number(&r[i]))
                && table
                    .rows
                    .iter()
                    .all(|r| is_number(&r[i]) || is_empty(&r[i]))
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count().max(3)).collect();
    for row in &body {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    push_line(&mut out, &header, &widths, &numeric);
    let rule: Vec<String> = widths
        .iter()
        .zip(&numeric)
        .map(|(&w, &num)| {
            if num {
                format!("{}:", "-".repeat(w - 1))
            } else {
                "-".repeat(w)
            }
        })
        .collect();
    push_line(&mut out, &rule, &widths, &numeric);
    for row in &body {
        push_line(&mut out, row, &widths, &numeric);
    }
    out
}

fn push_line(out: &mut String, cells: &[String], widths: &[usize], numeric: &[bool]) {
    out.push('|');
    for ((c, &w), &num) in cells.iter().zip(widths).zip(numeric) {
        if num {
            out.push_str(&format!(" {c:>w$} |"));
        } else {
            out.push_str(&format!(" {c:<w$} |"));
        }
    }
    out.push('\n');
}

fn is_number(c: &Cell) -> bool {
    matches!(c, Cell::Int(_) | Cell::Float(_))
}

fn is_empty(c: &Cell) -> bool {
    matches!(c, Cell::Null | Cell::Missing(_))
}

/// The text of one cell in Markdown.
pub(super) fn cell_text(cell: &Cell, style: Style) -> String {
    escape(&display_text(cell, style))
}

/// The text of one cell as people read it, with the rounding of its [`Style`] and nothing
/// escaped (Markdown and the HTML report escape it each their own way).
pub fn display_text(cell: &Cell, style: Style) -> String {
    match cell {
        Cell::Null => String::new(),
        Cell::Missing(reason) => reason.clone(),
        Cell::Bool(b) => b.to_string(),
        Cell::Int(i) => i.to_string(),
        Cell::Text(s) => s.clone(),
        Cell::Float(x) if !x.is_finite() => x.to_string(),
        Cell::Float(x) => match style {
            Style::Plain => super::round6(*x),
            Style::Fixed(d) => format!("{x:.d$}"),
            Style::Recall => format!("{:.4}", truncate4(*x)),
            Style::Ratio => format!("{x:.2}x"),
            Style::Millis => format!("{:.3}", x * 1000.0),
        },
    }
}

/// `x` truncated toward zero to 4 decimals; the tiny slack keeps an exact 0.99 (stored as
/// 0.98999999999999999) at 0.9900.
pub fn truncate4(x: f64) -> f64 {
    (x * 10_000.0 + 1e-9).floor() / 10_000.0
}

/// `|` escaped for the table, a line break as a space, and control characters (a label's or
/// dataset name's escape sequences) shown as `\x1b` (see [`crate::terminal::escape`]).
fn escape(s: &str) -> String {
    crate::terminal::escape(&s.replace('|', "\\|").replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::super::Column;
    use super::*;

    #[test]
    fn recall_is_truncated_not_rounded() {
        assert_eq!(cell_text(&Cell::Float(0.98999), Style::Recall), "0.9899");
        assert_eq!(cell_text(&Cell::Float(0.99), Style::Recall), "0.9900");
        assert_eq!(cell_text(&Cell::Float(1.0), Style::Recall), "1.0000");
        assert_eq!(cell_text(&Cell::Float(0.123456), Style::Recall), "0.1234");
    }

    #[test]
    fn aligned_pipe_table() {
        let t = Table {
            columns: vec![
                Column::new("name", "name", Style::Plain),
                Column::new("qps", "QPS", Style::Fixed(1)),
                Column::new("hidden", "hidden", Style::Plain).machine_only(),
            ],
            rows: vec![
                vec![Cell::Text("a|b".into()), Cell::Float(12.25), Cell::Int(1)],
                vec![Cell::Text("long name".into()), Cell::Null, Cell::Int(2)],
            ],
        };
        let expected = "\
| name      |  QPS |
| --------- | ---: |
| a\\|b      | 12.2 |
| long name |      |
";
        assert_eq!(to_markdown(&t), expected);
    }
}
