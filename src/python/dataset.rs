//! Datasets as numpy arrays: `load_dataset`, `create_dataset`, `subset`, `get_dataset`,
//! `compute_groundtruth`, `list_datasets`.
//!
//! Arrays loaded by the library are moved into numpy (`PyArray::from_owned_array`): numpy
//! then owns the Rust allocation, with no copy. Arrays coming in (ground truth, create) are
//! read through borrowed views where the library takes views.

use super::errors::IntoPyResult;
use crate::Metric;
use crate::dataset::{self, Dataset, GroundTruth};
use numpy::{PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// An ann-benchmarks dataset: `train` (n x d) and `test` (q x d) float32 vectors, and exact
/// ground truth `neighbors` (q x K int32) and `distances` (q x K float32), or None.
#[pyclass(module = "annbench", name = "Dataset", frozen)]
pub struct PyDataset {
    /// Dataset name (the file stem for local files).
    #[pyo3(get)]
    name: String,
    /// `euclidean` or `angular`.
    #[pyo3(get)]
    metric: String,
    #[pyo3(get)]
    train: Py<PyArray2<f32>>,
    #[pyo3(get)]
    test: Py<PyArray2<f32>>,
    #[pyo3(get)]
    neighbors: Option<Py<PyArray2<i32>>>,
    #[pyo3(get)]
    distances: Option<Py<PyArray2<f32>>>,
}

impl PyDataset {
    /// Moves the library's arrays into numpy without copying.
    fn from_rust(py: Python<'_>, ds: Dataset) -> Self {
        let (neighbors, distances) = match ds.ground_truth {
            Some(gt) => (
                Some(PyArray2::from_owned_array(py, gt.neighbors).unbind()),
                Some(PyArray2::from_owned_array(py, gt.distances).unbind()),
            ),
            None => (None, None),
        };
        PyDataset {
            name: ds.name,
            metric: ds.metric.as_str().to_owned(),
            train: PyArray2::from_owned_array(py, ds.train).unbind(),
            test: PyArray2::from_owned_array(py, ds.test).unbind(),
            neighbors,
            distances,
        }
    }

    /// A library `Dataset` with copies of the current arrays (numpy may have changed them).
    fn to_rust(&self, py: Python<'_>) -> PyResult<Dataset> {
        let ground_truth = match (&self.neighbors, &self.distances) {
            (Some(n), Some(d)) => Some(GroundTruth {
                neighbors: n.bind(py).to_owned_array(),
                distances: d.bind(py).to_owned_array(),
            }),
            _ => None,
        };
        Ok(Dataset {
            name: self.name.clone(),
            metric: self.metric.parse::<Metric>().py_err()?,
            train: self.train.bind(py).to_owned_array(),
            test: self.test.bind(py).to_owned_array(),
            ground_truth,
        })
    }
}

#[pymethods]
impl PyDataset {
    /// Vector dimension.
    #[getter]
    fn dimension(&self, py: Python<'_>) -> usize {
        self.train.bind(py).shape()[1]
    }

    /// Writes the dataset as an ann-benchmarks HDF5 file at `path` (atomically).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let ds = self.to_rust(py)?;
        py.detach(move || dataset::save(&ds, &path)).py_err()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let train = self.train.bind(py).shape().to_vec();
        let test = self.test.bind(py).shape().to_vec();
        let k = self.neighbors.as_ref().map(|n| n.bind(py).shape()[1]);
        format!(
            "Dataset(name={:?}, metric={:?}, train={}x{}, test={}x{}, ground_truth={})",
            self.name,
            self.metric,
            train[0],
            train[1],
            test[0],
            test[1],
            k.map_or("None".to_owned(), |k| format!("k={k}"))
        )
    }
}

