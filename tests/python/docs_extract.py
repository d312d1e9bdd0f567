"""What the documentation walk (test_docs_walk.py) reads out of Markdown: fenced code blocks,
the commands of a shell block, `annbench ...` inline spans, and the documented placeholders
turned into arguments. No annbench calls here: text in, text out."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)")


@dataclass
class Block:
    """A fenced code block: its file (relative to the repository), first line, language."""

    file: str
    line: int
    lang: str
    text: str


@dataclass
class Unit:
    """One thing the walk checks: a shell command, a Python snippet or an output block."""

    file: str
    line: int
    kind: str  # "shell", "python", "output" (a command with its printed output), "other"
    text: str  # the command as written (continuations joined), the snippet, or the block
    loop_vars: dict[str, str] = field(default_factory=dict)
    expected: list[str] = field(default_factory=list)  # "output": the printed lines


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def blocks(path: Path) -> list[Block]:
    """Every fenced block, dedented by its fence's indentation (blocks inside list items)."""
    out: list[Block] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            line = lines[j]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            j += 1
        out.append(Block(rel(path), i + 1, lang, "\n".join(body)))
        i = j + 1
    return out


def prose(path: Path) -> str:
    """The file without its fenced blocks (for inline spans and links)."""
    keep, inside = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            keep.append(line)
    return "\n".join(keep)


def inline_commands(path: Path) -> list[str]:
    """Inline code spans that are `annbench` commands (not Python's `annbench.x`)."""
    return re.findall(r"`(annbench [^`]+)`", prose(path))


def units(block: Block) -> list[Unit]:
    """The units of one block, by its language."""
    lang, text = block.lang, block.text
    if lang in ("sh", "bash", "shell"):
        return shell_units(block)
    if lang == "python":
        return [Unit(block.file, block.line, "python", text)]
    if lang in ("text", "console") and text.lstrip().startswith("$ "):
        first, *rest = text.strip("\n").splitlines()
        return [Unit(block.file, block.line, "output", first[2:].strip(), expected=rest)]
    return [Unit(block.file, block.line, "other", text)]


def shell_units(block: Block) -> list[Unit]:
    """One unit per command: continuations joined, comments dropped, `a && b` and `a; b`
    split, a here-document kept with its command, `for V in A B; do ... done` unrolled to
    its first value (kept in `loop_vars`)."""
    lines = block.text.splitlines()
    out: list[Unit] = []
    loop: dict[str, str] = {}
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", line)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            i += 1
            line = "\n".join([line, *body, heredoc.group(1)])
        stripped = line.strip()
        loop_start = re.fullmatch(r"for (\w+) in (\S+)[^;]*; do", stripped)
        if loop_start:
            loop[loop_start.group(1)] = loop_start.group(2)
            continue
        if stripped == "done":
            loop.clear()
            continue
        for command in split_commands(stripped):
            out.append(Unit(block.file, block.line + 1 + start, "shell", command, dict(loop)))
    return out


def split_commands(line: str) -> list[str]:
    """`a && b; c  # note` -> [a, b, c], outside quotes and `$(...)`."""
    parts, current, quote, depth, i = [], "", "", 0, 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif line.startswith("$(", i):
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif not depth and c == "#" and (i == 0 or line[i - 1].isspace()) and "\n" not in line:
            break
        elif not depth and (line.startswith("&&", i) or c == ";"):
            parts.append(current)
            current = ""
            i += 2 if c == "&" else 1
            continue
        current += c
        i += 1
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


# The documented placeholders and what the walk puts in their place (see the README of the
# walk in test_docs_walk.py): a bundled set with results in the walk's store, files it made.
PLACEHOLDERS: list[tuple[str, str]] = [
    (r"--config FILE\b", "--config scripts/demo-grids/mariadb.yml"),
    (r"\bFILE\b", "data/my-384-angular.hdf5"),
    (r"\bNAME\b", "glove-twitter-25-angular"),
    (r"\bARGS\b|(?<=\brun) \.\.\.(?= )", " --dataset glove-twitter-25-angular --algorithm mariadb"),
    (r"\bDIR\.\.\.", "results-1 results-2"),
    (r"\bDIR\b", "results-1"),
    (r",\.\.\.", ""),
    (r"(?<=--clients )N\b", "1"),
]


def substitute(text: str) -> str:
    for pattern, value in PLACEHOLDERS:
        text = re.sub(pattern, value, text)
    return text


def invocations(unit: Unit) -> list[list[str]]:
    """The `annbench` argument lists in a command, each with its `a|b` alternatives expanded
    and `[optional]` brackets dropped: `annbench`, `target/release/annbench`, after
    `/usr/bin/time -v` or `... --` of a wrapper, inside `--wrap "..."` and `$(...)`, and the
    Slurm recipe's script (its arguments are `annbench run`'s)."""
    text = substitute(unit.text)
    text = re.sub(r"^\w+=\$\((.*)\)$", r"\1", text)  # jobid=$(sbatch ...)
    for var, value in unit.loop_vars.items():
        text = re.sub(rf"\${{?{var}\b}}?", value, text)
    text = re.sub(r"\$\(\([^)]*\)\)|\$\([^)]*\)|\$\{?\w+\}?", _placeholder, text)
    found: list[list[str]] = []
    for args in _scan(shlex.split(text, comments=True)):
        args = [a.strip("[]") for a in args if a.strip("[]")]
        width = max((len(a.split("|")) for a in args), default=1)
        for k in range(width):
            found.append([a.split("|")[k % len(a.split("|"))] for a in args])
    return found


def _placeholder(match: "re.Match[str]") -> str:
    """A stand-in for a variable or `$(...)`: a URL of the right scheme for a server URL
    variable (`--postgres NAME=URL` tells a named server by the `scheme://` after `=`), else 1."""
    name = match.group(0).strip("${}")
    if name.endswith("_URL"):
        for key, url in (("POSTGRES", "postgres://u@h/db"), ("MARIADB", "mysql://u@h/db"),
                         ("REDIS", "redis://h")):
            if key in name:
                return url
    return "1"


SHELL_OPERATORS = {">", ">>", "<", "|", "2>", "2>&1", "&"}


def _command_position(tokens: list[str], i: int) -> bool:
    """`tokens[i]` is where a command starts: first, after `VAR=value` assignments, after a
    wrapper's `--` or `/usr/bin/time -v` (not a flag's value such as `--annbench PATH`)."""
    before = tokens[:i]
    while before and re.match(r"^\w+=", before[0]):
        before = before[1:]
    return not before or before[-1] == "--" or before in (["/usr/bin/time", "-v"], ["time"])


def _scan(tokens: list[str]) -> list[list[str]]:
    found: list[list[str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        prefix = ["run"] if token.endswith("annbench-array.sbatch") else None
        if prefix or (Path(token).name == "annbench" and _command_position(tokens, i)):
            end = i + 1
            while end < len(tokens) and tokens[end] not in SHELL_OPERATORS:
                end += 1
            found.append([*(prefix or []), *tokens[i + 1 : end]])
            i = end + 2  # past the operator and its target
            continue
        if " " in token:
            try:
                found += _scan(shlex.split(token))
            except ValueError:
                pass
        i += 1
    return found
