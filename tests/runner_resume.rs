//! Which stored points a sweep reuses (only those of the same label, parameters and data),
//! labels that earlier versions squeezed into one file name, files of the previous format,
//! `--keep-going`, and the checks of `--label` and `--results` made before any backend exists.

mod runner_fake;

use annbench::runner::{SweepOptions, SweepSummary, run_sweep_with};
use annbench::{Error, dataset::Dataset};
use runner_fake::{Fake, Log, Recorder, Script, dataset};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const GRID: &str =
    "algorithm: mariadb\ngroups:\n  - build: {M: [4, 8]}\n    query: {ef_search: [10, 20]}\n";

fn options(dir: &Path, label: Option<&str>) -> SweepOptions {
    let cfg = dir.join("grid.yml");
    std::fs::write(&cfg, GRID).unwrap();
    SweepOptions {
        dataset: "fake-euclidean".into(),
        algorithms: vec!["mariadb".into()],
        config_files: vec![cfg],
        count: 3,
        runs: 1,
        results_dir: dir.join("results"),
        label: label.map(String::from),
        ..SweepOptions::default()
    }
}

/// Run a sweep over `data` with a fresh fake; the outcome, the fake's calls, the warnings.
fn sweep_on(
    data: &Dataset,
    opts: &SweepOptions,
    script: Script,
) -> (annbench::Result<SweepSummary>, Vec<String>, Vec<String>) {
    let log = Arc::new(Mutex::new(Log::default()));
    let factory = {
        let (log, data) = (Arc::clone(&log), data.clone());
        move |_: &str| -> annbench::Result<Box<dyn annbench::backend::Backend>> {
            Ok(Box::new(Fake::new(Arc::clone(&log), script.clone(), &data)))
        }
    };
    let rec = Recorder::default();
    let out = run_sweep_with(data.clone(), opts, &rec, &factory);
    let calls = log.lock().unwrap().calls.clone();
    let warnings = rec
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| e.strip_prefix("warning ").map(String::from))
        .collect();
    (out, calls, warnings)
}

fn sweep(opts: &SweepOptions) -> (annbench::Result<SweepSummary>, Vec<String>, Vec<String>) {
    sweep_on(&dataset(40, 12), opts, Script::default())
}

/// Every file under `dir`, recursively, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn labels_that_used_to_share_a_file_are_measured_and_stored_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (out, ..) = sweep(&options(dir.path(), Some("v1 a")));
    assert_eq!(out.unwrap().measured(), 4);
    let first = files(&dir.path().join("results"));
    for label in ["v1_a", "日本", "中国"] {
        let (out, ..) = sweep(&options(dir.path(), Some(label)));
        assert_eq!(
            out.unwrap().measured(),
            4,
            "label {label} was reported stored"
        );
    }
    let all = files(&dir.path().join("results"));
    assert_eq!(all.len(), 16);
    // --force for one label leaves every other label's files byte for byte.
    let mut forced = options(dir.path(), Some("v1_a"));
    forced.force = true;
    assert_eq!(sweep(&forced).0.unwrap().measured(), 4);
    let after = files(&dir.path().join("results"));
    for f in &first {
        assert!(after.contains(f), "{} changed", f.0.display());
    }
    let points = annbench::results::load_points(
        &dir.path().join("results"),
        "fake-euclidean",
        3,
        dir.path(),
    )
    .unwrap();
    for label in ["v1 a", "v1_a", "日本", "中国"] {
        let n = points
            .iter()
            .filter(|p| p.label.as_deref() == Some(label))
            .count();
        assert_eq!(n, 4, "{label}");
    }
}

#[test]
fn points_of_other_data_under_the_same_name_are_measured_again() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), None);
    assert_eq!(sweep(&opts).0.unwrap().measured(), 4);
    let (out, calls, _) = sweep(&opts);
    assert_eq!(out.unwrap().measured(), 0, "{calls:?}");

    // Same name, one test vector changed: nothing stored is for this data.
    let mut other = dataset(40, 12);
    other.test[[3, 1]] = 2.0;
    let (out, _, warnings) = sweep_on(&other, &opts, Script::default());
    let summary = out.unwrap();
    assert_eq!(summary.measured(), 4);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("measured on different data")),
        "{warnings:?}"
    );
    let fp: Vec<_> = summary
        .points
        .iter()
        .map(|p| p.result.dataset_fingerprint.clone().unwrap())
        .collect();
    assert!(fp.iter().all(|f| f.len() == 32 && f == &fp[0]), "{fp:?}");
    // And the stored points are now those of the new data.
    assert_eq!(
        sweep_on(&other, &opts, Script::default())
            .0
            .unwrap()
            .measured(),
        0
    );
    assert_eq!(files(&opts.results_dir).len(), 4);
}

