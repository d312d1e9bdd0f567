//! The data directory and name resolution: a path, a file in the data dir, a bundled set
//! (written out on first use) or a synthetic set (generated on first use).

use super::registry::{self, Source};
use super::{bundled, synthetic};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Environment variable that overrides the default data directory.
pub const DATA_DIR_ENV: &str = "ANNBENCH_DATA_DIR";

/// `$ANNBENCH_DATA_DIR`, else `data` (relative to the working directory).
pub fn default_data_dir() -> PathBuf {
    std::env::var_os(DATA_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("data"))
}

/// The dataset files in `data_dir` that are not known names (made with `datasets create`,
/// `subset`, copied in), sorted by name, each with its [`super::Info`] (`None` when the file
/// cannot be read as a dataset). Filter sidecars (`*.filters.h5`) are not datasets.
pub fn local_files(data_dir: &Path) -> Vec<(PathBuf, Option<super::Info>)> {
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "hdf5"))
        .filter(|p| {
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            stem.is_some_and(|s| registry::lookup(&s).is_err())
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let info = super::info(&p).ok();
            (p, info)
        })
        .collect()
}

/// Whether a `--dataset` argument is a file path rather than a dataset name: it holds a path
/// separator or ends in `.hdf5` or `.h5`. The one rule for name resolution ([`resolve`]), the
/// store key of a dataset (`crate::results::dataset_key`) and the dry run's name. `.h5` counts
/// as a path everywhere: it is HDF5's other common extension and the one of filter sidecars,
/// no registered name ends in it, and a name is looked up as `{name}.hdf5`, so `x.h5` as a
/// name could only ever look for `x.h5.hdf5`; taking it as a path also makes the run, the
/// dry run and the reports agree on its store key (the file stem).
pub fn looks_like_path(arg: &str) -> bool {
    arg.contains('/')
        || arg.contains(std::path::MAIN_SEPARATOR)
        || arg.ends_with(".hdf5")
        || arg.ends_with(".h5")
}

/// What [`resolve`] would write into `data_dir` for `name`, if anything: a bundled set not yet
/// written out, or a synthetic set not yet generated (`None` for a path or a file present).
pub fn would_write(name: &str, data_dir: &Path) -> Option<(Source, PathBuf)> {
    if Path::new(name).is_file() {
        return None;
    }
    let path = data_dir.join(format!("{name}.hdf5"));
    if path.is_file() {
        return None;
    }
    let entry = registry::lookup(name).ok()?;
    matches!(entry.source, Source::Bundled | Source::Synthetic).then_some((entry.source, path))
}

/// The file for `name_or_path`: an existing file path; else `{data_dir}/{name}.hdf5`; else a
/// bundled set written into `data_dir`; else a synthetic set generated into `data_dir`. Names
/// that must be downloaded, and unknown names, give an error saying what to run.
pub fn resolve(name_or_path: &str, data_dir: &Path) -> Result<PathBuf> {
    let as_path = Path::new(name_or_path);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    // A directory is not a dataset; said so instead of "no such file" or "unknown name".
    let directory = || {
        Error::Dataset(format!(
            "{name_or_path} is a directory, not a dataset file: give an .hdf5 file in it, or a \
             dataset name with --data-dir {name_or_path}"
        ))
    };
    if looks_like_path(name_or_path) {
        let in_dir = data_dir.join(name_or_path);
        if !name_or_path.contains('/') && in_dir.is_file() {
            return Ok(in_dir);
        }
        if as_path.is_dir() {
            return Err(directory());
        }
        // A FIFO, device or socket: said so, never opened (a FIFO would block).
        crate::fsutil::refuse_special(as_path, "a dataset")?;
        return Err(Error::Dataset(format!(
            "{name_or_path}: no such file (also looked in {}); check the path, or give a \
             dataset name (`annbench datasets list`)",
            data_dir.display()
        )));
    }
    let local = data_dir.join(format!("{name_or_path}.hdf5"));
    if local.is_file() {
        return Ok(local);
    }
    crate::fsutil::refuse_special(&local, "a dataset")?;
    let entry = match registry::lookup(name_or_path) {
        Err(_) if as_path.is_dir() => return Err(directory()),
        other => other?,
    };
    match entry.source {
        Source::Bundled => bundled::write_to(entry, data_dir),
        Source::Synthetic => synthetic::generate_to(entry, data_dir),
        Source::Download => Err(Error::Dataset(format!(
            "dataset '{name_or_path}' is not in {}; download it with \
             `annbench datasets get {name_or_path}` (or pass --data-dir / {DATA_DIR_ENV} to \
             point at where it is)",
            data_dir.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::looks_like_path;

    #[test]
    fn paths_are_told_from_names() {
        for path in [
            "data/x",
            "./x",
            "/abs/x-2-euclidean",
            "x.hdf5",
            "x.h5",
            "d/x.filters.h5",
        ] {
            assert!(looks_like_path(path), "{path}");
        }
        for name in [
            "fashion-mnist-784-euclidean",
            "x",
            "x.hdf5.bak",
            "x.h50",
            "hdf5",
            "",
        ] {
            assert!(!looks_like_path(name), "{name}");
        }
    }
}
