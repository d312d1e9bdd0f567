#!/usr/bin/env python3
"""Client CPU per query of the servers' own C benchmark clients, for comparison with annbench.

pgbench (libpq) and mariadb-slap (libmariadb) run one fixed k=10 search at ef_search=10,
on one connection, against the tables that `examples/bench_backends.rs` leaves behind
(annbench.vec_bench_query, pgvector m=8 ef_construction=32; innodb_bench_query, MHNSW M=4).
The fixed query is train row 0, read back from the pgvector table, as bench_backends uses it.
Their CPU is the child process's user+system time (getrusage), so it includes their start-up
and connection: a slight overestimate, never an underestimate. Compare with the
"one fixed query" rows of bench_backends (docs/bench-backends.md).

    cargo run --release --example bench_backends -- 10000 3000
    python3 scripts/bench_reference_clients.py [queries] [--socket]

Servers and clients: the URLs of scripts/databases.sh (or ANNBENCH_*_URL); pgbench and
mariadb-slap from PATH, else from the Debian root that scripts/databases.sh built (via chroot).
"""

from __future__ import annotations

import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass

CACHE = os.environ.get("ANNBENCH_CACHE_DIR", os.path.expanduser("~/.cache/annbench"))
ROOT = os.path.join(CACHE, "debian-trixie")


@dataclass
class Run:
    name: str
    queries: int
    latency_ms: float
    user_s: float
    sys_s: float

    def row(self) -> str:
        cpu = (self.user_s + self.sys_s) / self.queries
        share = 100 * cpu / (self.latency_ms / 1e3)
        return (
            f"| {self.name} | {self.latency_ms:.3f} | {cpu * 1e6:.1f} | {share:.1f}% "
            f"| {self.user_s / self.queries * 1e6:.1f} / {self.sys_s / self.queries * 1e6:.1f} |"
        )


def url(name: str) -> urllib.parse.ParseResult:
    text = os.environ.get(name)
    if not text:
        path = os.path.join(CACHE, "servers.env")
        try:
            with open(path) as f:
                pairs = dict(l.strip().split("=", 1) for l in f if "=" in l and not l.startswith("#"))
        except OSError as e:
            sys.exit(f"no {name} and cannot read {path} ({e}): run scripts/databases.sh up")
        text = pairs.get(name, "")
    if not text:
        sys.exit(f"{name} is not set: run scripts/databases.sh up")
    return urllib.parse.urlparse(text)


def client(binary: str, pattern: str) -> list[str]:
    """The command prefix that runs `binary`: from PATH, else inside the Debian root."""
    if shutil.which(binary):
        return [binary]
    found = sorted(glob.glob(os.path.join(ROOT, pattern.lstrip("/"))))
    if not found:
        sys.exit(f"{binary} not found on PATH or in {ROOT}: run scripts/databases.sh up")
    return ["chroot", ROOT, found[-1][len(ROOT):]]


def inside(cmd: list[str], path: str) -> str:
    """A host path as the client sees it (inside the root when run with chroot)."""
    return path[len(ROOT):] if cmd[0] == "chroot" and path.startswith(ROOT) else path


