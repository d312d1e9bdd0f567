//! Atomic writes: a hidden temp file in the target's directory is filled, synced and renamed
//! over the target. On any error the temp file is removed and the target is as it was. Every
//! file annbench writes (points, datasets, sidecars, tables, exports, plots, reports, man
//! pages) goes through [`write_atomic_with`].

use super::{check_output, ensure_space, is_no_space, no_space};
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The hidden temp file next to `path` that an atomic write fills first.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir_of(path).join(format!(".{name}.tmp-{}", std::process::id()))
}

fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Write `bytes` to `path` atomically (see [`write_atomic_with`]); `what` names the content
/// in errors ("a result file").
pub fn write_atomic(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let needed = bytes.len() as u64;
    write_atomic_with(path, what, needed, |tmp| {
        std::fs::File::create(tmp)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| write_error(path, what, needed, e))
    })
}

/// Write the file at `path` atomically: refuse a target that is not a regular file, check
/// that `needed` bytes are free, let `fill` write the temp file whose path it is given, sync
/// it, rename it over `path`, sync the directory. On any error the temp file is removed and
/// `path` is untouched.
pub fn write_atomic_with(
    path: &Path,
    what: &str,
    needed: u64,
    fill: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    check_output(path, what)?;
    let dir = dir_of(path);
    ensure_space(path, needed, what)?;
    let tmp = temp_path(path);
    // A leftover of a killed run with this process id (or anything else put there) is
    // removed, so `fill` creates a new regular file instead of opening what is there.
    let _ = std::fs::remove_file(&tmp);
    let result = fill(&tmp)
        .and_then(|()| {
            std::fs::File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| write_error(path, what, needed, e))
        })
        // Checked again: a FIFO or device put at the path while the file was written would
        // be replaced by the rename.
        .and_then(|()| check_output(path, what))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| write_error(path, what, needed, e)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // The rename is durable once the directory entry is.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The error of a failed write of `what` to `path`: a full disk says the space needed and
/// free, anything else its cause.
pub fn write_error(path: &Path, what: &str, needed: u64, e: std::io::Error) -> Error {
    let dir = dir_of(path);
    if is_no_space(&e) {
        no_space(path, needed, what, None)
    } else if e.kind() == std::io::ErrorKind::NotFound && !dir.is_dir() {
        Error::Config(format!(
            "cannot write {what} to {}: the directory {} does not exist; create it (mkdir -p) \
             or give a path in an existing directory",
            path.display(),
            dir.display()
        ))
    } else if e.raw_os_error() == Some(libc::EROFS) {
        Error::Config(format!(
            "cannot write {what} to {}: {} is on a read-only file system; give a path on a \
             writable one",
            path.display(),
            dir.display()
        ))
    } else if e.kind() == std::io::ErrorKind::PermissionDenied {
        Error::Config(format!(
            "cannot write {what} to {}: it, or the directory {}, may not be written or \
             replaced (permissions or an immutable file); give another path",
            path.display(),
            dir.display()
        ))
    } else {
        Error::io(path, &format!("cannot write {what} to"), e)
    }
}

/// Reserve `len` bytes of disk past the end of `file` without changing its size, so writes
/// there cannot meet a full disk (HDF5 crashes when its own writes fail). A file system that
/// cannot reserve (ext2, some network file systems) is left to the free-space check. Undo
/// with [`release`].
pub fn reserve(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let end = file.metadata()?.len();
        let (Ok(off), Ok(len)) = (libc::off_t::try_from(end), libc::off_t::try_from(len)) else {
            return Err(std::io::Error::from(std::io::ErrorKind::FileTooLarge));
        };
        // SAFETY: a valid open descriptor; KEEP_SIZE allocates blocks and changes no byte.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, off, len) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS)) {
                let _ = release(file);
                return Err(e);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, len);
    Ok(())
}

/// Give back the blocks [`reserve`] kept past the end of `file` (truncating to its own size).
pub fn release(file: &std::fs::File) -> std::io::Result<()> {
    file.set_len(file.metadata()?.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_directory_is_named_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/dir/t.md");
        let e = write_atomic(&path, b"x", "the output")
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing/dir does not exist"), "{e}");
        assert!(!e.contains("os error"), "{e}");
    }

    use super::*;

    #[test]
    fn atomic_writes_replace_whole_files_and_leave_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        write_atomic(&p, b"one", "a test file").unwrap();
        write_atomic(&p, b"two", "a test file").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let missing = dir.path().join("no/such/dir/f.bin");
        assert!(write_atomic(&missing, b"x", "a test file").is_err());
        let failed = write_atomic_with(&p, "a test file", 3, |tmp| {
            std::fs::write(tmp, b"half").unwrap();
            Err(Error::Config("the fill failed".into()))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn reservations_change_no_byte_and_are_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        std::fs::write(&p, b"data").unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        reserve(&f, 1 << 20).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"data");
        release(&f).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"data");
        // Where the file system reserves at all, more than it holds is refused.
        if let Err(e) = reserve(&f, u64::MAX / 4) {
            assert!(
                is_no_space(&e) || e.kind() == std::io::ErrorKind::FileTooLarge,
                "{e}"
            );
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"data");
    }
}
