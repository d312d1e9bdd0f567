"""Plots of result DataFrames (from :func:`annbench.results` / :func:`annbench.compare`).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (safe with
the Agg backend, in scripts, servers and notebooks alike) that a Jupyter kernel shows as a
PNG with no ``%matplotlib`` magic, and, given ``path``, saves it as PNG or SVG by the
extension. The image is exactly ``figsize * dpi`` pixels (no tight bounding box), so sizes
are predictable for reports. ``ax=`` draws into an existing Axes instead (plots combine in
:func:`subplots`), and returns that Axes' figure.

Colour is the algorithm (the same in every plot), line style the run label, marker the
client count; the legend says which is which.
"""

from __future__ import annotations

from .clients import qps_clients
from .compare import relative_qps, relative_qps_height
from .figure import DPI, FIGSIZE, FORMATS, PlotFigure, save, subplots
from .frontiers import build_time_recall, index_size_recall, metric, qps_recall, server_cpu_recall
from .history import history
from .metrics import METRICS, Metric
from .selectivity import selectivity
from .stream import stream_timeline

__all__ = [
    "DPI",
    "FIGSIZE",
    "FORMATS",
    "METRICS",
    "Metric",
    "PlotFigure",
    "build_time_recall",
    "history",
    "index_size_recall",
    "metric",
    "qps_clients",
    "qps_recall",
    "relative_qps",
    "relative_qps_height",
    "save",
    "selectivity",
    "server_cpu_recall",
    "stream_timeline",
    "subplots",
]
