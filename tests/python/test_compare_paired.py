"""annbench.compare and annbench.compare_matrix on servers measured interleaved in one run:
the committed tests/data/paired-store (written by tests/report_paired.rs) holds three servers
of one run, ``base``, ``a2`` (the same server) and ``fast`` (5% faster, data_checksums off),
whose passes drift 20% across 60 rounds. No server needed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import annbench

STORE = Path(__file__).resolve().parents[2] / "tests" / "data" / "paired-store"
DATASET = "glove-25-angular"
WHERE = {"recall": [0.93, 0.92], "results": STORE, "data_dir": STORE / "data"}


def test_matrix_has_a_cell_per_row_and_server() -> None:
    df = annbench.compare_matrix("base", ["a2", "fast"], DATASET, **WHERE)
    assert len(df) == 10  # 3 parameter rows and 2 recall rows, times 2 servers
    assert set(df["rule"]) == {"paired"}
    fast, same = df[df.server == "fast"], df[df.server == "a2"]
    assert fast["significant"].all() and (fast["verdict"] == "faster").all()
    assert not same["significant"].any() and (same["verdict"] == "within noise").all()
    assert (df["ratio_ci_low"] <= df["ratio"]).all() and (df["ratio"] <= df["ratio_ci_high"]).all()
    assert (fast["cpu_verdict"] == "cheaper").all()
    wide = df.attrs["matrix"]
    assert isinstance(wide, pd.DataFrame)
    assert list(wide.columns) == ["a2", "fast"] and wide.shape == (5, 2)
    assert (wide["fast"] > wide["a2"]).all()
    assert df.attrs["settings_differ"] == [
        {"setting": "data_checksums", "values": {"base": "on", "a2": "on", "fast": "off"}}
    ]
    assert set(df.attrs["notes"]) == {"a2", "fast"}


def test_compare_says_the_rule_and_the_pairing() -> None:
    df = annbench.compare("base", "fast", DATASET, **WHERE)
    assert (df["rule"] == "paired").all() and (df["rounds"] == 60).all()
    assert (df["verdict"] == "faster").all()
    pairing = df.attrs["pairing"]
    assert pairing["paired"] == pairing["pairs"] == 5
    assert 0 < pairing["median_paired_half_width"] < 0.02
    assert pairing["build_spread"][0]["base"] is None  # one build each: not measured
    assert any("--rebuilds 2" in n for n in df.attrs["notes"])
    # A paired noise threshold above the difference: within noise.
    loose = annbench.compare("base", "fast", DATASET, paired_noise=0.1, **WHERE)
    assert (loose["verdict"] == "within noise").all()


def test_one_server_as_a_string_and_errors_name_the_input() -> None:
    one = annbench.compare_matrix("base", "fast", DATASET, **WHERE)
    assert set(one["server"]) == {"fast"}
    with pytest.raises(annbench.ConfigError, match="nope"):
        annbench.compare_matrix("base", ["nope"], DATASET, **WHERE)
    with pytest.raises(annbench.ConfigError, match="twice"):
        annbench.compare_matrix("base", ["fast", "fast"], DATASET, **WHERE)
