"""``annbench.stream``: run a streaming runbook (big-ann-benchmarks' format: inserts, deletes,
replaces, searches and maintenance steps) against one algorithm, as ``annbench stream`` does,
and get one DataFrame row per step (and query point at a search step)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, Union

import pandas as pd

from . import _annbench
from .frames import records_to_frame
from .reports import results_dir
from .sweep import Grid, _overrides

PathLike = Union[str, "os.PathLike[str]"]
Callback = Callable[[dict[str, Any]], None]

__all__ = ["STREAM_COLUMNS", "stream", "stream_results"]

#: The columns of a stream frame, in order (``annbench export --streams``; what each holds is
#: listed in docs/streaming.md).
STREAM_COLUMNS: tuple[str, ...] = (
    "dataset", "count", "algorithm", "label", "clients", "entry", "runbook_fingerprint",
    "build", "query", "step", "operation", "rows", "live_rows", "recall", "not_live",
    "short_results", "qps", "qps_ci_low", "qps_ci_high", "latency_p50_ms", "latency_p99_ms",
    "write_rows", "rows_changed", "undone_rows", "target_rate", "achieved_rate", "batch_rows", "batch_p50_ms", "batch_p99_ms",
    "backlog_rows", "behind_seconds", "freshness_ms", "freshness_found", "freshness_markers",
    "during_clients", "during_qps", "during_p99_ms", "baseline_qps", "baseline_p99_ms",
    "maintenance", "maintenance_seconds", "recall_before", "recall_after", "table_mib",
    "index_mib", "dead_tuples", "step_seconds", "started_seconds", "build_seconds",
)


def _frame(text: str) -> pd.DataFrame:
    frame = records_to_frame(json.loads(text))
    for column in STREAM_COLUMNS:
        if column not in frame.columns:
            frame[column] = pd.NA
    ordered: pd.DataFrame = frame[list(STREAM_COLUMNS)]
    return ordered


def stream(
    dataset: PathLike,
    runbook: PathLike,
    algorithm: str,
    *,
    entry: str | None = None,
    config: PathLike | None = None,
    build: Grid = None,
    query: Grid = None,
    count: int = 10,
    runs: int = 5,
    min_time: float = 0.3,
    max_time: float | None = None,
    clients: int = 1,
    batch: int = 1000,
    markers: int = 5,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
    force: bool = False,
    label: str | None = None,
    timeout: float | None = None,
    progress: bool | Callback = False,
    **servers: str | None,
) -> pd.DataFrame:
    """Runs ``runbook`` against ``algorithm`` on ``dataset`` and returns one row per step (a
    search step once per query point), with the columns of :data:`STREAM_COLUMNS`: per search
    step ``recall`` against exact truth over the rows live at that step, ``not_live`` (returned
    ids that were deleted or never inserted), ``qps`` with its interval and latency; per write
    step the rate reached (``achieved_rate``) against ``target_rate``, batch latency,
    ``freshness_ms`` and the searches during it; sizes after each write.

    ``runs``, ``min_time`` and ``max_time`` (seconds) mean what they mean in
    :func:`annbench.run`: each query point of a search step gets at least ``runs`` timed passes
    of at least ``min_time``, and extra passes while they stall or spread widely, until its
    timed passes have lasted ``max_time`` (default twice ``runs`` x ``min_time``).

    ``entry``: the runbook's entry when it is not named like the dataset. Without ``config``,
    ``build`` and ``query``, the default grid's first build point at one query point runs.
    Each completed step is stored at once; a rerun resumes after the last stored step when the
    server's table is still in that state, else starts again (with a warning). Server URLs are
    keywords named after their database, as in :func:`annbench.run`. ``progress``: a callable
    given each event dict (``kind == "stream_step"`` after each step), or False."""
    callback: Callback | None = progress if callable(progress) else None
    text = _annbench.run_stream(
        os.fspath(dataset),
        os.fspath(runbook),
        algorithm,
        entry=entry,
        config=None if config is None else os.fspath(config),
        build=_overrides(build, "build"),
        query=_overrides(query, "query"),
        count=count,
        runs=runs,
        min_time=min_time,
        max_time=max_time,
        clients=clients,
        batch=batch,
        markers=markers,
        results=results_dir(results),
        data_dir=None if data_dir is None else os.fspath(data_dir),
        force=force,
        label=label,
        timeout=timeout,
        servers={key: url for key, url in servers.items() if url is not None},
        callback=callback,
    )
    return _frame(text)


def stream_results(
    dataset: PathLike, *, count: int = 10, results: PathLike | None = None
) -> pd.DataFrame:
    """The stored streaming runs of ``dataset`` (k = ``count``), one row per step, as
    :func:`stream` returns them."""
    return _frame(_annbench.stream_results(os.fspath(dataset), count, results_dir(results)))
