//! The export: every point, every metric, `param_*` columns; CSV and JSON parse back to the
//! same values.

mod report_common;

use annbench::report::export::EXPORT_COLUMNS;
use annbench::report::render::{Format, render};
use annbench::report::{build_table, export_table};
use annbench::results::PointResult;
use report_common::{assert_golden, labelled, pt, with_clients};
use serde_json::Value;

fn points() -> Vec<PointResult> {
    let mut ann = pt(
        "hnswlib",
        &[("M", 12), ("efConstruction", 500)],
        &[("ef", 40)],
        0.9876543,
        3333.3,
    );
    // An ann-benchmarks result: no separate load time, no table size, no label.
    ann.load_seconds = None;
    ann.table_size_bytes = None;
    ann.metrics.qps_passes.clear();
    ann.passes.clear();
    let mut halfvec = pt(
        "pgvector_halfvec",
        &[("M", 16), ("ef_construction", 64)],
        &[("ef_search", 200)],
        1.0,
        123.456,
    );
    halfvec
        .query_args
        .insert("note".into(), Value::from("a, \"quoted\" text"));
    vec![
        labelled(
            with_clients(
                pt("mariadb", &[("M", 16)], &[("ef_search", 40)], 0.99, 1000.0),
                4,
            ),
            "11.8",
        ),
        halfvec,
        labelled(
            pt("mariadb", &[("M", 16)], &[("ef_search", 200)], 0.999, 400.0),
            "11.8",
        ),
        ann,
    ]
}

/// The expected value of each fixed column of a point, as JSON.
fn expected(p: &PointResult, name: &str) -> Value {
    let m = &p.metrics;
    let f = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    let used: Vec<f64> = if p.passes.is_empty() {
        m.qps_passes.clone()
    } else {
        p.passes
            .iter()
            .filter(|x| x.used)
            .map(|x| x.qps())
            .collect()
    };
    let passes =
        |pick: fn(f64, f64) -> f64| used.iter().copied().reduce(pick).map_or(Value::Null, f);
    let opt = |x: Option<f64>| x.map_or(Value::Null, f);
    match name {
        "dataset" => Value::from(p.dataset.clone()),
        "count" => Value::from(p.count),
        "algorithm" => Value::from(p.algorithm.clone()),
        "label" => p.label.clone().map_or(Value::Null, Value::from),
        "clients" => Value::from(p.clients),
        "name" => Value::from(annbench::report::names::point_name(p)),
        "recall" => f(m.recall),
        "epsilon_recall" => f(m.epsilon_recall),
        "qps" => f(m.qps),
        "qps_ci_low" => opt(m.qps_ci_low),
        "qps_ci_high" => opt(m.qps_ci_high),
        "qps_ci_level" => opt(m.qps_ci_level),
        "qps_best" => f(m.qps_best),
        "qps_min" => passes(f64::min),
        "qps_max" => passes(f64::max),
        "qps_cv" => opt(m.qps_cv),
        "passes" => Value::from(m.passes),
        "passes_total" => Value::from(m.qps_passes.len()),
        "flags" => Value::from(""),
        // No pass of the fixtures recorded interference.
        "other_cpu_share" | "steal_share" | "load_average" | "cpu_probe_us" => Value::Null,
        "filter" => {
            annbench::report::filtered::filter_kind(p).map_or(Value::Null, |k| k.as_str().into())
        }
        "short_results" => Value::from(m.short_results),
        "mean_rows" => m.mean_rows.map_or(Value::Null, f),
        "plan" => m.plan.clone().map_or(Value::Null, Value::from),
        "latency_mean_ms" => f(m.latency_mean * 1e3),
        "latency_p50_ms" => f(m.latency_p50 * 1e3),
        "latency_p95_ms" => f(m.latency_p95 * 1e3),
        "latency_p99_ms" => f(m.latency_p99 * 1e3),
        "latency_p999_ms" => f(m.latency_p999 * 1e3),
        "build_seconds" => f(p.build_seconds),
        "load_seconds" => p.load_seconds.map_or(Value::Null, f),
        "index_mib" => p
            .index_size_bytes
            .map_or(Value::Null, |b| f(b as f64 / 1048576.0)),
        "table_mib" => p
            .table_size_bytes
            .map_or(Value::Null, |b| f(b as f64 / 1048576.0)),
        // The fixtures measured no server cost.
        c if c.starts_with("server_")
            || c.starts_with("io_")
            || ["client_network_ms", "build_cpu_seconds", "storage"].contains(&c) =>
        {
            Value::Null
        }
        other => panic!("unexpected column {other}"),
    }
}

#[test]
fn columns_are_stable_and_params_sorted() {
    let t = export_table(&points());
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    let mut want: Vec<&str> = EXPORT_COLUMNS.to_vec();
    want.extend([
        "param_ef",
        "param_ef_construction",
        "param_ef_search",
        "param_efconstruction",
        "param_m",
        "param_note",
    ]);
    assert_eq!(names, want);
}

#[test]
fn json_records_parse_back_to_the_points() {
    let pts = points();
    let text = render(&export_table(&pts), Format::Json).unwrap();
    let records: Vec<serde_json::Map<String, Value>> = serde_json::from_str(&text).unwrap();
    // Sorted: hnswlib, mariadb (1 client, then 4 clients: by clients), pgvector_halfvec.
    let order = [3, 2, 0, 1];
    assert_eq!(records.len(), pts.len());
    for (rec, &i) in records.iter().zip(&order) {
        for col in EXPORT_COLUMNS {
            assert_eq!(rec[col], expected(&pts[i], col), "point {i} column {col}");
        }
    }
    assert_eq!(records[0]["param_efconstruction"], Value::from(500));
    assert_eq!(records[0]["param_ef_search"], Value::Null);
    assert_eq!(records[3]["param_note"], Value::from("a, \"quoted\" text"));
}

#[test]
fn csv_parses_back_to_the_same_values() {
    let pts = points();
    let text = render(&export_table(&pts), Format::Csv).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let order = [3, 2, 0, 1];
    assert_eq!(rows.len(), pts.len());
    for (row, &i) in rows.iter().zip(&order) {
        for (col, field) in header.iter().zip(row.iter()) {
            if !EXPORT_COLUMNS.contains(&col.as_str()) {
                continue;
            }
            let want = expected(&pts[i], col);
            match &want {
                Value::Null => assert_eq!(field, "", "{col}"),
                Value::String(s) if s.is_empty() => assert_eq!(field, "", "{col}"),
                Value::String(s) => assert_eq!(field, s, "{col}"),
                Value::Number(n) => {
                    // CSV carries 6 significant digits; recalls are truncated, never rounded up.
                    let got: f64 = field.parse().unwrap();
                    let want = n.as_f64().unwrap();
                    assert!(
                        (got - want).abs() <= want.abs() * 1e-5,
                        "point {i} column {col}: {got} vs {want}"
                    );
                    if col.ends_with("recall") {
                        assert!(got <= want, "point {i} column {col}: {got} > {want}");
                    }
                }
                other => panic!("{other}"),
            }
        }
    }
    let note = header.iter().position(|h| h == "param_note").unwrap();
    assert_eq!(&rows[3][note], "a, \"quoted\" text");
}

#[test]
fn export_and_build_table_golden() {
    let pts = points();
    assert_golden(
        "export.md",
        &render(&export_table(&pts), Format::Markdown).unwrap(),
    );
    let distinct = annbench::report::series::Distinct::of(&pts);
    let builds = annbench::report::build_table::build_rows_table(&build_table(&pts), distinct);
    assert_golden("builds.md", &render(&builds, Format::Markdown).unwrap());
}
