"""Dataset functions: thin wrappers over the Rust core that accept the usual Python inputs
(paths, any numeric numpy array) and give numpy arrays and DataFrames back."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import _annbench
from ._annbench import Dataset

if TYPE_CHECKING:
    import numpy.typing as npt
    import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "Dataset",
    "compute_groundtruth",
    "create_dataset",
    "get_dataset",
    "list_datasets",
    "load_dataset",
    "subset",
]


def _dir(data_dir: PathLike | None) -> str | None:
    return None if data_dir is None else os.fspath(data_dir)


def _count(count: int, k: int | None) -> int:
    """``count`` (neighbours per query, the name ``run`` and the reports use), or the
    deprecated ``k=`` when given."""
    if k is None:
        return count
    warnings.warn(
        "k= is now count= (the name run(), results() and the CLI's --count use)",
        DeprecationWarning,
        stacklevel=3,
    )
    return k


def _f32(name: str, array: npt.ArrayLike) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A 2-D float32 C-ordered view of ``array``: no copy when it already is one."""
    out = np.ascontiguousarray(array, dtype=np.float32)
    if out.ndim != 2:
        raise _annbench.DatasetError(
            f"{name} must be a 2-D array (rows x dimension), got shape {out.shape}"
        )
    return out


def load_dataset(name_or_path: PathLike, data_dir: PathLike | None = None) -> Dataset:
    """Loads a dataset by name (from the data dir, or a bundled or synthetic set) or by HDF5
    path. ``train``, ``test``, ``neighbors`` and ``distances`` are numpy arrays that own the
    memory Rust read the file into (no copy); ``neighbors``/``distances`` are None when the
    file has no ground truth."""
    return _annbench.load_dataset(os.fspath(name_or_path), _dir(data_dir))


def get_dataset(
    name: str, data_dir: PathLike | None = None, *, force: bool = False, progress: bool = True
) -> Path:
    """Makes the known dataset ``name`` present in the data dir (download with resume,
    generate, or unpack a bundled set) and returns its path. ``data_dir`` defaults to
    ``$ANNBENCH_DATA_DIR`` or ``data``."""
    return Path(_annbench.get_dataset(name, _dir(data_dir), force, progress))


def create_dataset(
    vectors: npt.ArrayLike | PathLike,
    *,
    metric: str,
    name: str | None = None,
    test: npt.ArrayLike | PathLike | None = None,
    test_size: int | None = None,
    seed: int = 1,
    count: int = 100,
    dim: int | None = None,
    k: int | None = None,
) -> Dataset:
    """Builds a dataset with exact ground truth from your vectors.

    ``vectors`` is a 2-D array, or a ``.npy`` / ``.fvecs`` / raw float32 file (raw needs
    ``dim``). Queries are ``test`` (array or file), or else ``test_size`` rows (default 10%,
    at most 10,000) split off ``vectors`` with a seeded shuffle. ``metric`` is ``euclidean``
    or ``angular``. ``count``: ground-truth neighbours per query (``k=`` is its old name).
    Save it with ``Dataset.save(path)``."""
    count = _count(count, k)
    if isinstance(vectors, (str, os.PathLike)):
        if test is not None and not isinstance(test, (str, os.PathLike)):
            raise _annbench.ConfigError("with vectors from a file, give test as a file too")
        query_file = None if test is None else os.fspath(test)
        return _annbench.create_from_file(
            os.fspath(vectors), metric, name, query_file, test_size, dim, seed, count
        )
    if name is None:
        raise _annbench.ConfigError("create_dataset from arrays needs name=...")
    if isinstance(test, (str, os.PathLike)):
        raise _annbench.ConfigError("with vectors as an array, give test as an array too")
    queries = None if test is None else _f32("test", test)
    return _annbench.create_from_arrays(
        name, _f32("vectors", vectors), metric, queries, test_size, seed, count
    )


def subset(
    source: PathLike,
    train: int,
    test: int | None = None,
    *,
    count: int = 100,
    name: str | None = None,
    data_dir: PathLike | None = None,
    k: int | None = None,
) -> Dataset:
    """The first ``train`` train and ``test`` test rows of ``source`` (name or path), with
    ground truth (``count`` neighbours per query; ``k=`` is its old name) recomputed over
    the kept train rows. Default name: ``glove-25-100k-angular`` style. Save it with
    ``Dataset.save(path)``."""
    count = _count(count, k)
    return _annbench.subset(os.fspath(source), train, test, count, name, _dir(data_dir))


def compute_groundtruth(
    train: npt.ArrayLike,
    test: npt.ArrayLike,
    metric: str,
    count: int = 100,
    *,
    k: int | None = None,
) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.float32]]]:
    """Exact ``count`` nearest neighbours of each ``test`` row among the ``train`` rows:
    ``(neighbors int32, distances float32)``, each ``len(test) x count``, nearest first
    (``k=`` is the old name of ``count``). float32 C-ordered arrays are read in place; other
    inputs are converted once."""
    count = _count(count, k)
    return _annbench.compute_groundtruth(_f32("train", train), _f32("test", test), metric, count)


def list_datasets(data_dir: PathLike | None = None) -> pd.DataFrame:
    """Known datasets: name, dimension, metric, train and test rows, source (``download``,
    ``generate``, ``bundled``: the ``annbench datasets`` command that makes it local; ``local``
    for the other dataset files of the data dir, such as created sets and subsets) and path (the local file, or None)."""
    import pandas as pd

    return pd.DataFrame.from_records(_annbench.list_datasets(_dir(data_dir)))
