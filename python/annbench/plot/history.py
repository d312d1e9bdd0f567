"""A metric over a series of runs (``annbench.history``), change points marked."""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._annbench import ConfigError
from . import figure as _figure
from .figure import DPI, FIGSIZE, PathLike

_TITLES = {
    "qps": "QPS",
    "recall": "recall",
    "server_cpu_per_query": "server CPU seconds per query",
    "server_switches_per_query": "server context switches per query",
}


def history(
    df: pd.DataFrame,
    path: PathLike | None = None,
    *,
    metric: str = "qps",
    kind: str | None = None,
    ratio: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = FIGSIZE,
    dpi: int = DPI,
) -> Figure:
    """``metric`` (qps, recall, server_cpu_per_query or server_switches_per_query) over the
    runs of a frame of :func:`annbench.history`: one line per point or recall threshold
    (``kind``: ``point`` or ``threshold`` for one kind only), the QPS interval as a band, each
    change point of that metric marked (a triangle down for a regression, up for an
    improvement, with its forward change). ``ratio``: the metric's ratio to the base run."""
    if metric not in _TITLES:
        raise ConfigError(f"history: unknown metric '{metric}': expected {', '.join(_TITLES)}")
    needed = {"line", "index", "label", metric}
    if not needed <= set(df.columns):
        raise ConfigError("history: pass the frame of annbench.history()")
    rows = df if kind is None else df[df["kind"] == kind]
    if rows.empty:
        raise ConfigError("history: the frame has no rows" + (f" of kind '{kind}'" if kind else ""))
    _figure.check_path(path)
    fig, axes = _figure.target(ax, figsize, dpi, "history")
    column = f"{metric}_ratio" if ratio else metric
    changes = df.attrs.get("change_points")
    for name, line in rows.groupby("line", sort=False):
        line = line.sort_values("index")
        drawn = axes.plot(line["index"], line[column].astype(float), marker="o", label=name)[0]
        if metric == "qps" and not ratio and {"qps_ci_low", "qps_ci_high"} <= set(line.columns):
            axes.fill_between(
                line["index"].astype(float),
                line["qps_ci_low"].astype(float),
                line["qps_ci_high"].astype(float),
                color=drawn.get_color(),
                alpha=0.2,
            )
        if isinstance(changes, pd.DataFrame) and not changes.empty:
            mine = changes[(changes["line"] == name) & (changes["metric"] == metric)]
            for _, c in mine.iterrows():
                at = line[line["index"] == c["index"]]
                if at.empty:
                    continue
                y = float(at[column].iloc[0])
                regression = c["kind"] == "regression"
                axes.scatter(
                    [c["index"]], [y], marker="v" if regression else "^", s=120,
                    color="#c0392b" if regression else "#27ae60", zorder=5,
                )
                axes.annotate(
                    f"{c['forward_change_percent']:+.1f}%", (c["index"], y),
                    textcoords="offset points", xytext=(6, 6), fontsize="small",
                )
    labels = rows.drop_duplicates("index").sort_values("index")
    axes.set_xticks(labels["index"].tolist())
    axes.set_xticklabels(labels["label"].astype(str).tolist(), rotation=45, ha="right")
    axes.set_xlabel("run")
    axes.set_ylabel(_TITLES[metric] + (" (ratio to base)" if ratio else ""))
    axes.legend(fontsize="small")
    dataset = str(df.attrs.get("dataset", ""))
    return _figure.finish(fig, axes, title or f"{_TITLES[metric]} over the runs ({dataset})", path)
