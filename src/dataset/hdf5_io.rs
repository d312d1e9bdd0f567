//! Reading and writing the ann-benchmarks HDF5 layout: file attributes `distance`, `dimension`,
//! `point_type`, `type`; datasets `train`, `test` and optionally `neighbors`, `distances`.
//!
//! Shapes and attributes are checked before any data is read, so a bad file fails fast, and each
//! matrix is read straight into its final `Array2` (one allocation: a 6 GB train set is held once).

use super::{Dataset, GroundTruth, validate};
use crate::results::h5util::{edit_in_place, write_large};
use crate::{Error, Metric, Result};
use hdf5::types::{FixedAscii, FixedUnicode, TypeDescriptor, VarLenAscii, VarLenUnicode};
use ndarray::Array2;
use std::path::Path;

/// Shapes and attributes of a dataset file, read without loading the vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// Dataset name (file stem).
    pub name: String,
    /// The `distance` attribute.
    pub metric: Metric,
    /// Vector dimension (train columns).
    pub dimension: usize,
    /// Train rows.
    pub train: usize,
    /// Test rows.
    pub test: usize,
    /// Ground-truth width K (neighbours per query), when `neighbors`/`distances` are present.
    pub ground_truth_k: Option<usize>,
    /// File size in bytes.
    pub file_size: u64,
}

/// An opened file whose attributes and shapes passed the checks.
struct Checked {
    file: hdf5::File,
    info: Info,
}

fn err(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Dataset(format!("{}: {what}", path.display()))
}

/// Dataset name for a path: the file stem (`data/glove-25-angular.hdf5` -> `glove-25-angular`).
pub fn name_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Opens, checks attributes and shapes; reads no vectors.
fn check_file(path: &Path) -> Result<Checked> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            err(
                path,
                "no such file; check the path, or give a dataset name (`annbench datasets list`)",
            )
        } else {
            Error::io(path, "cannot read dataset file", e)
        }
    })?;
    if meta.is_dir() {
        return Err(err(path, "is a directory, not an HDF5 dataset file"));
    }
    // A FIFO would block the open until a writer comes; a device reads whatever it yields.
    crate::fsutil::refuse_special(path, "a dataset")?;
    let file = hdf5::File::open(path).map_err(|e| {
        err(
            path,
            format!(
                "not a readable HDF5 file ({e}); expected an ann-benchmarks .hdf5 file, or use \
             `annbench datasets create` to convert .npy/.fvecs/raw vectors"
            ),
        )
    })?;
    if let Some(t) = str_attr(&file, "type").map_err(|e| err(path, e))? {
        if t != "dense" {
            return Err(err(
                path,
                format!("type '{t}' is not supported by these backends (only dense vectors)"),
            ));
        }
    }
    if let Some(p) = str_attr(&file, "point_type").map_err(|e| err(path, e))? {
        if p != "float" {
            return Err(err(
                path,
                format!("point_type '{p}' is not supported by these backends (only float vectors)"),
            ));
        }
    }
    let metric = match str_attr(&file, "distance").map_err(|e| err(path, e))? {
        Some(d) => d.parse::<Metric>().map_err(|e| err(path, e))?,
        None => {
            return Err(err(
                path,
                "missing attribute 'distance' (euclidean or angular)",
            ));
        }
    };
    let train = shape2(&file, "train").map_err(|e| err(path, e))?;
    let test = shape2(&file, "test").map_err(|e| err(path, e))?;
    if train.1 != test.1 {
        return Err(err(
            path,
            format!(
                "dimension mismatch: train is {} x {} but test is {} x {}",
                train.0, train.1, test.0, test.1
            ),
        ));
    }
    if let Some(dim) = int_attr(&file, "dimension").map_err(|e| err(path, e))? {
        if dim != train.1 as i64 {
            return Err(err(
                path,
                format!(
                    "dimension mismatch: attribute 'dimension' is {dim} but train has {} columns",
                    train.1
                ),
            ));
        }
    }
    let ground_truth_k = match (file.link_exists("neighbors"), file.link_exists("distances")) {
        (false, false) => None,
        (true, true) => {
            let n = shape2(&file, "neighbors").map_err(|e| err(path, e))?;
            let d = shape2(&file, "distances").map_err(|e| err(path, e))?;
            if n != d || n.0 != test.0 {
                return Err(err(
                    path,
                    format!(
                        "ground truth shape mismatch: test has {} rows, neighbors is {} x {}, \
                     distances is {} x {}; recompute with `annbench datasets groundtruth FILE`",
                        test.0, n.0, n.1, d.0, d.1
                    ),
                ));
            }
            Some(n.1)
        }
        (has_n, _) => {
            let (has, missing) = if has_n {
                ("neighbors", "distances")
            } else {
                ("distances", "neighbors")
            };
            return Err(err(
                path,
                format!(
                    "has '{has}' but no '{missing}'; recompute with `annbench datasets groundtruth FILE`"
                ),
            ));
        }
    };
    let info = Info {
        name: name_of(path),
        metric,
        dimension: train.1,
        train: train.0,
        test: test.0,
        ground_truth_k,
        file_size: meta.len(),
    };
    Ok(Checked { file, info })
}

