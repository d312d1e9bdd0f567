"""Each plot writes a non-empty PNG of exactly figsize * dpi pixels, and an SVG."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

import annbench
from annbench import plot


def _check_png(path: Path, width: int, height: int) -> None:
    assert path.stat().st_size > 1000
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (width, height)
        # A real drawing, not a blank canvas: more than background and one line colour.
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 16) or []) > 20


@pytest.mark.parametrize(
    "draw",
    [
        lambda df, p: plot.qps_recall(df, p),
        lambda df, p: plot.qps_recall(df, p, raw=True),
        lambda df, p: plot.build_time_recall(df, p),
        lambda df, p: plot.index_size_recall(df, p),
        lambda df, p: plot.server_cpu_recall(df, p),
        lambda df, p: plot.qps_clients(df, p),
        lambda df, p: plot.qps_clients(df, p, recall=0.8),
        lambda df, p: plot.metric(df, "recall", "latency_p99_ms", p, x_scale="logit"),
        lambda df, p: plot.metric(df, "epsilon_recall", "qps", p, raw=True),
    ],
    ids=[
        "qps", "qps-raw", "build", "size", "server-cpu", "clients", "clients-recall",
        "p99-logit", "epsilon",
    ],
)
def test_result_plots_write_png_of_expected_size(draw, results_df, tmp_path):
    out = tmp_path / "plot.png"
    fig = draw(results_df, out)
    assert fig.get_axes(), "a figure with axes is returned"
    _check_png(out, 800, 550)


def test_relative_qps_writes_png(compare_df, tmp_path):
    out = tmp_path / "rel.png"
    fig = plot.relative_qps(compare_df, out)
    _check_png(out, 800, 550)
    ax = fig.get_axes()[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # The pair without a ratio is left out; recall matches are labelled by threshold.
    assert labels == [
        "MariaDB(m=8, ef_search=10)",
        "MariaDB(m=16, ef_search=20)",
        "PGVector(m=16, ef_construction=64, ef_search=40)",
        "MariaDB recall >= 0.95",
    ]
    assert [p.get_width() for p in ax.patches[:4]] == [1.2, 0.875, 1.1, 1.1]


def test_size_and_svg(results_df, tmp_path):
    png = tmp_path / "small.png"
    plot.qps_recall(results_df, png, figsize=(4, 3), dpi=50)
    _check_png(png, 200, 150)
    svg = tmp_path / "plot.svg"
    plot.qps_recall(results_df, svg)
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert 'width="576pt"' in text  # 8 inches


def test_qps_axis_is_log_and_frontier_drawn(results_df):
    fig = plot.qps_recall(results_df)
    ax = fig.get_axes()[0]
    assert ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == [
        "MariaDB, 1 client",
        "MariaDB, 4 clients",
        "PGVector, 1 client",
        "PGVector, 4 clients",
    ]
    # The frontier line has no more points than the series.
    assert all(len(line.get_xdata()) <= 8 for line in ax.get_lines())


def test_unknown_extension_is_a_config_error(results_df, tmp_path):
    with pytest.raises(annbench.ConfigError, match=r"\.png or \.svg"):
        plot.qps_recall(results_df, tmp_path / "plot.jpg")
    assert not (tmp_path / "plot.jpg").exists()


def test_missing_column_and_empty_frame(results_df):
    with pytest.raises(annbench.ConfigError, match="qps"):
        plot.qps_recall(results_df.drop(columns=["qps"]))
    with pytest.raises(annbench.ResultsError, match="no result rows"):
        plot.qps_recall(results_df.iloc[0:0])


def test_qps_clients_needs_two_client_counts(results_df):
    one_client = results_df[results_df["clients"] == 1]
    with pytest.raises(annbench.ResultsError, match="two or more client counts"):
        plot.qps_clients(one_client)


def test_qps_clients_every_set_and_best_at_recall(results_df):
    ax = plot.qps_clients(results_df, sets=None).get_axes()[0]
    lines = ax.get_lines()
    assert len(lines) == 16  # 2 algorithms x 2 M x 4 ef_search
    assert all(list(line.get_xdata()) == [1, 4] for line in lines)
    names = [str(line.get_label()) for line in lines]
    assert any(n.startswith("MariaDB(m=8, ef_search=10), recall") for n in names), names
    best = plot.qps_clients(results_df, recall=0.8).get_axes()[0].get_lines()
    assert [line.get_label() for line in best] == ["MariaDB", "PGVector"]
    expected = results_df[(results_df.recall >= 0.8) & (results_df.algorithm == "mariadb")]
    assert list(best[0].get_ydata()) == list(expected.groupby("clients")["qps"].max())


def test_plots_return_figures_without_pyplot_state(results_df):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plot.qps_recall(results_df)
    assert plt.get_fignums() == before
    assert isinstance(results_df, pd.DataFrame)


def test_selectivity_plot_draws_recall_and_qps(tmp_path):
    sel = ["0.001", "0.01", "0.1"]
    df = pd.DataFrame(
        {
            "dataset": ["d"] * 6,
            "algorithm": ["pgvector"] * 3 + ["mariadb"] * 3,
            "label": [None] * 6,
            "clients": [1] * 6,
            "recall": [0.1, 0.5, 0.9, 1.0, 0.95, 0.9],
            "qps": [900.0, 800.0, 700.0, 300.0, 400.0, 500.0],
            "qps_ci_low": [850.0, 750.0, 650.0, 280.0, 380.0, 480.0],
            "qps_ci_high": [950.0, 850.0, 750.0, 320.0, 420.0, 520.0],
            "short_results": [50, 3, 0, 0, 0, 0],
            "param_ef_search": [40] * 6,
            "param_selectivity": sel + sel,
        }
    )
    out = tmp_path / "sel.png"
    fig = plot.selectivity(df, out)
    top, bottom = fig.get_axes()
    assert top.get_xscale() == "log" and bottom.get_yscale() == "log"
    assert len(top.get_lines()) == 2, "one line per algorithm and fixed parameters"
    _check_png(out, 800, 750)
    with pytest.raises(annbench.ConfigError):
        plot.selectivity(df.drop(columns=["param_selectivity"]))


def test_selectivity_plot_draws_a_line_per_filter_kind():
    sel = ["0.01", "0.1"]
    df = pd.DataFrame(
        {
            "algorithm": ["pgvector"] * 4,
            "label": [None] * 4,
            "clients": [1] * 4,
            "recall": [0.1, 0.5, 0.2, 0.6],
            "qps": [900.0, 800.0, 850.0, 750.0],
            "filter": ["range", "range", "label", "label"],
            "short_results": [40, 3, 38, 2],
            "param_ef_search": [40] * 4,
            "param_filter": [None, None, "label", "label"],
            "param_selectivity": sel + sel,
        }
    )
    fig = plot.selectivity(df)
    top, _ = fig.get_axes()
    names = sorted(str(line.get_label()) for line in top.get_lines())
    assert len(names) == 2, names
    assert "filter=label" in names[0] and "filter=range" in names[1], names
