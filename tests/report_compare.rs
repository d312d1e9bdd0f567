//! `compare`: relative QPS of two labelled runs, checked by hand.

mod report_common;

use annbench::report::compare;
use annbench::report::compare::MatchKind;
use annbench::report::render::Format;
use annbench::results::PointResult;
use report_common::{assert_golden, labelled, pt};

fn points() -> Vec<PointResult> {
    let m = |ef, r, q, l| labelled(pt("mariadb", &[("M", 16)], &[("ef_search", ef)], r, q), l);
    let p = |r, q, l| {
        labelled(
            pt(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", 40)],
                r,
                q,
            ),
            l,
        )
    };
    vec![
        m(20, 0.97, 1000.0, "v1"),
        m(20, 0.97, 1100.0, "v2"),
        m(40, 0.99, 800.0, "v1"),
        m(40, 0.991, 1000.0, "v2"),
        m(80, 0.995, 500.0, "v1"), // no v2 counterpart
        m(10, 0.90, 2000.0, "v2"), // no v1 counterpart
        p(0.99, 400.0, "v1"),
        p(0.99, 300.0, "v2"),
    ]
}

#[test]
fn ratios_and_statistics_by_hand() {
    let c = compare(&points(), "v1", "v2", &[0.999, 0.99, 0.97]).unwrap();
    let by_params: Vec<f64> = c
        .rows
        .iter()
        .filter(|r| r.kind == MatchKind::Params)
        .map(|r| r.ratio.unwrap())
        .collect();
    // mariadb ef 20: 1100/1000, ef 40: 1000/800, pgvector: 300/400.
    assert_eq!(by_params, vec![1.1, 1.25, 0.75]);
    let s = c.params_summary.as_ref().unwrap();
    assert_eq!((s.n, s.min, s.max, s.median), (3, 0.75, 1.25, 1.1));
    // mean 31/30; deviations 2/30, 6.5/30, -8.5/30 -> squares sum 118.5/900, over n-1 = 2.
    assert!((s.mean - 31.0 / 30.0).abs() < 1e-12);
    assert!((s.stddev.unwrap() - (118.5f64 / 900.0 / 2.0).sqrt()).abs() < 1e-12);

    let by_recall: Vec<(f64, &str, Option<f64>)> = c
        .rows
        .iter()
        .filter(|r| r.kind == MatchKind::Recall)
        .map(|r| (r.threshold.unwrap(), r.algorithm.as_str(), r.ratio))
        .collect();
    // 0.999: nobody reaches it (no ratio); 0.99: mariadb 1000/800, pgvector 300/400;
    // 0.97: mariadb 1100/1000, pgvector 300/400.
    assert_eq!(
        by_recall,
        vec![
            (0.999, "mariadb", None),
            (0.999, "pgvector", None),
            (0.99, "mariadb", Some(1.25)),
            (0.99, "pgvector", Some(0.75)),
            (0.97, "mariadb", Some(1.1)),
            (0.97, "pgvector", Some(0.75)),
        ]
    );
    let s = c.recall_summary.as_ref().unwrap();
    assert_eq!((s.n, s.min, s.max, s.median), (4, 0.75, 1.25, 0.925));
    assert!((s.mean - 0.9625).abs() < 1e-12);
}

#[test]
fn golden_markdown_and_json() {
    let c = compare(&points(), "v1", "v2", &[0.999, 0.99]).unwrap();
    assert_golden("compare.md", &c.render(Format::Markdown).unwrap());
    assert_golden("compare.json", &c.render(Format::Json).unwrap());
    let csv = c.render(Format::Csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 + 4, "{csv}");
}

#[test]
fn label_errors_name_the_labels() {
    let pts = points();
    let err = compare(&pts, "v1", "v3", &[0.99]).unwrap_err().to_string();
    assert!(err.contains("'v3'") && err.contains("v1, v2"), "{err}");
    let err = compare(&pts, "v1", "v1", &[0.99]).unwrap_err().to_string();
    assert!(err.contains("two different labels"), "{err}");
    let unlabelled = vec![pt("mariadb", &[], &[], 0.9, 1.0)];
    let err = compare(&unlabelled, "a", "b", &[0.99])
        .unwrap_err()
        .to_string();
    assert!(err.contains("--label"), "{err}");
}
