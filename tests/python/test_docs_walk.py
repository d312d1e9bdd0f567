"""Every documented command and Python snippet in README.md and docs/*.md, checked as written.

The walk reads each file's fenced blocks in order (docs_extract.py) and checks each unit:

- **run** (the default): the command runs with bash in a scratch directory (with `scripts/`
  and `deploy/` linked in, so documented relative paths work) against the real servers, with
  the defaults the docs use (`data/`, `results/` in that directory), and must exit 0. A block
  whose first line is `$ command` (```text) runs the command and compares the output's shape
  with the documented lines (first line up to its figures, lines without figures verbatim).
  Python blocks run with the package's interpreter.
- **parse**: too long, or needing a download, a cluster or root; every `annbench` command in
  it is parsed and validated by the real CLI (ANNBENCH_PARSE_ONLY=1), each `a|b` alternative
  and `[--optional]` flag included.
- **resolve**: Python too long to run: it compiles, every `annbench.*` name exists and each
  call's arguments bind to the signature.
- **skip**: not annbench's to run (package installs, cluster set-up, SQL for the server's
  administrator, the suites and benchmarks themselves).

Whatever the mode, every repository path a doc names must exist (scripts pass `bash -n`,
Python files compile, `--example X` has examples/X.rs), relative links resolve, and each
inline `annbench ...` span names existing subcommands and flags. Every fenced block needs a
language (sh, text, python, sql); a block the walk cannot classify, and a rule that no longer
matches anything, fail the test, so the walk stays complete.

Placeholders (docs_extract.PLACEHOLDERS): NAME is glove-twitter-25-angular, which the walk's
store holds results of (FIXTURE below: MariaDB, labels mariadb-11.4 and mariadb-11.8, 1 and 2
clients); FILE is the dataset `datasets create my.npy` made (my.npy: generated 384-d vectors)
or, after --config, a demo grid; ARGS and `run ...` a dataset and algorithm; DIR results-1.
"""

from __future__ import annotations

import fnmatch
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from docs_extract import (
    REPO,
    Unit,
    blocks,
    doc_files,
    inline_commands,
    invocations,
    prose,
    rel,
    substitute,
)
from docs_extract import units as block_units
from docs_run import (
    check_inline,
    cli,
    compare_shape,
    existing_paths,
    python_in_shell,
    resolve_python,
    run_shell,
    walk_env,
)
from test_end_to_end import server_urls

RUN, PARSE, RESOLVE, SKIP = "run", "parse", "resolve", "skip"


@dataclass
class Rule:
    files: str  # glob over the file's path relative to the repository
    pattern: str  # searched in the unit's text (a command, a snippet or a block)
    mode: str
    reason: str
    hits: int = 0