/// A `UserWarning` when loading `name` writes a file (a bundled set unpacked, a synthetic
/// set generated into the data dir), as `annbench datasets info` says on stderr: a load
/// should not leave files behind unannounced.
fn warn_before_writing(py: Python<'_>, name: &str, data_dir: &std::path::Path) -> PyResult<()> {
    let Some((source, path)) = dataset::datadir::would_write(name, data_dir) else {
        return Ok(());
    };
    let what = match source {
        crate::dataset::registry::Source::Synthetic => "generating",
        _ => "writing the bundled set",
    };
    let message = format!(
        "{name}: {what} to {} (pass data_dir= or set ANNBENCH_DATA_DIR to put it elsewhere)",
        path.display()
    );
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    PyErr::warn(py, &category, &std::ffi::CString::new(message)?, 1)
}

fn data_dir_or_default(data_dir: Option<PathBuf>) -> PathBuf {
    data_dir.unwrap_or_else(dataset::default_data_dir)
}

fn parse_metric(metric: &str) -> PyResult<Metric> {
    metric.parse::<Metric>().py_err()
}

/// Loads a dataset by name (from the data dir, bundled or synthetic) or HDF5 path.
#[pyfunction]
#[pyo3(signature = (name_or_path, data_dir=None))]
pub fn load_dataset(
    py: Python<'_>,
    name_or_path: String,
    data_dir: Option<PathBuf>,
) -> PyResult<PyDataset> {
    let dir = data_dir_or_default(data_dir);
    warn_before_writing(py, &name_or_path, &dir)?;
    let ds = py
        .detach(move || dataset::open(&dataset::resolve(&name_or_path, &dir)?))
        .py_err()?;
    Ok(PyDataset::from_rust(py, ds))
}

/// Makes a known dataset present in the data dir (download, generate or unpack) and returns
/// its path. The download shows a progress bar on stderr when `progress`.
#[pyfunction]
#[pyo3(signature = (name, data_dir=None, force=false, progress=true))]
pub fn get_dataset(
    py: Python<'_>,
    name: String,
    data_dir: Option<PathBuf>,
    force: bool,
    progress: bool,
) -> PyResult<PathBuf> {
    let dir = data_dir_or_default(data_dir);
    let base = dataset::download::default_base_url();
    py.detach(move || dataset::download::get(&name, &dir, &base, force, progress))
        .py_err()
}

/// Builds a dataset from in-memory vectors: `test` queries, or a seeded split of `test_size`
/// rows off `vectors`; exact ground truth with `k` neighbours.
#[pyfunction]
#[pyo3(signature = (name, vectors, metric, test=None, test_size=None, seed=1, k=100))]
#[allow(clippy::too_many_arguments)]
pub fn create_from_arrays(
    py: Python<'_>,
    name: String,
    vectors: PyReadonlyArray2<'_, f32>,
    metric: &str,
    test: Option<PyReadonlyArray2<'_, f32>>,
    test_size: Option<usize>,
    seed: u64,
    k: usize,
) -> PyResult<PyDataset> {
    let metric = parse_metric(metric)?;
    let data = vectors.as_array().to_owned();
    let queries = test.map(|t| t.as_array().to_owned());
    let ds = py
        .detach(move || {
            let (train, test) = match queries {
                Some(q) => (data, q),
                None => {
                    let rows = test_size
                        .unwrap_or_else(|| dataset::create::default_test_rows(data.nrows()));
                    dataset::create::split(data, rows, seed)?
                }
            };
            dataset::create::from_parts(&name, metric, train, test, k)
        })
        .py_err()?;
    Ok(PyDataset::from_rust(py, ds))
}

/// Builds a dataset from a vector file (`.npy`, `.fvecs`, raw float32 with `dim`), as
/// `annbench datasets create` does.
#[pyfunction]
#[pyo3(signature = (input, metric, name=None, queries=None, test_size=None, dim=None, seed=1, k=100))]
#[allow(clippy::too_many_arguments)]
pub fn create_from_file(
    py: Python<'_>,
    input: PathBuf,
    metric: &str,
    name: Option<String>,
    queries: Option<PathBuf>,
    test_size: Option<usize>,
    dim: Option<usize>,
    seed: u64,
    k: usize,
) -> PyResult<PyDataset> {
    let opts = dataset::create::CreateOptions {
        input,
        format: None,
        dim,
        queries,
        name,
        metric: parse_metric(metric)?,
        test: test_size,
        seed,
        k,
    };
    let ds = py.detach(move || dataset::create::create(&opts)).py_err()?;
    Ok(PyDataset::from_rust(py, ds))
}

