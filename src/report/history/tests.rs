use super::order::Order;
use super::*;
use crate::report::testutil::point;
use crate::results::ServerCost;

/// A run of two points labelled `label`, started at hour `hour`, on `host`: QPS `qps` and
/// `qps / 2` (ef_search 10 and 40), server CPU per query `cpu`.
fn run(label: &str, hour: u32, host: &str, qps: f64, cpu: f64) -> Vec<PointResult> {
    [(10, qps, 0.9), (40, qps / 2.0, 0.99)]
        .into_iter()
        .map(|(ef, q, recall)| {
            let mut p = point("mariadb", &[("M", 16)], &[("ef_search", ef)], recall, q);
            p.label = Some(label.into());
            p.environment.started_at = Some(format!("2026-12-01T{hour:02}:00:00Z"));
            p.environment.hostname = host.into();
            p.environment.server_version = format!("MariaDB 11.{hour}.0");
            p.metrics.server = Some(ServerCost {
                cpu_per_query: Some(cpu),
                voluntary_switches_per_query: Some(2.0),
                involuntary_switches_per_query: Some(0.0),
                ..ServerCost::default()
            });
            p
        })
        .collect()
}

/// 12 runs whose QPS drops by 40% and CPU per query rises by 60% from run 7 on, with
/// deterministic noise below 1%.
fn stepped() -> Vec<PointResult> {
    (0..12)
        .flat_map(|i| {
            let wobble = [
                0.3, -0.5, 0.8, -0.2, 0.1, -0.7, 0.6, -0.4, 0.2, -0.1, 0.5, -0.6,
            ][i];
            let (qps, cpu) = if i < 6 {
                (1000.0, 0.001)
            } else {
                (600.0, 0.0016)
            };
            run(
                &format!("nightly-{}", i + 1),
                i as u32,
                "node-1",
                qps * (1.0 + wobble / 100.0),
                cpu * (1.0 - wobble / 100.0),
            )
        })
        .collect()
}

#[test]
fn a_step_is_found_at_its_run_on_every_point_and_metric_it_moved() {
    let h = history(&stepped(), &HistoryOptions::default()).unwrap();
    assert_eq!(h.elements.len(), 12);
    assert_eq!(h.elements[0].label, "nightly-1");
    let points: Vec<&Line> = h
        .lines
        .iter()
        .filter(|l| matches!(l.key, LineKey::Point { .. }))
        .collect();
    assert_eq!(points.len(), 2);
    for line in &points {
        let found: Vec<(HistMetric, usize, bool)> = line
            .changes
            .iter()
            .map(|c| (c.metric, c.index, c.regression))
            .collect();
        assert_eq!(
            found,
            vec![
                (HistMetric::Qps, 6, true),
                (HistMetric::CpuPerQuery, 6, true)
            ],
            "{}",
            line.name
        );
        let qps = line
            .changes
            .iter()
            .find(|c| c.metric == HistMetric::Qps)
            .unwrap();
        assert!((qps.forward_change_percent + 40.0).abs() < 1.5, "{qps:?}");
        assert_eq!(qps.label, "nightly-7");
        assert!(qps.pvalue < 1e-6);
    }
    assert_eq!(h.current_regressions().len(), h.changes().count());
    // Every metric of every line has values (constant ones too): all are searched.
    assert_eq!(h.tested_series(), h.lines.len() * 4);
    assert_eq!(h.gate().len(), h.changes().count());
    // The ratio of run 12 to run 1 reads the drop.
    let table = h.long_table();
    let text = crate::report::render::to_csv(&table).unwrap();
    assert!(text.contains("qps_ratio"), "{text}");
}

