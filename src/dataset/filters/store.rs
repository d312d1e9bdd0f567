//! The filter sidecar: `<dataset>.filters.h5` next to `<dataset>.hdf5` (a name `datasets list`
//! does not take for a dataset). Layout, HDF5:
//!
//! - file attributes `annbench_filters` (format, 1), `kind` (`range`), `column` (`attr`),
//!   `seed`, `vectors` (digest of the metric, train and test vectors it was made for);
//! - `attr`: int32, one per train row, a permutation of `0..n`;
//! - `selectivity/<s>` per selectivity `s` (canonical text, e.g. `0.01`), a group with
//!   attributes `threshold` (the filter is `attr < threshold`; that many rows match) and
//!   datasets `neighbors` (int32 train ids) and `distances` (float32), test rows x
//!   `min(100, threshold)`, nearest first: the exact filtered ground truth.
//!
//! Written atomically (a temporary file renamed over the old one).

use super::{Filters, Level};
use crate::dataset::GroundTruth;
use crate::{Error, Result};
use hdf5::types::VarLenUnicode;
use std::path::{Path, PathBuf};

const FORMAT: i64 = 1;

/// The sidecar of the dataset file at `dataset`.
pub fn sidecar_path(dataset: &Path) -> PathBuf {
    let stem = dataset
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    dataset.with_file_name(format!("{stem}.filters.h5"))
}

fn err(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Dataset(format!("{}: {what}", path.display()))
}

/// Write `f` as the sidecar of the dataset file at `dataset`; returns its path.
pub fn save(f: &Filters, dataset: &Path) -> Result<PathBuf> {
    let path = sidecar_path(dataset);
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let written = write(f, &tmp).and_then(|()| {
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, "cannot move the file to", e))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| path)
}

fn write(f: &Filters, tmp: &Path) -> Result<()> {
    let h5 = |e: hdf5::Error| err(tmp, format!("cannot write HDF5 ({e})"));
    let file = hdf5::File::create(tmp).map_err(h5)?;
    for (name, value) in [
        ("kind", "range"),
        ("column", super::COLUMN),
        ("vectors", &f.vectors),
    ] {
        let v: VarLenUnicode = value
            .parse()
            .map_err(|e| err(tmp, format!("attribute {name}: {e:?}")))?;
        file.new_attr::<VarLenUnicode>()
            .shape(())
            .create(name)
            .and_then(|a| a.write_scalar(&v))
            .map_err(h5)?;
    }
    for (name, value) in [("annbench_filters", FORMAT), ("seed", f.seed as i64)] {
        file.new_attr::<i64>()
            .shape(())
            .create(name)
            .and_then(|a| a.write_scalar(&value))
            .map_err(h5)?;
    }
    file.new_dataset_builder()
        .with_data(&f.attr)
        .create("attr")
        .map_err(h5)?;
    let levels = file.create_group("selectivity").map_err(h5)?;
    for l in &f.levels {
        let g = levels.create_group(&l.selectivity).map_err(h5)?;
        g.new_attr::<i64>()
            .shape(())
            .create("threshold")
            .and_then(|a| a.write_scalar(&l.threshold))
            .map_err(h5)?;
        g.new_dataset_builder()
            .with_data(&l.truth.neighbors)
            .create("neighbors")
            .map_err(h5)?;
        g.new_dataset_builder()
            .with_data(&l.truth.distances)
            .create("distances")
            .map_err(h5)?;
    }
    file.close().map_err(h5)
}

/// The sidecar of the dataset file at `dataset`, if there is one.
pub fn load(dataset: &Path) -> Result<Option<Filters>> {
    let path = sidecar_path(dataset);
    if !path.is_file() {
        return Ok(None);
    }
    let bad = |e: hdf5::Error| {
        err(
            &path,
            format!(
                "unreadable filter file ({e}); delete it and run `annbench datasets filter` again"
            ),
        )
    };
    let file = hdf5::File::open(&path).map_err(bad)?;
    let int =
        |name: &str| -> Result<i64> { file.attr(name).and_then(|a| a.read_scalar()).map_err(bad) };
    if int("annbench_filters")? != FORMAT {
        return Err(err(&path, "a filter file of another format; recreate it"));
    }
    let vectors = file
        .attr("vectors")
        .and_then(|a| a.read_scalar::<VarLenUnicode>())
        .map_err(bad)?
        .as_str()
        .to_string();
    let attr: Vec<i32> = file
        .dataset("attr")
        .and_then(|d| d.read_raw())
        .map_err(bad)?;
    let group = file.group("selectivity").map_err(bad)?;
    let mut levels = Vec::new();
    for name in group.member_names().map_err(bad)? {
        let g = group.group(&name).map_err(bad)?;
        let threshold: i64 = g
            .attr("threshold")
            .and_then(|a| a.read_scalar())
            .map_err(bad)?;
        let truth = GroundTruth {
            neighbors: g
                .dataset("neighbors")
                .and_then(|d| d.read_2d())
                .map_err(bad)?,
            distances: g
                .dataset("distances")
                .and_then(|d| d.read_2d())
                .map_err(bad)?,
        };
        let n = attr.len();
        let ids_ok = truth
            .neighbors
            .iter()
            .all(|&i| i >= 0 && (i as usize) < n && i64::from(attr[i as usize]) < threshold);
        if !ids_ok || truth.neighbors.shape() != truth.distances.shape() {
            return Err(err(
                &path,
                format!(
                    "selectivity {name}: the ground truth names rows outside the filter; recreate the file"
                ),
            ));
        }
        levels.push(Level {
            selectivity: name,
            threshold,
            truth,
        });
    }
    levels.sort_by(|a, b| {
        let v = |l: &Level| l.selectivity.parse::<f64>().unwrap_or(0.0);
        v(a).total_cmp(&v(b))
    });
    Ok(Some(Filters {
        seed: int("seed")? as u64,
        vectors,
        attr,
        levels,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("t-8-euclidean.hdf5");
        let ds = super::super::tests::random("t-8-euclidean", 300, 5);
        let f = super::super::generate(&ds, &["0.1".into(), "0.02".into()], 3).unwrap();
        assert!(load(&data).unwrap().is_none());
        let path = save(&f, &data).unwrap();
        assert_eq!(path, dir.path().join("t-8-euclidean.filters.h5"));
        let back = load(&data).unwrap().unwrap();
        assert_eq!(back.attr, f.attr);
        assert_eq!(back.seed, 3);
        assert_eq!(back.selectivities(), ["0.02", "0.1"]);
        let (a, b) = (&back.levels[1], &f.levels[1]);
        assert_eq!(
            (a.threshold, &a.truth.neighbors),
            (b.threshold, &b.truth.neighbors)
        );
        back.check_for(&ds).unwrap();
    }
}
