"""The registry seen from Python: ``annbench.algorithms()`` describes what ``run`` accepts, and
the algorithms added as one folder each (IVFFlat, binary quantization) sweep, table and plot
like the others against the real servers (see test_end_to_end.py for how they are found)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

import annbench
from test_end_to_end import server_urls

DATASET = "sift-5k-128-euclidean"


def test_algorithms_describe_every_parameter():
    algos = {a["name"]: a for a in annbench.algorithms()}
    assert {"exact", "mariadb", "pgvector", "pgvector_ivfflat", "pgvector_binary"} <= set(algos)
    ivf = algos["pgvector_ivfflat"]
    lists = next(p for p in ivf["build"] if p["name"] == "lists")
    assert lists["required"] and "rows/1000" in lists["auto"]
    assert ivf["server"].startswith("PostgreSQL") and ivf["max_dimension"] == 2000
    assert "ef_search >= candidates" in algos["pgvector_binary"]["rules"]
    with pytest.raises(annbench.ConfigError, match="pgvector_ivfflat"):
        annbench.run(DATASET, "no_such_algorithm", progress=False)


def test_ivfflat_and_binary_sweep_table_and_plot(tmp_path: Path):
    urls = server_urls()
    annbench.get_dataset(DATASET, tmp_path / "data")
    kwargs = dict(
        results=tmp_path / "results",
        data_dir=tmp_path / "data",
        runs=1,
        progress=False,
        postgres=urls["ANNBENCH_POSTGRES_URL"],
    )
    # Each override applies to the algorithm that has the key.
    df = annbench.run(
        DATASET,
        ["pgvector_ivfflat", "pgvector_binary"],
        build={"lists": ["auto"], "m": [8], "ef_construction": [32]},
        query={"probes": [1, 4], "candidates": [20, 80]},
        **kwargs,
    )
    assert sorted(df["name"]) == [
        "PGVector_binary(m=8, ef_construction=32, candidates=20)",
        "PGVector_binary(m=8, ef_construction=32, candidates=80)",
        "PGVector_ivfflat(lists=4, probes=1)",  # auto: 4500 train rows / 1000
        "PGVector_ivfflat(lists=4, probes=4)",
    ]
    assert (df["index_mib"] > 0).all() and (df["build_seconds"] > 0).all()
    # Scanning every list is exact search through the index.
    assert df[df.name.str.contains("probes=4")]["recall"].iloc[0] >= 0.95
    table = annbench.table(
        DATASET, recall=[0.1], results=kwargs["results"], data_dir=kwargs["data_dir"]
    )
    assert set(table["algorithm"]) == {"pgvector_ivfflat", "pgvector_binary"}
    builds = annbench.build_table(
        DATASET, results=kwargs["results"], data_dir=kwargs["data_dir"]
    )
    assert len(builds) == 2
    out = tmp_path / "qps.png"
    annbench.plot.qps_recall(df, out)
    with Image.open(out) as image:
        assert image.size == (800, 550)
