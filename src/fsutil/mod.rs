//! File-system helpers for everything annbench reads and writes: free space before writing,
//! atomic writes that leave no temp file behind on any error ([`atomic`]), special files
//! (FIFOs, devices, sockets, directories) refused wherever annbench reads or writes a file
//! ([`special`]), one rule for files of another format version ([`format`]), and an up-front
//! check that a directory is writable (so a sweep fails before it loads or builds anything).

mod atomic;
mod format;
mod special;

pub use atomic::{release, reserve, temp_path, write_atomic, write_atomic_with, write_error};
pub use format::Versioned;
pub use special::{
    check_output, check_report_output, open_existing, open_read, read_if_any, read_text,
    read_text_if_any, refuse_special,
};

use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Bytes kept free beyond what a write needs, so annbench never fills a disk to the last block.
pub const SPARE_BYTES: u64 = 64 * 1024;

/// Bytes available to this user on the file system holding `path` (or its nearest existing
/// ancestor); `None` when the system cannot tell.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let mut p = path;
    while !p.exists() {
        p = p.parent().filter(|p| !p.as_os_str().is_empty())?;
    }
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// An error when the file system of `path` has less than `needed` bytes (+ [`SPARE_BYTES`])
/// free; `what` says what was to be written.
pub fn ensure_space(path: &Path, needed: u64, what: &str) -> Result<()> {
    match free_bytes(path) {
        Some(free) if free < needed.saturating_add(SPARE_BYTES) => {
            Err(no_space(path, needed, what, Some(free)))
        }
        _ => Ok(()),
    }
}

/// The error of a full disk: `path`, what was to be written there, the space it needs and,
/// when known, the space that is free.
pub fn no_space(path: &Path, needed: u64, what: &str, free: Option<u64>) -> Error {
    let free = free.or_else(|| free_bytes(path));
    Error::Io {
        context: format!(
            "cannot write {what} to {} ({}; free some space or choose another directory)",
            path.display(),
            space_text(needed, free)
        ),
        source: std::io::Error::from(std::io::ErrorKind::StorageFull),
    }
}

/// What a write of `needed` bytes lacks where `free` bytes are free: the need counts the
/// [`SPARE_BYTES`] annbench leaves free, and two figures that would round to the same text are
/// given in bytes ("it needs 92 KiB, 92 KiB are free" says nothing true).
fn space_text(needed: u64, free: Option<u64>) -> String {
    let total = needed.saturating_add(SPARE_BYTES);
    let spare = human(SPARE_BYTES);
    let Some(free) = free else {
        return format!(
            "it needs {} with the {spare} annbench leaves free; the file system is full",
            human(total)
        );
    };
    let (n, f) = match (human(total), human(free)) {
        (n, f) if n == f => (format!("{total} bytes"), format!("{free} bytes")),
        pair => pair,
    };
    if free < total {
        format!("it needs {n} with the {spare} annbench leaves free, and {f} are free there")
    } else {
        // The free-space check passed, then a write met a full disk: another writer took the
        // space, or the file system keeps some for itself.
        format!(
            "it needs {n} with the {spare} annbench leaves free; the file system was full \
             during the write, though {f} are free there now"
        )
    }
}

/// True for the errors of a full file system or an exhausted quota.
pub fn is_no_space(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull
        || e.kind() == std::io::ErrorKind::QuotaExceeded
        || matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// `1.5 MiB`, `200 KiB`, `12 bytes`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.0} KiB", b / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// Create `dir` if needed and prove it writable by creating and removing a temp file; `flag`
/// names the option that chose it (e.g. `--results`).
pub fn check_writable_dir(dir: &Path, flag: &str) -> Result<()> {
    let fix = format!("choose a writable directory with {flag}");
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Config(format!(
            "{flag} {} is a file, not a directory; {fix}",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::Io {
        context: format!(
            "{flag} {}: cannot create the directory ({fix})",
            dir.display()
        ),
        source: e,
    })?;
    let probe = dir.join(format!(".annbench-write-test-{}", std::process::id()));
    // A new file, never what is there (a FIFO left under the name would block the open).
    let _ = std::fs::remove_file(&probe);
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| f.write_all(b"x"));
    let _ = std::fs::remove_file(&probe);
    made.map_err(|e| Error::Io {
        context: format!("{flag} {}: cannot write there ({fix})", dir.display()),
        source: e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_is_read_from_the_nearest_existing_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(&dir.path().join("not/yet/there")).unwrap();
        assert!(free > 0);
        let err = ensure_space(dir.path(), u64::MAX / 2, "a result").unwrap_err();
        assert!(err.to_string().contains("free some space"), "{err}");
    }

    #[test]
    fn full_disk_figures_never_contradict_each_other() {
        // 28 KiB of data + the 64 KiB spare against 91.7 KiB free: both round to "92 KiB".
        let t = space_text(28 * 1024, Some(92 * 1024 - 300));
        assert_eq!(
            t,
            "it needs 94208 bytes with the 64 KiB annbench leaves free, and 93908 bytes are \
             free there"
        );
        // A write that met a full disk although the check saw enough (another writer).
        let t = space_text(28 * 1024, Some(92 * 1024 + 400));
        assert_eq!(
            t,
            "it needs 94208 bytes with the 64 KiB annbench leaves free; the file system was \
             full during the write, though 94608 bytes are free there now"
        );
        let t = space_text(1 << 20, Some(100 * 1024));
        assert_eq!(
            t,
            "it needs 1.1 MiB with the 64 KiB annbench leaves free, and 100 KiB are free there"
        );
        let t = space_text(1024, Some(1 << 20));
        assert!(
            t.starts_with("it needs 65 KiB") && t.contains("full during the write"),
            "{t}"
        );
        let t = space_text(1024, None);
        assert!(t.ends_with("the file system is full"), "{t}");
    }

    #[test]
    fn writable_dir_check_names_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        check_writable_dir(&dir.path().join("a/b"), "--results").unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let err = check_writable_dir(&file, "--results")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--results") && err.contains("not a directory"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path().join("a/b")).unwrap().count(),
            0
        );
    }
}
