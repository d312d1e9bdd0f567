//! Special files where a data file is expected. Opening a FIFO blocks until another process
//! opens its other end (a sweep then hangs until a signal), reading a device reads whatever it
//! yields, and renaming a file over a device node replaces the node (as root, a system
//! device). So a FIFO, device, socket or directory is refused at once, with its path.
//!
//! Every file annbench reads is opened through [`open_read`] (or the readers built on it), and
//! every file it writes goes through [`check_output`] (the atomic writer calls it): the path's
//! type is checked before the open, and the open itself is non-blocking and checked again on
//! the open file, so a FIFO put there in between is refused too instead of waited on.

use crate::{Error, Result};
use std::fs::{File, FileType};
use std::io::Read;
use std::path::Path;

/// What a file of type `t` is when it is not a regular file.
fn kind_of(t: FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
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

/// What `path` is when it exists and is not a regular file (following symbolic links).
fn special_kind(path: &Path) -> Option<&'static str> {
    kind_of(std::fs::metadata(path).ok()?.file_type())
}

fn not_regular(path: &Path, kind: &str, what: &str) -> Error {
    Error::Config(format!(
        "{} is {kind}, not a regular file: annbench reads {what} only from a regular file; \
         move it away or give the path of the file",
        path.display()
    ))
}

/// An error when `path` exists but is not a regular file; `what` names what annbench wanted to
/// read there ("a result file", "the dataset"). A missing path is left to the caller. For
/// readers that open the file themselves (HDF5); the others use [`open_read`].
pub fn refuse_special(path: &Path, what: &str) -> Result<()> {
    match special_kind(path) {
        None => Ok(()),
        Some(kind) => Err(not_regular(path, kind, what)),
    }
}

/// The regular file at `path`, open for reading; `None` when nothing is there. A FIFO,
/// device, socket or directory is refused without blocking (`what` names the file in errors).
pub fn open_read(path: &Path, what: &str) -> Result<Option<File>> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    refuse_special(path, what)?;
    // Non-blocking, so a FIFO that replaced the file since the check opens at once (and is
    // refused below) instead of waiting for a writer.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        // Under a regular file (`file/x`) nothing is there either.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::io(path, &format!("cannot read {what} from"), e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, &format!("cannot read {what} from"), e))?;
    if let Some(kind) = kind_of(meta.file_type()) {
        return Err(not_regular(path, kind, what));
    }
    // SAFETY: a valid open descriptor; only the O_NONBLOCK status flag changes.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(Some(file))
}

/// [`open_read`] for a file that must be there: a missing file is an error naming it.
pub fn open_existing(path: &Path, what: &str) -> Result<File> {
    open_read(path, what)?.ok_or_else(|| missing(path, what))
}

fn missing(path: &Path, what: &str) -> Error {
    Error::io(
        path,
        &format!("cannot read {what} from"),
        // Not the bare kind, whose text is "entity not found".
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "there is no such file; check the path",
        ),
    )
}

/// The bytes of the regular file at `path`; `None` when nothing is there (see [`open_read`]).
pub fn read_if_any(path: &Path, what: &str) -> Result<Option<Vec<u8>>> {
    let Some(mut file) = open_read(path, what)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, &format!("cannot read {what} from"), e))?;
    Ok(Some(bytes))
}

/// The text of the regular file at `path`; `None` when nothing is there.
pub fn read_text_if_any(path: &Path, what: &str) -> Result<Option<String>> {
    read_if_any(path, what)?
        .map(|bytes| {
            String::from_utf8(bytes).map_err(|_| {
                Error::Config(format!(
                    "{} is not text (it is not valid UTF-8): give the path of {what}",
                    path.display()
                ))
            })
        })
        .transpose()
}

/// The text of the regular file at `path` (a FIFO or device is refused, not waited on);
/// `what` names it in errors ("config").
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    read_text_if_any(path, what)?.ok_or_else(|| missing(path, what))
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

