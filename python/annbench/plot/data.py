"""Checks and small helpers on the frames the plots take: required columns, numbers, titles
and the text that names a line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .._annbench import ConfigError, ResultsError
from ..frames import display_name


def require(df: pd.DataFrame, columns: Sequence[str], what: str) -> pd.DataFrame:
    """``df`` with ``columns`` as float64 (missing values NaN); a clear error when a column
    is missing, not numeric, or no row has all of them."""
    if not isinstance(df, pd.DataFrame):
        raise ConfigError(
            f"{what} takes a pandas DataFrame (annbench.results(...)), not {type(df).__name__}"
        )
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ConfigError(
            f"{what} needs the column(s) {', '.join(missing)}: pass annbench.results(...)"
        )
    data = df.assign(**{c: numeric(df[c], c, what) for c in columns})
    if data.dropna(subset=list(columns)).empty:
        raise ResultsError(
            f"{what}: no result rows with {', '.join(columns)} to plot; run a sweep first "
            "(annbench.run(...)) or check the dataset, count and results directory"
        )
    return data


def numeric(values: pd.Series, column: str, what: str) -> pd.Series:
    """``values`` as float64, missing values as NaN."""
    try:
        converted = pd.to_numeric(values)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{what}: column {column} is not numeric ({err})") from None
    return converted.astype("float64")


def present(value: Any) -> bool:
    """False for None, NaN and pd.NA (missing values in a frame)."""
    return value is not None and not bool(pd.isna(value))


def default_title(df: pd.DataFrame, what: str) -> str:
    """``what`` with the frame's dataset and k when each has one value (columns, or the
    frame's ``attrs`` as :func:`annbench.compare` sets them)."""
    parts: list[str] = []
    for column in ("dataset", "count"):
        if column in df.columns:
            values = pd.unique(df[column].dropna())
            value = values[0] if len(values) == 1 else None
        else:
            value = df.attrs.get(column)
        if present(value):
            parts.append(f"k={value}" if column == "count" else str(value))
    return f"{what} ({', '.join(parts)})" if parts else what


def line_name(values: dict[str, Any]) -> str:
    """``MariaDB`` or ``MariaDB [label]`` for the identity ``values`` of one line."""
    name = display_name(values["algorithm"]) if "algorithm" in values else "points"
    label = values.get("label")
    return f"{name} [{label}]" if present(label) else name


def params_text(values: dict[str, Any], params: Sequence[str]) -> str:
    """``m=8, ef_search=40``: the parameters in ``values`` that are set, as typed."""
    return ", ".join(f"{c[6:].lower()}={values[c]}" for c in params if present(values[c]))


def group_rows(
    df: pd.DataFrame, keys: Sequence[str], sort: bool = True
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """``(key values, rows)`` per group of ``keys`` (the whole frame when there are none),
    missing values kept as their own group."""
    if not keys:
        return [({}, df)]
    groups: list[tuple[dict[str, Any], pd.DataFrame]] = []
    for key, rows in df.groupby(list(keys), dropna=False, sort=sort):
        parts = key if isinstance(key, tuple) else (key,)
        groups.append((dict(zip(keys, parts)), rows))
    return groups
