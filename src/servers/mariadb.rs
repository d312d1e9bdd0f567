//! `servers check` for MariaDB: version, VECTOR support proved on a scratch table, settings.

use super::ServerCheck;
use super::rules::{MariaDbSettings, mariadb_warnings};
use crate::backend::ServerInfo;
use crate::connect::{ServerUrl, check_mariadb_version, connect_mariadb, mariadb_error};
use crate::{Error, Result};
use mysql::prelude::Queryable;

/// Settings shown, in this order.
const SHOWN: &[&str] = &[
    "mhnsw_max_cache_size",
    "innodb_buffer_pool_size",
    "mhnsw_ef_search",
    "mhnsw_default_m",
    "local_infile",
    "max_connections",
];

/// Version and the settings that shape results, for the result files (raw server values).
/// Fails like [`check_mariadb_version`] on a server without VECTOR support.
pub fn mariadb_server_info(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<ServerInfo> {
    let version = check_mariadb_version(conn, url)?;
    Ok(ServerInfo {
        version: format!("MariaDB {}", version.text),
        settings: read_variables(conn, url)?.into_iter().collect(),
    })
}

/// `SHOW GLOBAL VARIABLES` for [`SHOWN`], as `(name, value)`.
fn read_variables(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<Vec<(String, String)>> {
    let list = SHOWN
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    conn.query(format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"
    ))
    .map_err(|e| mariadb_error(url, "reading settings", e))
}

pub(super) fn check(url: &ServerUrl, c: &mut ServerCheck, ram: u64) -> Result<()> {
    let mut conn = connect_mariadb(url)?;
    let err = |what: &'static str| move |e| mariadb_error(url, what, e);
    c.version = conn
        .query_first::<String, _>("SELECT VERSION()")
        .map_err(err("reading the version"))?;
    check_mariadb_version(&mut conn, url)?;

    let rows = read_variables(&mut conn, url)?;
    let get = |name: &str| {
        rows.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let bytes = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    for name in SHOWN {
        if let Some(v) = get(name) {
            let shown = match *name {
                "mhnsw_max_cache_size" | "innodb_buffer_pool_size" => {
                    super::human_bytes(bytes(name))
                }
                _ => v.to_string(),
            };
            c.settings.push((name.to_string(), shown));
        }
    }
    let settings = MariaDbSettings {
        mhnsw_max_cache_size: bytes("mhnsw_max_cache_size"),
        innodb_buffer_pool_size: bytes("innodb_buffer_pool_size"),
        local_infile: get("local_infile") == Some("ON"),
    };

    vector_smoke_test(&mut conn, url)?;
    c.vector_support = Some("VECTOR type and MHNSW index (built and queried a test table)".into());
    c.warnings = mariadb_warnings(&settings, ram);
    Ok(())
}

/// Create a tiny table with a vector index, query it through the index, drop it. Proves the
/// privileges the backend needs (CREATE, INSERT, SELECT, DROP) and that MHNSW works.
fn vector_smoke_test(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<()> {
    if url.database().is_empty() {
        return Err(Error::Config(format!(
            "MariaDB URL {url} names no database: add one to the path, e.g. .../annbench"
        )));
    }
    let table = super::scratch_table();
    let context = "creating a test table with a vector index";
    let result = (|| {
        conn.query_drop(format!(
            "CREATE TABLE `{table}` (id INT PRIMARY KEY, v VECTOR(2) NOT NULL, \
             VECTOR INDEX (v) DISTANCE=euclidean)"
        ))?;
        conn.query_drop(format!(
            "INSERT INTO `{table}` VALUES (1, VEC_FromText('[0,0]')), (2, VEC_FromText('[1,1]'))"
        ))?;
        conn.query_first::<i64, _>(format!(
            "SELECT id FROM `{table}` ORDER BY VEC_DISTANCE_EUCLIDEAN(v, VEC_FromText('[0.9,0.9]')) LIMIT 1"
        ))
    })();
    let dropped = conn.query_drop(format!("DROP TABLE IF EXISTS `{table}`"));
    let nearest = result.map_err(|e| mariadb_error(url, context, e))?;
    dropped.map_err(|e| mariadb_error(url, "dropping the test table", e))?;
    if nearest != Some(2) {
        return Err(Error::Server(format!(
            "MariaDB at {url}: a vector index query on a test table returned {nearest:?}, expected row 2"
        )));
    }
    Ok(())
}
