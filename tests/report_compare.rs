//! `compare`: ratios with intervals and verdicts checked by hand, and the A/A, A/A under load
//! and A/B classifications on synthetic pass data whose answer is known.

mod report_common;

use annbench::dataset::rng::Rng;
use annbench::report::compare::{CompareOptions, MatchKind, Verdict, compare_with};
use annbench::report::render::Format;
use annbench::report::{Stat, apply_stat, compare};
use annbench::results::PointResult;
use report_common::{assert_golden, labelled, pt, with_passes};

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
        m(20, 0.97, 1030.0, "v2"),
        m(40, 0.99, 800.0, "v1"),
        m(40, 0.991, 1000.0, "v2"),
        m(80, 0.995, 500.0, "v1"), // no v2 counterpart
        m(10, 0.90, 2000.0, "v2"), // no v1 counterpart
        p(0.99, 400.0, "v1"),
        p(0.99, 300.0, "v2"),
    ]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

#[test]
fn ratios_intervals_and_verdicts_by_hand() {
    let c = compare(&points(), "v1", "v2", &[0.999, 0.99, 0.97]).unwrap();
    let by_params: Vec<(f64, Option<Verdict>)> = c
        .rows
        .iter()
        .filter(|r| r.kind == MatchKind::Params)
        .map(|r| (r.ratio.unwrap(), r.verdict))
        .collect();
    // Every side's six passes lie within +-1% of its figure, so each ratio's interval lies
    // within about +-2% of the ratio: 1.03 is within the 5% noise, 1.25 faster, 0.75 slower.
    let expected = [
        (1.03, Verdict::WithinNoise),
        (1.25, Verdict::Above),
        (0.75, Verdict::Below),
    ];
    assert_eq!(by_params.len(), 3);
    for ((ratio, verdict), (want, v)) in by_params.iter().zip(expected) {
        assert!(close(*ratio, want), "{ratio} vs {want}");
        assert_eq!(*verdict, Some(v));
    }
    for r in c.rows.iter().filter(|r| r.ratio.is_some()) {
        let i = r.ratio_interval.unwrap();
        let ratio = r.ratio.unwrap();
        assert!(i.low <= ratio && ratio <= i.high, "{i:?} {ratio}");
        assert!(i.low >= ratio * 0.979 && i.high <= ratio * 1.021, "{i:?}");
        // 6 x 6 passes: the Mann-Whitney interval reaches 95%.
        assert!(i.level >= 0.95, "{i:?}");
    }
    // Summary: geometric mean of 1.03, 1.25, 0.75 by hand; 1 faster, 1 slower, 1 within.
    let s = c.params_summary.as_ref().unwrap();
    let g = (1.03f64.ln() + 1.25f64.ln() + 0.75f64.ln()) / 3.0;
    assert!(close(s.stats.geomean.0, g.exp()), "{:?}", s.stats.geomean);
    assert!(close(s.stats.median.0, 1.03) && close(s.stats.min.0, 0.75));
    assert!(close(s.stats.max.0, 1.25));
    assert_eq!((s.n, s.above, s.below, s.within_noise), (3, 1, 1, 1));
    let gi = s.stats.geomean.1.unwrap();
    assert!(
        gi.low < s.stats.geomean.0 && s.stats.geomean.0 < gi.high,
        "{gi:?}"
    );

    let by_recall: Vec<(f64, &str, Option<f64>)> = c
        .rows
        .iter()
        .filter(|r| r.kind == MatchKind::Recall)
        .map(|r| (r.threshold.unwrap(), r.algorithm.as_str(), r.ratio))
        .collect();
    // 0.999: nobody reaches it (no ratio); 0.99: mariadb 1000/800, pgvector 300/400;
    // 0.97: mariadb 1030/1000, pgvector 300/400.
    let want = [
        (0.999, "mariadb", None),
        (0.999, "pgvector", None),
        (0.99, "mariadb", Some(1.25)),
        (0.99, "pgvector", Some(0.75)),
        (0.97, "mariadb", Some(1.03)),
        (0.97, "pgvector", Some(0.75)),
    ];
    assert_eq!(by_recall.len(), want.len());
    for (got, want) in by_recall.iter().zip(want) {
        assert_eq!((got.0, got.1), (want.0, want.1));
        assert_eq!(got.2.is_some(), want.2.is_some());
        if let (Some(a), Some(b)) = (got.2, want.2) {
            assert!(close(a, b), "{a} {b}");
        }
    }
    assert!(
        c.notes[0].contains("build-to-build variance"),
        "{:?}",
        c.notes
    );
}

