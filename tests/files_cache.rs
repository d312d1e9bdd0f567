//! A cache that cannot be written never stops the measurement: with a read-only data dir,
//! `runbook check --truth` and `stream` compute the live-set truth, warn that it is not cached,
//! why, and how to cache it, and go on (`stream` refused the whole run). The data dir is a
//! tmpfs remounted read-only, which binds root too (the tests run as root, whom permission
//! bits do not stop); the test skips, saying so, where nothing can be mounted.

mod files_support;
mod servers_support;

use files_support::{Mount, SIFT, annbench, stream_files};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The warning of a truth that could not be cached in the read-only `data`.
fn warned_not_cached(out: &Output, data: &std::path::Path) {
    let err = stderr(out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "could not cache the live-set truth in {}/{SIFT}.",
            data.display()
        )) && err.contains("is on a read-only file system; give a path on a writable one")
            && err.contains("it will be computed again next time; give a writable --data-dir"),
        "{err}"
    );
    assert_eq!(
        err.matches("could not cache").count(),
        1,
        "warned once:\n{err}"
    );
}

#[test]
fn a_read_only_data_dir_computes_the_truth_and_says_it_is_not_cached() {
    servers_support::postgres(); // the test server is up
    let mount = match Mount::new(20 * 1024) {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED: no read-only data dir can be made here: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let (files, rb) = stream_files(dir.path());
    let data = mount.path();
    std::fs::copy(
        files.join(format!("{SIFT}.hdf5")),
        data.join(format!("{SIFT}.hdf5")),
    )
    .unwrap();
    if let Err(why) = mount.read_only() {
        eprintln!("SKIPPED: cannot remount the data dir read-only: {why}");
        return;
    }
    let check = annbench(&[
        "runbook",
        "check",
        &rb.display().to_string(),
        "--dataset",
        SIFT,
        "--data-dir",
        &data.display().to_string(),
        "--truth",
        "10",
    ]);
    warned_not_cached(&check, data);
    let out = files_support::stream(dir.path(), data, &rb, "annbench_files_cache");
    warned_not_cached(&out, data);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("mean recall"),
        "the run measured:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let cached: Vec<_> = files_support::all_files(data)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".stream-gt"))
        .collect();
    assert!(cached.is_empty(), "{cached:?}");
}
