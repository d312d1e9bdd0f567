//! The metadata table `annbench_tables`: one row per loaded table, so a later run reuses a
//! table that holds exactly the same train matrix instead of loading it again.

use super::sql_err;
use crate::Result;
use mysql::Conn;
use mysql::prelude::Queryable;

/// What was loaded into one table.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub dataset: String,
    pub rows: u64,
    pub dimension: u32,
    pub fingerprint: String,
    pub load_seconds: f64,
    pub method: String,
}

/// Create the metadata table in `db` if missing.
pub fn ensure(conn: &mut Conn, db: &str) -> Result<()> {
    conn.query_drop(format!(
        "CREATE TABLE IF NOT EXISTS `{db}`.annbench_tables (
           table_name VARCHAR(64) NOT NULL PRIMARY KEY,
           dataset VARCHAR(512) NOT NULL,
           `rows` BIGINT NOT NULL,
           dimension INT NOT NULL,
           fingerprint CHAR(16) NOT NULL,
           load_seconds DOUBLE NOT NULL,
           method VARCHAR(128) NOT NULL,
           loaded_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
         ) ENGINE=InnoDB"
    ))
    .map_err(|e| sql_err(e, &format!("creating `{db}`.annbench_tables")))
}

/// The metadata of `table`, if any.
pub fn get(conn: &mut Conn, db: &str, table: &str) -> Result<Option<Meta>> {
    let row: Option<(String, u64, u32, String, f64, String)> = conn
        .exec_first(
            format!(
                "SELECT dataset, `rows`, dimension, fingerprint, load_seconds, method \
                 FROM `{db}`.annbench_tables WHERE table_name = ?"
            ),
            (table,),
        )
        .map_err(|e| sql_err(e, "reading annbench_tables"))?;
    Ok(row.map(
        |(dataset, rows, dimension, fingerprint, load_seconds, method)| Meta {
            dataset,
            rows,
            dimension,
            fingerprint,
            load_seconds,
            method,
        },
    ))
}

/// Record (or replace) the metadata of `table`; written only after a complete load.
pub fn put(conn: &mut Conn, db: &str, table: &str, m: &Meta) -> Result<()> {
    conn.exec_drop(
        format!(
            "REPLACE INTO `{db}`.annbench_tables \
             (table_name, dataset, `rows`, dimension, fingerprint, load_seconds, method) \
             VALUES (?, ?, ?, ?, ?, ?, ?)"
        ),
        (
            table,
            &m.dataset,
            m.rows,
            m.dimension,
            &m.fingerprint,
            m.load_seconds,
            &m.method,
        ),
    )
    .map_err(|e| sql_err(e, "writing annbench_tables"))
}

/// Forget `table` (before it is dropped and reloaded).
pub fn delete(conn: &mut Conn, db: &str, table: &str) -> Result<()> {
    conn.exec_drop(
        format!("DELETE FROM `{db}`.annbench_tables WHERE table_name = ?"),
        (table,),
    )
    .map_err(|e| sql_err(e, "writing annbench_tables"))
}
