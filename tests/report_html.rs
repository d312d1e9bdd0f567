//! `annbench report` end to end over a real result store (points written with the store's
//! writer; no server): the file, its embedded chart data, its views, and its errors. The
//! browser half of the check is tests/python/test_report_browser.py.

mod report_common;

use annbench::report::html::{ReportOptions, html_report};
use annbench::results::write_point;
use report_common::{built, labelled, pt, with_clients};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const DATASET: &str = "glove-25-angular";

fn points() -> Vec<annbench::results::PointResult> {
    let m = |ef, r, q, l| labelled(pt("mariadb", &[("M", 16)], &[("ef_search", ef)], r, q), l);
    let pg = |m, ef, r, q| {
        let p = pt(
            "pgvector",
            &[("M", m), ("ef_construction", 64)],
            &[("ef_search", ef)],
            r,
            q,
        );
        labelled(built(p, m as f64), "v1")
    };
    let mut hostile = m(80, 0.995, 600.0, "</script><b>v3");
    hostile.environment.notices = vec!["client CPU near 100% <i>".into()];
    hostile.environment.command = "annbench run --label '</script><b>v3'".into();
    vec![
        m(20, 0.97, 1000.0, "v1"),
        m(40, 0.99, 800.0, "v1"),
        m(20, 0.97, 1200.0, "v2"),
        m(40, 0.99, 1000.0, "v2"),
        with_clients(m(40, 0.99, 2600.0, "v2"), 4),
        pg(8, 10, 0.90, 3000.0),
        pg(8, 40, 0.96, 1500.0),
        pg(16, 40, 0.98, 1400.0),
        hostile,
    ]
}

fn annbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .arg("report")
        .args(["--dataset", DATASET, "--results"])
        .arg(dir)
        .args(["--data-dir"])
        .arg(dir.join("data"))
        .args(args)
        .output()
        .unwrap()
}

