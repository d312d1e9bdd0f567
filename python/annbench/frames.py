"""DataFrame helpers shared by the API and the plots: the column order of result rows,
the series a point belongs to, and Pareto frontiers."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from . import _annbench

#: Columns of :func:`annbench.results`, in order; ``param_*`` columns follow. They come from
#: the Rust export (``src/report/export.rs``), the one place that defines them.
RESULT_COLUMNS: tuple[str, ...] = _annbench.RESULT_COLUMNS

#: Columns that identify one curve in a plot or one frontier: the same algorithm, run label
#: and client count.
SERIES_COLUMNS: tuple[str, ...] = ("algorithm", "label", "clients")


@lru_cache(maxsize=1)
def _display_names() -> dict[str, str]:
    return {a["name"]: a["display"] for a in json.loads(_annbench.algorithms_json())}


def display_name(algorithm: Any) -> str:
    """The display name of an algorithm id, from the registry (``mariadb`` -> ``MariaDB``,
    ``pgvector_halfvec`` -> ``PGVector_halfvec``): what legends and titles show. Ids the
    registry does not know (ann-benchmarks algorithms) are shown as they are."""
    text = str(algorithm)
    return _display_names().get(text, text)


def nullable_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each ``param_*`` column whose values are all integers (or missing) as
    pandas' nullable ``Int64``, so a parameter that only some algorithms have stays ``64``
    rather than becoming ``64.0`` next to NaN."""
    for column in param_columns(frame):
        values = frame[column]
        present = values[values.notna()]
        if len(present) and all(_is_int(v) for v in present):
            frame[column] = pd.array(
                [int(v) if pd.notna(v) else pd.NA for v in values], dtype="Int64"
            )
    return frame


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def records_to_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A DataFrame from report rows (dicts) as the Rust reports give them, with integer
    ``param_*`` columns as ``Int64``."""
    return nullable_ints(pd.DataFrame.from_records(list(rows)))


def rows_to_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A DataFrame from result rows (dicts), with :data:`RESULT_COLUMNS` first (missing ones
    filled with NA so an empty store still has the schema) and ``param_*`` after, sorted;
    integer parameters as ``Int64``."""
    frame = records_to_frame(rows)
    params = sorted(c for c in frame.columns if str(c).startswith("param_"))
    extra = [c for c in frame.columns if c not in RESULT_COLUMNS and c not in params]
    for column in RESULT_COLUMNS:
        if column not in frame.columns:
            frame[column] = pd.NA
    ordered: pd.DataFrame = frame[list(RESULT_COLUMNS) + params + extra]
    return ordered


def param_columns(df: pd.DataFrame) -> list[str]:
    """The ``param_*`` columns of ``df``, in frame order."""
    return [c for c in df.columns if str(c).startswith("param_")]


def series_columns(df: pd.DataFrame) -> list[str]:
    """The :data:`SERIES_COLUMNS` present in ``df``."""
    return [c for c in SERIES_COLUMNS if c in df.columns]


def series_name(key: Sequence[Any], columns: Sequence[str], varying: Sequence[str]) -> str:
    """Legend text for one series: the algorithm's display name, then the label and client
    count when they vary across the frame (``MariaDB [11.8], 4 clients``)."""
    values = dict(zip(columns, key))
    text = display_name(values["algorithm"]) if "algorithm" in values else "points"
    label = values.get("label")
    if "label" in varying and label is not None and not pd.isna(label):
        text += f" [{label}]"
    if "clients" in varying and "clients" in values:
        n = values["clients"]
        text += f", {n} client" + ("" if n == 1 else "s")
    return text


def iter_series(df: pd.DataFrame) -> Iterable[tuple[str, pd.DataFrame]]:
    """``(legend text, rows)`` for each series of ``df``, in a stable order."""
    columns = series_columns(df)
    if not columns:
        yield "points", df
        return
    varying = [c for c in columns if df[c].nunique(dropna=False) > 1]
    for key, group in df.groupby(columns, dropna=False, sort=True):
        key_tuple = key if isinstance(key, tuple) else (key,)
        yield series_name(key_tuple, columns, varying), group


def frontier(
    df: pd.DataFrame,
    x: str = "recall",
    y: str = "qps",
    *,
    lower_is_better: bool = False,
    x_lower_is_better: bool = False,
) -> pd.DataFrame:
    """The Pareto frontier of one series: walking from the best ``x`` (the highest, or the
    lowest with ``x_lower_is_better``) to the worst, keep each point whose ``y`` beats every
    point with a better ``x``. ``y`` is "better" when larger, or smaller with
    ``lower_is_better`` (build time, index size, latency). Rows with a missing ``x`` or ``y``
    are ignored. Returned sorted by ``x`` ascending."""
    rows = df.dropna(subset=[x, y])
    rows = rows.sort_values(
        [x, y], ascending=[x_lower_is_better, lower_is_better], kind="mergesort"
    )
    keep: list[Any] = []
    best: float | None = None
    for index, value in zip(rows.index, rows[y]):
        v = float(value)
        if best is None or (v < best if lower_is_better else v > best):
            keep.append(index)
            best = v
    kept: pd.DataFrame = rows.loc[keep].sort_values(x, kind="mergesort")
    return kept


def pareto(
    df: pd.DataFrame,
    x: str = "recall",
    y: str = "qps",
    *,
    lower_is_better: bool = False,
) -> pd.DataFrame:
    """Pareto-optimal rows of ``df`` per series (algorithm, label, clients): the points a
    QPS-vs-recall plot draws as lines. Columns are kept; rows are sorted by series then
    ``x``."""
    parts = [frontier(group, x, y, lower_is_better=lower_is_better) for _, group in iter_series(df)]
    if not parts:
        none: pd.DataFrame = df.iloc[0:0]
        return none
    return pd.concat(parts)