#[test]
fn the_noise_threshold_and_stat_best_change_the_verdicts() {
    let pts = points();
    // With no noise allowance, 1.03 (interval about [1.01, 1.05]) is faster.
    let opts = CompareOptions {
        thresholds: vec![0.99],
        noise: 0.0,
        ..CompareOptions::default()
    };
    let c = compare_with(&pts, "v1", "v2", &opts).unwrap();
    assert_eq!(c.rows[0].verdict, Some(Verdict::Above));
    // Best passes: ratios of the best passes, no intervals, noise threshold alone.
    let mut best = pts.clone();
    apply_stat(&mut best, Stat::Best);
    let opts = CompareOptions {
        thresholds: vec![0.99],
        stat: Stat::Best,
        ..CompareOptions::default()
    };
    let c = compare_with(&best, "v1", "v2", &opts).unwrap();
    assert!(c.rows.iter().all(|r| r.ratio_interval.is_none()));
    assert!(close(c.rows[0].ratio.unwrap(), 1.03));
    assert_eq!(c.rows[0].verdict, Some(Verdict::WithinNoise));
    assert!(c.params_summary.as_ref().unwrap().stats.geomean.1.is_none());
    let bad = CompareOptions {
        noise: 1.5,
        ..CompareOptions::default()
    };
    let err = compare_with(&pts, "v1", "v2", &bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--noise"), "{err}");
}

#[test]
fn golden_markdown_and_json() {
    let c = compare(&points(), "v1", "v2", &[0.999, 0.99]).unwrap();
    assert_golden("compare.md", &c.render(Format::Markdown).unwrap());
    assert_golden("compare.json", &c.render(Format::Json).unwrap());
    let csv = c.render(Format::Csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 + 4, "{csv}");
    let json: serde_json::Value = serde_json::from_str(&c.render(Format::Json).unwrap()).unwrap();
    let first = &json["pairs"][0];
    for key in [
        "base_qps_ci_low",
        "me_qps_ci_high",
        "ratio_ci_low",
        "ratio_ci_high",
        "verdict",
    ] {
        assert!(!first[key].is_null(), "{key}: {first}");
    }
    assert!(json["summary"][0]["geomean_ci_low"].is_number());
    assert!(json["notes"][0].as_str().unwrap().contains("randomised"));
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

/// Standard normal from the crate's seeded generator (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let (u1, u2) = (rng.uniform().max(1e-300), rng.uniform());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Two labelled runs of a 40-point grid (4 builds x 10 query points). Each point's true QPS
/// is `level(point) x scale(label)`; each pass multiplies it by a lognormal noise of `cv` and,
/// with probability `hog`, by 0.6 (a pass that shared a core with a CPU hog, flagged heavy).
fn synthetic_runs(seed: u64, cv: f64, hog: f64, b_scale: f64) -> Vec<PointResult> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for (label, scale) in [("A", 1.0), ("B", b_scale)] {
        for m in [6i64, 12, 24, 48] {
            for ef in [10i64, 20, 40, 80, 120, 200, 300, 400, 600, 800] {
                let truth = 20_000.0 / (ef as f64).sqrt() * (1.0 + m as f64 / 100.0) * scale;
                let recall = 1.0 - 1.0 / (ef as f64 + m as f64);
                let mut qps = Vec::new();
                let mut heavy = Vec::new();
                for _ in 0..6 {
                    let hit = rng.uniform() < hog;
                    let slow = if hit { 0.6 } else { 1.0 };
                    qps.push(truth * slow * (cv * normal(&mut rng)).exp());
                    heavy.push(hit);
                }
                let p = pt("mariadb", &[("M", m)], &[("ef_search", ef)], recall, truth);
                out.push(labelled(with_passes(p, &qps, &heavy), label));
            }
        }
    }
    out
}

fn verdicts(c: &annbench::report::Comparison) -> (usize, usize, usize) {
    let s = c.params_summary.as_ref().unwrap();
    assert_eq!(s.disturbed, 0);
    (s.above, s.below, s.within_noise)
}

#[test]
fn a_a_on_a_quiet_machine_finds_no_difference() {
    // 3% pass-to-pass noise (a quiet machine with 1 s passes), same truth on both sides.
    let pts = synthetic_runs(1, 0.03, 0.0, 1.0);
    let c = compare(&pts, "A", "B", &[0.99, 0.95]).unwrap();
    let (faster, slower, within) = verdicts(&c);
    assert_eq!(faster + slower + within, 40);
    assert!(within * 100 >= 95 * 40, "{faster} faster, {slower} slower");
    let g = c.params_summary.as_ref().unwrap().stats.geomean;
    assert!((0.95..=1.05).contains(&g.0), "{g:?}");
    let gi = g.1.unwrap();
    assert!(gi.low <= 1.0 && 1.0 <= gi.high, "{gi:?}");
    let interference = annbench::results::Flag::Interference;
    assert!(pts.iter().all(|p| !p.metrics.flags.contains(&interference)));
}

#[test]
fn a_a_under_a_cpu_hog_is_flagged_and_still_finds_no_difference() {
    // 10% noise and a third of the passes slowed by a hog on one of two cores.
    let pts = synthetic_runs(2, 0.10, 0.33, 1.0);
    assert!(
        pts.iter()
            .filter(|p| p
                .metrics
                .flags
                .contains(&annbench::results::Flag::Interference))
            .count()
            > 60
    );
    // Pairs with a side measured under heavy interference claim no difference...
    let c = compare(&pts, "A", "B", &[0.99, 0.95]).unwrap();
    let s = c.params_summary.as_ref().unwrap();
    assert_eq!((s.above, s.below), (0, 0));
    assert!(s.disturbed > 30, "{s:?}");
    assert!(
        c.notes.iter().any(|n| n.contains("flagged")),
        "{:?}",
        c.notes
    );
    assert!(
        c.notes.iter().any(|n| n.contains("disturbed")),
        "{:?}",
        c.notes
    );
    // ...and judged by their intervals anyway, a steady hog still shows no difference.
    let opts = CompareOptions {
        thresholds: vec![0.99, 0.95],
        judge_disturbed: true,
        ..CompareOptions::default()
    };
    let c = compare_with(&pts, "A", "B", &opts).unwrap();
    let (faster, slower, within) = verdicts(&c);
    assert!(within * 100 >= 95 * 40, "{faster} faster, {slower} slower");
    let g = c.params_summary.as_ref().unwrap().stats.geomean;
    assert!((0.95..=1.05).contains(&g.0), "{g:?}");
}

#[test]
fn load_that_changes_between_runs_is_disturbed_not_a_difference() {
    // Run B shared the machine with a hog the whole time (every pass 40% slower and heavy),
    // run A did not: judged by intervals that is "slower"; annbench calls it disturbed.
    let quiet = synthetic_runs(4, 0.03, 0.0, 1.0);
    let busy = synthetic_runs(5, 0.03, 1.0, 1.0);
    let pts: Vec<PointResult> = quiet
        .into_iter()
        .filter(|p| p.label.as_deref() == Some("A"))
        .chain(busy.into_iter().filter(|p| p.label.as_deref() == Some("B")))
        .collect();
    let c = compare(&pts, "A", "B", &[0.99]).unwrap();
    let s = c.params_summary.as_ref().unwrap();
    assert_eq!(
        (s.above, s.below, s.within_noise, s.disturbed),
        (0, 0, 0, 40)
    );
    let opts = CompareOptions {
        thresholds: vec![0.99],
        judge_disturbed: true,
        ..CompareOptions::default()
    };
    let c = compare_with(&pts, "A", "B", &opts).unwrap();
    assert_eq!(verdicts(&c), (0, 40, 0));
}

/// `p` with every pass's CPU speed probe at `us` microseconds.
fn with_probe(mut p: PointResult, us: f64) -> PointResult {
    for pass in &mut p.passes {
        let mut i = pass.interference.unwrap_or_default();
        i.cpu_probe_us = Some(us);
        pass.interference = Some(i);
    }
    p
}

#[test]
fn a_slower_cpu_in_one_run_is_disturbed_not_a_difference() {
    // The A/A failure this rule answers: run B ran while the virtual machine's cores were
    // 30% slower (no steal, no other process), so every B point is 1/1.3 as fast and its speed
    // probe takes 1.3x the CPU time. Judged by the intervals that is "slower" everywhere.
    let runs = synthetic_runs(6, 0.03, 0.0, 1.0 / 1.3);
    let probe = |p: PointResult| {
        let us = if p.label.as_deref() == Some("B") {
            260.0
        } else {
            200.0
        };
        with_probe(p, us)
    };
    let pts: Vec<PointResult> = runs.into_iter().map(probe).collect();
    let c = compare(&pts, "A", "B", &[0.99]).unwrap();
    let s = c.params_summary.as_ref().unwrap();
    assert_eq!(
        (s.above, s.below, s.within_noise, s.disturbed),
        (0, 0, 0, 40)
    );
    let note = c
        .notes
        .iter()
        .find(|n| n.contains("another speed"))
        .unwrap();
    assert!(note.contains("took +30% more CPU time in 'B'"), "{note}");
    let judged = CompareOptions {
        thresholds: vec![0.99],
        judge_disturbed: true,
        ..CompareOptions::default()
    };
    assert_eq!(
        verdicts(&compare_with(&pts, "A", "B", &judged).unwrap()),
        (0, 40, 0)
    );
    // Probes within the noise threshold (here 3%) leave the verdicts to the intervals.
    let close: Vec<PointResult> = synthetic_runs(6, 0.03, 0.0, 1.0 / 1.3)
        .into_iter()
        .map(|p| {
            let us = if p.label.as_deref() == Some("B") {
                206.0
            } else {
                200.0
            };
            with_probe(p, us)
        })
        .collect();
    let c = compare(&close, "A", "B", &[0.99]).unwrap();
    assert_eq!(verdicts(&c), (0, 40, 0));
}

#[test]
fn a_b_with_a_real_difference_is_called_significant() {
    // B is 30% faster everywhere, with 3% noise: every pair faster, the geometric mean's
    // interval excludes 1.
    let pts = synthetic_runs(3, 0.03, 0.0, 1.3);
    let c = compare(&pts, "A", "B", &[0.99]).unwrap();
    assert_eq!(verdicts(&c), (40, 0, 0));
    let g = c.params_summary.as_ref().unwrap().stats.geomean;
    assert!((1.25..=1.35).contains(&g.0), "{g:?}");
    assert!(g.1.unwrap().low > 1.05, "{g:?}");
    // ...and 30% slower the other way round.
    let c = compare(&pts, "B", "A", &[0.99]).unwrap();
    assert_eq!(verdicts(&c), (0, 40, 0));
}

/// The point with server CPU per query `cpu` on every pass (spread +-1% like its QPS).
fn with_cpu(mut p: PointResult, cpu: f64) -> PointResult {
    use annbench::results::{PassServerCost, ServerCost};
    for (pass, s) in p.passes.iter_mut().zip(report_common::SPREAD) {
        pass.server = Some(PassServerCost {
            cpu_user_seconds: Some(cpu * s * pass.queries as f64),
            cpu_system_seconds: Some(0.0),
            ..PassServerCost::default()
        });
    }
    p.metrics.server = Some(ServerCost::from_passes(&p.passes, p.metrics.latency_mean));
    p
}

#[test]
fn server_cpu_ratios_and_their_summary() {
    let mut pts = points();
    // mariadb ef_search=20: v2 costs the server half the CPU per query; ef_search=40 the same.
    pts[0] = with_cpu(pts[0].clone(), 0.002);
    pts[1] = with_cpu(pts[1].clone(), 0.001);
    pts[2] = with_cpu(pts[2].clone(), 0.003);
    pts[3] = with_cpu(pts[3].clone(), 0.003);
    let c = compare(&pts, "v1", "v2", &[0.99]).unwrap();
    let params: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.kind == MatchKind::Params)
        .collect();
    let cpu = params[0].cpu.as_ref().expect("both sides have server CPU");
    assert!(close(cpu.ratio, 0.5), "{cpu:?}");
    assert_eq!(cpu.verdict, Verdict::Below);
    let same = params[1].cpu.as_ref().unwrap();
    assert!(close(same.ratio, 1.0));
    assert_eq!(same.verdict, Verdict::WithinNoise);
    // pgvector has no server CPU: no CPU pair, the QPS pair stands.
    assert!(params[2].cpu.is_none() && params[2].ratio.is_some());
    let s = c.cpu_params_summary.as_ref().unwrap();
    assert_eq!((s.n, s.above, s.below, s.within_noise), (2, 0, 1, 1));
    assert!(close(s.stats.geomean.0, 0.5f64.sqrt()), "{s:?}");
    let md = c.render(Format::Markdown).unwrap();
    assert!(md.contains("Server CPU per query: summary"), "{md}");
    assert!(md.contains("cheaper"), "{md}");
    let json = c.to_json();
    assert_eq!(json["server_cpu_summary"][0]["n"], 2);
    assert_eq!(json["pairs"][0]["cpu_verdict"], "cheaper");
}

