//! An algorithm's implementation entry: its declaration ([`AlgorithmDecl`], in the registry,
//! read by everything above and beside the backends), the database it runs on, how to
//! connect it and its checks of the data. The declaration's types are re-exported here for
//! the backends.

use super::server::Database;
use super::{Backend, BackendOptions, TableSpec};
use crate::Result;
use ndarray::ArrayView2;
use std::fmt;
use std::ops::Deref;

pub use crate::registry::{ALL_METRICS, AlgorithmDecl, Auto, Contract, Kind, Need, Param, Rule};

/// An algorithm's checks of the data (train, then test vectors) before anything is sent.
pub type DataCheck = fn(&TableSpec, ArrayView2<'_, f32>, ArrayView2<'_, f32>) -> Result<()>;

/// One algorithm's implementation: a registry entry (see [`super::ALGORITHMS`]). It reads as
/// its declaration too (`a.name`, `a.build`, `a.build_args(..)`), through [`Deref`].
pub struct Algorithm {
    /// What it declares about itself (`src/backend/<folder>/decl.rs`).
    pub decl: &'static AlgorithmDecl,
    /// The database server it runs on (the one [`AlgorithmDecl::database`] names); `None` for
    /// the in-process `exact`.
    pub database: Option<&'static Database>,
    /// Connect a backend for this algorithm.
    pub create: fn(&BackendOptions) -> Result<Box<dyn Backend>>,
    /// Refuse train or test vectors its server cannot hold or query (values beyond a column's
    /// range, lengths it refuses), naming the row. A sweep runs it for every selected algorithm
    /// before any table of any of them is loaded (`runner::preflight::check_data`).
    pub check_data: DataCheck,
}

impl Deref for Algorithm {
    type Target = AlgorithmDecl;

    fn deref(&self) -> &AlgorithmDecl {
        self.decl
    }
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Algorithm({})", self.name)
    }
}
