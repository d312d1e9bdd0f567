//! Build and query parameters: an ordered map of name -> JSON value (ints, strings, bools),
//! kept in config order so names like `MariaDB(m=12, ef_search=10)` read as configured.

/// Parameters of one build point or one query point, e.g. `{"M": 16, "ef_construction": 64}`.
pub type Params = serde_json::Map<String, serde_json::Value>;

/// Integer parameter `name`, if present and integral.
pub fn get_int(params: &Params, name: &str) -> Option<i64> {
    params.get(name).and_then(serde_json::Value::as_i64)
}

/// Integer parameter `name` matched ignoring case, as a float, when set and positive (the
/// algorithms' build cost models read their arguments so).
pub fn positive(params: &Params, name: &str) -> Option<f64> {
    params
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.as_i64())
        .filter(|v| *v > 0)
        .map(|v| v as f64)
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

/// Parse `a=1, b=x` (the form [`describe`] writes): integers become numbers, anything else a
/// string. Empty text is no parameters.
pub fn parse(text: &str) -> crate::Result<Params> {
    let mut out = Params::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').ok_or_else(|| {
            crate::Error::Config(format!("bad parameters '{text}': expected key=value, ..."))
        })?;
        let value = value.trim();
        let value = value
            .parse::<i64>()
            .map_or_else(|_| serde_json::Value::from(value), serde_json::Value::from);
        out.insert(key.trim().to_string(), value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_what_describe_writes() {
        let p = parse("M=8, engine=MyISAM").unwrap();
        assert_eq!(describe(&p), "m=8, engine=MyISAM");
        assert_eq!(get_int(&p, "M"), Some(8));
        assert!(parse("").unwrap().is_empty());
        assert!(parse("M").is_err());
    }
}
