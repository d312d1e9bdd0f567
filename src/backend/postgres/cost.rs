//! PostgreSQL's sources of server cost: the backend process of a connection
//! (`pg_backend_pid()`, read from `/proc` by the runner) and `pg_stat_statements` (execution
//! time and shared-buffer hits and reads of the search statement, for any server).

use crate::backend::cost::{
    CostSources, DataDirectory, ProcessHint, StatementCounters, Statements,
};
use postgres::Client;

/// The server process serving this connection.
pub fn backend_pid(client: &mut Client) -> Option<i32> {
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .ok()
        .map(|r| r.get::<_, i32>(0))
}

/// The server's `data_directory`, which only superusers and members of
/// `pg_read_all_settings` may read.
pub fn data_directory(client: &mut Client) -> DataDirectory {
    match client.query_one("SELECT current_setting('data_directory')", &[]) {
        Ok(row) => DataDirectory::Path(row.get::<_, String>(0)),
        Err(e) => DataDirectory::Refused(format!(
            "PostgreSQL did not tell the data directory ({}; GRANT pg_read_all_settings TO \
             the benchmark user allows it)",
            e.as_db_error()
                .map_or(e.to_string(), |d| d.message().to_string())
        )),
    }
}

/// Name of the source, recorded with results.
pub const SOURCE: &str = "pg_stat_statements";

/// The search statement's counters: every statement of this role in this database whose text
/// is a SELECT naming `table` (the query text of each k and query-argument set is its own
/// entry; the statistics query itself is left out). Execution time adds planning time, which
/// `pg_stat_statements` counts only with `pg_stat_statements.track_planning = on` (off by
/// default: a prepared statement may still be planned per execution, custom plans).
pub fn statements(client: &mut Client, table: &str) -> Statements {
    let sql = "SELECT coalesce(sum(calls), 0)::int8, coalesce(sum(total_exec_time + total_plan_time), 0)::float8, \
               coalesce(sum(shared_blks_hit), 0)::int8, coalesce(sum(shared_blks_read), 0)::int8 \
               FROM pg_stat_statements \
               WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = current_user) \
               AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
               AND query ILIKE 'SELECT %' AND strpos(query, $1) > 0 \
               AND strpos(query, 'pg_stat_statements') = 0";
    match client.query_one(sql, &[&table]) {
        Ok(row) => Statements::Counters {
            counters: StatementCounters {
                calls: row.get::<_, i64>(0).max(0) as u64,
                exec_seconds: row.get::<_, f64>(1) / 1000.0,
                buffer_hits: Some(row.get::<_, i64>(2).max(0) as u64),
                buffer_reads: Some(row.get::<_, i64>(3).max(0) as u64),
            },
            source: SOURCE,
        },
        Err(e) => Statements::Unavailable(why_unavailable(client, &e)),
    }
}

/// Why `pg_stat_statements` could not be read, and how to enable it.
fn why_unavailable(client: &mut Client, e: &postgres::Error) -> String {
    let preloaded = client
        .query_one("SELECT current_setting('shared_preload_libraries')", &[])
        .map(|r| r.get::<_, String>(0).contains("pg_stat_statements"))
        .unwrap_or(false);
    let db = client
        .query_one("SELECT current_database()", &[])
        .map(|r| r.get::<_, String>(0))
        .unwrap_or_else(|_| "the database".into());
    if !preloaded {
        "pg_stat_statements is not loaded: add shared_preload_libraries = 'pg_stat_statements' \
         to postgresql.conf, restart PostgreSQL, then run CREATE EXTENSION pg_stat_statements \
         in database "
            .to_string()
            + &db
            + " as a superuser"
    } else if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) {
        format!(
            "pg_stat_statements is loaded but not created in database {db}: run CREATE \
             EXTENSION pg_stat_statements there as a superuser"
        )
    } else {
        let msg = e
            .as_db_error()
            .map_or(e.to_string(), |d| d.message().to_string());
        format!("pg_stat_statements could not be read: {msg}")
    }
}

/// What `servers check` shows about the server-cost sources.
pub fn sources(client: &mut Client) -> CostSources {
    let state = match statements(client, "annbench_no_such_table") {
        Statements::Counters { .. } => {
            "available (server execution time, shared-buffer hits and reads per query)".to_string()
        }
        Statements::Unavailable(why) => format!("unavailable: {why}"),
    };
    let hint = backend_pid(client).map_or(ProcessHint::None, ProcessHint::Backend);
    vec![
        (SOURCE.to_string(), state),
        (
            "/proc".to_string(),
            crate::backend::cost::describe_local(hint),
        ),
    ]
}
