//! `servers check` for MariaDB: version, VECTOR support proved on a scratch table, the
//! settings, and warnings for the ones that would distort a benchmark, each with the value to
//! set.

use super::errors::mariadb_error;
use super::server;
use crate::backend::server::{
    CheckReport, ConnectionLimit, MIB, floor, human_bytes, recommended, short,
};
use crate::connect::ServerUrl;
use crate::{Error, Result};
use mysql::prelude::Queryable;

/// The settings the warnings look at (bytes for sizes).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub mhnsw_max_cache_size: u64,
    pub innodb_buffer_pool_size: u64,
    pub local_infile: bool,
}

/// The [`crate::backend::Database`] entry: fill `report` for the server at `url`.
pub fn check(url: &ServerUrl, report: &mut CheckReport, ram: u64) -> Result<()> {
    let mut conn = server::connect(url)?;
    report.version = conn
        .query_first::<String, _>("SELECT VERSION()")
        .map_err(|e| mariadb_error(url, "reading the version", e))?;
    let info = server::server_info(&mut conn, url)?;
    let get = |name: &str| info.settings.get(name).map(String::as_str);
    let bytes = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    for name in server::settings() {
        if let Some(v) = get(name) {
            let shown = match name {
                "mhnsw_max_cache_size" | "innodb_buffer_pool_size" | "key_buffer_size" => {
                    human_bytes(bytes(name))
                }
                _ => v.to_string(),
            };
            report.settings.push((name.to_string(), shown));
        }
    }
    let settings = Settings {
        mhnsw_max_cache_size: bytes("mhnsw_max_cache_size"),
        innodb_buffer_pool_size: bytes("innodb_buffer_pool_size"),
        local_infile: get("local_infile") == Some("ON"),
    };
    vector_smoke_test(&mut conn, url)?;
    report.vector_support = Some(
        "VECTOR type and MHNSW index (built and queried a test table; every privilege a run \
         needs, PROCESS included)"
            .into(),
    );
    report.warnings = warnings(&settings, ram);
    report.cost_sources = super::cost::sources(&mut conn);
    Ok(())
}

/// Prove every privilege a run needs and that MHNSW works ([`super::privileges`]), in the
/// database a run keeps its tables in.
fn vector_smoke_test(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<()> {
    if url.database().is_empty() {
        return Err(Error::Config(format!(
            "MariaDB URL {url} names no database: add one to the path, e.g. .../annbench"
        )));
    }
    let db = crate::backend::BackendOptions::default().schema()?;
    super::privileges::check(conn, url, &db)
}

/// [`crate::backend::Database::connection_limit`]: `max_connections`, or the smaller
/// `max_user_connections` when one is set (0: none). The one more connection MariaDB keeps
/// for an administrator is not counted.
pub fn connection_limit_at(url: &ServerUrl) -> Result<ConnectionLimit> {
    let mut conn = server::connect(url)?;
    let (max, per_user) = conn
        .query_first::<(i64, i64), _>("SELECT @@max_connections, @@max_user_connections")
        .map_err(|e| mariadb_error(url, "reading the connection limits", e))?
        .unwrap_or((0, 0));
    let max = max.max(0) as usize;
    Ok(if per_user > 0 && (per_user as usize) < max {
        ConnectionLimit {
            most: per_user as usize,
            why: format!("max_user_connections {per_user}"),
        }
    } else {
        ConnectionLimit {
            most: max,
            why: format!("max_connections {max}"),
        }
    })
}

/// [`crate::backend::Database::privileges`]: connect and prove what a run in `db` needs.
pub fn privileges_at(url: &ServerUrl, db: &str) -> Result<()> {
    let mut conn = server::connect(url)?;
    super::privileges::check(&mut conn, url, db)
}

/// Warnings for a MariaDB server on a machine with `ram` bytes.
pub fn warnings(s: &Settings, ram: u64) -> Vec<String> {
    let rec = recommended(ram);
    let mut w = Vec::new();
    if s.mhnsw_max_cache_size < floor(ram) {
        let default = if s.mhnsw_max_cache_size == 16 * MIB {
            " (the default)"
        } else {
            ""
        };
        w.push(format!(
            "mhnsw_max_cache_size is {}{default}: a vector index larger than this is evicted and \
             reloaded during queries, which distorts QPS. Set it above the largest index, e.g. \
             SET GLOBAL mhnsw_max_cache_size = {rec}; (mhnsw_max_cache_size={} in my.cnf)",
            human_bytes(s.mhnsw_max_cache_size),
            short(rec)
        ));
    }
    if s.innodb_buffer_pool_size < floor(ram) {
        w.push(format!(
            "innodb_buffer_pool_size is {}: table reads hit the disk. Set it to about a quarter \
             of RAM, e.g. SET GLOBAL innodb_buffer_pool_size = {rec}; (innodb_buffer_pool_size={} \
             in my.cnf)",
            human_bytes(s.innodb_buffer_pool_size),
            short(rec)
        ));
    }
    if !s.local_infile {
        w.push(
            "local_infile is OFF: the fast bulk load (LOAD DATA LOCAL INFILE) is refused. \
             Set it: SET GLOBAL local_infile = ON; (local_infile=ON in my.cnf)"
                .to_string(),
        );
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::server::GIB;

    #[test]
    fn defaults_are_flagged_with_values_to_set() {
        let s = Settings {
            mhnsw_max_cache_size: 16 * MIB,
            innodb_buffer_pool_size: 128 * MIB,
            local_infile: false,
        };
        let w = warnings(&s, 16 * GIB);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("16.0 MiB (the default)") && w[0].contains("= 4294967296"));
        assert!(w[1].contains("innodb_buffer_pool_size=4G"));
        let good = Settings {
            mhnsw_max_cache_size: 4 * GIB,
            innodb_buffer_pool_size: 4 * GIB,
            local_infile: true,
        };
        assert!(warnings(&good, 16 * GIB).is_empty());
    }
}
