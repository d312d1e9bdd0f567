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

#[test]
fn bundled_sift_regenerates_identically() {
    // The command in datasets/README.md, run through the library on the repository's copy of
    // the source vectors.
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/sift5k_base_5000x128_u8.npy");
    let dir = tempfile::tempdir().unwrap();
    let name = "sift-5k-128-euclidean";
    let opts = CreateOptions {
        input: source,
        format: None,
        dim: None,
        queries: None,
        name: Some(name.into()),
        metric: Metric::Euclidean,
        test: Some(500),
        seed: 1,
        k: 100,
    };
    let fresh = dataset::create::create(&opts).unwrap();
    let bundled = dataset::open(&resolve(name, dir.path()).unwrap()).unwrap();
    assert_eq!((&fresh.train, &fresh.test), (&bundled.train, &bundled.test));
    let (a, b) = (fresh.ground_truth.unwrap(), bundled.ground_truth.unwrap());
    assert_eq!((a.neighbors, a.distances), (b.neighbors, b.distances));
}

#[test]
fn bundled_ground_truth_is_exact() {
    // Every bundled file's stored neighbours are what an exact search of its own train and
    // test rows gives today.
    let dir = tempfile::tempdir().unwrap();
    for name in ["glove-twitter-25-angular", "sift-5k-128-euclidean"] {
        let ds = dataset::open(&resolve(name, dir.path()).unwrap()).unwrap();
        let stored = ds.ground_truth.unwrap();
        let fresh = dataset::groundtruth::compute(ds.train.view(), ds.test.view(), ds.metric, 100);
        assert_eq!(fresh.neighbors, stored.neighbors, "{name}");
        assert_eq!(fresh.distances, stored.distances, "{name}");
    }
}
