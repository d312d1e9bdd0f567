//! A point's build and query parameters as columns: `param_<name>` (lower-cased; a query
//! parameter with the name of a build parameter is `param_<name>_query`) and their cells.

use super::render::Cell;
use crate::results::PointResult;
use serde_json::Value;

/// (column name, value) of the point's build then query parameters.
pub(crate) fn flat_params(p: &PointResult) -> Vec<(String, Value)> {
    let column = |k: &str| format!("param_{}", k.to_lowercase());
    let build: Vec<(String, Value)> = p
        .build_args
        .iter()
        .map(|(k, v)| (column(k), v.clone()))
        .collect();
    let query = p.query_args.iter().map(|(k, v)| {
        let name = column(k);
        if build.iter().any(|(b, _)| *b == name) {
            (format!("{name}_query"), v.clone())
        } else {
            (name, v.clone())
        }
    });
    let mut all = build.clone();
    all.extend(query);
    all
}

/// The cell of a parameter value: integers stay integers.
pub(crate) fn param_cell(v: &Value) -> Cell {
    match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map(Cell::Int)
            .or_else(|| n.as_f64().map(Cell::Float))
            .unwrap_or_else(|| Cell::Text(n.to_string())),
        Value::String(s) => Cell::Text(s.clone()),
        other => Cell::Text(other.to_string()),
    }
}
