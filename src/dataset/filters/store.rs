//! The filter sidecar: `<dataset>.filters.h5` next to `<dataset>.hdf5` (a name `datasets list`
//! does not take for a dataset). Layout (format 2), HDF5:
//!
//! - file attributes `annbench_filters` (format, 2), `kinds` (`range,label`, the kinds it
//!   holds), `seed`, `vectors` (digest of the metric, train and test vectors it was made for);
//! - `columns/<name>`: int32, one per train row, for `attr` (range filters, a permutation of
//!   `0..n`) and `label1`, `label2`, ... (label filters, categories, 0 for none);
//! - `<kind>/<s>` per kind (`range`, `label`) and selectivity `s` (canonical text, e.g.
//!   `0.01`), a group with attributes `column`, `value` (the filter is `column < value` for
//!   range, `column = value` for label) and `count` (how many rows match), and datasets
//!   `neighbors` (int32 train ids) and `distances` (float32), test rows x `min(100, count)`,
//!   nearest first: the exact filtered ground truth.
//!
//! Format 1 (range filters only: `attr` at the top, `selectivity/<s>` groups with attribute
//! `threshold`) is still read. Built in memory and written atomically (a temporary file renamed
//! over the old one).

use super::{COLUMN, Column, FilterKind, Filters, Level};
use crate::dataset::GroundTruth;
use crate::results::h5util::write_image;
use crate::{Error, Result};
use hdf5::types::VarLenUnicode;
use std::path::{Path, PathBuf};

const FORMAT: i64 = 2;

/// Filter sidecars: format 1 is still read; a newer one is refused and never replaced.
const VERSIONED: crate::fsutil::Versioned = crate::fsutil::Versioned {
    kind: "a filter file",
    current: FORMAT as u64,
    oldest: 1,
    aside: "and make a new one with `annbench datasets filter`",
};

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

/// Write `f` as the sidecar of the dataset file at `dataset`; returns its path. The file is
/// built in memory and written atomically ([`write_image`]).
pub fn save(f: &Filters, dataset: &Path) -> Result<PathBuf> {
    let path = sidecar_path(dataset);
    // A newer annbench's file is not replaced by this one's.
    if let Some(found) = stored_format(&path).and_then(|f| u64::try_from(f).ok()) {
        if VERSIONED.is_newer(found) {
            return Err(Error::Dataset(
                VERSIONED.refusal(&path, found).unwrap_or_default(),
            ));
        }
    }
    write_image(&path, "the filter file", |file| write(f, file))?;
    Ok(path)
}

fn text_attr(loc: &hdf5::Location, name: &str, value: &str) -> hdf5::Result<()> {
    let v: VarLenUnicode = value
        .parse()
        .map_err(|e| hdf5::Error::from(format!("attribute {name}: {e:?}")))?;
    loc.new_attr::<VarLenUnicode>()
        .shape(())
        .create(name)?
        .write_scalar(&v)
}

fn int_attr(loc: &hdf5::Location, name: &str, value: i64) -> hdf5::Result<()> {
    loc.new_attr::<i64>()
        .shape(())
        .create(name)?
        .write_scalar(&value)
}

fn write(f: &Filters, file: &hdf5::File) -> hdf5::Result<()> {
    let kinds: Vec<&str> = f.kinds().iter().map(|k| k.as_str()).collect();
    text_attr(file, "kinds", &kinds.join(","))?;
    text_attr(file, "vectors", &f.vectors)?;
    int_attr(file, "annbench_filters", FORMAT)?;
    int_attr(file, "seed", f.seed as i64)?;
    let columns = file.create_group("columns")?;
    for c in &f.columns {
        columns
            .new_dataset_builder()
            .with_data(&c.values)
            .create(c.name.as_str())?;
    }
    for kind in f.kinds() {
        let group = file.create_group(kind.as_str())?;
        for l in f.levels.iter().filter(|l| l.kind == kind) {
            let g = group.create_group(&l.selectivity)?;
            text_attr(&g, "column", &l.column)?;
            int_attr(&g, "value", l.value)?;
            int_attr(&g, "count", l.count)?;
            g.new_dataset_builder()
                .with_data(&l.truth.neighbors)
                .create("neighbors")?;
            g.new_dataset_builder()
                .with_data(&l.truth.distances)
                .create("distances")?;
        }
    }
    Ok(())
}