/// Rewrite a point file as the first format wrote it: no fingerprint, `format: 1`.
fn to_first_format(path: &Path) {
    let file = hdf5::File::open_rw(path).unwrap();
    let attr = file.attr("annbench").unwrap();
    let json: hdf5::types::VarLenUnicode = attr.read_scalar().unwrap();
    let mut v: serde_json::Value = serde_json::from_str(json.as_str()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("dataset_fingerprint");
    o.insert("format".into(), 1.into());
    drop(attr);
    file.delete_attr("annbench").unwrap();
    let text: hdf5::types::VarLenUnicode = v.to_string().parse().unwrap();
    file.new_attr::<hdf5::types::VarLenUnicode>()
        .create("annbench")
        .unwrap()
        .write_scalar(&text)
        .unwrap();
}

#[test]
fn files_of_the_first_format_are_read_moved_and_measured_again() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // A point of label "v1 a" as the first format stored it: squeezed name, no fingerprint.
    let (out, ..) = sweep(&options(dir.path(), Some("v1 a")));
    let summary = out.unwrap();
    for p in &summary.points {
        to_first_format(&p.path);
        let name = p
            .path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace("v1%20a", "v1_a");
        std::fs::rename(&p.path, p.path.with_file_name(name)).unwrap();
    }
    let old = annbench::results::load_points(&results, "fake-euclidean", 3, dir.path()).unwrap();
    assert_eq!(old.len(), 4);
    assert!(old.iter().all(|p| p.dataset_fingerprint.is_none()));

    // Label "v1_a" now owns those names: the old files move to their own, and all 8 points
    // are measured (the old ones cannot be matched to this data).
    let (out, _, warnings) = sweep(&options(dir.path(), Some("v1_a")));
    assert_eq!(out.unwrap().measured(), 4);
    assert!(warnings.iter().any(|w| w.contains("moved")), "{warnings:?}");
    assert_eq!(files(&results).len(), 8);
    let (out, _, warnings) = sweep(&options(dir.path(), Some("v1 a")));
    assert_eq!(out.unwrap().measured(), 4);
    assert!(
        warnings.iter().any(|w| w.contains("earlier annbench")),
        "{warnings:?}"
    );
    assert_eq!(
        files(&results).len(),
        8,
        "the old files were replaced, not kept beside"
    );
    let now = annbench::results::load_points(&results, "fake-euclidean", 3, dir.path()).unwrap();
    assert!(now.iter().all(|p| p.dataset_fingerprint.is_some()));

    // An old file at a point's squeezed name (no other label in the way) is superseded.
    let (out, ..) = sweep(&options(dir.path(), Some("x y")));
    let p = out.unwrap().points[0].path.clone();
    to_first_format(&p);
    let squeezed = p.with_file_name(
        p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace("x%20y", "x_y"),
    );
    std::fs::rename(&p, &squeezed).unwrap();
    let (out, ..) = sweep(&options(dir.path(), Some("x y")));
    assert_eq!(out.unwrap().measured(), 1);
    assert!(!squeezed.exists() && p.exists());
}

#[test]
fn keep_going_records_failures_and_measures_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), None);
    opts.keep_going = true;
    let script = Script {
        fail_at_point: Some(1),
        fail_builds: vec!["m=8".into()],
        ..Script::default()
    };
    let (out, calls, _) = sweep_on(&dataset(40, 12), &opts, script.clone());
    let summary = out.unwrap();
    assert_eq!(summary.measured(), 1, "{calls:?}");
    let failed: Vec<String> = summary.failures.iter().map(|f| f.what()).collect();
    assert_eq!(
        failed,
        [
            "mariadb(m=4, ef_search=10) x1 clients",
            "mariadb(m=8) build"
        ]
    );
    assert!(summary.failures[0].error.contains("fake server went away"));
    assert_eq!(calls.last().map(String::as_str), Some("drop_index"));

    // Without --keep-going the first failure stops the sweep.
    opts.keep_going = false;
    let (out, calls, _) = sweep_on(&dataset(40, 12), &opts, script);
    assert!(
        out.unwrap_err()
            .to_string()
            .contains("fake server went away")
    );
    assert!(
        !calls.iter().any(|c| c.starts_with("build m=8")),
        "{calls:?}"
    );

    // A rerun measures only what failed.
    opts.keep_going = true;
    let (out, ..) = sweep(&opts);
    assert_eq!(out.unwrap().measured(), 3);
}

#[test]
fn keep_going_goes_on_to_the_next_algorithm_when_one_cannot_connect() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), None);
    opts.keep_going = true;
    opts.algorithms = vec!["pgvector".into(), "mariadb".into()];
    opts.build_overrides = vec!["M=4".into(), "ef_construction=8".into()];
    let data = dataset(40, 12);
    let log = Arc::new(Mutex::new(Log::default()));
    let factory = {
        let (log, data) = (Arc::clone(&log), data.clone());
        move |name: &str| -> annbench::Result<Box<dyn annbench::backend::Backend>> {
            if name == "pgvector" {
                return Err(Error::Server("cannot reach PostgreSQL".into()));
            }
            Ok(Box::new(Fake::new(
                Arc::clone(&log),
                Script::default(),
                &data,
            )))
        }
    };
    let summary = run_sweep_with(data, &opts, &Recorder::default(), &factory).unwrap();
    assert_eq!(summary.failures.len(), 1);
    assert_eq!(summary.failures[0].what(), "pgvector");
    assert_eq!(summary.measured(), 2);
}

#[test]
fn a_bad_label_or_results_directory_fails_before_any_backend_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(250);
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    for (opts, expect) in [
        (options(dir.path(), Some(&long)), "too long"),
        (options(dir.path(), Some(" ")), "--label is empty"),
        (options(dir.path(), Some("a\nb")), "control character"),
        (
            SweepOptions {
                results_dir: file.clone(),
                ..options(dir.path(), None)
            },
            "not a directory",
        ),
        (
            SweepOptions {
                results_dir: file.join("sub"),
                ..options(dir.path(), None)
            },
            "--results",
        ),
    ] {
        let (out, calls, _) = sweep(&opts);
        let err = out.unwrap_err().to_string();
        assert!(err.contains(expect), "{expect}: {err}");
        assert!(calls.is_empty(), "{calls:?}");
    }
    // A dataset name with a backslash is stored under an encoded directory, not refused.
    let mut data = dataset(40, 12);
    data.name = "a\\b".into();
    let (out, ..) = sweep_on(&data, &options(dir.path(), None), Script::default());
    assert!(
        out.unwrap().points[0]
            .path
            .to_str()
            .unwrap()
            .contains("a%5Cb")
    );
}
