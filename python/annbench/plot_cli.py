"""``annbench plot KIND ...``: the command-line face of :mod:`annbench.plot`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import pandas as pd

from . import plot
from ._annbench import AnnbenchError, ConfigError, ResultsError
from .plot.figure import check_path

KINDS = (
    "qps-recall",
    "build-time-recall",
    "index-size-recall",
    "qps-clients",
    "relative-qps",
    "selectivity",
)

EXAMPLES = """\
examples:
  annbench plot qps-recall --dataset sift-5k-128-euclidean --output qps.svg --raw
  annbench plot qps-clients --dataset NAME --output clients.png --recall 0.95
  annbench plot relative-qps --dataset NAME --base mariadb-11.4 --me mariadb-11.8 -o rel.png
From Python, annbench.plot.metric() draws any metric against any other (p99 latency,
epsilon recall, a logit recall axis)."""


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``annbench plot``."""
    p = argparse.ArgumentParser(
        prog="annbench plot",
        description="Plot stored results as PNG or SVG (by the --output extension).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("kind", choices=KINDS, help="which plot")
    p.add_argument("--dataset", required=True, help="dataset name or HDF5 file")
    p.add_argument("--output", "-o", required=True, help="image file, .png or .svg")
    p.add_argument("--count", type=int, default=10, help="k of the runs to plot (default 10)")
    p.add_argument(
        "--results",
        default=os.environ.get("ANNBENCH_RESULTS") or "results",
        metavar="DIR",
        help="results directory (default $ANNBENCH_RESULTS, else results)",
    )
    p.add_argument(
        "--data-dir",
        default=os.environ.get("ANNBENCH_DATA_DIR"),
        metavar="DIR",
        help="dataset directory (default $ANNBENCH_DATA_DIR, else data)",
    )
    p.add_argument("--label", default=None, help="only points of this run label")
    p.add_argument(
        "--clients", type=int, default=None, help="only points measured with this many clients"
    )
    p.add_argument("--raw", action="store_true", help="qps-recall: also draw every point")
    p.add_argument(
        "--recall", type=float, default=None, help="qps-clients: best QPS at recall >= this"
    )
    p.add_argument("--base", help="relative-qps: label of the base run")
    p.add_argument("--me", help="relative-qps: label of the run compared with the base")
    p.add_argument("--title", default=None, help="plot title")
    p.add_argument("--width", type=float, default=plot.FIGSIZE[0], help="inches (default 8)")
    p.add_argument(
        "--height",
        type=float,
        default=None,
        help="inches (default 5.5; relative-qps: taller with many bars)",
    )
    p.add_argument("--dpi", type=int, default=plot.DPI, help="pixels per inch (default 100)")
    # The global flags of every annbench command, accepted here too (plots print one line).
    p.add_argument("-q", "--quiet", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-v", "--verbose", action="store_true", help=argparse.SUPPRESS)
    return p


def plot_main(argv: Sequence[str]) -> int:
    """Parses ``argv``, draws and saves the plot; errors print like the Rust CLI's."""
    args = parser().parse_args(list(argv))
    try:
        draw(args)
    except AnnbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


def draw(args: argparse.Namespace) -> None:
    """Loads the rows the plot kind needs and saves the figure to ``args.output``."""
    from . import compare, results

    check_path(args.output)  # a wrong extension fails before any loading
    for name, inches in (("width", args.width), ("height", args.height)):
        pixels = None if inches is None else inches * args.dpi
        if pixels is not None and not 50 <= pixels <= 20_000:
            raise ConfigError(
                f"--{name} {inches:g} at --dpi {args.dpi}: the image would be {pixels:.0f} "
                "pixels; give a size between 50 and 20000 pixels"
            )
    height = args.height if args.height is not None else plot.FIGSIZE[1]
    size: dict[str, Any] = {"title": args.title, "figsize": (args.width, height)}
    size["dpi"] = args.dpi
    source: dict[str, Any] = {"dataset": args.dataset, "count": args.count}
    source["results"] = args.results
    if args.kind == "relative-qps":
        if not args.base or not args.me:
            raise ConfigError("relative-qps needs --base LABEL and --me LABEL")
        rows = compare(args.base, args.me, data_dir=args.data_dir, **source)
        rows = _select(rows, None, args.clients)
        if args.height is None:  # taller with more bars
            size["figsize"] = (args.width, plot.relative_qps_height(rows))
        plot.relative_qps(rows, args.output, **size)
        return
    df: pd.DataFrame = _select(
        results(data_dir=args.data_dir, **source), args.label, args.clients
    )
    if args.kind == "qps-recall":
        plot.qps_recall(df, args.output, raw=args.raw, **size)
    elif args.kind == "build-time-recall":
        plot.build_time_recall(df, args.output, **size)
    elif args.kind == "index-size-recall":
        plot.index_size_recall(df, args.output, **size)
    elif args.kind == "selectivity":
        plot.selectivity(df, args.output, **size)
    else:
        plot.qps_clients(df, args.output, recall=args.recall, **size)


def _select(df: pd.DataFrame, label: str | None, clients: int | None) -> pd.DataFrame:
    """The rows of ``label`` and ``clients`` (as the Rust CLI's --label and --clients)."""
    keep = pd.Series(True, index=df.index)
    if label is not None and "label" in df.columns:
        keep &= df["label"] == label
    if clients is not None and "clients" in df.columns:
        keep &= df["clients"] == clients
    if not df.empty and not keep.any():
        wanted: list[str] = []
        if label is not None:
            wanted.append(f"--label {label}")
        if clients is not None:
            wanted.append(f"--clients {clients}")
        raise ResultsError(f"no stored point matches {' and '.join(wanted)}")
    selected: pd.DataFrame = df[keep]
    return selected
