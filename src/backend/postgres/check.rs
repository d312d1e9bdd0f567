//! `servers check` for PostgreSQL: version, pgvector (enabled where allowed) proved on a
//! scratch table inside a rolled-back transaction, the settings, and warnings for the ones
//! that would distort a benchmark, each with the value to set.

use super::errors::postgres_error;
use super::server;
use crate::backend::server::{
    CheckReport, ConnectionLimit, Version, floor, human_bytes, recommended, short,
};
use crate::connect::{ServerKind, ServerUrl};
use crate::{Error, Result};

/// The settings the warnings look at (bytes for sizes).
#[derive(Debug, Clone)]
pub struct Settings {
    pub shared_buffers: u64,
    pub maintenance_work_mem: u64,
    pub max_parallel_maintenance_workers: u64,
    pub pgvector: Version,
}

/// The [`crate::backend::Database`] entry: fill `report` for the server at `url`.
pub fn check(url: &ServerUrl, report: &mut CheckReport, ram: u64) -> Result<()> {
    let mut client = server::connect(url)?;
    let row = client
        .query_one("SELECT current_setting('server_version')", &[])
        .map_err(|e| postgres_error(url, "reading the version", e))?;
    report.version = Some(format!("PostgreSQL {}", row.get::<_, String>(0)));
    let pgvector = server::ensure_pgvector(&mut client, url)?;
    let info = server::server_info(&mut client, url)?;
    report.settings = server::settings()
        .iter()
        .filter_map(|n| info.settings.get(*n).map(|v| (n.to_string(), v.clone())))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let rows = client
        .query(
            "SELECT name, setting::int8 * CASE unit WHEN '8kB' THEN 8192 WHEN 'kB' THEN 1024 \
             WHEN 'MB' THEN 1048576 ELSE 1 END FROM pg_settings WHERE name = ANY($1)",
            &[&vec![
                "shared_buffers",
                "maintenance_work_mem",
                "max_parallel_maintenance_workers",
            ]],
        )
        .map_err(|e| postgres_error(url, "reading settings", e))?;
    let bytes = |name: &str| {
        rows.iter()
            .find(|r| r.get::<_, String>(0) == name)
            .map_or(0, |r| r.get::<_, i64>(1).max(0) as u64)
    };
    let settings = Settings {
        shared_buffers: bytes("shared_buffers"),
        maintenance_work_mem: bytes("maintenance_work_mem"),
        max_parallel_maintenance_workers: bytes("max_parallel_maintenance_workers"),
        pgvector: pgvector.clone(),
    };
    let bits = pgvector.at_least((0, 7));
    vector_smoke_test(&mut client, url, bits)?;
    report.vector_support = Some(format!(
        "pgvector {pgvector} ({}; built and queried a test HNSW index)",
        if bits {
            "vector, halfvec, bit"
        } else {
            "vector only"
        }
    ));
    report.warnings = warnings(&settings, ram);
    report.cost_sources = super::cost::sources(&mut client);
    Ok(())
}

/// A tiny table with HNSW indexes in the schema a run uses, queried through the index, all in
/// a transaction that is rolled back: proves every privilege a run needs and that pgvector
/// works, and leaves nothing.
fn vector_smoke_test(client: &mut postgres::Client, url: &ServerUrl, bits: bool) -> Result<()> {
    let schema = crate::backend::BackendOptions::default().schema()?;
    privileges(client, url, &schema, bits)
}

