//! `compare` of servers measured interleaved in one run: synthetic rounds under a 20% drift
//! (each round's speed factor rises smoothly from 0.8 to 1.2, both servers alike) with
//! heavy-tailed per-pass noise. An A/A is within noise near 1, a real 5% difference is
//! called, the unpaired rule on the same passes is not; two builds differing by 8% on each
//! side widen the interval; the matrix of three servers in every format; the settings that
//! differ.

mod report_common;

use annbench::dataset::rng::Rng;
use annbench::report::compare::{CompareOptions, MatchKind, Rule, Verdict, compare_with};
use annbench::report::matrix;
use annbench::report::render::Format;
use annbench::results::{Interleave, Pass, PassServerCost, PointResult};
use report_common::{choose_passes_and_set_qps, labelled, pt};

const ROUNDS: usize = 60;
const RUN: &str = "2026-05-01T10:00:00Z-ab12";

/// One server's point at `ef_search` in the interleaved run: `speed` its true QPS factor,
/// `builds` each build's factor (HNSW build luck), `seed` its noise. Pass QPS = 1000 / ef x 20
/// x speed x build x drift(round) x noise; CPU per query rises as the CPU slows.
fn server(label: &str, ef: i64, speed: f64, builds: &[f64], seed: u64) -> PointResult {
    let mut rng = Rng::new(seed);
    let mut p = labelled(
        pt(
            "pgvector",
            &[("M", 16)],
            &[("ef_search", ef)],
            0.9 + ef as f64 / 1000.0,
            1.0,
        ),
        label,
    );
    let base_qps = 20_000.0 / ef as f64;
    p.passes = builds
        .iter()
        .enumerate()
        .flat_map(|(b, &luck)| (0..ROUNDS).map(move |r| (b, luck, r)))
        .map(|(b, luck, r)| {
            let drift = 0.8 + 0.4 * r as f64 / (ROUNDS - 1) as f64;
            // Per-pass noise: 2% normal, and one pass in ten 10-20% off (a neighbour's job).
            let mut noise = 1.0 + 0.02 * rng.normal();
            if rng.uniform() < 0.1 {
                noise *= if rng.uniform() < 0.5 { 0.82 } else { 1.12 };
            }
            let qps = base_qps * speed * luck * drift * noise;
            let queries = 1000;
            let cpu = queries as f64 * 1e-3 / drift / speed * (1.0 + 0.01 * rng.normal());
            Pass {
                wall_seconds: queries as f64 / qps,
                queries,
                build: b,
                round: Some(r),
                server: Some(PassServerCost {
                    cpu_user_seconds: Some(cpu * 0.8),
                    cpu_system_seconds: Some(cpu * 0.2),
                    voluntary_switches: Some(2000),
                    involuntary_switches: Some(100 + (rng.uniform() * 20.0) as u64),
                    ..PassServerCost::default()
                }),
                ..Pass::default()
            }
        })
        .collect();
    let n = p.passes.len();
    choose_passes_and_set_qps(&mut p, n);
    let m = &mut p.metrics;
    m.server = Some(annbench::results::ServerCost {
        cpu_per_query: Some(1e-3 / speed),
        ..Default::default()
    });
    m.interleave = Some(Interleave {
        run: RUN.into(),
        servers: vec!["base".into(), "a2".into(), "fast".into()],
        seed: 7,
    });
    p
}

/// The same servers' points at three ef_search values.
fn run(servers: &[(&str, f64, &[f64])]) -> Vec<PointResult> {
    let mut out = Vec::new();
    for (i, (label, speed, builds)) in servers.iter().enumerate() {
        for (j, ef) in [10, 20, 40].into_iter().enumerate() {
            out.push(server(
                label,
                ef,
                *speed,
                builds,
                100 * i as u64 + j as u64 + 1,
            ));
        }
    }
    out
}

