#!/usr/bin/env bash
# Checks that annbench's figures can be trusted, end to end against the servers that
# scripts/databases.sh starts (docs/methodology.md, "Checking the method"):
#
#   A/A             the demo grid on glove-twitter-25-angular twice (labels aa-1, aa-2):
#                   >= 95% of matched points "within noise", geometric mean in [0.95, 1.05]
#                   (inconclusive when other processes disturbed the runs);
#   A/A under load  the same while a CPU hog runs on one core (labels load-1, load-2): the
#                   affected points are flagged, and no difference is called;
#   table           the best-QPS-at-recall table of aa-1 recomputed from its points: no
#                   winner contradicted by its intervals, ties marked exactly where they are;
#   A/B             pgvector with PostgreSQL's shared_buffers at 16 MB against 1 GB on a
#                   generated set whose index is several times larger than 16 MB (labels
#                   buffers-16MB, buffers-1GB): the difference is called. (MariaDB's
#                   mhnsw_max_cache_size cannot serve here: annbench refuses to measure an
#                   index larger than that cache, since it would time cache churn.)
#
# Prints each comparison's summary and verdict counts, and PASS/FAIL per check. Results go
# to $ANNBENCH_REPEAT_DIR (default: a new directory under /tmp, removed at the end unless
# ANNBENCH_REPEAT_KEEP=1). Extra arguments go to every `annbench run` (e.g. --min-time 0.5).
# Restarts the servers of scripts/databases.sh twice (for shared_buffers) and once more to
# restore their settings.
set -euo pipefail
# (setup.sh defines log(); this one adds the time.)
step() { printf "\033[1m==> %s %s\033[0m\n" "$(date +%T)" "$*" >&2; }
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
source scripts/setup.sh

step "starting MariaDB and PostgreSQL + pgvector (scripts/databases.sh up)"
scripts/databases.sh up
eval "$(scripts/databases.sh env)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
step "building annbench (release)"
cargo build --release --quiet
python="$ANNBENCH_VENV/bin/python"

work="${ANNBENCH_REPEAT_DIR:-$(mktemp -d /tmp/annbench-repeat.XXXXXX)}"
mkdir -p "$work"
# A copy, so a rebuild of the tree during the run cannot change the binary mid-experiment.
annbench="$work/annbench"
cp "$CARGO_TARGET_DIR/release/annbench" "$annbench"
hog=""
cleanup() {
    if [ -n "$hog" ]; then kill "$hog" 2>/dev/null || true; fi
    if [ "${ANNBENCH_REPEAT_KEEP:-0}" != 1 ] && [ -z "${ANNBENCH_REPEAT_DIR:-}" ]; then
        rm -rf "$work"
    fi
}
trap cleanup EXIT
results="$work/results"
data="$work/data"
glove=glove-twitter-25-angular
step "results in $work"

demo_run() {
    local label=$1
    shift
    "$annbench" run --dataset "$glove" --data-dir "$data" --results "$results" --label "$label" \
        --algorithm mariadb --algorithm pgvector --algorithm pgvector_halfvec \
        --config scripts/demo-grids/mariadb.yml --config scripts/demo-grids/pgvector.yml \
        --config scripts/demo-grids/pgvector_halfvec.yml "$@"
}