# The one table of everything not run as written; first match wins, the default is RUN.
RULES = [
    # Not annbench's to run.
    Rule("*", r"^scripts/test\.sh$|python -m (mypy|pytest)", SKIP,
         "the suite this test is part of"),
    Rule("*", r"^scripts/demo\.sh$", SKIP,
         "a demo sweep of 35 points at 6 passes of 1 s: minutes"),
    Rule("*", r"^scripts/repeatability\.sh$", SKIP, "A/A and A/B sweeps: 30-40 minutes"),
    Rule("*", r"^scripts/bench-databases\.sh\b", SKIP, "four databases on two sets: 21 minutes"),
    Rule("*", r"scripts/databases\.sh (up|down|restart|up-legacy)\b|^eval ", SKIP,
         "starts or stops the servers this test runs against (scripts/test.sh started them)"),
    Rule("*", r"^export \w+=", SKIP, "sets a variable of the walk-through, here the defaults"),
    Rule("*", r"(^|\s|/)pip install|^apt-get |^python3 -m venv |^\. \S+/bin/activate$", SKIP,
         "installs packages (scripts/test.sh installs what the tests need)"),
    Rule("*", r"^scripts/wheel(-check)?\.sh\b", SKIP,
         "the release wheel (a full compile: minutes) and its check; scripts/test.sh runs both"),
    Rule("docs/python.md", r"^git (tag|push) ", SKIP, "publishes a release"),
    Rule("*", r"^cargo (build|run|test)\b", SKIP,
         "compiles the project (scripts/test.sh does); the examples named must exist"),
    Rule("*", r"target/release/examples/|python3 scripts/bench_", SKIP,
         "a benchmark program: minutes of measurement; it must exist"),
    Rule("docs/servers.md", r"^GRANT ", SKIP, "SQL for the server's administrator"),
    Rule("docs/servers.md", r"^ANNBENCH_POSTGRES_PG18_URL=", SKIP,
         "lines of servers.env with an instance the walk does not start"),
    Rule("docs/distributed.md",
         r"^(su -s|slurmctld|slurmd|sinfo|mkdir -p /var/spool/slurm|node=|mem=|cat > /etc/slurm/)",
         SKIP, "sets up a one-node Slurm cluster as root"),
    Rule("docs/distributed.md", r"^kubectl ", SKIP, "needs a Kubernetes cluster"),
    Rule("docs/distributed.md", r"^plan 1a5c2117f8fb", SKIP,
         "a Slurm task's log; the same split is checked by tests/shards_sweep.rs"),
    Rule("docs/memory.md", r"clustered-1536-100k|\$C\b", SKIP,
         "the curve: a 100k x 1536 set, builds of minutes and an hour of passes "
         "(tests/runner_memory.rs runs the sweep small)"),
    Rule("docs/scaling.md", r"^dry run: clustered-1536-1000k-angular", SKIP,
         "output of the dry run below with the 250k results stored"),
    Rule("docs/methodology.md", r"^Best-QPS table of aa-1", SKIP,
         "output of scripts/repeatability.sh, a 34-minute run"),
    Rule("docs/history.md", r"^MariaDB\(m=16|^15 2 \* \* \*|^- run: annbench", SKIP,
         "history's output on a series of docs/methodology.md, a crontab line, CI steps"),
    # Parsed, not run.
    Rule("*", r"sbatch ", PARSE, "needs a Slurm cluster"),
    Rule("*", r"nightly|--series v11\.4|--order version", PARSE,
         "a series of nightly runs: one run a night (tests/report_history.rs and "
         "test_history.py run series)"),
    Rule("docs/distributed.md", r"/results/", PARSE, "the Kubernetes Job's shared volume"),
    Rule("*", r"datasets get fashion-mnist|dbpedia-openai-1000k", PARSE,
         "downloads from ann-benchmarks.com (no network in CI)"),
    Rule("*", r"merge results-1 results-2 results-3", PARSE, "the stores of the shard lines"),
    Rule("*", r"completions bash > ~/", PARSE, "writes into the home directory"),
    Rule("*", r"clustered-1536", PARSE, "1536-d sets of 100k-1M rows: hours"),
    Rule("docs/server-cost.md", r"server-cost-check\.py", PARSE,
         "60,000 x 784 vectors and the server's pid: minutes"),
    Rule("docs/server-cost.md", r"TINY_URL|sift-5k-128-euclidean --server-cost", PARSE,
         "the recorded cached / IO-bound check: an instance with 1 MB of shared buffers"),
    Rule("docs/bench-algorithms.md", r"\$ds\b", PARSE,
         "4 grids on 2 sets, 5 passes of 1 s per point"),
    Rule("docs/distributed.md", r"--label cost\$rep|export --dataset sift-5k", PARSE,
         "20 index builds to check the cost model: minutes"),
    Rule("docs/filtered.md",
         r"--config scripts/filtered-grids/|export --dataset glove-twitter-25-q50", PARSE,
         "filtered grids: 60 points, the slowest at one query a second"),
    Rule("*", r"--dataset sift-5k-128-euclidean --output qps\.svg", PARSE,
         "the walk's store holds results of glove-twitter-25-angular only"),
    Rule("docs/report.md", r"--base v1 --me v2", PARSE, "v1 and v2 stand for two labels"),
    Rule("docs/versions.md", r"^python3 scripts/make-blobs-784\.py", SKIP,
         "writes the 60,000 x 784 set of the versions runs (188 MB)"),
    Rule("docs/versions.md", r"--postgres pg17=|blobs|--base pg17 --me pg18", PARSE,
         "two servers' interleaved runs and a generated 60,000 x 784 set: minutes"),
    Rule("docs/versions.md", r"--mariadb a=|--results aa\b", PARSE,
         "the A/A: two pairs of servers, 25 points at 40 rounds: 24 minutes"),
    Rule("docs/streaming.md", r"max_pts", SKIP, "a runbook's text, not a command"),
    Rule("docs/streaming.md", r"--runbook runbooks/|glove-simple\.yaml|--streams --format csv", PARSE,
         "the figures' streaming runs (the README's is run): a minute or more each"),
    Rule("README.md", r"--postgres base=|--base base --me twin", PARSE,
         "an interleaved run of the default grid on two servers: tens of minutes"),
    Rule("*", r"\[-", PARSE, "[--optional] flags: a template of many command lines"),
    Rule("*", r"\bARGS\b|(^|\s)\.\.\.(\s|$)", PARSE, "elided arguments"),
    # Run: a sweep small enough for the walk (the plot commands after it read its results).
    Rule("docs/python.md", r'label="plots"', RUN,
         "8 points of 2 passes of 0.1 s on sift-5k: seconds"),
    # Resolved, not run.
    Rule("*", r"annbench\.run\(", RESOLVE,
         "a sweep of the default 6 passes of 1 s per point: minutes"),
    Rule("docs/filtered.md", r"plot\.selectivity", RESOLVE, "needs the filtered sweep above"),
]  # fmt: skip

