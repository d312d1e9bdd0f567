"""Streaming runs over their steps: recall, QPS and the write rate."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._annbench import ConfigError
from . import figure as _figure
from .figure import DPI, PathLike


def _name(values: object) -> str:
    """The legend name of a group: its key values that are present, joined."""
    parts = values if isinstance(values, tuple) else (values,)
    shown = [str(v) for v in parts if v is not None and str(v) not in ("nan", "<NA>", "None")]
    return " ".join(shown)


def stream_timeline(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    ax: Sequence[Axes] | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 8.0),
    dpi: int = DPI,
) -> Figure:
    """Three panels over the runbook's steps, for a frame of :func:`annbench.stream` or
    :func:`annbench.stream_results`: recall at each search step against exact truth over the
    live rows (top), QPS with its 95% interval (middle), and the rows/s each write step reached
    (bottom; a dashed line at its target rate where it had one). One line per algorithm, build,
    query point and label. ``ax``: three Axes to draw into."""
    missing = [c for c in ("step", "operation", "recall", "qps", "achieved_rate") if c not in df.columns]
    if missing:
        raise ConfigError(
            f"stream_timeline: the frame has no {', '.join(missing)} column(s): pass the frame "
            "of annbench.stream() or annbench.stream_results()"
        )
    if df.empty:
        raise ConfigError("stream_timeline: the frame has no rows")
    _figure.check_path(path)
    if ax is None:
        fig: Figure = _figure.PlotFigure(figsize=figsize, dpi=dpi, layout="constrained")
        top, middle, bottom = fig.subplots(3, 1, sharex=True)
    else:
        axes = list(ax)
        if len(axes) != 3 or not all(isinstance(a, Axes) for a in axes):
            raise ConfigError("stream_timeline: ax= takes three Axes (recall, qps, rate)")
        top, middle, bottom = axes
        fig = _figure.root_figure(top)
    keys = [c for c in ("algorithm", "build", "label") if c in df.columns]
    searches = df[df["operation"] == "search"]
    for values, rows in searches.groupby([*keys, "query"], dropna=False, sort=True):
        name = _name(values)
        rows = rows.sort_values("step")
        top.plot(rows["step"], rows["recall"], marker="o", label=name)
        line = middle.plot(rows["step"], rows["qps"], marker="o", label=name)[0]
        if {"qps_ci_low", "qps_ci_high"} <= set(rows.columns):
            middle.fill_between(
                rows["step"].astype(float),
                rows["qps_ci_low"].astype(float),
                rows["qps_ci_high"].astype(float),
                color=line.get_color(),
                alpha=0.2,
            )
    writes = df[df["operation"].isin(["insert", "delete", "replace"])]
    for values, rows in writes.groupby(keys, dropna=False, sort=True):
        name = _name(values)
        rows = rows.sort_values("step")
        bars = bottom.bar(rows["step"], rows["achieved_rate"], label=name, alpha=0.7)
        if "target_rate" in rows.columns:
            targets = rows.dropna(subset=["target_rate"])
            bottom.scatter(
                targets["step"], targets["target_rate"], marker="_", s=200,
                color=bars.patches[0].get_facecolor() if bars.patches else None,
            )
    top.set_ylabel("recall (live rows)")
    middle.set_ylabel("QPS")
    bottom.set_ylabel("rows/s written")
    bottom.set_xlabel("runbook step")
    top.legend(fontsize="small")
    for a in (top, middle, bottom):
        a.grid(True, alpha=0.3)
    dataset = str(df["dataset"].iloc[0]) if "dataset" in df.columns else ""
    return _figure.finish(fig, top, title or f"Streaming run ({dataset})", path)
