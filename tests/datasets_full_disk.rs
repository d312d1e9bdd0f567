//! Every HDF5 writer of `annbench datasets` on a nearly full disk (a small tmpfs, or a
//! loop-mounted ext2 image): a clear error naming the file and the space it needs, exit 1, no
//! temp file, and the files that were there byte for byte as they were. (`datasets filter`
//! once crashed here: HDF5's close fails after its own writes failed, and the process died at
//! exit with status 139, leaving its temp file.)

mod files_support;

use files_support::{Mount, annbench, temp_files};
use std::path::Path;

const NAME: &str = "random-xs-20-euclidean";

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 1 with the full-disk error naming `path`, no crash, no backtrace.
fn assert_no_space(out: &std::process::Output, path: &Path) {
    let err = text(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("to {} (it needs ", path.display()))
            && err.contains("free some space")
            && !err.contains("panicked")
            && !err.contains("HDF5"),
        "not the full-disk error naming {}:\n{err}",
        path.display()
    );
}

#[test]
fn dataset_writers_on_a_full_disk_fail_clearly_and_change_nothing() {
    let mount = match Mount::new(4096) {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED: {why} (run as root on Linux to test a full disk)");
            return;
        }
    };
    let dir = mount.path();
    let dir_s = dir.display().to_string();
    // A 1.6 MB dataset and a first sidecar, with room to spare.
    let out = annbench(&["datasets", "generate", NAME, "--data-dir", &dir_s]);
    assert!(out.status.success(), "{}", text(&out));
    let out = annbench(&[
        "datasets",
        "filter",
        NAME,
        "--selectivity",
        "0.5",
        "--kind",
        "range",
        "--data-dir",
        &dir_s,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let data = dir.join(format!("{NAME}.hdf5"));
    let sidecar = dir.join(format!("{NAME}.filters.h5"));
    let (data_bytes, sidecar_bytes) = (
        std::fs::read(&data).unwrap(),
        std::fs::read(&sidecar).unwrap(),
    );
    mount.fill("filler", 100 * 1024);

    // A new sidecar (1.5 MB) does not fit: the old one stays.
    let out = annbench(&[
        "datasets",
        "filter",
        NAME,
        "--selectivity",
        "0.01,0.1",
        "--data-dir",
        &dir_s,
    ]);
    assert_no_space(&out, &sidecar);
    // Ground truth stored in place (800 kB) does not fit: the dataset is as it was.
    let out = annbench(&["datasets", "groundtruth", NAME, "--data-dir", &dir_s]);
    assert_no_space(&out, &data);
    // Whole new dataset files.
    let sub = dir.join("sub-20-euclidean.hdf5");
    let out = annbench(&[
        "datasets",
        "subset",
        NAME,
        "--train",
        "5000",
        "--data-dir",
        &dir_s,
        "-o",
        &sub.display().to_string(),
    ]);
    assert_no_space(&out, &sub);
    let other = dir.join("other");
    std::fs::create_dir(&other).unwrap();
    let out = annbench(&[
        "datasets",
        "generate",
        NAME,
        "--data-dir",
        &other.display().to_string(),
    ]);
    assert_no_space(&out, &other.join(format!("{NAME}.hdf5")));

    assert_eq!(
        std::fs::read(&data).unwrap(),
        data_bytes,
        "the dataset changed"
    );
    assert_eq!(
        std::fs::read(&sidecar).unwrap(),
        sidecar_bytes,
        "the sidecar changed"
    );
    assert!(!sub.exists() && !other.join(format!("{NAME}.hdf5")).exists());
    assert_eq!(
        temp_files(dir),
        Vec::<std::path::PathBuf>::new(),
        "temp files left"
    );
    // Both files still read.
    let out = annbench(&["datasets", "info", NAME, "--data-dir", &dir_s]);
    assert!(out.status.success(), "{}", text(&out));
}