FIXTURE = [
    "annbench -q run --dataset glove-twitter-25-angular --algorithm mariadb --build m=16 "
    f"--query ef_search=10,40 --clients 1,2 --runs 2 --min-time 0.05 --label {label}"
    for label in ("mariadb-11.4", "mariadb-11.8")
]


def rule_for(unit: Unit) -> Rule | None:
    for rule in RULES:
        if fnmatch.fnmatch(unit.file, rule.files) and re.search(rule.pattern, unit.text, re.M):
            rule.hits += 1
            return rule
    return None


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    """A scratch directory like a checkout's root, its environment and the fixture store."""
    work = tmp_path_factory.mktemp("docswalk")
    for name in ("scripts", "deploy"):
        (work / name).symlink_to(REPO / name)
    rng = np.random.default_rng(1)
    np.save(work / "my.npy", rng.standard_normal((2000, 384)).astype(np.float32))
    env = walk_env(server_urls())
    for command in FIXTURE:
        done = run_shell(command, work, env)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return work, env


def check(unit: Unit, work: Path, env: dict[str, str]) -> list[str]:
    """The problems of one unit, each naming its file and line."""
    rule = rule_for(unit)
    mode = rule.mode if rule else RUN
    where = f"{unit.file}:{unit.line}: {unit.text.splitlines()[0] if unit.text else ''}"
    if unit.kind == "other" and mode != SKIP:
        return [f"{where}: a block the walk cannot run: tag it sh, text or python, or add a rule"]
    if mode == SKIP:
        return []
    if mode == PARSE:
        found = invocations(unit)
        if not found:
            return [f"{where}: parse rule '{rule.pattern}', but no annbench command in it"]
        problems = []
        for args in found:
            status, output = cli(args, parse_only=True)
            if status != 0:
                problems.append(f"{where}: `annbench {' '.join(args)}` does not parse:\n{output}")
        return problems
    if mode == RESOLVE:
        code = python_in_shell(unit.text) if unit.kind == "shell" else unit.text
        return [f"{where}: {p}" for p in resolve_python(code or "")]
    command = substitute(unit.text)
    if unit.kind == "python":
        command = f"python - <<'PYTHON'\n{unit.text}\nPYTHON"
    done = run_shell(command, work, env)
    if done.returncode != 0:
        return [f"{where}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"]
    if unit.kind == "output":
        return [f"{where}: {p}" for p in compare_shape(unit.expected, done.stdout, done.stderr)]
    return []


@pytest.mark.parametrize("doc", [rel(p) for p in doc_files()])
def test_every_documented_command_runs_as_written(walk, doc):
    work, env = walk
    started = time.monotonic()
    problems: list[str] = []
    for block in blocks(REPO / doc):
        for unit in block_units(block):
            problems += check(unit, work, env)
    print(f"{doc}: {time.monotonic() - started:.1f} s")
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("doc", [rel(p) for p in doc_files()])
def test_paths_links_and_inline_commands_exist(doc):
    path = REPO / doc
    problems = existing_paths(path.read_text())
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(path)):
        target = target.split("#")[0]
        if target and not re.match(r"\w+:", target) and not (path.parent / target).exists():
            problems.append(f"link to {target}: no such file")
    for span in inline_commands(path):
        problems += check_inline(span)
    assert not problems, "\n".join(f"{doc}: {p}" for p in problems)


def test_every_rule_matches_something():
    """A rule whose command left the docs must go, so the table says what is not run."""
    for rule in RULES:
        rule.hits = 0
    for path in doc_files():
        for block in blocks(path):
            for unit in block_units(block):
                rule_for(unit)
    stale = [f"{r.files}: {r.pattern}" for r in RULES if not r.hits]
    assert not stale, "rules that match no documented command:\n" + "\n".join(stale)


def test_parse_only_refuses_a_bad_line():
    """The check the parse mode relies on can fail: a misspelt flag or value exits 2."""
    assert cli(["run", "--dataset", "x", "--min-time", "1s"], parse_only=True)[0] == 0
    status, output = cli(["run", "--dataset", "x", "--min-tme", "1s"], parse_only=True)
    assert status == 2 and "--min-tme" in output
    assert cli(["table", "--dataset", "x", "--format", "yaml"], parse_only=True)[0] == 2
    assert cli(["run", "--dataset", "x", "--shard", "4/3"], parse_only=True)[0] == 2
    plot = ["--dataset", "x", "--output", "q.png"]
    assert cli(["plot", "qps-recall", *plot], parse_only=True)[0] == 0
    assert cli(["plot", "qps-recal", *plot], parse_only=True)[0] == 2
