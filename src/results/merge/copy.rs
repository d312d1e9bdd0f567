//! Whole-file copies into a store: a hidden temp file next to the target, synced, then renamed
//! over it, so a reader or an interrupted merge sees the old file or the new one, never a part.

use super::super::h5util::{read_attr_str, write_attr};
use super::super::store::EXTRAS_ATTR;
use crate::{Error, Result};
use std::path::Path;

/// Copy `from` to `to` atomically; with `label`, the copy's stored label becomes it (every
/// other byte of the point is kept).
pub fn copy_point(from: &Path, to: &Path, label: Option<&str>) -> Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create directory", e))?;
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.merge-{}", std::process::id()));
    let done = (|| {
        std::fs::copy(from, &tmp).map_err(|e| Error::io(from, "cannot copy", e))?;
        if let Some(label) = label {
            relabel(&tmp, label)?;
        }
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(&tmp, "cannot sync", e))?;
        std::fs::rename(&tmp, to).map_err(|e| Error::io(to, "cannot move a copy into place at", e))
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done?;
    // The rename is durable once the directory entry is.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Rewrite the label inside the `annbench` attribute of `path` (a private temp copy).
fn relabel(path: &Path, label: &str) -> Result<()> {
    let err = |e: String| Error::Results(format!("cannot relabel {}: {e}", path.display()));
    let file = hdf5::File::open_rw(path).map_err(|e| err(e.to_string()))?;
    let json = read_attr_str(&file, EXTRAS_ATTR).map_err(|e| err(e.to_string()))?;
    let mut extras: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| err(e.to_string()))?;
    let Some(fields) = extras.as_object_mut() else {
        return Err(err(format!(
            "its '{EXTRAS_ATTR}' attribute is not an object"
        )));
    };
    fields.insert("label".into(), serde_json::Value::from(label));
    let json = serde_json::to_string(&extras).map_err(|e| err(e.to_string()))?;
    file.delete_attr(EXTRAS_ATTR)
        .and_then(|()| write_attr(&file, EXTRAS_ATTR, json.as_str()))
        .and_then(|()| file.close())
        .map_err(|e| err(e.to_string()))
}

/// Remove `path` (a point now stored under another label) and sync its directory.
pub fn remove_point(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| Error::io(path, "cannot remove", e))?;
    if let Some(d) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
        let _ = d.sync_all();
    }
    Ok(())
}
