"""The sweep API end to end without servers, on the in-process exact backend (the
reference the runner ships): run -> results/table/compare -> plots, progress events,
interruption and the GIL."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import annbench
from annbench import _annbench

DATASET = "sift-5k-128-euclidean"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact")
    annbench.get_dataset(DATASET, root / "data")
    common = dict(
        results=root / "results", data_dir=root / "data", runs=1, min_time=0, progress=False
    )
    a = annbench.run(DATASET, "exact", clients=(1, 2), label="a", **common)
    b = annbench.run(DATASET, "exact", clients=(1, 2), label="b", **common)
    return root, common, a, b


def test_run_rows_match_the_store(store):
    root, common, a, b = store
    assert list(a["label"]) == ["a", "a"] and list(a["clients"]) == [1, 2]
    assert (a["recall"] == 1.0).all()  # exact search against exact ground truth
    stored = annbench.results(DATASET, results=common["results"], data_dir=common["data_dir"])
    assert len(stored) == 4
    merged = stored.merge(a, on=["label", "clients"], suffixes=("", "_run"))
    np.testing.assert_array_equal(merged["qps"], merged["qps_run"])


def test_compare_ratio_is_me_over_base(store, tmp_path):
    _, common, a, b = store
    cmp = annbench.compare("a", "b", DATASET, results=common["results"])
    params = cmp[cmp["match"] == "params"].sort_values("clients")
    expected = (
        b.sort_values("clients")["qps"].to_numpy() / a.sort_values("clients")["qps"].to_numpy()
    )
    np.testing.assert_allclose(params["ratio"], expected)
    # "disturbed": a side measured under heavy interference (a busy machine) gets no verdict.
    assert set(cmp["verdict"].dropna()) <= {"faster", "slower", "within noise", "disturbed"}
    assert set(cmp.attrs["summary"]["match"]) == {"params", "recall"}
    assert {"geomean", "geomean_ci_low", "within_noise"} <= set(cmp.attrs["summary"].columns)
    assert any("build-to-build variance" in n for n in cmp.attrs["notes"])
    best = annbench.compare("a", "b", DATASET, results=common["results"], stat="best", noise=0.1)
    assert best["ratio_ci_low"].isna().all()
    annbench.plot.relative_qps(cmp, tmp_path / "rel.png")
    assert (tmp_path / "rel.png").stat().st_size > 1000


def test_table_build_and_clients_tables(store):
    _, common, a, _ = store
    table = annbench.table(DATASET, recall=[1.0], results=common["results"])
    assert len(table) == 4 and table["reached"].all()
    builds = annbench.build_table(DATASET, results=common["results"])
    assert list(builds["label"]) == ["a", "b"]
    clients = annbench.clients_table(DATASET, results=common["results"])
    assert sorted(clients["clients"].unique()) == [1, 2]


def test_progress_events_and_skip(store):
    _, common, _, _ = store
    events: list[dict] = []
    again = annbench.run(
        DATASET, "exact", clients=(1, 2), label="a", **{**common, "progress": events.append}
    )
    assert len(again) == 2
    assert [e["kind"] for e in events if e["kind"].startswith("point")] == ["point_skipped"] * 2
    # The whole sweep's size comes first, before any algorithm starts.
    kinds = [e["kind"] for e in events]
    assert kinds.index("sweep_started") < kinds.index("algorithm_started")
    started = next(e for e in events if e["kind"] == "sweep_started")
    assert (started["algorithms"], started["builds"], started["points"]) == (1, 1, 2)


def test_callback_exception_stops_the_sweep_and_is_raised(store):
    _, common, _, _ = store

    def boom(event):
        if event["kind"] == "pass_finished":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt, match="0 point.* stored in"):
        annbench.run(DATASET, "exact", label="stopped", **{**common, "progress": boom})
    stored = annbench.results(DATASET, results=common["results"])
    assert "stopped" not in set(stored["label"])


def test_interruption_says_what_was_stored(store):
    """Ctrl-C (here: the callback raising it) during the second point: the message counts
    the point stored by this call and names the store; that point is on disk."""
    _, common, _, _ = store
    finished: list[dict] = []

    def stop_in_second_point(event):
        if event["kind"] == "point_finished":
            finished.append(event)
        elif event["kind"] == "point_started" and finished:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as raised:
        annbench.run(
            DATASET, "exact", clients=(1, 2), label="half", order="points",
            **{**common, "progress": stop_in_second_point},
        )
    message = str(raised.value)
    assert "1 point(s) measured by this call are stored in" in message, message
    assert str(common["results"]) in message and "run the same call again" in message
    stored = annbench.results(DATASET, results=common["results"])
    assert list(stored[stored["label"] == "half"]["clients"]) == [1]


def test_long_calls_release_the_gil():
    """A Python thread keeps counting while Rust computes: impossible if the GIL were held."""
    rng = np.random.default_rng(0)
    train = rng.normal(size=(20000, 64)).astype(np.float32)
    test = rng.normal(size=(300, 64)).astype(np.float32)
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    # A long switch interval: the spinning thread cannot preempt this one between the two
    # reads below, so it can only have counted if the Rust call released the GIL.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.2)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        before = count[0]
        _annbench.compute_groundtruth(train, test, "euclidean", 10)
        during = count[0] - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert during > 0
