#!/usr/bin/env python3
"""Check annbench's server CPU per query against an independent /proc measurement.

Runs an `annbench run ...` command (one algorithm, one build point) and reads the CPU time
(user + system) of every process of the database server from /proc at two instants: when
annbench reports the index built, and when annbench exits. That window is the whole query
phase (plan check, the recall pass, every timed pass, dropping the index); its CPU divided by
the queries answered in it (the recall pass's plus every timed pass's, read from the result
file) is set against annbench's own figure (the median of its per-pass server CPU per query).
The load average at both ends is printed: on a shared machine both figures include the cost
of being preempted (cache misses), which CPU time cannot separate.

    scripts/server-cost-check.py --pid SERVER_PID --queries 1000 --results DIR -- \
        annbench run --results DIR ...

SERVER_PID is the server's top process (mariadbd, or PostgreSQL's postmaster:
`scripts/databases.sh status` prints both). Standard library only; Linux only.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2 :].split()
    # utime stime cutime cstime are fields 14-17 of stat(5): 11-14 after the command.
    return [int(x) for x in fields[11:15]]


def tree(root):
    out, i = [root], 0
    while i < len(out):
        try:
            with open(f"/proc/{out[i]}/task/{out[i]}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            pass
        i += 1
    return out


def server_ticks(root):
    """Every live process's own CPU, plus the root's exited children (reaped)."""
    own = {}
    for pid in tree(root):
        try:
            u, s, _, _ = stat(pid)
        except (OSError, ValueError):
            continue
        own[pid] = u + s
    _, _, cu, cs = stat(root)
    return own, cu + cs


def cpu_between(a, b):
    own_a, child_a = a
    own_b, child_b = b
    grown = sum(t - own_a.get(pid, 0) for pid, t in own_b.items())
    return (grown + child_b - child_a) / TICK


def extras(path):
    data = open(path, "rb").read()
    start = data.find(b'{"format":')
    obj, _ = json.JSONDecoder().raw_decode(data[start:].decode("utf-8", "replace"))
    return obj


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pid", type=int, required=True, help="the server's top process")
    ap.add_argument("--queries", type=int, required=True, help="test queries (recall pass)")
    ap.add_argument("--results", required=True, help="the run's --results directory")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    before = set(glob.glob(f"{a.results}/**/*.hdf5", recursive=True))
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, bufsize=1)
    start, load0 = None, None
    for line in p.stderr:
        sys.stderr.write(line)
        if start is None and "built in" in line:
            start, load0 = server_ticks(a.pid), loadavg()
    p.wait()
    end, load1 = server_ticks(a.pid), loadavg()
    if p.returncode != 0 or start is None:
        sys.exit(f"annbench failed (exit {p.returncode}) or built no index")
    files = sorted(set(glob.glob(f"{a.results}/**/*.hdf5", recursive=True)) - before)
    if len(files) != 1:
        sys.exit(f"expected one new point file under {a.results}, found {len(files)}")
    x = extras(files[0])
    passes = x["passes"]
    queries = a.queries + sum(p["queries"] for p in passes)
    independent = cpu_between(start, end) / queries
    server = x["metrics"]["server"]
    ours = server["cpu_per_query"]
    per_pass = [
        (p["server"]["cpu_user_seconds"] + p["server"]["cpu_system_seconds"]) / p["queries"]
        for p in passes
    ]
    print(f"point: {files[0]}")
    print(f"load average: {load0} at the start of the query phase, {load1} at its end")
    print(f"independent: {independent * 1e3:.4f} ms server CPU per query "
          f"({cpu_between(start, end):.2f} s over {queries} queries, whole server from /proc)")
    print(f"annbench:    {ours * 1e3:.4f} ms server CPU per query (median of {len(passes)} "
          f"passes; source {server['cpu_source']})")
    print(f"annbench / independent = {ours / independent:.3f}")
    print("per pass CPU ms/query: " + ", ".join(f"{v * 1e3:.4f}" for v in per_pass))
    print(f"pass-to-pass CV: server CPU per query {server['cpu_cv']:.3f}, "
          f"QPS {x['metrics']['qps_cv']:.3f}")


if __name__ == "__main__":
    main()
