#!/usr/bin/env python3
"""Write a seeded 60,000 x 784 euclidean set in Fashion-MNIST's shape and value range, for the
version comparisons of docs/versions.md: 100 Gaussian clusters of integer values 0..255 (as
uint8), so that an HNSW graph has structure to find, and 1,000 queries drawn the same way.

Usage:
    python3 scripts/make-blobs-784.py OUT_DIR
    annbench datasets create OUT_DIR/blobs-784-60k.npy --queries OUT_DIR/blobs-784-60k-queries.npy \
        --metric euclidean --name blobs-784-60k-euclidean
"""

import argparse
from pathlib import Path

import numpy as np


def blobs(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    which = rng.integers(0, len(centres), size=n)
    x = centres[which] + rng.normal(0.0, 40.0, size=(n, centres.shape[1]))
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=784)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    centres = rng.uniform(0.0, 255.0, size=(100, 784))
    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / "blobs-784-60k.npy", blobs(rng, centres, 60_000))
    np.save(args.out / "blobs-784-60k-queries.npy", blobs(rng, centres, 1_000))


if __name__ == "__main__":
    main()
