"""What a plot axis can show: each metric of the result rows with its axis label, unit,
scale and which way is better (the side the Pareto frontier takes)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

import pandas as pd

from .. import _annbench
from .._annbench import ConfigError

SCALES = ("linear", "log", "logit")


@dataclass(frozen=True)
class Metric:
    """One quantity of the result rows, for :func:`annbench.plot.metric`'s ``x`` and ``y``.

    ``column`` is the frame's column; ``label`` the axis label (with its unit); ``short`` the
    name in titles; ``scale`` the default axis scale (``linear``, ``log`` or ``logit``);
    ``lower_is_better`` says where the frontier lies (latency, build time, size);
    ``per_client`` is False for properties of the index or of the answers (recall, build
    time, size), which are the same at every client count, so their plots draw one line per
    algorithm and label rather than one per client count too. Build one for a column that
    :data:`METRICS` lacks: ``Metric("server_buffer_reads", "Buffer reads per query",
    scale="log", lower_is_better=True)``."""

    column: str
    label: str
    short: str = ""
    scale: str = "linear"
    lower_is_better: bool = False
    per_client: bool = True

    @property
    def title(self) -> str:
        """The name in titles (``short``, else the column)."""
        return self.short or self.column


def _registry_metrics() -> dict[str, Metric]:
    """The plot metrics of the Rust registry of metrics (``src/report/metrics.rs``), in its
    plot order."""
    records: list[dict[str, Any]] = json.loads(_annbench.metrics_json())
    plotted = sorted((r for r in records if r["plot"]), key=lambda r: int(r["plot"]["rank"]))
    return {
        r["name"]: Metric(
            r["name"],
            r["plot"]["label"],
            r["plot"]["short"],
            r["plot"]["scale"],
            bool(r["plot"]["lower_is_better"]),
            bool(r["plot"]["per_client"]),
        )
        for r in plotted
    }


#: The metrics known by name (the columns of :func:`annbench.results`, docs/vocabulary.md),
#: declared once with the export's columns in Rust's registry of metrics.
METRICS: dict[str, Metric] = _registry_metrics()

MetricLike = Union[str, Metric]


def resolve(metric: MetricLike, what: str, axis: str) -> Metric:
    """The :class:`Metric` for a name of :data:`METRICS` (or a ``Metric`` itself)."""
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str) and metric in METRICS:
        return METRICS[metric]
    names = ", ".join(METRICS)
    raise ConfigError(
        f"{what}: {axis}={metric!r} is not a known metric; use one of {names}, or "
        "annbench.plot.Metric(column, label, lower_is_better=...) for another column"
    )


def check_scale(scale: str, what: str, axis: str) -> str:
    if scale not in SCALES:
        raise ConfigError(
            f"{what}: {axis}_scale={scale!r} is not a scale; use one of {', '.join(SCALES)}"
        )
    return scale


#: Where recall 0 and 1 are drawn on a logit axis (which has no room for them): 1e-4 from
#: the edge, finer than the recall of 1,000 queries x k=10 can resolve.
LOGIT_EDGE = 1e-4


def for_scale(values: pd.Series, scale: str, metric: Metric, what: str) -> pd.Series:
    """``values`` as drawn on ``scale``: on a logit axis, clipped into
    [LOGIT_EDGE, 1 - LOGIT_EDGE], so recall 1.0 shows at the axis's edge instead of
    vanishing; a clear error for values outside 0..1."""
    if scale != "logit":
        return values
    outside = values[(values < 0) | (values > 1)]
    if len(outside):
        raise ConfigError(
            f"{what}: a logit axis takes values in 0..1 (recall), but {metric.column} has "
            f"{float(outside.iloc[0]):g}"
        )
    return values.clip(LOGIT_EDGE, 1 - LOGIT_EDGE)