# compare DATASET BASE ME CHECK: print the verdicts (as annbench gives them, and with
# --judge-disturbed) and PASS/FAIL for CHECK: aa (no difference), load (no difference called,
# points flagged) or ab (a difference called).
compare() {
    local dataset=$1 base=$2 me=$3 check=$4 out="$work/compare-$2-$3"
    local args=(--dataset "$dataset" --data-dir "$data" --results "$results" --base "$base" --me "$me")
    "$annbench" compare "${args[@]}" >"$out.md"
    "$annbench" compare "${args[@]}" --format json >"$out.json"
    "$annbench" compare "${args[@]}" --format json --judge-disturbed >"$out-judged.json"
    "$python" - "$out.json" "$out-judged.json" "$check" <<'EOF'
import json
import sys


def load(path):
    doc = json.load(open(path))
    pairs = [p for p in doc["pairs"] if p["match"] == "params" and p["ratio"] is not None]
    counts = {v: sum(1 for p in pairs if p["verdict"] == v)
              for v in ("faster", "slower", "within noise", "disturbed")}
    summary = next(r for r in doc["summary"] if r["match"] == "params")
    return doc, pairs, counts, summary


doc, pairs, c, s = load(sys.argv[1])
_, _, j, _ = load(sys.argv[2])
check = sys.argv[3]
n = len(pairs)
flagged = sum(1 for p in pairs if p["base_flags"] or p["me_flags"])
print(f"{doc['me']} / {doc['base']}: {n} matched points, {flagged} with a flagged side")
print(f"  verdicts: {c['faster']} faster, {c['slower']} slower, {c['within noise']} within noise, "
      f"{c['disturbed']} disturbed")
print(f"  judged by intervals alone (--judge-disturbed): {j['faster']} faster, {j['slower']} "
      f"slower, {j['within noise']} within noise")
speeds = sorted(p["speed_change"] for p in pairs if p.get("speed_change") is not None)
if speeds:
    print(f"  CPU speed probe, me against base: {100 * speeds[0]:+.1f}% to {100 * speeds[-1]:+.1f}% "
          f"(median {100 * speeds[len(speeds) // 2]:+.1f}%; beyond +-noise a pair is disturbed)")
g, lo, hi = s["geomean"], s["geomean_ci_low"], s["geomean_ci_high"]
print(f"  geometric mean {g:.3f}x [{lo:.3f}, {hi:.3f}], median {s['median']:.3f}x, "
      f"min {s['min']:.3f}x, max {s['max']:.3f}x")
called = c["faster"] + c["slower"]
if check == "aa":
    if c["disturbed"] > 0.05 * n:
        verdict = (f"INCONCLUSIVE: {c['disturbed']} of {n} pairs disturbed (other processes, "
                   f"stalls, or a CPU running at another speed); differences called: {called}")
    else:
        ok = c["within noise"] >= 0.95 * n and 0.95 <= g <= 1.05
        verdict = "PASS" if ok else "FAIL"
    print(f"  A/A check (>= 95% within noise, geometric mean in [0.95, 1.05]): {verdict}")
elif check == "load":
    ok = called <= 0.05 * n and flagged > 0
    print(f"  A/A-under-load check (points flagged, no difference called): "
          f"{'PASS' if ok else 'FAIL'}")
else:
    jcalled = j["faster"] + j["slower"]
    ok = jcalled >= 0.5 * n and (lo > 1.05 or hi < 0.95)
    note = f" ({c['disturbed']} pairs disturbed by default)" if c["disturbed"] else ""
    print(f"  A/B check (most points called by their intervals, geometric mean's interval "
          f"beyond +-5%): {'PASS' if ok else 'FAIL'}{note}")
EOF
}

