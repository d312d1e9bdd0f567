//! Numbers the data makes meaningless are never stored, and truth held elsewhere is checked as
//! the main file's is. Against the real servers where the wrong number came from a server:
//!
//! - data of a small scale (vectors x 1e-20): the recall stored is the answers' real overlap
//!   with the true neighbours, not 1.0 from an absolute 1e-3 tolerance;
//! - values whose squared distances overflow float32 (near 1e20): refused with the row named
//!   on every path (load, `datasets groundtruth`, `datasets create`, run, dry run), before
//!   any server work;
//! - data one selected algorithm refuses: refused before any table of any algorithm is
//!   loaded, by the run and its dry run alike;
//! - a filter sidecar whose ground truth was edited, and ground truth with repeated ids;
//! - result stores of different data under one name: `merge`, `table` and `compare` refuse
//!   to mix them.
//!
//! They fail, never skip, without the servers.

mod backend_util;
mod files_support;
mod serial;

use annbench::connect::{self, ServerKind};
use annbench::dataset::{self, Dataset};
use files_support::{add_dataset, annbench_in, hdf5_with_distance};
use mysql::prelude::Queryable;
use ndarray::Array2;
use serial::serial;
use std::path::{Path, PathBuf};
use std::process::Output;

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "failed:\n{err}");
    String::from_utf8_lossy(&out.stdout).into_owned() + &err
}

fn fails(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "not a clean failure:\n{err}");
    assert!(
        err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );
    err
}

/// A name unique to this process, so that "no table was loaded" means this run's.
fn unique(test: &str) -> String {
    format!("wr-{test}-{}", std::process::id())
}

/// 1,000 train and 50 test rows of the bundled SIFT set, scaled by `scale`.
fn sift(scale: f32) -> (Array2<f32>, Array2<f32>) {
    let (train, test) = backend_util::data(1000, 50);
    (train.mapv(|x| x * scale), test.mapv(|x| x * scale))
}

/// An ann-benchmarks file written by hand (no checks on the way), as another tool writes it.
fn write_raw(
    path: &Path,
    train: &Array2<f32>,
    test: &Array2<f32>,
    gt: Option<(&Array2<i32>, &Array2<f32>)>,
) {
    let f = hdf5_with_distance(path, "euclidean");
    add_dataset(&f, "train", train);
    add_dataset(&f, "test", test);
    if let Some((n, d)) = gt {
        add_dataset(&f, "neighbors", n);
        add_dataset(&f, "distances", d);
    }
    f.close().unwrap();
}

fn url(kind: ServerKind) -> connect::ServerUrl {
    let var = kind.decl().url_var;
    let text = connect::lookup(var)
        .unwrap()
        .unwrap_or_else(|| panic!("{var} is not set: run scripts/databases.sh up"));
    connect::ServerUrl::parse(kind, &text).unwrap()
}

/// Tables of annbench's schema whose name holds `stem`, on both servers.
fn tables(stem: &str) -> Vec<String> {
    let stem = stem.replace('-', "_");
    let mut c = annbench::backend::mariadb::server::connect(&url(ServerKind::MariaDb)).unwrap();
    let mut out: Vec<String> = c
        .query(format!(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'annbench' \
             AND TABLE_NAME LIKE '%{stem}%'"
        ))
        .unwrap();
    let mut p = annbench::backend::postgres::server::connect(&url(ServerKind::Postgres)).unwrap();
    out.extend(
        p.query(
            &format!(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'annbench' \
                 AND tablename LIKE '%{stem}%'"
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0)),
    );
    out
}

/// Every point file under `dir`.
fn points(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(points(&p));
        } else if p.extension().is_some_and(|x| x == "hdf5") {
            out.push(p);
        }
    }
    out
}

