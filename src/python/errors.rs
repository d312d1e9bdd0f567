//! The one conversion point from [`crate::Error`] to Python exceptions.
//!
//! Every category is a subclass of `annbench.AnnbenchError`; the message is the error's
//! `Display`, which is what the CLI prints after `error: `, with the CLI's flags named as
//! the Python keyword arguments ([`crate::python_args`]). `Io` errors are also
//! `OSError`s (with `errno` set when the OS gave one) so `except OSError` keeps working.
//! `Interrupted` becomes `KeyboardInterrupt`, which is what Ctrl-C means in Python.

use crate::Error;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyOSError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    annbench,
    AnnbenchError,
    PyException,
    "Base class of every error annbench raises."
);
pyo3::create_exception!(
    annbench,
    DatasetError,
    AnnbenchError,
    "A missing, malformed or invalid dataset file, or an unknown dataset name."
);
pyo3::create_exception!(
    annbench,
    ConfigError,
    AnnbenchError,
    "A bad YAML file, grid point, option or parameter."
);
pyo3::create_exception!(
    annbench,
    ServerError,
    AnnbenchError,
    "A server is unreachable, too old, refused the login, or failed mid-sweep."
);
pyo3::create_exception!(
    annbench,
    BackendError,
    AnnbenchError,
    "A backend could not load, build or query (e.g. the vector index is not used)."
);
pyo3::create_exception!(
    annbench,
    ResultsError,
    AnnbenchError,
    "Reading or writing the result store failed."
);

static IO_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `annbench.IoError(AnnbenchError, OSError)`: a file-system or network operation failed.
/// Built with `type()` because it has two bases, which `create_exception!` cannot express.
pub fn io_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    IO_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(
                py,
                [py.get_type::<AnnbenchError>(), py.get_type::<PyOSError>()],
            )?;
            let attrs = PyDict::new(py);
            attrs.set_item("__module__", "annbench")?;
            attrs.set_item(
                "__doc__",
                "A file-system or network operation failed (also an OSError).",
            )?;
            let ty = py
                .get_type::<PyType>()
                .call1(("IoError", bases, attrs))?
                .cast_into::<PyType>()?;
            Ok(ty.unbind())
        })
        .map(|ty| ty.bind(py))
}

/// Converts a library error into the matching Python exception.
pub fn to_py(err: Error) -> PyErr {
    let message = crate::python_args::for_python(&err.to_string());
    match err {
        Error::Dataset(_) => DatasetError::new_err(message),
        Error::Config(_) => ConfigError::new_err(message),
        Error::Server(_) => ServerError::new_err(message),
        Error::Backend(_) => BackendError::new_err(message),
        Error::Results(_) | Error::Regression(_) => ResultsError::new_err(message),
        Error::Interrupted => PyKeyboardInterrupt::new_err(message),
        Error::Io { source, .. } => {
            Python::attach(|py| io_error(py, &message, source.raw_os_error()))
        }
    }
}

/// An `IoError` instance with `errno` set; falls back to a plain `OSError` if the type
/// cannot be built (it always can, unless the interpreter is out of memory).
fn io_error(py: Python<'_>, message: &str, errno: Option<i32>) -> PyErr {
    let made = io_error_type(py).and_then(|ty| {
        let exc = ty.call1((message,))?;
        exc.setattr("errno", errno)?;
        Ok(PyErr::from_value(exc))
    });
    made.unwrap_or_else(|_| PyOSError::new_err(message.to_owned()))
}

/// Extension trait: `result.py()?` turns a library `Result` into a `PyResult`.
pub trait IntoPyResult<T> {
    /// Converts the error side with [`to_py`].
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for crate::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
