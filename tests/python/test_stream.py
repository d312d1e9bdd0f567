"""annbench.stream against the real pgvector server: a small runbook on the bundled sift-5k
set, the per-step frame, the stored runs read back, the timeline plot, and a bad runbook
refused before any server work."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

import annbench
from annbench.streaming import STREAM_COLUMNS
from test_end_to_end import server_urls

DATASET = "sift-5k-128-euclidean"

RUNBOOK = f"""{DATASET}:
  max_pts: 3000
  1: {{operation: insert, start: 0, end: 3000}}
  2: {{operation: search}}
  3: {{operation: delete, start: 0, end: 1500, batch: 500}}
  4: {{operation: search}}
  5: {{operation: insert, start: 3000, end: 4000, rate: 2000, during: {{clients: 1}}}}
  6: {{operation: search}}
"""


@pytest.fixture(scope="module")
def streamed(tmp_path_factory):
    urls = server_urls()
    root = tmp_path_factory.mktemp("stream")
    annbench.get_dataset(DATASET, root / "data")
    runbook = root / "runbook.yaml"
    runbook.write_text(RUNBOOK)
    events: list[dict] = []
    df = annbench.stream(
        DATASET,
        runbook,
        "pgvector",
        build={"m": 8, "ef_construction": 32},
        query={"ef_search": [40, 100]},
        runs=2,
        min_time=0.05,
        results=root / "results",
        data_dir=root / "data",
        postgres=urls["ANNBENCH_POSTGRES_URL"],
        progress=events.append,
    )
    return df, events, root, runbook


def test_one_row_per_step_and_query_point(streamed):
    df, events, _, _ = streamed
    assert list(df.columns) == list(STREAM_COLUMNS)
    # 3 write steps, and 3 search steps at 2 query points.
    assert len(df) == 3 + 3 * 2
    searches = df[df["operation"] == "search"]
    assert set(searches["query"]) == {"ef_search=40", "ef_search=100"}
    assert (searches["not_live"] == 0).all()
    assert searches["recall"].between(0.8, 1.0).all()
    assert list(df.drop_duplicates("step")["live_rows"]) == [3000, 3000, 1500, 1500, 2500, 2500]
    # Recall never falls with a larger ef_search on the same index and live rows.
    for _, rows in searches.groupby("step"):
        by_ef = rows.set_index("query")["recall"]
        assert by_ef["ef_search=100"] >= by_ef["ef_search=40"] - 1e-9
    paced = df[df["step"] == 5].iloc[0]
    assert paced["target_rate"] == 2000 and paced["achieved_rate"] > 0
    assert paced["during_clients"] == 1 and paced["during_qps"] > 0 and paced["baseline_qps"] > 0
    assert [e["step"] for e in events if e["kind"] == "stream_step"] == [1, 2, 3, 4, 5, 6]


def test_stored_runs_read_back_and_plot(streamed):
    df, _, root, _ = streamed
    stored = annbench.stream_results(DATASET, results=root / "results")
    assert len(stored) == len(df)
    assert list(stored["recall"].fillna(-1)) == list(df["recall"].fillna(-1))
    out = root / "timeline.png"
    fig = annbench.plot.stream_timeline(stored, out)
    assert len(fig.axes) == 3
    with Image.open(out) as image:
        assert image.size[0] > 100


def test_a_bad_runbook_is_refused_before_the_server(tmp_path: Path):
    annbench.get_dataset(DATASET, tmp_path / "data")
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"{DATASET}:\n  1: {{operation: upsert, start: 0, end: 10}}\n")
    with pytest.raises(annbench.ConfigError, match="upsert"):
        annbench.stream(
            DATASET,
            bad,
            "pgvector",
            data_dir=tmp_path / "data",
            results=tmp_path / "results",
            postgres="postgres://u:p@127.0.0.1:1/db",
        )