fn opts() -> CompareOptions {
    CompareOptions {
        thresholds: vec![0.93, 0.92],
        ..CompareOptions::default()
    }
}

fn unpaired(mut pts: Vec<PointResult>) -> Vec<PointResult> {
    for p in &mut pts {
        p.metrics.interleave = None;
    }
    pts
}

#[test]
fn an_a_a_under_drift_is_within_noise_near_one() {
    let pts = run(&[("base", 1.0, &[1.0]), ("a2", 1.0, &[1.0])]);
    let c = compare_with(&pts, "base", "a2", &opts()).unwrap();
    assert_eq!(c.rows.len(), 5, "3 parameter pairs and 2 recall pairs");
    for r in &c.rows {
        let p = r.paired.as_ref().unwrap();
        println!(
            "A/A {:?} {}: ratio {:.4} +-{:.2}% rounds {}",
            r.kind,
            r.me.as_ref().unwrap().name,
            p.ratio,
            p.paired_half_width * 100.0,
            p.rounds
        );
        assert_eq!(
            (r.rule, r.verdict),
            (Rule::Paired, Some(Verdict::WithinNoise))
        );
        assert!((p.ratio - 1.0).abs() < 0.02, "{p:?}");
        assert!(p.interval.low <= 1.0 && 1.0 <= p.interval.high, "{p:?}");
        assert_eq!(p.rounds, ROUNDS);
        assert!(p.build_half_width.is_none());
        let cpu = r.cpu.as_ref().unwrap();
        assert_eq!(cpu.verdict, Verdict::WithinNoise);
        assert_eq!(r.switches.as_ref().unwrap().verdict, Verdict::WithinNoise);
    }
    assert_eq!((c.pairing.paired, c.pairing.pairs), (5, 5));
    assert!(c.pairing.median_half_width.unwrap() < 0.02);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("build spread not measured") && n.contains("--rebuilds 2")),
        "{:?}",
        c.notes
    );
}

#[test]
fn five_percent_is_called_paired_and_not_unpaired() {
    for (speed, verdict, cpu_verdict) in [
        (1.05, Verdict::Above, Verdict::Below),
        (0.95, Verdict::Below, Verdict::Above),
    ] {
        let pts = run(&[("base", 1.0, &[1.0]), ("fast", speed, &[1.0])]);
        let paired = compare_with(&pts, "base", "fast", &opts()).unwrap();
        let apart = compare_with(&unpaired(pts), "base", "fast", &opts()).unwrap();
        for (p, u) in paired.rows.iter().zip(&apart.rows) {
            let (pi, ui) = (p.ratio_interval.unwrap(), u.ratio_interval.unwrap());
            println!(
                "x{speed}: paired {:.4} [{:.4}, {:.4}] {:?}; unpaired {:.4} [{:.4}, {:.4}] {:?}",
                p.ratio.unwrap(),
                pi.low,
                pi.high,
                p.verdict,
                u.ratio.unwrap(),
                ui.low,
                ui.high,
                u.verdict
            );
            assert_eq!(p.verdict, Some(verdict));
            assert!((p.ratio.unwrap() / speed - 1.0).abs() < 0.02);
            assert_eq!(p.cpu.as_ref().unwrap().verdict, cpu_verdict);
            assert_eq!((u.rule, p.rule), (Rule::Unpaired, Rule::Paired));
            assert_ne!(
                u.verdict,
                Some(verdict),
                "the drift hides it from the unpaired rule"
            );
            assert!(ui.high - ui.low > 3.0 * (pi.high - pi.low));
        }
    }
}

