"""The ``annbench`` console command: Rust subcommands in-process, ``plot`` in Python."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

import annbench
from annbench.cli import main


def console_script() -> str:
    """The ``annbench`` script pip installed next to this interpreter (not a cargo binary)."""
    script = Path(sys.executable).parent / "annbench"
    if not script.exists():
        pytest.fail(
            f"no annbench console script at {script}: install the package with "
            "'pip install .' (or 'pip install -e .') into this interpreter"
        )
    return str(script)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_version_matches_package():
    done = run("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"annbench {annbench.__version__}"


def test_help_lists_rust_subcommands_and_python_plot():
    done = run("--help")
    assert done.returncode == 0, done.stderr
    for command in ("datasets", "run", "table", "plot"):
        assert command in done.stdout


def test_usage_error_exits_2_with_message_on_stderr():
    done = run("no-such-command")
    assert done.returncode == 2
    assert "no-such-command" in done.stderr


def test_in_process_main_returns_status(capfd):
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert main(["--version"]) == 0
    finally:
        signal.signal(signal.SIGINT, handler)  # main() restores SIG_DFL for the Rust CLI
    assert annbench.__version__ in capfd.readouterr().out


def test_plot_usage_errors_are_argparse_errors():
    done = run("plot", "qps-recall")
    assert done.returncode == 2
    assert "--dataset" in done.stderr and "--output" in done.stderr
    done = run("plot", "no-such-kind", "--dataset", "x", "--output", "x.png")
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_global_flags_before_plot_reach_the_python_plot():
    # argparse's usage (lower-case "usage:", the Python-only selectivity kind), not clap's.
    for flags in (["-q"], ["--quiet"], ["-v"], []):
        done = run(*flags, "plot", "--help")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("usage: annbench plot"), done.stdout[:200]
        assert "selectivity" in done.stdout
    done = run("-q", "plot", "qps-recall", "--dataset", "x", "--output", "x.gif")
    assert done.returncode == 1 and "use a .png or .svg" in done.stderr
    done = run("plot", "-q", "qps-recall", "--dataset", "x", "--output", "x.gif")
    assert done.returncode == 1 and "use a .png or .svg" in done.stderr
