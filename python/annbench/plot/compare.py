"""Relative QPS of two labelled runs (:func:`annbench.compare`), as horizontal bars."""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .._annbench import ConfigError, ResultsError
from ..frames import display_name
from . import figure as _figure
from .data import default_title, numeric, present
from .figure import DPI, FIGSIZE, PathLike
from .style import Style

#: Inches per bar, so that 48 bars do not overlap their labels; the figure grows with them.
BAR_INCHES = 0.24


def relative_qps(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    base: str | None = None,
    me: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
    dpi: int = DPI,
) -> Figure:
    """Horizontal bars of relative QPS (``me / base``) from :func:`annbench.compare`, one per
    matched pair (parameters, or recall threshold), coloured by algorithm, with the ratio's
    95% interval as an error bar; the line at 1.0 is parity. Pairs without a ratio (a side
    never reached the threshold) are left out. The title and axis name the two labels
    (``base`` and ``me``, default: those the frame was compared with). The default height
    grows with the bar count (8 inches wide, at least 5.5 high, 0.24 inch per bar)."""
    if not isinstance(df, pd.DataFrame):
        raise ConfigError(
            f"relative_qps takes annbench.compare(...)'s DataFrame, not {type(df).__name__}"
        )
    ratio = next((c for c in ("ratio", "relative_qps") if c in df.columns), None)
    if ratio is None:
        raise ConfigError("relative_qps needs a 'ratio' column: pass annbench.compare(...)")
    base = base if base is not None else df.attrs.get("base")
    me = me if me is not None else df.attrs.get("me")
    _figure.check_path(path)
    style = Style(df)
    values = numeric(df[ratio], ratio, "relative_qps")
    rows = df[values.notna()]
    values = values[values.notna()]
    if rows.empty:
        raise ResultsError("relative_qps: the comparison has no matched points with a ratio")
    if figsize is None:
        figsize = (FIGSIZE[0], relative_qps_height(rows))
    fig, axes = _figure.target(ax, figsize, dpi, "relative_qps")
    positions = list(range(len(rows)))
    algorithms = rows["algorithm"] if "algorithm" in rows.columns else pd.Series([""] * len(rows))
    xerr = None
    if {"ratio_ci_low", "ratio_ci_high"} <= set(rows.columns):
        low = numeric(rows["ratio_ci_low"], "ratio_ci_low", "relative_qps").fillna(values)
        high = numeric(rows["ratio_ci_high"], "ratio_ci_high", "relative_qps").fillna(values)
        xerr = [(values - low).clip(lower=0), (high - values).clip(lower=0)]
    colours = [style.colour(a) for a in algorithms]
    axes.barh(positions, values, color=colours, xerr=xerr, capsize=2)
    axes.set_yticks(positions, _bar_labels(rows), fontsize="small")
    axes.invert_yaxis()
    axes.axvline(1.0, color="black", linewidth=1)
    handles = [
        Patch(color=style.colour(a), label=display_name(a)) for a in pd.unique(algorithms) if a
    ]
    if handles:
        axes.legend(handles=handles, fontsize="small")
    axes.set_xlim(left=0)
    pair = f"{me} / {base}" if present(me) and present(base) else "me / base"
    axes.set_xlabel(f"Relative QPS ({pair})")
    heading = title or default_title(df, f"Relative QPS: {pair}")
    return _figure.finish(fig, axes, heading, path)


def _bar_labels(df: pd.DataFrame) -> list[str]:
    """Bar labels: the parameters for a parameter match, the threshold for a recall match,
    plus the client count when it varies."""
    many_clients = "clients" in df.columns and df["clients"].nunique() > 1
    labels: list[str] = []
    for index, row in df.iterrows():
        if row.get("match") == "recall" and present(row.get("recall_threshold")):
            algorithm = display_name(row["algorithm"]) if "algorithm" in row else ""
            text = f"{algorithm} recall >= {float(row['recall_threshold']):g}"
        else:
            names = [row.get(c) for c in ("me_name", "base_name", "name")]
            text = str(next((n for n in names if present(n)), index))
        if many_clients:
            text += f", {row['clients']} clients"
        labels.append(text)
    return labels


def relative_qps_height(df: pd.DataFrame) -> float:
    """The default height of :func:`relative_qps` in inches: at least 5.5, plus room for
    each bar with a ratio, so their labels do not overlap."""
    ratio = next((c for c in ("ratio", "relative_qps") if c in df.columns), None)
    bars = 0 if ratio is None else int(pd.to_numeric(df[ratio], errors="coerce").notna().sum())
    return max(FIGSIZE[1], 1.5 + BAR_INCHES * bars)
