//! Filtered queries on a vector set: each element carries its row's attribute columns as a
//! JSON attribute (`VADD ... SETATTR {"attr":5,"label1":2}`), and a filtered point's
//! condition (`attr < t`, `labelN = v`, see [`crate::dataset::filters`]) becomes a `VSIM
//! FILTER` expression (`.attr < t`, `.labelN == v`). Redis applies the filter while it walks
//! the graph, visiting at most `filter_ef` nodes (`FILTER-EF`; Redis' default is `COUNT *
//! 100`), so a selective filter can answer short: the runner records such queries.
//!
//! The attributes are stored once per dataset in a hash `<prefix>:<table>:attrs` (field = row
//! id, value = the JSON), next to the rows, and kept across runs while their fingerprint
//! matches; the build passes them to `VADD` only when the sweep has filtered points, so an
//! unfiltered index's size never includes them.

use super::conn::query;
use super::{Keys, Redis};
use crate::backend::args::Args;
use crate::backend::filter::{self, Attributes};
use crate::{Error, Result};
use std::time::Instant;

pub use super::decl::{FILTER_EF, FILTER_EF_RULE};

/// Rows of attributes per `HSET` of [`load`].
const BATCH: usize = 5_000;

/// A fingerprint of the columns (names and every value), to tell stored attributes apart.
fn fingerprint(attrs: &Attributes) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for c in &attrs.columns {
        eat(c.name.as_bytes());
        eat(&[0]);
        for v in &c.values {
            eat(&v.to_le_bytes());
        }
    }
    format!("{h:016x}")
}

/// Row `i`'s attributes as a JSON object.
fn json(attrs: &Attributes, i: usize) -> String {
    let fields: Vec<String> = attrs
        .columns
        .iter()
        .map(|c| format!("\"{}\":{}", c.name, c.values[i]))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// Store `attrs` for the loaded rows, keeping a stored copy with the same fingerprint;
/// returns the seconds spent (0 when kept).
pub(super) fn load(b: &mut Redis, keys: &Keys, rows: usize, attrs: &Attributes) -> Result<f64> {
    attrs.check_one_value_per_row("redis", rows)?;
    for c in &attrs.columns {
        crate::backend::table::check_ident(&c.name, "attribute column name")?;
    }
    let want = fingerprint(attrs);
    let url = b.url.clone();
    let have: Option<String> = query(
        &mut b.conn,
        &url,
        redis::cmd("HGET").arg(&keys.meta).arg("attrs_fingerprint"),
        "reading the attributes' fingerprint",
    )?;
    let n: u64 = query(
        &mut b.conn,
        &url,
        redis::cmd("HLEN").arg(&keys.attrs),
        "counting the stored attributes",
    )?;
    if have.as_deref() == Some(want.as_str()) && n == rows as u64 {
        return Ok(0.0);
    }
    let t0 = Instant::now();
    let _: i64 = query(
        &mut b.conn,
        &url,
        redis::cmd("DEL").arg(&keys.attrs),
        "removing the old attributes",
    )?;
    let mut start = 0;
    while start < rows {
        let end = (start + BATCH).min(rows);
        let mut cmd = redis::cmd("HSET");
        cmd.arg(&keys.attrs);
        for i in start..end {
            cmd.arg(i.to_string()).arg(json(attrs, i));
        }
        let _: i64 = query(&mut b.conn, &url, &cmd, "storing the attributes (HSET)")?;
        start = end;
    }
    let _: i64 = query(
        &mut b.conn,
        &url,
        redis::cmd("HSET")
            .arg(&keys.meta)
            .arg("attrs_fingerprint")
            .arg(&want),
        "recording the attributes' fingerprint",
    )?;
    Ok(t0.elapsed().as_secs_f64())
}

/// The `VSIM FILTER` expression of a filtered point (`None` when it is not filtered), after
/// checking the loaded attributes have its condition.
pub fn expression(args: &Args, attrs: Option<&Attributes>) -> Result<Option<String>> {
    filter::check_attributes(super::ALGORITHM.name, args, attrs, "query")?;
    let clause = filter::where_clause(args, attrs);
    let Some(condition) = clause.strip_prefix(" WHERE ") else {
        return Ok(None);
    };
    to_expression(condition).map(Some)
}

/// `attr < 11` -> `.attr < 11`, `label2 = 3` -> `.label2 == 3`.
fn to_expression(condition: &str) -> Result<String> {
    let parts: Vec<&str> = condition.split_whitespace().collect();
    match parts.as_slice() {
        [column, op @ ("<" | "="), value] if value.parse::<i64>().is_ok() => {
            let op = if *op == "=" { "==" } else { "<" };
            Ok(format!(".{column} {op} {value}"))
        }
        _ => Err(Error::Backend(format!(
            "redis: cannot turn the filter condition '{condition}' into a VSIM FILTER expression"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::filters::Column;

    #[test]
    fn conditions_become_filter_expressions_and_rows_json() {
        assert_eq!(to_expression("attr < 11").unwrap(), ".attr < 11");
        assert_eq!(to_expression("label2 = 3").unwrap(), ".label2 == 3");
        assert!(to_expression("attr > x").is_err());
        let a = Attributes {
            columns: vec![
                Column {
                    name: "attr".into(),
                    values: vec![4, 0],
                },
                Column {
                    name: "label1".into(),
                    values: vec![1, 2],
                },
            ],
            ..Attributes::default()
        };
        assert_eq!(json(&a, 1), r#"{"attr":0,"label1":2}"#);
        let mut b = a.clone();
        b.columns[0].values[1] = 1;
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }
}
