//! MariaDB MHNSW backend (VECTOR column, `VECTOR INDEX ... M=.. DISTANCE=..`).

use super::{Backend, BackendOptions, BuildReport, LoadReport, Searcher, ServerInfo, TableSpec};
use crate::params::Params;
use crate::{Error, Result};
use ndarray::ArrayView2;

/// Admin connection to MariaDB.
pub struct MariaDb {}

impl MariaDb {
    pub fn connect(_opts: &BackendOptions) -> Result<Self> {
        Err(Error::Backend(
            "mariadb backend: not implemented yet".into(),
        ))
    }
}

impl Backend for MariaDb {
    fn name(&self) -> &str {
        "mariadb"
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