/// `run` of `algorithms` on `file` with one quick build and query point each.
fn run(file: &Path, algorithms: &str, results: &Path, extra: &[&str], dir: &Path) -> Output {
    let mut args = vec!["run", "--dataset", file.to_str().unwrap()];
    for a in algorithms.split(',') {
        args.extend(["--algorithm", a]);
    }
    if algorithms != "exact" {
        args.extend([
            "--build=M=8",
            "--build=ef_construction=32",
            "--query=ef_search=40",
        ]);
    }
    args.extend([
        "--runs=1",
        "--min-time=0",
        "--results",
        results.to_str().unwrap(),
    ]);
    args.extend(extra);
    annbench_in(&args, dir)
}

#[test]
fn data_of_a_small_scale_stores_its_real_recall_on_both_servers() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A fixed name: the tables are reused by the next run of this test.
    let file = d.join("wr-scale-1e-20.hdf5");
    let (train, test) = sift(1e-20);
    let gt =
        dataset::groundtruth::compute(train.view(), test.view(), annbench::Metric::Euclidean, 100);
    let ds = Dataset {
        name: "wr-scale-1e-20".into(),
        metric: annbench::Metric::Euclidean,
        train,
        test,
        ground_truth: Some(gt.clone()),
    };
    dataset::save(&ds, &file).unwrap();
    let results = d.join("results");
    ok(&run(&file, "mariadb,pgvector", &results, &[], d));
    let stored = annbench::results::load_points(&results, "wr-scale-1e-20", 10, d).unwrap();
    assert_eq!(stored.len(), 2);
    for p in &stored {
        // The share of returned ids among the true 10 nearest: what recall must tell.
        let mut hits = 0;
        for (row, truth) in p.neighbors.rows().into_iter().zip(gt.neighbors.rows()) {
            let true_ids: Vec<i64> = truth.iter().take(10).map(|&i| i64::from(i)).collect();
            hits += row.iter().filter(|id| true_ids.contains(id)).count();
        }
        let overlap = hits as f64 / (10 * p.neighbors.nrows()) as f64;
        // Within 1% of the k-th distance a non-neighbour counts too: a few at most.
        assert!(
            p.metrics.recall <= overlap + 0.05 && p.metrics.recall >= overlap - 1e-9,
            "{}: stored recall {} but the answers hold {overlap} of the true neighbours",
            p.algorithm,
            p.metrics.recall
        );
    }
}

#[test]
fn squared_distances_that_overflow_float32_are_refused_on_every_path() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = unique("overflow");
    let file = d.join(format!("{name}.hdf5"));
    // Row 7 near 1e20: its squared distances are past float32's 3.4e38.
    let (mut train, test) = sift(1.0);
    train.row_mut(7).mapv_inplace(|x| x * 1e18 + 1e20);
    write_raw(&file, &train, &test, None);
    let named =
        |e: &str| e.contains("'train' row 7") && e.contains("float32") && e.contains("scale");

    // Loading (run, Python load_dataset) and the ground truth of Python and the CLI.
    let e = dataset::open(&file).unwrap_err().to_string();
    assert!(named(&e), "{e}");
    let e = dataset::groundtruth::try_compute(
        train.view(),
        test.view(),
        annbench::Metric::Euclidean,
        10,
    )
    .unwrap_err()
    .to_string();
    assert!(named(&e), "{e}");
    let e = fails(&annbench_in(
        &["datasets", "groundtruth", file.to_str().unwrap()],
        d,
    ));
    assert!(named(&e) && e.contains(file.to_str().unwrap()), "{e}");
    assert!(
        dataset::info(&file).unwrap().ground_truth_k.is_none(),
        "nothing was stored"
    );

    // `datasets create` from vectors (fvecs: int32 dimension, then the values).
    let fvecs = d.join("huge.fvecs");
    let mut bytes = Vec::new();
    for row in train.rows() {
        bytes.extend(128i32.to_le_bytes());
        for x in row {
            bytes.extend(x.to_le_bytes());
        }
    }
    std::fs::write(&fvecs, bytes).unwrap();
    let e = fails(&annbench_in(
        &[
            "datasets",
            "create",
            fvecs.to_str().unwrap(),
            "--metric",
            "euclidean",
            "--test",
            "50",
        ],
        d,
    ));
    assert!(e.contains("row 7") && e.contains("float32"), "{e}");

    // The exact backend, as the servers.
    let mut exact = annbench::backend::create("exact", &Default::default()).unwrap();
    let spec = annbench::backend::TableSpec {
        dataset: name.clone(),
        metric: annbench::Metric::Euclidean,
        dimension: 128,
    };
    let e = exact.load(&spec, train.view()).unwrap_err().to_string();
    assert!(e.contains("row 7") && e.contains("float32"), "{e}");

    // run and its dry run: the same error, before any server work.
    let results = d.join("results");
    for extra in [&["--dry-run"][..], &[]] {
        let e = fails(&run(&file, "exact,pgvector,mariadb", &results, extra, d));
        assert!(named(&e), "{extra:?}: {e}");
    }
    assert!(points(&results).is_empty());
    assert_eq!(tables(&name), Vec::<String>::new(), "nothing was loaded");
}