/// The point whose server read `kib` KiB per query from storage on every pass (spread +-1%
/// like its QPS).
fn with_reads(mut p: PointResult, kib: f64) -> PointResult {
    use annbench::results::{PassServerCost, ServerCost};
    for (pass, s) in p.passes.iter_mut().zip(report_common::SPREAD) {
        let bytes = (kib * s * 1024.0 * pass.queries as f64) as u64;
        pass.server = Some(PassServerCost {
            process_read_bytes: Some(bytes),
            device_reads: Some(bytes / 8192),
            ..PassServerCost::default()
        });
    }
    p.metrics.server = Some(ServerCost::from_passes(&p.passes, p.metrics.latency_mean));
    p
}

/// Storage reads compared like server CPU: a ratio with its interval and a verdict where both
/// sides read something, the cached or IO-bound mark of each side, and no ratio to nothing.
#[test]
fn storage_read_ratios_verdicts_and_marks() {
    let mut pts = points();
    // mariadb ef_search=20: v2 reads a third as much; ef_search=40: v1 read nothing (cached).
    pts[0] = with_reads(pts[0].clone(), 48.0);
    pts[1] = with_reads(pts[1].clone(), 16.0);
    pts[2] = with_reads(pts[2].clone(), 0.0);
    pts[3] = with_reads(pts[3].clone(), 24.0);
    let c = compare(&pts, "v1", "v2", &[0.99]).unwrap();
    let params: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.kind == MatchKind::Params)
        .collect();
    let reads = params[0]
        .reads
        .as_ref()
        .expect("both sides read from storage");
    assert!(close(reads.ratio, 1.0 / 3.0), "{reads:?}");
    let i = reads.ratio_interval.expect("an interval from the passes");
    assert!(i.low <= reads.ratio && reads.ratio <= i.high, "{i:?}");
    assert_eq!(reads.verdict, Verdict::Below);
    // A cached side read nothing: no ratio, the marks say why.
    assert!(params[1].reads.is_none());
    let json = c.to_json();
    let pair = |i: usize| &json["pairs"][i];
    assert_eq!(pair(0)["read_verdict"], "fewer");
    assert_eq!(pair(0)["base_storage"], "io-bound");
    assert_eq!(pair(1)["base_storage"], "cached");
    assert_eq!(pair(1)["me_storage"], "io-bound");
    assert_eq!(pair(1)["read_ratio"], serde_json::Value::Null);
    assert_eq!(pair(1)["base_server_read_kib"], 0.0);
    let md = c.render(Format::Markdown).unwrap();
    assert!(
        md.contains("io-bound") && md.contains("read verdict"),
        "{md}"
    );
    assert!(md.contains("Storage reads per query: summary"), "{md}");
    let s = c.read_params_summary.as_ref().unwrap();
    assert_eq!((s.n, s.above, s.below), (1, 0, 1), "{s:?}");
    assert_eq!(json["server_read_summary"][0]["n"], 1);
}

