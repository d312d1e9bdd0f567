//! The filter attribute columns of a loaded table ([`crate::dataset::filters`]): integer
//! columns `attr`, `label1`, `label2`, ... added to the vector table, and their B-trees, for
//! every SQL database alike.
//!
//! The columns are added after the vectors are loaded (so every load method stays as it is)
//! and filled through one temporary table and one `UPDATE ... JOIN`. A column that already
//! holds the same values (checked by a count and a checksum over `(id, value)`) is kept, so a
//! table is filled once; attribute columns the workload no longer has are dropped, so the
//! table holds exactly the workload's columns.

use super::{Cell, SqlConn, TableName};
use crate::backend::table::check_ident;
use crate::dataset::filters::Column;
use crate::{Error, Result};
use std::time::Instant;

/// Rows per `INSERT` into the temporary table.
const BATCH: usize = 5000;

/// Modulus of the checksum: keeps every term and the sum inside a signed 64-bit integer.
const MODULUS: i64 = 1_000_000_007;

/// Whether `name` is an attribute column annbench adds: `attr` or `label<digits>`.
fn is_attribute(name: &str) -> bool {
    name == crate::dataset::filters::COLUMN
        || name
            .strip_prefix("label")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Name of the B-tree on `column` of table `t`: `<table>_aidx` for `attr`, `<table>_l2idx`
/// for `label2`.
pub fn btree_name(t: &TableName, column: &str) -> Result<String> {
    let suffix = match column.strip_prefix("label") {
        _ if column == crate::dataset::filters::COLUMN => "aidx".to_string(),
        Some(n) if is_attribute(column) => format!("l{n}idx"),
        _ => format!("{column}_idx"),
    };
    let name = format!("{}_{suffix}", t.name);
    check_ident(&name, "attribute index name")?;
    Ok(name)
}

/// `(rows with a value, checksum)` of `values` as the table would hold them.
fn expected(values: &[i32]) -> (i64, i64) {
    let sum = values.iter().enumerate().fold(0i64, |acc, (id, &a)| {
        acc + (i64::from(a) * (id as i64 + 1)) % MODULUS
    });
    (values.len() as i64, sum)
}

/// The attribute columns the table has now.
fn existing(c: &mut dyn SqlConn, t: &TableName) -> Result<Vec<String>> {
    let list = c.dialect().comma_joined("column_name");
    // Both names are checked identifiers ([a-z0-9_]), safe as literals (a bound text would
    // need a cast to the server's own identifier type on some servers).
    let row = c.first_row(
        &format!(
            "SELECT {list} FROM information_schema.columns WHERE table_schema = '{}' AND \
             table_name = '{}' AND (column_name = 'attr' OR column_name LIKE 'label%')",
            t.schema, t.name
        ),
        &[],
        "looking for the attribute columns",
    )?;
    let text = row
        .and_then(|r| r.first().and_then(|c| c.text().map(str::to_string)))
        .unwrap_or_default();
    Ok(text
        .split(',')
        .filter(|n| is_attribute(n))
        .map(str::to_string)
        .collect())
}

/// `(count, checksum)` of each of `names` (existing columns) in one scan.
fn current(c: &mut dyn SqlConn, t: &TableName, names: &[&str]) -> Result<Vec<(i64, i64)>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let d = c.dialect();
    let big = d.int8_type();
    let terms: Vec<String> = names
        .iter()
        .map(|n| {
            let sum = format!("COALESCE(SUM(MOD(CAST({n} AS {big}) * (id + 1), {MODULUS})), 0)");
            format!("COUNT({n}), {}", d.cast_int8(&sum))
        })
        .collect();
    let sql = format!("SELECT {} FROM {}", terms.join(", "), t.qualified(d));
    let row = c.first_row(&sql, &[], "checking the attribute columns")?;
    let get = |i: usize| {
        row.as_ref()
            .and_then(|r| r.get(i))
            .and_then(Cell::int)
            .unwrap_or(-1)
    };
    Ok((0..names.len())
        .map(|i| (get(2 * i), get(2 * i + 1)))
        .collect())
}

