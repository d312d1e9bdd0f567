//! CSV formula injection: labels, algorithm and parameter names reach CSV cells (and come from
//! other machines through `annbench merge`). Every CSV writer (`export`, `table`, `compare`)
//! prefixes a text cell that a spreadsheet would run (`=`, `+`, `-`, `@`, tab, carriage return
//! first) with `'`; numbers, negative ones included, stay numbers.

mod report_common;

use annbench::results::write_point;
use report_common::{labelled, pt};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const DATASET: &str = "glove-25-angular";
const BASE: &str = "=cmd|' /C calc'!A0";
const ME: &str = "@SUM(1+1)*cmd|' /C calc'!A0";

fn store(dir: &Path) {
    let point = |ef: i64, recall: f64, qps: f64, label: &str| {
        let mut p = labelled(
            pt("mariadb", &[("M", 16)], &[("ef_search", ef)], recall, qps),
            label,
        );
        p.query_args
            .insert("note".into(), Value::from("+1+cmd|' /C calc'!A0"));
        p.query_args.insert("offset".into(), Value::from(-5));
        p
    };
    for p in [
        point(20, 0.97, 1000.0, BASE),
        point(40, 0.99, 800.0, BASE),
        point(20, 0.97, 1200.0, ME),
        point(40, 0.99, 1000.0, ME),
    ] {
        write_point(dir, &p).unwrap();
    }
}

fn csv_of(dir: &Path, args: &[&str]) -> Vec<Vec<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .args(["--dataset", DATASET, "--results"])
        .arg(dir)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(out.stdout.as_slice());
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// No field a spreadsheet would run as a formula; returns every field.
fn assert_defused(rows: &[Vec<String>], what: &str) -> Vec<String> {
    let fields: Vec<String> = rows.iter().flatten().cloned().collect();
    for f in &fields {
        let risky = f.starts_with(['=', '+', '-', '@', '\t', '\r']);
        assert!(
            !risky || f.parse::<f64>().is_ok(),
            "{what}: the cell {f:?} would run as a formula"
        );
    }
    fields
}

#[test]
fn every_csv_writer_defuses_formula_cells() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());

    let export = csv_of(dir.path(), &["export", "--format", "csv"]);
    let fields = assert_defused(&export, "export");
    assert!(fields.contains(&format!("'{BASE}")), "{export:?}");
    assert!(fields.contains(&format!("'{ME}")), "{export:?}");
    assert!(
        fields.contains(&"'+1+cmd|' /C calc'!A0".to_string()),
        "{export:?}"
    );
    // A negative number is a number, not text to defuse.
    assert!(fields.contains(&"-5".to_string()), "{export:?}");

    let table = csv_of(dir.path(), &["table", "--format", "csv", "--recall", "0.9"]);
    let fields = assert_defused(&table, "table");
    assert!(fields.iter().any(|f| f.starts_with("'=cmd")), "{table:?}");

    let builds = csv_of(dir.path(), &["table", "--builds", "--format", "csv"]);
    assert_defused(&builds, "table --builds");

    let compare = csv_of(
        dir.path(),
        &["compare", "--base", BASE, "--me", ME, "--format", "csv"],
    );
    let fields = assert_defused(&compare, "compare");
    assert!(compare.len() > 1, "{compare:?}");
    // The labels reach the comparison's cells through the point names and parameters.
    assert!(
        fields.iter().any(|f| f.contains("cmd|")),
        "compare shows no label or parameter: {compare:?}"
    );
}
