"""Pareto frontiers and result-row framing, checked on hand-made points."""

from __future__ import annotations

import pandas as pd

import annbench
from annbench.frames import RESULT_COLUMNS, frontier, rows_to_frame


def test_frontier_keeps_points_no_faster_point_dominates():
    df = pd.DataFrame(
        {
            "recall": [0.50, 0.70, 0.70, 0.90, 0.95, 0.99],
            "qps": [900.0, 1000.0, 500.0, 400.0, 450.0, 100.0],
        }
    )
    front = frontier(df)
    # 0.95@450 dominates 0.90@400; 0.70@1000 dominates 0.50@900 and 0.70@500.
    assert list(zip(front.recall, front.qps)) == [(0.70, 1000.0), (0.95, 450.0), (0.99, 100.0)]


def test_frontier_lower_is_better_for_build_time():
    df = pd.DataFrame({"recall": [0.8, 0.9, 0.95], "build_seconds": [5.0, 3.0, 4.0]})
    front = frontier(df, y="build_seconds", lower_is_better=True)
    assert list(front.build_seconds) == [3.0, 4.0]


def test_pareto_per_series(results_df):
    front = annbench.pareto(results_df)
    assert set(front.algorithm) == {"mariadb", "pgvector"}
    for (_, _), group in front.groupby(["algorithm", "clients"]):
        ordered = group.sort_values("recall")
        assert ordered.qps.is_monotonic_decreasing


def test_rows_to_frame_orders_columns_and_keeps_schema_when_empty():
    frame = rows_to_frame([{"qps": 1.0, "param_z": 1, "param_a": "x", "algorithm": "m"}])
    assert list(frame.columns[: len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    assert list(frame.columns[len(RESULT_COLUMNS) :]) == ["param_a", "param_z"]
    empty = rows_to_frame([])
    assert list(empty.columns) == list(RESULT_COLUMNS) and empty.empty