/// [`crate::backend::Database::connection_limit`]: `max_connections` less the connections
/// reserved for superusers and for `pg_use_reserved_connections` (PostgreSQL 16+) unless this
/// role is one, and the role's and the database's `CONNECTION LIMIT` (superusers pass all).
pub fn connection_limit_at(url: &ServerUrl) -> Result<ConnectionLimit> {
    let mut client = server::connect(url)?;
    let row = client
        .query_one(
            "SELECT current_setting('max_connections')::int, \
                    current_setting('superuser_reserved_connections')::int, \
                    coalesce(current_setting('reserved_connections', true)::int, 0), \
                    r.rolsuper, r.rolconnlimit, d.datconnlimit, \
                    EXISTS (SELECT 1 FROM pg_roles u \
                            WHERE u.rolname = 'pg_use_reserved_connections' \
                              AND pg_has_role(current_user, u.oid, 'MEMBER')) \
             FROM pg_roles r, pg_database d \
             WHERE r.rolname = current_user AND d.datname = current_database()",
            &[],
        )
        .map_err(|e| postgres_error(url, "reading the connection limits", e))?;
    let count = |i: usize| row.get::<_, i32>(i).max(0) as usize;
    let (max, for_superusers, reserved) = (count(0), count(1), count(2));
    if row.get::<_, bool>(3) {
        return Ok(ConnectionLimit {
            most: max,
            why: format!("max_connections {max}"),
        });
    }
    // Members of pg_use_reserved_connections may use the reserved_connections.
    let reserved = if row.get::<_, bool>(6) { 0 } else { reserved };
    let mut why =
        format!("max_connections {max} less superuser_reserved_connections {for_superusers}");
    if reserved > 0 {
        why.push_str(&format!(" and reserved_connections {reserved}"));
    }
    let mut limit = ConnectionLimit {
        most: max.saturating_sub(for_superusers + reserved),
        why,
    };
    for (i, whose) in [(4, "the role's"), (5, "the database's")] {
        let own = row.get::<_, i32>(i);
        if own >= 0 && (own as usize) < limit.most {
            limit = ConnectionLimit {
                most: own as usize,
                why: format!("{whose} CONNECTION LIMIT {own}"),
            };
        }
    }
    Ok(limit)
}

/// [`crate::backend::Database::privileges`]: connect and prove what a run in `schema` needs.
pub fn privileges_at(url: &ServerUrl, schema: &str) -> Result<()> {
    let mut client = server::connect(url)?;
    let pgvector = server::ensure_pgvector(&mut client, url)?;
    privileges(&mut client, url, schema, pgvector.at_least((0, 7)))
}