/// The first `train` train rows and first `test` test rows of a dataset, with ground truth
/// recomputed over the kept train rows.
#[pyfunction]
#[pyo3(signature = (source, train, test=None, k=100, name=None, data_dir=None))]
pub fn subset(
    py: Python<'_>,
    source: String,
    train: usize,
    test: Option<usize>,
    k: usize,
    name: Option<String>,
    data_dir: Option<PathBuf>,
) -> PyResult<PyDataset> {
    let dir = data_dir_or_default(data_dir);
    let ds = py
        .detach(move || {
            let path = dataset::resolve(&source, &dir)?;
            let info = dataset::info(&path)?;
            let name = name.unwrap_or_else(|| {
                let stem = dataset::hdf5_io::name_of(&path);
                dataset::subset::default_name(&stem, info.metric, train)
            });
            dataset::subset::subset(&path, train, test, k, &name)
        })
        .py_err()?;
    Ok(PyDataset::from_rust(py, ds))
}

/// Exact `k` nearest neighbours of each `test` row among `train` rows, read in place from
/// the numpy arrays: `(neighbors int32 q x k, distances float32 q x k)`.
#[pyfunction]
#[pyo3(signature = (train, test, metric, k=100))]
#[allow(clippy::type_complexity)]
pub fn compute_groundtruth<'py>(
    py: Python<'py>,
    train: PyReadonlyArray2<'py, f32>,
    test: PyReadonlyArray2<'py, f32>,
    metric: &str,
    k: usize,
) -> PyResult<(Bound<'py, PyArray2<i32>>, Bound<'py, PyArray2<f32>>)> {
    let metric = parse_metric(metric)?;
    let (train, test) = (train.as_array(), test.as_array());
    let gt = py
        .detach(move || dataset::groundtruth::try_compute(train, test, metric, k))
        .py_err()?;
    Ok((
        PyArray2::from_owned_array(py, gt.neighbors),
        PyArray2::from_owned_array(py, gt.distances),
    ))
}

/// Every known dataset as dicts: name, dimension, metric, train, test, source, path (the
/// local file, or None when it is not in the data dir).
#[pyfunction]
#[pyo3(signature = (data_dir=None))]
pub fn list_datasets(
    py: Python<'_>,
    data_dir: Option<PathBuf>,
) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let dir = data_dir_or_default(data_dir);
    let mut rows: Vec<Bound<'_, PyDict>> = dataset::registry::all()
        .iter()
        .map(|e| {
            let row = PyDict::new(py);
            let local = dir.join(e.file_name());
            row.set_item("name", &e.name)?;
            row.set_item("dimension", e.dimension)?;
            row.set_item("metric", e.metric.as_str())?;
            row.set_item("train", e.train)?;
            row.set_item("test", e.test)?;
            row.set_item("source", e.source.as_str())?;
            row.set_item("path", local.is_file().then_some(local))?;
            Ok(row)
        })
        .collect::<PyResult<_>>()?;
    // Files of the data dir that are no known name: created, subsets, copies.
    for (path, info) in dataset::datadir::local_files(&dir) {
        let row = PyDict::new(py);
        let stem = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into());
        row.set_item("name", stem)?;
        row.set_item("dimension", info.as_ref().map(|i| i.dimension))?;
        row.set_item("metric", info.as_ref().map(|i| i.metric.as_str()))?;
        row.set_item("train", info.as_ref().map(|i| i.train))?;
        row.set_item("test", info.as_ref().map(|i| i.test))?;
        row.set_item("source", "local")?;
        row.set_item("path", path)?;
        rows.push(row);
    }
    Ok(rows)
}
