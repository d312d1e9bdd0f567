//! Reading, writing and validating the ann-benchmarks HDF5 layout, and every bad-input case.

mod files_support;

use annbench::Metric;
use annbench::dataset::{self, Dataset, GroundTruth};
use files_support::{add_dataset, hdf5_with_distance};
use ndarray::{Array2, array};
use std::path::{Path, PathBuf};

fn sample() -> Dataset {
    Dataset {
        name: "tiny".into(),
        metric: Metric::Euclidean,
        train: array![[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]],
        test: array![[0.1, 0.0]],
        ground_truth: Some(GroundTruth {
            neighbors: array![[0, 1]],
            distances: array![[0.1, 0.9]],
        }),
    }
}

/// Writes a file by hand so tests can break one thing at a time.
fn write_raw(path: &Path, distance: &str, train: Option<Array2<f32>>, test: Array2<f32>) {
    let f = hdf5_with_distance(path, distance);
    if let Some(t) = train {
        add_dataset(&f, "train", &t);
    }
    add_dataset(&f, "test", &test);
}

fn err_of(path: &Path) -> String {
    dataset::open(path).unwrap_err().to_string()
}

fn tmp(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn round_trip_keeps_everything_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "tiny.hdf5");
    dataset::save(&sample(), &path).unwrap();
    let back = dataset::open(&path).unwrap();
    let want = sample();
    assert_eq!(
        (back.name.as_str(), back.metric),
        ("tiny", Metric::Euclidean)
    );
    assert_eq!((back.train, back.test), (want.train, want.test));
    let (g, w) = (back.ground_truth.unwrap(), want.ground_truth.unwrap());
    assert_eq!((g.neighbors, g.distances), (w.neighbors, w.distances));
    let info = dataset::info(&path).unwrap();
    assert_eq!(
        (info.train, info.test, info.dimension, info.ground_truth_k),
        (3, 1, 2, Some(2))
    );
    assert!(info.file_size > 0);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("tiny.hdf5")]);
}

#[test]
fn reads_files_without_ground_truth_and_other_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "f64.hdf5");
    // ann-benchmarks' own writer stores float64 when given float64 data.
    let f = hdf5_with_distance(&path, "angular");
    add_dataset(&f, "train", &array![[1.0f64, 2.0]]);
    add_dataset(&f, "test", &array![[3.0f64, 4.0]]);
    drop(f);
    let ds = dataset::open(&path).unwrap();
    assert_eq!(
        (ds.metric, ds.train[[0, 1]], ds.ground_truth.is_none()),
        (Metric::Angular, 2.0, true)
    );
}

#[test]
fn missing_file() {
    let err = err_of(Path::new("/nonexistent/nothing.hdf5"));
    assert!(
        err.contains("/nonexistent/nothing.hdf5") && err.contains("no such file"),
        "{err}"
    );
}

#[test]
fn not_hdf5() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "text.hdf5");
    std::fs::write(&path, "hello, not a dataset\n").unwrap();
    let err = err_of(&path);
    assert!(
        err.contains("text.hdf5") && err.contains("not a readable HDF5 file"),
        "{err}"
    );
}

#[test]
fn no_train() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "notrain.hdf5");
    write_raw(&path, "euclidean", None, array![[1.0f32]]);
    let err = err_of(&path);
    assert!(
        err.contains("notrain.hdf5") && err.contains("no 'train' dataset"),
        "{err}"
    );
}

#[test]
fn dimension_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "dims.hdf5");
    write_raw(
        &path,
        "euclidean",
        Some(array![[1.0f32, 2.0]]),
        array![[1.0f32, 2.0, 3.0]],
    );
    let err = err_of(&path);
    assert!(
        err.contains("dims.hdf5") && err.contains("dimension mismatch"),
        "{err}"
    );
}

#[test]
fn nan_in_train() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "nan.hdf5");
    write_raw(
        &path,
        "euclidean",
        Some(array![[1.0f32, 2.0], [f32::NAN, 0.0]]),
        array![[1.0f32, 2.0]],
    );
    let err = err_of(&path);
    assert!(
        err.contains("nan.hdf5") && err.contains("'train' row 1 column 0 is NaN"),
        "{err}"
    );
    // info reads no values, so it does not see the NaN; open does.
    assert!(dataset::info(&path).is_ok());
}

