//! Small HDF5 attribute helpers, written the way h5py stores Python values (f64, i64, numpy
//! bool, variable-length UTF-8 strings) so both sides read each other's files.

use hdf5::types::{FixedAscii, FixedUnicode, TypeDescriptor, VarLenAscii, VarLenUnicode};
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
/// inside HDF5 (its close segfaults when its own writes fail).
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
    file.flush()?;
    let id = file.id();
    hdf5::sync::sync(|| {
        // SAFETY: `id` is the open file above; the first call sizes the buffer the second fills.
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
