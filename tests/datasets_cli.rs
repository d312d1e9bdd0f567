//! `annbench datasets ...` end to end through the binary.

mod files_support;
mod serial;

use annbench::dataset;
use files_support::{annbench_data as annbench, ok};
use serial::serial;
use std::process::Output;

fn fails(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "unexpected success");
    assert!(
        err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );
    err
}

fn npy_f32(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f32) -> Vec<u8> {
    let mut h = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    for i in 0..rows {
        for j in 0..cols {
            out.extend(f(i, j).to_le_bytes());
        }
    }
    out
}

#[test]
fn list_shows_names_and_local_presence() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&annbench(&["datasets", "list"], dir.path()));
    assert!(out.contains("dbpedia-openai-1000k-angular") && out.contains("random-s-100-angular"));
    assert!(!out.contains(dir.path().to_str().unwrap()));
    ok(&annbench(
        &["datasets", "get", "sift-5k-128-euclidean"],
        dir.path(),
    ));
    let out = ok(&annbench(&["datasets", "list"], dir.path()));
    let line = out
        .lines()
        .find(|l| l.starts_with("sift-5k-128-euclidean"))
        .unwrap();
    assert!(line.contains(dir.path().to_str().unwrap()), "{line}");
}

#[test]
fn create_from_npy_then_info() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("emb.npy");
    std::fs::write(
        &npy,
        npy_f32(300, 8, |i, j| ((i * 31 + j * 7) % 17) as f32 - 8.0),
    )
    .unwrap();
    let out = ok(&annbench(
        &[
            "datasets",
            "create",
            npy.to_str().unwrap(),
            "--metric",
            "angular",
            "--test",
            "30",
            "--count",
            "10",
        ],
        dir.path(),
    ));
    assert!(out.contains("emb-8-angular: 270 train, 30 test"), "{out}");
    let out = ok(&annbench(
        &["datasets", "info", "emb-8-angular"],
        dir.path(),
    ));
    assert!(
        out.contains("ground truth: yes, k=10") && out.contains("270 x 8"),
        "{out}"
    );
}

#[test]
fn create_rejects_nan_and_bad_raw_sizes() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("nan.npy");
    std::fs::write(
        &npy,
        npy_f32(20, 4, |i, j| if i == 7 && j == 2 { f32::NAN } else { 1.0 }),
    )
    .unwrap();
    let err = fails(&annbench(
        &[
            "datasets",
            "create",
            npy.to_str().unwrap(),
            "--metric",
            "euclidean",
        ],
        dir.path(),
    ));
    assert!(
        err.contains("nan.npy") && err.contains("row 7 column 2 is NaN"),
        "{err}"
    );
    let raw = dir.path().join("v.bin");
    std::fs::write(&raw, [0u8; 40]).unwrap();
    let err = fails(&annbench(
        &[
            "datasets",
            "create",
            raw.to_str().unwrap(),
            "--metric",
            "euclidean",
            "--dim",
            "3",
        ],
        dir.path(),
    ));
    assert!(err.contains("check --dim"), "{err}");
    let err = fails(&annbench(
        &[
            "datasets",
            "create",
            raw.to_str().unwrap(),
            "--metric",
            "euclidean",
        ],
        dir.path(),
    ));
    assert!(err.contains("--dim"), "{err}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".hdf5"))
    );
}

#[test]
fn subset_recomputes_ground_truth() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&annbench(
        &[
            "datasets",
            "subset",
            "sift-5k-128-euclidean",
            "--train",
            "1000",
            "--test",
            "50",
        ],
        dir.path(),
    ));
    assert!(
        out.contains("sift-5k-128-1k-euclidean: 1000 train, 50 test"),
        "{out}"
    );
    let sub = dataset::open(&dir.path().join("sift-5k-128-1k-euclidean.hdf5")).unwrap();
    let full = dataset::open(&dir.path().join("sift-5k-128-euclidean.hdf5")).unwrap();
    assert_eq!(sub.train, full.train.slice(ndarray::s![..1000, ..]));
    let gt = sub.ground_truth.unwrap();
    assert!(gt.neighbors.iter().all(|&i| (0..1000).contains(&i)));
    let want = dataset::groundtruth::compute(sub.train.view(), sub.test.view(), sub.metric, 100);
    assert_eq!(gt.neighbors, want.neighbors);
    let err = fails(&annbench(
        &[
            "datasets",
            "subset",
            "sift-5k-128-euclidean",
            "--train",
            "9999",
        ],
        dir.path(),
    ));
    assert!(
        err.contains("--train 9999: the file has only 4500 train rows; give --train 1 to 4500"),
        "{err}"
    );
}

