//! `annbench table | export | compare` end to end over a real result store (points written
//! with the store's writer into a temporary directory; no server needed).

mod report_common;

use annbench::results::write_point;
use report_common::{labelled, pt, with_clients};
use std::path::Path;
use std::process::{Command, Output};

const DATASET: &str = "glove-25-angular";

fn store(dir: &Path) {
    let m = |ef, r, q, l| labelled(pt("mariadb", &[("M", 16)], &[("ef_search", ef)], r, q), l);
    let points = [
        m(20, 0.97, 1000.0, "v1"),
        m(40, 0.99, 800.0, "v1"),
        m(20, 0.97, 1200.0, "v2"),
        m(40, 0.99, 1000.0, "v2"),
        with_clients(m(40, 0.99, 2600.0, "v2"), 4),
    ];
    for p in &points {
        write_point(dir, p).unwrap();
    }
}

fn annbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .args(["--dataset", DATASET, "--results"])
        .arg(dir)
        .args(["--data-dir"])
        .arg(dir.join("data"))
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn table_export_compare_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());

    let table = stdout(&annbench(
        dir.path(),
        &[
            "table",
            "--recall",
            "0.99",
            "--label",
            "v2",
            "--clients",
            "1",
        ],
    ));
    let rows: Vec<&str> = table.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "{table}");
    assert!(
        rows[0].contains("MariaDB(m=16, ef_search=40)") && rows[0].contains("1000.0"),
        "{table}"
    );

    let csv = stdout(&annbench(dir.path(), &["export", "--format", "csv"]));
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(reader.records().count(), 5);

    let by_clients = stdout(&annbench(dir.path(), &["table", "--by-clients"]));
    assert!(by_clients.contains("2.60x"), "{by_clients}");

    let json = stdout(&annbench(
        dir.path(),
        &[
            "compare",
            "--base",
            "v1",
            "--me",
            "v2",
            "--format",
            "json",
            "--clients",
            "1",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ratios: Vec<f64> = v["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["match"] == "params")
        .map(|p| p["ratio"].as_f64().unwrap())
        .collect();
    assert_eq!(ratios, vec![1.2, 1.25]);

    let out_file = dir.path().join("t.json");
    let out = annbench(
        dir.path(),
        &[
            "table",
            "--format",
            "json",
            "--output",
            out_file.to_str().unwrap(),
        ],
    );
    assert!(stdout(&out).is_empty());
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    assert!(written.as_array().is_some_and(|a| !a.is_empty()));
}

#[test]
fn empty_store_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = annbench(dir.path(), &["table"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(DATASET)
            && err.contains(&dir.path().display().to_string())
            && err.contains("annbench run"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn table_blocks_relative_to_a_label() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let text = stdout(&annbench(
        dir.path(),
        &[
            "table",
            "--format",
            "blocks",
            "--recall",
            "0.99",
            "--base",
            "v1",
            "--clients",
            "1",
        ],
    ));
    let expected = "\
Best QPS with recall >= 0.99
recall  QPS   rel2v1  algorithm
0.990   1000  1.25    MariaDB(m=16, ef_search=40) [v2]
0.990   800   1.00    MariaDB(m=16, ef_search=40) [v1]
";
    assert_eq!(text, expected);

    let out = annbench(dir.path(), &["table", "--format", "blocks", "--builds"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--builds"), "{err}");
    let out = annbench(dir.path(), &["table", "--format", "tsv"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("blocks"), "{err}");
}

#[test]
fn a_dataset_given_as_a_path_finds_its_results() {
    // `run --dataset ./glove-25-angular.hdf5` stores under the file's stem.
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args([
            "table",
            "--dataset",
            "./some/dir/glove-25-angular.hdf5",
            "--results",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(stdout(&out).contains("MariaDB(m=16, ef_search=40)"));
}
