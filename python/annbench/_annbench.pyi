"""Type stubs of the Rust extension module ``annbench._annbench`` (checked against the
compiled module with ``python -m mypy.stubtest annbench._annbench``). Use the wrappers in
:mod:`annbench`; these are the raw bindings."""

from collections.abc import Callable
from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "RESULT_COLUMNS",
    "AnnbenchError",
    "DatasetError",
    "ConfigError",
    "ServerError",
    "BackendError",
    "ResultsError",
    "IoError",
    "Dataset",
    "cli_main",
    "load_dataset",
    "get_dataset",
    "create_from_arrays",
    "create_from_file",
    "subset",
    "compute_groundtruth",
    "list_datasets",
    "export_json",
    "table_json",
    "compare_json",
    "build_json",
    "clients_json",
    "report_html",
    "metrics_json",
    "run_stream",
    "run_sweep",
    "stream_results",
    "algorithms_json",
]

__version__: str
#: The fixed columns of ``export_json`` rows, in order (``param_*`` columns follow).
RESULT_COLUMNS: tuple[str, ...]

class AnnbenchError(Exception):
    """Base class of every error annbench raises."""

class DatasetError(AnnbenchError): ...
class ConfigError(AnnbenchError): ...
class ServerError(AnnbenchError): ...
class BackendError(AnnbenchError): ...
class ResultsError(AnnbenchError): ...
class IoError(AnnbenchError, OSError): ...

_F32 = np.ndarray[Any, np.dtype[np.float32]]
_I32 = np.ndarray[Any, np.dtype[np.int32]]

@final
class Dataset:
    """An ann-benchmarks dataset; arrays are numpy arrays owning Rust's memory (no copy)."""

    @property
    def name(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def train(self) -> _F32: ...
    @property
    def test(self) -> _F32: ...
    @property
    def neighbors(self) -> _I32 | None: ...
    @property
    def distances(self) -> _F32 | None: ...
    @property
    def dimension(self) -> int: ...
    def save(self, path: str) -> None: ...

def cli_main(argv: list[str]) -> int:
    """Runs the ``annbench`` command line in-process; ``argv`` starts with the program name."""

def load_dataset(name_or_path: str, data_dir: str | None = None) -> Dataset: ...
def get_dataset(
    name: str, data_dir: str | None = None, force: bool = False, progress: bool = True
) -> str: ...
def create_from_arrays(
    name: str,
    vectors: npt.NDArray[np.float32],
    metric: str,
    test: npt.NDArray[np.float32] | None = None,
    test_size: int | None = None,
    seed: int = 1,
    k: int = 100,
) -> Dataset: ...
def create_from_file(
    input: str,
    metric: str,
    name: str | None = None,
    queries: str | None = None,
    test_size: int | None = None,
    dim: int | None = None,
    seed: int = 1,
    k: int = 100,
) -> Dataset: ...
def subset(
    source: str,
    train: int,
    test: int | None = None,
    k: int = 100,
    name: str | None = None,
    data_dir: str | None = None,
) -> Dataset: ...
def compute_groundtruth(
    train: npt.NDArray[np.float32],
    test: npt.NDArray[np.float32],
    metric: str,
    k: int = 100,
) -> tuple[_I32, _F32]: ...
def list_datasets(data_dir: str | None = None) -> list[dict[str, Any]]: ...
def export_json(
    dataset: str, count: int = 10, results: str = ..., data_dir: str | None = None
) -> str: ...
def table_json(
    dataset: str,
    count: int = 10,
    recall: list[float] = ...,
    base: str | None = None,
    results: str = ...,
    data_dir: str | None = None,
    stat: str = ...,
) -> str: ...
def compare_json(
    base: str,
    me: list[str],
    dataset: str,
    count: int = 10,
    recall: list[float] = ...,
    results: str = ...,
    data_dir: str | None = None,
    noise: float = ...,
    stat: str = ...,
    judge_disturbed: bool = False,
    paired_noise: float = ...,
    matrix: bool = False,
) -> str: ...
def build_json(
    dataset: str, count: int = 10, results: str = ..., data_dir: str | None = None
) -> str: ...
def clients_json(
    dataset: str, count: int = 10, results: str = ..., data_dir: str | None = None
) -> str: ...
def report_html(
    dataset: str,
    output: str = ...,
    count: int = 10,
    recall: list[float] = ...,
    base: str | None = None,
    label: str | None = None,
    clients: int | None = None,
    title: str | None = None,
    results: str = ...,
    data_dir: str | None = None,
) -> int: ...
def run_sweep(
    dataset: str,
    algorithms: list[str],
    config_files: list[str],
    build_overrides: list[str],
    query_overrides: list[str],
    count: int,
    runs: int,
    clients: list[int],
    results: str,
    data_dir: str | None,
    force: bool,
    label: str | None,
    servers: dict[str, str],
    timeout: float | None,
    callback: Callable[[dict[str, Any]], object] | None,
    min_time: float = 1.0,
    target_ci: float | None = None,
    max_time: float | None = None,
    rebuilds: int = 1,
    order: str = ...,
    keep_going: bool = False,
    expect: str | None = None,
) -> str: ...
def run_stream(
    dataset: str,
    runbook: str,
    algorithm: str,
    entry: str | None = None,
    config: str | None = None,
    build: list[str] = ...,
    query: list[str] = ...,
    count: int = 10,
    runs: int = 5,
    min_time: float = 0.3,
    max_time: float | None = None,
    clients: int = 1,
    batch: int = ...,
    markers: int = ...,
    results: str = ...,
    data_dir: str | None = None,
    force: bool = False,
    label: str | None = None,
    timeout: float | None = None,
    servers: dict[str, str] = ...,
    callback: Callable[[dict[str, Any]], object] | None = None,
) -> str: ...
def stream_results(dataset: str, count: int = 10, results: str = ...) -> str: ...
def algorithms_json() -> str: ...
def metrics_json() -> str:
    """The registry of metrics as JSON records: ``name``, ``title``, ``description``,
    ``unit``, ``format``, ``group``, ``tip_line`` and ``plot`` (``label``, ``short``,
    ``scale``, ``lower_is_better``, ``per_client``, ``rank``; ``null`` for metrics no axis
    shows)."""
