"""Filtered search: recall and QPS against the filter's selectivity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .._annbench import ConfigError
from ..frames import param_columns
from . import figure as _figure
from .data import default_title, group_rows, line_name, numeric, present, require
from .figure import DPI, PathLike
from .style import Style, shades


def selectivity(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    ax: Sequence[Axes] | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 7.5),
    dpi: int = DPI,
) -> Figure:
    """Recall (top) and queries per second (bottom, log scale) against the filter's
    selectivity (log scale), for filtered points (the ``selectivity`` query arg, see
    ``annbench datasets filter``): one line per algorithm, label, client count, filter kind
    (the ``filter`` column: ``range`` or ``label``) and fixed parameters other than the
    selectivity, with each QPS's 95% interval as an error bar. Colour is the algorithm
    (lighter shades for its other lines), line style the label, marker the client count; a
    marker is hollow where some queries came back with fewer rows than asked for
    (``short_results`` > 0). ``ax``: a pair of Axes (recall, QPS) to draw into."""
    data = require(df, ["recall", "qps", "param_selectivity"], "selectivity")
    _figure.check_path(path)
    data = data.dropna(subset=["param_selectivity"])
    # Results exported before label filters existed have no `filter` column: range filters.
    kinds = data["filter"].fillna("range") if "filter" in data.columns else "range"
    data = data.assign(selectivity=data["param_selectivity"], filter=kinds)
    fixed = [c for c in param_columns(data) if c not in ("param_selectivity", "param_filter")]
    keys = [c for c in ("algorithm", "label", "clients") if c in data.columns]
    keys += ["filter"] + fixed
    both_kinds = data["filter"].nunique() > 1
    style = Style(data)
    fig, top, bottom = _two_axes(ax, figsize, dpi)
    groups = group_rows(data, keys)
    counts: dict[Any, int] = {}
    for values, _ in groups:
        counts[values.get("algorithm")] = counts.get(values.get("algorithm"), 0) + 1
    seen: dict[Any, int] = {}
    for values, rows in groups:
        algorithm = values.get("algorithm")
        i = seen.get(algorithm, 0)
        seen[algorithm] = i + 1
        colour = style.colour(algorithm, list(shades(counts[algorithm]))[i])
        marker = style.marker(values.get("clients"))
        shown = [f"filter={values['filter']}"] if both_kinds else []
        shown += [f"{c[6:]}={values[c]}" for c in fixed if present(values[c])]
        name = f"{line_name(values)}({', '.join(shown)})"
        if "clients" in values and data["clients"].nunique() > 1:
            name += f", {values['clients']} clients"
        rows = rows.sort_values("selectivity")
        short = _short(rows)
        for axes, y in ((top, "recall"), (bottom, "qps")):
            axes.plot(
                rows["selectivity"], rows[y], color=colour, label=name,
                linestyle=style.linestyle(values.get("label")),
            )
            axes.scatter(
                rows["selectivity"][~short], rows[y][~short], color=colour, marker=marker, s=18
            )
            axes.scatter(
                rows["selectivity"][short], rows[y][short], facecolors="none",
                edgecolors=colour, marker=marker, s=24,
            )
        _qps_interval(bottom, rows, colour)
    top.set_xscale("log")
    bottom.set_xscale("log")
    top.set_ylabel("Recall (filtered ground truth)")
    top.set_ylim(-0.02, 1.02)
    bottom.set_yscale("log")
    bottom.set_xlabel("Selectivity (share of rows the filter keeps)")
    bottom.set_ylabel("Queries per second (1/s)")
    bottom.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    top.legend(fontsize="small")
    bottom.grid(True, which="major", alpha=0.3)
    heading = title or default_title(data, "Filtered search vs selectivity")
    return _figure.finish(fig, top, heading, path)


def _two_axes(
    ax: Sequence[Axes] | None, figsize: tuple[float, float], dpi: int
) -> tuple[Figure, Axes, Axes]:
    if ax is None:
        fig = _figure.PlotFigure(figsize=figsize, dpi=dpi, layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True)
        return fig, top, bottom
    pair = list(ax) if not isinstance(ax, Axes) else [ax]
    if len(pair) != 2 or not all(isinstance(a, Axes) for a in pair):
        raise ConfigError(
            "selectivity: ax= takes two Axes, (recall, qps), e.g. "
            "annbench.plot.subplots(2, 1, sharex=True)[1]"
        )
    return _figure.root_figure(pair[0]), pair[0], pair[1]


def _short(rows: pd.DataFrame) -> pd.Series:
    if "short_results" not in rows.columns:
        return pd.Series(False, index=rows.index)
    short: pd.Series = numeric(rows["short_results"], "short_results", "selectivity").fillna(0) > 0
    return short


def _qps_interval(ax: Axes, rows: pd.DataFrame, colour: str) -> None:
    if not {"qps_ci_low", "qps_ci_high"} <= set(rows.columns):
        return
    low = numeric(rows["qps_ci_low"], "qps_ci_low", "selectivity")
    high = numeric(rows["qps_ci_high"], "qps_ci_high", "selectivity")
    ok = low.notna() & high.notna()
    if not ok.any():
        return
    below = (rows["qps"][ok] - low[ok]).clip(lower=0)
    above = (high[ok] - rows["qps"][ok]).clip(lower=0)
    ax.errorbar(
        rows["selectivity"][ok], rows["qps"][ok], yerr=[below, above], fmt="none",
        ecolor=colour, capsize=2,
    )
