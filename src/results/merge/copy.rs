//! Whole-file copies into a store: a hidden temp file next to the target, synced, then renamed
//! over it, so a reader or an interrupted merge sees the old file or the new one, never a part.

use super::super::h5util::{edited_image, read_attr_str, write_attr};
use super::super::store::EXTRAS_ATTR;
use crate::{Error, Result};
use std::path::Path;

/// Copy `from` to `to` atomically; with `label`, the copy's stored label becomes it (every
/// other byte of the point is kept; the change is made in memory, so HDF5 never writes to a
/// disk that may be full).
pub fn copy_point(from: &Path, to: &Path, label: Option<&str>) -> Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create directory", e))?;
    crate::fsutil::refuse_special(from, "a result file")?;
    match label {
        Some(label) => {
            let bytes = edited_image(from, |file| relabel(file, label))
                .map_err(|e| Error::Results(format!("cannot relabel {}: {e}", from.display())))?;
            crate::fsutil::write_atomic(to, &bytes, "a result file")
        }
        None => {
            let len = std::fs::metadata(from).map_or(0, |m| m.len());
            crate::fsutil::write_atomic_with(to, "a result file", len, |tmp| {
                std::fs::copy(from, tmp)
                    .map(drop)
                    .map_err(|e| crate::fsutil::write_error(to, "a result file", len, e))
            })
        }
    }
}

/// Rewrite the label inside the `annbench` attribute of `file` (an in-memory copy).
fn relabel(file: &hdf5::File, label: &str) -> hdf5::Result<()> {
    let json = read_attr_str(file, EXTRAS_ATTR)?;
    let mut extras: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| hdf5::Error::from(e.to_string()))?;
    let Some(fields) = extras.as_object_mut() else {
        return Err(hdf5::Error::from(format!(
            "its '{EXTRAS_ATTR}' attribute is not an object"
        )));
    };
    fields.insert("label".into(), serde_json::Value::from(label));
    let json = serde_json::to_string(&extras).map_err(|e| hdf5::Error::from(e.to_string()))?;
    file.delete_attr(EXTRAS_ATTR)?;
    write_attr(file, EXTRAS_ATTR, json.as_str())
}

/// Remove `path` (a point now stored under another label) and sync its directory.
pub fn remove_point(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| Error::io(path, "cannot remove", e))?;
    if let Some(d) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
        let _ = d.sync_all();
    }
    Ok(())
}
