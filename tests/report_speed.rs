//! Speed of the reports on a large synthetic result set (no assertions on time; run with
//! `cargo test --test report_speed -- --ignored --nocapture` and read the figures).

mod report_common;

use annbench::report::render::{Format, render};
use annbench::report::{
    DEFAULT_THRESHOLDS, best_at_recall, build_table, clients_table, compare, export_table, pareto,
};
use annbench::results::PointResult;
use report_common::{labelled, pt, with_clients};
use std::time::Instant;

/// 3 algorithms x 2 labels x 4 client counts x 7 M x 5 ef_construction x 8 ef_search.
fn grid() -> Vec<PointResult> {
    let mut pts = Vec::new();
    for (ai, a) in ["mariadb", "pgvector", "pgvector_halfvec"]
        .iter()
        .enumerate()
    {
        for l in ["v1", "v2"] {
            for c in [1usize, 2, 4, 8] {
                for m in [8i64, 12, 16, 24, 32, 48, 64] {
                    for efc in [64i64, 96, 128, 192, 256] {
                        for ef in [10i64, 20, 40, 80, 120, 200, 400, 800] {
                            let r = 1.0 - 1.0 / (ef as f64 * m as f64 / 8.0 + ai as f64 + 1.0);
                            let q = 1e5 / ef as f64 * c as f64;
                            let p = pt(
                                a,
                                &[("M", m), ("ef_construction", efc)],
                                &[("ef_search", ef)],
                                r,
                                q,
                            );
                            pts.push(with_clients(labelled(p, l), c));
                        }
                    }
                }
            }
        }
    }
    pts
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    eprintln!("{what:<28} {:>10.1} ms", t.elapsed().as_secs_f64() * 1e3);
    out
}

#[test]
#[ignore = "prints timings; run on demand"]
fn report_speed() {
    let pts = grid();
    eprintln!("{} points", pts.len());
    let table = timed("table (markdown)", || {
        let t = best_at_recall(&pts, &DEFAULT_THRESHOLDS, Some("pgvector")).unwrap();
        render(&t.to_table(), Format::Markdown).unwrap()
    });
    let export = timed("export_table", || export_table(&pts));
    let csv = timed("export csv", || render(&export, Format::Csv).unwrap());
    let json = timed("export json", || render(&export, Format::Json).unwrap());
    let groups = timed("clients_table", || clients_table(&pts));
    let cmp = timed("compare", || {
        compare(&pts, "v1", "v2", &DEFAULT_THRESHOLDS).unwrap()
    });
    let fronts = timed("pareto", || pareto(&pts));
    let builds = timed("build_table", || build_table(&pts));
    eprintln!(
        "sizes: table {} B, csv {} B, json {} B, {} client groups, {} compare rows, {} frontiers, {} builds",
        table.len(),
        csv.len(),
        json.len(),
        groups.len(),
        cmp.rows.len(),
        fronts.len(),
        builds.len()
    );
}
