//! Load a table once: reuse it when its metadata says it holds exactly this train matrix (same
//! rows, dimension and fingerprint) and it still has that many rows; otherwise drop it,
//! create it, fill it, check the row count and only then record the metadata, so a load that
//! dies half-way is never mistaken for a complete one.

use super::meta::{self, Meta};
use super::{SqlConn, TableName, count_rows};
use crate::{Error, Result};

/// What [`ensure_table`] found or did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The table's metadata: for a reused table, its original load seconds and method.
    pub meta: Meta,
    pub reused: bool,
}

/// Loads the rows into a freshly created table; returns (seconds, method).
pub type Fill<'a> = dyn FnMut(&mut dyn SqlConn) -> Result<(f64, String)> + 'a;

/// Reuse `t` if it holds `want`'s data, else recreate it with `create` (a `CREATE TABLE`
/// statement) and `fill`, which loads the rows and returns (seconds, method).
pub fn ensure_table(
    c: &mut dyn SqlConn,
    t: &TableName,
    want: Meta,
    create: &str,
    fill: &mut Fill<'_>,
) -> Result<Outcome> {
    let qt = t.qualified(c.dialect());
    if let Some(have) = meta::get(c, t)? {
        if have.same_data(&want) && count_rows(c, t).ok() == Some(want.rows) {
            return Ok(Outcome {
                meta: have,
                reused: true,
            });
        }
    }
    meta::delete(c, t)?;
    c.run(
        &format!("DROP TABLE IF EXISTS {qt}"),
        "dropping the old table",
    )?;
    c.run(create, "creating the table")?;
    let (load_seconds, method) = fill(c)?;
    let got = count_rows(c, t)?;
    if got != want.rows {
        return Err(Error::Backend(format!(
            "{qt} holds {got} rows after the load; expected {}",
            want.rows
        )));
    }
    let m = Meta {
        load_seconds,
        method,
        ..want
    };
    meta::put(c, t, &m)?;
    Ok(Outcome {
        meta: m,
        reused: false,
    })
}

/// Drop `t` and forget its metadata.
pub fn drop_table(c: &mut dyn SqlConn, t: &TableName) -> Result<()> {
    meta::delete(c, t)?;
    let sql = format!("DROP TABLE IF EXISTS {}", t.qualified(c.dialect()));
    c.run(&sql, "dropping a table")
}
