//! MariaDB query connection: one server-side prepared statement per `k`, the query vector sent
//! as raw little-endian f32 bytes wrapped in `CAST(? AS BINARY)` (a plain byte parameter is
//! sent in the client charset and rejected as a vector).

use super::ALGORITHM;
use super::errors::sql_err;
use crate::backend::Searcher;
use crate::backend::cost::{DataDirectory, ProcessHint, Statements};
use crate::backend::args::Args;
use crate::backend::prepared::PreparedFor;
use crate::params::Params;
use crate::{Error, Metric, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Statement};

/// The exact query text both the searcher and EXPLAIN use; `filter` is empty or a
/// ` WHERE ...` clause ([`crate::backend::filter::where_clause`]).
pub fn query_sql(table: &str, metric: Metric, k: usize, filter: &str) -> String {
    let f = match metric {
        Metric::Euclidean => "VEC_DISTANCE_EUCLIDEAN",
        Metric::Angular => "VEC_DISTANCE_COSINE",
    };
    format!("SELECT id FROM {table}{filter} ORDER BY {f}(v, CAST(? AS BINARY)) LIMIT {k}")
}

/// The server setting of the `ef_search` query arg.
pub use super::decl::EF_SEARCH_SETTING;

/// The session setting of checked query args: `ef_search`, or the server's default when a
/// point leaves it out (nothing carries over from the previous point).
pub fn settings_sql(args: &Args) -> String {
    let value = args.int("ef_search").map_or("DEFAULT".into(), |ef| ef.to_string());
    format!("SET SESSION {EF_SEARCH_SETTING} = {value}")
}

/// The query vector as the bytes of a MariaDB `VECTOR`.
pub fn vector_bytes(query: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(query.len() * 4);
    for x in query {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

/// One MariaDB query connection.
pub struct MariaSearcher {
    pub(super) conn: Conn,
    pub(super) table: String,
    pub(super) metric: Metric,
    pub(super) dimension: usize,
    /// The table's filter attribute columns, if loaded.
    pub(super) attrs: Option<std::sync::Arc<crate::backend::filter::Attributes>>,
    /// The filter of the query args set last (empty: none).
    pub(super) filter: String,
    pub(super) stmt: PreparedFor<Statement>,
}

impl Searcher for MariaSearcher {
    fn set_query_args(&mut self, query_args: &Params) -> Result<()> {
        let args = ALGORITHM.query_args(query_args)?;
        let attrs = self.attrs.as_deref();
        crate::backend::filter::check_attributes(ALGORITHM.name, &args, attrs, "query")?;
        self.conn
            .query_drop(settings_sql(&args))
            .map_err(|e| sql_err(e, "setting query args"))?;
        let filter = crate::backend::filter::where_clause(&args, attrs);
        if filter != self.filter {
            self.filter = filter;
            self.stmt = PreparedFor::new();
        }
        Ok(())
    }

    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()> {
        ids.clear();
        crate::backend::table::check_query(query, self.dimension)?;
        let (conn, table, metric, filter) =
            (&mut self.conn, &self.table, self.metric, &self.filter);
        let stmt = self.stmt.get(k, |k| {
            conn.prep(query_sql(table, metric, k, filter))
                .map_err(|e| sql_err(e, "preparing the query"))
        })?;
        let rows = self
            .conn
            .exec_iter(&stmt, (vector_bytes(query),))
            .map_err(|e| sql_err(e, "running a query"))?;
        for row in rows {
            let row = row.map_err(|e| sql_err(e, "reading query results"))?;
            let id: i64 = row
                .get_opt(0)
                .and_then(|r| r.ok())
                .ok_or_else(|| Error::Backend("query returned a non-integer id".into()))?;
            ids.push(id);
        }
        Ok(())
    }

    fn process_hint(&mut self) -> ProcessHint {
        super::cost::PROCESS
    }

    fn statements(&mut self) -> Statements {
        super::cost::statements(&mut self.conn, &self.table)
    }

    fn data_directory(&mut self) -> DataDirectory {
        super::cost::data_directory(&mut self.conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_text_matches_metric() {
        let q = query_sql("`a`.`t`", Metric::Angular, 10, "");
        assert!(
            q.contains("VEC_DISTANCE_COSINE(v, CAST(? AS BINARY)) LIMIT 10"),
            "{q}"
        );
        let q = query_sql("`a`.`t`", Metric::Euclidean, 5, " WHERE attr < 7");
        assert_eq!(
            q,
            "SELECT id FROM `a`.`t` WHERE attr < 7 ORDER BY VEC_DISTANCE_EUCLIDEAN(v, CAST(? AS \
             BINARY)) LIMIT 5"
        );
    }

    #[test]
    fn ef_search_is_validated() {
        let p = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
        let args = ALGORITHM.query_args(&p(json!({"ef_search": 40}))).unwrap();
        assert_eq!(settings_sql(&args), "SET SESSION mhnsw_ef_search = 40");
        let e = ALGORITHM.query_args(&p(json!({"ef_search": 0}))).unwrap_err();
        assert!(e.to_string().contains("1..=10000"), "{e}");
        let e = ALGORITHM.query_args(&p(json!({"efSearch": 5}))).unwrap_err();
        assert!(e.to_string().contains("efSearch"), "{e}");
        assert_eq!(
            settings_sql(&Args::default()),
            "SET SESSION mhnsw_ef_search = DEFAULT"
        );
    }

    #[test]
    fn bytes_are_little_endian_f32() {
        assert_eq!(vector_bytes(&[1.0, -2.0]), [0, 0, 128, 63, 0, 0, 0, 192]);
    }
}
