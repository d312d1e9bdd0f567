"""annbench: benchmark vector indexes inside databases (MariaDB MHNSW, PostgreSQL pgvector
HNSW, IVFFlat and binary quantization) from Python.

Datasets load as numpy arrays without copies; sweeps and reports come back as pandas
DataFrames; :mod:`annbench.plot` draws them. The heavy lifting is the Rust library in
:mod:`annbench._annbench`; every error it raises is an :class:`AnnbenchError`.

pandas and matplotlib are imported on first use, so the ``annbench`` command starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._annbench import (
    AnnbenchError,
    BackendError,
    ConfigError,
    DatasetError,
    IoError,
    ResultsError,
    ServerError,
    __version__,
)

if TYPE_CHECKING:
    from . import plot
    from ._annbench import Dataset
    from .datasets import (
        compute_groundtruth,
        create_dataset,
        get_dataset,
        list_datasets,
        load_dataset,
        subset,
    )
    from .frames import pareto
    from .history import change_points, history
    from .reports import (
        build_table,
        clients_table,
        compare,
        compare_matrix,
        report,
        results,
        table,
    )
    from .streaming import stream, stream_results
    from .sweep import algorithms, run

# Public name -> (module, attribute or None for the module itself), loaded on first access.
_LAZY: dict[str, tuple[str, str | None]] = {
    "plot": (".plot", None),
    "Dataset": ("._annbench", "Dataset"),
    "pareto": (".frames", "pareto"),
    "algorithms": (".sweep", "algorithms"),
    "run": (".sweep", "run"),
    "stream": (".streaming", "stream"),
    "stream_results": (".streaming", "stream_results"),
    "history": (".history", "history"),
    "change_points": (".history", "change_points"),
    **{
        name: (".datasets", name)
        for name in (
            "compute_groundtruth",
            "create_dataset",
            "get_dataset",
            "list_datasets",
            "load_dataset",
            "subset",
        )
    },
    **{
        name: (".reports", name)
        for name in (
            "build_table",
            "clients_table",
            "compare",
            "compare_matrix",
            "report",
            "results",
            "table",
        )
    },
}

__all__ = [
    "AnnbenchError",
    "BackendError",
    "ConfigError",
    "Dataset",
    "DatasetError",
    "IoError",
    "ResultsError",
    "ServerError",
    "__version__",
    "algorithms",
    "build_table",
    "change_points",
    "clients_table",
    "compare",
    "compare_matrix",
    "compute_groundtruth",
    "create_dataset",
    "get_dataset",
    "history",
    "list_datasets",
    "load_dataset",
    "pareto",
    "plot",
    "report",
    "results",
    "run",
    "stream",
    "stream_results",
    "subset",
    "table",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'annbench' has no attribute '{name}'")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name, __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
