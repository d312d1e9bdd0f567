//! `ANNBENCH_PARSE_ONLY=1`: the documentation walk's way to check a command line it cannot
//! run. The arguments are parsed and validated as usual; a valid line exits 0 having done
//! nothing (no dataset read, no server, no file written), an invalid one exits 2 with the
//! usage error. Without the variable the same line runs.

use std::path::Path;
use std::process::{Command, Output};

fn annbench(args: &[&str], dir: &Path, parse_only: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("ANNBENCH_DATA_DIR")
        .env_remove("ANNBENCH_RESULTS")
        .env_remove("ANNBENCH_SHARD")
        // No server anywhere: a line that tried to connect would fail.
        .env("ANNBENCH_MARIADB_URL", "mysql://u:pw@127.0.0.1:1/annbench")
        .env(
            "ANNBENCH_POSTGRES_URL",
            "postgres://u:pw@127.0.0.1:1/annbench",
        )
        .env("ANNBENCH_CACHE_DIR", dir.join("no-cache"));
    match parse_only {
        Some(v) => cmd.env("ANNBENCH_PARSE_ONLY", v),
        None => cmd.env_remove("ANNBENCH_PARSE_ONLY"),
    };
    cmd.output().unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn valid_lines_exit_0_and_do_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lines: &[&[&str]] = &[
        &[
            "run",
            "--dataset",
            "fashion-mnist-784-euclidean",
            "--algorithm",
            "mariadb",
            "--algorithm",
            "pgvector",
            "--build",
            "m=8,16",
            "--min-time",
            "1s",
            "--target-ci",
            "2%",
            "--order",
            "points",
            "--shard",
            "2/3",
        ],
        &["datasets", "get", "fashion-mnist-784-euclidean"],
        &["datasets", "info", "sift-5k-128-euclidean"],
        &["table", "--dataset", "nosuch", "--format", "blocks"],
        &[
            "merge",
            "results-1",
            "results-2",
            "--results",
            "out",
            "--complete",
        ],
        &["servers", "check", "--format", "json"],
    ];
    for args in lines {
        let out = annbench(args, d, Some("1"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{args:?} printed something"
        );
    }
    // Nothing written: no data/ (bundled sets written out), no results, no merge output.
    assert!(entries(d).is_empty(), "files written: {:?}", entries(d));
}

#[test]
fn invalid_lines_exit_2_with_the_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (args, says) in [
        (
            &["run", "--dataset", "x", "--no-such-flag"][..],
            "--no-such-flag",
        ),
        (
            &["run", "--dataset", "x", "--algorithm", "nosuch"][..],
            "nosuch",
        ),
        (&["run", "--dataset", "x", "--min-time", "5d"][..], "5d"),
        (&["run", "--dataset", "x", "--shard", "4/3"][..], "4/3"),
        (&["table", "--dataset", "x", "--format", "yaml"][..], "yaml"),
        (&["datasets", "filter", "x"][..], "--selectivity"),
        (&["no-such-command"][..], "no-such-command"),
    ] {
        let out = annbench(args, d, Some("1"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(entries(d).is_empty(), "files written: {:?}", entries(d));
}

#[test]
fn without_the_variable_or_with_0_the_line_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = ["table", "--dataset", "nosuch-dataset"];
    assert_eq!(annbench(&args, d, Some("1")).status.code(), Some(0));
    for parse_only in [None, Some("0"), Some("")] {
        let out = annbench(&args, d, parse_only);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{parse_only:?}: {err}");
        assert!(err.contains("nosuch-dataset"), "{parse_only:?}: {err}");
    }
}
