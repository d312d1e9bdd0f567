"""annbench: benchmark vector indexes inside databases (MariaDB MHNSW, PostgreSQL pgvector
HNSW) from Python.

Datasets load as numpy arrays without copies; sweeps and reports come back as pandas
DataFrames; :mod:`annbench.plot` draws them. The heavy lifting is the Rust library in
:mod:`annbench._annbench`; every error it raises is an :class:`AnnbenchError`.
"""

from __future__ import annotations

from . import plot
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
from .frames import pareto

__all__ = [
    "AnnbenchError",
    "BackendError",
    "ConfigError",
    "DatasetError",
    "IoError",
    "ResultsError",
    "ServerError",
    "__version__",
    "pareto",
    "plot",
]