#[test]
fn every_algorithms_data_checks_come_before_any_load() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1e5 fits float32 and MariaDB, not float16: the halfvec column refuses it.
    let name = unique("first");
    let file = d.join(format!("{name}.hdf5"));
    let (mut train, test) = sift(1.0);
    train[[12, 3]] = 1e5;
    let gt =
        dataset::groundtruth::compute(train.view(), test.view(), annbench::Metric::Euclidean, 100);
    dataset::save(
        &Dataset {
            name: name.clone(),
            metric: annbench::Metric::Euclidean,
            train: train.clone(),
            test: test.clone(),
            ground_truth: Some(gt),
        },
        &file,
    )
    .unwrap();
    let results = d.join("results");
    for extra in [&["--dry-run"][..], &[]] {
        let e = fails(&run(
            &file,
            "pgvector,mariadb,pgvector_halfvec_column",
            &results,
            extra,
            d,
        ));
        assert!(
            e.contains("pgvector_halfvec_column")
                && e.contains("train row 12")
                && e.contains("float16"),
            "{extra:?}: {e}"
        );
    }
    assert!(points(&results).is_empty(), "nothing was measured");
    assert_eq!(tables(&name), Vec::<String>::new(), "nothing was loaded");

    // A vector MariaDB refuses (squared length past float32's range): pgvector, listed
    // first, was once loaded and measured before MariaDB's refusal.
    let name = unique("mariadb-range");
    let file = d.join(format!("{name}.hdf5"));
    let mut train = train.clone();
    train[[12, 3]] = 2e19;
    write_raw(&file, &train, &test, None);
    for extra in [&["--dry-run"][..], &[]] {
        let e = fails(&run(&file, "pgvector,mariadb", &results, extra, d));
        assert!(
            e.contains("row 12") && e.contains("float32"),
            "{extra:?}: {e}"
        );
    }
    assert!(points(&results).is_empty(), "nothing was measured");
    assert_eq!(tables(&name), Vec::<String>::new(), "nothing was loaded");
}

#[test]
fn ground_truth_rows_with_a_repeated_id_are_refused() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("wr-repeated.hdf5");
    let (train, test) = sift(1.0);
    let mut gt =
        dataset::groundtruth::compute(train.view(), test.view(), annbench::Metric::Euclidean, 100);
    // Row 3 lists its nearest twice (sorted, each distance that id's).
    let (id, dist) = (gt.neighbors[[3, 0]], gt.distances[[3, 0]]);
    gt.neighbors[[3, 1]] = id;
    gt.distances[[3, 1]] = dist;
    write_raw(&file, &train, &test, Some((&gt.neighbors, &gt.distances)));
    let results = d.join("results");
    let e = fails(&run(&file, "exact", &results, &[], d));
    assert!(
        e.contains("ground truth row 3 lists train id")
            && e.contains("twice")
            && e.contains("datasets groundtruth"),
        "{e}"
    );
    assert!(points(&results).is_empty());
}

