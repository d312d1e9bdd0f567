//! The metadata table `<schema>.annbench_tables`: one row per loaded table, so a later run
//! reuses a table that holds exactly the same train matrix instead of loading it again.

use super::pg_err;
use crate::Result;
use postgres::Client;

/// What was loaded into one table.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub rows: u64,
    pub dimension: u32,
    pub fingerprint: String,
    pub load_seconds: f64,
    pub method: String,
}

/// Create the metadata table in `schema` if missing.
pub fn ensure(c: &mut Client, schema: &str) -> Result<()> {
    super::create_if_missing(
        c,
        &format!(
            "CREATE TABLE IF NOT EXISTS {schema}.annbench_tables (
           table_name text PRIMARY KEY,
           dataset text NOT NULL,
           rows int8 NOT NULL,
           dimension int4 NOT NULL,
           fingerprint text NOT NULL,
           load_seconds float8 NOT NULL,
           method text NOT NULL,
           loaded_at timestamptz NOT NULL DEFAULT now()
         )"
        ),
    )
    .map_err(|e| pg_err(e, &format!("creating {schema}.annbench_tables")))
}

/// The metadata of `table`, if any.
pub fn get(c: &mut Client, schema: &str, table: &str) -> Result<Option<Meta>> {
    let row = c
        .query_opt(
            &format!(
                "SELECT rows, dimension, fingerprint, load_seconds, method \
                 FROM {schema}.annbench_tables WHERE table_name = $1"
            ),
            &[&table],
        )
        .map_err(|e| pg_err(e, "reading annbench_tables"))?;
    Ok(row.map(|r| Meta {
        rows: r.get::<_, i64>(0) as u64,
        dimension: r.get::<_, i32>(1) as u32,
        fingerprint: r.get(2),
        load_seconds: r.get(3),
        method: r.get(4),
    }))
}

/// Record (or replace) the metadata of `table`; written only after a complete load.
pub fn put(c: &mut Client, schema: &str, table: &str, dataset: &str, m: &Meta) -> Result<()> {
    c.execute(
        &format!(
            "INSERT INTO {schema}.annbench_tables \
             (table_name, dataset, rows, dimension, fingerprint, load_seconds, method) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (table_name) DO UPDATE SET dataset = EXCLUDED.dataset, \
             rows = EXCLUDED.rows, dimension = EXCLUDED.dimension, \
             fingerprint = EXCLUDED.fingerprint, load_seconds = EXCLUDED.load_seconds, \
             method = EXCLUDED.method, loaded_at = now()"
        ),
        &[
            &table,
            &dataset,
            &(m.rows as i64),
            &(m.dimension as i32),
            &m.fingerprint,
            &m.load_seconds,
            &m.method,
        ],
    )
    .map_err(|e| pg_err(e, "writing annbench_tables"))?;
    Ok(())
}

/// Forget `table` (before it is dropped and reloaded).
pub fn delete(c: &mut Client, schema: &str, table: &str) -> Result<()> {
    c.execute(
        &format!("DELETE FROM {schema}.annbench_tables WHERE table_name = $1"),
        &[&table],
    )
    .map_err(|e| pg_err(e, "writing annbench_tables"))?;
    Ok(())
}