#[test]
fn groundtruth_command_stores_it() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dataset::resolve("sift-5k-128-euclidean", dir.path()).unwrap();
    let mut ds = dataset::open(&path).unwrap();
    let want = ds.ground_truth.take().unwrap();
    let bare = dir.path().join("bare.hdf5");
    dataset::save(&ds, &bare).unwrap();
    assert_eq!(dataset::info(&bare).unwrap().ground_truth_k, None);
    let out = ok(&annbench(
        &["datasets", "groundtruth", bare.to_str().unwrap()],
        dir.path(),
    ));
    assert!(
        out.contains("500 queries x 4500 train") && out.contains("stored in"),
        "{out}"
    );
    let got = dataset::open(&bare).unwrap().ground_truth.unwrap();
    assert_eq!(
        (got.neighbors, got.distances),
        (want.neighbors, want.distances)
    );
}

#[test]
fn generate_random_xs() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    ok(&annbench(
        &["datasets", "generate", "random-xs-20-euclidean"],
        dir.path(),
    ));
    let info = dataset::info(&dir.path().join("random-xs-20-euclidean.hdf5")).unwrap();
    assert_eq!(
        (info.train, info.test, info.dimension, info.ground_truth_k),
        (9000, 1000, 20, Some(100))
    );
    let err = fails(&annbench(
        &["datasets", "generate", "random-xs-20-euclidian"],
        dir.path(),
    ));
    assert!(err.contains("did you mean random-xs-20-euclidean"), "{err}");
}

#[test]
fn info_errors_are_clear() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let err = fails(&annbench(
        &["datasets", "info", "/no/such.hdf5"],
        dir.path(),
    ));
    assert!(err.contains("/no/such.hdf5: no such file"), "{err}");
    let err = fails(&annbench(
        &["datasets", "info", "glove-100-angular"],
        dir.path(),
    ));
    assert!(
        err.contains("annbench datasets get glove-100-angular"),
        "{err}"
    );
}

#[test]
fn info_shows_per_query_difficulty() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&annbench(
        &["datasets", "info", "sift-5k-128-euclidean"],
        dir.path(),
    ));
    let lid = out
        .lines()
        .find(|l| l.trim_start().starts_with("LID (k=100)"));
    let rc = out
        .lines()
        .find(|l| l.trim_start().starts_with("RC (k=10)"));
    // mean, min, p10, p25, p50, p75, p90, max: ordered quantiles, RC above 1.
    let values = |l: &str| -> Vec<f64> {
        l.split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let (lid, rc) = (values(lid.expect(&out)), values(rc.expect(&out)));
    assert_eq!((lid.len(), rc.len()), (8, 8), "{out}");
    assert!(lid[1..].windows(2).all(|w| w[0] <= w[1]), "{out}");
    assert!(rc[1] >= 1.0 && lid[1] > 0.0, "{out}");
}

#[test]
fn created_files_are_listed_kept_and_named_truthfully() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("emb.npy");
    std::fs::write(
        &npy,
        npy_f32(200, 16, |i, j| ((i * 13 + j) % 11) as f32 - 5.0),
    )
    .unwrap();
    let create = |extra: &[&str]| {
        let mut args = vec![
            "datasets",
            "create",
            npy.to_str().unwrap(),
            "--metric",
            "angular",
            "--k", // the old name of --count, still accepted
            "10",
        ];
        args.extend(extra);
        annbench(&args, dir.path())
    };
    // A name whose dimension or metric contradicts the vectors is refused, with the fix.
    let err = fails(&create(&["--name", "my-384-angular"]));
    assert!(
        err.contains("384") && err.contains("16") && err.contains("my-384-angular"),
        "{err}"
    );
    let err = fails(&create(&["--name", "my-16-euclidean"]));
    assert!(
        err.contains("euclidean") && err.contains("angular"),
        "{err}"
    );
    ok(&create(&["--name", "my-16-angular"]));
    // The same file again: refused without --force, replaced with it.
    let err = fails(&create(&["--name", "my-16-angular"]));
    assert!(err.contains("exists") && err.contains("--force"), "{err}");
    ok(&create(&["--name", "my-16-angular", "--force"]));
    // `datasets list` shows it as a local file.
    let out = ok(&annbench(&["datasets", "list"], dir.path()));
    let line = out
        .lines()
        .find(|l| l.starts_with("my-16-angular"))
        .unwrap();
    assert!(
        line.contains("local") && line.contains("16") && line.contains("angular"),
        "{line}"
    );
}

