#!/usr/bin/env python3
"""How often `annbench history`'s defaults find a change point where there is none: seeded
series of independent normal noise (no change), through annbench.change_points with the
history defaults (window 8, p-value 0.001, magnitude 2%), and the regression gate over 40
series with and without its correction for the number of series (docs/methodology.md).

    .venv/bin/python scripts/history_false_alarms.py
"""

from __future__ import annotations

import numpy as np

import annbench

WINDOW, PVALUE, MAGNITUDE, SERIES = 8, 0.001, 0.02, 40


def noise(rng: np.random.Generator, n: int, cv: float) -> list[float]:
    return list(1000.0 * (1.0 + rng.normal(0.0, cv, n)))


def main() -> None:
    rng = np.random.default_rng(42)
    print(f"one series of noise alone (window {WINDOW}, p {PVALUE}, magnitude {MAGNITUDE:.0%}):")
    for n in (12, 30):
        for cv in (0.01, 0.03, 0.10):
            trials, points, hit = 1000, 0, 0
            for _ in range(trials):
                k = len(annbench.change_points(noise(rng, n, cv), window=WINDOW,
                                               max_pvalue=PVALUE, min_magnitude=MAGNITUDE))
                points, hit = points + k, hit + (k > 0)
            print(f"  {n} runs, CV {cv:.0%}: {points / trials:.3f} change points per series, "
                  f"{hit / trials:.1%} of series with any")
    print(f"the gate over {SERIES} series of noise alone:")
    for n in (12, 30):
        for cv in (0.01, 0.05):
            trials, raw, corrected = 400, 0, 0
            for _ in range(trials):
                r = c = False
                for _ in range(SERIES):
                    df = annbench.change_points(noise(rng, n, cv), window=WINDOW,
                                                max_pvalue=PVALUE, min_magnitude=MAGNITUDE)
                    if len(df) and df.iloc[-1]["forward_change_percent"] < 0:
                        r = True
                        c = c or df.iloc[-1]["pvalue"] < PVALUE / SERIES
                raw, corrected = raw + r, corrected + c
            print(f"  {n} runs, CV {cv:.0%}: {raw / trials:.1%} of histories fail uncorrected, "
                  f"{corrected / trials:.1%} with the correction")


if __name__ == "__main__":
    main()