#[test]
fn no_change_and_a_recovery_pass_the_gate() {
    let flat: Vec<PointResult> = (0..12)
        .flat_map(|i| {
            let w = [
                0.3, -0.5, 0.8, -0.2, 0.1, -0.7, 0.6, -0.4, 0.2, -0.1, 0.5, -0.6,
            ][i];
            run(
                &format!("r{i}"),
                i as u32,
                "h",
                1000.0 * (1.0 + w / 100.0),
                0.001,
            )
        })
        .collect();
    let h = history(&flat, &HistoryOptions::default()).unwrap();
    assert_eq!(h.changes().count(), 0);
    assert!(h.current_regressions().is_empty());

    // Down at run 5, back up at run 9: two change points, and the newest run is fine. (At
    // Otava's window of 50 neither is found: its first cut's t-test takes the whole rest.)
    let back: Vec<PointResult> = (0..12)
        .flat_map(|i| {
            let w = [
                0.3, -0.5, 0.8, -0.2, 0.1, -0.7, 0.6, -0.4, 0.2, -0.1, 0.5, -0.6,
            ][i];
            let level = if (4..8).contains(&i) { 500.0 } else { 1000.0 };
            run(
                &format!("r{i}"),
                i as u32,
                "h",
                level * (1.0 + w / 100.0),
                0.001,
            )
        })
        .collect();
    let h = history(&back, &HistoryOptions::default()).unwrap();
    let line = &h.lines[0];
    let qps: Vec<(usize, bool)> = line
        .changes
        .iter()
        .filter(|c| c.metric == HistMetric::Qps)
        .map(|c| (c.index, c.regression))
        .collect();
    assert_eq!(qps, vec![(4, true), (8, false)]);
    assert!(h.current_regressions().is_empty());
}

#[test]
fn an_improvement_is_not_a_regression() {
    let mut pts = stepped();
    // Reverse time: the same series read backwards improves at run 7.
    for p in &mut pts {
        let n: usize = p.label.as_ref().unwrap()[8..].parse().unwrap();
        p.environment.started_at = Some(format!("2026-12-01T{:02}:00:00Z", 12 - n));
    }
    let h = history(&pts, &HistoryOptions::default()).unwrap();
    assert!(h.changes().count() > 0);
    assert!(h.changes().all(|(_, c)| !c.regression));
    assert!(h.current_regressions().is_empty());
}

#[test]
fn hosts_are_not_mixed_unless_asked() {
    let mut pts = run("a", 1, "node-1", 100.0, 0.001);
    pts.extend(run("b", 2, "node-2", 100.0, 0.001));
    pts.extend(run("c", 3, "node-1", 100.0, 0.001));
    let err = history(&pts, &HistoryOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("node-1 (a, c); node-2 (b)") && err.contains("--hosts any"),
        "{err}"
    );
    let opts = HistoryOptions {
        hosts_any: true,
        ..HistoryOptions::default()
    };
    let h = history(&pts, &opts).unwrap();
    assert!(
        h.notes.iter().any(|n| n.contains("2 hosts")),
        "{:?}",
        h.notes
    );
}

#[test]
fn orders_given_by_time_and_by_version() {
    let mut pts = run("v-11.10", 3, "h", 100.0, 0.001);
    pts.extend(run("v-11.9", 1, "h", 100.0, 0.001));
    pts.extend(run("v-11.2", 2, "h", 100.0, 0.001));
    for p in &mut pts {
        let v = p.label.clone().unwrap()[2..].to_string();
        p.environment.server_version = format!("MariaDB {v}.0-MariaDB");
    }
    let labels = |o: HistoryOptions| -> Vec<String> {
        history(&pts, &o)
            .unwrap()
            .elements
            .into_iter()
            .map(|e| e.label)
            .collect()
    };
    assert_eq!(
        labels(HistoryOptions::default()),
        ["v-11.9", "v-11.2", "v-11.10"]
    );
    let by_version = HistoryOptions {
        order: Order::Version,
        ..HistoryOptions::default()
    };
    assert_eq!(labels(by_version), ["v-11.2", "v-11.9", "v-11.10"]);
    let given = HistoryOptions {
        order: Order::Given,
        series: vec!["v-11.10".into(), "v-11.2*".into()],
        ..HistoryOptions::default()
    };
    assert_eq!(labels(given), ["v-11.10", "v-11.2"]);
    let wrong = HistoryOptions {
        series: vec!["nightly-*".into()],
        ..HistoryOptions::default()
    };
    let err = history(&pts, &wrong).unwrap_err().to_string();
    assert!(
        err.contains("no label matches 'nightly-*'") && err.contains("v-11.9"),
        "{err}"
    );
}