/// The format of the filter file at `path`, when it is a regular HDF5 file that states one.
fn stored_format(path: &Path) -> Option<i64> {
    crate::fsutil::refuse_special(path, "a filter file").ok()?;
    hdf5::File::open(path)
        .and_then(|f| f.attr("annbench_filters")?.read_scalar())
        .ok()
}

/// The sidecar of the dataset file at `dataset`, if there is one.
pub fn load(dataset: &Path) -> Result<Option<Filters>> {
    let path = sidecar_path(dataset);
    if !path.exists() {
        return Ok(None);
    }
    crate::fsutil::refuse_special(&path, "a filter file")?;
    let bad = |e: hdf5::Error| {
        err(
            &path,
            format!(
                "unreadable filter file ({e}); delete it and run `annbench datasets filter` again"
            ),
        )
    };
    let file = hdf5::File::open(&path).map_err(bad)?;
    let int = |loc: &hdf5::Location, name: &str| -> Result<i64> {
        loc.attr(name).and_then(|a| a.read_scalar()).map_err(bad)
    };
    let text = |loc: &hdf5::Location, name: &str| -> Result<String> {
        loc.attr(name)
            .and_then(|a| a.read_scalar::<VarLenUnicode>())
            .map(|v| v.as_str().to_string())
            .map_err(bad)
    };
    let truth = |g: &hdf5::Group| -> Result<GroundTruth> {
        Ok(GroundTruth {
            neighbors: g
                .dataset("neighbors")
                .and_then(|d| d.read_2d())
                .map_err(bad)?,
            distances: g
                .dataset("distances")
                .and_then(|d| d.read_2d())
                .map_err(bad)?,
        })
    };
    let format = int(&file, "annbench_filters")?;
    let mut columns = Vec::new();
    let mut levels = Vec::new();
    match format {
        1 => {
            let values: Vec<i32> = file
                .dataset(COLUMN)
                .and_then(|d| d.read_raw())
                .map_err(bad)?;
            columns.push(Column {
                name: COLUMN.into(),
                values,
            });
            let group = file.group("selectivity").map_err(bad)?;
            for name in group.member_names().map_err(bad)? {
                let g = group.group(&name).map_err(bad)?;
                let t = int(&g, "threshold")?;
                levels.push(Level {
                    kind: FilterKind::Range,
                    selectivity: name,
                    column: COLUMN.into(),
                    value: t,
                    count: t,
                    truth: truth(&g)?,
                });
            }
        }
        FORMAT => {
            let group = file.group("columns").map_err(bad)?;
            for name in group.member_names().map_err(bad)? {
                let values: Vec<i32> = group
                    .dataset(&name)
                    .and_then(|d| d.read_raw())
                    .map_err(bad)?;
                columns.push(Column { name, values });
            }
            // `attr` first, then label1, label2, ... in number order (HDF5 lists names
            // alphabetically: label10 before label2).
            columns.sort_by_key(|c| {
                let number = c.name.strip_prefix("label").and_then(|n| n.parse().ok());
                (c.name != COLUMN, number.unwrap_or(0usize), c.name.clone())
            });
            for kind in FilterKind::ALL {
                let Ok(group) = file.group(kind.as_str()) else {
                    continue;
                };
                for name in group.member_names().map_err(bad)? {
                    let g = group.group(&name).map_err(bad)?;
                    levels.push(Level {
                        kind,
                        selectivity: name,
                        column: text(&g, "column")?,
                        value: int(&g, "value")?,
                        count: int(&g, "count")?,
                        truth: truth(&g)?,
                    });
                }
            }
        }
        other => {
            if let Some(m) = u64::try_from(other)
                .ok()
                .and_then(|f| VERSIONED.refusal(&path, f))
            {
                return Err(Error::Dataset(m));
            }
            return Err(err(
                &path,
                format!(
                    "a filter file of format {other}, which this annbench does not read; \
                     recreate it with `annbench datasets filter`"
                ),
            ));
        }
    }
    let mut f = Filters {
        seed: int(&file, "seed")? as u64,
        vectors: text(&file, "vectors")?,
        columns,
        levels,
    };
    check(&f, &path)?;
    f.levels.sort_by(|a, b| {
        let v = |l: &Level| l.selectivity.parse::<f64>().unwrap_or(0.0);
        a.kind.cmp(&b.kind).then(v(a).total_cmp(&v(b)))
    });
    Ok(Some(f))
}

