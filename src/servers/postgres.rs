//! `servers check` for PostgreSQL: version, pgvector (enabled where allowed) proved on a
//! scratch table inside a rolled-back transaction, settings.

use super::ServerCheck;
use super::rules::{PostgresSettings, postgres_warnings};
use crate::backend::ServerInfo;
use crate::connect::{
    MIN_PGVECTOR_HALFVEC, ServerUrl, connect_postgres, ensure_pgvector, postgres_error,
};
use crate::{Error, Result};

/// Settings shown, in this order.
const SHOWN: &[&str] = &[
    "shared_buffers",
    "maintenance_work_mem",
    "max_parallel_maintenance_workers",
    "max_parallel_workers_per_gather",
    "work_mem",
    "effective_cache_size",
    "jit",
    "max_connections",
];

/// Version (with pgvector's) and the settings that shape results, for the result files.
/// Enables pgvector like [`ensure_pgvector`], and fails like it.
pub fn postgres_server_info(client: &mut postgres::Client, url: &ServerUrl) -> Result<ServerInfo> {
    let pgvector = ensure_pgvector(client, url)?;
    let version: String = client
        .query_one("SELECT current_setting('server_version')", &[])
        .map_err(|e| postgres_error(url, "reading the version", e))?
        .get(0);
    let settings = read_settings(client, url)?
        .iter()
        .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
        .collect();
    Ok(ServerInfo {
        version: format!("PostgreSQL {version}, pgvector {}", pgvector.text),
        settings,
    })
}

/// Rows of (name, current_setting, raw setting, unit) for [`SHOWN`].
fn read_settings(client: &mut postgres::Client, url: &ServerUrl) -> Result<Vec<postgres::Row>> {
    client
        .query(
            "SELECT name, current_setting(name), setting, coalesce(unit, '') \
             FROM pg_settings WHERE name = ANY($1)",
            &[&SHOWN],
        )
        .map_err(|e| postgres_error(url, "reading settings", e))
}

pub(super) fn check(url: &ServerUrl, c: &mut ServerCheck, ram: u64) -> Result<()> {
    let mut client = connect_postgres(url)?;
    let row = client
        .query_one("SELECT current_setting('server_version')", &[])
        .map_err(|e| postgres_error(url, "reading the version", e))?;
    c.version = Some(format!("PostgreSQL {}", row.get::<_, String>(0)));
    let pgvector = ensure_pgvector(&mut client, url)?;

    let rows = read_settings(&mut client, url)?;
    let find = |name: &str| rows.iter().find(|r| r.get::<_, String>(0) == name);
    for name in SHOWN {
        if let Some(r) = find(name) {
            c.settings.push((name.to_string(), r.get(1)));
        }
    }
    let bytes = |name: &str| {
        find(name).map_or(0, |r| {
            let raw: u64 = r.get::<_, String>(2).parse().unwrap_or(0);
            raw * unit_bytes(&r.get::<_, String>(3))
        })
    };
    let settings = PostgresSettings {
        shared_buffers: bytes("shared_buffers"),
        maintenance_work_mem: bytes("maintenance_work_mem"),
        max_parallel_maintenance_workers: bytes("max_parallel_maintenance_workers"),
        pgvector: pgvector.clone(),
    };

    let halfvec = pgvector.at_least(MIN_PGVECTOR_HALFVEC);
    vector_smoke_test(&mut client, url, halfvec)?;
    c.vector_support = Some(format!(
        "pgvector {pgvector} ({}; built and queried a test HNSW index)",
        if halfvec {
            "vector, halfvec"
        } else {
            "vector only"
        }
    ));
    c.warnings = postgres_warnings(&settings, ram);
    Ok(())
}

/// `8kB` -> 8192; a unitless setting counts as 1.
fn unit_bytes(unit: &str) -> u64 {
    let (num, suffix) = unit.split_at(
        unit.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(unit.len()),
    );
    let n: u64 = num.parse().unwrap_or(1);
    n * match suffix {
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => 1,
    }
}

/// A tiny table with HNSW indexes, queried through the index, all in a transaction that is
/// rolled back: proves CREATE on the schema and that pgvector works, and leaves nothing.
fn vector_smoke_test(client: &mut postgres::Client, url: &ServerUrl, halfvec: bool) -> Result<()> {
    let context = "creating a test table with an HNSW index";
    let mut tx = client
        .transaction()
        .map_err(|e| postgres_error(url, context, e))?;
    let table = super::scratch_table();
    let mut sql = format!(
        "CREATE TABLE {table} (id int PRIMARY KEY, v vector(2) NOT NULL); \
         INSERT INTO {table} VALUES (1, '[0,0]'), (2, '[1,1]'); \
         CREATE INDEX ON {table} USING hnsw (v vector_l2_ops); SET LOCAL enable_seqscan = off;"
    );
    if halfvec {
        sql.push_str(&format!(
            "CREATE INDEX ON {table} USING hnsw ((v::halfvec(2)) halfvec_l2_ops);"
        ));
    }
    tx.batch_execute(&sql)
        .map_err(|e| postgres_error(url, context, e))?;
    let row = tx
        .query_one(
            &format!("SELECT id FROM {table} ORDER BY v <-> '[0.9,0.9]' LIMIT 1"),
            &[],
        )
        .map_err(|e| postgres_error(url, context, e))?;
    let nearest: i32 = row.get(0);
    drop(tx); // rolls back
    if nearest != 2 {
        return Err(Error::Server(format!(
            "PostgreSQL at {url}: an HNSW query on a test table returned row {nearest}, expected 2"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn units() {
        assert_eq!(super::unit_bytes("8kB"), 8192);
        assert_eq!(super::unit_bytes("kB"), 1024);
        assert_eq!(super::unit_bytes(""), 1);
    }
}
