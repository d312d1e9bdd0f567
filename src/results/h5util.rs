//! Small HDF5 attribute helpers, written the way h5py stores Python values (f64, i64, numpy
//! bool, variable-length UTF-8 strings) so both sides read each other's files.

use crate::{Error, Result};
use hdf5::types::{FixedAscii, FixedUnicode, TypeDescriptor, VarLenAscii, VarLenUnicode};
use std::io::Write;
use std::path::Path;
use std::str::FromStr;

/// A value that can be stored as a scalar attribute.
pub trait AttrValue {
    /// Create attribute `name` on `loc` holding this value.
    fn write_to(&self, loc: &hdf5::Location, name: &str) -> hdf5::Result<()>;
}

macro_rules! plain_attr {
    ($($t:ty),*) => {$(
        impl AttrValue for $t {
            fn write_to(&self, loc: &hdf5::Location, name: &str) -> hdf5::Result<()> {
                loc.new_attr::<$t>().create(name)?.write_scalar(self)
            }
        }
    )*};
}
plain_attr!(f64, i64, bool);

impl AttrValue for &str {
    fn write_to(&self, loc: &hdf5::Location, name: &str) -> hdf5::Result<()> {
        let v = VarLenUnicode::from_str(self).map_err(|e| hdf5::Error::from(e.to_string()))?;
        loc.new_attr::<VarLenUnicode>()
            .create(name)?
            .write_scalar(&v)
    }
}

/// Write scalar attribute `name`.
pub fn write_attr(loc: &hdf5::Location, name: &str, value: impl AttrValue) -> hdf5::Result<()> {
    value.write_to(loc, name)
}

/// Read a string attribute, whatever string type h5py or another writer chose.
pub fn read_attr_str(loc: &hdf5::Location, name: &str) -> hdf5::Result<String> {
    let attr = loc.attr(name)?;
    Ok(match attr.dtype()?.to_descriptor()? {
        TypeDescriptor::VarLenUnicode => attr.read_scalar::<VarLenUnicode>()?.as_str().to_string(),
        TypeDescriptor::VarLenAscii => attr.read_scalar::<VarLenAscii>()?.as_str().to_string(),
        TypeDescriptor::FixedAscii(_) => {
            attr.read_scalar::<FixedAscii<1024>>()?.as_str().to_string()
        }
        TypeDescriptor::FixedUnicode(_) => attr
            .read_scalar::<FixedUnicode<1024>>()?
            .as_str()
            .to_string(),
        other => return Err(format!("attribute '{name}' is {other}, not a string").into()),
    })
}

/// Read a numeric attribute as f64 (ints and floats alike; h5py may store either).
pub fn read_attr_f64(loc: &hdf5::Location, name: &str) -> hdf5::Result<f64> {
    let attr = loc.attr(name)?;
    match attr.dtype()?.to_descriptor()? {
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => {
            Ok(attr.read_scalar::<i64>()? as f64)
        }
        _ => attr.read_scalar::<f64>(),
    }
}

/// Read a boolean attribute (numpy bool enum or an integer).
pub fn read_attr_bool(loc: &hdf5::Location, name: &str) -> hdf5::Result<bool> {
    let attr = loc.attr(name)?;
    match attr.dtype()?.to_descriptor()? {
        TypeDescriptor::Boolean => attr.read_scalar::<bool>(),
        _ => Ok(attr.read_scalar::<i64>()? != 0),
    }
}

/// Build an HDF5 file in memory with `fill` and return its bytes. HDF5 itself never touches
/// the disk, so a full disk is an ordinary write error of the caller instead of a crash
/// inside HDF5 (when its own writes fail, closing the file fails and the library crashes at
/// exit).
pub fn file_image(fill: impl FnOnce(&hdf5::File) -> hdf5::Result<()>) -> hdf5::Result<Vec<u8>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    // The core driver keeps the file in memory under this name; it is never created on disk.
    let name = format!(
        "annbench-in-memory-{}-{}.h5",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let file = hdf5::File::with_options()
        .with_fapl(|p| p.core_filebacked(false))
        .create(&name)?;
    fill(&file)?;
    image_of(&file)
}

/// The bytes of the file at `path` after `edit`, which changes only an in-memory copy (the
/// file on disk is read, never written).
pub fn edited_image(
    path: &Path,
    edit: impl FnOnce(&hdf5::File) -> hdf5::Result<()>,
) -> hdf5::Result<Vec<u8>> {
    let file = hdf5::File::with_options()
        .with_fapl(|p| p.core_filebacked(false))
        .open_rw(path)?;
    edit(&file)?;
    image_of(&file)
}

