"""The ``annbench`` console command.

``annbench plot ...`` is handled here in Python (matplotlib, :mod:`annbench.plot`; the
standalone binary draws the same kinds with its built-in renderer); every other subcommand
runs the Rust command line in-process, so output, errors and exit codes are the same as the
standalone binary's.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from ._annbench import cli_main

PLOT_HELP = (
    "  'annbench plot' here draws with matplotlib (annbench.plot); see 'annbench plot --help'"
)
#: The flags every subcommand takes (clap's global args in src/cli/mod.rs); none takes a value.
GLOBAL_FLAGS = ("-q", "--quiet", "-v", "--verbose")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``annbench`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Global flags (-q, -v) may stand before the subcommand: `annbench -q plot ...`.
    flags = 0
    while flags < len(args) and args[flags] in GLOBAL_FLAGS:
        flags += 1
    if flags < len(args) and args[flags] == "plot":
        from .plot_cli import parser, plot_main

        plot_args = args[:flags] + args[flags + 1 :]
        if os.environ.get("ANNBENCH_PARSE_ONLY", "") not in ("", "0"):
            # As the Rust CLI: parse (argparse exits 2 on a usage error), then stop.
            parser().parse_args(plot_args)
            return 0
        return plot_main(plot_args)
    _restore_default_signals()
    sys.stdout.flush()
    status = cli_main(["annbench", *args])
    if status == 0 and args in (["-h"], ["--help"], ["help"]):
        print(f"\nIn the Python package:\n{PLOT_HELP}")
    return status


def _restore_default_signals() -> None:
    """Python turns SIGINT into KeyboardInterrupt only when Python code runs, which it does
    not during a sweep: restore the default so Ctrl-C stops the process at once (every
    point measured so far is already on disk). Default SIGPIPE lets ``annbench export |
    head`` end quietly, as the binary does."""
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


if __name__ == "__main__":
    sys.exit(main())
