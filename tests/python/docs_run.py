"""How the documentation walk (test_docs_walk.py) runs what it reads: commands in a scratch
working directory against the real servers, `annbench` lines parse-only in-process, Python
snippets resolved against the package, printed output compared by shape."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import annbench
from annbench.cli import main as cli_main
from docs_extract import REPO


def walk_env(servers: dict[str, str]) -> dict[str, str]:
    """The environment of a documented command: the servers' URLs, the package's `annbench`
    and `python` first on PATH, and no data or results directory set (the docs use the
    defaults `data` and `results`, which land in the scratch directory)."""
    keep = ("ANNBENCH_CACHE_DIR",)  # scripts/databases.sh status: the servers of this run
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNBENCH_") or k in keep}
    env.update(servers)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_shell(text: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -eo pipefail\n{text}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@contextlib.contextmanager
def captured() -> Iterator[dict[str, str]]:
    """Everything written to file descriptors 1 and 2 and to sys.stdout/stderr (the Rust
    CLI writes to the descriptors, argparse to the Python streams)."""
    result: dict[str, str] = {}
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(1), os.dup(2)
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        text = io.StringIO()
        try:
            with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                yield result
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            result["output"] = sink.read().decode(errors="replace") + text.getvalue()


def cli(args: list[str], *, parse_only: bool) -> tuple[int, str]:
    """`annbench ARGS` in-process (the console script's main), with ANNBENCH_PARSE_ONLY=1
    when `parse_only`; the exit status and everything printed. Signal handlers that main()
    resets for a sweep are put back."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGPIPE)}
    old = os.environ.get("ANNBENCH_PARSE_ONLY")
    os.environ["ANNBENCH_PARSE_ONLY"] = "1" if parse_only else "0"
    try:
        with captured() as out:
            try:
                status = cli_main(args)
            except SystemExit as stop:  # argparse (`annbench plot`)
                status = stop.code if isinstance(stop.code, int) else 1
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        if old is None:
            del os.environ["ANNBENCH_PARSE_ONLY"]
        else:
            os.environ["ANNBENCH_PARSE_ONLY"] = old
    return status, out["output"]


_HELP: dict[tuple[str, ...], str | None] = {}


def help_text(path: tuple[str, ...]) -> str | None:
    if path not in _HELP:
        status, text = cli([*path, "--help"], parse_only=False)
        _HELP[path] = text if status == 0 else None
    return _HELP[path]


def subcommands(help: str) -> set[str]:
    """The names under `Commands:` (clap) or the choices of `{a,b}` (argparse)."""
    names: set[str] = set()
    section = re.search(r"^Commands:\n((?:  .*\n)+)", help, re.M)
    if section:
        names |= {line.split()[0] for line in section.group(1).splitlines() if line.split()}
    return names


def check_inline(span: str) -> list[str]:
    """An inline `annbench ...` span: its subcommands exist and each `--flag` it names is one
    of the last subcommand's (from --help). Spans elide values (`...`, NAME), so they are not
    parsed whole."""
    words = span.split()[1:]
    path: tuple[str, ...] = ()
    while words and (help := help_text(path)) is not None and words[0] in subcommands(help):
        path = (*path, words.pop(0))
    help = help_text(path)
    if help is None:
        return [f"`{span}`: `annbench {' '.join(path)} --help` fails"]
    return [
        f"`{span}`: `annbench {' '.join(path)}` has no {flag}"
        for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", span)
        if not re.search(rf"{re.escape(flag)}(?![\w-])", help)
    ]


def resolve_python(code: str) -> list[str]:
    """A snippet too long to run: it compiles, every `annbench.x.y` it names exists, and
    each call's arguments bind to the function's signature."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        return [f"does not compile: {err}"]
    problems: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Attribute, ast.Call)):
            continue
        dotted = _dotted(node.func if isinstance(node, ast.Call) else node)
        if not dotted or dotted[0] != "annbench":
            continue
        obj: object = annbench
        for i, part in enumerate(dotted[1:], 1):
            if not hasattr(obj, part):
                problems.append(f"{'.'.join(dotted[: i + 1])} does not exist")
                break
            obj = getattr(obj, part)
        else:
            if isinstance(node, ast.Call):
                problems += _bind(".".join(dotted), obj, node)
    return sorted(set(problems))


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


def _bind(name: str, obj: object, call: ast.Call) -> list[str]:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return []
    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
    try:
        signature.bind(*[None] * len(call.args), **{k.arg: None for k in call.keywords if k.arg})
    except TypeError as err:
        return [f"{name}(...): {err}"]
    return []


def python_in_shell(text: str) -> str | None:
    """The code of a `python -c '...'` command."""
    words = shlex.split(text)
    return words[words.index("-c") + 1] if "-c" in words else None


# A figure: a number standing alone (`0.99`, `~2288`, `33.4%`, the 2 of `2/3`), not the
# digits inside a word (`rel2ma`, `sift-5k`).
FIGURE = r"(?<![\w.])~?\d+(?:\.\d+)?%?(?![\w.])"


def mask(line: str) -> str:
    """A printed line without its figures: digests and numbers become placeholders."""
    line = re.sub(r"\b[0-9a-f]{12}\b", "H", line)
    return " ".join(re.sub(FIGURE, "N", line).split())


def compare_shape(expected: list[str], stdout: str, stderr: str) -> list[str]:
    """The first line on standard output matches the documented one up to its figures, and
    every documented line without figures or `...` (headers, notes) is printed."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    problems = []
    first = next((line for line in expected if line.strip()), "")
    if not lines or mask(lines[0]) != mask(first):
        problems.append(f"first line {lines[0] if lines else '(none)'!r}, documented {first!r}")
    printed = {" ".join(line.split()) for line in (stdout + "\n" + stderr).splitlines()}
    for line in expected:
        if line.strip() and "..." not in line and not re.search(FIGURE, line):
            if " ".join(line.split()) not in printed:
                problems.append(f"documented line not printed: {line.strip()!r}")
    return problems


def existing_paths(text: str) -> list[str]:
    """Repository paths named in `text` that are missing or broken: scripts (bash -n),
    Python files (compile), `--example X` and `target/release/examples/X` (examples/X.rs)."""
    problems = []
    top = "scripts|deploy|examples|algorithms|datasets|src|tests|docs|python"
    found = re.findall(rf"(?<![\w/.~$-])((?:{top})/[\w./*<>{{}}-]*)", text)
    for path in sorted({p.rstrip(".,:") for p in found if not re.search(r"[*<>{}]", p)}):
        target = REPO / path
        if not target.exists():
            problems.append(f"{path} does not exist")
        elif target.suffix in (".sh", ".sbatch"):
            done = subprocess.run(["bash", "-n", str(target)], capture_output=True, text=True)
            if done.returncode:
                problems.append(f"{path}: bash -n: {done.stderr.strip()}")
        elif target.suffix == ".py":
            try:
                compile(target.read_text(), path, "exec")
            except SyntaxError as err:
                problems.append(f"{path}: {err}")
    for name in re.findall(r"(?:--example |target/release/examples/)(\w+)", text):
        if not (REPO / "examples" / f"{name}.rs").is_file():
            problems.append(f"example {name}: no examples/{name}.rs")
    return problems
