//! Name resolution, the bundled sets and their reproducibility.

use annbench::Metric;
use annbench::dataset::{self, create::CreateOptions, resolve};
use std::path::PathBuf;

#[test]
fn bundled_sets_are_written_on_first_use() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nested/data");
    let path = resolve("glove-twitter-25-angular", &data).unwrap();
    assert_eq!(path, data.join("glove-twitter-25-angular.hdf5"));
    let ds = dataset::open(&path).unwrap();
    assert_eq!(
        (ds.metric, ds.dimension(), ds.train.nrows(), ds.test.nrows()),
        (Metric::Angular, 25, 10_925, 1000)
    );
    assert_eq!(ds.ground_truth.unwrap().neighbors.ncols(), 100);
    // Second use finds the file; a path resolves to itself.
    assert_eq!(resolve("glove-twitter-25-angular", &data).unwrap(), path);
    assert_eq!(resolve(path.to_str().unwrap(), dir.path()).unwrap(), path);
}

#[test]
fn every_registry_entry_matches_its_bundled_file() {
    let dir = tempfile::tempdir().unwrap();
    for e in dataset::registry::all()
        .iter()
        .filter(|e| e.source == dataset::registry::Source::Bundled)
    {
        let info = dataset::info(&resolve(&e.name, dir.path()).unwrap()).unwrap();
        assert_eq!(
            (info.dimension, info.metric, info.train, info.test),
            (e.dimension, e.metric, e.train, e.test)
        );
    }
}

#[test]
fn download_names_and_unknown_names_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let err = resolve("sift-128-euclidean", dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("annbench datasets get sift-128-euclidean"),
        "{err}"
    );
    let err = resolve("sift-128-euclidan", dir.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("did you mean sift-128-euclidean"), "{err}");
    let err = resolve("no/such/file.hdf5", dir.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no/such/file.hdf5: no such file"), "{err}");
}

#[test]
fn files_in_the_data_dir_resolve_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        resolve("sift-5k-128-euclidean", dir.path()).unwrap(),
        dir.path().join("my-own-set.hdf5"),
    )
    .unwrap();
    assert_eq!(
        resolve("my-own-set", dir.path()).unwrap(),
        dir.path().join("my-own-set.hdf5")
    );
    assert_eq!(
        resolve("my-own-set.hdf5", dir.path()).unwrap(),
        dir.path().join("my-own-set.hdf5")
    );
}

fn shared() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("ANNBENCH_SHARED_DATASETS").map(PathBuf::from),
        root.parent().map(|p| p.join("shared/datasets")),
        Some("/work/shared/datasets".into()),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.join("glove-twitter-25").exists())
    .expect("shared datasets not found: set ANNBENCH_SHARED_DATASETS")
}

#[test]
fn bundled_sets_regenerate_identically() {
    // The commands in datasets/README.md, run through the library.
    let s = shared();
    let cases = [
        (
            "glove-twitter-25-angular",
            "glove-twitter-25/vectors_11925x25_f32.bin",
            25,
            Metric::Angular,
            1000,
        ),
        (
            "sift-5k-128-euclidean",
            "sift-5k/base_5000x128_f32.bin",
            128,
            Metric::Euclidean,
            500,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, file, dim, metric, test) in cases {
        let opts = CreateOptions {
            input: s.join(file),
            format: None,
            dim: Some(dim),
            queries: None,
            name: Some(name.into()),
            metric,
            test: Some(test),
            seed: 1,
            k: 100,
        };
        let fresh = dataset::create::create(&opts).unwrap();
        let bundled = dataset::open(&resolve(name, dir.path()).unwrap()).unwrap();
        assert_eq!(
            (&fresh.train, &fresh.test),
            (&bundled.train, &bundled.test),
            "{name}"
        );
        let (a, b) = (fresh.ground_truth.unwrap(), bundled.ground_truth.unwrap());
        assert_eq!(
            (a.neighbors, a.distances),
            (b.neighbors, b.distances),
            "{name}"
        );
    }
}