#[test]
fn a_missing_point_is_shown_missing_and_left_out_of_detection() {
    let mut pts = stepped();
    // Run 3 lost its ef_search=40 point.
    pts.retain(|p| !(p.label.as_deref() == Some("nightly-3") && p.query_args["ef_search"] == 40));
    let h = history(&pts, &HistoryOptions::default()).unwrap();
    let line = h
        .lines
        .iter()
        .find(|l| l.name.contains("ef_search=40"))
        .unwrap();
    assert!(line.values[2].is_none());
    assert!(
        h.notes.iter().any(|n| n.contains("lack some runs")),
        "{:?}",
        h.notes
    );
    assert!(
        line.changes
            .iter()
            .any(|c| c.metric == HistMetric::Qps && c.index == 6)
    );
    let text = h.render(HistoryFormat::Text).unwrap();
    assert!(text.contains("·····"), "{text}");
    assert!(text.contains("-40."), "{text}");
}

#[test]
fn bad_options_and_no_labels_are_refused_in_words() {
    let mut pts = stepped();
    let opts = HistoryOptions {
        change: changepoint::Options {
            window: 1,
            ..HistoryOptions::default().change
        },
        ..HistoryOptions::default()
    };
    assert!(
        history(&pts, &opts)
            .unwrap_err()
            .to_string()
            .contains("--window 1")
    );
    let base = HistoryOptions {
        base: Some("nope".into()),
        ..HistoryOptions::default()
    };
    assert!(
        history(&pts, &base)
            .unwrap_err()
            .to_string()
            .contains("--base nope")
    );
    for p in &mut pts {
        p.label = None;
    }
    let err = history(&pts, &HistoryOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no point has a label"), "{err}");
}

#[test]
fn json_carries_otavas_fields() {
    let h = history(&stepped(), &HistoryOptions::default()).unwrap();
    let v = h.json();
    let cp = &v["change_points"][0];
    for f in [
        "metric",
        "index",
        "label",
        "time",
        "forward_change_percent",
        "magnitude",
        "mean_before",
        "stddev_before",
        "mean_after",
        "stddev_after",
        "pvalue",
    ] {
        assert!(!cp[f].is_null(), "{f}: {cp}");
    }
    assert_eq!(v["newest_after_regression"], true);
    assert_eq!(v["elements"].as_array().unwrap().len(), 12);
}

#[test]
fn a_point_the_grid_dropped_is_not_a_regression() {
    // ef_search=40 in runs 1-3 only (run 3 noisy and low), ef_search=80 in runs 4-6 only: a
    // filled copy of one value t-tested as if measured again made a "regression" at p = 7e-7.
    let mut pts = Vec::new();
    for i in 0..6u32 {
        let label = format!("g-{}", i + 1);
        let mut add = |ef: i64, qps: f64| {
            let mut p = point("pgvector", &[("M", 8)], &[("ef_search", ef)], 0.95, qps);
            p.label = Some(label.clone());
            p.environment.started_at = Some(format!("2026-12-01T0{i}:00:00Z"));
            pts.push(p);
        };
        add(10, 1000.0 + f64::from(i));
        if i < 3 {
            add(40, [800.0, 810.0, 300.0][i as usize]);
        } else {
            add(80, 500.0 + f64::from(i));
        }
    }
    let h = history(&pts, &HistoryOptions::default()).unwrap();
    assert_eq!(
        h.changes().count(),
        0,
        "{:?}",
        h.changes().collect::<Vec<_>>()
    );
    assert!(h.gate().is_empty());
    assert!(
        h.notes.iter().any(|n| n.contains("lack some runs")),
        "{:?}",
        h.notes
    );
}

#[test]
fn duplicate_thresholds_make_one_line_and_runs_count_from_one() {
    let opts = HistoryOptions {
        thresholds: vec![0.9, 0.9, 0.9],
        ..HistoryOptions::default()
    };
    let h = history(&stepped(), &opts).unwrap();
    let thresholds = h
        .lines
        .iter()
        .filter(|l| matches!(l.key, LineKey::Threshold { .. }))
        .count();
    assert_eq!(thresholds, 1);
    let md = h.render(HistoryFormat::Markdown).unwrap();
    // The change point at nightly-7 is run 7 everywhere people read it (index 6 in JSON).
    let t = h.changes_table();
    let col = |name: &str| t.columns.iter().position(|c| c.name == name).unwrap();
    use crate::report::render::Cell;
    assert!(!t.rows.is_empty());
    assert!(
        t.rows
            .iter()
            .all(|r| r[col("run")] == Cell::Int(7) && r[col("index")] == Cell::Int(6))
    );
    assert!(!t.columns[col("run")].in_machine && !t.columns[col("index")].in_markdown);
    assert!(
        md.contains("server CPU ms/q") && md.contains("s/query"),
        "{md}"
    );
    let unreached = HistoryOptions {
        thresholds: vec![0.999],
        ..HistoryOptions::default()
    };
    let h = history(&stepped(), &unreached).unwrap();
    assert!(
        h.notes
            .iter()
            .any(|n| n.contains("no run reaches recall >= 0.999")),
        "{:?}",
        h.notes
    );
}

#[test]
fn versions_of_two_products_and_an_empty_store_are_refused() {
    let mut pts = run("m", 1, "h", 100.0, 0.001);
    pts.extend(run("p", 2, "h", 100.0, 0.001));
    for p in &mut pts {
        if p.label.as_deref() == Some("p") {
            p.environment.server_version = "PostgreSQL 17.6, pgvector 0.8.0".into();
        }
    }
    let by_version = HistoryOptions {
        order: Order::Version,
        ..HistoryOptions::default()
    };
    let err = history(&pts, &by_version).unwrap_err().to_string();
    assert!(
        err.contains("different servers (MariaDB, PostgreSQL)"),
        "{err}"
    );
    let err = history(&[], &HistoryOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no stored results"), "{err}");
    let only = HistoryOptions {
        algorithms: vec!["nope".into()],
        ..HistoryOptions::default()
    };
    let err = history(&pts, &only).unwrap_err().to_string();
    assert!(err.contains("the store holds mariadb"), "{err}");
}

#[test]
fn a_threshold_the_newest_run_no_longer_reaches_is_said() {
    let mut pts = stepped();
    // The newest run's ef_search=40 point falls to recall 0.97: no run reaches 0.99 there.
    for p in &mut pts {
        if p.label.as_deref() == Some("nightly-12") && p.query_args["ef_search"] == 40 {
            p.metrics.recall = 0.97;
        }
    }
    let h = history(&pts, &HistoryOptions::default()).unwrap();
    let lost: Vec<&String> = h
        .notes
        .iter()
        .filter(|n| n.contains("no longer reaches"))
        .collect();
    assert_eq!(lost.len(), 1, "{:?}", h.notes);
    assert!(
        lost[0].contains("0.99") && lost[0].contains("nightly-12"),
        "{lost:?}"
    );
    assert!(
        h.render(HistoryFormat::Text)
            .unwrap()
            .contains("no longer reaches")
    );
    // A threshold reached by the newest run only is no loss.
    let h = history(&stepped(), &HistoryOptions::default()).unwrap();
    assert!(
        !h.notes.iter().any(|n| n.contains("no longer reaches")),
        "{:?}",
        h.notes
    );
}

#[test]
fn memory_share_series_are_not_runs_unless_named() {
    let mut pts = stepped();
    let mut share = run("mem50", 13, "node-1", 100.0, 0.01);
    for p in &mut share {
        p.environment
            .server_settings
            .insert("annbench.memory_share".into(), "0.5".into());
    }
    pts.extend(share.clone());
    let h = history(&pts, &HistoryOptions::default()).unwrap();
    assert_eq!(h.elements.len(), 12);
    assert!(
        h.notes
            .iter()
            .any(|n| n.contains("1 --memory share series left out (mem50)")),
        "{:?}",
        h.notes
    );
    let named = HistoryOptions {
        series: vec!["nightly-*".into(), "mem50".into()],
        ..HistoryOptions::default()
    };
    assert_eq!(history(&pts, &named).unwrap().elements.len(), 13);
    let e = history(&share, &HistoryOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("--memory share series only"), "{e}");
}
