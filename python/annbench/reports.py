"""Reports over the result store as pandas DataFrames. The rows come from the Rust report
module's JSON export, so the numbers are exactly those of ``annbench table/export/compare``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Union

import pandas as pd

from . import _annbench
from .frames import records_to_frame, rows_to_frame

PathLike = Union[str, "os.PathLike[str]"]

#: Recall thresholds of the best-QPS-at-recall table when none are given.
DEFAULT_RECALLS: tuple[float, ...] = (1.0, 0.99, 0.98, 0.97, 0.96, 0.95)

__all__ = [
    "DEFAULT_RECALLS",
    "build_table",
    "clients_table",
    "compare",
    "compare_matrix",
    "report",
    "results",
    "table",
]


def _dir(path: PathLike | None) -> str | None:
    return None if path is None else os.fspath(path)


def results_dir(results: PathLike | None) -> str:
    """The result store: ``results``, else ``$ANNBENCH_RESULTS``, else ``results`` (as the
    CLI's ``--results``)."""
    if results is not None:
        return os.fspath(results)
    return os.environ.get("ANNBENCH_RESULTS") or "results"


def existing_store(results: PathLike | None) -> str:
    """:func:`results_dir` for reading: a directory that does not exist is an error (a typo
    would otherwise read as a store without points)."""
    path = results_dir(results)
    if os.path.isdir(path):
        return path
    if results is not None:
        given = f"results={os.fspath(results)!r}"
    else:
        given = f"the default store {path!r} ($ANNBENCH_RESULTS, else ./results)"
    what = "is not a directory" if os.path.exists(path) else "does not exist"
    raise _annbench.ResultsError(
        f"{given} {what} ({os.path.abspath(path)}): pass the results= directory that "
        "annbench.run(...) wrote, or set ANNBENCH_RESULTS"
    )


def results(
    dataset: PathLike,
    count: int = 10,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
) -> pd.DataFrame:
    """Every stored point of ``dataset`` at ``count`` neighbours, one row each: identity
    (dataset, count, algorithm, label, clients, name), recall, epsilon_recall, qps (the
    median pass) with its 95% interval qps_ci_low/qps_ci_high (coverage qps_ci_level),
    qps_best (the best pass), qps_min/qps_max/qps_cv over the passes in use, passes (in use)
    and passes_total, flags (``interference``, ``spread``, ``stalled``, ``tolerance``), the
    worst other_cpu_share/steal_share/load_average of those passes, cpu_probe_us (the CPU speed
    probe, docs/methodology.md), short_results, latency mean and
    percentiles of the median pass (``latency_*_ms``, milliseconds), build_seconds (index
    build alone), load_seconds, index_mib and table_mib (MiB = 2^20 bytes), the server cost
    per query (``server_cpu_ms``, ...), then one ``param_<name>`` column per build or query
    parameter (integers as ``Int64``). Names and units: docs/vocabulary.md. ann-benchmarks
    result files in the same directory are included."""
    store = existing_store(results)
    text = _annbench.export_json(os.fspath(dataset), count, store, _dir(data_dir))
    return rows_to_frame(json.loads(text))


def table(
    dataset: PathLike,
    count: int = 10,
    recall: Sequence[float] = DEFAULT_RECALLS,
    *,
    base: str | None = None,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
    stat: str = "median",
) -> pd.DataFrame:
    """Best QPS at each recall threshold (recall >= threshold, exactly), per algorithm,
    label and client count: recall_threshold, algorithm (the id, as in :func:`results`),
    label, clients, reached, name, recall, qps with qps_ci_low/qps_ci_high and flags,
    build_seconds, index_mib, best_recall, tie (the winner's interval overlaps its
    runner-up's) with runner_up, runner_up_qps and its interval, vs_base (QPS ratio to the
    ``base`` algorithm id or run label at the same threshold) when ``base`` is given, then the winner's
    ``param_<name>`` columns. A series that never reaches a threshold has a row with
    ``reached`` False. ``stat="best"``: best passes, as ann-benchmarks (no intervals)."""
    text = _annbench.table_json(
        os.fspath(dataset),
        count,
        list(recall),
        base,
        existing_store(results),
        _dir(data_dir),
        stat=stat,
    )
    return records_to_frame(json.loads(text))


def _compare_parsed(
    base: str,
    me: list[str],
    dataset: PathLike,
    count: int,
    recall: Sequence[float],
    *,
    results: PathLike | None,
    data_dir: PathLike | None,
    noise: float,
    stat: str,
    judge_disturbed: bool,
    paired_noise: float,
    matrix: bool,
) -> dict[str, Any]:
    """The parsed JSON of the Rust comparison that :func:`compare` and
    :func:`compare_matrix` turn into frames (``matrix`` picks the per-server cells)."""
    text = _annbench.compare_json(
        base,
        me,
        os.fspath(dataset),
        count,
        list(recall),
        existing_store(results),
        _dir(data_dir),
        noise=noise,
        stat=stat,
        judge_disturbed=judge_disturbed,
        paired_noise=paired_noise,
        matrix=matrix,
    )
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def compare(
    base: str,
    me: str,
    dataset: PathLike,
    count: int = 10,
    recall: Sequence[float] = DEFAULT_RECALLS,
    *,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
    noise: float = 0.05,
    stat: str = "median",
    judge_disturbed: bool = False,
    paired_noise: float = 0.01,
) -> pd.DataFrame:
    """Relative QPS of the run labelled ``me`` against the run labelled ``base``: one row
    per matched pair (``match`` is ``params`` for the same algorithm, parameters and
    clients, ``recall`` for each side's best point at a recall threshold), with base/me
    names, recalls, QPS with their intervals and flags, ``ratio`` = me_qps / base_qps with
    its 95% interval (ratio_ci_low, ratio_ci_high, ratio_ci_level), and ``verdict``:
    ``faster`` / ``slower`` when the whole interval lies beyond +-``noise``, else
    ``within noise``; ``disturbed`` (no difference claimed) when a side was measured under
    heavy interference or with a stalled pass, unless ``judge_disturbed``. Points of the
    two labels that ran interleaved in one run are paired round by round (``rule`` is
    ``paired``; ``rounds``, ``paired_half_width``, ``build_half_width``; ``switches_ratio``
    for context switches per query) and judged against ``paired_noise`` (docs/methodology.md).
    Storage (docs/server-cost.md): ``base_storage`` / ``me_storage`` (``cached`` or
    ``io-bound``), each side's ``server_read_kib`` per query and, where both read some,
    ``read_ratio`` with its interval and ``read_verdict`` (``more``, ``fewer``).
    The summary of the ratios per match kind (n, counts of each verdict, geometric mean,
    median, min, max, each with a bootstrap interval) is in ``df.attrs["summary"]``; what to
    keep in mind (build variance, flagged points, pairing) in ``df.attrs["notes"]``; the
    paired pairs, their median half-width and the build spread in ``df.attrs["pairing"]``;
    the server settings whose values differ (``[{"setting": ..., "values": {label: value}}]``)
    in ``df.attrs["settings_differ"]``; the labels and source in ``df.attrs["base"]``,
    ``["me"]``, ``["dataset"]`` and ``["count"]``."""
    parsed = _compare_parsed(
        base,
        [me],
        dataset,
        count,
        recall,
        results=results,
        data_dir=data_dir,
        noise=noise,
        stat=stat,
        judge_disturbed=judge_disturbed,
        paired_noise=paired_noise,
        matrix=False,
    )
    frame = pd.DataFrame.from_records(parsed["pairs"])
    frame.attrs["summary"] = pd.DataFrame.from_records(parsed["summary"])
    frame.attrs["notes"] = list(parsed["notes"])
    frame.attrs["pairing"] = parsed["pairing"]
    frame.attrs["settings_differ"] = list(parsed["settings_differ"])
    # The two labels and the source, for plot titles (annbench.plot.relative_qps).
    frame.attrs.update(base=base, me=me, dataset=os.fspath(dataset), count=count)
    return frame


def compare_matrix(
    base: str,
    me: Sequence[str],
    dataset: PathLike,
    count: int = 10,
    recall: Sequence[float] = DEFAULT_RECALLS,
    *,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
    noise: float = 0.05,
    paired_noise: float = 0.01,
    stat: str = "median",
    judge_disturbed: bool = False,
) -> pd.DataFrame:
    """The matrix of the runs labelled ``me`` (one or more) against ``base``, as
    ``annbench compare --me A --me B``: one row per cell (a matched point or recall
    threshold, times a server), with match, algorithm, clients, recall_threshold,
    base_name, base_qps, server, me_name, me_qps, ``ratio`` (server / base) with
    ratio_ci_low and ratio_ci_high, verdict, ``significant`` (the verdict is faster or
    slower), ``rule`` (``paired`` when the two servers ran interleaved in one run, else
    ``unpaired``), rounds, paired_half_width, build_half_width and the server CPU per query
    ratio (cpu_ratio, its interval, cpu_verdict). ``df.attrs["matrix"]`` is the table as
    published (rows: base_name or threshold, columns: servers, values: ratio);
    ``df.attrs["settings_differ"]``, ``["pairing"]`` and ``["notes"]`` (per server) as in
    :func:`compare`."""
    if isinstance(me, str):
        me = [me]
    parsed = _compare_parsed(
        base,
        list(me),
        dataset,
        count,
        recall,
        results=results,
        data_dir=data_dir,
        noise=noise,
        stat=stat,
        judge_disturbed=judge_disturbed,
        paired_noise=paired_noise,
        matrix=True,
    )
    frame = pd.DataFrame.from_records(parsed["cells"])
    if not frame.empty:
        row = frame["base_name"].where(
            frame["match"] == "params",
            "recall >= " + frame["recall_threshold"].astype(str),
        )
        wide = frame.assign(row=row).pivot_table(
            index=["match", "algorithm", "clients", "row"],
            columns="server",
            values="ratio",
            sort=False,
        )
        frame.attrs["matrix"] = wide.reindex(columns=list(parsed["servers"]))
    else:
        frame.attrs["matrix"] = pd.DataFrame()
    frame.attrs["settings_differ"] = list(parsed["settings_differ"])
    frame.attrs["pairing"] = parsed["pairing"]
    frame.attrs["notes"] = parsed["notes"]
    frame.attrs.update(
        base=base, servers=list(parsed["servers"]), dataset=os.fspath(dataset), count=count
    )
    return frame


def build_table(
    dataset: PathLike,
    count: int = 10,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
) -> pd.DataFrame:
    """One row per built index: algorithm, label, name, one ``param_<name>`` column per
    build parameter (``param_m``, ``param_ef_construction``; integers as ``Int64``),
    build_seconds, build_cpu_seconds, index_mib, table_mib (MiB = 2^20 bytes),
    load_seconds, points."""
    store = existing_store(results)
    text = _annbench.build_json(os.fspath(dataset), count, store, _dir(data_dir))
    return records_to_frame(json.loads(text))


def clients_table(
    dataset: PathLike,
    count: int = 10,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
) -> pd.DataFrame:
    """QPS vs concurrent clients at fixed parameters (the classic "clients | QPS" table):
    algorithm, label, name, clients, qps, latency_p50_ms, latency_p99_ms, recall, scaling,
    ..."""
    store = existing_store(results)
    text = _annbench.clients_json(os.fspath(dataset), count, store, _dir(data_dir))
    return pd.DataFrame.from_records(json.loads(text))


def report(
    dataset: PathLike,
    output: PathLike = "report.html",
    count: int = 10,
    recall: Sequence[float] = DEFAULT_RECALLS,
    *,
    base: str | None = None,
    label: str | None = None,
    clients: int | None = None,
    title: str | None = None,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
) -> Path:
    """Writes the self-contained HTML report of ``dataset`` (the same file as ``annbench
    report``) to ``output`` and returns its path. The page needs no server or network:
    interactive QPS-vs-recall, build-time, index-size and (when measured) QPS-vs-clients
    charts, the best-QPS-at-recall, build and clients tables, comparisons of each label
    against ``base`` (default: the label measured first) and the run metadata. ``label``
    and ``clients`` keep only those points; ``recall`` sets the table's thresholds."""
    _annbench.report_html(
        os.fspath(dataset),
        os.fspath(output),
        count,
        list(recall),
        base,
        label,
        clients,
        title,
        existing_store(results),
        _dir(data_dir),
    )
    return Path(output)
