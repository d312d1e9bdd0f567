"""One vocabulary across outputs (docs/vocabulary.md): the Python frames have exactly the
columns the CLI's outputs have (pinned in tests/golden/vocabulary.txt, which tests/vocabulary.rs
checks against the CLI), algorithm ids, and integer parameters as Int64. The store is the
committed tests/data/vocabulary-store (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import annbench
from annbench.frames import display_name, nullable_ints

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "tests" / "data" / "vocabulary-store"
DATASET = "glove-25-angular"


def golden() -> dict[str, list[str]]:
    text = (ROOT / "tests" / "golden" / "vocabulary.txt").read_text()
    return {
        name: columns.split()
        for name, columns in (line.split(": ", 1) for line in text.splitlines() if line)
    }


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    where = {"results": STORE, "data_dir": STORE / "data"}
    return {
        "export": annbench.results(DATASET, **where),
        "table": annbench.table(DATASET, recall=[0.99, 0.95], **where),
        "builds": annbench.build_table(DATASET, **where),
        "clients": annbench.clients_table(DATASET, **where),
        "compare": annbench.compare("v1", "v2", DATASET, **where),
    }


def test_frames_have_the_cli_columns(frames):
    for name, columns in golden().items():
        assert list(frames[name].columns) == columns, name


def test_algorithm_is_the_id_everywhere(frames):
    for name, frame in frames.items():
        assert set(frame["algorithm"]) <= {"mariadb", "pgvector"}, name
    stored = frames["export"]
    assert len(stored[stored.algorithm == "mariadb"]) == 5
    table = frames["table"]
    assert len(table[table.algorithm == "mariadb"]) == 6  # 3 series (label, clients) x 2 thresholds
    assert display_name("mariadb") == "MariaDB" and display_name("hnswlib") == "hnswlib"


def test_integer_parameters_are_nullable_integers(frames):
    for name in ("export", "table", "builds"):
        frame = frames[name]
        assert str(frame["param_m"].dtype) == "Int64", name
        # Only pgvector has ef_construction: missing for MariaDB, still an integer.
        column = frame["param_ef_construction"]
        assert str(column.dtype) == "Int64", name
        assert column.isna().any() and set(column.dropna()) == {64}, name
    row = frames["export"].dropna(subset=["param_ef_construction"]).iloc[0]
    assert f"ef_construction={row['param_ef_construction']}" == "ef_construction=64"


def test_a_shared_column_holds_the_same_figure(frames):
    export = frames["export"].set_index(["algorithm", "label", "clients", "name"])
    table = frames["table"][frames["table"]["reached"].astype(bool)]
    for _, row in table.iterrows():
        point = export.loc[(row["algorithm"], row["label"], row["clients"], row["name"])]
        for column in ("recall", "qps", "build_seconds", "index_mib", "param_m"):
            assert row[column] == pytest.approx(point[column]), column
    builds = frames["builds"]
    assert builds["index_mib"].tolist() == pytest.approx([12_345_678 / 2**20] * len(builds))
    assert set(frames["export"]["latency_p50_ms"].round(6)) >= {round(900 / 1500, 6)}


def test_nullable_ints_leaves_other_columns():
    frame = pd.DataFrame(
        {"param_a": [1.0, None], "param_b": [1.5, None], "param_c": ["x", None], "n": [1.0, 2.0]}
    )
    out = nullable_ints(frame)
    assert str(out["param_a"].dtype) == "Int64"
    assert out["param_b"].dtype == float and out["n"].dtype == float


def test_results_directory_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANNBENCH_RESULTS", str(STORE))
    frame = annbench.results(DATASET, data_dir=STORE / "data")
    assert len(frame) == 7