/// Reads shapes and attributes only (for `datasets info`), with the same checks as [`open`]
/// except the per-value ones.
pub fn info(path: &Path) -> Result<Info> {
    check_file(path).map(|c| c.info)
}

/// Opens and fully validates an ann-benchmarks HDF5 file, including its ground truth (see
/// [`super::gtcheck`]). Errors name the file, what is wrong and the fix.
pub fn open(path: &Path) -> Result<Dataset> {
    read(path, true)
}

/// Opens a file's vectors and ignores any ground truth in it: for recomputing ground truth
/// that failed its checks (`annbench datasets groundtruth`).
pub fn open_vectors(path: &Path) -> Result<Dataset> {
    read(path, false)
}

fn read(path: &Path, with_ground_truth: bool) -> Result<Dataset> {
    let Checked { file, info } = check_file(path)?;
    let read_f32 = |name: &str| -> Result<Array2<f32>> {
        let ds = file
            .dataset(name)
            .map_err(|e| err(path, format!("cannot open '{name}': {e}")))?;
        ds.read_2d::<f32>()
            .map_err(|e| err(path, format!("cannot read '{name}' as float32: {e}")))
    };
    let train = read_f32("train")?;
    let test = read_f32("test")?;
    let ground_truth = match info.ground_truth_k {
        Some(_) if with_ground_truth => {
            let neighbors = file
                .dataset("neighbors")
                .and_then(|d| d.read_2d::<i32>())
                .map_err(|e| err(path, format!("cannot read 'neighbors' as integers: {e}")))?;
            Some(GroundTruth {
                neighbors,
                distances: read_f32("distances")?,
            })
        }
        _ => None,
    };
    let ds = Dataset {
        name: info.name,
        metric: info.metric,
        train,
        test,
        ground_truth,
    };
    // Messages say `datasets groundtruth FILE`: name this file instead.
    let bad = |e: String| {
        let e = e.replace(
            "datasets groundtruth FILE",
            &format!("datasets groundtruth {}", path.display()),
        );
        err(path, e)
    };
    validate::check(&ds).map_err(bad)?;
    super::gtcheck::verify(&ds).map_err(bad)?;
    Ok(ds)
}

/// Reads only the first `train_rows` train and `test_rows` test vectors (no ground truth), for
/// subsets of files too large to load whole. Values are validated like [`open`].
pub fn open_head(path: &Path, train_rows: usize, test_rows: usize) -> Result<Dataset> {
    let Checked { file, info } = check_file(path)?;
    for (flag, want, has) in [
        ("--train", train_rows, info.train),
        ("--test", test_rows, info.test),
    ] {
        let part = &flag[2..];
        let message = if has == 0 {
            format!("{flag} needs at least 1 row but the file has 0 {part} rows")
        } else if want == 0 {
            format!("{flag} 0: give at least 1 row (the file has {has} {part} rows)")
        } else if want > has {
            format!("{flag} {want}: the file has only {has} {part} rows; give {flag} 1 to {has}")
        } else {
            continue;
        };
        return Err(err(path, message));
    }
    let read = |name: &str, rows: usize| -> Result<Array2<f32>> {
        file.dataset(name)
            .and_then(|d| d.read_slice_2d::<f32, _>(ndarray::s![..rows, ..]))
            .map_err(|e| err(path, format!("cannot read '{name}' as float32: {e}")))
    };
    let ds = Dataset {
        name: info.name,
        metric: info.metric,
        train: read("train", train_rows)?,
        test: read("test", test_rows)?,
        ground_truth: None,
    };
    validate::check(&ds).map_err(|e| err(path, e))?;
    Ok(ds)
}