#[test]
fn two_builds_8_percent_apart_widen_an_a_a() {
    // Build luck: the other server's first graph is 8% faster, its second as fast as the
    // base's, so the rounds of build 0 say "8% faster" and those of build 1 "the same"
    // although the servers are the same. (Luck that favours one side on every build alike
    // cannot be told from a real difference by two builds; the spread between the builds'
    // paired ratios is what shows build luck, free of the machine's drift.)
    let pts = run(&[("base", 1.0, &[1.0, 1.0]), ("a2", 1.0, &[1.08, 1.0])]);
    let c = compare_with(&pts, "base", "a2", &opts()).unwrap();
    for r in &c.rows {
        let p = r.paired.as_ref().unwrap();
        let build = p.build_half_width.unwrap();
        println!(
            "2 builds: ratio {:.4} [{:.4}, {:.4}], paired +-{:.2}%, builds +-{:.2}%",
            p.ratio,
            p.interval.low,
            p.interval.high,
            p.paired_half_width * 100.0,
            build * 100.0
        );
        assert!(p.ratio > 1.02, "the rounds alone see the build luck: {p:?}");
        assert_ne!(r.verdict, Some(Verdict::Above));
        assert!(build > p.paired_half_width);
        assert!(p.interval.high / p.interval.low > (1.0 + p.paired_half_width).powi(2) * 1.1);
        assert_eq!((p.builds, p.rounds), (2, 2 * ROUNDS));
    }
    let spread = c.pairing.spreads[0].both().unwrap();
    assert_eq!(spread.0.points, 3);
    // Per-build ratios 1.08 and 1.00: a variance of ln(1.08)^2 / 2, half on each server.
    assert!((0.03..0.06).contains(&spread.0.share()), "{spread:?}");
    assert!(c.notes.iter().any(|n| n.contains("build spread (run")));
}

fn three() -> Vec<PointResult> {
    let mut pts = run(&[
        ("base", 1.0, &[1.0]),
        ("a2", 1.0, &[1.0]),
        ("fast", 1.05, &[1.0]),
    ]);
    for p in &mut pts {
        let on = p.label.as_deref() != Some("fast");
        p.environment.server_version = "17.5".into();
        p.environment.server_settings = [
            ("data_checksums", if on { "on" } else { "off" }),
            ("shared_buffers", "128MB"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    }
    pts
}

#[test]
fn matrix_of_three_servers_in_every_format() {
    let pts = three();
    let servers = ["a2".to_string(), "fast".to_string()];
    let m = matrix(&pts, "base", &servers, &opts()).unwrap();
    assert_eq!(m.rows.len(), 5);
    for row in &m.rows {
        let (a2, fast) = (m.cell(row, 0).unwrap(), m.cell(row, 1).unwrap());
        assert_eq!(a2.verdict, Some(Verdict::WithinNoise));
        assert_eq!(fast.verdict, Some(Verdict::Above));
    }
    let md = m.render(Format::Markdown).unwrap();
    println!("{md}");
    assert!(
        md.contains("| a2 / base ") && md.contains("| fast / base "),
        "{md}"
    );
    assert!(md.contains("a2 CPU/q") && md.contains("fast CPU/q"));
    assert!(md.matches("] *").count() >= 10, "every fast cell is marked");
    assert!(!md.contains("(u)"), "no cell is unpaired");
    assert!(md.contains("## Settings that differ") && md.contains("data_checksums"));

    let csv = m.render(Format::Csv).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for c in [
        "server",
        "ratio",
        "ratio_ci_low",
        "verdict",
        "rule",
        "cpu_ratio",
    ] {
        assert!(header.contains(&c), "{header:?}");
    }
    assert_eq!(lines.count(), 10, "5 rows x 2 servers");

    let json: serde_json::Value = serde_json::from_str(&m.render(Format::Json).unwrap()).unwrap();
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 10);
    for c in cells {
        let fast = c["server"] == "fast";
        assert_eq!(c["significant"], serde_json::Value::Bool(fast), "{c}");
        assert_eq!(c["rule"], "paired");
        let r = c["ratio"].as_f64().unwrap();
        assert!(
            c["ratio_ci_low"].as_f64().unwrap() <= r && r <= c["ratio_ci_high"].as_f64().unwrap()
        );
    }
    assert_eq!(json["servers"], serde_json::json!(["a2", "fast"]));
    assert_eq!(json["pairing"]["fast"]["paired"], 5);
    assert_eq!(json["settings_differ"][0]["setting"], "data_checksums");
    assert_eq!(json["settings_differ"][0]["values"]["fast"], "off");

    let blocks = m.blocks_text();
    println!("{blocks}");
    assert!(blocks.contains("Best QPS with recall >= 0.93, relative to base"));
    assert!(blocks.contains("a2/base") && blocks.contains("fast/base"));
}

#[test]
fn settings_that_differ_are_listed_beside_the_pairs() {
    let pts = three();
    let c = compare_with(&pts, "base", "fast", &opts()).unwrap();
    let names: Vec<&str> = c.settings.iter().map(|s| s.setting.as_str()).collect();
    assert_eq!(names, ["data_checksums"]);
    assert_eq!(c.settings[0].values, ["on", "off"]);
    let md = c.render(Format::Markdown).unwrap();
    assert!(md.contains("## Settings that differ"), "{md}");
    assert!(
        compare_with(&pts, "base", "a2", &opts())
            .unwrap()
            .settings
            .is_empty()
    );
    // A pair only one side of which ran interleaved follows the unpaired rule.
    let mut mixed = pts.clone();
    mixed
        .iter_mut()
        .filter(|p| p.label.as_deref() == Some("fast"))
        .for_each(|p| p.metrics.interleave = None);
    let c = compare_with(&mixed, "base", "fast", &opts()).unwrap();
    assert!(
        c.rows
            .iter()
            .all(|r| r.rule == Rule::Unpaired && r.paired.is_none())
    );
    assert!(c.rows.iter().any(|r| r.kind == MatchKind::Recall));
}

/// The three servers' points in a committed store (`UPDATE_GOLDEN=1` rewrites it), which the
/// Python tests and the CLI read.
fn store() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/paired-store")
}

