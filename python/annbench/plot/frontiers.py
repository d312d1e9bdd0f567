"""Any metric against any other (recall, QPS, latency percentiles, build time, index size,
server CPU): each series' Pareto frontier, its intervals and, on request, every point; and the
classic plots as thin wrappers (QPS, build time, index size, server CPU against recall)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter

from .._annbench import ResultsError
from ..frames import frontier, param_columns
from . import figure as _figure
from .data import default_title, group_rows, line_name, require
from .figure import DPI, FIGSIZE, PathLike
from .metrics import LOGIT_EDGE, Metric, MetricLike, check_scale, for_scale, resolve
from .style import Style


def metric(
    df: pd.DataFrame,
    x: MetricLike = "recall",
    y: MetricLike = "qps",
    path: PathLike | None = None,
    *,
    raw: bool = False,
    x_scale: str | None = None,
    y_scale: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """``y`` against ``x``, both chosen from :data:`annbench.plot.METRICS` by name
    (``recall``, ``epsilon_recall``, ``qps``, ``latency_p99_ms``, ``build_seconds``,
    ``index_mib``, ``server_cpu_ms``, ...) or given as :class:`annbench.plot.Metric`: each
    series' Pareto frontier (the best ``y`` for each ``x``, each metric knowing which way is
    better), with the 95% interval of ``y`` as error bars where the frame has
    ``<y>_ci_low`` / ``<y>_ci_high`` (QPS), and with ``raw=True`` every point, faded.

    A series is one algorithm, run label and client count; when neither metric depends on
    the client count (recall, build time, index size) client counts are collapsed: one line
    per algorithm and label. Colour is the algorithm, line style the label, marker the
    client count. ``x_scale`` / ``y_scale``: ``linear``, ``log`` or ``logit`` (default: the
    metric's own); on a logit axis recall 1.0 is drawn at 0.9999, its edge, labelled 1. ``ax``: draw
    into that Axes (e.g. from :func:`annbench.plot.subplots`) and return its figure
    (``figsize`` and ``dpi`` are then the figure's)."""
    return draw(
        df, x, y, path, what="metric", raw=raw, x_scale=x_scale, y_scale=y_scale, ax=ax,
        title=title, figsize=figsize, dpi=dpi,
    )


def qps_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = False,
    *,
    x_scale: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Queries per second (log scale) against recall: ``metric(df, "recall", "qps")``, the
    Pareto frontier of each algorithm, label and client count with each point's 95% interval;
    ``raw=True`` adds every measured point, faded."""
    return draw(
        df, "recall", "qps", path, what="qps_recall", raw=raw, x_scale=x_scale, ax=ax,
        title=title, figsize=figsize, dpi=dpi,
    )


def build_time_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = True,
    *,
    x_scale: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Index build seconds (the build alone, not the load; log scale) against recall: per
    algorithm and label, the cheapest build that reaches each recall, and the raw points
    (one line whatever the client counts: a build property)."""
    return draw(
        df, "recall", "build_seconds", path, what="build_time_recall", raw=raw,
        x_scale=x_scale, ax=ax, title=title, figsize=figsize, dpi=dpi,
    )


def index_size_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = True,
    *,
    x_scale: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Index size on the server (MiB, log scale) against recall: per algorithm and label,
    the smallest index that reaches each recall, and the raw points (one line whatever the
    client counts: a build property)."""
    return draw(
        df, "recall", "index_mib", path, what="index_size_recall", raw=raw, x_scale=x_scale,
        ax=ax, title=title, figsize=figsize, dpi=dpi,
    )


def server_cpu_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = True,
    *,
    x_scale: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """The database server's CPU milliseconds per query (user + system, local servers; log
    scale) against recall: per series, the cheapest point that reaches each recall, and the
    raw points. Points without a server CPU figure (remote servers) are left out."""
    data = require(df, ["recall", "server_cpu_ms"], "server_cpu_recall")
    if data.dropna(subset=["server_cpu_ms"]).empty:
        raise ResultsError(
            "server_cpu_recall: no point has server CPU per query (measured for local "
            "servers only; see docs/server-cost.md)"
        )
    return draw(
        data, "recall", "server_cpu_ms", path, what="server_cpu_recall", raw=raw,
        x_scale=x_scale, ax=ax, title=title, figsize=figsize, dpi=dpi,
    )


def draw(
    df: pd.DataFrame,
    x_metric: MetricLike,
    y_metric: MetricLike,
    path: PathLike | None,
    *,
    what: str,
    raw: bool,
    x_scale: str | None = None,
    y_scale: str | None = None,
    ax: Axes | None,
    title: str | None,
    figsize: tuple[float, float],
    dpi: int,
) -> Figure:
    x, y = resolve(x_metric, what, "x"), resolve(y_metric, what, "y")
    xs = check_scale(x_scale or x.scale, what, "x")
    ys = check_scale(y_scale or y.scale, what, "y")
    _figure.check_path(path)
    data = require(df, [x.column, y.column], what)
    style = Style(data)
    per_client = x.per_client or y.per_client
    if not per_client:
        data = _one_row_per_parameter_set(data)
    keys = [c for c in ("algorithm", "label", "clients") if c in data.columns]
    if not per_client:
        keys = [k for k in keys if k != "clients"]
    fig, axes = _figure.target(ax, figsize, dpi, what)
    drawn: list[pd.DataFrame] = []
    for values, rows in group_rows(data, keys):
        front = frontier(
            rows,
            x.column,
            y.column,
            lower_is_better=y.lower_is_better,
            x_lower_is_better=x.lower_is_better,
        )
        if front.empty:
            continue
        drawn.append(rows)
        look = style.look(values)
        fx = for_scale(front[x.column], xs, x, what)
        fy = for_scale(front[y.column], ys, y, what)
        axes.plot(fx, fy, label=_series_label(values), markersize=5, **look)
        _error_bars(axes, front, fx, y, look["color"])
        if raw:
            axes.scatter(
                for_scale(rows[x.column], xs, x, what),
                for_scale(rows[y.column], ys, y, what),
                color=look["color"],
                marker=look["marker"],
                alpha=0.25,
                s=14,
            )
    if not drawn:
        raise ResultsError(f"{what}: no series has points with {x.column} and {y.column}")
    _axis(axes, "x", xs, x)
    _axis(axes, "y", ys, y)
    shown = pd.concat(drawn)
    if not per_client:  # one line for all client counts: the marker means nothing here
        shown = shown.drop(columns=["clients"], errors="ignore")
    style.legend(axes, shown)
    heading = title or default_title(data, f"{y.title} vs {_in_sentence(x.title)}")
    return _figure.finish(fig, axes, heading, path)


def _in_sentence(name: str) -> str:
    """``Recall`` -> ``recall`` after "vs"; acronyms (``QPS``) and ``p99 latency`` stay."""
    return name if name[1:2].isupper() or not name[:1].isupper() else name[0].lower() + name[1:]


def _one_row_per_parameter_set(df: pd.DataFrame) -> pd.DataFrame:
    """Recall, build time and size are the same at every client count: keep one row per
    parameter set (the one measured with the fewest clients)."""
    keys = [c for c in ("algorithm", "label", "name") if c in df.columns] + param_columns(df)
    if "clients" in df.columns:
        df = df.sort_values("clients", kind="mergesort")
    if not keys:
        return df
    kept: pd.DataFrame = df.drop_duplicates(subset=keys, keep="first")
    return kept


def _series_label(values: dict[str, Any]) -> str:
    """The line's own label (for code that inspects the figure): ``MariaDB [v2], 4 clients``."""
    text = line_name(values)
    if "clients" in values:
        n = values["clients"]
        text += f", {n} client" + ("" if n == 1 else "s")
    return text


def _error_bars(ax: Axes, rows: pd.DataFrame, xs: pd.Series, y: Metric, colour: str) -> None:
    """Vertical bars from ``<y>_ci_low`` to ``<y>_ci_high`` where the frame has them."""
    low, high = f"{y.column}_ci_low", f"{y.column}_ci_high"
    if low not in rows.columns or high not in rows.columns:
        return
    lows = pd.to_numeric(rows[low]).astype("float64")
    highs = pd.to_numeric(rows[high]).astype("float64")
    ok = lows.notna() & highs.notna()
    if not ok.any():
        return
    value = rows[y.column][ok]
    below = (value - lows[ok]).clip(lower=0)
    above = (highs[ok] - value).clip(lower=0)
    ax.errorbar(xs[ok], value, yerr=[below, above], fmt="none", ecolor=colour, capsize=2)


def _axis(ax: Axes, which: str, scale: str, metric: Metric) -> None:
    """Scale, label and plain tick labels (0.99, 0.999 on a logit axis; 0.4, 6, 2000 on a
    log axis rather than 4x10^-1)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    if which == "x":
        ax.set_xscale(scale)
        ax.set_xlabel(metric.label + (" (logit scale)" if scale == "logit" else ""))
    else:
        ax.set_yscale(scale)
        ax.set_ylabel(metric.label + (" (logit scale)" if scale == "logit" else ""))
    if scale == "logit":
        axis.set_major_formatter(FuncFormatter(_logit_tick))
        axis.set_minor_formatter(NullFormatter())
    elif scale == "log":
        axis.set_major_formatter(PlainLogFormatter())
        axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))


def _logit_tick(value: float, _: Any) -> str:
    """0.9, 0.99, ...; the edges, where recall 0 and 1 are drawn, read 0 and 1."""
    if value >= 1 - LOGIT_EDGE * 1.001:
        return "1"
    if value <= LOGIT_EDGE * 1.001:
        return "0"
    return f"{value:g}"


class PlainLogFormatter(LogFormatterSciNotation):
    """matplotlib's choice of which log ticks get a label, written as plain numbers."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return f"{x:g}" if super().__call__(x, pos) else ""
