"""Datasets through numpy: create -> save -> load round trips, zero-copy arrays, exact
ground truth checked against a float64 numpy brute force."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import annbench


def brute_force(train, test, metric, k):
    """float64 reference: ids and distances of the k nearest train rows per query."""
    a, b = train.astype(np.float64), test.astype(np.float64)
    if metric == "angular":
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        dist = 1.0 - b @ a.T
    else:
        dist = np.sqrt(np.maximum(((b[:, None, :] - a[None, :, :]) ** 2).sum(-1), 0))
    ids = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return ids, np.take_along_axis(dist, ids, axis=1)


@pytest.fixture
def vectors():
    rng = np.random.default_rng(42)
    return rng.normal(size=(300, 12)).astype(np.float32), rng.normal(size=(25, 12)).astype(
        np.float32
    )


@pytest.mark.parametrize("metric", ["euclidean", "angular"])
def test_create_save_load_round_trip(vectors, metric, tmp_path):
    train, test = vectors
    ds = annbench.create_dataset(train, test=test, metric=metric, name="rt-12", count=10)
    assert (ds.name, ds.metric, ds.dimension) == ("rt-12", metric, 12)
    np.testing.assert_array_equal(ds.train, train)
    np.testing.assert_array_equal(ds.test, test)
    ids, dist = brute_force(train, test, metric, 10)
    np.testing.assert_array_equal(ds.neighbors, ids)
    np.testing.assert_allclose(ds.distances, dist, rtol=1e-4, atol=1e-5)

    path = tmp_path / "rt-12.hdf5"
    ds.save(path)
    back = annbench.load_dataset(path)
    assert (back.name, back.metric) == ("rt-12", metric)
    for field in ("train", "test", "neighbors", "distances"):
        original, loaded = getattr(ds, field), getattr(back, field)
        assert loaded.dtype == original.dtype and loaded.shape == original.shape
        np.testing.assert_array_equal(loaded, original)


def test_loaded_arrays_are_owned_by_rust_not_copied(vectors, tmp_path):
    train, test = vectors
    path = tmp_path / "zc.hdf5"
    annbench.create_dataset(train, test=test, metric="euclidean", name="zc", count=5).save(path)
    ds = annbench.load_dataset(path)
    arr = ds.train
    # numpy wraps Rust's buffer: it does not own the data, its base is the Rust container
    # (not another ndarray), and it is C-contiguous and writeable.
    assert not arr.flags.owndata
    assert arr.base is not None and not isinstance(arr.base, np.ndarray)
    assert arr.flags.c_contiguous and arr.flags.writeable
    # Every access returns the same array object, not a fresh copy.
    assert ds.train is arr
    arr[0, 0] = 123.0
    assert ds.train[0, 0] == 123.0
    assert ds.neighbors.dtype == np.int32 and ds.distances.dtype == np.float32


def test_compute_groundtruth_matches_reference_and_converts_inputs(vectors):
    train, test = vectors
    ids, dist = annbench.compute_groundtruth(train, test, "euclidean", count=7)
    ref_ids, ref_dist = brute_force(train, test, "euclidean", 7)
    assert ids.shape == (25, 7) and ids.dtype == np.int32
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-4, atol=1e-5)
    # float64 and Fortran-ordered input is converted once and gives the same answer.
    ids64, _ = annbench.compute_groundtruth(
        np.asfortranarray(train.astype(np.float64)), test.astype(np.float64), "euclidean", 7
    )
    np.testing.assert_array_equal(ids64, ids)


def test_split_is_seeded_and_complete(vectors):
    data = vectors[0]
    a = annbench.create_dataset(data, metric="euclidean", name="s", test_size=30, seed=5, count=3)
    b = annbench.create_dataset(data, metric="euclidean", name="s", test_size=30, seed=5, count=3)
    c = annbench.create_dataset(data, metric="euclidean", name="s", test_size=30, seed=6, count=3)
    assert a.train.shape == (270, 12) and a.test.shape == (30, 12)
    np.testing.assert_array_equal(a.test, b.test)
    assert not np.array_equal(a.test, c.test)
    rows = {r.tobytes() for r in np.concatenate([a.train, a.test])}
    assert rows == {r.tobytes() for r in data}


def test_create_from_npy_file(vectors, tmp_path):
    path = tmp_path / "emb.npy"
    np.save(path, vectors[0])
    ds = annbench.create_dataset(path, metric="angular", name="emb-12-angular", test_size=20)
    assert ds.train.shape == (280, 12) and ds.neighbors.shape[0] == 20


def test_subset_recomputes_ground_truth(vectors, tmp_path):
    train, test = vectors
    path = tmp_path / "full-12-euclidean.hdf5"
    annbench.create_dataset(train, test=test, metric="euclidean", name="full", count=10).save(path)
    sub = annbench.subset(path, train=100, test=5, count=10)
    assert sub.train.shape == (100, 12) and sub.test.shape == (5, 12)
    ids, _ = brute_force(train[:100], test[:5], "euclidean", 10)
    np.testing.assert_array_equal(sub.neighbors, ids)
    assert "100" in sub.name


def test_list_and_load_bundled(tmp_path):
    known = annbench.list_datasets(tmp_path)
    assert isinstance(known, pd.DataFrame)
    assert {"name", "dimension", "metric", "source", "path"} <= set(known.columns)
    assert "glove-25-angular" in set(known["name"])
    bundled = known[known["source"] == "bundled"]
    assert not bundled.empty and bundled["path"].isna().all()
    name = bundled["name"].iloc[0]
    with pytest.warns(UserWarning, match=f"{name}: writing the bundled set to .*data_dir="):
        ds = annbench.load_dataset(name, data_dir=tmp_path)
    assert ds.name == name and ds.neighbors is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # present now: nothing written, nothing said
        annbench.load_dataset(name, data_dir=tmp_path)
    assert ds.train.shape[1] == bundled["dimension"].iloc[0]
    again = annbench.list_datasets(tmp_path)
    assert again.set_index("name").loc[name, "path"] is not None


def test_k_is_the_deprecated_name_of_count(vectors):
    train, test = vectors
    with pytest.warns(DeprecationWarning, match="k= is now count="):
        old = annbench.compute_groundtruth(train, test, "euclidean", k=4)
    new = annbench.compute_groundtruth(train, test, "euclidean", count=4)
    np.testing.assert_array_equal(old[0], new[0])
    with pytest.warns(DeprecationWarning):
        ds = annbench.create_dataset(train, test=test, metric="euclidean", name="dep", k=4)
    assert ds.neighbors.shape == (len(test), 4)
