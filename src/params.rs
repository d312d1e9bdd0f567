//! Build and query parameters: an ordered map of name -> JSON value (ints, strings, bools),
//! kept in config order so names like `MariaDB(m=12, ef_search=10)` read as configured.

/// Parameters of one build point or one query point, e.g. `{"M": 16, "ef_construction": 64}`.
pub type Params = serde_json::Map<String, serde_json::Value>;

/// Integer parameter `name`, if present and integral.
pub fn get_int(params: &Params, name: &str) -> Option<i64> {
    params.get(name).and_then(serde_json::Value::as_i64)
}

/// `a=1, b=2` in the params' order (lower-cased names), for labels and file names.
pub fn describe(params: &Params) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{}={s}", k.to_lowercase()),
            other => format!("{}={other}", k.to_lowercase()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
