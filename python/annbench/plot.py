"""Plots of result DataFrames (from :func:`annbench.results` / :func:`annbench.compare`).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (safe with
the Agg backend, in scripts, servers and notebooks alike) and, given ``path``, saves it as
PNG or SVG by the extension. The image is exactly ``figsize * dpi`` pixels (no tight
bounding box), so sizes are predictable for reports.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Union

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter

from ._annbench import ConfigError, ResultsError
from .frames import display_name, frontier, iter_series, param_columns

PathLike = Union[str, "os.PathLike[str]"]
FIGSIZE: tuple[float, float] = (8.0, 5.5)
DPI = 100
FORMATS = (".png", ".svg")


def qps_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = False,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Queries per second (log scale) against recall: the Pareto frontier of each algorithm
    (per label and client count) with each point's 95% interval as an error bar (when the
    frame has ``qps_ci_low`` / ``qps_ci_high``), and with ``raw=True`` every measured point,
    faded."""
    _require(df, ["recall", "qps"], "qps_recall")
    return _frontier_plot(
        df,
        "qps",
        ylabel="Queries per second (1/s)",
        what="QPS",
        lower_is_better=False,
        raw=raw,
        title=title,
        path=path,
        figsize=figsize,
        dpi=dpi,
    )


def build_time_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = True,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Index build seconds (isecs, the build alone, not the load; log scale) against recall:
    per algorithm, the cheapest build that reaches each recall, and the raw points."""
    _require(df, ["recall", "build_seconds"], "build_time_recall")
    return _frontier_plot(
        df,
        "build_seconds",
        ylabel="Index build time (s)",
        what="Build time",
        lower_is_better=True,
        raw=raw,
        title=title,
        path=path,
        figsize=figsize,
        dpi=dpi,
    )


def index_size_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = True,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Index size on the server (MiB, log scale) against recall: per algorithm, the smallest
    index that reaches each recall, and the raw points."""
    _require(df, ["recall", "index_mib"], "index_size_recall")
    data = df.assign(index_mib=pd.to_numeric(df["index_mib"]))
    return _frontier_plot(
        data,
        "index_mib",
        ylabel="Index size (MiB)",
        what="Index size",
        lower_is_better=True,
        raw=raw,
        title=title,
        path=path,
        figsize=figsize,
        dpi=dpi,
    )


