//! A PostgreSQL query connection, and the binary vector parameter shared with the loader.

use super::errors::pg_err;
use super::index::{PgIndex, Target};
use super::watchdog;
use crate::Result;
use crate::backend::Searcher;
use crate::backend::args::Args;
use crate::backend::cost::{DataDirectory, ProcessHint, Statements};
use crate::backend::prepared::PreparedFor;
use crate::params::Params;
use bytes::BufMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Statement};

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

/// One PostgreSQL query connection for one algorithm.
pub struct PgSearcher {
    pub(super) client: Client,
    /// `client`'s socket under the [`watchdog`]: a query that gets no answer within
    /// [`watchdog::QUERY_LIMIT`] ends with an error instead of waiting for ever.
    pub(super) conn: Option<watchdog::Conn>,
    pub(super) index: &'static dyn PgIndex,
    pub(super) target: Target,
    /// The table's filter attribute columns, if loaded.
    pub(super) attrs: Option<std::sync::Arc<crate::backend::filter::Attributes>>,
    /// The query args set last (the query text may depend on them).
    pub(super) args: Args,
    pub(super) stmt: PreparedFor<Statement>,
}

impl Searcher for PgSearcher {
    fn set_query_args(&mut self, query_args: &Params) -> Result<()> {
        let algo = self.index.algorithm();
        let args = algo.query_args(query_args)?;
        crate::backend::filter::check_attributes(algo.name, &args, self.attrs.as_deref(), "query")?;
        let sql = self.index.settings(&self.target, &args)?;
        if !sql.is_empty() {
            self.client
                .batch_execute(&sql)
                .map_err(|e| pg_err(e, "setting query args"))?;
        }
        self.args = args;
        self.stmt = PreparedFor::new();
        Ok(())
    }

    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()> {
        ids.clear();
        crate::backend::table::check_query(query, self.target.dimension)?;
        let conn = self.conn;
        let _bound = watchdog::arm(conn, watchdog::QUERY_LIMIT);
        let client = &mut self.client;
        let sql = |k| self.index.query(&self.target, k, &self.args);
        let stmt = self.stmt.get(k, |k| {
            client
                .prepare(&sql(k))
                .map_err(|e| watchdog::pg_err(conn, e, "preparing the query"))
        })?;
        let rows = self
            .client
            .query(&stmt, &[&VecParam(query)])
            .map_err(|e| watchdog::pg_err(conn, e, "running a query"))?;
        for row in &rows {
            let id: i32 = row
                .try_get(0)
                .map_err(|e| pg_err(e, "reading query results"))?;
            ids.push(i64::from(id));
        }
        Ok(())
    }

    fn process_hint(&mut self) -> ProcessHint {
        super::cost::backend_pid(&mut self.client).map_or(ProcessHint::None, ProcessHint::Backend)
    }

    fn statements(&mut self) -> Statements {
        super::cost::statements(&mut self.client, &self.target.table)
    }

    fn data_directory(&mut self) -> DataDirectory {
        super::cost::data_directory(&mut self.client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