/// What the difficulty measures read: the test vectors, the ground truth (if any) and every
/// `step`-th train row. The train set is never read whole.
pub struct Sample {
    pub info: Info,
    pub test: Array2<f32>,
    pub ground_truth: Option<GroundTruth>,
    pub train_sample: Array2<f32>,
}

/// Reads a [`Sample`] with train rows `0, step, 2*step, ...`.
pub fn open_sample(path: &Path, step: usize) -> Result<Sample> {
    let Checked { file, info } = check_file(path)?;
    let read = |name: &str| -> Result<Array2<f32>> {
        file.dataset(name)
            .and_then(|d| d.read_2d::<f32>())
            .map_err(|e| err(path, format!("cannot read '{name}' as float32: {e}")))
    };
    let train_sample = file
        .dataset("train")
        .and_then(|d| d.read_slice_2d::<f32, _>(ndarray::s![..;step.max(1), ..]))
        .map_err(|e| err(path, format!("cannot read 'train' as float32: {e}")))?;
    let ground_truth = match info.ground_truth_k {
        None => None,
        Some(_) => Some(GroundTruth {
            neighbors: file
                .dataset("neighbors")
                .and_then(|d| d.read_2d::<i32>())
                .map_err(|e| err(path, format!("cannot read 'neighbors' as integers: {e}")))?,
            distances: read("distances")?,
        }),
    };
    Ok(Sample {
        test: read("test")?,
        info,
        ground_truth,
        train_sample,
    })
}

/// Writes `ds` in the ann-benchmarks layout, atomically: a temporary file in the same directory
/// renamed over `path` once complete, with its disk reserved before HDF5 writes the vectors
/// ([`write_large`]: a full disk is a clear error, never an HDF5 crash). Attribute types follow
/// h5py (strings for `distance`, `point_type`, `type`; an integer `dimension`); `neighbors` are
/// int32, `distances` float32.
pub fn save(ds: &Dataset, path: &Path) -> Result<()> {
    validate::check(ds)
        .map_err(|e| err(path, format!("refusing to write an invalid dataset: {e}")))?;
    if path.file_name().is_none() {
        return Err(err(path, "not a file path"));
    }
    let gt = ds
        .ground_truth
        .as_ref()
        .map_or(0, |g| g.neighbors.len() * 8);
    let bytes = (ds.train.len() + ds.test.len()) * 4 + gt;
    write_large(
        path,
        "the dataset",
        bytes as u64,
        |file| attrs(ds, file),
        |file| {
            file.new_dataset_builder()
                .with_data(&ds.train)
                .create("train")?;
            file.new_dataset_builder()
                .with_data(&ds.test)
                .create("test")?;
            if let Some(gt) = &ds.ground_truth {
                file.new_dataset_builder()
                    .with_data(&gt.neighbors)
                    .create("neighbors")?;
                file.new_dataset_builder()
                    .with_data(&gt.distances)
                    .create("distances")?;
            }
            Ok(())
        },
    )
}

/// The file attributes of `ds`, as h5py writes them.
fn attrs(ds: &Dataset, file: &hdf5::File) -> hdf5::Result<()> {
    for (name, value) in [
        ("type", "dense"),
        ("distance", ds.metric.as_str()),
        ("point_type", "float"),
    ] {
        let v: VarLenUnicode = value
            .parse()
            .map_err(|e| hdf5::Error::from(format!("attribute {name}: {e:?}")))?;
        file.new_attr::<VarLenUnicode>()
            .shape(())
            .create(name)?
            .write_scalar(&v)?;
    }
    let dim = ds.dimension() as i64;
    file.new_attr::<i64>()
        .shape(())
        .create("dimension")?
        .write_scalar(&dim)
}

