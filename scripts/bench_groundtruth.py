#!/usr/bin/env python3
"""Benchmark: exact ground truth (k=100, euclidean) for 60,000 x 784 train and 10,000 queries,
annbench (Rust, matrixmultiply SGEMM + rayon) against numpy's BLAS brute force (one matrix
product per query block, then argpartition and a sort of the k winners).

Data: generated with a fixed seed in Fashion-MNIST's shape and value range: 60,000 train and
10,000 query rows of 784 integer values 0..255, as float32. Brute force costs the same whatever
the values, so the figures carry over to the real set.

Usage (release build; numpy needs h5py and threadpoolctl):
    cargo build --release
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 scripts/bench_groundtruth.py \
        --annbench target/release/annbench
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for this command only (where a machine sets
them they slow a current numpy); the script prints the BLAS kernel that numpy then uses.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np


def make_data():
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, size=(60000, 784)).astype(np.float32)
    test = rng.integers(0, 256, size=(10000, 784)).astype(np.float32)
    return train, test


def numpy_groundtruth(train, test, k, block):
    """Squared L2 via one GEMM per query block, argpartition, then sort the k winners."""
    train_sq = np.einsum("ij,ij->i", train, train)
    ids = np.empty((len(test), k), dtype=np.int64)
    dists = np.empty((len(test), k), dtype=np.float32)
    for s in range(0, len(test), block):
        q = test[s : s + block]
        d2 = train_sq[None, :] - 2.0 * (q @ train.T)
        d2 += np.einsum("ij,ij->i", q, q)[:, None]
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        pd = np.take_along_axis(d2, part, axis=1)
        order = np.argsort(pd, axis=1)
        ids[s : s + block] = np.take_along_axis(part, order, axis=1)
        dists[s : s + block] = np.sqrt(np.maximum(np.take_along_axis(pd, order, axis=1), 0))
    return ids, dists


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--annbench", default="target/release/annbench")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--block", type=int, default=1000, help="numpy query block")
    ap.add_argument("--runs", type=int, default=2, help="interleaved rounds (median and every run are reported)")
    args = ap.parse_args()

    try:
        from threadpoolctl import threadpool_info

        for lib in threadpool_info():
            print(f"numpy BLAS: {lib.get('internal_api')} {lib.get('version')} kernel={lib.get('architecture')} threads={lib.get('num_threads')}")
    except ImportError:
        print("numpy BLAS: (install threadpoolctl to show the kernel)")
    print(f"numpy {np.__version__}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, cores={os.cpu_count()}")

    train, test = make_data()
    print(f"data: train {train.shape}, test {test.shape}, k={args.k}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench-784-euclidean.hdf5")
        with h5py.File(path, "w") as f:
            f.attrs["type"] = "dense"
            f.attrs["distance"] = "euclidean"
            f.attrs["dimension"] = train.shape[1]
            f.attrs["point_type"] = "float"
            f.create_dataset("train", data=train)
            f.create_dataset("test", data=test)
        # Interleaved rounds (numpy, then annbench) so that both sides see the same drift in load.
        np_times, rs_times, loads = [], [], []
        for run in range(args.runs):
            loads.append(os.getloadavg()[0])
            t0 = time.perf_counter()
            np_ids, _ = numpy_groundtruth(train, test, args.k, args.block)
            np_times.append(time.perf_counter() - t0)
            cmd = [args.annbench, "datasets", "groundtruth", path, "--k", str(args.k)]
            if run < args.runs - 1:
                cmd.append("--dry-run")
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            print("annbench:", out.strip().splitlines()[0])
            rs_times.append(float(re.search(r": ([0-9.]+) s", out).group(1)))
        with h5py.File(path, "r") as f:
            rs_ids = f["neighbors"][:]
    fmt = lambda ts: ", ".join("%.2f" % t for t in ts)  # noqa: E731
    print(f"load average (1 min) at each round: {fmt(loads)}")
    print(f"numpy brute force: median {statistics.median(np_times):.2f} s; runs {fmt(np_times)}")
    print(f"annbench exact: median {statistics.median(rs_times):.2f} s; runs {fmt(rs_times)} (computation only)")
    same = (rs_ids == np_ids).mean()
    sets = np.mean([len(set(a) & set(b)) / args.k for a, b in zip(rs_ids, np_ids)])
    print(f"agreement with numpy f32 results: {same:.4%} same id at same rank, {sets:.4%} same id sets")
    ratios = [n / r for n, r in zip(np_times, rs_times)]
    print(f"numpy time / annbench time per round: {fmt(ratios)} (median {statistics.median(ratios):.2f}x)")


if __name__ == "__main__":
    main()
