//! Special files where a data file is expected. Opening a FIFO blocks until another process
//! opens its other end (a sweep then hangs until a signal), reading a device reads whatever it
//! yields, and renaming a file over a device node replaces the node (as root, a system
//! device). So a FIFO, device, socket or directory is refused at once, with its path.

use crate::{Error, Result};
use std::path::Path;

/// What `path` is when it exists and is not a regular file (following symbolic links).
fn special_kind(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path).ok()?.file_type();
    if t.is_file() {
        return None;
    }
    Some(if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    })
}

/// An error when `path` exists but is not a regular file; `what` names what annbench wanted to
/// read there ("a result file", "the dataset"). A missing path is left to the caller.
pub fn refuse_special(path: &Path, what: &str) -> Result<()> {
    match special_kind(path) {
        None => Ok(()),
        Some(kind) => Err(Error::Config(format!(
            "{} is {kind}, not a regular file: annbench reads {what} only from a regular file; \
             move it away or give the path of the file",
            path.display()
        ))),
    }
}

/// The text of the regular file at `path` (a FIFO or device is refused, not waited on);
/// `what` names it in errors ("config").
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    refuse_special(path, what)?;
    std::fs::read_to_string(path).map_err(|e| Error::io(path, &format!("cannot read {what}"), e))
}

/// An error when the output path `path` exists but is not a regular file: annbench replaces
/// only regular files (`-` for standard output is handled by the commands that take it).
pub fn check_output(path: &Path, what: &str) -> Result<()> {
    match special_kind(path) {
        None => Ok(()),
        Some(kind) => Err(Error::Config(format!(
            "cannot write {what} to {}: it is {kind}, not a regular file, and annbench \
             replaces only regular files; give another file name",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_and_directories_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p.hdf5");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = refuse_special(&fifo, "a result file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.hdf5 is a FIFO"), "{e}");
        let e = check_output(dir.path(), "the table")
            .unwrap_err()
            .to_string();
        assert!(e.contains("it is a directory"), "{e}");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        refuse_special(&file, "a result file").unwrap();
        check_output(&file, "the table").unwrap();
        check_output(&dir.path().join("new"), "the table").unwrap();
    }
}
