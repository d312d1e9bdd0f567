//! PostgreSQL's SQL flavour for the shared machinery ([`crate::backend::sql`]).

use crate::Result;
use crate::backend::sql::guard::fnv1a;
use crate::backend::sql::{Arg, Dialect, SqlConn, TableName};

/// `classid` of annbench's PostgreSQL advisory locks (the lock name's hash is the `objid`).
const LOCK_CLASS: i32 = 0x616e_6e62; // "annb"

/// The advisory lock's `objid` for the lock `name` (a stable 32-bit hash of it).
fn objid(name: &str) -> i64 {
    (fnv1a(name.as_bytes()) & 0x7fff_ffff) as i64
}

/// PostgreSQL's [`Dialect`].
#[derive(Debug, Clone, Copy)]
pub struct PostgresDialect;

/// The one [`PostgresDialect`], as a PostgreSQL connection's [`SqlConn::dialect`].
pub static DIALECT: PostgresDialect = PostgresDialect;

impl Dialect for PostgresDialect {
    /// Double quotes.
    fn quote(&self, ident: &str) -> String {
        format!("\"{ident}\"")
    }

    /// `$n`.
    fn placeholder(&self, n: usize) -> String {
        format!("${n}")
    }

    /// Unquoted (both parts are checked lower-case identifiers), as in PostgreSQL's plans and
    /// `pg_stat_activity`.
    fn qualified(&self, t: &TableName) -> String {
        format!("{}.{}", t.schema, t.name)
    }

    /// `string_agg` of the column as text (`information_schema` columns are
    /// `sql_identifier`s).
    fn comma_joined(&self, column: &str) -> String {
        format!("string_agg({column}::text, ',')")
    }

    fn int8_type(&self) -> &'static str {
        "int8"
    }

    fn cast_int8(&self, expr: &str) -> String {
        format!("({expr})::int8")
    }

    fn attribute_type(&self) -> &'static str {
        "int4"
    }

    /// Only this session's temporary table (in `pg_temp`), never a regular table of that name.
    fn drop_temporary_table(&self, name: &str) -> String {
        format!("DROP TABLE IF EXISTS pg_temp.{name}")
    }

    /// `UPDATE ... SET ... FROM`.
    fn update_from(&self, t: &TableName, source: &str, columns: &[&str]) -> String {
        let set: Vec<String> = columns.iter().map(|n| format!("{n} = s.{n}")).collect();
        format!(
            "UPDATE {} AS t SET {} FROM {source} AS s WHERE t.id = s.id",
            self.qualified(t),
            set.join(", ")
        )
    }

    /// `VACUUM (ANALYZE)`: the UPDATE wrote a new version of every row; reclaim the old ones
    /// and refresh the statistics the planner chooses between the vector index and the B-trees
    /// with.
    fn after_full_update(&self, t: &TableName) -> Option<String> {
        Some(format!("VACUUM (ANALYZE) {}", self.qualified(t)))
    }

    /// An index lives in its table's schema.
    fn drop_index(&self, t: &TableName, name: &str) -> String {
        format!("DROP INDEX IF EXISTS {}.{name}", t.schema)
    }

    fn analyze(&self, t: &TableName) -> String {
        format!("ANALYZE {}", self.qualified(t))
    }

    /// `pg_try_advisory_lock` on (`LOCK_CLASS`, a 32-bit hash of `name`).
    fn try_lock<'a>(&self, name: &'a str) -> (String, Vec<Arg<'a>>) {
        (
            format!("SELECT pg_try_advisory_lock({LOCK_CLASS}, $1::int4)::int4"),
            vec![Arg::Int(objid(name))],
        )
    }

    /// The `pg_stat_activity` row of the backend granted the advisory lock (the two-key form
    /// is `objsubid` 2).
    fn lock_holder<'a>(&self, name: &'a str) -> (&'static str, Vec<Arg<'a>>) {
        (
            "SELECT a.pid::int8, coalesce(host(a.client_addr), 'a local socket'), \
                    extract(epoch FROM now() - a.backend_start)::int8, \
                    CASE WHEN a.state = 'active' THEN a.query END \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted \
               AND l.classid = $1::int4::oid AND l.objid = $2::int4::oid AND l.objsubid = 2 \
             LIMIT 1",
            vec![Arg::Int(i64::from(LOCK_CLASS)), Arg::Int(objid(name))],
        )
    }

    fn unlock_all(&self) -> &'static str {
        "SELECT pg_advisory_unlock_all()"
    }

    /// Terminate the backend: its build is rolled back with it.
    fn stop_session(&self, c: &mut dyn SqlConn, session: i64) -> Result<()> {
        c.first_row(
            "SELECT pg_terminate_backend($1::int4)",
            &[Arg::Int(session)],
            "stopping a dead run's statement",
        )
        .map(|_| ())
    }
}