def timed(cmd: list[str], env: dict[str, str]) -> tuple[str, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = out.stdout + out.stderr
    if out.returncode != 0 or "Error" in text or "error:" in text:
        sys.exit(f"{cmd[0 if cmd[0] != 'chroot' else 2]} failed:\n{text}")
    return text, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def pg_env(u: urllib.parse.ParseResult) -> tuple[str, dict[str, str]]:
    """The host (or socket directory) and the environment with the password, for libpq tools."""
    # From the netloc: `hostname` would lower-case a percent-encoded socket directory.
    host = urllib.parse.unquote(u.netloc.rsplit("@", 1)[-1].rsplit(":", 1)[0])
    return host, dict(os.environ, PGPASSWORD=urllib.parse.unquote(u.password or ""))


def fixed_query() -> str:
    """Train row 0 as vector text, read from the table bench_backends left behind."""
    u = url("ANNBENCH_POSTGRES_URL")
    cmd = client("psql", "/usr/lib/postgresql/*/bin/psql")
    host, env = pg_env(u)
    out, _, _ = timed(
        cmd + ["-X", "-At", "-h", host, "-p", str(u.port), "-U", u.username or "", "-d",
               u.path.lstrip("/"), "-c", "SELECT v::text FROM annbench.vec_bench_query WHERE id = 0"],
        env,
    )
    vec = out.strip()
    if not vec.startswith("["):
        sys.exit(f"no row 0 in annbench.vec_bench_query (run examples/bench_backends first): {out}")
    return vec


def pgbench(vec: str, n: int, socket: bool) -> Run:
    u = url("ANNBENCH_POSTGRES_SOCKET_URL" if socket else "ANNBENCH_POSTGRES_URL")
    cmd = client("pgbench", "/usr/lib/postgresql/*/bin/pgbench")
    script_dir = ROOT + "/tmp" if cmd[0] == "chroot" else "/tmp"
    script = os.path.join(script_dir, "annbench-pgbench.sql")
    with open(script, "w") as f:
        f.write("SELECT id FROM annbench.vec_bench_query ORDER BY v <-> :q::vector LIMIT 10;\n")
    host, env = pg_env(u)
    env["PGOPTIONS"] = "-c hnsw.ef_search=10 -c enable_seqscan=off"
    out, user, sys_ = timed(
        cmd + ["-n", "-c1", "-j1", "-t", str(n), "-M", "prepared", "-h", inside(cmd, host),
               "-p", str(u.port), "-U", u.username or "", "-f", inside(cmd, script),
               "-D", "q=" + vec, u.path.lstrip("/")],
        env,
    )
    m = re.search(r"latency average = ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"unexpected pgbench output:\n{out}")
    return Run(f"pgbench -M prepared ({'unix socket' if socket else 'tcp'})", n, float(m.group(1)), user, sys_)


def mariadb_slap(vec: str, n: int, socket: bool) -> Run:
    u = url("ANNBENCH_MARIADB_SOCKET_URL" if socket else "ANNBENCH_MARIADB_URL")
    cmd = client("mariadb-slap", "/usr/bin/mariadb-slap")
    db = u.path.lstrip("/")
    if socket:
        path = urllib.parse.parse_qs(u.query)["socket"][0]
        conn = [f"--socket={inside(cmd, path)}"]
    else:
        conn = ["-h", u.hostname or "127.0.0.1", "-P", str(u.port or 3306), "--protocol=tcp"]
    sql = (
        f"SET STATEMENT mhnsw_ef_search=10 FOR SELECT id FROM `{db}`.innodb_bench_query "
        f"ORDER BY VEC_DISTANCE_EUCLIDEAN(v, VEC_FromText('{vec}')) LIMIT 10"
    )
    env = dict(os.environ, MYSQL_PWD=urllib.parse.unquote(u.password or ""))
    out, user, sys_ = timed(
        cmd + conn + ["-u", u.username or "", f"--create-schema={db}", "--no-drop", "--skip-ssl",
                      "--concurrency=1", "--iterations=1", f"--number-of-queries={n}", f"--query={sql}"],
        env,
    )
    m = re.search(r"Average number of seconds to run all queries: ([0-9.]+)", out)
    if not m:
        sys.exit(f"unexpected mariadb-slap output:\n{out}")
    return Run(f"mariadb-slap, mean latency ({'unix socket' if socket else 'tcp'})", n, float(m.group(1)) / n * 1e3, user, sys_)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    socket = "--socket" in sys.argv
    n = int(args[0]) if args else 3000
    vec = fixed_query()
    print(f"| client, {n} queries, k=10, ef_search=10 | latency ms | client CPU per query us "
          "| share of latency | user / kernel us |")
    print("|---|---|---|---|---|")
    print(mariadb_slap(vec, n, socket).row())
    print(pgbench(vec, n, socket).row())


if __name__ == "__main__":
    main()
