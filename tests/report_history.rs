//! `annbench history` on stored series: change points found at their run, the regression gate's
//! exit status (1 after a regression, 0 after an improvement, a recovery or no change), the
//! formats, and the refusals (mixed hosts, unknown labels).

mod report_common;

use annbench::results::{ServerCost, write_point};
use report_common::{labelled, pt};
use std::path::Path;
use std::process::{Command, Output};

/// Deterministic wobble below 1%, run by run.
const WOBBLE: [f64; 12] = [
    0.3, -0.5, 0.8, -0.2, 0.1, -0.7, 0.6, -0.4, 0.2, -0.1, 0.5, -0.6,
];

/// A store of 12 runs `nightly-1..12` of two points, started an hour apart on `node-1`, whose
/// QPS is `level(i)` (and server CPU per query its inverse).
fn store(dir: &Path, level: impl Fn(usize) -> f64) {
    for (i, wobble) in WOBBLE.iter().enumerate() {
        for (ef, share, recall) in [(10, 1.0, 0.9), (40, 0.5, 0.99)] {
            let qps = level(i) * share * (1.0 + wobble / 100.0);
            let mut p = labelled(
                pt("mariadb", &[("M", 16)], &[("ef_search", ef)], recall, qps),
                &format!("nightly-{}", i + 1),
            );
            p.environment.started_at = Some(format!("2026-11-{:02}T02:00:00Z", i + 1));
            p.environment.finished_at = format!("2026-11-{:02}T02:10:00Z", i + 1);
            p.environment.hostname = "node-1".into();
            p.environment.server_version = "MariaDB 11.8.3".into();
            p.metrics.server = Some(ServerCost {
                cpu_per_query: Some(1.0 / qps),
                voluntary_switches_per_query: Some(1.0),
                ..ServerCost::default()
            });
            write_point(dir, &p).unwrap();
        }
    }
}

fn history(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(["history", "--dataset", "glove-25-angular", "--results"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_gate_fails_after_a_regression_and_passes_otherwise() {
    type Level = fn(usize) -> f64;
    let cases: [(&str, Level, i32); 4] = [
        (
            "regression at run 7",
            |i| if i < 6 { 1000.0 } else { 600.0 },
            1,
        ),
        (
            "improvement at run 7",
            |i| if i < 6 { 600.0 } else { 1000.0 },
            0,
        ),
        ("no change", |_| 1000.0, 0),
        (
            "down at run 5, back at run 9",
            |i| if (4..8).contains(&i) { 500.0 } else { 1000.0 },
            0,
        ),
    ];
    for (what, level, status) in cases {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), level);
        let out = history(dir.path(), &["--fail-on", "regression"]);
        assert_eq!(out.status.code(), Some(status), "{what}: {}", text(&out));
        let t = text(&out);
        match what {
            "regression at run 7" => {
                assert!(
                    t.contains("regression at run 7 ('nightly-7'): qps -40."),
                    "{t}"
                );
                assert!(
                    t.contains("regression: the newest run ('nightly-12')"),
                    "{t}"
                );
            }
            "improvement at run 7" => assert!(t.contains("improvement at run 7"), "{t}"),
            "no change" => assert!(t.contains("no change points"), "{t}"),
            _ => {
                assert!(
                    t.contains("regression at run 5") && t.contains("improvement at run 9"),
                    "{t}"
                )
            }
        }
        // Without --fail-on the command reports and succeeds.
        assert_eq!(history(dir.path(), &[]).status.code(), Some(0), "{what}");
    }
}

#[test]
fn formats_carry_the_change_points() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), |i| if i < 6 { 1000.0 } else { 600.0 });
    let json = history(dir.path(), &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let cps = v["change_points"].as_array().unwrap();
    assert!(
        cps.iter()
            .all(|c| c["index"] == 6 && c["label"] == "nightly-7"),
        "{cps:?}"
    );
    assert!(
        cps.iter()
            .any(|c| c["metric"] == "qps" && c["kind"] == "regression")
    );
    assert!(
        cps.iter()
            .any(|c| c["metric"] == "server_cpu_per_query" && c["kind"] == "regression")
    );
    assert_eq!(v["gate_fails"], true);
    let csv = text(&history(dir.path(), &["--format", "csv"]));
    assert!(
        csv.starts_with("line,kind,algorithm,clients,threshold,index,label"),
        "{csv}"
    );
    assert!(csv.contains("qps regression -40."), "{csv}");
    let md = text(&history(dir.path(), &["--format", "markdown"]));
    assert!(
        md.contains("### Change points") && md.contains("| regression"),
        "{md}"
    );
    // --base: ratios against run 12.
    let based = history(dir.path(), &["--format", "json", "--base", "nightly-12"]);
    let v: serde_json::Value = serde_json::from_slice(&based.stdout).unwrap();
    let first = &v["lines"][0]["values"][11];
    assert_eq!(first["qps_ratio"], 1.0);
}