#[test]
fn an_edited_filter_ground_truth_is_refused_before_mariadb_scores_it() {
    use annbench::dataset::filters::{self, FilterKind};
    use annbench::runner::{NoProgress, SweepOptions, run_sweep_filtered};
    let _serial = serial();
    let (train, test) = sift(1.0);
    let ds = Dataset {
        name: "wr-filtered".into(),
        metric: annbench::Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let good = filters::generate(&ds, &["0.2".into()], &[FilterKind::Range], 42).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opts = SweepOptions {
        dataset: ds.name.clone(),
        algorithms: vec!["mariadb".into()],
        build_overrides: vec!["M=8".into()],
        query_overrides: vec!["ef_search=40".into(), "selectivity=0.2".into()],
        count: 10,
        runs: 1,
        min_time: std::time::Duration::ZERO,
        watch_interference: false,
        results_dir: dir.path().join("results"),
        ..SweepOptions::default()
    };
    let backend = annbench::backend::BackendOptions::default();
    let factory = |a: &str| annbench::backend::create(a, &backend);
    // Distances of every true neighbour edited up: every answer would count.
    let mut edited = good.clone();
    edited.levels[0].truth.distances.mapv_inplace(|x| x * 4.0);
    let e = run_sweep_filtered(ds.clone(), Some(&edited), &opts, &NoProgress, &factory)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("range filter at selectivity 0.2")
            && e.contains("does not match the vectors")
            && e.contains("annbench datasets filter"),
        "{e}"
    );
    // A repeated id in a filter's row.
    let mut repeated = good.clone();
    let t = &mut repeated.levels[0].truth;
    t.neighbors[[0, 1]] = t.neighbors[[0, 0]];
    t.distances[[0, 1]] = t.distances[[0, 0]];
    let e = run_sweep_filtered(ds.clone(), Some(&repeated), &opts, &NoProgress, &factory)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("row 0 lists train id") && e.contains("twice"),
        "{e}"
    );
    assert!(points(&dir.path().join("results")).is_empty());
    // The sidecar as written is scored.
    let summary = run_sweep_filtered(ds, Some(&good), &opts, &NoProgress, &factory).unwrap();
    assert_eq!(summary.measured(), 1);
}

#[test]
fn stores_of_different_data_under_one_name_are_not_mixed() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // One dataset name, two files: the second with other test queries.
    let (a_dir, b_dir) = (d.join("a"), d.join("b"));
    std::fs::create_dir_all(&a_dir).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    let (train, test) = sift(1.0);
    for (sub, test) in [(&a_dir, test.clone()), (&b_dir, test.mapv(|x| x + 1.0))] {
        let ds = Dataset {
            name: "wr-mixed".into(),
            metric: annbench::Metric::Euclidean,
            train: train.clone(),
            test,
            ground_truth: None,
        };
        let ds =
            dataset::create::from_parts("wr-mixed", ds.metric, ds.train, ds.test, 100).unwrap();
        dataset::save(&ds, &sub.join("wr-mixed.hdf5")).unwrap();
    }
    let exact = |sub: &Path, label: &str, results: &Path| {
        let file = sub.join("wr-mixed.hdf5");
        ok(&annbench_in(
            &[
                "run",
                "--dataset",
                file.to_str().unwrap(),
                "--algorithm",
                "exact",
                "--runs=1",
                "--min-time=0",
                "--label",
                label,
                "--results",
                results.to_str().unwrap(),
            ],
            d,
        ));
    };
    let (ra, rb) = (d.join("results-a"), d.join("results-b"));
    exact(&a_dir, "base", &ra);
    exact(&b_dir, "me", &rb);
    // merge refuses, naming both files, and writes nothing.
    let merged = d.join("merged");
    let e = fails(&annbench_in(
        &[
            "merge",
            ra.to_str().unwrap(),
            rb.to_str().unwrap(),
            "--results",
            merged.to_str().unwrap(),
        ],
        d,
    ));
    assert!(
        e.contains("'wr-mixed' (k=10) were measured on 2 different data files")
            && e.contains("results-a")
            && e.contains("results-b")
            && e.contains("nothing was merged"),
        "{e}"
    );
    assert!(points(&merged).is_empty());
    // A store that holds both (copied together by hand): no table, no comparison.
    for f in points(&rb) {
        let rel = f.strip_prefix(&rb).unwrap();
        std::fs::create_dir_all(ra.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(&f, ra.join(rel)).unwrap();
    }
    let data_dir = a_dir.to_str().unwrap();
    let base = [
        "--dataset",
        "wr-mixed",
        "--results",
        ra.to_str().unwrap(),
        "--data-dir",
        data_dir,
    ];
    let table = [&["table"][..], &base].concat();
    let compare = [&["compare", "--base", "base", "--me", "me"][..], &base].concat();
    for args in [table, compare] {
        let e = fails(&annbench_in(&args, d));
        assert!(
            e.contains("different data files") && e.contains("move the other files out"),
            "{args:?}: {e}"
        );
    }
    // Two stores of the same data merge as before.
    let rc = d.join("results-c");
    exact(&a_dir, "me", &rc);
    let same = d.join("same");
    std::fs::remove_dir_all(&ra).unwrap();
    exact(&a_dir, "base", &ra);
    ok(&annbench_in(
        &[
            "merge",
            ra.to_str().unwrap(),
            rc.to_str().unwrap(),
            "--results",
            same.to_str().unwrap(),
        ],
        d,
    ));
    assert_eq!(points(&same).len(), 2);
}