#[test]
fn info_of_a_bundled_set_says_where_it_writes() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = annbench(&["datasets", "info", "sift-5k-128-euclidean"], dir.path());
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let file = dir.path().join("sift-5k-128-euclidean.hdf5");
    assert!(err.contains(file.to_str().unwrap()), "{err}");
    assert!(file.is_file());
    // Once written, nothing more to say.
    let again = annbench(&["datasets", "info", "sift-5k-128-euclidean"], dir.path());
    ok(&again);
    assert!(
        again.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn completions_man_and_quiet() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let bash = ok(&annbench(&["completions", "bash"], dir.path()));
    assert!(
        bash.contains("annbench") && bash.contains("--results"),
        "{bash}"
    );
    let man = ok(&annbench(&["man"], dir.path()));
    assert!(
        man.starts_with(".ie") || man.contains(".TH annbench"),
        "{man}"
    );
    let pages = dir.path().join("man");
    ok(&annbench(
        &["man", "--dir", pages.to_str().unwrap()],
        dir.path(),
    ));
    assert!(pages.join("annbench-run.1").is_file() && pages.join("annbench-table.1").is_file());
    let out = annbench(
        &["-q", "datasets", "info", "sift-5k-128-euclidean"],
        dir.path(),
    );
    assert!(ok(&out).contains("sift-5k-128-euclidean"));
    let help = ok(&annbench(&["run", "--help"], dir.path()));
    assert!(
        help.contains("Examples:") && help.contains("ANNBENCH_MARIADB_URL"),
        "{help}"
    );
    assert!(help.contains("ANNBENCH_RESULTS"), "{help}");
}

#[test]
fn filter_writes_both_kinds_and_refuses_bad_input() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("emb.npy");
    std::fs::write(
        &npy,
        npy_f32(300, 8, |i, j| ((i * 31 + j * 7) % 17) as f32 - 8.0),
    )
    .unwrap();
    let create = [
        "datasets",
        "create",
        npy.to_str().unwrap(),
        "--metric",
        "euclidean",
        "--test",
        "30",
        "--count",
        "10",
    ];
    ok(&annbench(&create, dir.path()));
    let name = "emb-8-euclidean";
    let filter = |extra: &[&str]| {
        let mut args = vec!["datasets", "filter", name, "--selectivity"];
        args.extend(extra);
        annbench(&args, dir.path())
    };
    // 270 rows: 0.9 (243 rows) and 0.01 (3) share label1, 0.5 (135) gets label2.
    let out = ok(&filter(&["0.01,0.5,0.9"]));
    assert!(
        out.contains("attribute columns attr, label1, label2"),
        "{out}"
    );
    let info = ok(&annbench(&["datasets", "info", name], dir.path()));
    for want in [
        "attr < 3",
        "label1 = 1",
        "label1 = 2",
        "label2 = 1",
        "range and label",
    ] {
        assert!(info.contains(want), "{want}: {info}");
    }
    let out = ok(&filter(&["0.5", "--kind", "label"]));
    assert!(out.contains("attribute columns label1 "), "{out}");
    let err = fails(&filter(&["0.5", "--kind", "range,tags"]));
    assert!(
        err.contains("--kind") && err.contains("'tags' is not a filter kind"),
        "{err}"
    );
    let err = fails(&filter(&["0.5,1.5"]));
    assert!(err.contains("(0, 1]"), "{err}");
    // The file written before the refusals is intact.
    let info = ok(&annbench(&["datasets", "info", name], dir.path()));
    assert!(
        info.contains("label1 = 1") && !info.contains("attr <"),
        "{info}"
    );
}
