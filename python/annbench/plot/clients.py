"""Throughput against the number of concurrent clients."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from .._annbench import ConfigError, ResultsError
from ..frames import param_columns
from . import figure as _figure
from .data import default_title, group_rows, line_name, numeric, params_text, require
from .figure import DPI, FIGSIZE, PathLike
from .style import MARKERS, Style, shades


def qps_clients(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    recall: float | None = None,
    sets: int | None = 4,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Measured throughput against the number of concurrent clients (log 2 scale).

    Without ``recall``: one line per parameter set measured at two or more client counts,
    at most ``sets`` per algorithm and label: those on the QPS-recall Pareto frontier at the
    fewest clients, spread over the recall range (``sets=None``: every parameter set). The
    legend names each set with its recall; colour is the algorithm (lighter for lower
    recall), marker the set, line style the label.

    With ``recall``: one line per algorithm and label, the best QPS among points whose recall
    is ``>= recall`` at each client count."""
    data = require(df, ["clients", "qps"], "qps_clients")
    if "recall" in data.columns:
        data = data.assign(recall=numeric(data["recall"], "recall", "qps_clients"))
    if recall is None and sets is not None and sets < 1:
        raise ConfigError(f"qps_clients: sets={sets!r}; give 1 or more, or None for every set")
    _figure.check_path(path)
    style = Style(data)
    fig, axes = _figure.target(ax, figsize, dpi, "qps_clients")
    legend_title: str | None = None
    if recall is not None:
        data = require(data, ["recall"], "qps_clients")
        lines = _best_at_recall(data, recall)
        what = f"Throughput vs clients, best QPS at recall >= {recall:g}"
    else:
        lines = _parameter_sets(data, sets)
        what = "Throughput vs clients"
        shown = "every parameter set" if sets is None else f"Pareto parameter sets, <= {sets}"
        legend_title = f"{shown} per algorithm; recall at the fewest clients"
    for values, rows, look in _styled(lines, style):
        rows = rows.sort_values("clients")
        axes.plot(rows["clients"], rows["qps"], label=values["text"], markersize=5, **look)
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlabel("Concurrent clients")
    axes.set_ylabel("Queries per second (1/s)")
    axes.legend(fontsize="small", title=legend_title, title_fontsize="small")
    return _figure.finish(fig, axes, title or default_title(data, what), path)


Line = tuple[dict[str, Any], pd.DataFrame]


def _styled(lines: list[Line], style: Style) -> list[tuple[dict[str, Any], pd.DataFrame, Any]]:
    """Colour by algorithm, line style by label; several sets of one algorithm and label get
    lighter shades and their own markers."""
    out: list[tuple[dict[str, Any], pd.DataFrame, Any]] = []
    per_series: dict[tuple[Any, ...], int] = {}
    for values, _ in lines:
        series = (values.get("algorithm"), values.get("label"))
        per_series[series] = per_series.get(series, 0) + 1
    seen: dict[tuple[Any, ...], int] = {}
    for values, rows in lines:
        series = (values.get("algorithm"), values.get("label"))
        i = seen.get(series, 0)
        seen[series] = i + 1
        shade = list(shades(per_series[series]))[i]
        look = {
            "color": style.colour(values.get("algorithm"), shade),
            "linestyle": style.linestyle(values.get("label")),
            "marker": MARKERS[i % len(MARKERS)],
        }
        out.append((values, rows, look))
    return out


def _parameter_sets(df: pd.DataFrame, sets: int | None) -> list[Line]:
    params = param_columns(df)
    series_keys = [c for c in ("algorithm", "label") if c in df.columns]
    lines: list[Line] = []
    for values, series in group_rows(df, series_keys):
        candidates: list[tuple[float, float, dict[str, Any], pd.DataFrame]] = []
        for set_values, rows in group_rows(series, params, sort=False):
            if rows["clients"].nunique() < 2:
                continue
            first = rows.sort_values("clients", kind="mergesort").iloc[0]
            rec = float(first["recall"]) if "recall" in rows.columns else float("nan")
            candidates.append((rec, float(first["qps"]), set_values, rows))
        if sets is not None:
            candidates = _spread(_front(candidates), sets)
        for rec, _, set_values, rows in candidates:
            text = line_name(values)
            desc = params_text(set_values, params)
            if desc:
                text += f"({desc})"
            if rec == rec:  # not NaN
                text += f", recall {rec:.3f}"
            lines.append(({**values, "text": text}, rows))
    if not lines:
        raise ResultsError(
            "qps_clients: no parameter set was measured at two or more client counts; "
            "run with clients=(1, 2, 4, 8) or pass recall= to compare the best QPS at a recall"
        )
    return lines


def _front(candidates: list[Any]) -> list[Any]:
    """The QPS-recall Pareto frontier of the candidate sets, highest recall first (sets
    without a recall are all kept, after)."""
    known = sorted((c for c in candidates if c[0] == c[0]), key=lambda c: (-c[0], -c[1]))
    front: list[Any] = []
    for c in known:
        if not front or c[1] > front[-1][1]:
            front.append(c)
    return front + [c for c in candidates if c[0] != c[0]]


def _spread(front: list[Any], count: int) -> list[Any]:
    """At most ``count`` of ``front``, evenly spaced along it, the highest recall kept."""
    if len(front) <= count:
        return front
    if count == 1:
        return front[:1]
    picks = sorted({round(i * (len(front) - 1) / (count - 1)) for i in range(count)})
    return [front[i] for i in picks]


def _best_at_recall(df: pd.DataFrame, recall: float) -> list[Line]:
    hits = df[df["recall"] >= recall]
    if hits.empty:
        raise ResultsError(f"qps_clients: no point reaches recall >= {recall:g}")
    keys = [c for c in ("algorithm", "label") if c in df.columns]
    lines: list[Line] = []
    for values, rows in group_rows(hits, keys):
        best = rows.sort_values("qps", kind="mergesort").groupby("clients").tail(1)
        lines.append(({**values, "text": line_name(values)}, best))
    return lines
