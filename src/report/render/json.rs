//! JSON rendering in records orient: an array with one object per row, keys in column order
//! (pandas reads it with `pd.DataFrame.from_records` or `pd.read_json(orient="records")`).

use super::{Cell, Table};
use serde_json::{Map, Number, Value};

/// The rows as JSON values (one object per row). Non-finite floats become `null`, as JSON has
/// no NaN or infinity.
pub fn to_json_records(table: &Table) -> Vec<Value> {
    table
        .rows
        .iter()
        .map(|row| {
            let mut obj = Map::new();
            for (col, cell) in table.columns.iter().zip(row) {
                if col.in_machine {
                    obj.insert(col.name.clone(), value(cell));
                }
            }
            Value::Object(obj)
        })
        .collect()
}

/// The table as pretty-printed JSON records, ending with a newline.
pub fn to_json(table: &Table) -> crate::Result<String> {
    pretty(&Value::Array(to_json_records(table)))
}

/// Pretty-printed JSON with a final newline.
pub fn pretty(value: &Value) -> crate::Result<String> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| crate::Error::Results(format!("cannot write JSON: {e}")))
}

fn value(cell: &Cell) -> Value {
    match cell {
        Cell::Null | Cell::Missing(_) => Value::Null,
        Cell::Bool(b) => Value::Bool(*b),
        Cell::Int(i) => Value::from(*i),
        Cell::Float(x) => Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Cell::Text(s) => Value::String(s.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Column, Style};
    use super::*;

    #[test]
    fn records_with_nulls() {
        let t = Table {
            columns: vec![
                Column::new("a", "a", Style::Plain),
                Column::new("b", "b", Style::Plain),
            ],
            rows: vec![vec![Cell::Float(f64::NAN), Cell::Missing("why".into())]],
        };
        assert_eq!(
            to_json_records(&t),
            vec![serde_json::json!({"a": null, "b": null})]
        );
    }
}
