"""A series of labelled runs and its change points (``annbench history``) as a DataFrame."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import pandas as pd

from . import _annbench
from ._annbench import ConfigError
from .reports import PathLike, _dir, results_dir

__all__ = ["change_points", "history"]

#: Metrics of every line, with whether higher is better.
HISTORY_METRICS: dict[str, bool] = {
    "qps": True,
    "recall": True,
    "server_cpu_per_query": False,
    "server_switches_per_query": False,
}


def history(
    dataset: PathLike,
    count: int = 10,
    *,
    series: Sequence[str] = (),
    order: str | None = None,
    base: str | None = None,
    algorithms: Sequence[str] = (),
    recall: Sequence[float] = (0.99, 0.95, 0.9),
    window: int = 8,
    max_pvalue: float = 0.001,
    min_magnitude: float = 0.02,
    hosts_any: bool = False,
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
) -> pd.DataFrame:
    """The series of labelled runs of ``dataset``, as ``annbench history``: one row per line
    (a point's parameters, or the best QPS at a recall threshold) and run, with ``index``,
    ``label``, ``time``, ``server_version``, the point, ``qps`` with ``qps_ci_low`` /
    ``qps_ci_high``, ``recall``, ``server_cpu_per_query``, ``server_switches_per_query``, each
    with its ``*_ratio`` against ``base`` (default: the first run), and ``changes`` (the change
    points that start at that run). ``series``: labels or globs in order (``order`` then
    defaults to ``given``, else ``time``; ``version`` orders by server version).

    ``df.attrs["change_points"]`` is a DataFrame of the change points with Apache Otava's
    fields (metric, index, label, time, forward_change_percent, magnitude, mean and standard
    deviation before and after, pvalue) plus ``line``, ``kind`` (regression or improvement)
    and ``higher_is_better``; ``df.attrs["newest_after_regression"]``: the newest run lies
    after a regression; ``df.attrs["gate_fails"]``: one of those has a p-value below
    ``df.attrs["gate_pvalue"]`` (max_pvalue over the series searched), the rule of
    ``--fail-on regression``; ``df.attrs["elements"]`` and ``["notes"]`` as in the JSON."""
    text = _annbench.history_json(
        os.fspath(dataset),
        count,
        series=_names(series, "series"),
        order=order,
        base=base,
        algorithms=_names(algorithms, "algorithms"),
        recall=list(recall),
        window=window,
        max_pvalue=max_pvalue,
        min_magnitude=min_magnitude,
        hosts_any=hosts_any,
        results=results_dir(results),
        data_dir=_dir(data_dir),
    )
    parsed: dict[str, Any] = json.loads(text)
    elements = parsed["elements"]
    rows: list[dict[str, Any]] = []
    for line in parsed["lines"]:
        key = line["key"]
        for element, values in zip(elements, line["values"]):
            here = [c for c in line["change_points"] if c["index"] == element["index"]]
            row: dict[str, Any] = {
                "line": line["name"],
                "kind": key["kind"],
                "algorithm": key["algorithm"],
                "clients": key["clients"],
                "threshold": key.get("threshold"),
                "index": element["index"],
                "label": element["label"],
                "time": pd.to_datetime(element["time"], utc=True) if element["time"] else pd.NaT,
                "server_version": element["server_version"],
                "hosts": " ".join(element["hosts"]),
                "changes": "; ".join(
                    f"{c['metric']} {c['kind']} {c['forward_change_percent']:+.1f}%" for c in here
                ),
            }
            row.update(values or {})
            rows.append(row)
    frame = pd.DataFrame.from_records(rows)
    frame.attrs["change_points"] = pd.DataFrame.from_records(parsed["change_points"])
    frame.attrs["elements"] = elements
    frame.attrs["notes"] = list(parsed["notes"])
    frame.attrs["newest_after_regression"] = bool(parsed["newest_after_regression"])
    frame.attrs["gate_fails"] = bool(parsed["gate_fails"])
    frame.attrs["gate_pvalue"] = float(parsed["gate_pvalue"])
    frame.attrs["options"] = parsed["options"]
    frame.attrs.update(dataset=os.fspath(dataset), count=count)
    return frame


def _names(value: str | Sequence[str], what: str) -> list[str]:
    """A list of labels or names; one string is one name (``"nightly-*"``), or a
    comma-separated list of them, as on the command line."""
    if isinstance(value, str):
        return [v for v in value.split(",") if v]
    names = list(value)
    if not all(isinstance(v, str) for v in names):
        raise ConfigError(f"{what}=: give label strings, e.g. ['nightly-1', 'nightly-*']")
    return names


def _floats(values: Any, what: str = "values") -> list[float]:
    """Numbers as floats; anything else is a ConfigError naming it."""
    try:
        items = list(values)
    except TypeError:
        raise ConfigError(f"change_points: {what}: give a list of numbers") from None
    out = []
    for i, v in enumerate(items):
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            raise ConfigError(f"change_points: {what}[{i}] is {v!r}, not a number") from None
    return out


def change_points(
    values: Sequence[float],
    *,
    window: int = 50,
    max_pvalue: float = 0.001,
    min_magnitude: float = 0.0,
) -> pd.DataFrame:
    """The change points of one series of numbers by Apache Otava's method, with Otava's
    options and defaults (``otava analyze --window 50 -P 0.001 -M 0``): one row per change
    point with ``index`` (the first element of the new level), mean and standard deviation
    before and after, ``forward_change_percent``, ``magnitude`` and ``pvalue``."""
    if values is None or isinstance(values, (str, bytes)):
        raise ConfigError("change_points: give a list of numbers")
    window_, max_pvalue_, min_magnitude_ = _floats([window, max_pvalue, min_magnitude], "option")
    if window_ != int(window_):
        raise ConfigError(f"change_points: window={window!r}: give a whole number of 2 or more")
    text = _annbench.change_points_json(
        _floats(values),
        window=int(window_),
        max_pvalue=max_pvalue_,
        min_magnitude=min_magnitude_,
    )
    columns = [
        "index",
        "mean_before",
        "stddev_before",
        "mean_after",
        "stddev_after",
        "forward_change_percent",
        "magnitude",
        "pvalue",
    ]
    return pd.DataFrame.from_records(json.loads(text), columns=columns)
