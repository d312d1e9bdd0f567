"""Shared fixtures: synthetic result frames (no Rust, no servers) for plot and frame tests."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest


def synthetic_results(seed: int = 7) -> pd.DataFrame:
    """Rows shaped like annbench.results(): two algorithms, a build grid x ef_search grid,
    1 and 4 clients, with recall rising and QPS falling along ef_search."""
    rng = np.random.default_rng(seed)
    rows = []
    for algorithm, speed in (("mariadb", 4000.0), ("pgvector", 2500.0)):
        for m in (8, 16):
            build = 2.0 * m * (1.5 if algorithm == "pgvector" else 1.0)
            for ef in (10, 20, 40, 80):
                recall = min(1.0, 0.6 + 0.1 * np.log2(ef / 10) + 0.01 * m + rng.normal(0, 0.01))
                for clients in (1, 4):
                    qps = speed * (10 / ef) * (16 / m) ** 0.3 * clients**0.8
                    rows.append(
                        {
                            "dataset": "synthetic-16-euclidean",
                            "count": 10,
                            "algorithm": algorithm,
                            "label": None,
                            "clients": clients,
                            "name": f"{algorithm}(m={m}, ef_search={ef})",
                            "recall": recall,
                            "epsilon_recall": recall,
                            "qps": qps,
                            "build_seconds": build,
                            "index_mib": m * 1.0,
                            "server_cpu_ms": clients * ef * m * 1e-3,
                            "latency_p99_ms": 1.5e3 * clients / qps,
                            "param_m": m,
                            "param_ef_search": ef,
                        }
                    )
    return pd.DataFrame(rows)


@pytest.fixture
def results_df() -> pd.DataFrame:
    return synthetic_results()


@pytest.fixture
def compare_df() -> pd.DataFrame:
    """Shaped like annbench.compare(): parameter matches, then recall matches."""
    return pd.DataFrame(
        {
            "match": ["params", "params", "params", "recall", "recall"],
            "algorithm": ["mariadb", "mariadb", "pgvector", "mariadb", "pgvector"],
            "clients": [1, 1, 1, 1, 1],
            "recall_threshold": [None, None, None, 0.95, 0.99],
            "base_name": [
                "MariaDB(m=8, ef_search=10)",
                "MariaDB(m=16, ef_search=20)",
                "PGVector(m=16, ef_construction=64, ef_search=40)",
                "x",
                None,
            ],
            "me_name": [
                "MariaDB(m=8, ef_search=10)",
                "MariaDB(m=16, ef_search=20)",
                "PGVector(m=16, ef_construction=64, ef_search=40)",
                "y",
                "z",
            ],
            "base_qps": [1000.0, 800.0, 600.0, 900.0, None],
            "me_qps": [1200.0, 700.0, 660.0, 990.0, 500.0],
            "ratio": [1.2, 0.875, 1.1, 1.1, None],
        }
    )