/// An error when a report, table or plot cannot go to `path`: not a regular file
/// ([`check_output`]), or a file annbench measured or reads data from (an HDF5 dataset or
/// result file, a stream result), which the report would destroy. Reports replace only files
/// of their own kind, so a slip in `-o` never costs a measurement.
pub fn check_report_output(path: &Path, what: &str) -> Result<()> {
    check_output(path, what)?;
    if let Some(mut file) = open_read(path, what)? {
        let mut head = Vec::with_capacity(4096);
        // A file that cannot be read is left to the writer's own error.
        let _ = (&mut file).take(4096).read_to_end(&mut head);
        let held = if is_hdf5(&mut file, &head) {
            Some("an HDF5 file (a dataset or a measured point)")
        } else if is_stream_result(&head) {
            Some("a stream result file")
        } else if head.starts_with(b"ANNBSGT") {
            // stream::truth_cache::MAGIC without its version digit: any version of the cache.
            Some("annbench's cache of a stream's ground truth")
        } else {
            None
        };
        if let Some(kind) = held {
            return Err(Error::Config(format!(
                "cannot write {what} to {}: it is {kind}, and annbench never writes a report \
                 over data; give another file name",
                path.display()
            )));
        }
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        // A report named so would read as a broken result file in a store.
        Some(e @ ("hdf5" | "h5" | "hdf")) => Err(Error::Config(format!(
            "cannot write {what} to {}: .{e} names an HDF5 data file, and {what} is text or \
             an image; give a name that says what it is (.txt, .md, .csv, .json, .html, .png, \
             .svg)",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Whether `file` (whose first bytes are `head`) is HDF5: its signature at byte 0, or after a
/// user block, at 512, 1024, 2048, ... bytes (where HDF5 looks for it).
fn is_hdf5(file: &mut File, head: &[u8]) -> bool {
    use std::io::{Seek, SeekFrom};
    const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";
    if head.starts_with(SIGNATURE) {
        return true;
    }
    let len = file.metadata().map_or(0, |m| m.len());
    let mut at = 512u64;
    while at + 8 <= len {
        let mut sig = [0u8; 8];
        if file.seek(SeekFrom::Start(at)).is_err() || file.read_exact(&mut sig).is_err() {
            return false;
        }
        if &sig == SIGNATURE {
            return true;
        }
        at *= 2;
    }
    false
}

/// The start of a stream result file: a JSON object naming its format and runbook.
fn is_stream_result(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.trim_start().starts_with('{')
        && text.contains("\"format\":")
        && text.contains("\"runbook\":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn fifos_and_directories_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p.hdf5");
        mkfifo(&fifo);
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

    #[test]
    fn reports_never_replace_data_files() {
        let dir = tempfile::tempdir().unwrap();
        let h5 = dir.path().join("point.hdf5");
        std::fs::write(&h5, b"\x89HDF\r\n\x1a\n\0\0\0\0").unwrap();
        let e = check_report_output(&h5, "the table")
            .unwrap_err()
            .to_string();
        assert!(e.contains("point.hdf5: it is an HDF5 file"), "{e}");
        let stream = dir.path().join("s.json");
        std::fs::write(&stream, b"{\n  \"format\": 1,\n  \"runbook\": \"r.yaml\"}").unwrap();
        let e = check_report_output(&stream, "the output")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a stream result file"), "{e}");
        // After a user block of 512 bytes, HDF5 is still HDF5.
        let block = dir.path().join("ub.md");
        let mut bytes = vec![0u8; 512];
        bytes.extend_from_slice(b"\x89HDF\r\n\x1a\n\0\0\0\0");
        std::fs::write(&block, bytes).unwrap();
        let e = check_report_output(&block, "the table")
            .unwrap_err()
            .to_string();
        assert!(e.contains("it is an HDF5 file"), "{e}");
        let gt = dir.path().join("x.stream-gt");
        std::fs::write(&gt, b"ANNBSGT1....").unwrap();
        let e = check_report_output(&gt, "the table")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ground truth"), "{e}");
        // A new file named as data is refused too (it would break the store it lands in).
        let e = check_report_output(&dir.path().join("new.hdf5"), "the table")
            .unwrap_err()
            .to_string();
        assert!(e.contains(".hdf5 names an HDF5 data file"), "{e}");
        // An old report, an empty file and a new name are replaced as before.
        let old = dir.path().join("old.json");
        std::fs::write(&old, b"{\"elements\": []}").unwrap();
        check_report_output(&old, "the output").unwrap();
        std::fs::write(&old, b"").unwrap();
        check_report_output(&old, "the output").unwrap();
        check_report_output(&dir.path().join("new.png"), "the plot").unwrap();
        assert!(check_report_output(dir.path(), "the plot").is_err());
    }

    #[test]
    fn readers_refuse_special_files_without_blocking_and_miss_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("servers.env");
        mkfifo(&fifo);
        for e in [
            read_if_any(&fifo, "server URLs").unwrap_err(),
            read_text(&fifo, "a runbook").unwrap_err(),
            read_text(dir.path(), "a runbook").unwrap_err(),
        ] {
            let e = e.to_string();
            assert!(
                e.contains("is a FIFO") || e.contains("is a directory"),
                "{e}"
            );
        }
        let missing = dir.path().join("none");
        assert!(read_if_any(&missing, "x").unwrap().is_none());
        assert!(read_text(&missing, "x").is_err());
        let file = dir.path().join("f.yaml");
        std::fs::write(&file, "a: 1").unwrap();
        assert_eq!(read_text(&file, "x").unwrap(), "a: 1");
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        let e = read_text(&file, "a runbook").unwrap_err().to_string();
        assert!(e.contains("not valid UTF-8"), "{e}");
    }
}

#[cfg(test)]
mod missing_tests {
    #[test]
    fn a_missing_file_is_said_in_words() {
        // Once `cannot read a runbook from nope.yaml: entity not found`.
        let dir = tempfile::tempdir().unwrap();
        let e = super::open_existing(&dir.path().join("nope.yaml"), "a runbook")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("nope.yaml: there is no such file; check the path"),
            "{e}"
        );
    }
}
