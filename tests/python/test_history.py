"""annbench.history, annbench.plot.history and run(label="auto") on a real series: three tiny
pgvector runs of the bundled sift-5k set, labelled by hand, and one labelled by the server."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

import annbench
from annbench import ConfigError

from test_end_to_end import DATASET, server_urls


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    urls = server_urls()
    root = tmp_path_factory.mktemp("history")
    annbench.get_dataset(DATASET, root / "data")
    for label in ("r1", "r2", "r3", "auto"):
        annbench.run(
            DATASET,
            "pgvector",
            build={"m": [8], "ef_construction": [32]},
            query={"ef_search": [10, 40]},
            runs=2,
            min_time=0.05,
            results=root / "results",
            data_dir=root / "data",
            postgres=urls["ANNBENCH_POSTGRES_URL"],
            label=label,
            progress=False,
        )
    return root


def test_label_auto_is_the_server_version(series: Path) -> None:
    labels = set(annbench.results(DATASET, results=series / "results", data_dir=series / "data")["label"])
    auto = [label for label in labels if label not in ("r1", "r2", "r3")]
    assert len(auto) == 1 and auto[0].startswith("PostgreSQL ") and "pgvector" in auto[0], labels


def test_history_frame_and_plot(series: Path) -> None:
    df = annbench.history(
        DATASET, series=["r1", "r2", "r3"], results=series / "results", data_dir=series / "data"
    )
    assert list(df.drop_duplicates("index")["label"]) == ["r1", "r2", "r3"]
    for column in ("line", "kind", "qps", "qps_ci_low", "recall", "qps_ratio", "server_cpu_per_query", "changes"):
        assert column in df.columns, column
    # Ratios against the first run: exactly 1 where the first run has the line. Every point is
    # measured in every run; a recall threshold may be reached in a later run only (an HNSW
    # build's recall varies), and then the first run has no value and no ratio.
    first = df[df["index"] == 0]
    measured = first["qps"].notna()
    assert (first.loc[measured, "qps_ratio"] == 1.0).all()
    assert first.loc[~measured, "qps_ratio"].isna().all()
    assert measured[first["kind"] == "point"].all() and (first["kind"] == "point").sum() == 2
    assert isinstance(df.attrs["change_points"], pd.DataFrame)
    assert df.attrs["gate_fails"] in (True, False)
    assert df["time"].notna().all(), "each run records its start time"
    out = series / "history.png"
    annbench.plot.history(df, out, metric="qps")
    assert Image.open(out).size == (800, 550)
    with pytest.raises(ConfigError, match="unknown metric"):
        annbench.plot.history(df, metric="speed")
    with pytest.raises(ConfigError, match="no label matches 'nightly-\\*'"):
        annbench.history(DATASET, series=["nightly-*"], results=series / "results", data_dir=series / "data")


def test_change_points_of_a_list() -> None:
    cps = annbench.change_points([100.0] * 10 + [50.0] * 10, window=50)
    assert cps["index"].tolist() == [10]
    assert cps["forward_change_percent"].iloc[0] == pytest.approx(-50.0)
    assert annbench.change_points([]).empty
    with pytest.raises(ConfigError, match="finite"):
        annbench.change_points([1.0, float("nan"), 2.0])
