"""annbench's change points against Apache Otava's own (`otava analyze`, PyPI apache-otava) on
seeded synthetic series: the same indices, and p-values and means equal at the 6 decimals Otava
prints. scripts/test.sh installs Otava in a venv of its own (its pins of numpy and scipy are not
the package's) and names its command in ANNBENCH_OTAVA."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

import annbench


def _otava() -> str:
    found = os.environ.get("ANNBENCH_OTAVA") or shutil.which("otava")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("otava is missing: scripts/test.sh installs apache-otava and sets ANNBENCH_OTAVA")
    pytest.skip("otava is not installed (pip install apache-otava; ANNBENCH_OTAVA=path/to/otava)")


def _series() -> dict[str, list[float]]:
    rng = np.random.default_rng(20261202)

    def noise(n: int, sd: float = 1.0) -> np.ndarray:
        return rng.normal(0.0, sd, n)

    step = np.r_[np.full(20, 100.0), np.full(20, 80.0)] + noise(40)
    ramp = np.linspace(100.0, 140.0, 40) + noise(40)
    outliers = 100.0 + noise(40)
    outliers[[7, 23]] += [30.0, -25.0]
    two = np.r_[np.full(15, 100.0), np.full(15, 120.0), np.full(15, 95.0)] + noise(45)
    returns = np.r_[np.full(12, 500.0), np.full(6, 420.0), np.full(12, 500.0)] + noise(30, 3.0)
    twelve = np.r_[np.full(6, 1000.0), np.full(6, 600.0)] + noise(12, 8.0)
    return {
        "step": step.tolist(),
        "ramp": ramp.tolist(),
        "outliers": outliers.tolist(),
        "noise": (100.0 + noise(60)).tolist(),
        "two_changes": two.tolist(),
        "returns": returns.tolist(),
        "twelve_runs": twelve.tolist(),
    }


def _otava_change_points(
    otava: str, tmp: Path, name: str, values: list[float], window: int, pvalue: float, magnitude: float
) -> list[dict[str, str]]:
    # Otava reads the last year by default: days ending yesterday.
    start = datetime.now(timezone.utc) - timedelta(days=len(values) + 1)
    path = tmp / f"{name}.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "value"])
        for i, v in enumerate(values):
            w.writerow([(start + timedelta(days=i)).isoformat(), repr(v)])
    config = tmp / "otava.yaml"
    config.write_text(
        f"tests:\n  {name}:\n    type: csv\n    file: {path}\n    time_column: time\n"
        "    metrics: [value]\n"
    )
    out = subprocess.run(
        [otava, "analyze", name, "--config-file", str(config), "--output", "json",
         "--window", str(window), "-P", str(pvalue), "-M", str(magnitude)],
        check=True, capture_output=True, text=True,
        env={**os.environ, "OTAVA_CONFIG": str(config)},
    )
    text = out.stdout[out.stdout.index("{"):]
    groups = json.loads(text)[name]
    return [c for g in groups for c in g["changes"]]


@pytest.mark.parametrize(
    "window,pvalue,magnitude",
    [(50, 0.001, 0.0), (8, 0.001, 0.02), (12, 0.01, 0.05)],
    ids=["otava-defaults", "annbench-defaults", "other"],
)
def test_change_points_match_otava(tmp_path: Path, window: int, pvalue: float, magnitude: float) -> None:
    otava = _otava()
    found_any = False
    for name, values in _series().items():
        theirs = _otava_change_points(otava, tmp_path, name, values, window, pvalue, magnitude)
        ours = annbench.change_points(values, window=window, max_pvalue=pvalue, min_magnitude=magnitude)
        assert [int(c["index"]) for c in theirs] == ours["index"].tolist(), name
        for c, (_, row) in zip(theirs, ours.iterrows()):
            found_any = True
            for field in ("pvalue", "mean_before", "mean_after", "stddev_before", "stddev_after", "magnitude"):
                # Otava prints 6 decimals: equal within the last one's rounding.
                assert abs(float(c[field]) - row[field]) <= 1.5e-6 * max(1.0, abs(row[field])), (name, field, c, row)
            assert f"{row['forward_change_percent']:.0f}" == c["forward_change_percent"], (name, c)
    assert found_any, "the series must hold change points, or the comparison tests nothing"
