//! The declarations every layer reads, below the backends and the reports: what each
//! algorithm says about itself ([`AlgorithmDecl`]: names, parameters and their rules, the
//! metrics and dimensions it takes, its default grid, its build cost model), what each
//! database says about itself ([`DatabaseDecl`]: its key, URL schemes, connection variables,
//! server processes) and the [`ServerKind`] that carries it; how points are checked against
//! the parameters ([`args`]) and the filter syntax of a point ([`filter`]).
//!
//! A folder declares itself once, in `src/backend/<folder>/decl.rs`, with plain data and pure
//! functions only; those files are compiled as modules of the registry ([`decls`]), so that
//! config validation, display names, shard balancing, connection parsing, the CLI flags, the
//! Python keywords, `servers check` and server cost read them without importing a backend.
//! The implementations (`backend::Algorithm`, `backend::Database`) point at their
//! declarations. [`decls`] holds the registry's lines: each folder's declaration module and
//! `algorithm_list!`, the one list of algorithms, from which the registry builds
//! [`ALGORITHMS`] and the backends their table of implementations.

mod algorithm;
pub mod args;
mod database;
mod dataset_checks;
pub mod decls;
pub mod filter;
mod maintenance;
pub mod param;

pub use algorithm::{ALL_METRICS, AlgorithmDecl, Contract, StreamBuild};
pub use database::{DatabaseDecl, ForksVars, ServerKind, SocketRule};
pub use dataset_checks::{check_dimension, check_metric};
pub use maintenance::MaintenanceOp;
pub use param::{Auto, Kind, Need, Param, Rule};

pub(crate) use decls::algorithm_list;

macro_rules! declarations {
    ($($folder:ident: [$($algorithm:ident),+]),+ $(,)?) => {
        /// Every algorithm's declaration, in the order of `algorithm_list!`.
        pub static ALGORITHMS: &[&AlgorithmDecl] = &[$($(&decls::$folder::$algorithm),+),+];
    };
}
algorithm_list!(declarations);

/// Every algorithm's declaration, in registry order.
pub fn algorithms() -> &'static [&'static AlgorithmDecl] {
    ALGORITHMS
}

/// The declaration of the algorithm `name`.
pub fn algorithm(name: &str) -> Option<&'static AlgorithmDecl> {
    ALGORITHMS.iter().copied().find(|a| a.name == name)
}

/// The declaration of the algorithm `name`, or an error listing the known ones.
pub fn find_algorithm(name: &str) -> crate::Result<&'static AlgorithmDecl> {
    algorithm(name).ok_or_else(|| unknown_algorithm(name))
}

/// The error for an algorithm name no declaration has, listing the known ones.
pub fn unknown_algorithm(name: &str) -> crate::Error {
    crate::Error::Config(format!(
        "unknown algorithm '{name}': expected one of {} (annbench algorithms describes them)",
        algorithm_names()
    ))
}

/// `exact, mariadb, pgvector, ...`, for messages and help.
pub fn algorithm_names() -> String {
    ALGORITHMS
        .iter()
        .map(|a| a.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The databases the algorithms run on, each once, in registry order.
pub fn databases() -> Vec<&'static DatabaseDecl> {
    let mut out: Vec<ServerKind> = Vec::new();
    for kind in ALGORITHMS.iter().filter_map(|a| a.database) {
        if !out.contains(&kind) {
            out.push(kind);
        }
    }
    out.into_iter().map(ServerKind::decl).collect()
}

/// The server settings the parameters of the algorithms on `kind` servers set, each once, in
/// registry order (recorded with results next to the database's own list).
pub fn parameter_settings(kind: ServerKind) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let params = ALGORITHMS
        .iter()
        .filter(|a| a.database == Some(kind))
        .flat_map(|a| a.build.iter().chain(a.query));
    for name in params.filter_map(|p| p.setting) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests;