/// Replaces the ground truth of the file at `path` in place, without rewriting its vectors
/// (a 1M x 1536 file would need another 6 GB of disk for an atomic copy). The disk the new
/// datasets need is reserved first ([`edit_in_place`]), so a full disk leaves the file as it
/// was. The new datasets are written under temporary names and then renamed over the old
/// ones, so an interruption leaves either the old ground truth, none (recomputed on the next
/// run), or the new one, and the train and test vectors untouched.
pub fn store_ground_truth(path: &Path, gt: &GroundTruth) -> Result<()> {
    let info = info(path)?;
    validate::check_ground_truth(gt, info.train, info.test)
        .map_err(|e| err(path, format!("refusing to store invalid ground truth: {e}")))?;
    let bytes = (gt.neighbors.len() * 8) as u64;
    edit_in_place(path, "the ground truth", bytes, |file| {
        let (tmp_n, tmp_d) = (".annbench_neighbors_new", ".annbench_distances_new");
        for name in [tmp_n, tmp_d] {
            if file.link_exists(name) {
                file.unlink(name)?;
            }
        }
        file.new_dataset_builder()
            .with_data(&gt.neighbors)
            .create(tmp_n)?;
        file.new_dataset_builder()
            .with_data(&gt.distances)
            .create(tmp_d)?;
        file.flush()?;
        for (tmp, name) in [(tmp_n, "neighbors"), (tmp_d, "distances")] {
            if file.link_exists(name) {
                file.unlink(name)?;
            }
            file.relink(tmp, name)?;
        }
        Ok(())
    })
}

/// A 2-D dataset's shape, or what is wrong with it.
fn shape2(file: &hdf5::File, name: &str) -> std::result::Result<(usize, usize), String> {
    if !file.link_exists(name) {
        return Err(format!(
            "no '{name}' dataset; an ann-benchmarks file needs 'train' and 'test' (n x d float32)"
        ));
    }
    let ds = file
        .dataset(name)
        .map_err(|e| format!("'{name}' is not a dataset: {e}"))?;
    match ds.shape().as_slice() {
        [r, c] => Ok((*r, *c)),
        other => Err(format!(
            "'{name}' must be 2-D (rows x columns) but has shape {other:?}"
        )),
    }
}

/// A scalar string attribute in any of the encodings h5py and numpy write.
fn str_attr(file: &hdf5::File, name: &str) -> std::result::Result<Option<String>, String> {
    let Ok(attr) = file.attr(name) else {
        return Ok(None);
    };
    let bad = |e: hdf5::Error| format!("cannot read attribute '{name}': {e}");
    let desc = attr.dtype().and_then(|t| t.to_descriptor()).map_err(bad)?;
    let s = match desc {
        TypeDescriptor::VarLenUnicode => attr
            .read_scalar::<VarLenUnicode>()
            .map_err(bad)?
            .as_str()
            .to_owned(),
        TypeDescriptor::VarLenAscii => attr
            .read_scalar::<VarLenAscii>()
            .map_err(bad)?
            .as_str()
            .to_owned(),
        TypeDescriptor::FixedAscii(_) => attr
            .read_scalar::<FixedAscii<256>>()
            .map_err(bad)?
            .as_str()
            .to_owned(),
        TypeDescriptor::FixedUnicode(_) => attr
            .read_scalar::<FixedUnicode<256>>()
            .map_err(bad)?
            .as_str()
            .to_owned(),
        other => {
            return Err(format!(
                "attribute '{name}' must be a string, found {other:?}"
            ));
        }
    };
    Ok(Some(s.trim_end_matches('\0').trim().to_owned()))
}

/// A scalar integer attribute (any integer width; a float with an integral value is accepted).
fn int_attr(file: &hdf5::File, name: &str) -> std::result::Result<Option<i64>, String> {
    let Ok(attr) = file.attr(name) else {
        return Ok(None);
    };
    let bad = |e: hdf5::Error| format!("cannot read attribute '{name}': {e}");
    let desc = attr.dtype().and_then(|t| t.to_descriptor()).map_err(bad)?;
    match desc {
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => {
            attr.read_scalar::<i64>().map(Some).map_err(bad)
        }
        TypeDescriptor::Float(_) => {
            let v = attr.read_scalar::<f64>().map_err(bad)?;
            Ok(Some(v as i64))
        }
        other => Err(format!(
            "attribute '{name}' must be an integer, found {other:?}"
        )),
    }
}
