//! `datasets get` against a local HTTP server (127.0.0.1 only) that serves Range requests and
//! can cut a transfer midway: resume, atomic rename, and no partial file under the final name.

mod files_support;

use annbench::Metric;
use annbench::dataset::{self, Dataset, download};
use ndarray::Array2;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// How the server answers one request.
#[derive(Clone, Copy)]
enum Mode {
    /// The whole (remaining) file, honouring Range.
    Full,
    /// Headers promise the whole file but the connection closes after this many body bytes.
    Cut(usize),
    /// 200 with the whole file even when a Range was asked for.
    IgnoreRange,
    /// 404.
    Missing,
}

/// Serves `body` as `/NAME.hdf5` for the given modes in order (then `Full`), at most 8
/// connections; returns the base URL and the Range headers seen.
fn serve(body: Vec<u8>, modes: Vec<Mode>) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for (i, conn) in listener.incoming().take(8).enumerate() {
            let Ok(mut s) = conn else { return };
            let mut reader = BufReader::new(s.try_clone().unwrap());
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                    range = v.trim().trim_end_matches('-').parse::<usize>().ok();
                }
            }
            log.lock().unwrap().push(range.map(|r| r.to_string()));
            let mode = modes.get(i).copied().unwrap_or(Mode::Full);
            let len = body.len();
            let (head, start) = match (mode, range) {
                (Mode::Missing, _) => {
                    let _ = s.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    continue;
                }
                (Mode::IgnoreRange, _) | (_, None) => {
                    (format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n"), 0)
                }
                (_, Some(r)) => (
                    format!(
                        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {r}-{}/{len}\r\nContent-Length: {}\r\n",
                        len - 1,
                        len - r
                    ),
                    r,
                ),
            };
            let _ = s.write_all(format!("{head}Connection: close\r\n\r\n").as_bytes());
            let end = match mode {
                Mode::Cut(n) => (start + n).min(len),
                _ => len,
            };
            let _ = s.write_all(&body[start..end]);
            let _ = s.flush();
        }
    });
    (base, seen)
}

/// A valid file shaped like mnist-784-euclidean (784-d, euclidean), about 200 KB.
fn mnist_like() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hdf5");
    let train = Array2::from_shape_fn((60, 784), |(i, j)| ((i * 7 + j) % 13) as f32);
    let test = Array2::from_shape_fn((4, 784), |(i, j)| ((i + j) % 5) as f32);
    let ds = Dataset {
        name: "m".into(),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    dataset::save(&ds, &path).unwrap();
    std::fs::read(path).unwrap()
}

