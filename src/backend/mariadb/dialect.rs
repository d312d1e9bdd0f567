//! MariaDB's SQL flavour for the shared machinery ([`crate::backend::sql`]).

use super::KILLABLE_STATE;
use crate::Result;
use crate::backend::sql::{Arg, Dialect, SqlConn, TableName};

/// MariaDB's [`Dialect`].
#[derive(Debug, Clone, Copy)]
pub struct MariaDbDialect;

/// The one [`MariaDbDialect`], as a MariaDB connection's [`SqlConn::dialect`].
pub static DIALECT: MariaDbDialect = MariaDbDialect;

impl Dialect for MariaDbDialect {
    /// Backquotes.
    fn quote(&self, ident: &str) -> String {
        format!("`{ident}`")
    }

    /// `?`, whatever `n`.
    fn placeholder(&self, _n: usize) -> String {
        "?".into()
    }

    /// Both parts quoted; the schema is the MariaDB database.
    fn qualified(&self, t: &TableName) -> String {
        format!("{}.{}", self.quote(&t.schema), self.quote(&t.name))
    }

    fn comma_joined(&self, column: &str) -> String {
        format!("GROUP_CONCAT({column})")
    }

    fn int8_type(&self) -> &'static str {
        "SIGNED"
    }

    fn cast_int8(&self, expr: &str) -> String {
        format!("CAST({expr} AS SIGNED)")
    }

    fn attribute_type(&self) -> &'static str {
        "INT"
    }

    fn drop_temporary_table(&self, name: &str) -> String {
        format!("DROP TEMPORARY TABLE IF EXISTS {name}")
    }

    /// `UPDATE ... JOIN ... SET`.
    fn update_from(&self, t: &TableName, source: &str, columns: &[&str]) -> String {
        let set: Vec<String> = columns.iter().map(|n| format!("t.{n} = s.{n}")).collect();
        format!(
            "UPDATE {} AS t JOIN {source} AS s ON t.id = s.id SET {}",
            self.qualified(t),
            set.join(", ")
        )
    }

    /// `None`: nothing to reclaim.
    fn after_full_update(&self, _t: &TableName) -> Option<String> {
        None
    }

    fn drop_index(&self, t: &TableName, name: &str) -> String {
        format!("DROP INDEX IF EXISTS {name} ON {}", self.qualified(t))
    }

    fn analyze(&self, t: &TableName) -> String {
        format!("ANALYZE TABLE {}", self.qualified(t))
    }

    /// `GET_LOCK` with no wait (MariaDB's lock names hold at most 64 characters).
    fn try_lock<'a>(&self, name: &'a str) -> (String, Vec<Arg<'a>>) {
        ("SELECT GET_LOCK(?, 0)".into(), vec![Arg::Text(name)])
    }

    /// The processlist row of `IS_USED_LOCK`'s session.
    fn lock_holder<'a>(&self, name: &'a str) -> (&'static str, Vec<Arg<'a>>) {
        (
            "SELECT p.ID, p.HOST, p.TIME, p.INFO FROM information_schema.PROCESSLIST p \
             WHERE p.ID = IS_USED_LOCK(?)",
            vec![Arg::Text(name)],
        )
    }

    fn unlock_all(&self) -> &'static str {
        "SELECT RELEASE_ALL_LOCKS()"
    }

    /// `KILL QUERY`, but only while an `ALTER` is copying rows ([`KILLABLE_STATE`]), the one
    /// state where a kill is safe on 11.8 (see `mariadb/stop.rs`); in any other state the
    /// statement is left alone.
    fn stop_session(&self, c: &mut dyn SqlConn, session: i64) -> Result<()> {
        let state = c
            .first_row(
                "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?",
                &[Arg::Int(session)],
                "reading a dead run's statement",
            )
            .ok()
            .flatten()
            .and_then(|r| r.first().and_then(|s| s.text().map(str::to_string)));
        if state.as_deref() == Some(KILLABLE_STATE) {
            c.run(
                &format!("KILL QUERY {session}"),
                "stopping a dead run's statement",
            )
        } else {
            Ok(())
        }
    }
}