#[test]
fn unsupported_metric() {
    let dir = tempfile::tempdir().unwrap();
    for metric in ["jaccard", "hamming", "dot"] {
        let path = tmp(&dir, &format!("{metric}.hdf5"));
        write_raw(&path, metric, Some(array![[1.0f32]]), array![[1.0f32]]);
        let err = err_of(&path);
        assert!(
            err.contains(metric) && err.contains("not supported by these backends"),
            "{err}"
        );
    }
}

#[test]
fn one_dimensional_and_ground_truth_mismatches() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "flat.hdf5");
    let f = hdf5_with_distance(&path, "euclidean");
    add_dataset(&f, "train", &ndarray::arr1(&[1.0f32, 2.0]));
    add_dataset(&f, "test", &array![[1.0f32]]);
    drop(f);
    assert!(err_of(&path).contains("must be 2-D"));

    let path = tmp(&dir, "gt.hdf5");
    write_raw(&path, "euclidean", Some(array![[1.0f32]]), array![[1.0f32]]);
    let f = hdf5::File::open_rw(&path).unwrap();
    f.new_dataset_builder()
        .with_data(&array![[0i32, 1]])
        .create("neighbors")
        .unwrap();
    drop(f);
    assert!(err_of(&path).contains("no 'distances'"));
}

#[test]
fn open_head_reads_only_the_first_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "tiny.hdf5");
    dataset::save(&sample(), &path).unwrap();
    let head = dataset::hdf5_io::open_head(&path, 2, 1).unwrap();
    assert_eq!(head.train, array![[0.0, 0.0], [1.0, 0.0]]);
    let e = dataset::hdf5_io::open_head(&path, 4, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--train 4: the file has only 3 train rows"),
        "{e}"
    );
}

#[test]
fn save_refuses_invalid_data_and_unwritable_places() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = sample();
    bad.train[[0, 0]] = f32::INFINITY;
    let err = dataset::save(&bad, &tmp(&dir, "bad.hdf5"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("refusing") && err.contains("inf"), "{err}");
    // A parent that is a regular file cannot hold the output (root ignores permission bits).
    let blocker = tmp(&dir, "blocker");
    std::fs::write(&blocker, "x").unwrap();
    let err = dataset::save(&sample(), &blocker.join("out.hdf5"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("blocker"), "{err}");
    assert!(!blocker.join("out.hdf5").exists());
}

#[test]
fn reads_numpy_style_attributes_and_wide_ground_truth() {
    // numpy bytes attributes are fixed-length ASCII; newer ann-benchmarks writes int64
    // neighbours and float64 distances.
    use hdf5::types::FixedAscii;
    let dir = tempfile::tempdir().unwrap();
    let path = tmp(&dir, "np.hdf5");
    let f = hdf5::File::create(&path).unwrap();
    let d = FixedAscii::<16>::from_ascii("angular").unwrap();
    f.new_attr::<FixedAscii<16>>()
        .shape(())
        .create("distance")
        .unwrap()
        .write_scalar(&d)
        .unwrap();
    f.new_attr::<i32>()
        .shape(())
        .create("dimension")
        .unwrap()
        .write_scalar(&2)
        .unwrap();
    f.new_dataset_builder()
        .with_data(&array![[1.0f32, 0.0], [0.0, 1.0]])
        .create("train")
        .unwrap();
    f.new_dataset_builder()
        .with_data(&array![[1.0f32, 0.1]])
        .create("test")
        .unwrap();
    f.new_dataset_builder()
        .with_data(&array![[0i64, 1]])
        .create("neighbors")
        .unwrap();
    f.new_dataset_builder()
        .with_data(&array![[0.005f64, 0.9]])
        .create("distances")
        .unwrap();
    drop(f);
    let ds = dataset::open(&path).unwrap();
    assert_eq!(ds.metric, Metric::Angular);
    let gt = ds.ground_truth.unwrap();
    assert_eq!(
        (gt.neighbors, gt.distances),
        (array![[0, 1]], array![[0.005f32, 0.9]])
    );
    // A wrong `dimension` attribute is a mismatch.
    let f = hdf5::File::open_rw(&path).unwrap();
    f.attr("dimension").unwrap().write_scalar(&3i32).unwrap();
    drop(f);
    assert!(err_of(&path).contains("attribute 'dimension' is 3"));
}
