//! pgvector query connection and the binary vector parameter shared with the loader.

use super::{Variant, pg_err};
use crate::backend::Searcher;
use crate::backend::prepared::PreparedFor;
use crate::backend::query_args::ef_search;
use crate::params::Params;
use crate::{Metric, Result};
use bytes::BufMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Statement};

/// Valid `ef_search` range (pgvector's `hnsw.ef_search`).
pub const EF_SEARCH: std::ops::RangeInclusive<i64> = 1..=1000;

/// A borrowed f32 vector sent in pgvector's binary format: as `vector` (f32) or, when the
/// server asks for `halfvec`, rounded to f16. Borrowing avoids a copy per query or row.
#[derive(Debug)]
pub struct VecParam<'a>(pub &'a [f32]);

impl ToSql for VecParam<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        w: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        w.put_u16(u16::try_from(self.0.len())?);
        w.put_u16(0);
        if ty.name() == "halfvec" {
            for x in self.0 {
                w.put_u16(half::f16::from_f32(*x).to_bits());
            }
        } else {
            for x in self.0 {
                w.put_f32(*x);
            }
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        matches!(ty.name(), "vector" | "halfvec")
    }

    to_sql_checked!();
}

/// The ORDER BY expression and operator for `variant` and `metric` on a `d`-dim column.
fn order_by(variant: Variant, metric: Metric, d: usize) -> String {
    let op = match metric {
        Metric::Euclidean => "<->",
        Metric::Angular => "<=>",
    };
    match variant {
        Variant::Vector => format!("v {op} $1"),
        Variant::HalfvecIndex => format!("v::halfvec({d}) {op} $1::halfvec({d})"),
        // The parameter's type is inferred from the column: the query goes as float16.
        Variant::HalfvecColumn => format!("v {op} $1"),
    }
}

/// The exact query text both the searcher and EXPLAIN use.
pub fn query_sql(table: &str, variant: Variant, metric: Metric, d: usize, k: usize) -> String {
    format!(
        "SELECT id FROM {table} ORDER BY {} LIMIT {k}",
        order_by(variant, metric, d)
    )
}

/// The `SET` statement for `query_args` after validating them (`ef_search`, 1..=1000).
pub fn query_args_sql(query_args: &Params) -> Result<String> {
    Ok(ef_search("pgvector", query_args, EF_SEARCH)?
        .map_or(String::new(), |ef| format!("SET hnsw.ef_search = {ef}")))
}

/// One PostgreSQL query connection.
pub struct PgSearcher {
    pub(super) client: Client,
    pub(super) table: String,
    pub(super) variant: Variant,
    pub(super) metric: Metric,
    pub(super) dimension: usize,
    pub(super) stmt: PreparedFor<Statement>,
}

impl Searcher for PgSearcher {
    fn set_query_args(&mut self, query_args: &Params) -> Result<()> {
        let sql = query_args_sql(query_args)?;
        if !sql.is_empty() {
            self.client
                .batch_execute(&sql)
                .map_err(|e| pg_err(e, "setting query args"))?;
        }
        Ok(())
    }

    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()> {
        ids.clear();
        crate::backend::table::check_query(query, self.dimension)?;
        let client = &mut self.client;
        let sql = |k| query_sql(&self.table, self.variant, self.metric, self.dimension, k);
        let stmt = self.stmt.get(k, |k| {
            client
                .prepare(&sql(k))
                .map_err(|e| pg_err(e, "preparing the query"))
        })?;
        let rows = self
            .client
            .query(&stmt, &[&VecParam(query)])
            .map_err(|e| pg_err(e, "running a query"))?;
        for row in &rows {
            let id: i32 = row
                .try_get(0)
                .map_err(|e| pg_err(e, "reading query results"))?;
            ids.push(i64::from(id));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_text_per_variant() {
        let q = query_sql("annbench.t", Variant::Vector, Metric::Angular, 3, 10);
        assert_eq!(q, "SELECT id FROM annbench.t ORDER BY v <=> $1 LIMIT 10");
        let q = query_sql("annbench.t", Variant::HalfvecIndex, Metric::Euclidean, 3, 5);
        assert!(
            q.contains("v::halfvec(3) <-> $1::halfvec(3) LIMIT 5"),
            "{q}"
        );
    }

    #[test]
    fn ef_search_is_validated() {
        let p = json!({"ef_search": 1001})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(
            query_args_sql(&p)
                .unwrap_err()
                .to_string()
                .contains("1..=1000")
        );
        let p = json!({"ef_search": 40})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(query_args_sql(&p).unwrap(), "SET hnsw.ef_search = 40");
    }

    #[test]
    fn binary_encoding() {
        let mut b = bytes::BytesMut::new();
        let ty = Type::new(
            "vector".into(),
            1,
            postgres::types::Kind::Simple,
            "public".into(),
        );
        VecParam(&[1.0, -2.0]).to_sql(&ty, &mut b).unwrap();
        assert_eq!(&b[..], &[0, 2, 0, 0, 63, 128, 0, 0, 192, 0, 0, 0]);
        let ty = Type::new(
            "halfvec".into(),
            2,
            postgres::types::Kind::Simple,
            "public".into(),
        );
        let mut h = bytes::BytesMut::new();
        VecParam(&[1.0]).to_sql(&ty, &mut h).unwrap();
        assert_eq!(&h[..], &[0, 1, 0, 0, 0x3c, 0]);
    }
}
