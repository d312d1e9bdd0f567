"""One look for every plot: colour by algorithm, line style by run label, marker by client
count, and a legend that says which is which.

Colours follow the algorithm registry's order (``annbench algorithms``), so an algorithm has
the same colour in every plot, whatever else the frame holds; labels and client counts take
their styles in sorted order over the whole frame given to :class:`Style`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_hex, to_rgb
from matplotlib.lines import Line2D

from .. import _annbench
from ..frames import display_name
from .data import present

#: Tableau 10, as the HTML report (src/report/html/chart.rs): distinct, colour-blind friendly.
COLOURS = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
LINESTYLES: tuple[Any, ...] = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Legend entries for line style and marker are drawn in this neutral grey.
NEUTRAL = "0.35"


@lru_cache(maxsize=1)
def _registry() -> tuple[str, ...]:
    return tuple(str(a["name"]) for a in json.loads(_annbench.algorithms_json()))


def label_key(value: Any) -> str | None:
    """A run label as a dict key: missing (None, NaN, pd.NA) is None."""
    return str(value) if present(value) else None


def clients_key(value: Any) -> int | None:
    return int(value) if present(value) else None


def _values(df: pd.DataFrame, column: str) -> list[Any]:
    return list(pd.unique(df[column])) if column in df.columns else []


class Style:
    """The colour, line style and marker of each algorithm, label and client count of one
    frame (build it from the whole frame, so that every line of a plot agrees)."""

    def __init__(self, df: pd.DataFrame) -> None:
        # Registry order, the brute-force baseline `exact` last: the indexes get the first hues.
        known = tuple(a for a in _registry() if a != "exact") + ("exact",)
        others = sorted({str(a) for a in _values(df, "algorithm")} - set(known))
        self._colour = {a: COLOURS[i % len(COLOURS)] for i, a in enumerate(known + tuple(others))}
        labels = {label_key(v) for v in _values(df, "label")}
        ordered = ([None] if None in labels else []) + sorted(x for x in labels if x is not None)
        self._linestyle = {x: LINESTYLES[i % len(LINESTYLES)] for i, x in enumerate(ordered)}
        counts = sorted({c for c in map(clients_key, _values(df, "clients")) if c is not None})
        self._marker = {c: MARKERS[i % len(MARKERS)] for i, c in enumerate(counts)}

    def colour(self, algorithm: Any, shade: float = 0.0) -> str:
        """The algorithm's colour, blended towards white by ``shade`` (0..1) to tell apart
        several lines of one algorithm."""
        base = self._colour.get(str(algorithm), NEUTRAL)
        if shade <= 0:
            return base
        r, g, b = to_rgb(base)
        return to_hex((r + (1 - r) * shade, g + (1 - g) * shade, b + (1 - b) * shade))

    def linestyle(self, label: Any) -> Any:
        return self._linestyle.get(label_key(label), "-")

    def marker(self, clients: Any) -> str:
        n = clients_key(clients)
        return self._marker.get(n, "o") if n is not None else "o"

    def look(self, values: dict[str, Any]) -> dict[str, Any]:
        """``color``, ``linestyle`` and ``marker`` keywords for a line of ``values``
        (algorithm, label, clients; absent ones take the defaults)."""
        return {
            "color": self.colour(values.get("algorithm")),
            "linestyle": self.linestyle(values.get("label")),
            "marker": self.marker(values.get("clients")),
        }

    def legend(self, ax: Axes, drawn: pd.DataFrame) -> None:
        """A legend that explains the styles of the rows ``drawn``: one entry per algorithm
        (its colour), then per label (line style) and per client count (marker) where more
        than one of those was drawn."""
        handles: list[Line2D] = []
        explained = ["colour: algorithm"]
        for algorithm in sorted({str(a) for a in _values(drawn, "algorithm")}, key=self._order):
            handles.append(
                Line2D([], [], color=self.colour(algorithm), lw=2, label=display_name(algorithm))
            )
        labels = sorted({label_key(v) for v in _values(drawn, "label")}, key=_none_first)
        if len(labels) > 1:
            explained.append("line: label")
            for label in labels:
                text = f"label {label}" if label is not None else "no label"
                handles.append(
                    Line2D([], [], color=NEUTRAL, linestyle=self.linestyle(label), label=text)
                )
        counts = sorted({c for c in map(clients_key, _values(drawn, "clients")) if c is not None})
        if len(counts) > 1:
            explained.append("marker: clients")
            for n in counts:
                text = f"{n} client" + ("" if n == 1 else "s")
                handles.append(
                    Line2D([], [], color=NEUTRAL, marker=self.marker(n), ls="none", label=text)
                )
        if handles:
            title = ", ".join(explained) if len(explained) > 1 else None
            ax.legend(handles=handles, title=title, fontsize="small", title_fontsize="small")

    def _order(self, algorithm: str) -> int:
        return list(self._colour).index(algorithm) if algorithm in self._colour else 1 << 30


def _none_first(value: str | None) -> tuple[bool, str]:
    return (value is not None, value or "")


def shades(count: int) -> Iterable[float]:
    """Blends towards white for ``count`` lines of one colour, the first the full colour."""
    return (0.55 * i / max(count - 1, 1) for i in range(count))
