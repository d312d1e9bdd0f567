//! Every output file of the report commands (`table`, `export`, `compare` with `-o`, `plot`
//! PNG and SVG, `report`, `man --dir`): written whole or not at all (an old file stays intact
//! on a full disk), never in place of a FIFO or a device node, errors in words naming the
//! path, and `-o -` for standard output. Points are written with the store's writer; no
//! server is needed.

mod files_support;
mod report_common;

use annbench::results::write_point;
use files_support::{Mount, annbench, is_fifo, mkfifo, temp_files};
use report_common::{labelled, pt};
use std::path::{Path, PathBuf};

const DATASET: &str = "glove-25-angular";

/// 60 points of two labels: exports of some tens of kB.
fn store(dir: &Path) {
    for ef in 0..30i64 {
        for (label, qps) in [("v1", 1000.0), ("v2", 1100.0)] {
            let recall = 0.9 + 0.003 * ef as f64;
            let p = pt(
                "mariadb",
                &[("M", 16)],
                &[("ef_search", 10 + ef)],
                recall,
                qps - ef as f64,
            );
            write_point(dir, &labelled(p, label)).unwrap();
        }
    }
}

/// Each command writing to `out`, with the source options.
fn commands(results: &Path, out: &Path) -> Vec<Vec<String>> {
    let o = |p: &str| out.join(p).display().to_string();
    let common = |cmd: &[&str], file: String| {
        let mut v: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        v.extend(["--dataset".into(), DATASET.into(), "--results".into()]);
        v.push(results.display().to_string());
        v.extend([
            "--data-dir".into(),
            results.join("data").display().to_string(),
        ]);
        v.extend(["-o".into(), file]);
        v
    };
    vec![
        common(&["export"], o("export.csv")),
        common(&["table", "--recall", "0.9"], o("table.md")),
        common(&["compare", "--base", "v1", "--me", "v2"], o("compare.md")),
        common(&["plot", "qps-recall"], o("plot.png")),
        common(&["plot", "qps-recall"], o("plot.svg")),
        common(&["report"], o("report.html")),
    ]
}

/// The file each command of [`commands`] writes.
fn output_of(cmd: &[String]) -> PathBuf {
    PathBuf::from(cmd.last().unwrap())
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn outputs_on_a_full_disk_leave_the_old_file_whole() {
    let mount = match Mount::new(2048) {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED: {why} (run as root on Linux to test a full disk)");
            return;
        }
    };
    let results = tempfile::tempdir().unwrap();
    store(results.path());
    let cmds = commands(results.path(), mount.path());
    for c in &cmds {
        std::fs::write(output_of(c), b"old").unwrap();
    }
    mount.fill("filler", 0);
    for c in &cmds {
        let path = output_of(c);
        let out = annbench(c);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{c:?}:\n{err}");
        assert!(
            err.contains(&path.display().to_string())
                && err.contains("free some space")
                && !err.contains("panicked")
                && !err.contains("Drawing backend"),
            "{c:?}:\n{err}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"old",
            "{c:?} changed the old file"
        );
    }
    assert_eq!(temp_files(mount.path()), Vec::<PathBuf>::new());
    // Room again: the same commands replace the old files.
    std::fs::remove_file(mount.path().join("filler")).unwrap();
    for c in &cmds {
        let out = annbench(c);
        assert!(out.status.success(), "{c:?}:\n{}", stderr(&out));
        assert_ne!(std::fs::read(output_of(c)).unwrap(), b"old");
    }
}

#[test]
fn fifos_and_device_nodes_are_never_written_or_replaced() {
    let results = tempfile::tempdir().unwrap();
    store(results.path());
    let out_dir = tempfile::tempdir().unwrap();
    for c in commands(results.path(), out_dir.path()) {
        let path = output_of(&c);
        mkfifo(&path);
        // Without a reader, opening a FIFO to write blocks: the command must not wait.
        let out = annbench(&c);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{c:?}:\n{err}");
        assert!(
            err.contains(&format!("{}: it is a FIFO", path.display())),
            "{c:?}:\n{err}"
        );
        assert!(is_fifo(&path), "{c:?} replaced the FIFO");
        std::fs::remove_file(&path).unwrap();
    }
    // A character device node like /dev/null, made in the temp dir (root only).
    let node = out_dir.path().join("null.csv");
    let made = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let mut c = commands(results.path(), out_dir.path()).remove(0);
        *c.last_mut().unwrap() = node.display().to_string();
        let out = annbench(&c);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("it is a character device"), "{err}");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        println!("device node part SKIPPED: mknod needs root");
    }
    assert_eq!(temp_files(out_dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn man_pages_refuse_a_fifo_in_their_directory() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("annbench-run.1"));
    let out = annbench(&["man", "--dir", &dir.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("it is a FIFO"), "{}", stderr(&out));
    assert!(is_fifo(&dir.path().join("annbench-run.1")));
}

#[test]
fn plot_errors_name_the_path_in_words() {
    let results = tempfile::tempdir().unwrap();
    store(results.path());
    let missing = results.path().join("no/such/dir/plot.png");
    let mut c = commands(results.path(), results.path()).remove(3);
    *c.last_mut().unwrap() = missing.display().to_string();
    let out = annbench(&c);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot write the plot to {}", missing.display()))
            && err.contains("no/such/dir does not exist")
            && !err.contains("os error")
            && !err.contains("Drawing backend")
            && !err.contains("ImageError"),
        "{err}"
    );
}

#[test]
fn a_dash_output_is_standard_output() {
    let results = tempfile::tempdir().unwrap();
    store(results.path());
    let cwd = tempfile::tempdir().unwrap();
    let mut c = commands(results.path(), cwd.path()).remove(0);
    *c.last_mut().unwrap() = "-".into();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(&c)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ef_search"));
    assert!(!cwd.path().join("-").exists(), "wrote a file named -");
}
