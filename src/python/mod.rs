//! The PyO3 layer only: thin wrappers over the library API (feature `python`), compiled
//! into the `annbench._annbench` extension module. The Python package (`python/annbench/`)
//! re-exports these and adds plotting and DataFrame helpers.
//!
//! Rules kept here: long work runs inside `py.detach` (GIL released); arrays go to numpy
//! without copying; every library error goes through [`errors::to_py`].

mod cli;
mod dataset;
mod errors;
mod events;
mod report;
mod stream;
mod sweep;

use pyo3::prelude::*;

/// Rust core of annbench: datasets, sweeps and reports. Use the `annbench` package.
#[pymodule]
#[pyo3(name = "_annbench")]
fn annbench_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The export's fixed columns (the registry of metrics), so the Python frames cannot drift
    // from the Rust export.
    m.add(
        "RESULT_COLUMNS",
        pyo3::types::PyTuple::new(py, crate::report::export::EXPORT_COLUMNS)?,
    )?;
    m.add("AnnbenchError", py.get_type::<errors::AnnbenchError>())?;
    m.add("DatasetError", py.get_type::<errors::DatasetError>())?;
    m.add("ConfigError", py.get_type::<errors::ConfigError>())?;
    m.add("ServerError", py.get_type::<errors::ServerError>())?;
    m.add("BackendError", py.get_type::<errors::BackendError>())?;
    m.add("ResultsError", py.get_type::<errors::ResultsError>())?;
    m.add("IoError", errors::io_error_type(py)?)?;
    m.add_class::<dataset::PyDataset>()?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::load_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::get_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::create_from_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::create_from_file, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::subset, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::compute_groundtruth, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::list_datasets, m)?)?;
    m.add_function(wrap_pyfunction!(report::export_json, m)?)?;
    m.add_function(wrap_pyfunction!(stream::run_stream, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_results, m)?)?;
    m.add_function(wrap_pyfunction!(report::table_json, m)?)?;
    m.add_function(wrap_pyfunction!(report::compare_json, m)?)?;
    m.add_function(wrap_pyfunction!(report::history_json, m)?)?;
    m.add_function(wrap_pyfunction!(report::change_points_json, m)?)?;
    m.add_function(wrap_pyfunction!(report::build_json, m)?)?;
    m.add_function(wrap_pyfunction!(report::clients_json, m)?)?;
    m.add_function(wrap_pyfunction!(report::report_html, m)?)?;
    m.add_function(wrap_pyfunction!(report::metrics_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::run_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::algorithms_json, m)?)?;
    Ok(())
}
