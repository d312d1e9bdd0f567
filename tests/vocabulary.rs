//! One vocabulary across outputs (docs/vocabulary.md): the column names of `export`, `table`,
//! `table --builds`, `table --by-clients` and `compare` are pinned in
//! `tests/golden/vocabulary.txt` (python/tests/test_vocabulary.py checks the Python frames
//! against the same file), and a column name that two outputs share holds the same figure in
//! the same unit for the same point.
//!
//! The store is `tests/data/vocabulary-store` (a few KB, committed so Python reads the same
//! files); `UPDATE_GOLDEN=1` rewrites it and the golden file from the points below.

mod report_common;

use annbench::report::render::{Format, render};
use annbench::results::{PointResult, ServerCost, load_points, write_point};
use report_common::{assert_golden, labelled, pt, with_clients};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const DATASET: &str = "glove-25-angular";

fn store() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/vocabulary-store")
}

/// Two algorithms with different parameters (pgvector has `ef_construction`, MariaDB not),
/// two labels (for `compare`), two client counts (for `--by-clients`), server cost on the
/// points of one build.
fn points() -> Vec<PointResult> {
    let maria = |ef, recall, qps, label| {
        let mut p = labelled(
            pt("mariadb", &[("M", 16)], &[("ef_search", ef)], recall, qps),
            label,
        );
        if label == "v1" {
            p.metrics.server = Some(ServerCost {
                cpu_per_query: Some(0.000_8),
                exec_per_query: Some(0.000_6),
                client_network_per_query: Some(0.000_5),
                build_cpu_seconds: Some(12.5),
                memory_after_build_bytes: Some(300 << 20),
                ..ServerCost::default()
            });
        }
        p
    };
    let pg = |ef, recall, qps| {
        labelled(
            pt(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", ef)],
                recall,
                qps,
            ),
            "v1",
        )
    };
    vec![
        maria(20, 0.9712000000000001, 1500.0, "v1"),
        maria(40, 0.9912, 900.0, "v1"),
        with_clients(maria(40, 0.9912, 1700.0, "v1"), 2),
        maria(20, 0.9705, 1600.0, "v2"),
        maria(40, 0.9915, 950.0, "v2"),
        pg(20, 0.962, 800.0),
        pg(40, 0.995, 500.0),
    ]
}

