//! Reports over stored results: best-QPS-at-recall tables, Pareto frontiers, exports,
//! build tables, QPS-vs-clients tables, relative comparisons, the HTML report and plots.
//!
//! Each report is a function from a slice of [`PointResult`](crate::results::PointResult) to
//! plain data; `to_table()` turns that data into a [`render::Table`], which [`render`] writes
//! as Markdown, CSV or JSON.

pub mod blocks;
pub mod build_table;
pub mod clients;
pub mod compare;
mod compare_view;
pub mod difficulty;
pub mod export;
pub mod figure_text;
pub mod filtered;
pub mod history;
pub mod html;
pub mod matrix;
mod matrix_view;
pub mod memory;
pub mod metrics;
pub mod names;
pub mod paired;
pub mod params;
pub mod pareto;
pub mod plot;
pub mod point_filter;
mod ratio;
pub mod render;
pub mod select;
pub mod series;
pub mod settings;
pub mod stats;
pub mod stream;
pub mod table;

#[cfg(test)]
pub(crate) mod testutil;

pub use build_table::{BuildRow, build_table};
pub use clients::{ClientsGroup, clients_table};
pub use compare::{CompareOptions, Comparison, compare, compare_with};
pub use export::export_table;
pub use matrix::{Matrix, matrix};
pub use pareto::{Frontier, FrontierPoint, pareto};
pub use render::{Format, Table, render};
pub use series::SeriesKey;
pub use stats::{Stat, Summary, apply_stat};
pub use table::{DEFAULT_THRESHOLDS, RecallRow, RecallTable, best_at_recall};
