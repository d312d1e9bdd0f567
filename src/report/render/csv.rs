//! CSV rendering with the `csv` crate: a header of column names, full-precision numbers,
//! empty fields for missing values.

use super::{Cell, Table};

/// The table as CSV (RFC 4180 quoting), one header line of column names.
pub fn to_csv(table: &Table) -> crate::Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let fail = |e: ::csv::Error| crate::Error::Results(format!("cannot write CSV: {e}"));
    let kept: Vec<usize> = (0..table.columns.len())
        .filter(|&i| table.columns[i].in_machine)
        .collect();
    writer
        .write_record(kept.iter().map(|&i| table.columns[i].name.as_str()))
        .map_err(fail)?;
    for row in &table.rows {
        writer
            .write_record(kept.iter().map(|&i| field(&row[i])))
            .map_err(fail)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| crate::Error::Results(format!("cannot write CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| crate::Error::Results(format!("CSV is not UTF-8: {e}")))
}

/// One CSV field; floats use Rust's shortest round-trip form, so they parse back exactly.
fn field(cell: &Cell) -> String {
    match cell {
        Cell::Null | Cell::Missing(_) => String::new(),
        Cell::Bool(b) => b.to_string(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) => x.to_string(),
        Cell::Text(s) => s.clone(),
    }
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
}
