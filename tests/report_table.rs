//! Best-QPS-at-recall tables from fixed point sets, compared with golden files.

mod report_common;

use annbench::report::render::{Format, render};
use annbench::report::{DEFAULT_THRESHOLDS, best_at_recall};
use annbench::report::{Stat, apply_stat};
use report_common::{assert_golden, built, labelled, pt, with_clients, with_passes};

/// Two MariaDB builds, two pgvector builds and one halfvec build; nobody reaches 1.0.
fn mixed() -> Vec<annbench::results::PointResult> {
    let pg = |m, ef, r, q| {
        pt(
            "pgvector",
            &[("M", m), ("ef_construction", 64)],
            &[("ef_search", ef)],
            r,
            q,
        )
    };
    vec![
        built(
            pt("mariadb", &[("M", 12)], &[("ef_search", 10)], 0.95, 2000.0),
            10.5,
        ),
        // 0.98999 must not count for 0.99.
        built(
            pt(
                "mariadb",
                &[("M", 12)],
                &[("ef_search", 20)],
                0.98999,
                1500.0,
            ),
            10.5,
        ),
        // Exactly 0.99 counts for 0.99; same QPS as M=16 ef=40 which has the higher recall.
        built(
            pt("mariadb", &[("M", 12)], &[("ef_search", 40)], 0.99, 1200.0),
            10.5,
        ),
        built(
            pt("mariadb", &[("M", 16)], &[("ef_search", 40)], 0.995, 1200.0),
            14.25,
        ),
        built(pg(16, 20, 0.96, 900.0), 8.0),
        // Same QPS and recall at M=8 and M=16: the shorter build (M=8) wins.
        built(pg(16, 40, 0.991, 600.0), 8.0),
        built(pg(8, 40, 0.991, 600.0), 5.0),
        built(pg(16, 80, 0.999, 300.0), 8.0),
        pt(
            "pgvector_halfvec",
            &[("M", 16), ("ef_construction", 64)],
            &[("ef_search", 40)],
            0.97,
            700.0,
        ),
    ]
}

#[test]
fn ties_unreached_threshold_and_base_ratio() {
    let table = best_at_recall(&mixed(), &[1.0, 0.99, 0.95], Some("pgvector")).unwrap();
    assert_golden(
        "table_mixed.md",
        &render(&table.to_table(), Format::Markdown).unwrap(),
    );
    assert_golden(
        "table_mixed.csv",
        &render(&table.to_table(), Format::Csv).unwrap(),
    );
    assert_golden(
        "table_mixed.json",
        &render(&table.to_table(), Format::Json).unwrap(),
    );
}

#[test]
fn recall_filter_is_exactly_at_or_above() {
    let pts = vec![
        pt("mariadb", &[("M", 8)], &[("ef_search", 1)], 0.98999, 500.0),
        pt("mariadb", &[("M", 8)], &[("ef_search", 2)], 0.99, 100.0),
    ];
    let t = best_at_recall(&pts, &[0.99, 0.98], None).unwrap();
    let best: Vec<(f64, f64)> = t
        .rows
        .iter()
        .map(|r| (r.threshold, r.best.as_ref().unwrap().recall))
        .collect();
    assert_eq!(best, vec![(0.99, 0.99), (0.98, 0.98999)]);
    let only_below = best_at_recall(&pts[..1], &[0.99], None).unwrap();
    assert_eq!(only_below.rows[0].best, None);
    assert_eq!(only_below.rows[0].max_recall, Some(0.98999));
}

#[test]
fn one_algorithm_only_default_thresholds() {
    let pts: Vec<_> = [
        (10, 0.9, 3000.0),
        (20, 0.96, 2100.0),
        (40, 0.985, 1500.0),
        (80, 1.0, 800.0),
    ]
    .iter()
    .map(|&(ef, r, q)| pt("mariadb", &[("M", 16)], &[("ef_search", ef)], r, q))
    .collect();
    let table = best_at_recall(&pts, &DEFAULT_THRESHOLDS, None).unwrap();
    assert_golden(
        "table_one_algorithm.md",
        &render(&table.to_table(), Format::Markdown).unwrap(),
    );
}

