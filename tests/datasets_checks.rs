//! Bad dataset input through the binary: wrong ground truth refused by `run` until
//! `datasets groundtruth` recomputes it, names that would write outside `--data-dir`, a
//! directory given as a dataset, grid files with a byte-order mark and repeated values.

mod files_support;
mod serial;

use annbench::dataset::{self, Dataset};
use files_support::annbench_in;
use serial::serial;
use std::path::Path;
use std::process::{Command, Output};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `run` with the in-process exact backend (no server) on `file`.
fn run_exact(file: &Path, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--dataset",
        file.to_str().unwrap(),
        "--algorithm",
        "exact",
        "--runs",
        "1",
    ];
    args.extend(extra);
    annbench_in(&args, dir)
}

/// 1,000 train and 50 test vectors of the bundled sift set, with exact ground truth changed
/// by `spoil`, saved as `name.hdf5`.
fn spoiled(dir: &Path, name: &str, spoil: impl Fn(&mut Dataset)) -> std::path::PathBuf {
    let src = dataset::resolve("sift-5k-128-euclidean", &dir.join("data")).unwrap();
    let mut ds = dataset::hdf5_io::open_head(&src, 1000, 50).unwrap();
    let gt = dataset::groundtruth::compute(ds.train.view(), ds.test.view(), ds.metric, 100);
    ds.ground_truth = Some(gt);
    spoil(&mut ds);
    let path = dir.join(format!("{name}.hdf5"));
    dataset::save(&ds, &path).unwrap();
    path
}

#[test]
fn wrong_ground_truth_is_refused_until_recomputed() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let reversed = spoiled(d, "reversed", |ds| {
        let gt = ds.ground_truth.as_mut().unwrap();
        gt.neighbors.invert_axis(ndarray::Axis(1));
        gt.distances.invert_axis(ndarray::Axis(1));
        gt.neighbors = gt.neighbors.as_standard_layout().into_owned();
        gt.distances = gt.distances.as_standard_layout().into_owned();
    });
    let zeroed = spoiled(d, "zeroed", |ds| {
        ds.ground_truth.as_mut().unwrap().distances.fill(0.0);
    });
    let cosine = spoiled(d, "cosine", |ds| {
        let gt = dataset::groundtruth::compute(
            ds.train.view(),
            ds.test.view(),
            annbench::Metric::Angular,
            100,
        );
        ds.ground_truth = Some(gt);
    });
    for (file, expect) in [
        (&reversed, "not sorted nearest first"),
        (&zeroed, "does not match the vectors"),
        (&cosine, "look like angular distances"),
    ] {
        let out = run_exact(file, d, &[]);
        let err = stderr(&out);
        assert!(
            !out.status.success() && err.contains(expect),
            "{expect}: {err}"
        );
        let fix = format!("annbench datasets groundtruth {}", file.display());
        assert!(err.contains(&fix), "{err}");
        let stored = walkdir(&d.join("results"));
        assert!(
            stored.is_empty(),
            "stored for {}: {stored:?}",
            file.display()
        );
        // The offered command repairs the file; then the run goes through.
        let out = annbench_in(&["datasets", "groundtruth", file.to_str().unwrap()], d);
        assert!(out.status.success(), "{}", stderr(&out));
        let out = run_exact(file, d, &["--results", "ok-results"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn dataset_names_stay_inside_the_data_dir() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let npy = d.join("v.npy");
    std::fs::write(&npy, npy_f32(50, 4)).unwrap();
    std::fs::create_dir_all(d.join("a/b/data")).unwrap();
    let inner = d.join("a/b");
    for name in ["../../x", "a/b", ".hidden", ""] {
        let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args([
                "datasets",
                "create",
                npy.to_str().unwrap(),
                "--metric",
                "euclidean",
            ])
            .args(["--name", name])
            .current_dir(&inner)
            .env("ANNBENCH_DATA_DIR", inner.join("data"))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(
            !out.status.success() && err.contains("cannot be used"),
            "{name}: {err}"
        );
    }
    assert!(!d.join("x.hdf5").exists() && !inner.join("data/a").exists());
    let out = annbench_in(
        &[
            "datasets",
            "subset",
            "sift-5k-128-euclidean",
            "--train",
            "100",
            "--name",
            "../up",
        ],
        d,
    );
    assert!(stderr(&out).contains("cannot be used"), "{}", stderr(&out));
}

#[test]
fn a_directory_is_named_as_a_directory() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("vectors")).unwrap();
    for arg in ["vectors", "vectors/", "./vectors"] {
        let out = run_exact(Path::new(arg), d, &[]);
        let err = stderr(&out);
        assert!(
            err.contains("is a directory, not a dataset file"),
            "{arg}: {err}"
        );
    }
}

#[test]
fn grid_files_with_a_bom_and_repeated_values_work() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let grid = d.join("grid.yml");
    std::fs::write(&grid, "\u{feff}algorithm: exact\ngroups:\n  - name: all\n").unwrap();
    let out = annbench_in(
        &[
            "run",
            "--dataset",
            "sift-5k-128-euclidean",
            "--config",
            grid.to_str().unwrap(),
            "--clients",
            "1,1",
            "--runs",
            "1",
        ],
        d,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("1 point(s) measured"), "{text}");
}

fn npy_f32(rows: usize, cols: usize) -> Vec<u8> {
    let mut h = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    for i in 0..rows * cols {
        out.extend(((i * 7 % 13) as f32).to_le_bytes());
    }
    out
}

/// Files under `dir` (none when it does not exist).
fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}
