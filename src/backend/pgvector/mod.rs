//! pgvector HNSW backend: `vector` column; index on `vector` or on `v::halfvec(d)`.

use super::{Backend, BackendOptions, BuildReport, LoadReport, Searcher, ServerInfo, TableSpec};
use crate::params::Params;
use crate::{Error, Result};
use ndarray::ArrayView2;

/// Admin connection to PostgreSQL.
pub struct PgVector {}

/// Which pgvector variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// float32 `vector` column and index.
    Vector,
    /// float32 column, HNSW index on `v::halfvec(d)`.
    HalfvecIndex,
}

impl PgVector {
    pub fn connect(_opts: &BackendOptions, _variant: Variant) -> Result<Self> {
        Err(Error::Backend(
            "pgvector backend: not implemented yet".into(),
        ))
    }
}

impl Backend for PgVector {
    fn name(&self) -> &str {
        "pgvector"
    }
    fn server_info(&mut self) -> Result<ServerInfo> {
        unimplemented!()
    }
    fn load(&mut self, _spec: &TableSpec, _train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        unimplemented!()
    }
    fn build(&mut self, _build_args: &Params) -> Result<BuildReport> {
        unimplemented!()
    }
    fn verify_index_used(&mut self, _q: &[f32], _k: usize, _qa: &Params) -> Result<()> {
        unimplemented!()
    }
    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        unimplemented!()
    }
    fn drop_index(&mut self) -> Result<()> {
        unimplemented!()
    }
}
