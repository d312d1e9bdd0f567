//! annbench: benchmark vector indexes inside databases (MariaDB MHNSW; PostgreSQL pgvector HNSW,
//! IVFFlat and binary quantization).
//!
//! The library is the product; the CLI (`src/main.rs`, `cli`) and the Python module
//! (`python`, feature `python`) are thin layers over it. Data flows one way:
//! dataset -> backend (load, build, query) -> result store -> metrics -> reports.
//!
//! Every algorithm declares itself once in the registry ([`backend::ALGORITHMS`]): names,
//! default grid, parameters with ranges and rules, its database, its constructor. Config
//! validation ([`config`]), the CLI, display names ([`report`]), Python and
//! `docs/algorithms.md` read that declaration.
//!
//! Where things go:
//! - a new algorithm on an existing database: a folder `src/backend/<name>/` declaring its
//!   [`backend::Algorithm`] (and, on PostgreSQL, implementing [`backend::postgres::PgIndex`]),
//!   `algorithms/<name>/config.yml`, and one line in `src/backend/mod.rs`;
//! - a new database: a folder `src/backend/<database>/` with its declaration
//!   (`decl.rs`: a [`registry::DatabaseDecl`], whose key makes its URL flag, Python keyword
//!   and `ANNBENCH_<KEY>_URL`), its [`backend::Database`] (version check, `server_info`,
//!   `servers check`, privileges, stop hooks), driver errors, bulk load, [`backend::Backend`]
//!   and [`backend::Searcher`] (a SQL database also implements [`backend::sql::SqlConn`] and,
//!   in `dialect.rs`, its SQL flavour [`backend::sql::Dialect`], which bring the shared
//!   metadata table, table reuse, table lock and build watcher), its algorithms' lines
//!   in the `registry!` list, and `scripts/lib/databases-<database>.sh` for its server.
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
pub mod terminal;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use metric::Metric;
