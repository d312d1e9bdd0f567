//! A sweep whose `--results` file system fills up: a clear error and a non-zero exit (once an
//! HDF5 crash), the points that fit stored and readable, no hidden temp file, and no vector
//! index left on the real server. The file system is a 200 KiB tmpfs (a loop-mounted ext2
//! image where tmpfs cannot mount); the test says why it is skipped when neither can.

mod files_support;
mod servers_support;

use annbench::connect;
use files_support::{Mount, all_files};
use mysql::prelude::Queryable;
use servers_support::*;
use std::path::Path;
use std::process::Command;

/// Vector indexes on the table of the test's dataset in annbench's schema/database.
/// The sweep's vector indexes on the sift-5k tables; a streaming run's table (`stream_*`, from
/// `annbench stream` or its tests) keeps its index on purpose, so that the run can resume.
fn vector_indexes(url: &connect::ServerUrl) -> Vec<String> {
    match url.kind().key() {
        "mariadb" => {
            let mut c = annbench::backend::mariadb::server::connect(url).unwrap();
            c.query(
                "SELECT CONCAT(TABLE_NAME, '.', INDEX_NAME) FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = 'annbench' AND INDEX_TYPE = 'VECTOR' \
                 AND TABLE_NAME LIKE '%sift_5k_128_euclidean%' AND TABLE_NAME NOT LIKE 'stream\\_%'",
            )
            .unwrap()
        }
        "postgres" => {
            let mut c = annbench::backend::postgres::server::connect(url).unwrap();
            c.query(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'annbench' \
                 AND indexdef ILIKE '%USING hnsw%' AND tablename LIKE '%sift_5k_128_euclidean%' \
                 AND tablename NOT LIKE 'stream\\_%'",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
        }
        other => panic!("no vector index query for {other}"),
    }
}

#[test]
fn a_full_results_disk_is_a_clear_error_and_leaves_everything_tidy() {
    // One mount, one scenario after the other.
    let mount = match Mount::small() {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED: {why} (run as root on Linux to test a full disk)");
            return;
        }
    };
    let data = tempfile::tempdir().unwrap();
    no_room_for_one_point(&mount, data.path());
    for (url, algo, build) in [
        (postgres(), "pgvector", "--build=ef_construction=32"),
        (mariadb(), "mariadb", "--build=M=6"),
    ] {
        let results = mount.path().join(algo);
        let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args([
                "run",
                "--dataset",
                "sift-5k-128-euclidean",
                "--algorithm",
                algo,
                build,
                "--build=M=6",
                "--query=ef_search=10,20,40,80",
                "--runs=1",
            ])
            .arg("--data-dir")
            .arg(data.path())
            .arg("--results")
            .arg(&results)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{algo}: not a clean failure:\n{stderr}"
        );
        assert!(
            stderr.contains("free some space") && !stderr.contains("panicked"),
            "{algo}:\n{stderr}"
        );
        let files = all_files(&results);
        assert!(
            !files.is_empty(),
            "{algo}: nothing was stored before the disk filled"
        );
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy();
            assert!(
                !name.starts_with('.'),
                "{algo}: temp file left: {}",
                f.display()
            );
            annbench::results::read_point(f).unwrap();
        }
        assert_eq!(
            vector_indexes(&url),
            Vec::<String>::new(),
            "{algo}: index left"
        );
        std::fs::remove_dir_all(&results).unwrap();
    }
}

/// With 20 KiB free, not even one point fits: the sweep must not start.
fn no_room_for_one_point(mount: &Mount, data: &Path) {
    let free = annbench::fsutil::free_bytes(mount.path()).unwrap();
    let filler = mount.path().join("filler-20k");
    std::fs::write(&filler, vec![1u8; (free - 20 * 1024) as usize]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args([
            "run",
            "--dataset",
            "sift-5k-128-euclidean",
            "--algorithm",
            "pgvector",
        ])
        .arg("--data-dir")
        .arg(data)
        .arg("--results")
        .arg(mount.path().join("res"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("free some space"), "{stderr}");
    // The sweep never started: no algorithm, load or build line.
    assert!(
        !stderr.contains("build(s)") && !stderr.contains("rows in"),
        "{stderr}"
    );
    std::fs::remove_file(filler).unwrap();
    let _ = std::fs::remove_dir_all(mount.path().join("res"));
}
