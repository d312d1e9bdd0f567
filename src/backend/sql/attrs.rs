//! The filter attribute of a loaded table ([`crate::dataset::filters`]): an integer column
//! `attr` added to the vector table, and its B-tree, for every SQL database alike.
//!
//! The column is added after the vectors are loaded (so every load method stays as it is) and
//! filled through a temporary table and one `UPDATE ... JOIN`; a column that already holds the
//! same values (checked by a checksum over `(id, attr)`) is kept, so a table is filled once.

use super::{Cell, Dialect, SqlConn, TableName};
use crate::backend::table::check_ident;
use crate::{Error, Result};
use std::time::Instant;

/// The column name (a checked identifier).
pub const COLUMN: &str = crate::dataset::filters::COLUMN;

/// Rows per `INSERT` into the temporary table.
const BATCH: usize = 5000;

/// Modulus of the checksum: keeps every term and the sum inside a signed 64-bit integer.
const MODULUS: i64 = 1_000_000_007;

/// Name of the B-tree on the column of table `t`.
pub fn btree_name(t: &TableName) -> Result<String> {
    let name = format!("{}_aidx", t.name);
    check_ident(&name, "attribute index name")?;
    Ok(name)
}

/// `(rows with an attribute, checksum)` of `attr` as the table would hold it.
fn expected(attr: &[i32]) -> (i64, i64) {
    let sum = attr.iter().enumerate().fold(0i64, |acc, (id, &a)| {
        acc + (i64::from(a) * (id as i64 + 1)) % MODULUS
    });
    (attr.len() as i64, sum)
}

/// Whether the table has the column, and its `(count, checksum)` if so.
fn current(c: &mut dyn SqlConn, t: &TableName) -> Result<Option<(i64, i64)>> {
    let d = c.dialect();
    // Both names are checked identifiers ([a-z0-9_]), safe as literals (a bound text would
    // need a cast to PostgreSQL's sql_identifier).
    let has = c.first_row(
        &format!(
            "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = '{}' AND \
             table_name = '{}' AND column_name = '{COLUMN}'",
            t.schema, t.name
        ),
        &[],
        "looking for the attribute column",
    )?;
    if has.and_then(|r| r.first().and_then(Cell::int)).unwrap_or(0) == 0 {
        return Ok(None);
    }
    let (big, cast_open, cast_close) = match d {
        Dialect::Postgres => ("int8", "(", ")::int8"),
        Dialect::MariaDb => ("SIGNED", "CAST(", " AS SIGNED)"),
    };
    let sql = format!(
        "SELECT COUNT({COLUMN}), {cast_open}COALESCE(SUM(MOD(CAST({COLUMN} AS {big}) * (id + 1), \
         {MODULUS})), 0){cast_close} FROM {}",
        t.qualified(d)
    );
    let row = c.first_row(&sql, &[], "checking the attribute column")?;
    let get = |i: usize| row.as_ref().and_then(|r| r.get(i)).and_then(Cell::int);
    Ok(Some((get(0).unwrap_or(-1), get(1).unwrap_or(-1))))
}

/// Make `attr` (one value per row id `0..n`) the table's attribute column. Returns the seconds
/// spent, 0 when the column already held these values.
pub fn ensure(c: &mut dyn SqlConn, t: &TableName, attr: &[i32]) -> Result<f64> {
    let want = expected(attr);
    let have = current(c, t)?;
    if have == Some(want) {
        return Ok(0.0);
    }
    let started = Instant::now();
    let d = c.dialect();
    let qt = t.qualified(d);
    if have.is_none() {
        let ty = match d {
            Dialect::Postgres => "int4",
            Dialect::MariaDb => "INT",
        };
        c.run(
            &format!("ALTER TABLE {qt} ADD COLUMN {COLUMN} {ty}"),
            "adding the attribute column",
        )?;
    }
    let tmp = "annbench_attr_load";
    let drop_tmp = match d {
        Dialect::Postgres => format!("DROP TABLE IF EXISTS pg_temp.{tmp}"),
        Dialect::MariaDb => format!("DROP TEMPORARY TABLE IF EXISTS {tmp}"),
    };
    c.run(&drop_tmp, "dropping a leftover temporary table")?;
    c.run(
        &format!("CREATE TEMPORARY TABLE {tmp} (id INT PRIMARY KEY, a INT NOT NULL)"),
        "creating a temporary table for the attributes",
    )?;
    for (b, chunk) in attr.chunks(BATCH).enumerate() {
        let mut sql = format!("INSERT INTO {tmp} (id, a) VALUES ");
        for (j, a) in chunk.iter().enumerate() {
            if j > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("({},{a})", b * BATCH + j));
        }
        c.run(&sql, "sending the attributes")?;
    }
    let update = match d {
        Dialect::Postgres => {
            format!("UPDATE {qt} AS t SET {COLUMN} = s.a FROM {tmp} AS s WHERE t.id = s.id")
        }
        Dialect::MariaDb => {
            format!("UPDATE {qt} AS t JOIN {tmp} AS s ON t.id = s.id SET t.{COLUMN} = s.a")
        }
    };
    c.run(&update, "filling the attribute column")?;
    c.run(&drop_tmp, "dropping the temporary table")?;
    if d == Dialect::Postgres {
        // The UPDATE wrote a new version of every row: reclaim the old ones and refresh the
        // statistics the planner chooses between the vector index and the B-tree with.
        c.run(&format!("VACUUM (ANALYZE) {qt}"), "vacuuming the table")?;
    }
    let got = current(c, t)?;
    if got != Some(want) {
        return Err(Error::Backend(format!(
            "{qt}: the attribute column does not hold the values sent (count and checksum \
             {got:?}, expected {want:?})"
        )));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Build (`on`) or drop the B-tree on the column, then refresh the table's statistics so the
/// planner sees the index and the column's distribution.
pub fn set_btree(c: &mut dyn SqlConn, t: &TableName, on: bool) -> Result<()> {
    let d = c.dialect();
    let qt = t.qualified(d);
    let name = btree_name(t)?;
    let sql = match (d, on) {
        (Dialect::Postgres, true) => {
            format!("CREATE INDEX IF NOT EXISTS {name} ON {qt} ({COLUMN})")
        }
        (Dialect::Postgres, false) => format!("DROP INDEX IF EXISTS {}.{name}", t.schema),
        (Dialect::MariaDb, true) => format!("CREATE INDEX IF NOT EXISTS {name} ON {qt} ({COLUMN})"),
        (Dialect::MariaDb, false) => format!("DROP INDEX IF EXISTS {name} ON {qt}"),
    };
    c.run(&sql, "building or dropping the attribute B-tree")?;
    let analyze = match d {
        Dialect::Postgres => format!("ANALYZE {qt}"),
        Dialect::MariaDb => format!("ANALYZE TABLE {qt}"),
    };
    c.run(&analyze, "refreshing the table statistics")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_fits_and_depends_on_order() {
        let a = crate::dataset::filters::attributes(100_000, 1);
        let (n, s) = expected(&a);
        assert_eq!(n, 100_000);
        let mut b = a.clone();
        b.swap(0, 1);
        assert_ne!(expected(&b).1, s);
        // Worst case of 10M rows stays far below i64::MAX.
        const { assert!(10_000_000i64 * MODULUS < i64::MAX) };
    }
}
