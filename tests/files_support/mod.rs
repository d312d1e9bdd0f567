//! What the file tests share: a small mounted file system to fill up, the files under a
//! directory, FIFOs, a command run with a deadline (a command that blocks on a FIFO is
//! killed and reported instead of hanging the test), the binary run in a data dir, dataset
//! files written by hand, and a small streaming run on PostgreSQL.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A small mounted file system, unmounted on drop.
pub struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    /// A tmpfs of `kib` KiB, else a loop-mounted ext2 image with about `kib` KiB free; `Err`
    /// says why neither could be mounted (not root, no mount in a container).
    pub fn new(kib: u64) -> Result<Mount, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let p = dir.path().display().to_string();
        let tmpfs = sh(&format!("mount -t tmpfs -o size={kib}k tmpfs '{p}'"));
        if tmpfs.is_ok() {
            return Ok(Mount { dir });
        }
        let img = format!("{p}.img");
        let looped = sh(&format!(
            "truncate -s {}k '{img}' && mkfs.ext2 -q -F -m 0 '{img}' && mount -o loop '{img}' '{p}' \
             && rm -f '{img}' && head -c $(( $(df --output=avail -B1 '{p}' | tail -1) - {} )) /dev/zero > '{p}/filler'",
            kib * 2 + 1024,
            kib * 1024
        ));
        match looped {
            Ok(()) => Ok(Mount { dir }),
            Err(e) => {
                let _ = std::fs::remove_file(&img);
                Err(format!(
                    "cannot mount tmpfs ({}) nor a loop image ({e})",
                    tmpfs.unwrap_err()
                ))
            }
        }
    }

    /// A 200 KiB mount.
    pub fn small() -> Result<Mount, String> {
        Mount::new(200)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Mount it read-only: writes fail with EROFS, for root too (which permission bits do not
    /// stop).
    pub fn read_only(&self) -> Result<(), String> {
        sh(&format!("mount -o remount,ro '{}'", self.path().display()))
    }

    /// Fill the file system with a file `name` until only `left` bytes are free.
    pub fn fill(&self, name: &str, left: u64) {
        let free = annbench::fsutil::free_bytes(self.path()).unwrap();
        let size = free.saturating_sub(left) as usize;
        std::fs::write(self.path().join(name), vec![1u8; size]).unwrap();
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = sh(&format!("umount -l '{}'", self.dir.path().display()));
    }
}

pub fn sh(script: &str) -> Result<(), String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Every file under `dir`, hidden ones included.
pub fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Hidden files (temp files) under `dir`.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    all_files(dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect()
}

/// Make a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// True when `path` is (still) a FIFO.
pub fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Run `cmd` with no standard input; a command still running after `limit` is killed and the
/// test fails, saying it blocked.
pub fn run_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} blocked for {limit:?} and was killed; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `annbench ARGS`, run within 30 s.
pub fn annbench<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
    cmd.args(args).env("RUST_BACKTRACE", "1");
    run_within(cmd, Duration::from_secs(30))
}

/// `annbench ARGS` in `dir`, with `dir/data` as its data dir (ANNBENCH_DATA_DIR).
pub fn annbench_in(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .current_dir(dir)
        .env("ANNBENCH_DATA_DIR", dir.join("data"))
        .output()
        .unwrap()
}

/// `annbench ARGS` with `data_dir` as its data dir and no dataset mirror
/// (`ANNBENCH_DATASET_URL` removed), so nothing is fetched.
pub fn annbench_data(args: &[&str], data_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .env("ANNBENCH_DATA_DIR", data_dir)
        .env_remove("ANNBENCH_DATASET_URL")
        .output()
        .unwrap()
}

/// The standard output of a command that must have succeeded (its stderr in the failure).
pub fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// A new HDF5 file at `path` holding only the ann-benchmarks `distance` attribute: a test adds
/// the datasets it wants with [`add_dataset`], unchecked, as another tool might write them.
pub fn hdf5_with_distance(path: &Path, distance: &str) -> hdf5::File {
    let f = hdf5::File::create(path).unwrap();
    let v: hdf5::types::VarLenUnicode = distance.parse().unwrap();
    f.new_attr::<hdf5::types::VarLenUnicode>()
        .shape(())
        .create("distance")
        .unwrap()
        .write_scalar(&v)
        .unwrap();
    f
}

/// Add `data` to `f` as the dataset `name`.
pub fn add_dataset<T: hdf5::H5Type, D: ndarray::Dimension>(
    f: &hdf5::File,
    name: &str,
    data: &ndarray::Array<T, D>,
) {
    f.new_dataset_builder()
        .with_data(data)
        .create(name)
        .unwrap();
}

/// The bundled set the streaming helpers run on.
pub const SIFT: &str = "sift-5k-128-euclidean";

/// A data dir `dir/data` holding the bundled SIFT-5k set, and a runbook `dir/rb.yaml` that
/// inserts 500 rows and searches once.
pub fn stream_files(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("datasets/{SIFT}.hdf5")),
        data.join(format!("{SIFT}.hdf5")),
    )
    .unwrap();
    let rb = dir.join("rb.yaml");
    std::fs::write(
        &rb,
        format!(
            "{SIFT}:\n  max_pts: 500\n  1: {{operation: insert, start: 0, end: 500}}\n  \
             2: {{operation: search}}\n"
        ),
    )
    .unwrap();
    (data, rb)
}

/// `annbench stream` of `rb` on pgvector (its tables in `schema`) with `data` as its data
/// dir, into `dir/results` (within the 30 s of [`annbench`]).
pub fn stream(dir: &Path, data: &Path, rb: &Path, schema: &str) -> Output {
    annbench(&[
        "stream",
        "--dataset",
        SIFT,
        "--runbook",
        &rb.display().to_string(),
        "--algorithm",
        "pgvector",
        "--build=M=8",
        "--build=ef_construction=16",
        "--query=ef_search=10",
        "--runs=1",
        "--min-time=0",
        "--markers=0",
        "--schema",
        schema,
        "--data-dir",
        &data.display().to_string(),
        "--results",
        &dir.join("results").display().to_string(),
    ])
}

/// The one file under `dir` whose name ends with `suffix`.
pub fn the_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<_> = all_files(dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}