/// Refuse a file whose columns differ in length, whose levels name a missing column or
/// state a wrong count, or whose ground truth names rows outside the filter.
fn check(f: &Filters, path: &Path) -> Result<()> {
    let n = f.rows();
    let recreate = "; recreate the file with `annbench datasets filter`";
    if let Some(c) = f.columns.iter().find(|c| c.values.len() != n) {
        return Err(err(
            path,
            format!(
                "column {} has {} values, not {n}{recreate}",
                c.name,
                c.values.len()
            ),
        ));
    }
    for l in &f.levels {
        let at = format!("{} filter at selectivity {}", l.kind, l.selectivity);
        let Some(column) = f.column(&l.column) else {
            return Err(err(
                path,
                format!(
                    "the {at} reads column {}, which the file lacks{recreate}",
                    l.column
                ),
            ));
        };
        let count = column.iter().filter(|&&x| l.matches(x)).count();
        if count as i64 != l.count {
            return Err(err(
                path,
                format!(
                    "the {at} ({}) matches {count} rows, not the {} stated{recreate}",
                    l.condition(),
                    l.count
                ),
            ));
        }
        let ids_ok = l
            .truth
            .neighbors
            .iter()
            .all(|&i| i >= 0 && (i as usize) < n && l.matches(column[i as usize]));
        if !ids_ok || l.truth.neighbors.shape() != l.truth.distances.shape() {
            return Err(err(
                path,
                format!("the {at}: the ground truth names rows outside the filter{recreate}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_both_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("t-8-euclidean.hdf5");
        let ds = super::super::tests::random("t-8-euclidean", 300, 5);
        let sels = ["0.1".into(), "0.02".into(), "0.95".into()];
        let f = super::super::generate(&ds, &sels, &FilterKind::ALL, 3).unwrap();
        assert!(load(&data).unwrap().is_none());
        let path = save(&f, &data).unwrap();
        assert_eq!(path, dir.path().join("t-8-euclidean.filters.h5"));
        let back = load(&data).unwrap().unwrap();
        assert_eq!(back.columns, f.columns);
        let names: Vec<&str> = back.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["attr", "label1", "label2"]);
        assert_eq!(back.seed, 3);
        assert_eq!(
            back.selectivities(FilterKind::Label),
            ["0.02", "0.1", "0.95"]
        );
        assert_eq!(back.levels.len(), 6);
        for (a, b) in back.levels.iter().zip(&f.levels) {
            assert_eq!(
                (a.kind, &a.selectivity, &a.column, a.value, a.count),
                (b.kind, &b.selectivity, &b.column, b.value, b.count)
            );
            assert_eq!(a.truth.neighbors, b.truth.neighbors);
        }
        back.check_for(&ds).unwrap();
    }

    #[test]
    fn format_1_files_read_as_range_filters() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("old.hdf5");
        let ds = super::super::tests::random("old", 200, 3);
        let f = super::super::generate(&ds, &["0.1".into()], &[FilterKind::Range], 4).unwrap();
        let l = &f.levels[0];
        let file = hdf5::File::create(sidecar_path(&data)).unwrap();
        int_attr(&file, "annbench_filters", 1).unwrap();
        int_attr(&file, "seed", 4).unwrap();
        text_attr(&file, "vectors", &f.vectors).unwrap();
        file.new_dataset_builder()
            .with_data(&f.columns[0].values)
            .create("attr")
            .unwrap();
        let g = file
            .create_group("selectivity")
            .and_then(|s| s.create_group("0.1"))
            .unwrap();
        int_attr(&g, "threshold", l.value).unwrap();
        g.new_dataset_builder()
            .with_data(&l.truth.neighbors)
            .create("neighbors")
            .unwrap();
        g.new_dataset_builder()
            .with_data(&l.truth.distances)
            .create("distances")
            .unwrap();
        file.close().unwrap();
        let back = load(&data).unwrap().unwrap();
        assert_eq!(back.kinds(), [FilterKind::Range]);
        assert_eq!(back.levels[0].condition(), l.condition());
        assert_eq!(
            super::super::fingerprint("b", &back, &back.levels[0]),
            super::super::fingerprint("b", &f, l)
        );
    }
}