/// `point` with `version` and `settings` recorded for its server.
fn on_server(mut p: PointResult, version: &str, settings: &[(&str, &str)]) -> PointResult {
    p.environment.server_version = version.into();
    p.environment.server_settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    p
}

/// `v1` ran MariaDB and PostgreSQL, `v2` MariaDB only: `compare` (Markdown, JSON) and the HTML
/// report list the MariaDB settings that differ, and no PostgreSQL setting, which `v2` has
/// none of (each was listed as "(not recorded)").
#[test]
fn settings_are_compared_only_for_the_databases_both_labels_ran() {
    let dir = tempfile::tempdir().unwrap();
    let maria = |ef, q, label, pool| {
        on_server(
            labelled(
                pt("mariadb", &[("M", 16)], &[("ef_search", ef)], 0.97, q),
                label,
            ),
            "11.8.2-MariaDB",
            &[
                ("innodb_buffer_pool_size", pool),
                ("mhnsw_max_cache_size", "1G"),
            ],
        )
    };
    let pg = on_server(
        labelled(
            pt(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", 40)],
                0.99,
                400.0,
            ),
            "v1",
        ),
        "PostgreSQL 17.5",
        &[
            ("shared_buffers", "4GB"),
            ("jit", "off"),
            ("work_mem", "4MB"),
        ],
    );
    for p in [
        maria(20, 1000.0, "v1", "1G"),
        maria(40, 800.0, "v1", "1G"),
        maria(20, 1030.0, "v2", "2G"),
        maria(40, 900.0, "v2", "2G"),
        pg,
    ] {
        annbench::results::write_point(dir.path(), &p).unwrap();
    }
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args(args)
            .args(["--dataset", "glove-25-angular", "--results"])
            .arg(dir.path())
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let md = run(&["compare", "--base", "v1", "--me", "v2"]);
    let json = run(&["compare", "--base", "v1", "--me", "v2", "--format", "json"]);
    let html_path = dir.path().join("report.html");
    run(&["report", "--output", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let diffs: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        diffs["settings_differ"],
        serde_json::json!([{"setting": "innodb_buffer_pool_size", "values": {"v1": "1G", "v2": "2G"}}]),
        "{json}"
    );
    assert!(
        md.contains("Settings that differ") && md.contains("innodb_buffer_pool_size"),
        "{md}"
    );
    assert!(html.contains("Settings that differ") && html.contains("innodb_buffer_pool_size"));
    // The report's metadata view lists each label's own settings in full: there, only its
    // comparisons' settings sections (up to the end of their tables) are held to this.
    let sections: Vec<&str> = html
        .match_indices("Settings that differ")
        .map(|(i, _)| &html[i..html[i..].find("</table>").map_or(html.len(), |e| i + e)])
        .collect();
    assert!(!sections.is_empty());
    let texts = [("compare", md.as_str()), ("compare json", json.as_str())];
    for (what, text) in texts
        .into_iter()
        .chain(sections.into_iter().map(|s| ("report", s)))
    {
        for absent in [
            "(not recorded)",
            "shared_buffers",
            "work_mem",
            "PostgreSQL 17.5",
        ] {
            assert!(!text.contains(absent), "{what}: '{absent}' in:\n{text}");
        }
    }
}
