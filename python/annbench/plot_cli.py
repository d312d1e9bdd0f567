"""``annbench plot KIND ...``: the command-line face of :mod:`annbench.plot`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import pandas as pd

from . import plot
from ._annbench import AnnbenchError, ConfigError

KINDS = (
    "qps-recall",
    "build-time-recall",
    "index-size-recall",
    "qps-clients",
    "relative-qps",
    "selectivity",
)


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``annbench plot``."""
    p = argparse.ArgumentParser(
        prog="annbench plot",
        description="Plot stored results as PNG or SVG (by the --output extension).",
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
    p.add_argument("--data-dir", default=None, help="dataset directory (default data/)")
    p.add_argument("--raw", action="store_true", help="qps-recall: also draw every point")
    p.add_argument(
        "--recall", type=float, default=None, help="qps-clients: best QPS at recall >= this"
    )
    p.add_argument("--base", help="relative-qps: label of the base run")
    p.add_argument("--me", help="relative-qps: label of the run compared with the base")
    p.add_argument("--title", default=None, help="plot title")
    p.add_argument("--width", type=float, default=plot.FIGSIZE[0], help="inches (default 8)")
    p.add_argument("--height", type=float, default=plot.FIGSIZE[1], help="inches (default 5.5)")
    p.add_argument("--dpi", type=int, default=plot.DPI, help="pixels per inch (default 100)")
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

    size = {"title": args.title, "figsize": (args.width, args.height), "dpi": args.dpi}
    if args.kind == "relative-qps":
        if not args.base or not args.me:
            raise ConfigError("relative-qps needs --base LABEL and --me LABEL")
        rows = compare(
            args.base,
            args.me,
            dataset=args.dataset,
            count=args.count,
            results=args.results,
            data_dir=args.data_dir,
        )
        plot.relative_qps(rows, args.output, **size)
        return
    df: pd.DataFrame = results(
        args.dataset, count=args.count, results=args.results, data_dir=args.data_dir
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