# table_check DATASET LABEL: the best-QPS-at-recall table of one run against every stored
# point of that run, recomputed here: each winner has the highest median QPS among the
# series' points that reach the threshold, no point's interval lies wholly above the winner's,
# and a row is a tie exactly when the winner's interval overlaps the runner-up's.
table_check() {
    local dataset=$1 label=$2 out="$work/table-$2"
    local args=(--dataset "$dataset" --data-dir "$data" --results "$results" --label "$label")
    "$annbench" table "${args[@]}" >"$out.md"
    "$annbench" table "${args[@]}" --format json >"$out.json"
    "$annbench" export "${args[@]}" --format json >"$out-points.json"
    "$python" - "$out.json" "$out-points.json" <<'EOF'
import json
import sys

rows = json.load(open(sys.argv[1]))
points = json.load(open(sys.argv[2]))
key = ("algorithm", "label", "clients")
problems, ties = [], 0
for row in rows:
    if not row["reached"]:
        continue
    series = [p for p in points if all(p[k] == row[k] for k in key)
              and p["recall"] >= row["recall_threshold"]]
    series.sort(key=lambda p: -p["qps"])
    winner, rest = series[0], series[1:]
    where = f"{row['algorithm']} recall >= {row['recall_threshold']}"
    if abs(winner["qps"] - row["qps"]) > 1e-9 * row["qps"]:
        problems.append(f"{where}: the table says {row['qps']:.1f} QPS, the highest median "
                        f"is {winner['qps']:.1f}")
    above = [p["name"] for p in rest if p["qps_ci_low"] > row["qps_ci_high"]]
    if above:
        problems.append(f"{where}: intervals wholly above the winner's: {above}")
    if rest:
        r = rest[0]
        overlap = r["qps_ci_high"] >= row["qps_ci_low"] and r["qps_ci_low"] <= row["qps_ci_high"]
        if bool(row["tie"]) != overlap:
            problems.append(f"{where}: tie={row['tie']} but the intervals "
                            f"{'overlap' if overlap else 'are apart'}")
    ties += bool(row["tie"])
reached = sum(1 for r in rows if r["reached"])
print(f"  {reached} winners ({ties} marked as ties) checked against {len(points)} points")
for p in problems:
    print(f"  {p}")
print(f"  table check (no winner contradicted by its intervals): {'FAIL' if problems else 'PASS'}")
EOF
}

step "A/A: the demo grid twice"
demo_run aa-1 "$@"
demo_run aa-2 "$@"

step "A/A under load: the demo grid twice with a CPU hog on one core"
if command -v taskset >/dev/null; then
    taskset -c 0 sh -c 'while :; do :; done' &
else
    sh -c 'while :; do :; done' &
fi
hog=$!
demo_run load-1 "$@"
demo_run load-2 "$@"
kill "$hog"
hog=""
flagged="$("$annbench" export --dataset "$glove" --data-dir "$data" --results "$results" \
    --format csv | "$python" -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["label"].startswith("load-")]
print("%d of %d" % (sum(1 for r in rows if r["flags"]), len(rows)))')"

step "A/B: PostgreSQL shared_buffers 16 MB against 1 GB (pgvector)"
big=random-s-100-euclidean
ab=random-s-100-90k-1k-euclidean
"$annbench" datasets get "$big" --data-dir "$data"
"$annbench" datasets subset "$big" --train 90000 --test 1000 --name "$ab" --data-dir "$data"
rm -f "$data/$big.hdf5"
ab_run() {
    local label=$1 size=$2
    shift 2
    ANNBENCH_SHARED_BUFFERS=$size scripts/databases.sh restart >/dev/null
    eval "$(scripts/databases.sh env)"
    "$annbench" run --dataset "$ab" --data-dir "$data" --results "$results" --label "$label" \
        --algorithm pgvector --build M=16 --build ef_construction=64 \
        --query ef_search=20,40,80,160 "$@"
}
ab_run buffers-16MB 16MB "$@"
ab_run buffers-1GB 1GB "$@"
step "restoring the settings of scripts/databases.sh"
scripts/databases.sh restart >/dev/null
"$annbench" table --builds --dataset "$ab" --data-dir "$data" --results "$results"

step "verdicts"
echo "Best-QPS table of aa-1 against its own intervals:"
table_check "$glove" aa-1
echo "A/A (quiet):"
compare "$glove" aa-1 aa-2 aa
echo "A/A under a CPU hog on one core ($flagged points flagged):"
compare "$glove" load-1 load-2 load
echo "A/B (pgvector, PostgreSQL shared_buffers 16 MB -> 1 GB, $ab):"
compare "$ab" buffers-16MB buffers-1GB ab
echo "full comparisons: $work/compare-*.md (kept with ANNBENCH_REPEAT_KEEP=1)"
