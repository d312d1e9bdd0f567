//! The metadata table `<schema>.annbench_tables`: one row per loaded table, written only after
//! a complete load, so a later run reuses a table that holds exactly the same train matrix.
//! One definition for every SQL server (the types are spelled the way both accept).

use super::{Arg, Dialect, SqlConn, TableName};
use crate::Result;

/// What was loaded into one table.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub dataset: String,
    pub rows: u64,
    pub dimension: u32,
    /// [`crate::backend::table::fingerprint_hex`] of the train matrix.
    pub fingerprint: String,
    pub load_seconds: f64,
    /// How the rows were loaded, e.g. `COPY BINARY x2 connections`.
    pub method: String,
}

impl Meta {
    /// Whether the stored table holds the same data as `want`.
    pub fn same_data(&self, want: &Meta) -> bool {
        (self.rows, self.dimension, &self.fingerprint)
            == (want.rows, want.dimension, &want.fingerprint)
    }
}

const NAME: &str = "annbench_tables";

fn table(schema: &str, d: &dyn Dialect) -> String {
    TableName {
        schema: schema.into(),
        name: NAME.into(),
    }
    .qualified(d)
}

/// Create the metadata table in `schema` if missing.
pub fn ensure(c: &mut dyn SqlConn, schema: &str) -> Result<()> {
    let d = c.dialect();
    let sql = format!(
        "CREATE TABLE IF NOT EXISTS {} (
           table_name VARCHAR(64) NOT NULL PRIMARY KEY,
           dataset VARCHAR(512) NOT NULL,
           {} BIGINT NOT NULL,
           dimension INT NOT NULL,
           fingerprint CHAR(16) NOT NULL,
           load_seconds DOUBLE PRECISION NOT NULL,
           method VARCHAR(128) NOT NULL,
           loaded_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
           build_id VARCHAR(64) NULL
         )",
        table(schema, d),
        d.quote("rows")
    );
    c.create_if_missing(&sql, &format!("creating {}", table(schema, d)))?;
    // A table from before build ids gets the column (checked first: the ALTER would lock it).
    let has = c.first_row(
        &format!(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = {} \
             AND table_name = '{NAME}' AND column_name = 'build_id'",
            d.placeholder(1)
        ),
        &[Arg::Text(schema)],
        "reading annbench_tables' columns",
    )?;
    if has.is_none() {
        c.create_if_missing(
            &format!(
                "ALTER TABLE {} ADD COLUMN IF NOT EXISTS build_id VARCHAR(64) NULL",
                table(schema, d)
            ),
            "adding build_id to annbench_tables",
        )?;
    }
    Ok(())
}

/// Record `id` as the build of the index on `t` (`None`: no complete build).
pub fn set_build_id(c: &mut dyn SqlConn, t: &TableName, id: Option<&str>) -> Result<()> {
    let d = c.dialect();
    let sql = format!(
        "UPDATE {} SET build_id = {} WHERE table_name = {}",
        table(&t.schema, d),
        d.placeholder(1),
        d.placeholder(2)
    );
    let id = match id {
        Some(id) => Arg::Text(id),
        None => Arg::Null,
    };
    c.run_args(&sql, &[id, Arg::Text(&t.name)], "writing annbench_tables")
}

/// Record `method` (and `rows`) for `t`, keeping its other columns (a stream table's progress,
/// [`super::stream::set_progress`]).
pub fn set_method(c: &mut dyn SqlConn, t: &TableName, method: &str, rows: u64) -> Result<()> {
    let d = c.dialect();
    let sql = format!(
        "UPDATE {} SET method = {}, {} = {} WHERE table_name = {}",
        table(&t.schema, d),
        d.placeholder(1),
        d.quote("rows"),
        d.placeholder(2),
        d.placeholder(3)
    );
    c.run_args(
        &sql,
        &[Arg::Text(method), Arg::Int(rows as i64), Arg::Text(&t.name)],
        "writing annbench_tables",
    )
}

/// The build id recorded for `t`, if any.
pub fn build_id(c: &mut dyn SqlConn, t: &TableName) -> Result<Option<String>> {
    let d = c.dialect();
    let sql = format!(
        "SELECT build_id FROM {} WHERE table_name = {}",
        table(&t.schema, d),
        d.placeholder(1)
    );
    let row = c.first_row(&sql, &[Arg::Text(&t.name)], "reading annbench_tables")?;
    Ok(row.and_then(|r| r.first().and_then(|c| c.text().map(str::to_string))))
}

/// The metadata of `t`, if any.
pub fn get(c: &mut dyn SqlConn, t: &TableName) -> Result<Option<Meta>> {
    let d = c.dialect();
    let sql = format!(
        "SELECT dataset, {}, dimension, fingerprint, load_seconds, method FROM {} \
         WHERE table_name = {}",
        d.quote("rows"),
        table(&t.schema, d),
        d.placeholder(1)
    );
    let row = c.first_row(&sql, &[Arg::Text(&t.name)], "reading annbench_tables")?;
    Ok(row.and_then(|r| match r.as_slice() {
        [dataset, rows, dim, fp, secs, method] => Some(Meta {
            dataset: dataset.text()?.to_string(),
            rows: rows.int()? as u64,
            dimension: dim.int()? as u32,
            fingerprint: fp.text()?.trim().to_string(),
            load_seconds: secs.float()?,
            method: method.text()?.to_string(),
        }),
        _ => None,
    }))
}

/// Record (or replace) the metadata of `t`; called only after a complete load.
pub fn put(c: &mut dyn SqlConn, t: &TableName, m: &Meta) -> Result<()> {
    delete(c, t)?;
    let d = c.dialect();
    let marks: Vec<String> = (1..=7).map(|i| d.placeholder(i)).collect();
    let sql = format!(
        "INSERT INTO {} (table_name, dataset, {}, dimension, fingerprint, load_seconds, method) \
         VALUES ({})",
        table(&t.schema, d),
        d.quote("rows"),
        marks.join(", ")
    );
    let args = [
        Arg::Text(&t.name),
        Arg::Text(&m.dataset),
        Arg::Int(m.rows as i64),
        Arg::Int(i64::from(m.dimension)),
        Arg::Text(&m.fingerprint),
        Arg::Float(m.load_seconds),
        Arg::Text(&m.method),
    ];
    c.run_args(&sql, &args, "writing annbench_tables")
}

/// Forget `t` (before it is dropped and reloaded).
pub fn delete(c: &mut dyn SqlConn, t: &TableName) -> Result<()> {
    let d = c.dialect();
    let sql = format!(
        "DELETE FROM {} WHERE table_name = {}",
        table(&t.schema, d),
        d.placeholder(1)
    );
    c.run_args(&sql, &[Arg::Text(&t.name)], "writing annbench_tables")
}
