//! MariaDB's sources of server cost: the `mariadbd` process (all its threads, read from
//! `/proc` by the runner), `performance_schema` statement statistics (execution time of the
//! search statement, for any server) and the InnoDB buffer pool's read counters.

use crate::backend::cost::{
    CostSources, DataDirectory, ProcessHint, StatementCounters, Statements,
};
use mysql::Conn;
use mysql::prelude::Queryable;

/// The server's process commands (`mysqld` in older packages).
pub const PROCESS: ProcessHint = ProcessHint::WholeServer(super::decl::DECL.server_commands);

/// The server's `@@datadir`.
pub fn data_directory(conn: &mut Conn) -> DataDirectory {
    match conn.query_first::<String, _>("SELECT @@datadir") {
        Ok(Some(dir)) => DataDirectory::Path(dir),
        Ok(None) => DataDirectory::Refused("MariaDB gave no @@datadir".into()),
        Err(e) => DataDirectory::Refused(format!("MariaDB did not tell @@datadir ({e})")),
    }
}

/// Name of the source, recorded with results.
pub const SOURCE: &str = "performance_schema statement statistics";

/// The search statement's counters: the executions of the connections that hold a prepared
/// SELECT with a vector distance on `table` (as written in the query, quoted), summed. Timer
/// values are picoseconds. The InnoDB buffer pool's logical and physical reads are the
/// server's global counters (MariaDB keeps no per-statement figure): hits = read requests
/// that did not go to disk.
pub fn statements(conn: &mut Conn, table: &str) -> Statements {
    match conn.query_first::<u32, _>("SELECT @@performance_schema") {
        Ok(Some(1)) => {}
        Ok(_) => {
            return Statements::unavailable(
                "performance_schema is off: add performance_schema=ON under [mariadbd] in the \
                 server's my.cnf and restart MariaDB",
            );
        }
        Err(e) => return Statements::unavailable(format!("cannot read @@performance_schema: {e}")),
    }
    // Executions of server-side prepared statements (how annbench queries) get no statement
    // digest in MariaDB, and their instances count nothing unless a statement-event consumer
    // is on: take the `statement/com/Execute` summary of every thread that holds the search
    // statement prepared. Sent as text (not prepared), so this query is no Execute itself.
    let sql = format!(
        "SELECT CAST(COALESCE(SUM(COUNT_STAR), 0) AS UNSIGNED), \
         CAST(COALESCE(SUM(SUM_TIMER_WAIT), 0) AS DOUBLE) \
         FROM performance_schema.events_statements_summary_by_thread_by_event_name \
         WHERE EVENT_NAME = 'statement/com/Execute' AND THREAD_ID IN \
         (SELECT OWNER_THREAD_ID FROM performance_schema.prepared_statements_instances \
         WHERE SQL_TEXT LIKE 'SELECT %' AND SQL_TEXT LIKE '%VEC\\_DISTANCE%' \
         AND LOCATE('{}', SQL_TEXT) > 0)",
        table.replace('\\', "\\\\").replace('\'', "''")
    );
    let row: Option<(u64, f64)> = match conn.query_first(sql) {
        Ok(r) => r,
        Err(e) => {
            return Statements::unavailable(format!(
                "performance_schema statement statistics could not be read: {e} (the user \
                 needs SELECT on performance_schema)"
            ));
        }
    };
    let (calls, picos) = row.unwrap_or_default();
    let pool = conn
        .query::<(String, u64), _>(
            "SELECT VARIABLE_NAME, CAST(VARIABLE_VALUE AS UNSIGNED) \
             FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN \
             ('INNODB_BUFFER_POOL_READ_REQUESTS', 'INNODB_BUFFER_POOL_READS')",
        )
        .unwrap_or_default();
    let get = |n: &str| {
        pool.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| *v)
    };
    let requests = get("INNODB_BUFFER_POOL_READ_REQUESTS");
    let reads = get("INNODB_BUFFER_POOL_READS");
    Statements::Counters {
        counters: StatementCounters {
            calls,
            exec_seconds: picos / 1e12,
            buffer_hits: requests.zip(reads).map(|(q, r)| q.saturating_sub(r)),
            buffer_reads: reads,
        },
        source: SOURCE,
    }
}

/// What `servers check` shows about the server-cost sources.
pub fn sources(conn: &mut Conn) -> CostSources {
    let state = match statements(conn, "annbench_no_such_table") {
        Statements::Counters { .. } => {
            "available (server execution time per query; InnoDB buffer pool reads, server-wide)"
                .to_string()
        }
        Statements::Unavailable(why) => format!("unavailable: {why}"),
    };
    vec![
        (SOURCE.to_string(), state),
        ("/proc".to_string(), crate::backend::cost::describe_local(PROCESS)),
    ]
}
