//! `annbench merge` over stores written with the store's writer (no server): copies are whole
//! and merged once, two measurements of one point are refused or kept by the chosen rule,
//! nothing is written when a merge is refused, and tables read the merged store.

mod report_common;

use annbench::results::{PointResult, load_points, write_point};
use annbench::shard::ShardInfo;
use report_common::{labelled, pt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DATASET: &str = "glove-25-angular";

/// A point measured on `host` at `finished`, with `qps`.
fn measured(ef: i64, host: &str, finished: &str, qps: f64) -> PointResult {
    let mut p = labelled(
        pt("pgvector", &[("M", 16)], &[("ef_search", ef)], 0.95, qps),
        "v1",
    );
    p.environment.hostname = host.into();
    p.environment.finished_at = finished.into();
    p
}

fn annbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn failed(out: Output) -> String {
    assert!(!out.status.success(), "should have failed");
    String::from_utf8(out.stderr).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir`, hidden ones included.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn points(dir: &Path) -> Vec<PointResult> {
    load_points(dir, DATASET, 10, dir).unwrap()
}

#[test]
fn disjoint_and_identical_points_merge_once_and_tables_read_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, out) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("out"),
    );
    write_point(&a, &measured(10, "n1", "2026-01-01T00:00:00Z", 100.0)).unwrap();
    write_point(&a, &measured(20, "n1", "2026-01-01T00:01:00Z", 90.0)).unwrap();
    write_point(&b, &measured(40, "n2", "2026-01-01T00:02:00Z", 80.0)).unwrap();
    // The same file in both stores (results copied back twice) is one point.
    let twin = write_point(&a, &measured(80, "n1", "2026-01-01T00:03:00Z", 70.0)).unwrap();
    let rel = twin.strip_prefix(&a).unwrap();
    std::fs::create_dir_all(b.join(rel).parent().unwrap()).unwrap();
    std::fs::copy(&twin, b.join(rel)).unwrap();
    // Not points: a report, a temp file of a write in flight, a stray file in a dataset dir.
    std::fs::write(a.join("report.html"), "<html>").unwrap();
    std::fs::write(twin.with_file_name(".x.hdf5.tmp-1"), "partial").unwrap();
    std::fs::write(a.join(DATASET).join("notes.txt"), "n").unwrap();

    let text = ok(annbench(&[
        "merge",
        s(&a),
        s(&b),
        "--results",
        s(&out),
        "--dry-run",
    ]));
    assert!(text.contains("4 point file(s) would be copied"), "{text}");
    assert!(files(&out).is_empty(), "a dry run writes nothing");

    let text = ok(annbench(&["merge", s(&a), s(&b), "--results", s(&out)]));
    assert!(
        text.contains("4 point file(s) copied") && text.contains("1 identical copies merged once"),
        "{text}"
    );
    let merged = points(&out);
    assert_eq!(merged.len(), 4);
    let names: Vec<String> = files(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".hdf5") && !n.starts_with('.')),
        "{names:?}"
    );
    // Byte for byte.
    assert_eq!(
        std::fs::read(&twin).unwrap(),
        std::fs::read(out.join(rel)).unwrap()
    );

    // Again: nothing to copy. Into one of the sources: the other's points are added.
    let text = ok(annbench(&["merge", s(&a), s(&b), "--results", s(&out)]));
    assert!(
        text.contains("0 point file(s) copied") && text.contains("4 already there"),
        "{text}"
    );
    ok(annbench(&["merge", s(&b), "--results", s(&a)]));
    assert_eq!(points(&a).len(), 4);

    let table = ok(annbench(&[
        "table",
        "--dataset",
        DATASET,
        "--results",
        s(&out),
        "--data-dir",
        s(dir.path()),
    ]));
    assert!(table.contains("PGVector"), "{table}");
    let json = ok(annbench(&[
        "export",
        "--dataset",
        DATASET,
        "--format",
        "json",
        "--results",
        s(&out),
        "--data-dir",
        s(dir.path()),
    ]));
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(4), "{json}");
}

/// Stores `a` and `b` each holding a different measurement of one point (hosts n1 and n2).
fn two_measurements(dir: &Path, host_b: &str) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("a"), dir.join("b"));
    write_point(&a, &measured(10, "n1", "2026-01-01T00:00:00Z", 100.0)).unwrap();
    write_point(&b, &measured(10, host_b, "2026-01-02T00:00:00Z", 120.0)).unwrap();
    write_point(&b, &measured(20, host_b, "2026-01-02T00:01:00Z", 90.0)).unwrap();
    (a, b)
}

#[test]
fn two_measurements_of_one_point_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_measurements(dir.path(), "n2");
    let out = dir.path().join("out");
    let err = failed(annbench(&["merge", s(&a), s(&b), "--results", s(&out)]));
    assert!(
        err.contains("pgvector(m=16, ef_search=10) x1 clients was measured 2 times")
            && err.contains("host n1")
            && err.contains("host n2")
            && err.contains(s(&a))
            && err.contains("--on-conflict by-host")
            && err.contains("nothing was merged"),
        "{err}"
    );
    assert!(files(&out).is_empty(), "{:?}", files(&out));
    // The same into a store that holds one of them: it is left as it was.
    ok(annbench(&["merge", s(&a), "--results", s(&out)]));
    let before = files(&out);
    let err = failed(annbench(&["merge", s(&b), "--results", s(&out)]));
    assert!(err.contains("measured 2 times"), "{err}");
    assert_eq!(files(&out), before);
    assert_eq!(points(&out)[0].metrics.qps, 100.0);
}

#[test]
fn by_host_keeps_both_under_label_and_host() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_measurements(dir.path(), "n2");
    let out = dir.path().join("out");
    // The store already holds n1's measurement: it moves to label v1@n1.
    ok(annbench(&["merge", s(&a), "--results", s(&out)]));
    let text = ok(annbench(&[
        "merge",
        s(&b),
        "--results",
        s(&out),
        "--on-conflict",
        "by-host",
    ]));
    assert!(text.contains("2 of them kept by host"), "{text}");
    let mut got: Vec<(String, i64, f64)> = points(&out)
        .iter()
        .map(|p| {
            let ef = p.query_args["ef_search"].as_i64().unwrap();
            (p.label.clone().unwrap(), ef, p.metrics.qps)
        })
        .collect();
    got.sort_by(|x, y| x.partial_cmp(y).unwrap());
    assert_eq!(
        got,
        [
            ("v1".to_string(), 20, 90.0),
            ("v1@n1".to_string(), 10, 100.0),
            ("v1@n2".to_string(), 10, 120.0)
        ]
    );
    // Everything else in a relabelled file is the original's.
    let p = points(&out)
        .into_iter()
        .find(|p| p.label.as_deref() == Some("v1@n2"))
        .unwrap();
    assert_eq!(p.environment.hostname, "n2");
    assert_eq!(p.environment.finished_at, "2026-01-02T00:00:00Z");
    // Merging again changes nothing.
    let before = files(&out);
    let text = ok(annbench(&[
        "merge",
        s(&a),
        s(&b),
        "--results",
        s(&out),
        "--on-conflict",
        "by-host",
    ]));
    assert!(text.contains("0 point file(s) copied"), "{text}");
    assert_eq!(files(&out), before);
    // The labels tell the hosts apart in a comparison.
    let cmp = ok(annbench(&[
        "compare",
        "--dataset",
        DATASET,
        "--base",
        "v1@n1",
        "--me",
        "v1@n2",
        "--results",
        s(&out),
        "--data-dir",
        s(dir.path()),
    ]));
    assert!(cmp.contains("1.2"), "{cmp}");
}

#[test]
fn by_host_needs_two_hosts_and_newest_keeps_the_later() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_measurements(dir.path(), "n1");
    let out = dir.path().join("out");
    let err = failed(annbench(&[
        "merge",
        s(&a),
        s(&b),
        "--results",
        s(&out),
        "--on-conflict",
        "by-host",
    ]));
    assert!(err.contains("different recorded host"), "{err}");
    assert!(files(&out).is_empty());
    let text = ok(annbench(&[
        "merge",
        s(&a),
        s(&b),
        "--results",
        s(&out),
        "--on-conflict",
        "newest",
    ]));
    assert!(text.contains("1 older measurement(s) left out"), "{text}");
    let p = points(&out)
        .into_iter()
        .find(|p| p.query_args["ef_search"] == 10)
        .unwrap();
    assert_eq!(p.environment.finished_at, "2026-01-02T00:00:00Z");
    // Newest replaces an older point already in the store.
    let (c, _) = (dir.path().join("c"), ());
    write_point(&c, &measured(10, "n3", "2026-02-01T00:00:00Z", 130.0)).unwrap();
    let text = ok(annbench(&[
        "merge",
        s(&c),
        "--results",
        s(&out),
        "--on-conflict",
        "newest",
    ]));
    assert!(text.contains("1 replacing older measurements"), "{text}");
    let p = points(&out)
        .into_iter()
        .find(|p| p.query_args["ef_search"] == 10)
        .unwrap();
    assert_eq!(p.metrics.qps, 130.0);
    let err = failed(annbench(&[
        "merge",
        s(&c),
        "--results",
        s(&out),
        "--on-conflict",
        "oldest",
    ]));
    assert!(err.contains("refuse, by-host or newest"), "{err}");
}

#[test]
fn bad_sources_are_named_and_stop_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let (a, out) = (dir.path().join("a"), dir.path().join("out"));
    write_point(&a, &measured(10, "n1", "2026-01-01T00:00:00Z", 100.0)).unwrap();
    let err = failed(annbench(&[
        "merge",
        s(&a),
        s(&dir.path().join("missing")),
        "--results",
        s(&out),
    ]));
    assert!(err.contains("missing is not a directory"), "{err}");
    let bad = a.join(DATASET).join("10/pgvector/broken.hdf5");
    std::fs::write(&bad, "not hdf5").unwrap();
    let err = failed(annbench(&["merge", s(&a), "--results", s(&out)]));
    assert!(
        err.contains("broken.hdf5") && err.contains("move it out"),
        "{err}"
    );
    assert!(files(&out).is_empty());
    std::fs::remove_file(&bad).unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out_run = annbench(&["merge", s(&a), s(&empty), "--results", s(&out)]);
    let err = String::from_utf8_lossy(&out_run.stderr).into_owned();
    assert!(ok(out_run).contains("1 point file(s) copied"));
    assert!(err.contains("empty holds no result files"), "{err}");
}

#[test]
fn merged_shards_report_whether_their_plan_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |i: usize, ef: i64| {
        let mut p = measured(ef, &format!("n{i}"), "2026-01-01T00:00:00Z", 100.0);
        p.environment.shard = Some(ShardInfo {
            index: i,
            count: 3,
            plan: "0123456789ab".into(),
            plan_points: 3,
            source: "--shard".into(),
        });
        let d = dir.path().join(format!("s{i}"));
        write_point(&d, &p).unwrap();
        d
    };
    let (s1, s2, s3) = (shard(1, 10), shard(2, 20), shard(3, 40));
    let part = dir.path().join("part");
    let text = ok(annbench(&["merge", s(&s1), s(&s3), "--results", s(&part)]));
    assert!(
        text.contains("plan 0123456789ab (glove-25-angular/10): 2 of 3 shard(s), 2 of 3 point(s)")
            && text.contains("none from shard 2/3"),
        "{text}"
    );
    let err = failed(annbench(&[
        "merge",
        s(&s1),
        s(&s3),
        "--results",
        s(&part),
        "--complete",
    ]));
    assert!(
        err.contains("1 sharded sweep(s)") && err.contains("rerun the missing"),
        "{err}"
    );
    let text = ok(annbench(&[
        "merge",
        s(&s2),
        "--results",
        s(&part),
        "--complete",
    ]));
    assert!(text.contains("3 of 3 shard(s), 3 of 3 point(s)"), "{text}");
}

/// A merge whose store has no room: refused before the first copy, with the sizes and the fix;
/// nothing (no temp file either) is left in the store. The store is a 64 KiB tmpfs.
#[test]
fn a_merge_into_a_full_disk_is_refused_before_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, out) = (dir.path().join("a"), dir.path().join("out"));
    std::fs::create_dir(&out).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs", s(&out)])
        .output()
        .map(|o| o.status.success());
    if mounted.ok() != Some(true) {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    let unmount = || {
        Command::new("umount").args(["-l", s(&out)]).output().ok();
    };
    for ef in 1..=40 {
        write_point(&a, &measured(ef, "n1", "2026-01-01T00:00:00Z", 100.0)).unwrap();
    }
    let result = annbench(&["merge", s(&a), "--results", s(&out)]);
    let left = files(&out);
    unmount();
    let err = failed(result);
    assert!(
        err.contains("cannot write 40 point file(s)")
            && err.contains("free some space or choose another directory"),
        "{err}"
    );
    assert!(left.is_empty(), "{left:?}");
}