fn annbench(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .args(["--dataset", DATASET, "--results"])
        .arg(store())
        .arg("--data-dir")
        .arg(store().join("data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "annbench {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn records(text: &str) -> Vec<Map<String, Value>> {
    serde_json::from_str(text).unwrap()
}

fn columns(rows: &[Map<String, Value>]) -> Vec<String> {
    rows[0].keys().cloned().collect()
}

/// The JSON outputs by name, in the golden file's order.
fn outputs() -> Vec<(&'static str, Vec<Map<String, Value>>)> {
    let table = ["table", "--recall", "0.99,0.95", "--format", "json"];
    let compare: Value = serde_json::from_str(&annbench(&[
        "compare", "--base", "v1", "--me", "v2", "--format", "json",
    ]))
    .unwrap();
    let pairs: Vec<Map<String, Value>> = serde_json::from_value(compare["pairs"].clone()).unwrap();
    vec![
        (
            "export",
            records(&annbench(&["export", "--format", "json"])),
        ),
        ("table", records(&annbench(&table))),
        (
            "builds",
            records(&annbench(&["table", "--builds", "--format", "json"])),
        ),
        (
            "clients",
            records(&annbench(&["table", "--by-clients", "--format", "json"])),
        ),
        ("compare", pairs),
    ]
}

#[test]
fn the_store_holds_the_points() {
    let dir = store();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        for p in &points() {
            write_point(&dir, p).unwrap();
        }
    }
    let loaded = load_points(&dir, DATASET, 10, &dir.join("data")).unwrap();
    let json =
        |pts: &[PointResult]| render(&annbench::report::export_table(pts), Format::Json).unwrap();
    assert_eq!(json(&loaded), json(&points()));
}

#[test]
fn column_names_are_pinned() {
    let text: String = outputs()
        .iter()
        .map(|(name, rows)| format!("{name}: {}\n", columns(rows).join(" ")))
        .collect();
    assert_golden("vocabulary.txt", &text);
}

#[test]
fn csv_and_json_name_the_same_columns() {
    for args in [
        vec!["export"],
        vec!["table", "--recall", "0.99,0.95"],
        vec!["table", "--builds"],
        vec!["table", "--by-clients"],
    ] {
        let mut csv_args = args.clone();
        csv_args.extend(["--format", "csv"]);
        let csv = annbench(&csv_args);
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let mut json_args = args.clone();
        json_args.extend(["--format", "json"]);
        assert_eq!(header, columns(&records(&annbench(&json_args))), "{args:?}");
    }
}

#[test]
fn algorithms_are_ids_and_units_are_in_the_names() {
    for (output, rows) in outputs() {
        for row in &rows {
            let algorithm = row["algorithm"].as_str().unwrap();
            assert!(
                ["mariadb", "pgvector"].contains(&algorithm),
                "{output}: algorithm {algorithm}"
            );
        }
        for c in columns(&rows) {
            // Every time or size says its unit; no MB, bytes or bare seconds per query.
            if c.contains("latency") || c.contains("cpu") && !c.contains("ratio") {
                assert!(
                    c.ends_with("_ms")
                        || c.ends_with("_seconds")
                        || c.ends_with("_us")
                        || c.ends_with("_cv")
                        || c.ends_with("_share")
                        || c.ends_with("_source")
                        || c.ends_with("_text")
                        || c.ends_with("_verdict")
                        || c == "client_cpu_per_connection",
                    "{output}: {c} has no unit"
                );
            }
            assert!(
                !c.ends_with("_mb") && !c.ends_with("_bytes") && !c.contains("per_query"),
                "{output}: {c}"
            );
        }
    }
}

/// The export rows of the same point (or, for builds, the same index) as `row`.
fn same_points<'a>(
    export: &'a [Map<String, Value>],
    row: &Map<String, Value>,
    keys: &[String],
) -> Vec<&'a Map<String, Value>> {
    export
        .iter()
        .filter(|e| keys.iter().all(|k| e.get(k) == row.get(k)))
        .collect()
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

#[test]
fn a_shared_column_holds_the_same_figure() {
    let all = outputs();
    let export = &all[0].1;
    let export_columns = columns(export);
    for (output, rows) in &all[1..] {
        if *output == "compare" {
            continue; // base_* / me_* columns; its names come from export rows (checked below)
        }
        let shared: Vec<String> = columns(rows)
            .into_iter()
            .filter(|c| export_columns.contains(c))
            .collect();
        let keys: Vec<String> = match *output {
            "builds" => shared
                .iter()
                .filter(|c| ["algorithm", "label"].contains(&c.as_str()) || c.starts_with("param_"))
                .cloned()
                .collect(),
            _ => ["algorithm", "label", "clients", "name"]
                .map(String::from)
                .to_vec(),
        };
        let mut checked = 0;
        for row in rows
            .iter()
            .filter(|r| r.get("reached") != Some(&Value::Bool(false)))
        {
            let matches = same_points(export, row, &keys);
            assert!(!matches.is_empty(), "{output}: no export row for {row:?}");
            for e in matches {
                for c in &shared {
                    assert!(
                        same_value(&row[c], &e[c]),
                        "{output}.{c} = {} but export.{c} = {} for {}",
                        row[c],
                        e[c],
                        e["name"]
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 10, "{output}: only {checked} values compared");
    }
    let names: Vec<&Value> = export.iter().map(|e| &e["name"]).collect();
    for pair in &all[4].1 {
        for side in ["base_name", "me_name"] {
            if !pair[side].is_null() {
                assert!(
                    names.contains(&&pair[side]),
                    "compare {side} {}",
                    pair[side]
                );
            }
        }
    }
}

/// The export's fixed columns are the registry of metrics (`annbench::report::metrics`), in
/// order, and each metric with a unit is listed under it in docs/vocabulary.md.
#[test]
fn the_registry_names_the_export_columns_and_the_docs_list_its_units() {
    use annbench::report::metrics::METRICS;
    let export = annbench(&["export", "--format", "json"]);
    let names: Vec<String> = columns(&records(&export));
    let registry: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
    assert_eq!(names[..registry.len()], registry[..]);
    assert!(
        names[registry.len()..]
            .iter()
            .all(|c| c.starts_with("param_"))
    );
    let docs = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/vocabulary.md"),
    )
    .unwrap();
    for m in METRICS {
        if let Some(suffix) = m.unit.suffix() {
            let row = docs
                .lines()
                .find(|l| l.starts_with(&format!("| `{suffix}` |")))
                .unwrap_or_else(|| panic!("docs/vocabulary.md has no row for {suffix}"));
            assert!(
                row.contains(&format!("`{}`", m.name)),
                "docs/vocabulary.md: {} is not listed under {suffix}",
                m.name
            );
        }
    }
}

#[test]
fn integer_parameters_stay_integers() {
    let csv = annbench(&["export", "--format", "csv"]);
    assert!(csv.contains(",16,") || csv.contains(",16\n"), "{csv}");
    assert!(!csv.contains("16.0") && !csv.contains("64.0"), "{csv}");
    // Float noise does not reach CSV; JSON keeps full precision.
    assert!(csv.contains("0.9712,") && !csv.contains("0.9712000000000001"));
    let json = annbench(&["export", "--format", "json"]);
    assert!(json.contains("0.9712000000000001"));
    assert!(Path::new(&store()).join(DATASET).is_dir());
}
