//! Files of another format version than this annbench's, of every kind it stores or caches
//! (stream results, sweep points, filter sidecars, the live-set truth cache): one of a newer
//! format is refused with "written by a newer annbench ... upgrade annbench", naming it; one of
//! an older format it cannot read is refused, naming the fix. None is ever written over: a
//! rerun once replaced a stream result of another format, and a sweep measured a newer point
//! again over its file. A cache of a newer format is kept, and the truth computed without it.

mod files_support;
mod servers_support;

use files_support::{SIFT, annbench, stream_files, the_file};
use hdf5::types::VarLenUnicode;
use std::path::Path;
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 1 with an error naming `path` and containing every one of `words`.
fn refused(out: &Output, path: &Path, words: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let path = path.display().to_string();
    assert!(
        err.lines()
            .any(|l| l.starts_with("error: ") && l.contains(&path)),
        "{err}"
    );
    for w in words {
        assert!(err.contains(w), "no '{w}' in:\n{err}");
    }
}

const NEWER: [&str; 2] = ["written by a newer annbench (format 99", "upgrade annbench"];

/// The stream result `path` with its `format` set to `format`.
fn set_stream_format(path: &Path, format: u64) -> Vec<u8> {
    let mut run: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    run["format"] = format.into();
    let bytes = serde_json::to_vec_pretty(&run).unwrap();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// A stored streaming run of another format: the rerun and `export --streams` refuse it by
/// name, and the file keeps every byte (against the real PostgreSQL server).
#[test]
fn a_stream_result_of_another_format_is_refused_and_kept() {
    servers_support::postgres(); // the test server is up
    let dir = tempfile::tempdir().unwrap();
    let (data, rb) = stream_files(dir.path());
    let stream = || files_support::stream(dir.path(), &data, &rb, "annbench_files_formats");
    let out = stream();
    assert!(out.status.success(), "{}", stderr(&out));
    let results = dir.path().join("results");
    let result = the_file(&results, ".json");
    let export = || {
        annbench(&[
            "export",
            "--dataset",
            SIFT,
            "--streams",
            "--results",
            &results.display().to_string(),
        ])
    };
    for (format, words) in [
        (99, &NEWER[..]),
        (
            0,
            &["of format 0, written by an older annbench", "move it aside"][..],
        ),
    ] {
        let bytes = set_stream_format(&result, format);
        refused(&stream(), &result, words);
        refused(&export(), &result, words);
        assert_eq!(std::fs::read(&result).unwrap(), bytes, "format {format}");
    }
}

/// The point file at `path` with the `format` of its `annbench` attribute set to `format`.
fn set_point_format(path: &Path, format: u64) -> Vec<u8> {
    {
        let f = hdf5::File::open_rw(path).unwrap();
        let json: VarLenUnicode = f.attr("annbench").unwrap().read_scalar().unwrap();
        let mut x: serde_json::Value = serde_json::from_str(json.as_str()).unwrap();
        x["format"] = format.into();
        f.delete_attr("annbench").unwrap();
        let v: VarLenUnicode = x.to_string().parse().unwrap();
        f.new_attr::<VarLenUnicode>()
            .create("annbench")
            .unwrap()
            .write_scalar(&v)
            .unwrap();
    }
    std::fs::read(path).unwrap()
}

/// A stored point of a newer format: the sweep over it stops naming it (it measured the point
/// again and wrote over the file), and a merge of its store refuses it; the file keeps every
/// byte (against the real PostgreSQL server).
#[test]
fn a_point_of_a_newer_format_stops_the_sweep_and_the_merge_and_is_kept() {
    servers_support::postgres(); // the test server is up
    let data = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let run = || {
        annbench(&[
            "run",
            "--dataset",
            SIFT,
            "--algorithm",
            "pgvector",
            "--build=M=8",
            "--build=ef_construction=16",
            "--query=ef_search=10",
            "--runs=1",
            "--min-time=0",
            "--schema",
            "annbench_files_formats_run",
            "--data-dir",
            &data.path().display().to_string(),
            "--results",
            &results.path().display().to_string(),
        ])
    };
    let out = run();
    assert!(out.status.success(), "{}", stderr(&out));
    let point = the_file(results.path(), ".hdf5");
    let bytes = set_point_format(&point, 99);
    refused(&run(), &point, &NEWER);
    assert_eq!(std::fs::read(&point).unwrap(), bytes);
    let into = tempfile::tempdir().unwrap();
    let merge = annbench(&[
        "merge",
        &results.path().display().to_string(),
        "--results",
        &into.path().display().to_string(),
    ]);
    refused(&merge, &point, &NEWER);
    assert!(files_support::all_files(into.path()).is_empty());
}

/// A filter sidecar of a newer format: `datasets info` refuses it by name, and `datasets
/// filter` does not write over it.
#[test]
fn a_filter_file_of_a_newer_format_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let name = "random-xs-20-euclidean";
    let ok = |args: &[&str]| {
        let out = annbench(args);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    ok(&["datasets", "generate", name, "--data-dir", &d]);
    let filter = [
        "datasets",
        "filter",
        name,
        "--selectivity",
        "0.1",
        "--data-dir",
        &d,
    ];
    ok(&filter);
    let sidecar = dir.path().join(format!("{name}.filters.h5"));
    {
        let f = hdf5::File::open_rw(&sidecar).unwrap();
        f.delete_attr("annbench_filters").unwrap();
        f.new_attr::<i64>()
            .create("annbench_filters")
            .unwrap()
            .write_scalar(&99)
            .unwrap();
    }
    let bytes = std::fs::read(&sidecar).unwrap();
    refused(
        &annbench(&["datasets", "info", name, "--data-dir", &d]),
        &sidecar,
        &NEWER,
    );
    refused(&annbench(&filter), &sidecar, &NEWER);
    assert_eq!(std::fs::read(&sidecar).unwrap(), bytes);
}

/// A live-set truth cache of a newer format: `runbook check --truth` computes the truth, says
/// it is not cached and why, and leaves the file as it is, also when another runbook's truth
/// is cached beside it (which removes older files of the same dataset, entry and k).
#[test]
fn a_truth_cache_of_a_newer_format_is_kept_and_the_truth_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let (data, rb) = stream_files(dir.path());
    let check = |rb: &Path| {
        annbench(&[
            "runbook",
            "check",
            &rb.display().to_string(),
            "--dataset",
            SIFT,
            "--data-dir",
            &data.display().to_string(),
            "--truth",
            "10",
        ])
    };
    let out = check(&rb);
    assert!(out.status.success(), "{}", stderr(&out));
    let cache = the_file(&data, ".stream-gt");
    let mut bytes = std::fs::read(&cache).unwrap();
    assert_eq!(&bytes[..8], b"ANNBSGT1");
    bytes[7] = b'9';
    std::fs::write(&cache, &bytes).unwrap();
    let out = check(&rb);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("not cached")
            && err.contains(&format!(
                "{} is a live-set ground-truth cache written by a newer annbench (format 9",
                cache.display()
            )),
        "{err}"
    );
    assert_eq!(std::fs::read(&cache).unwrap(), bytes);
    // Another runbook's truth is cached beside it; the newer file stays.
    let other = dir.path().join("other.yaml");
    std::fs::write(
        &other,
        format!(
            "{SIFT}:\n  max_pts: 400\n  1: {{operation: insert, start: 0, end: 400}}\n  \
             2: {{operation: search}}\n"
        ),
    )
    .unwrap();
    let out = check(&other);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&cache).unwrap(), bytes);
    let caches = files_support::all_files(&data)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".stream-gt"))
        .count();
    assert_eq!(caches, 2);
}
