//! CSV rendering with the `csv` crate: a header of column names, numbers to 6 significant
//! digits (recalls truncated, never rounded up), empty fields for missing values.

use super::{Cell, Style, Table};

/// The table as CSV (RFC 4180 quoting), one header line of column names.
pub fn to_csv(table: &Table) -> crate::Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let fail = |e: ::csv::Error| crate::Error::Results(format!("cannot write CSV: {e}"));
    let kept: Vec<usize> = (0..table.columns.len())
        .filter(|&i| table.columns[i].in_machine)
        .collect();
    writer
        .write_record(kept.iter().map(|&i| defuse(&table.columns[i].name)))
        .map_err(fail)?;
    for row in &table.rows {
        writer
            .write_record(kept.iter().map(|&i| field(&row[i], table.columns[i].style)))
            .map_err(fail)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| crate::Error::Results(format!("cannot write CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| crate::Error::Results(format!("CSV is not UTF-8: {e}")))
}

/// One CSV field; floats to 6 significant digits (no `0.9712000000000001`), recalls
/// truncated to 6 decimals so a recall below a threshold never reads as reaching it. JSON
/// keeps full precision.
fn field(cell: &Cell, style: Style) -> String {
    match cell {
        Cell::Null | Cell::Missing(_) => String::new(),
        Cell::Bool(b) => b.to_string(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) if style == Style::Recall && x.is_finite() => {
            super::shortest((x * 1e6 + 1e-7).floor() / 1e6)
        }
        Cell::Float(x) => super::round6(*x),
        Cell::Text(s) => defuse(s),
    }
}

/// A text cell a spreadsheet would run as a formula (`=cmd|' /C calc'!A0`, `+1+cmd...`,
/// `@SUM(...)`, and `-`, tab or carriage return first) gets a leading `'`, as OWASP advises
/// against CSV injection: labels, dataset and parameter names come from other machines through
/// `annbench merge`. Numbers are cells of their own kind and stay numbers; a text cell that is a
/// plain number (`-5`, `-0.25`) runs nothing and stays as it is.
pub fn defuse(s: &str) -> String {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && !is_plain_number(s) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// `-12`, `+0.5`, `-1e-3`: a decimal number and nothing else.
fn is_plain_number(s: &str) -> bool {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['-', '+']).unwrap_or(e))),
        None => (body, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => {
            (digits(a) || a.is_empty())
                && (digits(b) || b.is_empty())
                && !(a.is_empty() && b.is_empty())
        }
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::super::{Column, Style};
    use super::*;

    #[test]
    fn quotes_and_empty_fields() {
        let t = Table {
            columns: vec![
                Column::new("name", "n", Style::Plain),
                Column::new("x", "x", Style::Plain),
            ],
            rows: vec![vec![Cell::Text("a, \"b\"".into()), Cell::Null]],
        };
        assert_eq!(to_csv(&t).unwrap(), "name,x\n\"a, \"\"b\"\"\",\n");
    }

    #[test]
    fn formula_cells_are_defused_numbers_kept() {
        let t = Table {
            columns: vec![
                Column::new("label", "label", Style::Plain),
                Column::new("x", "x", Style::Plain),
            ],
            rows: vec![
                vec![Cell::Text("=cmd|' /C calc'!A0".into()), Cell::Float(-1.5)],
                vec![Cell::Text("+1+cmd".into()), Cell::Int(-3)],
                vec![Cell::Text("@SUM(A1)".into()), Cell::Text("-2.5e-3".into())],
                vec![Cell::Text("-1+cmd".into()), Cell::Text("\tx".into())],
                vec![Cell::Text("\r=x".into()), Cell::Text("a=b".into())],
            ],
        };
        assert_eq!(
            to_csv(&t).unwrap(),
            "label,x\n'=cmd|' /C calc'!A0,-1.5\n'+1+cmd,-3\n'@SUM(A1),-2.5e-3\n\
             '-1+cmd,'\tx\n\"'\r=x\",a=b\n"
        );
    }

    #[test]
    fn floats_to_six_digits_recalls_truncated() {
        let t = Table {
            columns: vec![
                Column::new("recall", "recall", Style::Recall),
                Column::new("qps", "qps", Style::Fixed(1)),
                Column::new("ms", "ms", Style::Plain),
            ],
            rows: vec![
                vec![
                    Cell::Float(0.9712000000000001),
                    Cell::Float(1234.5678),
                    Cell::Float(0.000123456789),
                ],
                vec![
                    Cell::Float(0.9999999),
                    Cell::Float(98765432.1),
                    Cell::Float(3.0),
                ],
            ],
        };
        assert_eq!(
            to_csv(&t).unwrap(),
            "recall,qps,ms\n0.9712,1234.57,0.000123457\n0.999999,98765400,3\n"
        );
    }
}