#[test]
fn the_store_keeps_rounds_and_runs_and_the_cli_shows_the_matrix() {
    use annbench::results::{load_points, write_point};
    let dir = store();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        for p in &three() {
            write_point(&dir, p).unwrap();
        }
    }
    let loaded = load_points(&dir, "glove-25-angular", 10, &dir.join("data")).unwrap();
    let servers = ["a2".to_string(), "fast".to_string()];
    let json = |pts: &[PointResult]| {
        matrix(pts, "base", &servers, &opts())
            .unwrap()
            .render(Format::Json)
            .unwrap()
    };
    assert_eq!(json(&loaded), json(&three()));
    assert!(
        loaded
            .iter()
            .all(|p| p.passes.iter().all(|x| x.round.is_some()))
    );

    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args(["compare", "--dataset", "glove-25-angular", "--base", "base"])
            .args(args)
            .args(["--recall", "0.93,0.92", "--results"])
            .arg(&dir)
            .arg("--data-dir")
            .arg(dir.join("data"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let blocks = cli(&["--me", "a2", "--me", "fast", "--format", "blocks"]);
    println!("{blocks}");
    assert!(
        blocks.starts_with("QPS relative to base at matched parameters\n"),
        "{blocks}"
    );
    assert_eq!(
        blocks
            .lines()
            .filter(|l| l.contains("1.0") && l.contains('*'))
            .count(),
        5
    );
    // One --me keeps the pairs view; the rule is a column.
    let csv = cli(&["--me", "fast", "--format", "csv"]);
    assert!(csv.lines().next().unwrap().split(',').any(|c| c == "rule"));
    assert_eq!(
        csv.lines()
            .skip(1)
            .filter(|l| l.contains(",paired,"))
            .count(),
        5
    );
    // --paired-noise 10%: a 5% difference is within noise.
    let wide = cli(&["--me", "fast", "--paired-noise", "10%", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&wide).unwrap();
    assert!(
        v["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["verdict"] == "within noise")
    );
}
