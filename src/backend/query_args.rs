//! The query arguments both database backends take: `ef_search` only, validated against the
//! range the server accepts, with errors that name the backend and the argument.

use crate::params::Params;
use crate::{Error, Result};
use std::ops::RangeInclusive;

/// `ef_search` from `query_args` (None when absent); any other key is an error.
pub fn ef_search(
    backend: &str,
    query_args: &Params,
    range: RangeInclusive<i64>,
) -> Result<Option<i64>> {
    let mut ef = None;
    for (key, value) in query_args {
        if key != "ef_search" {
            return Err(Error::Config(format!(
                "{backend} has no query arg '{key}': the only one is ef_search"
            )));
        }
        let v = value
            .as_i64()
            .filter(|v| range.contains(v))
            .ok_or_else(|| {
                Error::Config(format!(
                    "{backend} query arg ef_search={value}: expected an integer in {}..={}",
                    range.start(),
                    range.end()
                ))
            })?;
        ef = Some(v);
    }
    Ok(ef)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: serde_json::Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn accepts_the_range_and_names_what_is_wrong() {
        assert_eq!(ef_search("x", &args(json!({})), 1..=10).unwrap(), None);
        assert_eq!(
            ef_search("x", &args(json!({"ef_search": 10})), 1..=10).unwrap(),
            Some(10)
        );
        let e = ef_search("x", &args(json!({"ef_search": 11})), 1..=10).unwrap_err();
        assert!(
            e.to_string().contains("ef_search=11") && e.to_string().contains("1..=10"),
            "{e}"
        );
        let e = ef_search("x", &args(json!({"ef_search": "5"})), 1..=10).unwrap_err();
        assert!(e.to_string().contains("expected an integer"), "{e}");
        let e = ef_search("x", &args(json!({"efs": 5})), 1..=10).unwrap_err();
        assert!(e.to_string().contains("x has no query arg 'efs'"), "{e}");
    }
}