fn image_of(file: &hdf5::File) -> hdf5::Result<Vec<u8>> {
    file.flush()?;
    let id = file.id();
    hdf5::sync::sync(|| {
        // SAFETY: `id` is an open file; the first call sizes the buffer the second fills.
        let len = unsafe { hdf5_sys::h5f::H5Fget_file_image(id, std::ptr::null_mut(), 0) };
        let len =
            usize::try_from(len).map_err(|_| hdf5::Error::from("cannot size the file image"))?;
        let mut buf = vec![0u8; len];
        let got = unsafe { hdf5_sys::h5f::H5Fget_file_image(id, buf.as_mut_ptr().cast(), len) };
        if usize::try_from(got).ok() != Some(len) {
            return Err(hdf5::Error::from("cannot copy the file image"));
        }
        Ok(buf)
    })
}

/// Write the HDF5 file `fill` builds to `path` atomically, built in memory first (for files
/// of a size that fits in memory twice: points, filter sidecars). `what` names it in errors.
pub fn write_image(
    path: &Path,
    what: &str,
    fill: impl FnOnce(&hdf5::File) -> hdf5::Result<()>,
) -> Result<()> {
    let bytes = file_image(fill).map_err(|e| Error::Io {
        context: format!("cannot encode {what} {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    crate::fsutil::write_atomic(path, &bytes, what)
}

/// Bytes reserved beyond a file's data for HDF5's own metadata (object headers, heaps).
const METADATA_BYTES: u64 = 1 << 20;

/// Write an HDF5 file too large to build in memory (a dataset: its vectors would then be held
/// twice) to `path` atomically, without HDF5 ever meeting a full disk. `head` fills a small
/// in-memory file (attributes) that becomes the temp file; disk for `data_bytes` is then
/// reserved past it ([`crate::fsutil::reserve`]), so a full disk is a clear error before HDF5
/// writes anything, and `body` adds the datasets in place.
pub fn write_large(
    path: &Path,
    what: &str,
    data_bytes: u64,
    head: impl FnOnce(&hdf5::File) -> hdf5::Result<()>,
    body: impl FnOnce(&hdf5::File) -> hdf5::Result<()>,
) -> Result<()> {
    let needed = data_bytes.saturating_add(METADATA_BYTES);
    let h5 = |e: hdf5::Error| Error::Io {
        context: format!("cannot write {what} to {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    };
    let image = file_image(head).map_err(h5)?;
    crate::fsutil::write_atomic_with(path, what, needed, |tmp| {
        let io = |e| crate::fsutil::write_error(path, what, needed, e);
        let f = std::fs::File::create(tmp).map_err(io)?;
        (&f).write_all(&image).map_err(io)?;
        crate::fsutil::reserve(&f, needed).map_err(io)?;
        let file = hdf5::File::open_rw(tmp).map_err(h5)?;
        body(&file).map_err(h5)?;
        file.close().map_err(h5)?;
        crate::fsutil::release(&f).map_err(io)
    })
}

/// Change the file at `path` in place with `edit`, which adds up to `data_bytes` to it (ground
/// truth stored into a large dataset file, which an atomic copy would need as much disk again
/// for). The disk it needs is reserved first, so a full disk is a clear error and leaves the
/// file as it was, instead of a crash inside HDF5.
pub fn edit_in_place(
    path: &Path,
    what: &str,
    data_bytes: u64,
    edit: impl FnOnce(&hdf5::File) -> hdf5::Result<()>,
) -> Result<()> {
    crate::fsutil::refuse_special(path, "a dataset")?;
    let needed = data_bytes.saturating_add(METADATA_BYTES);
    let io = |e| crate::fsutil::write_error(path, what, needed, e);
    let h5 = |e: hdf5::Error| Error::Io {
        context: format!("cannot write {what} to {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    };
    crate::fsutil::ensure_space(path, needed, what)?;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io)?;
    crate::fsutil::reserve(&f, needed).map_err(io)?;
    let done = hdf5::File::open_rw(path)
        .and_then(|file| edit(&file).and_then(|()| file.close()))
        .map_err(h5);
    let released = crate::fsutil::release(&f).and_then(|()| f.sync_all());
    done?;
    released.map_err(io)
}
