//! File-system helpers for everything annbench writes: free space before writing, atomic
//! writes that leave no temp file behind on any error, and an up-front check that a
//! directory is writable (so a sweep fails before it loads or builds anything).

use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

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
        Some(free) if free < needed.saturating_add(SPARE_BYTES) => Err(Error::Io {
            context: format!(
                "cannot write {what} to {} (it needs {}, {} are free there; free some space \
                 or choose another directory)",
                path.display(),
                human(needed.saturating_add(SPARE_BYTES)),
                human(free)
            ),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        }),
        _ => Ok(()),
    }
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

/// The hidden temp file next to `path` that an atomic write fills first.
pub fn temp_path(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.tmp-{}", std::process::id()))
}

/// Write `bytes` to `path` atomically: check free space, write a temp file in the same
/// directory, fsync, rename. On any error the temp file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    ensure_space(dir, bytes.len() as u64, what)?;
    let tmp = temp_path(path);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })()
    .map_err(|e| Error::io(&tmp, &format!("cannot write {what} to"), e));
    let result = written.and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, "cannot move into place", e))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
    let made = std::fs::File::create(&probe).and_then(|mut f| f.write_all(b"x"));
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
    fn atomic_writes_replace_whole_files_and_leave_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        write_atomic(&p, b"one", "a test file").unwrap();
        write_atomic(&p, b"two", "a test file").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let missing = dir.path().join("no/such/dir/f.bin");
        assert!(write_atomic(&missing, b"x", "a test file").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
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