#[test]
fn points_scored_by_the_absolute_tolerance_are_measured_again() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("wr-old-rule.hdf5");
    let (train, test) = sift(1e-20);
    let ds =
        dataset::create::from_parts("wr-old-rule", annbench::Metric::Euclidean, train, test, 100)
            .unwrap();
    dataset::save(&ds, &file).unwrap();
    let results = d.join("results");
    ok(&run(&file, "exact", &results, &[], d));
    let [path] = points(&results).try_into().unwrap();
    let mut p = annbench::results::read_point(&path).unwrap();
    assert_eq!(
        p.metrics.recall_rule.as_deref(),
        Some(annbench::metrics::KNN_RULE)
    );
    // As an earlier annbench stored it: no rule, the same fingerprint.
    p.metrics.recall_rule = None;
    annbench::results::write_point(&results, &p).unwrap();
    let out = ok(&run(&file, "exact", &results, &[], d));
    assert!(
        out.contains("absolute recall tolerance of 1e-3") && out.contains("measuring them again"),
        "{out}"
    );
    let again = annbench::results::read_point(&path).unwrap();
    assert_eq!(
        again.metrics.recall_rule.as_deref(),
        Some(annbench::metrics::KNN_RULE)
    );
    assert!(
        !again
            .metrics
            .flags
            .contains(&annbench::results::Flag::Tolerance)
    );
    // And a third run reuses it.
    let out = ok(&run(&file, "exact", &results, &[], d));
    assert!(!out.contains("measuring them again"), "{out}");
}

#[test]
fn the_dry_run_refuses_what_the_run_refuses() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("wr-dry.hdf5");
    let (train, test) = sift(1.0);
    let ds = dataset::create::from_parts("wr-dry", annbench::Metric::Euclidean, train, test, 100)
        .unwrap();
    dataset::save(&ds, &file).unwrap();
    let not_a_dir = d.join("a-file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let results = d.join("results");
    for (extra, to, expect) in [
        (&["--label", ""][..], &results, "--label is empty"),
        (&[][..], &not_a_dir, "is a file, not a directory"),
    ] {
        let real = fails(&run(&file, "exact", to, extra, d));
        let dry = fails(&run(
            &file,
            "exact",
            to,
            &[extra, &["--dry-run"]].concat(),
            d,
        ));
        assert!(
            real.contains(expect) && dry.contains(expect),
            "{expect}:\n{real}\n{dry}"
        );
    }
}