def server_cpu_recall(
    df: pd.DataFrame,
    path: PathLike | None = None,
    raw: bool = True,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """The database server's CPU milliseconds per query (user + system, local servers; log
    scale) against recall: per algorithm, the cheapest point that reaches each recall, and the
    raw points. Points without a server CPU figure (remote servers) are left out."""
    _require(df, ["recall", "server_cpu_ms"], "server_cpu_recall")
    data = df.assign(server_cpu_ms=pd.to_numeric(df["server_cpu_ms"]))
    data = data.dropna(subset=["server_cpu_ms"])
    if data.empty:
        raise ResultsError(
            "server_cpu_recall: no point has server CPU per query (measured for local "
            "servers only; see docs/server-cost.md)"
        )
    return _frontier_plot(
        data,
        "server_cpu_ms",
        ylabel="Server CPU per query (ms)",
        what="Server CPU",
        lower_is_better=True,
        raw=raw,
        title=title,
        path=path,
        figsize=figsize,
        dpi=dpi,
    )


def qps_clients(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    recall: float | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Measured throughput against the number of concurrent clients.

    Without ``recall``: one line per algorithm and fixed parameter set (the classic
    "clients | QPS" table), for parameter sets measured at two or more client counts.
    With ``recall``: one line per algorithm, the best QPS among points whose recall is
    ``>= recall`` at each client count."""
    _require(df, ["clients", "qps"], "qps_clients")
    fig, ax = _figure(figsize, dpi)
    lines = _best_at_recall(df, recall) if recall is not None else _fixed_params(df)
    for name, rows in lines:
        rows = rows.sort_values("clients")
        ax.plot(rows["clients"], rows["qps"], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Concurrent clients")
    ax.set_ylabel("Queries per second (1/s)")
    suffix = f" at recall >= {recall:g}" if recall is not None else ""
    _finish(fig, ax, title or _default_title(df, "Throughput vs clients" + suffix), path)
    return fig


def relative_qps(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """Horizontal bars of relative QPS (``me / base``) from :func:`annbench.compare`, one per
    matched pair (parameters, or recall threshold), coloured by algorithm, with the ratio's
    95% interval as an error bar; the line at 1.0 is parity. Pairs without a ratio (a side
    never reached the threshold) are left out."""
    ratio = next((c for c in ("ratio", "relative_qps") if c in df.columns), None)
    if ratio is None:
        raise ConfigError("relative_qps needs a 'ratio' column: pass annbench.compare(...)")
    df = df[pd.to_numeric(df[ratio]).notna()]
    if df.empty:
        raise ResultsError("relative_qps: the comparison has no matched points with a ratio")
    fig, ax = _figure(figsize, dpi)
    labels = _point_labels(df)
    algorithms = df["algorithm"] if "algorithm" in df.columns else pd.Series(["all"] * len(df))
    colours = {a: f"C{i}" for i, a in enumerate(pd.unique(algorithms))}
    positions = list(range(len(df)))
    values = pd.to_numeric(df[ratio])
    xerr = None
    if {"ratio_ci_low", "ratio_ci_high"} <= set(df.columns):
        low = pd.to_numeric(df["ratio_ci_low"]).fillna(values)
        high = pd.to_numeric(df["ratio_ci_high"]).fillna(values)
        xerr = [(values - low).clip(lower=0), (high - values).clip(lower=0)]
    ax.barh(positions, values, color=[colours[a] for a in algorithms], xerr=xerr, capsize=2)
    ax.set_yticks(positions, labels, fontsize="small")
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=1)
    handles = [Patch(color=c, label=str(a)) for a, c in colours.items()]
    ax.legend(handles=handles, fontsize="small")
    ax.set_xlim(left=0)
    ax.set_xlabel("Relative QPS (me / base)")
    _finish(fig, ax, title or _default_title(df, "Relative QPS"), path)
    return fig


def selectivity(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 7.5),
    dpi: int = DPI,
) -> Figure:
    """Recall (top) and queries per second (bottom, log scale) against the filter's
    selectivity (log scale), for filtered points (the ``selectivity`` query arg, see
    ``annbench datasets filter``): one line per algorithm, label, client count, filter kind
    (the ``filter`` column: ``range`` or ``label``) and fixed parameters other than the
    selectivity, with each QPS's 95% interval as an error bar. A marker is hollow where some
    queries came back with fewer rows than asked for (``short_results`` > 0)."""
    _require(df, ["recall", "qps", "param_selectivity"], "selectivity")
    data = df.dropna(subset=["param_selectivity"])
    # Results exported before label filters existed have no `filter` column: range filters.
    kinds = data["filter"].fillna("range") if "filter" in data.columns else "range"
    data = data.assign(
        selectivity=pd.to_numeric(data["param_selectivity"]),
        recall=pd.to_numeric(data["recall"]),
        qps=pd.to_numeric(data["qps"]),
        filter=kinds,
    )
    fixed = [c for c in param_columns(data) if c not in ("param_selectivity", "param_filter")]
    keys = [c for c in ("algorithm", "label", "clients") if c in data.columns]
    keys += ["filter"] + fixed
    both_kinds = data["filter"].nunique() > 1
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    groups = data.groupby(keys, dropna=False, sort=True) if keys else [((), data)]
    for i, (key, rows) in enumerate(groups):
        values: dict[str, Any] = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        shown = [f"filter={values['filter']}"] if both_kinds else []
        shown += [f"{c[6:]}={values[c]}" for c in fixed if _present(values[c])]
        desc = ", ".join(shown)
        name = f"{_line_name(values)}({desc})"
        rows = rows.sort_values("selectivity")
        colour = f"C{i % 10}"
        if "short_results" in rows.columns:
            short = pd.to_numeric(rows["short_results"]).fillna(0) > 0
        else:
            short = pd.Series(False, index=rows.index)
        for ax, y in ((top, "recall"), (bottom, "qps")):
            ax.plot(rows["selectivity"], rows[y], color=colour, label=name)
            ax.scatter(rows["selectivity"][~short], rows[y][~short], color=colour, s=18)
            ax.scatter(
                rows["selectivity"][short], rows[y][short], facecolors="none",
                edgecolors=colour, s=24,
            )
        if {"qps_ci_low", "qps_ci_high"} <= set(rows.columns):
            ci = rows.dropna(subset=["qps_ci_low", "qps_ci_high"])
            if not ci.empty:
                below = (ci["qps"] - pd.to_numeric(ci["qps_ci_low"])).clip(lower=0)
                above = (pd.to_numeric(ci["qps_ci_high"]) - ci["qps"]).clip(lower=0)
                bottom.errorbar(
                    ci["selectivity"], ci["qps"], yerr=[below, above], fmt="none",
                    ecolor=colour, capsize=2,
                )
    top.set_xscale("log")
    top.set_ylabel("Recall (filtered ground truth)")
    top.set_ylim(-0.02, 1.02)
    bottom.set_yscale("log")
    bottom.set_xlabel("Selectivity (share of rows the filter keeps)")
    bottom.set_ylabel("Queries per second (1/s)")
    bottom.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    top.legend(fontsize="small")
    bottom.grid(True, which="major", alpha=0.3)
    _finish(fig, top, title or _default_title(data, "Filtered search vs selectivity"), path)
    return fig


def save(fig: Figure, path: PathLike) -> None:
    """Saves ``fig`` as PNG or SVG, chosen by ``path``'s extension, at the figure's dpi."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise ConfigError(
            f"cannot save a plot as '{os.fspath(path)}': use a .png or .svg file name"
        )
    fig.savefig(path, format=suffix[1:], dpi=fig.get_dpi())


def _frontier_plot(
    df: pd.DataFrame,
    y: str,
    *,
    ylabel: str,
    what: str,
    lower_is_better: bool,
    raw: bool,
    title: str | None,
    path: PathLike | None,
    figsize: tuple[float, float],
    dpi: int,
) -> Figure:
    fig, ax = _figure(figsize, dpi)
    data = df.assign(**{y: pd.to_numeric(df[y]), "recall": pd.to_numeric(df["recall"])})
    for i, (name, rows) in enumerate(iter_series(data)):
        colour = f"C{i % 10}"
        front = frontier(rows, "recall", y, lower_is_better=lower_is_better)
        ax.plot(front["recall"], front[y], marker="o", color=colour, label=name)
        _error_bars(ax, front, y, colour)
        if raw:
            ax.scatter(rows["recall"], rows[y], color=colour, alpha=0.25, s=14)
    ax.set_yscale("log")
    ax.set_xlabel("Recall")
    ax.set_ylabel(ylabel)
    _finish(fig, ax, title or _default_title(df, f"{what} vs recall"), path)
    return fig


def _error_bars(ax: Axes, rows: pd.DataFrame, y: str, colour: str) -> None:
    """Vertical bars from ``<y>_ci_low`` to ``<y>_ci_high`` where the frame has them."""
    low, high = f"{y}_ci_low", f"{y}_ci_high"
    if low not in rows.columns or high not in rows.columns:
        return
    rows = rows.dropna(subset=[low, high])
    if rows.empty:
        return
    value = pd.to_numeric(rows[y])
    below = (value - pd.to_numeric(rows[low])).clip(lower=0)
    above = (pd.to_numeric(rows[high]) - value).clip(lower=0)
    ax.errorbar(
        rows["recall"], value, yerr=[below, above], fmt="none", ecolor=colour, capsize=2
    )


def _fixed_params(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    params = param_columns(df)
    keys = [c for c in ("algorithm", "label") if c in df.columns] + params
    lines = []
    for key, rows in df.groupby(keys, dropna=False, sort=False) if keys else [((), df)]:
        if rows["clients"].nunique() < 2:
            continue
        values: dict[str, Any] = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        desc = ", ".join(f"{c[6:].lower()}={values[c]}" for c in params if _present(values[c]))
        lines.append((f"{_line_name(values)}({desc})", rows))
    if not lines:
        raise ResultsError(
            "qps_clients: no parameter set was measured at two or more client counts; "
            "run with --clients 1,2,4,8 or pass recall= to compare the best QPS at a recall"
        )
    return lines


def _best_at_recall(df: pd.DataFrame, recall: float) -> list[tuple[str, pd.DataFrame]]:
    hits = df[pd.to_numeric(df["recall"]) >= recall]
    keys = [c for c in ("algorithm", "label") if c in df.columns]
    lines = []
    for key, rows in hits.groupby(keys, dropna=False, sort=True) if keys else [((), hits)]:
        best = rows.sort_values("qps", kind="mergesort").groupby("clients").tail(1)
        values = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        lines.append((_line_name(values), best))
    if not lines:
        raise ResultsError(f"qps_clients: no point reaches recall >= {recall:g}")
    return lines


def _line_name(values: dict[str, Any]) -> str:
    name = display_name(values["algorithm"]) if "algorithm" in values else "points"
    label = values.get("label")
    return f"{name} [{label}]" if _present(label) else name


def _present(value: Any) -> bool:
    """False for None, NaN and pd.NA (missing values in a frame)."""
    return value is not None and not bool(pd.isna(value))


def _point_labels(df: pd.DataFrame) -> list[str]:
    """Bar labels: the parameters for a parameter match, the threshold for a recall match,
    plus the client count when it varies."""
    many_clients = "clients" in df.columns and df["clients"].nunique() > 1
    labels = []
    for index, row in df.iterrows():
        if row.get("match") == "recall" and _present(row.get("recall_threshold")):
            algorithm = display_name(row["algorithm"]) if "algorithm" in row else ""
            text = f"{algorithm} recall >= {float(row['recall_threshold']):g}"
        else:
            names = [row.get(c) for c in ("me_name", "base_name", "name")]
            text = str(next((n for n in names if _present(n)), index))
        if many_clients:
            text += f", {row['clients']} clients"
        labels.append(text)
    return labels


def _require(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ConfigError(
            f"{what} needs the column(s) {', '.join(missing)}: pass annbench.results(...)"
        )
    if df.dropna(subset=list(columns)).empty:
        raise ResultsError(
            f"{what}: no result rows with {', '.join(columns)} to plot; run a sweep first "
            "(annbench run ...) or check the dataset, count and results directory"
        )


def _figure(figsize: tuple[float, float], dpi: int) -> tuple[Figure, Axes]:
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    return fig, fig.add_subplot()


def _default_title(df: pd.DataFrame, what: str) -> str:
    parts: list[Any] = []
    for column in ("dataset", "count"):
        if column in df.columns:
            values = pd.unique(df[column].dropna())
            if len(values) == 1:
                parts.append(f"k={values[0]}" if column == "count" else values[0])
    return f"{what} ({', '.join(map(str, parts))})" if parts else what


def _finish(fig: Figure, ax: Axes, title: str, path: PathLike | None) -> None:
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if ax.get_legend() is None and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    if path is not None:
        save(fig, path)