const NAME: &str = "mnist-784-euclidean";

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn interrupted_download_resumes_with_range() {
    let body = mnist_like();
    let cut = body.len() / 2;
    let (base, seen) = serve(body.clone(), vec![Mode::Cut(cut), Mode::Full]);
    let dir = tempfile::tempdir().unwrap();
    let err = download::get(NAME, dir.path(), &base, false, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("interrupted") || err.contains("stopped after"),
        "{err}"
    );
    assert_eq!(
        files(dir.path()),
        vec![format!("{NAME}.hdf5.part")],
        "no file under the final name"
    );
    assert_eq!(
        std::fs::metadata(dir.path().join(format!("{NAME}.hdf5.part")))
            .unwrap()
            .len(),
        cut as u64
    );

    let path = download::get(NAME, dir.path(), &base, false, false).unwrap();
    assert_eq!(files(dir.path()), vec![format!("{NAME}.hdf5")]);
    assert_eq!(std::fs::read(&path).unwrap(), body);
    assert_eq!(*seen.lock().unwrap(), vec![None, Some(cut.to_string())]);
    assert_eq!(dataset::open(&path).unwrap().dimension(), 784);
    // Present and valid: a second get does not fetch again.
    download::get(NAME, dir.path(), &base, false, false).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[test]
fn server_ignoring_range_restarts_cleanly() {
    let body = mnist_like();
    let (base, _) = serve(body.clone(), vec![Mode::Cut(1000), Mode::IgnoreRange]);
    let dir = tempfile::tempdir().unwrap();
    assert!(download::get(NAME, dir.path(), &base, false, false).is_err());
    let path = download::get(NAME, dir.path(), &base, false, false).unwrap();
    assert_eq!(std::fs::read(path).unwrap(), body);
}

#[test]
fn invalid_or_missing_content_leaves_nothing() {
    let (base, _) = serve(b"<html>not a dataset</html>".to_vec(), vec![]);
    let dir = tempfile::tempdir().unwrap();
    let err = download::get(NAME, dir.path(), &base, false, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a valid 'mnist-784-euclidean' dataset"),
        "{err}"
    );
    assert!(files(dir.path()).is_empty());

    // A valid HDF5 file of the wrong shape for the name is refused too.
    let sift = dataset::bundled::bytes("sift-5k-128-euclidean")
        .unwrap()
        .to_vec();
    let (base, _) = serve(sift, vec![]);
    let err = download::get(NAME, dir.path(), &base, false, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected 784 euclidean"), "{err}");
    assert!(files(dir.path()).is_empty());

    let (base, _) = serve(Vec::new(), vec![Mode::Missing]);
    let err = download::get(NAME, dir.path(), &base, false, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("HTTP 404"), "{err}");
    assert!(files(dir.path()).is_empty());
}

#[test]
fn unwritable_data_dir_is_reported() {
    // Tests run as root, which ignores permission bits: a data dir under a regular file
    // cannot be created by anyone.
    let (base, seen) = serve(mnist_like(), vec![]);
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let err = download::get(NAME, &blocker.join("data"), &base, false, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot create the data directory") && err.contains("not-a-dir"),
        "{err}"
    );
    assert!(seen.lock().unwrap().is_empty(), "nothing fetched");
}

#[test]
fn full_disk_leaves_no_final_file() {
    // A full file system: a 64 KiB tmpfs for a 190 KB download. (A symlink to /dev/full at
    // the .part name once stood in for it; a device there is now refused by name.)
    let mount = match files_support::Mount::new(64) {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED: {why} (run as root on Linux to test a full disk)");
            return;
        }
    };
    let (base, _) = serve(mnist_like(), vec![]);
    let dir = mount.path();
    let err = download::get(NAME, dir, &base, false, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("disk full") && err.contains("No space left"),
        "{err}"
    );
    assert!(!dir.join(format!("{NAME}.hdf5")).exists());
}

#[test]
fn unknown_name_suggests() {
    let dir = tempfile::tempdir().unwrap();
    let err = download::get(
        "mnist-784-euclidian",
        dir.path(),
        "http://127.0.0.1:9",
        false,
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("did you mean mnist-784-euclidean"), "{err}");
}

#[test]
fn dbpedia_openai_names_download_where_the_network_allows() {
    // The real files are 1536-d angular; a small file of that shape stands in for one.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.hdf5");
    let ds = Dataset {
        name: "d".into(),
        metric: Metric::Angular,
        train: Array2::from_shape_fn((40, 1536), |(i, j)| ((i * 3 + j) % 11) as f32 + 1.0),
        test: Array2::from_shape_fn((3, 1536), |(i, j)| ((i + j) % 7) as f32 + 1.0),
        ground_truth: None,
    };
    dataset::save(&ds, &path).unwrap();
    let (base, seen) = serve(std::fs::read(&path).unwrap(), vec![Mode::Full]);
    let data = tempfile::tempdir().unwrap();
    let got = download::get(
        "dbpedia-openai-100k-angular",
        data.path(),
        &base,
        false,
        false,
    )
    .unwrap();
    assert_eq!(files(data.path()), vec!["dbpedia-openai-100k-angular.hdf5"]);
    let opened = dataset::open(&got).unwrap();
    assert_eq!((opened.dimension(), opened.metric), (1536, Metric::Angular));
    assert_eq!(seen.lock().unwrap().len(), 1);
}
