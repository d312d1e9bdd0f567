//! Every privilege a run needs, proved up front (`servers check`, and `run` before anything is
//! loaded) by doing each kind of statement once on a scratch table in the database the run
//! uses: a user the check passes cannot fail on a privilege after a long load and build.
//!
//! | statement the run makes | privilege |
//! |---|---|
//! | `CREATE DATABASE IF NOT EXISTS`, `CREATE TABLE` | `CREATE` |
//! | load (`INSERT`), metadata rows (`INSERT`, `DELETE`) | `INSERT`, `DELETE` |
//! | `ALTER TABLE ... ADD VECTOR INDEX`, `DROP INDEX` | `ALTER`, `INDEX` |
//! | queries, `EXPLAIN` | `SELECT` |
//! | reloading a table | `DROP` |
//! | index and table sizes (`information_schema.INNODB_SYS_TABLESPACES`) | `PROCESS` (global) |

use super::errors::mariadb_error;
use crate::connect::ServerUrl;
use crate::{Error, Result};
use mysql::Conn;
use mysql::prelude::Queryable;

/// Prove every privilege a run needs in database `db` (created when missing, as the run
/// would), on a scratch table that is dropped again: create, insert, add and use a vector
/// index, delete, read the tablespace size, drop the index and the table.
pub fn check(conn: &mut Conn, url: &ServerUrl, db: &str) -> Result<()> {
    let exists: Option<String> = conn
        .exec_first(
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            (db,),
        )
        .map_err(|e| mariadb_error(url, "looking for the database", e))?;
    if exists.is_none() {
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))
            .map_err(|e| mariadb_error(url, &format!("creating database `{db}`"), e))?;
    }
    let table = crate::backend::server::scratch_table();
    let qt = format!("`{db}`.`{table}`");
    let result = probe(conn, url, db, &table, &qt);
    let dropped = conn.query_drop(format!("DROP TABLE IF EXISTS {qt}"));
    result?;
    dropped.map_err(|e| mariadb_error(url, "dropping the test table", e))
}

fn probe(conn: &mut Conn, url: &ServerUrl, db: &str, table: &str, qt: &str) -> Result<()> {
    let steps = [
        (
            format!("CREATE TABLE {qt} (id INT PRIMARY KEY, v VECTOR(2) NOT NULL)"),
            "creating a test table",
        ),
        (
            format!("INSERT INTO {qt} VALUES (1, VEC_FromText('[0,0]')), (2, VEC_FromText('[1,1]')), (3, VEC_FromText('[5,5]'))"),
            "inserting rows into a test table",
        ),
        (
            format!("ALTER TABLE {qt} ADD VECTOR INDEX (v) DISTANCE=euclidean"),
            "adding a vector index to a test table",
        ),
        (
            format!("DELETE FROM {qt} WHERE id = 3"),
            "deleting a row of a test table",
        ),
    ];
    for (sql, what) in &steps {
        conn.query_drop(sql).map_err(|e| mariadb_error(url, what, e))?;
    }
    let nearest: Option<i64> = conn
        .query_first(format!(
            "SELECT id FROM {qt} ORDER BY VEC_DISTANCE_EUCLIDEAN(v, VEC_FromText('[0.9,0.9]')) \
             LIMIT 1"
        ))
        .map_err(|e| mariadb_error(url, "querying a test table's vector index", e))?;
    if nearest != Some(2) {
        return Err(Error::Server(format!(
            "MariaDB at {url}: a vector index query on a test table returned {nearest:?}, \
             expected row 2"
        )));
    }
    tablespace(conn, url, db, table)?;
    conn.query_drop(format!("ALTER TABLE {qt} DROP INDEX v"))
        .map_err(|e| mariadb_error(url, "dropping a test table's vector index", e))
}

/// Read the test table's tablespace size, as the run reads index sizes: needs PROCESS.
fn tablespace(conn: &mut Conn, url: &ServerUrl, db: &str, table: &str) -> Result<()> {
    let read: std::result::Result<Option<u64>, _> = conn.exec_first(
        "SELECT FILE_SIZE FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = ?",
        (format!("{db}/{table}"),),
    );
    match read {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(Error::Server(format!(
            "MariaDB at {url}: the test table has no tablespace in \
             information_schema.INNODB_SYS_TABLESPACES, so annbench cannot read index sizes; \
             set innodb_file_per_table=ON"
        ))),
        // ER_SPECIFIC_ACCESS_DENIED_ERROR: the global PROCESS privilege is missing.
        Err(mysql::Error::MySqlError(e)) if e.code == 1227 => {
            let user = url.user();
            Err(Error::Server(format!(
                "MariaDB at {url}: user '{user}' lacks the PROCESS privilege, which annbench \
                 needs to read index and table sizes (information_schema.INNODB_SYS_TABLESPACES). \
                 Grant it: GRANT PROCESS ON *.* TO '{user}'@'%'"
            )))
        }
        Err(e) => Err(mariadb_error(url, "reading a test table's size", e)),
    }
}
