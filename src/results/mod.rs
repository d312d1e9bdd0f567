//! The result store: one HDF5 file per measured point, in ann-benchmarks' result layout plus
//! annbench's extra fields, written atomically after each point.

pub mod record;

pub use record::{Environment, Pass, PointMetrics, PointResult};
