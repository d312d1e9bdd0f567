//! Small real datasets embedded in the binary (see `datasets/README.md` for sources and
//! licences), written into the data directory on first use so the installed CLI and Python
//! wheel work without a checkout.

use super::datafile;
use super::registry::Entry;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// (name, HDF5 bytes) of every bundled set.
pub const BUNDLED: &[(&str, &[u8])] = &[
    (
        "glove-twitter-25-angular",
        include_bytes!("../../datasets/glove-twitter-25-angular.hdf5"),
    ),
    (
        "sift-5k-128-euclidean",
        include_bytes!("../../datasets/sift-5k-128-euclidean.hdf5"),
    ),
];

/// The embedded bytes of a bundled set.
pub fn bytes(name: &str) -> Option<&'static [u8]> {
    BUNDLED.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// Writes the bundled `entry` to `{dir}/{name}.hdf5` (atomically) and returns the path.
pub fn write_to(entry: &Entry, dir: &Path) -> Result<PathBuf> {
    let data = bytes(&entry.name)
        .ok_or_else(|| Error::Dataset(format!("'{}' is not a bundled dataset", entry.name)))?;
    datafile::ensure_dir(dir)?;
    let path = dir.join(entry.file_name());
    datafile::write_atomic(&path, data)?;
    Ok(path)
}
