//! annbench: benchmark vector indexes inside databases (MariaDB MHNSW, PostgreSQL pgvector HNSW).
//!
//! The library is the product; the CLI (`src/main.rs`, `cli`) and the Python module
//! (`python`, feature `python`) are thin layers over it. Data flows one way:
//! dataset -> backend (load, build, query) -> result store -> metrics -> reports.

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
pub mod report;
pub mod results;
pub mod runner;
pub mod servers;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use metric::Metric;