#[test]
fn hosts_labels_and_options_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), |_| 1000.0);
    let mut other = labelled(
        pt("mariadb", &[("M", 16)], &[("ef_search", 10)], 0.9, 990.0),
        "nightly-13",
    );
    other.environment.started_at = Some("2026-11-13T02:00:00Z".into());
    other.environment.hostname = "node-2".into();
    write_point(dir.path(), &other).unwrap();
    let out = history(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(
        t.contains("node-2 (nightly-13)") && t.contains("--hosts any"),
        "{t}"
    );
    assert_eq!(
        history(dir.path(), &["--hosts", "any"]).status.code(),
        Some(0)
    );
    // The series given by label and glob, in the order given.
    let json = history(
        dir.path(),
        &[
            "--series",
            "nightly-12,nightly-1*",
            "--format",
            "json",
            "--hosts",
            "any",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let labels: Vec<&str> = v["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "nightly-12",
            "nightly-1",
            "nightly-10",
            "nightly-11",
            "nightly-13"
        ]
    );
    for (args, says) in [
        (vec!["--series", "weekly-*"], "no label matches 'weekly-*'"),
        (vec!["--window", "1"], "2 or more"),
        (vec!["--window", "abc"], "give a whole number of runs"),
        (
            vec!["--recall", "1.5"],
            "a recall threshold is above 0 and at most 1",
        ),
        (vec!["--p-value", "0"], "give a probability above 0"),
        (vec!["--magnitude=-5%"], "give a share of 0 or more"),
        (vec!["--base", "nope", "--hosts", "any"], "--base nope"),
    ] {
        let out = history(dir.path(), &args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains("panicked"), "{}", text(&out));
    }
}

#[test]
fn plot_history_draws_the_series() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), |i| if i < 6 { 1000.0 } else { 600.0 });
    for metric in ["qps", "server_cpu_per_query"] {
        let svg = dir.path().join(format!("{metric}.svg"));
        let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args([
                "plot",
                "history",
                "--dataset",
                "glove-25-angular",
                "--results",
            ])
            .arg(dir.path())
            .args(["--metric", metric, "--lines", "all", "-o"])
            .arg(&svg)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let s = std::fs::read_to_string(&svg).unwrap();
        assert!(s.contains("over 12 runs"), "{metric}");
        // Each line's change point is a triangle (a polygon in SVG).
        assert!(s.contains("<polygon"), "{metric}");
    }
    // Three runs: the x axis counts runs, in whole ticks (no run 1.5).
    let svg = dir.path().join("three.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args([
            "plot",
            "history",
            "--dataset",
            "glove-25-angular",
            "--results",
        ])
        .arg(dir.path())
        .args(["--series", "nightly-1,nightly-2,nightly-3", "-o"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Tick labels are the text elements' lines.
    let s = std::fs::read_to_string(&svg).unwrap();
    let labels: Vec<&str> = s.lines().map(str::trim).collect();
    assert!(labels.contains(&"2"), "{s}");
    for half in ["1.5", "2.5", "1.2", "2.4"] {
        assert!(!labels.contains(&half), "{half}");
    }
}

#[test]
fn an_output_over_a_result_file_is_refused_and_the_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), |_| 1000.0);
    let result = walkdir(dir.path())
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "hdf5"))
        .expect("a stored point");
    let before = std::fs::read(&result).unwrap();
    for args in [
        vec!["history", "--format", "json"],
        vec!["table"],
        vec!["plot", "history"],
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
        cmd.args(&args)
            .args(["--dataset", "glove-25-angular", "--results"])
            .arg(dir.path())
            .arg("-o")
            .arg(&result);
        let o = cmd.output().unwrap();
        assert_ne!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("it is an HDF5 file"),
            "{args:?}: {}",
            text(&o)
        );
        assert_eq!(std::fs::read(&result).unwrap(), before, "{args:?}");
    }
}

/// Every file under `dir`.
fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_label_with_a_comma_is_named_whole_by_history_and_its_plot() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), |_| 1000.0);
    let mut p = labelled(
        pt("mariadb", &[("M", 16)], &[("ef_search", 10)], 0.9, 990.0),
        "11.8, tuned",
    );
    p.environment.hostname = "node-1".into();
    write_point(dir.path(), &p).unwrap();
    let svg = dir.path().join("comma.svg");
    for args in [
        vec!["history"],
        vec!["plot", "history", "-o", svg.to_str().unwrap()],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args(&args)
            .args(["--dataset", "glove-25-angular", "--results"])
            .arg(dir.path())
            .args(["--series", "nightly-1,nightly-2", "--series", "11.8, tuned"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    }
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("over 3 runs")
    );
}