/// Make `columns` (one value per row id `0..n` each) the table's attribute columns, dropping
/// attribute columns not among them. Returns the seconds spent, 0 when every column already
/// held its values and none was dropped.
pub fn ensure(c: &mut dyn SqlConn, t: &TableName, columns: &[Column]) -> Result<f64> {
    for col in columns {
        check_ident(&col.name, "attribute column name")?;
    }
    let d = c.dialect();
    let qt = t.qualified(d);
    let have = existing(c, t)?;
    let present: Vec<&Column> = columns.iter().filter(|c| have.contains(&c.name)).collect();
    let names: Vec<&str> = present.iter().map(|c| c.name.as_str()).collect();
    let sums = current(c, t, &names)?;
    let stale: Vec<&Column> = columns
        .iter()
        .filter(
            |col| match present.iter().position(|p| p.name == col.name) {
                Some(i) => sums[i] != expected(&col.values),
                None => true,
            },
        )
        .collect();
    let extra: Vec<&String> = have
        .iter()
        .filter(|h| !columns.iter().any(|c| &c.name == *h))
        .collect();
    if stale.is_empty() && extra.is_empty() {
        return Ok(0.0);
    }
    let started = Instant::now();
    let ty = d.attribute_type();
    let mut alter: Vec<String> = extra.iter().map(|n| format!("DROP COLUMN {n}")).collect();
    alter.extend(
        stale
            .iter()
            .filter(|col| !have.contains(&col.name))
            .map(|col| format!("ADD COLUMN {} {ty}", col.name)),
    );
    if !alter.is_empty() {
        c.run(
            &format!("ALTER TABLE {qt} {}", alter.join(", ")),
            "adding the attribute columns",
        )?;
    }
    if !stale.is_empty() {
        fill(c, t, &stale)?;
    }
    if let Some(sql) = d.after_full_update(t) {
        c.run(&sql, "vacuuming the table")?;
    }
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let got = current(c, t, &names)?;
    for (col, got) in columns.iter().zip(got) {
        let want = expected(&col.values);
        if got != want {
            return Err(Error::Backend(format!(
                "{qt}: the attribute column {} does not hold the values sent (count and \
                 checksum {got:?}, expected {want:?})",
                col.name
            )));
        }
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Send `columns` through a temporary table and set them with one `UPDATE ... JOIN`.
fn fill(c: &mut dyn SqlConn, t: &TableName, columns: &[&Column]) -> Result<()> {
    let d = c.dialect();
    let tmp = "annbench_attr_load";
    let drop_tmp = d.drop_temporary_table(tmp);
    c.run(&drop_tmp, "dropping a leftover temporary table")?;
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let defs: Vec<String> = names.iter().map(|n| format!("{n} INT NOT NULL")).collect();
    c.run(
        &format!(
            "CREATE TEMPORARY TABLE {tmp} (id INT PRIMARY KEY, {})",
            defs.join(", ")
        ),
        "creating a temporary table for the attributes",
    )?;
    let rows = columns.first().map_or(0, |c| c.values.len());
    for start in (0..rows).step_by(BATCH) {
        let mut sql = format!("INSERT INTO {tmp} (id, {}) VALUES ", names.join(", "));
        for id in start..(start + BATCH).min(rows) {
            if id > start {
                sql.push(',');
            }
            sql.push_str(&format!("({id}"));
            for col in columns {
                sql.push_str(&format!(",{}", col.values[id]));
            }
            sql.push(')');
        }
        c.run(&sql, "sending the attributes")?;
    }
    let update = d.update_from(t, tmp, &names);
    c.run(&update, "filling the attribute columns")?;
    c.run(&drop_tmp, "dropping the temporary table")
}

/// Build (`on`) or drop a B-tree on each of `columns`, then refresh the table's statistics so
/// the planner sees the indexes and the columns' distributions.
pub fn set_btrees<'a>(
    c: &mut dyn SqlConn,
    t: &TableName,
    columns: impl IntoIterator<Item = &'a str>,
    on: bool,
) -> Result<()> {
    let d = c.dialect();
    for column in columns {
        let name = btree_name(t, column)?;
        let sql = if on {
            d.create_index(t, &name, column)
        } else {
            d.drop_index(t, &name)
        };
        c.run(&sql, "building or dropping an attribute B-tree")?;
    }
    c.run(&d.analyze(t), "refreshing the table statistics")
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

    #[test]
    fn btree_names_per_column() {
        let t = TableName {
            schema: "s".into(),
            name: "annbench_t".into(),
        };
        assert_eq!(btree_name(&t, "attr").unwrap(), "annbench_t_aidx");
        assert_eq!(btree_name(&t, "label12").unwrap(), "annbench_t_l12idx");
        assert!(is_attribute("label3") && !is_attribute("label") && !is_attribute("labelx"));
    }
}
