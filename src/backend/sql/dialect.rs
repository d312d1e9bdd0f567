//! The SQL flavour of a server: every statement or fragment the shared machinery needs that
//! servers spell differently. Each SQL database implements [`Dialect`] once, in its own folder
//! (`src/backend/<database>/dialect.rs`), and its [`SqlConn`] returns it.

use super::{Arg, SqlConn, TableName};
use crate::Result;

/// What differs between SQL servers, for the statements the shared machinery sends. Every
/// identifier passed in is checked ([`crate::backend::table::check_ident`]).
pub trait Dialect: Sync {
    /// A checked identifier quoted for this server.
    fn quote(&self, ident: &str) -> String;

    /// The `n`th (1-based) bind parameter.
    fn placeholder(&self, n: usize) -> String;

    /// `schema.name` of `t` as the server spells it (in statements and error messages).
    fn qualified(&self, t: &TableName) -> String;

    /// An aggregate joining the text of `column` over a group's rows, separated by commas
    /// (the attribute columns a table has, from `information_schema.columns`).
    fn comma_joined(&self, column: &str) -> String;

    /// The signed 64-bit integer type, as `CAST(x AS <type>)` names it.
    fn int8_type(&self) -> &'static str;

    /// `expr` cast to a signed 64-bit integer (the attribute checksums).
    fn cast_int8(&self, expr: &str) -> String;

    /// The type of a filter attribute column added to a vector table.
    fn attribute_type(&self) -> &'static str;

    /// Drop the temporary table `name` of this session, if it exists.
    fn drop_temporary_table(&self, name: &str) -> String;

    /// Set `columns` of `t` (alias `t`) from the row of `source` (alias `s`) with the same
    /// `id`, in one statement.
    fn update_from(&self, t: &TableName, source: &str, columns: &[&str]) -> String;

    /// Run after an `UPDATE` that rewrote every row of `t`, where the server needs it (to
    /// reclaim old row versions and refresh the planner's statistics); `None` where not.
    fn after_full_update(&self, t: &TableName) -> Option<String>;

    /// Create the B-tree `name` on `column` of `t`, if missing.
    fn create_index(&self, t: &TableName, name: &str, column: &str) -> String {
        format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {} ({column})",
            self.qualified(t)
        )
    }

    /// Drop the index `name` of `t`, if it exists.
    fn drop_index(&self, t: &TableName, name: &str) -> String;

    /// Refresh the planner's statistics of `t`.
    fn analyze(&self, t: &TableName) -> String;

    /// Try to take, without waiting, the session-level advisory lock called `name` (at most
    /// 64 characters, see [`super::guard`]): a query whose one row is `1` when it was taken,
    /// and its arguments.
    fn try_lock<'a>(&self, name: &'a str) -> (String, Vec<Arg<'a>>);

    /// A query for the session holding the lock `name`, with its arguments: one row of
    /// (session id, client host, seconds connected, running statement or NULL).
    fn lock_holder<'a>(&self, name: &'a str) -> (&'static str, Vec<Arg<'a>>);

    /// A query releasing every advisory lock this session holds.
    fn unlock_all(&self) -> &'static str;

    /// Stop the statement of another session of this user, `session` (a dead run's build), on
    /// `c`, where that is safe; errors are the caller's to ignore.
    fn stop_session(&self, c: &mut dyn SqlConn, session: i64) -> Result<()>;
}