#[test]
fn several_labels_and_clients_get_their_own_rows() {
    let a = |ef, r, q| pt("mariadb", &[("M", 16)], &[("ef_search", ef)], r, q);
    let pts = vec![
        labelled(a(20, 0.97, 1000.0), "11.4"),
        labelled(a(40, 0.99, 700.0), "11.4"),
        labelled(a(20, 0.97, 1300.0), "11.8"),
        labelled(a(40, 0.99, 900.0), "11.8"),
        labelled(with_clients(a(20, 0.97, 3100.0), 4), "11.8"),
        labelled(with_clients(a(40, 0.99, 2500.0), 4), "11.8"),
        // The only pgvector series (1 client, its own label) is the base of every 1-client
        // row; 4-client rows have no base to compare with.
        labelled(
            pt(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", 40)],
                0.992,
                500.0,
            ),
            "pg17",
        ),
    ];
    let table = best_at_recall(&pts, &[0.99, 0.97], Some("pgvector")).unwrap();
    assert_golden(
        "table_labels_clients.md",
        &render(&table.to_table(), Format::Markdown).unwrap(),
    );
}

#[test]
fn bad_base_and_thresholds_are_named() {
    let pts = mixed();
    let err = best_at_recall(&pts, &[0.9], Some("faiss"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("faiss") && err.contains("mariadb, pgvector"),
        "{err}"
    );
    let err = best_at_recall(&pts, &[99.0], None).unwrap_err().to_string();
    assert!(err.contains("99") && err.contains("0..1"), "{err}");
    assert!(best_at_recall(&[], &[0.9], None).is_err());
}

#[test]
fn pareto_frontiers_golden() {
    let pts = mixed();
    let distinct = annbench::report::series::Distinct::of(&pts);
    let t = annbench::report::pareto::frontier_table(&annbench::report::pareto(&pts), distinct);
    assert_golden("pareto_mixed.md", &render(&t, Format::Markdown).unwrap());
}

#[test]
fn a_winner_whose_interval_overlaps_the_runner_up_is_a_tie() {
    // The case: one outlier pass (13,146) made ef_search=20 "beat" ef_search=10 at the
    // same M under best-of-N. With medians ef_search=10 wins, and the intervals overlap: a tie,
    // with the runner-up named. At M=12 the winner is clear of its runner-up: no tie.
    let p = |m, ef, r, q: &[f64]| {
        with_passes(
            pt("mariadb", &[("M", m)], &[("ef_search", ef)], r, 1.0),
            q,
            &[],
        )
    };
    let pts = [
        p(
            24,
            10,
            0.96,
            &[10000.0, 10100.0, 9900.0, 10050.0, 9950.0, 10000.0],
        ),
        p(
            24,
            20,
            0.97,
            &[9066.0, 13146.0, 7520.0, 9100.0, 9000.0, 9050.0],
        ),
        p(
            12,
            10,
            0.90,
            &[20000.0, 20100.0, 19900.0, 20050.0, 19950.0, 20000.0],
        ),
        p(
            12,
            20,
            0.91,
            &[15000.0, 15100.0, 14900.0, 15050.0, 14950.0, 15000.0],
        ),
    ];
    let t = best_at_recall(&pts[..2], &[0.95], None).unwrap();
    let b = t.rows[0].best.as_ref().unwrap();
    assert_eq!(b.name, "MariaDB(m=24, ef_search=10)");
    assert_eq!(b.qps, 10000.0);
    assert!(b.tie);
    let r = b.runner_up.as_ref().unwrap();
    assert_eq!(
        (r.name.as_str(), r.qps),
        ("MariaDB(m=24, ef_search=20)", 9058.0)
    );
    let md = render(&t.to_table(), Format::Markdown).unwrap();
    assert!(
        md.contains("tie with (runner-up)")
            && md.contains("MariaDB(m=24, ef_search=20): 9058.0 [7520.0, 13146.0]"),
        "{md}"
    );
    let clear = best_at_recall(&pts[2..], &[0.9], None).unwrap();
    let b = clear.rows[0].best.as_ref().unwrap();
    assert_eq!(b.name, "MariaDB(m=12, ef_search=10)");
    assert!(!b.tie && b.runner_up.is_some());
    let md = render(&clear.to_table(), Format::Markdown).unwrap();
    assert!(!md.contains("tie with"), "{md}");
    // The old view: the best pass wins, no intervals, no ties.
    let mut best = pts[..2].to_vec();
    apply_stat(&mut best, Stat::Best);
    let t = best_at_recall(&best, &[0.95], None).unwrap();
    let b = t.rows[0].best.as_ref().unwrap();
    assert_eq!(
        (b.name.as_str(), b.qps),
        ("MariaDB(m=24, ef_search=20)", 13146.0)
    );
    assert!(!b.tie && b.interval.is_none());
}

#[test]
fn flagged_points_show_a_tilde() {
    let heavy = [true, true, true, false, false, false];
    let p = with_passes(
        pt("mariadb", &[("M", 8)], &[("ef_search", 10)], 0.99, 1.0),
        &[950.0, 1000.0, 960.0, 1010.0, 990.0, 1000.0],
        &heavy,
    );
    assert_eq!(p.metrics.flags, vec![annbench::results::Flag::Interference]);
    let t = best_at_recall(&[p], &[0.9], None).unwrap();
    let md = render(&t.to_table(), Format::Markdown).unwrap();
    assert!(md.contains("| ~995.0 [950.0, 1010.0]"), "{md}");
    let csv = render(&t.to_table(), Format::Csv).unwrap();
    assert!(csv.contains(",interference,"), "{csv}");
}

#[test]
fn server_cost_columns_show_the_winners_cost_per_query() {
    use annbench::results::ServerCost;
    let mut pts = mixed();
    for p in &mut pts {
        p.metrics.server = Some(ServerCost {
            cpu_per_query: Some(0.0004),
            voluntary_switches_per_query: Some(1.5),
            involuntary_switches_per_query: Some(0.5),
            exec_per_query: Some(0.0003),
            client_network_per_query: Some(0.0001),
            buffer_hits_per_query: Some(120.0),
            buffer_reads_per_query: Some(0.0),
            ..ServerCost::default()
        });
    }
    let mut t = best_at_recall(&pts, &[0.95], None).unwrap();
    let plain = render(&t.to_table(), Format::Markdown).unwrap();
    assert!(!plain.contains("server CPU"), "{plain}");
    t.server_cost = true;
    let md = render(&t.to_table(), Format::Markdown).unwrap();
    assert!(
        md.contains("server CPU ms/q") && md.contains("client+net ms/q"),
        "{md}"
    );
    assert!(
        md.contains("0.400") && md.contains("2.00") && md.contains("120.0"),
        "{md}"
    );
    let json = render(&t.to_table(), Format::Json).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    assert_eq!(rows[0]["server_cpu_ms"], 0.4);
    assert_eq!(rows[0]["server_exec_ms"], 0.3);
    // No storage figure measured: no storage column in Markdown, empty in JSON.
    assert!(!md.contains("storage"), "{md}");
    assert_eq!(rows[0]["storage"], serde_json::Value::Null);
}

/// The storage figures and the cached / IO-bound mark of each winner, in the plain table (the
/// mark) and with `--server-cost` (the figures).
#[test]
fn storage_mark_and_figures_show_per_winner() {
    use annbench::results::ServerCost;
    let mut pts = mixed();
    for (i, p) in pts.iter_mut().enumerate() {
        let kib = if i % 2 == 0 { 0.0 } else { 48.0 };
        p.metrics.server = Some(ServerCost {
            io_reads_per_query: Some(kib / 8.0),
            io_read_kib_per_query: Some(kib),
            io_write_kib_per_query: Some(0.25),
            server_read_kib_per_query: Some(kib),
            io_bound: Some(kib > annbench::results::IO_BOUND_KIB_PER_QUERY),
            ..ServerCost::default()
        });
    }
    let mut t = best_at_recall(&pts, &[0.95], None).unwrap();
    let plain = render(&t.to_table(), Format::Markdown).unwrap();
    assert!(
        plain.contains("| storage |") || plain.contains(" storage "),
        "{plain}"
    );
    assert!(
        plain.contains("cached") || plain.contains("io-bound"),
        "{plain}"
    );
    t.server_cost = true;
    let json = render(&t.to_table(), Format::Json).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    for r in rows.iter().filter(|r| r["reached"] == true) {
        let kib = r["server_read_kib"].as_f64().unwrap();
        let mark = if kib > 1.0 { "io-bound" } else { "cached" };
        assert_eq!(r["storage"], mark, "{r}");
        assert_eq!(r["io_reads"].as_f64().unwrap(), kib / 8.0, "{r}");
        assert_eq!(r["io_read_kib"].as_f64().unwrap(), kib, "{r}");
        assert_eq!(r["io_write_kib"], 0.25, "{r}");
    }
    let md = render(&t.to_table(), Format::Markdown).unwrap();
    assert!(
        md.contains("reads/q") && md.contains("rKB/q") && md.contains("wKB/q"),
        "{md}"
    );
}

#[test]
fn blocks_layout_of_the_published_posts() {
    use annbench::report::blocks::blocks_text;
    let pts = mixed();
    let t = best_at_recall(&pts, &[0.99, 0.95], Some("mariadb")).unwrap();
    let text = blocks_text(&t, Some("mariadb"));
    assert_golden("table_blocks.txt", &text);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Best QPS with recall >= 0.99");
    assert!(
        lines[1].starts_with("recall  QPS   rel2ma  algorithm"),
        "{text}"
    );
    // The base row is 1.00; the others relative to it; the fastest first.
    assert!(lines[2].contains("1.00") && lines[2].contains("MariaDB(m=16, ef_search=40)"));
    assert!(lines[3].contains("0.50") && lines[3].contains("PGVector(m=8"));
    assert!(
        lines[4].contains("PGVector_halfvec: not reached (best recall 0.970)"),
        "{text}"
    );
    // A recall of 0.98999 is shown truncated (0.989), never as 0.990.
    assert!(!text.contains("0.990  1500"), "{text}");
    // Without a base, rows are relative to the block's fastest.
    let plain = blocks_text(&t, None);
    let second = plain.lines().nth(2).unwrap();
    assert!(
        plain.contains("rel2best") && second.contains("1.00 "),
        "{plain}"
    );
    assert!(second.ends_with("MariaDB(m=16, ef_search=40)"), "{plain}");
}

#[test]
fn a_label_can_be_the_base() {
    let pts = vec![
        labelled(
            pt("mariadb", &[("M", 16)], &[("ef_search", 40)], 0.99, 1000.0),
            "11.4",
        ),
        labelled(
            pt("mariadb", &[("M", 16)], &[("ef_search", 40)], 0.99, 1500.0),
            "11.8",
        ),
    ];
    let t = best_at_recall(&pts, &[0.99], Some("11.4")).unwrap();
    let ratios: Vec<Option<f64>> = t.rows.iter().map(|r| r.vs_base).collect();
    assert_eq!(ratios, vec![Some(1.5), Some(1.0)]);
    let err = best_at_recall(&pts, &[0.99], Some("11.9"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("11.4, 11.8") && err.contains("mariadb"),
        "{err}"
    );
}
