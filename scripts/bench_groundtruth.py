#!/usr/bin/env python3
"""Benchmark: exact ground truth (k=100) for 60,000 x 784 train and 10,000 queries: annbench
(`annbench datasets groundtruth`) against faiss-cpu's exact flat index (IndexFlatL2, or
IndexFlatIP on normalised rows for angular) and numpy's BLAS brute force (one matrix product per
query block, then argpartition and a sort of the k winners).

Data: generated with a fixed seed in Fashion-MNIST's shape and value range: 60,000 train and
10,000 query rows of 784 integer values 0..255, as float32. Brute force costs the same whatever
the values, so the figures carry over to the real set.

The three sides run interleaved, round by round (numpy, faiss, annbench), so that all see the
same drift in load; the 1-minute load average is printed at the start of each round. Times:
numpy's `numpy_groundtruth` call; faiss's `index.add` + `index.search` calls (2 OpenMP
threads); annbench's whole command (start, read the HDF5 file, compute, write the ground truth
into the file) and its computation alone (as the command prints it).

Exactness: each side's answer against annbench's exact one (ties by lower id): the share of
(query, rank) slots holding another id, and the share whose id is not at the exact distance of
that rank (a wrong neighbour, not an equal-distance one in another order).

Usage (release build; needs numpy, h5py, threadpoolctl and faiss-cpu):
    cargo build --release
    pip install numpy h5py threadpoolctl faiss-cpu
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 scripts/bench_groundtruth.py \
        --annbench target/release/annbench --runs 5 --faiss-coretype SkylakeX
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for this command (where a machine sets them they
slow a current numpy); --faiss-coretype sets the kernel of faiss's older bundled OpenBLAS alone,
which on a CPU it does not know falls back to a slow generic one. The script prints the BLAS
kernel that numpy and faiss then use.
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import h5py
import numpy as np


def make_data():
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, size=(60000, 784)).astype(np.float32)
    test = rng.integers(0, 256, size=(10000, 784)).astype(np.float32)
    return train, test


def normalised(x):
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n == 0, 1, n)


def numpy_groundtruth(train, test, k, block, metric):
    """Squared L2 (or minus the cosine) via one GEMM per query block, argpartition, then a sort
    of the k winners."""
    if metric == "angular":
        train, test = normalised(train), normalised(test)
        train_sq = np.zeros(len(train), dtype=np.float32)
    else:
        train_sq = np.einsum("ij,ij->i", train, train)
    ids = np.empty((len(test), k), dtype=np.int64)
    for s in range(0, len(test), block):
        q = test[s : s + block]
        d2 = train_sq[None, :] - 2.0 * (q @ train.T)
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        pd = np.take_along_axis(d2, part, axis=1)
        order = np.argsort(pd, axis=1)
        ids[s : s + block] = np.take_along_axis(part, order, axis=1)
    return ids


def faiss_groundtruth(faiss, train, test, k, metric):
    """The exact flat index: add the train rows, search all queries at once."""
    if metric == "angular":
        index = faiss.IndexFlatIP(train.shape[1])
        index.add(normalised(train))
        _, ids = index.search(normalised(test), k)
    else:
        index = faiss.IndexFlatL2(train.shape[1])
        index.add(train)
        _, ids = index.search(test, k)
    return ids


def exact_keys(train, test, ids, metric):
    """float64 key of each (query, id) pair: squared L2 distance, or cosine distance."""
    out = np.empty(ids.shape, dtype=np.float64)
    for s in range(0, len(test), 200):
        q = test[s : s + 200].astype(np.float64)[:, None, :]
        x = train[ids[s : s + 200]].astype(np.float64)
        if metric == "angular":
            dot = (q * x).sum(axis=2)
            nq, nx = np.sqrt((q * q).sum(axis=2)), np.sqrt((x * x).sum(axis=2))
            out[s : s + 200] = 1.0 - dot / np.where(nq * nx == 0, 1, nq * nx)
        else:
            out[s : s + 200] = ((q - x) ** 2).sum(axis=2)
    return out


def disagreement(name, train, test, ids, exact_ids, metric):
    """Shares of slots with another id, and of slots whose id is at another distance."""
    other_id = ids != exact_ids
    # An id whose key equals that of annbench's id at the same rank is a tie in another
    # order, not an error (both keys computed the same way, so equal inputs give equal keys).
    wrong = other_id & (exact_keys(train, test, ids, metric) != exact_keys(train, test, exact_ids, metric))
    print(
        f"{name} against annbench's exact answer: {other_id.mean():.4%} of (query, rank) slots "
        f"hold another id, {wrong.mean():.4%} an id at another distance (a wrong neighbour)"
    )


def cpu_description():
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    simd = [f for f in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl") if f in flags]
    return f"CPU: {model}, {os.cpu_count()} logical cores, flags {' '.join(simd) or '(none of avx2/fma/avx512)'}"


def run_annbench(binary, path, k):
    """Whole-command wall time, computation time (as printed), and the printed line."""
    cmd = [binary, "datasets", "groundtruth", path, "--k", str(k)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    whole = time.perf_counter() - t0
    line = out.strip().splitlines()[0]
    return whole, float(re.search(r": ([0-9.]+) s", line).group(1)), line


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--annbench", default="target/release/annbench")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--metric", choices=["euclidean", "angular"], default="euclidean")
    ap.add_argument("--block", type=int, default=1000, help="numpy query block")
    ap.add_argument("--threads", type=int, default=2, help="faiss OpenMP threads")
    ap.add_argument("--runs", type=int, default=3, help="interleaved rounds (median and every run are reported)")
    ap.add_argument("--no-numpy", action="store_true", help="leave numpy out of the rounds")
    ap.add_argument(
        "--faiss-coretype",
        help="OPENBLAS_CORETYPE for faiss's own OpenBLAS only (numpy's is loaded already), e.g. "
        "SkylakeX where its OpenBLAS does not know the CPU and falls back to an old kernel",
    )
    args = ap.parse_args()

    if args.faiss_coretype:
        os.environ["OPENBLAS_CORETYPE"] = args.faiss_coretype
    import faiss

    faiss.omp_set_num_threads(args.threads)
    print(cpu_description())
    print(
        f"numpy {np.__version__}, faiss-cpu {faiss.__version__} ({args.threads} OpenMP threads), "
        f"faiss OPENBLAS_CORETYPE={args.faiss_coretype or os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"
    )
    try:
        from threadpoolctl import threadpool_info

        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                print(
                    f"BLAS {os.path.basename(lib.get('filepath', ''))}: {lib.get('internal_api')} "
                    f"{lib.get('version')} kernel={lib.get('architecture')} threads={lib.get('num_threads')}"
                )
    except ImportError:
        print("BLAS: (install threadpoolctl to show the kernels)")

    train, test = make_data()
    print(f"data: train {train.shape}, test {test.shape}, k={args.k}, {args.metric}")

    sides = ([] if args.no_numpy else ["numpy"]) + ["faiss", "annbench"]
    times = {s: [] for s in sides}
    whole, loads = [], []
    answers = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"bench-784-{args.metric}.hdf5")
        with h5py.File(path, "w") as f:
            f.attrs["type"] = "dense"
            f.attrs["distance"] = args.metric
            f.attrs["dimension"] = train.shape[1]
            f.attrs["point_type"] = "float"
            f.create_dataset("train", data=train)
            f.create_dataset("test", data=test)
        for run in range(args.runs):
            loads.append(os.getloadavg()[0])
            row = [f"round {run + 1}: load {loads[-1]:.2f}"]
            for side in sides:
                if side == "annbench":
                    w, c, line = run_annbench(args.annbench, path, args.k)
                    whole.append(w)
                    times[side].append(c)
                    row.append(f"annbench {w:.2f} s whole command, {c:.2f} s computation")
                    print("  annbench:", line)
                    continue
                t0 = time.perf_counter()
                if side == "numpy":
                    answers[side] = numpy_groundtruth(train, test, args.k, args.block, args.metric)
                else:
                    answers[side] = faiss_groundtruth(faiss, train, test, args.k, args.metric)
                times[side].append(time.perf_counter() - t0)
                row.append(f"{side} {times[side][-1]:.2f} s")
            print("; ".join(row), flush=True)
        with h5py.File(path, "r") as f:
            exact_ids = f["neighbors"][:]

    fmt = lambda ts: ", ".join("%.2f" % t for t in ts)  # noqa: E731
    med = statistics.median
    print(f"load average (1 min) at each round: {fmt(loads)}")
    for side in sides:
        if side != "annbench":
            print(f"{side}: median {med(times[side]):.2f} s; runs {fmt(times[side])}")
    print(f"annbench whole command (read + compute + write): median {med(whole):.2f} s; runs {fmt(whole)}")
    print(f"annbench computation only: median {med(times['annbench']):.2f} s; runs {fmt(times['annbench'])}")
    for side in sides:
        if side != "annbench":
            ratios = [o / a for o, a in zip(times[side], whole)]
            print(
                f"{side} time / annbench whole-command time per round: {fmt(ratios)} "
                f"(median {med(ratios):.2f}x; above 1 means annbench is faster)"
            )
    for side in sides:
        if side != "annbench":
            disagreement(side, train, test, answers[side], exact_ids, args.metric)


if __name__ == "__main__":
    main()
