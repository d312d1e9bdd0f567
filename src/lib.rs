//! annbench: benchmark vector indexes inside databases (MariaDB MHNSW, PostgreSQL pgvector and
//! every other database of the [`registry`]; `docs/algorithms.md`, generated from it, lists
//! them all).
//!
//! The library is the product; the CLI (`src/main.rs`, `cli`) and the Python module
//! (`python`, feature `python`) are thin layers over it. Data flows one way:
//! dataset -> backend (load, build, query) -> result store -> metrics -> reports.
//!
//! Every algorithm and database declares itself once, in plain data that sits below both the
//! backends and the reports ([`registry`]): an algorithm's names, default grid, parameters
//! with ranges and rules, its database, the metrics and dimensions it takes, its build cost
//! model ([`registry::AlgorithmDecl`]); a database's key, URL schemes and server processes
//! ([`registry::DatabaseDecl`]). Config validation ([`config`]), the CLI, display names
//! ([`report`]), shard balancing ([`shard`]), connection parsing ([`connect`]), Python and
//! `docs/algorithms.md` read those declarations; the implementations
//! ([`backend::ALGORITHMS`]: constructor, data checks, [`backend::Database`]) point at them.
//!
//! Where things go:
//! - a new algorithm on an existing database: a folder `src/backend/<name>/` with its
//!   declaration (`decl.rs`: a [`registry::AlgorithmDecl`], plain data, compiled as a module
//!   of the registry and listed in `src/registry/decls.rs`) and its implementation (`mod.rs`:
//!   a [`backend::Algorithm`] pointing at the declaration and, on PostgreSQL, a
//!   [`backend::postgres::PgIndex`]), `algorithms/<name>/config.yml`, and one line in the
//!   algorithm list of `src/registry/decls.rs`;
//! - a new database: a folder `src/backend/<database>/` with its declaration
//!   (`decl.rs`: a [`registry::DatabaseDecl`], whose key makes its URL flag, Python keyword
//!   and `ANNBENCH_<KEY>_URL`, and its algorithms' [`registry::AlgorithmDecl`]s), its
//!   [`backend::Database`] (version check, `server_info`, `servers check`, privileges, stop
//!   hooks), driver errors, bulk load, [`backend::Backend`] and [`backend::Searcher`] (a SQL
//!   database also implements [`backend::sql::SqlConn`] and, in `dialect.rs`, its SQL flavour
//!   [`backend::sql::Dialect`], which bring the shared metadata table, table reuse, table lock
//!   and build watcher), its line in `src/registry/decls.rs`, its algorithms' lines in the
//!   algorithm list, and `scripts/lib/databases-<database>.sh` for its server.
//!   [`connect`], [`cli`], the Python layer, [`runner`] and [`shard`] name no database.

pub mod backend;
pub mod cli;
pub mod config;
pub mod connect;
pub mod dataset;
pub mod error;
pub mod fsutil;
pub mod metric;
pub mod metrics;
pub mod params;
pub mod procfs;
pub mod python_args;
pub mod registry;
pub mod report;
pub mod results;
pub mod runner;
pub mod servers;
pub mod shard;
pub mod stream;
pub mod terminal;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use metric::Metric;