/// What a run does in `schema`, inside a rolled-back transaction: create the schema if
/// missing, a table, its indexes, a query through them; read and write the metadata table.
fn privileges(
    client: &mut postgres::Client,
    url: &ServerUrl,
    schema: &str,
    bits: bool,
) -> Result<()> {
    let context = "creating a test table with an HNSW index";
    let user = url.user();
    let db = url.database();
    let mut tx = client
        .transaction()
        .map_err(|e| postgres_error(url, context, e))?;
    let row = tx
        .query_one(
            "SELECT n.oid IS NOT NULL, \
                    coalesce(has_schema_privilege(n.oid, 'USAGE') \
                             AND has_schema_privilege(n.oid, 'CREATE'), \
                             has_database_privilege(current_database(), 'CREATE')), \
                    coalesce(has_table_privilege(m.oid, 'SELECT') \
                             AND has_table_privilege(m.oid, 'INSERT') \
                             AND has_table_privilege(m.oid, 'DELETE'), true) \
             FROM (SELECT 1) AS one \
             LEFT JOIN pg_namespace n ON n.nspname = $1 \
             LEFT JOIN pg_class m ON m.relnamespace = n.oid AND m.relname = 'annbench_tables'",
            &[&schema],
        )
        .map_err(|e| postgres_error(url, "reading privileges", e))?;
    let (exists, may_create, may_write_meta): (bool, bool, bool) =
        (row.get(0), row.get(1), row.get(2));
    if !may_create {
        let grant = if exists {
            format!("GRANT USAGE, CREATE ON SCHEMA {schema} TO {user}")
        } else {
            format!("GRANT CREATE ON DATABASE {db} TO {user}")
        };
        return Err(Error::Server(format!(
            "PostgreSQL at {url}: user '{user}' lacks a privilege: annbench keeps its tables in \
             schema {schema}, which {}. Grant it as a superuser, e.g. {grant}, or use a \
             database {user} owns",
            if exists {
                "it may not create tables in"
            } else {
                "does not exist and it may not create"
            }
        )));
    }
    if !may_write_meta {
        return Err(Error::Server(format!(
            "PostgreSQL at {url}: user '{user}' lacks a privilege on {schema}.annbench_tables \
             (annbench's record of loaded tables). Grant it as a superuser, e.g. GRANT SELECT, \
             INSERT, DELETE ON {schema}.annbench_tables TO {user}"
        )));
    }
    let table = format!("{schema}.{}", crate::backend::server::scratch_table());
    // CREATE SCHEMA needs CREATE on the database even with IF NOT EXISTS and the schema there:
    // a user who may create tables in the schema needs no more.
    let create_schema = if exists {
        String::new()
    } else {
        format!("CREATE SCHEMA IF NOT EXISTS {schema}; ")
    };
    let mut sql = format!(
        "{create_schema}CREATE TABLE {table} (id int PRIMARY KEY, v vector(2) NOT NULL); \
         INSERT INTO {table} VALUES (1, '[0,0]'), (2, '[1,1]'); \
         CREATE INDEX ON {table} USING hnsw (v vector_l2_ops); SET LOCAL enable_seqscan = off;"
    );
    if bits {
        sql.push_str(&format!(
            "CREATE INDEX ON {table} USING hnsw ((v::halfvec(2)) halfvec_l2_ops); \
             CREATE INDEX ON {table} USING hnsw ((binary_quantize(v)::bit(2)) bit_hamming_ops);"
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

/// Warnings for a PostgreSQL + pgvector server on a machine with `ram` bytes.
pub fn warnings(s: &Settings, ram: u64) -> Vec<String> {
    let rec = short(recommended(ram));
    let mut w = Vec::new();
    if s.maintenance_work_mem < floor(ram) {
        w.push(format!(
            "maintenance_work_mem is {}: an HNSW graph that does not fit is built much more \
             slowly, which inflates the build time. Set ALTER SYSTEM SET maintenance_work_mem = \
             '{rec}B'; SELECT pg_reload_conf();",
            human_bytes(s.maintenance_work_mem)
        ));
    }
    if s.shared_buffers < floor(ram) {
        w.push(format!(
            "shared_buffers is {}: index and table pages are read through the OS cache. Set \
             ALTER SYSTEM SET shared_buffers = '{rec}B'; and restart PostgreSQL",
            human_bytes(s.shared_buffers)
        ));
    }
    let v = &s.pgvector;
    let affected = v.at_least((0, 6)) && (v.major, v.minor, v.patch) <= (0, 8, 1);
    if affected && s.max_parallel_maintenance_workers > 0 {
        w.push(format!(
            "max_parallel_maintenance_workers is {} with pgvector {v}: parallel HNSW builds in \
             pgvector 0.6.0-0.8.1 have a memory-safety bug (CVE-2026-3172). Set ALTER SYSTEM SET \
             max_parallel_maintenance_workers = 0; SELECT pg_reload_conf(); or upgrade pgvector",
            s.max_parallel_maintenance_workers
        ));
    }
    let too_new: Vec<String> = crate::backend::ALGORITHMS
        .iter()
        .filter(|a| a.database.is_some_and(|d| d.kind == ServerKind::Postgres))
        .filter(|a| !v.at_least(a.min_version))
        .map(|a| format!("{} needs {}.{}", a.name, a.min_version.0, a.min_version.1))
        .collect();
    if !too_new.is_empty() {
        w.push(format!(
            "pgvector {v} is too old for some algorithms: {} (ALTER EXTENSION vector UPDATE \
             after upgrading the package)",
            too_new.join(", ")
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::server::{GIB, MIB};

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn pgvector_parallel_build_bug_range() {
        let mut s = Settings {
            shared_buffers: 4 * GIB,
            maintenance_work_mem: 4 * GIB,
            max_parallel_maintenance_workers: 2,
            pgvector: v("0.8.1"),
        };
        let cve = |s: &Settings| {
            warnings(s, 16 * GIB)
                .iter()
                .any(|w| w.contains("CVE-2026-3172"))
        };
        assert!(cve(&s));
        s.pgvector = v("0.8.2");
        assert!(!cve(&s));
        s.pgvector = v("0.5.1");
        assert!(!cve(&s));
        s.pgvector = v("0.6.0");
        assert!(cve(&s));
        s.max_parallel_maintenance_workers = 0;
        assert!(!cve(&s));
        s.pgvector = v("0.8.0");
        assert!(warnings(&s, 16 * GIB).is_empty());
    }

    #[test]
    fn small_memory_and_old_pgvector() {
        let s = Settings {
            shared_buffers: 128 * MIB,
            maintenance_work_mem: 64 * MIB,
            max_parallel_maintenance_workers: 0,
            pgvector: v("0.6.2"),
        };
        let w = warnings(&s, 16 * GIB);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("maintenance_work_mem = '4GB'"), "{}", w[0]);
        assert!(
            w[2].contains("too old") && w[2].contains("pgvector_halfvec needs 0.7"),
            "{}",
            w[2]
        );
        assert!(!w[2].contains("pgvector needs"), "{}", w[2]);
    }
}
