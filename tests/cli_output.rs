//! `annbench ... | head -1`: output into a pipe whose reader has gone never panics; the
//! command does its work and exits quietly (0), and a run still stores its points.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A pipe whose read end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) returns.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here; the read end is dropped.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

/// Run with stdout (and, if `both`, stderr) into a closed pipe.
fn run(args: &[&str], dir: &Path, both: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
    cmd.args(args)
        .current_dir(dir)
        .env("ANNBENCH_DATA_DIR", dir.join("data"))
        .stdout(closed_pipe());
    if both {
        cmd.stderr(closed_pipe());
    } else {
        cmd.stderr(Stdio::piped());
    }
    cmd.output().unwrap()
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (args, both) in [
        (vec!["datasets", "list"], false),
        (vec!["datasets", "info", "sift-5k-128-euclidean"], false),
        (vec!["--help"], false),
        (
            vec![
                "run",
                "--dataset",
                "sift-5k-128-euclidean",
                "--algorithm",
                "exact",
                "--runs",
                "1",
            ],
            true,
        ),
        (vec!["table", "--dataset", "sift-5k-128-euclidean"], false),
    ] {
        let out = run(&args, d, both);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("error"),
            "{args:?}: {err}"
        );
    }
    // The run went on to store its point although nobody read its output.
    let stored = d.join("results/sift-5k-128-euclidean/10/exact");
    assert_eq!(std::fs::read_dir(stored).unwrap().count(), 1);
}

#[test]
fn an_error_into_a_closed_pipe_still_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["datasets", "info", "no-such-dataset"], dir.path(), true);
    assert_eq!(out.status.code(), Some(1));
}
