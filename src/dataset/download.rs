//! `annbench datasets get`: downloads `{base}/{name}.hdf5` into the data directory with a
//! progress bar, resuming an interrupted transfer from `NAME.hdf5.part` (HTTP Range), and
//! renaming to `NAME.hdf5` only once the file is complete and valid. The final name therefore
//! never holds a partial or broken file.

use super::registry::{self, Entry, Source};
use super::{bundled, datafile, hdf5_io, synthetic};
use crate::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Environment variable overriding the download base address (tests use a local server).
pub const BASE_URL_ENV: &str = "ANNBENCH_DATASET_URL";

/// `$ANNBENCH_DATASET_URL`, else <https://ann-benchmarks.com>.
pub fn default_base_url() -> String {
    std::env::var(BASE_URL_ENV)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| registry::DEFAULT_BASE_URL.to_owned())
}

/// Makes the named dataset present in `data_dir` and returns its path: downloads it, generates
/// it (synthetic) or writes it out (bundled). An existing valid file is kept unless `force`.
pub fn get(
    name: &str,
    data_dir: &Path,
    base_url: &str,
    force: bool,
    progress: bool,
) -> Result<PathBuf> {
    let entry = registry::lookup(name)?;
    let path = data_dir.join(entry.file_name());
    crate::fsutil::check_output(&path, "the dataset")?;
    if !force && path.is_file() && hdf5_io::info(&path).is_ok() {
        return Ok(path);
    }
    match entry.source {
        Source::Bundled => bundled::write_to(entry, data_dir),
        Source::Synthetic => synthetic::generate_to(entry, data_dir),
        Source::Download => {
            datafile::ensure_dir(data_dir)?;
            download(&entry.url(base_url), &path, progress, entry)
        }
    }
}

fn part_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// Downloads `url` to `dest` via `dest.part`, resuming, then validates and renames.
fn download(url: &str, dest: &Path, progress: bool, entry: &Entry) -> Result<PathBuf> {
    let part = part_path(dest);
    // The partial download is opened for writing: a FIFO there would block the open.
    crate::fsutil::check_output(&part, "the download")?;
    let mut offset = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut req = agent.get(url);
    if offset > 0 {
        req = req.header("Range", format!("bytes={offset}-"));
    }
    let net = |e: ureq::Error| {
        Error::Dataset(format!(
            "cannot download {url}: {e}; check the network or set {BASE_URL_ENV} / --base-url \
             to a reachable mirror (a partial download is kept and resumed)"
        ))
    };
    let resp = req.call().map_err(net)?;
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let total = match status {
        206 => header("content-range").and_then(|v| v.rsplit('/').next()?.parse::<u64>().ok()),
        200 => {
            offset = 0; // the server ignored the Range: start over
            header("content-length").and_then(|v| v.parse().ok())
        }
        416 if offset > 0 => Some(offset), // nothing left to fetch: the part is complete
        _ => {
            return Err(Error::Dataset(format!(
                "cannot download {url}: the server answered HTTP {status}; is '{}' published \
                 there? (base address: --base-url or {BASE_URL_ENV})",
                entry.name
            )));
        }
    };
    if status != 416 {
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(offset > 0)
            .truncate(offset == 0)
            .open(&part)
            .map_err(|e| Error::io(&part, "cannot create the download file", e))?;
        let bar = progress_bar(progress, total, offset, &entry.name);
        let mut body = resp.into_body().into_reader();
        let copied = copy(&mut body, &mut file, &part, &bar);
        bar.finish_and_clear();
        let got = offset + copied?;
        if total.is_some_and(|t| got != t) {
            return Err(interrupted(url, got, total, &part));
        }
    }
    let checked = hdf5_io::info(&part).and_then(|i| {
        if i.dimension == entry.dimension && i.metric == entry.metric {
            Ok(())
        } else {
            Err(Error::Dataset(format!(
                "it holds {}-dimensional {} vectors, expected {} {}",
                i.dimension, i.metric, entry.dimension, entry.metric
            )))
        }
    });
    if let Err(e) = checked {
        let _ = std::fs::remove_file(&part);
        return Err(Error::Dataset(format!(
            "downloaded {url} but it is not a valid '{}' dataset ({e}); the download was \
             removed: try again or check the mirror",
            entry.name
        )));
    }
    std::fs::rename(&part, dest)
        .map_err(|e| Error::io(dest, "cannot move the finished download to", e))?;
    Ok(dest.to_path_buf())
}

/// Copies the body to the file in 1 MiB chunks; a read error is an interrupted transfer.
fn copy(body: &mut impl Read, file: &mut File, part: &Path, bar: &ProgressBar) -> Result<u64> {
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let r = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = file.flush();
                return Err(Error::io(
                    part,
                    "download interrupted (run the same command again to resume); partial data kept in",
                    e,
                ));
            }
        };
        file.write_all(&buf[..r]).map_err(|e| {
            Error::io(part, "cannot write the download (disk full or directory not writable? free space or use --data-dir)", e)
        })?;
        n += r as u64;
        bar.inc(r as u64);
    }
    file.flush()
        .map_err(|e| Error::io(part, "cannot write the download", e))?;
    Ok(n)
}

fn interrupted(url: &str, got: u64, total: Option<u64>, part: &Path) -> Error {
    Error::Dataset(format!(
        "download of {url} stopped after {got} of {} bytes; partial data is kept in {} and the \
         same command resumes it",
        total.map_or("?".into(), |t| t.to_string()),
        part.display()
    ))
}

fn progress_bar(show: bool, total: Option<u64>, done: u64, name: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(t) => ProgressBar::new(t),
        None => ProgressBar::no_length(),
    };
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(name.to_owned());
    bar.set_position(done);
    bar
}
