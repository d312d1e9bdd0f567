//! A report [`Table`] as an HTML table: the columns people read (those Markdown shows), with
//! the same rounding; numbers right-aligned, missing values with their reason in grey.

use super::escape::text;
use crate::report::render::{Cell, Table, display_text};

/// `table` as `<table>`, or a short note when it has no rows.
pub fn to_html(table: &Table, class: &str) -> String {
    if table.rows.is_empty() {
        return "<p class=\"note\">No rows.</p>\n".into();
    }
    let shown: Vec<usize> = (0..table.columns.len())
        .filter(|&i| table.columns[i].in_markdown)
        .collect();
    let mut out = format!(
        "<div class=\"scroll\"><table class=\"{}\">\n<thead><tr>",
        text(class)
    );
    for &i in &shown {
        out.push_str(&format!(
            "<th title=\"{}\">{}</th>",
            text(&table.columns[i].name),
            text(&table.columns[i].title)
        ));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for &i in &shown {
            let cell = &row[i];
            let class = match cell {
                Cell::Int(_) | Cell::Float(_) => " class=\"num\"",
                Cell::Missing(_) => " class=\"missing\"",
                _ => "",
            };
            let shown = text(&display_text(cell, table.columns[i].style));
            out.push_str(&format!("<td{class}>{shown}</td>"));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::render::{Column, Style};

    #[test]
    fn shown_columns_rounded_and_escaped() {
        let t = Table {
            columns: vec![
                Column::new("name", "parameters", Style::Plain),
                Column::new("recall", "recall", Style::Recall),
                Column::new("hidden", "hidden", Style::Plain).machine_only(),
            ],
            rows: vec![vec![
                Cell::Text("<b>".into()),
                Cell::Float(0.98999),
                Cell::Int(7),
            ]],
        };
        let html = to_html(&t, "t");
        assert!(
            html.contains("<td>&lt;b&gt;</td><td class=\"num\">0.9899</td></tr>"),
            "{html}"
        );
        assert!(!html.contains("hidden"), "{html}");
        assert_eq!(
            to_html(&Table::default(), "t"),
            "<p class=\"note\">No rows.</p>\n"
        );
    }
}
