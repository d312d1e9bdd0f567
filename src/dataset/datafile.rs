//! Writing one dataset file into a data directory: the name rule, creating the directory, the
//! atomic write. Below everything that writes a set out (bundled, synthetic, created, subset,
//! downloaded) and below name resolution ([`super::datadir`]).

use crate::{Error, Result};
use std::path::Path;

/// Refuse a dataset name that is not one plain file name: it becomes `{data_dir}/{name}.hdf5`,
/// so `../x` or `a/b` would write outside the data directory, and a leading `.` would hide it.
pub fn check_name(name: &str) -> Result<()> {
    match name_problem(name) {
        None => Ok(()),
        Some(why) => Err(Error::Config(format!(
            "dataset name {name:?} cannot be used: {why}; a name is a plain file name such as \
             my-vectors-384-angular (use --output PATH to write elsewhere)"
        ))),
    }
}

/// Why `name` cannot name a dataset file, if it cannot (for callers whose fix is another).
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.contains(['/', '\\', '\0']) {
        Some("it contains a path separator")
    } else if name.starts_with('.') {
        Some("it starts with '.'")
    } else if name.chars().any(char::is_control) {
        Some("it contains a control character")
    } else if name.len() > 200 {
        Some("it is longer than 200 bytes")
    } else {
        None
    }
}

/// Creates `dir` (and parents) with an error that names it and the fix.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(
            dir,
            "cannot create the data directory (choose another with --data-dir or ANNBENCH_DATA_DIR)",
            e,
        )
    })
}

/// Writes `bytes` to `path` atomically (temporary file in the same directory, then rename),
/// after checking there is room.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::fsutil::write_atomic(path, bytes, "the dataset")
}