/// The JSON the page's script draws from.
fn chart_data(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"annbench-data\">";
    let start = html.find(open).expect("data element") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn report_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    for p in &points() {
        write_point(dir.path(), p).unwrap();
    }
    let out_path = dir.path().join("out.html");
    let out = annbench(dir.path(), &["--output", out_path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("out.html") && stdout.contains("9 points"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(&out_path).unwrap();
    assert!(html.len() < 5_000_000);
    // Self-contained: a policy that forbids fetches, and nothing to fetch.
    assert!(html.contains("content=\"default-src 'none'; script-src 'unsafe-inline'"));
    for remote in [
        "<script src",
        "<link",
        "src=\"http",
        "href=\"http",
        "@import",
    ] {
        assert!(!html.contains(remote), "{remote}");
    }
    // Text from the results is escaped wherever it lands: 3 script elements, one label tag.
    assert_eq!(html.matches("</script>").count(), 3);
    assert!(html.contains("&lt;/script&gt;&lt;b&gt;v3") && !html.contains("<b>v3"));
    assert!(html.contains("client CPU near 100% &lt;i&gt;"));
    assert!(html.contains(
        "<li><code>annbench run --label &#39;&lt;/script&gt;&lt;b&gt;v3&#39;</code> (1 point)</li>"
    ));
    for section in ["qps", "builds", "clients", "compare", "meta"] {
        assert!(
            html.contains(&format!("<section id=\"{section}\">")),
            "{section}"
        );
    }

    let data = chart_data(&html);
    let tips = data["tips"].as_array().unwrap();
    let charts = data["charts"].as_array().unwrap();
    let ids: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
    // Three labels, no times: by name, the first is the base and the others compare with it.
    assert_eq!(
        ids,
        [
            "qps-recall",
            "build-time",
            "index-size",
            "qps-clients",
            "compare-0",
            "compare-1"
        ]
    );
    for chart in &charts[..3] {
        let pts: Vec<&Value> = chart["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|d| d["points"].as_array().unwrap())
            .collect();
        assert_eq!(pts.len(), 9, "{}: every point drawn once", chart["id"]);
        let mut tip_ids: Vec<i64> = pts.iter().map(|p| p[2].as_i64().unwrap()).collect();
        tip_ids.sort();
        assert_eq!(tip_ids, (0..9).collect::<Vec<i64>>());
    }
    assert_eq!(charts[0]["y"]["log"], true);
    // QPS points carry a bar: their confidence interval (0.99 x QPS to 1.01 x QPS here); the
    // build charts have none.
    assert!(html.contains("its confidence interval"));
    for d in charts[0]["datasets"].as_array().unwrap() {
        for p in d["points"].as_array().unwrap() {
            let qps = p[1].as_f64().unwrap();
            assert_eq!(p.as_array().unwrap().len(), 5, "{p}");
            assert!(
                (p[3].as_f64().unwrap() - 0.99 * qps).abs() < 1e-6
                    && (p[4].as_f64().unwrap() - 1.01 * qps).abs() < 1e-6,
                "{p}"
            );
        }
    }
    let build_points = charts[1]["datasets"][0]["points"].as_array().unwrap();
    assert!(
        build_points
            .iter()
            .all(|p| p.as_array().unwrap().len() == 3)
    );
    // One legend entry per series: mariadb v1, v2 (1 and 4 clients), </script>v3; pgvector v1.
    let legend: Vec<&str> = charts[0]["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["legend"] == true)
        .map(|d| d["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        legend,
        [
            "MariaDB [</script><b>v3] x1 clients",
            "MariaDB [v1] x1 clients",
            "MariaDB [v2] x1 clients",
            "MariaDB [v2] x4 clients",
            "PGVector [v1] x1 clients",
        ]
    );
    // pgvector's three points are all on its frontier: none beats another on both.
    let pg: Vec<&Value> = charts[0]["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["label"].as_str().unwrap().starts_with("PGVector"))
        .collect();
    assert_eq!(pg.len(), 1);
    let recalls: Vec<f64> = pg[0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_f64().unwrap())
        .collect();
    assert_eq!(recalls, [0.90, 0.96, 0.98]);
    // v2 against the base (v3 by name): mariadb m=16 ef_search=20/40 match nothing of v3's
    // ef_search=80 by parameters, but at recall thresholds both reach 0.95 to 0.99.
    let cmp = &charts[5];
    let tip_of = |p: &Value| tips[p[2].as_u64().unwrap() as usize].clone();
    let ratio_points: Vec<&Value> = cmp["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["label"] != "parity (1.0)")
        .flat_map(|d| d["points"].as_array().unwrap())
        .collect();
    assert!(!ratio_points.is_empty());
    for p in ratio_points {
        let tip = tip_of(p);
        assert!(
            tip[1]
                .as_str()
                .unwrap()
                .starts_with("v2 / </script><b>v3: "),
            "{tip}"
        );
    }
    // The point tips carry the figures; the comparison's tips follow them.
    assert!(tips.len() > 9);
    let tip0: Vec<&str> = tips[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tip0[0], "MariaDB(m=16, ef_search=80)");
    assert!(tip0.iter().any(|l| l.starts_with("QPS 600.0")), "{tip0:?}");
}

#[test]
fn frontier_of_build_cost_and_dropped_points() {
    let mut pts = points();
    pts.retain(|p| p.algorithm == "pgvector");
    pts[0].index_size_bytes = None;
    let html = html_report(pts, &ReportOptions::default()).unwrap();
    let data = chart_data(&html);
    let size = &data["charts"][2];
    assert_eq!(size["id"], "index-size");
    let n: usize = size["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["points"].as_array().unwrap().len())
        .sum();
    assert_eq!(n, 2);
    assert!(html.contains("1 point without a known index size is not drawn"));
    // Build seconds 8 (recall up to 0.96) and 16 (0.98): both on the cheapest-build steps.
    let time = &data["charts"][1]["datasets"][0];
    assert_eq!(time["stepped"], true);
    assert_eq!(time["points"].as_array().unwrap().len(), 2);
    // One label: no comparison; one client count: no clients view.
    assert!(!html.contains("<section id=\"compare\">"));
    assert!(!html.contains("<section id=\"clients\">"));
}

#[test]
fn errors_name_the_input_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = annbench(dir.path(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no results for dataset 'glove-25-angular'"),
        "{err}"
    );

    for p in &points() {
        write_point(dir.path(), p).unwrap();
    }
    let html = dir.path().join("report.html");
    let out = annbench(dir.path(), &["--base", "v9", "-o", html.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--base v9") && err.contains("v1, v2"), "{err}");

    let missing = dir.path().join("no/such/dir/report.html");
    let out = annbench(dir.path(), &["-o", missing.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot write") && err.contains("no/such/dir"),
        "{err}"
    );
}
