"""Plot options on hand-made frames: notebook display, ax= and subplots, chosen metrics and
scales, the shared styling, qps_clients' parameter sets, relative_qps' size and title."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

import annbench
from annbench import plot


def test_figures_show_as_png_in_ipython_without_pyplot(results_df):
    from IPython.core.formatters import DisplayFormatter

    fig = plot.qps_recall(results_df)
    data, _ = DisplayFormatter().format(fig)
    assert "image/png" in data, sorted(data)
    with Image.open(io.BytesIO(data["image/png"])) as image:
        assert image.size == (800, 550)


def test_every_plot_draws_into_a_given_axes(results_df, compare_df, tmp_path):
    fig, axes = plot.subplots(2, 4)
    assert isinstance(fig, plot.PlotFigure) and axes.shape == (2, 4)
    calls = [
        lambda ax: plot.qps_recall(results_df, ax=ax),
        lambda ax: plot.build_time_recall(results_df, ax=ax),
        lambda ax: plot.index_size_recall(results_df, ax=ax),
        lambda ax: plot.server_cpu_recall(results_df, ax=ax),
        lambda ax: plot.qps_clients(results_df, ax=ax),
        lambda ax: plot.relative_qps(compare_df, ax=ax),
        lambda ax: plot.metric(results_df, y="latency_p99_ms", ax=ax),
    ]
    for ax, call in zip(axes.flat, calls):
        assert call(ax) is fig
        assert ax.get_lines() or ax.patches, "drawn into the given Axes"
    out = tmp_path / "grid.png"
    plot.save(fig, out)
    with Image.open(out) as image:
        assert image.size == (2400, 900)  # 6 x 4.5 inches per Axes at 100 dpi


def test_two_plots_side_by_side(results_df, tmp_path):
    fig, (left, right) = plot.subplots(1, 2, figsize=(12, 4.5))
    plot.qps_recall(results_df, ax=left)
    plot.metric(results_df, x="recall", y="latency_p99_ms", x_scale="logit", ax=right)
    assert left.get_yscale() == "log" and right.get_xscale() == "logit"
    assert left.get_title().startswith("QPS vs recall")
    assert right.get_title().startswith("p99 latency vs recall")
    fig.savefig(tmp_path / "pair.png")


def test_selectivity_takes_a_pair_of_axes():
    df = pd.DataFrame(
        {
            "algorithm": ["pgvector"] * 2,
            "clients": [1, 1],
            "recall": [0.5, 0.9],
            "qps": [900.0, 700.0],
            "param_selectivity": [0.01, 0.1],
        }
    )
    fig, (top, bottom) = plot.subplots(2, 1, sharex=True)
    assert plot.selectivity(df, ax=(top, bottom)) is fig
    assert top.get_lines() and bottom.get_lines()
    with pytest.raises(annbench.ConfigError, match="two Axes"):
        plot.selectivity(df, ax=top)


def test_ax_must_be_an_axes(results_df):
    with pytest.raises(annbench.ConfigError, match="matplotlib Axes"):
        plot.qps_recall(results_df, ax="left")


def test_metric_frontier_follows_each_metrics_direction(results_df):
    one = results_df[(results_df.algorithm == "mariadb") & (results_df.clients == 1)]
    ax = plot.metric(one, "recall", "latency_p99_ms").get_axes()[0]
    (line,) = ax.get_lines()
    xs, ys = list(line.get_xdata()), list(line.get_ydata())
    assert xs == sorted(xs)
    # Lower latency is better: along the frontier, more recall costs more latency.
    assert ys == sorted(ys)
    assert ax.get_ylabel() == "p99 latency (ms)" and ax.get_yscale() == "log"
    # Higher QPS is better: the opposite slope.
    (qps_line,) = plot.metric(one, "recall", "qps").get_axes()[0].get_lines()
    assert list(qps_line.get_ydata()) == sorted(qps_line.get_ydata(), reverse=True)


def test_logit_axis_keeps_recall_one_at_its_edge():
    df = pd.DataFrame(
        {"algorithm": ["mariadb"] * 3, "recall": [0.9, 0.99, 1.0], "qps": [900.0, 500.0, 100.0]}
    )
    ax = plot.qps_recall(df, x_scale="logit").get_axes()[0]
    assert ax.get_xscale() == "logit"
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == pytest.approx([0.9, 0.99, 0.9999])
    assert "logit" in ax.get_xlabel()
    with pytest.raises(annbench.ConfigError, match="logit axis takes values in 0..1"):
        plot.metric(df, x="qps", y="recall", x_scale="logit")


def test_unknown_metric_or_scale_is_a_config_error(results_df):
    with pytest.raises(annbench.ConfigError, match="latency_p99_ms") as err:
        plot.metric(results_df, y="p99")
    assert "annbench.plot.Metric" in str(err.value)
    with pytest.raises(annbench.ConfigError, match="linear, log, logit"):
        plot.metric(results_df, x_scale="cubic")
    with pytest.raises(annbench.ConfigError, match="needs the column"):
        plot.metric(results_df, y="latency_p999_ms")


def test_custom_metric_for_another_column(results_df):
    cpu = plot.Metric("server_cpu_ms", "CPU per query (ms)", scale="log", lower_is_better=True)
    ax = plot.metric(results_df, y=cpu).get_axes()[0]
    assert ax.get_ylabel() == "CPU per query (ms)" and ax.get_yscale() == "log"


def test_qps_interval_drawn_as_error_bars():
    df = pd.DataFrame(
        {
            "algorithm": ["mariadb"] * 2,
            "recall": [0.9, 0.99],
            "qps": [900.0, 500.0],
            "qps_ci_low": [850.0, 450.0],
            "qps_ci_high": [950.0, 560.0],
        }
    )
    ax = plot.qps_recall(df).get_axes()[0]
    assert ax.containers, "an errorbar container"


def test_build_properties_draw_one_line_per_algorithm_and_label(results_df):
    for draw in (plot.build_time_recall, plot.index_size_recall):
        ax = draw(results_df).get_axes()[0]
        assert [line.get_label() for line in ax.get_lines()] == ["MariaDB", "PGVector"]
    # p99 latency depends on the client count: one line per count.
    ax = plot.metric(results_df, y="latency_p99_ms").get_axes()[0]
    assert len(ax.get_lines()) == 4


def _labelled(results_df):
    a = results_df.assign(label="v1")
    b = results_df.assign(label="v2", qps=results_df.qps * 1.1)
    return pd.concat([a, b], ignore_index=True)


def test_colour_by_algorithm_style_by_label_marker_by_clients(results_df):
    df = _labelled(results_df)
    ax = plot.qps_recall(df).get_axes()[0]
    lines = {str(line.get_label()): line for line in ax.get_lines()}
    one, four = lines["MariaDB [v1], 1 client"], lines["MariaDB [v1], 4 clients"]
    other_label = lines["MariaDB [v2], 1 client"]
    pg = lines["PGVector [v1], 1 client"]
    assert one.get_color() == four.get_color() == other_label.get_color() != pg.get_color()
    assert one.get_linestyle() == four.get_linestyle() != other_label.get_linestyle()
    assert one.get_marker() == other_label.get_marker() != four.get_marker()
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == [
        "MariaDB", "PGVector", "label v1", "label v2", "1 client", "4 clients",
    ]
    assert legend.get_title().get_text() == "colour: algorithm, line: label, marker: clients"


def test_colours_stable_across_plots_and_frames(results_df):
    def colour(fig, name):
        return next(li.get_color() for li in fig.get_axes()[0].get_lines() if li.get_label() == name)

    both = plot.qps_recall(results_df)
    pg_only = plot.qps_recall(results_df[results_df.algorithm == "pgvector"])
    build = plot.build_time_recall(results_df)
    pg = colour(both, "PGVector, 1 client")
    assert colour(pg_only, "PGVector, 1 client") == pg
    assert colour(build, "PGVector") == pg
    assert colour(build, "MariaDB") != pg


def test_qps_clients_draws_a_few_pareto_sets(results_df):
    ax = plot.qps_clients(results_df).get_axes()[0]
    lines = ax.get_lines()
    assert 2 <= len(lines) <= 8, "at most 4 parameter sets per algorithm"
    looks = {(line.get_color(), line.get_marker()) for line in lines}
    assert len(looks) == len(lines), "every line has its own colour and marker"
    assert "Pareto parameter sets, <= 4 per algorithm" in ax.get_legend().get_title().get_text()
    one = results_df[results_df.clients == 1]
    for line in lines:
        label = str(line.get_label())
        name, _, recall = label.rpartition(", recall ")
        row = one[one["name"] == name.replace("MariaDB", "mariadb").replace("PGVector", "pgvector")]
        assert len(row) == 1, label
        same = one[one.algorithm == row.algorithm.iloc[0]]
        # No other set of the algorithm has both more recall and more QPS.
        better = same[(same.recall > row.recall.iloc[0]) & (same.qps > row.qps.iloc[0])]
        assert better.empty, label
        assert float(recall) == pytest.approx(row.recall.iloc[0], abs=1e-3)
    assert len(plot.qps_clients(results_df, sets=1).get_axes()[0].get_lines()) == 2
    with pytest.raises(annbench.ConfigError, match="sets=0"):
        plot.qps_clients(results_df, sets=0)


def _many_pairs(n):
    return pd.DataFrame(
        {
            "match": ["params"] * n,
            "algorithm": ["mariadb", "pgvector"] * (n // 2),
            "clients": [1] * n,
            "me_name": [f"MariaDB(m={i}, ef_search={10 * i})" for i in range(n)],
            "ratio": [0.8 + 0.01 * i for i in range(n)],
            "ratio_ci_low": [0.75 + 0.01 * i for i in range(n)],
            "ratio_ci_high": [0.85 + 0.01 * i for i in range(n)],
        }
    )


def test_relative_qps_grows_with_the_bars_and_names_both_labels():
    df = _many_pairs(48)
    df.attrs.update(base="mariadb-11.4", me="mariadb-11.8", dataset="sift-5k", count=10)
    fig = plot.relative_qps(df)
    ax = fig.get_axes()[0]
    assert ax.get_title() == "Relative QPS: mariadb-11.8 / mariadb-11.4 (sift-5k, k=10)"
    assert ax.get_xlabel() == "Relative QPS (mariadb-11.8 / mariadb-11.4)"
    assert fig.get_size_inches()[1] >= 48 * 0.24
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = sorted(
        (t.get_window_extent(renderer) for t in ax.get_yticklabels()), key=lambda b: b.y0
    )
    assert len(boxes) == 48
    for lower, upper in zip(boxes, boxes[1:]):
        assert lower.y1 <= upper.y0 + 0.5, "tick labels overlap"
    # Labels given explicitly win (a frame read back from CSV has no attrs).
    plain = _many_pairs(4)
    title = plot.relative_qps(plain, base="a", me="b").get_axes()[0].get_title()
    assert title == "Relative QPS: b / a"
    assert plot.relative_qps(plain).get_axes()[0].get_title() == "Relative QPS: me / base"


def test_subplots_rejects_an_empty_grid():
    with pytest.raises(annbench.ConfigError):
        plot.subplots(0, 1)
    fig, ax = plot.subplots()
    assert isinstance(ax, Axes) and isinstance(fig, plot.PlotFigure)
