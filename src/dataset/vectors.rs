//! Readers for users' own vector files: NumPy `.npy` (float32, float64 or uint8, C order),
//! `.fvecs` (TEXMEX: int32 dimension then that many float32, per vector) and raw little-endian
//! float32 with a given dimension. Every reader returns an n x d f32 matrix or an error naming
//! the file, what is wrong and the fix.

use crate::{Error, Result};
use ndarray::Array2;
use std::io::Read;
use std::path::Path;

/// Input file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// NumPy `.npy`, 2-D, `<f4`, `<f8` (converted to f32) or `|u1`.
    Npy,
    /// TEXMEX `.fvecs`.
    Fvecs,
    /// Headerless little-endian f32, row-major, `dim` values per vector.
    Raw {
        /// Values per vector.
        dim: usize,
    },
}

impl Format {
    /// From the file extension (`.npy`, `.fvecs`), or raw when `dim` is given.
    pub fn infer(path: &Path, dim: Option<usize>) -> Result<Format> {
        match (path.extension().and_then(|e| e.to_str()), dim) {
            (Some("npy"), _) => Ok(Format::Npy),
            (Some("fvecs"), _) => Ok(Format::Fvecs),
            (_, Some(dim)) if dim > 0 => Ok(Format::Raw { dim }),
            _ => Err(Error::Config(format!(
                "{}: unknown vector format; use a .npy or .fvecs file, or give --dim D for \
                 raw little-endian float32",
                path.display()
            ))),
        }
    }
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Dataset(format!("{}: {what}", path.display()))
}

/// Bytes converted per step for formats that need converting (f64, u8, fvecs records).
const STEP: usize = 8 << 20;

/// Reads `path` in `format` into an n x d f32 matrix (values are not checked for NaN here).
/// The values are read straight into the matrix's one allocation: peak memory is the matrix
/// plus a few MiB, never a second copy of the file.
pub fn read(path: &Path, format: Format) -> Result<Array2<f32>> {
    let mut file = crate::fsutil::open_existing(path, "vectors")?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot read vectors from", e))?
        .len();
    let mut r = std::io::BufReader::with_capacity(1 << 20, &mut file);
    match format {
        Format::Npy => npy(path, &mut r, len),
        Format::Fvecs => fvecs(path, &mut r, len),
        Format::Raw { dim } => raw(path, &mut r, len, dim),
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, "cannot read vectors from", e)
}

/// `rows` x `dim` little-endian f32 values read straight into the matrix.
fn read_f32s(path: &Path, r: &mut impl Read, rows: usize, dim: usize) -> Result<Array2<f32>> {
    let mut v = vec![0f32; rows * dim];
    r.read_exact(bytemuck::cast_slice_mut(&mut v))
        .map_err(io(path))?;
    if cfg!(target_endian = "big") {
        v.iter_mut()
            .for_each(|x| *x = f32::from_bits(u32::from_le(x.to_bits())));
    }
    Array2::from_shape_vec((rows, dim), v).map_err(|e| bad(path, e))
}

/// `count` values of `width` bytes each, converted by `convert` a step at a time.
fn read_converted(
    path: &Path,
    r: &mut impl Read,
    count: usize,
    width: usize,
    convert: impl Fn(&[u8]) -> f32,
) -> Result<Vec<f32>> {
    let mut out = Vec::with_capacity(count);
    let mut buf = vec![0u8; STEP / width * width];
    while out.len() < count {
        let take = ((count - out.len()) * width).min(buf.len());
        r.read_exact(&mut buf[..take]).map_err(io(path))?;
        out.extend(buf[..take].chunks_exact(width).map(&convert));
    }
    Ok(out)
}

fn raw(path: &Path, r: &mut impl Read, len: u64, dim: usize) -> Result<Array2<f32>> {
    let row = dim as u64 * 4;
    if dim == 0 || len == 0 || len % row != 0 {
        return Err(bad(
            path,
            format!(
                "{len} bytes is not a whole number of {dim}-dimensional float32 vectors ({row} \
                 bytes each); check --dim"
            ),
        ));
    }
    read_f32s(path, r, (len / row) as usize, dim)
}

fn fvecs(path: &Path, r: &mut impl Read, len: u64) -> Result<Array2<f32>> {
    let mut head = [0u8; 4];
    if len < 4 {
        return Err(bad(path, "too short for an .fvecs file"));
    }
    r.read_exact(&mut head).map_err(io(path))?;
    let dim = i32::from_le_bytes(head);
    let row = 4 + 4 * u64::from(dim.max(0) as u32);
    if dim <= 0 || len % row != 0 {
        return Err(bad(
            path,
            format!(
                "not an .fvecs file: first dimension {dim} does not divide the size {len} into \
             records of 4 + 4 * dim bytes"
            ),
        ));
    }
    let (d, n) = (dim as usize, (len / row) as usize);
    let mut data = vec![0f32; n * d];
    for (i, rec) in data.chunks_exact_mut(d).enumerate() {
        if i > 0 {
            let mut h = [0u8; 4];
            r.read_exact(&mut h).map_err(io(path))?;
            if h != head {
                return Err(bad(
                    path,
                    format!("record {i} has a different dimension than record 0 ({dim})"),
                ));
            }
        }
        r.read_exact(bytemuck::cast_slice_mut(rec))
            .map_err(io(path))?;
    }
    if cfg!(target_endian = "big") {
        data.iter_mut()
            .for_each(|x| *x = f32::from_bits(u32::from_le(x.to_bits())));
    }
    Array2::from_shape_vec((n, d), data).map_err(|e| bad(path, e))
}

fn npy(path: &Path, r: &mut impl Read, len: u64) -> Result<Array2<f32>> {
    let mut pre = [0u8; 10];
    if len < 10 || r.read_exact(&mut pre).is_err() || &pre[..6] != b"\x93NUMPY" {
        return Err(bad(
            path,
            "not a .npy file (no NumPy magic); save with numpy.save",
        ));
    }
    let (hlen, start) = match pre[6] {
        1 => (u16::from_le_bytes([pre[8], pre[9]]) as usize, 10),
        2 | 3 => {
            let mut more = [0u8; 2];
            r.read_exact(&mut more).map_err(io(path))?;
            (
                u32::from_le_bytes([pre[8], pre[9], more[0], more[1]]) as usize,
                12,
            )
        }
        v => return Err(bad(path, format!("unsupported .npy version {v}"))),
    };
    let mut hbytes = vec![0u8; hlen.min(1 << 20)];
    let header = r
        .read_exact(&mut hbytes)
        .ok()
        .and_then(|()| std::str::from_utf8(&hbytes).ok())
        .filter(|_| hlen <= 1 << 20)
        .ok_or_else(|| bad(path, "truncated or unreadable .npy header"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        Some(header[at..].trim_start().strip_prefix(':')?.trim_start())
    };
    let descr = field("descr")
        .and_then(|s| s.split('\'').nth(1))
        .unwrap_or("");
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad(
            path,
            "Fortran-ordered array; save a C-ordered one (numpy.ascontiguousarray)",
        ));
    }
    let shape: Vec<usize> = field("shape")
        .and_then(|s| s.strip_prefix('(')?.split(')').next())
        .map(|s| s.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .unwrap_or_default();
    let [n, d] = shape[..] else {
        return Err(bad(
            path,
            format!("array shape {shape:?} is not 2-D (vectors x dimension)"),
        ));
    };
    let width = match descr {
        "<f4" => 4,
        "<f8" => 8,
        "|u1" => 1,
        other => {
            return Err(bad(
                path,
                format!("dtype '{other}' is not supported; convert with .astype('float32')"),
            ));
        }
    };
    let data_len = len.saturating_sub((start + hlen) as u64);
    if data_len != (n * d * width) as u64 {
        return Err(bad(
            path,
            format!("holds {data_len} data bytes, expected {n} x {d} x {width}"),
        ));
    }
    let v: Vec<f32> = match width {
        4 => return read_f32s(path, r, n, d),
        8 => read_converted(path, r, n * d, 8, |c| {
            f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32
        })?,
        _ => read_converted(path, r, n * d, 1, |c| f32::from(c[0]))?,
    };
    Array2::from_shape_vec((n, d), v).map_err(|e| bad(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy_bytes(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((h.len() as u16).to_le_bytes());
        out.extend(h.as_bytes());
        out.extend(data);
        out
    }

    fn npy(p: &Path, b: &[u8]) -> Result<Array2<f32>> {
        super::npy(p, &mut std::io::Cursor::new(b), b.len() as u64)
    }

    fn fvecs(p: &Path, b: &[u8]) -> Result<Array2<f32>> {
        super::fvecs(p, &mut std::io::Cursor::new(b), b.len() as u64)
    }

    fn raw(p: &Path, b: &[u8], dim: usize) -> Result<Array2<f32>> {
        super::raw(p, &mut std::io::Cursor::new(b), b.len() as u64, dim)
    }

    #[test]
    fn reads_npy_f4_f8_u1() {
        let p = Path::new("x.npy");
        let f4: Vec<u8> = [1f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let a = npy(p, &npy_bytes("<f4", "(2, 3)", &f4)).unwrap();
        assert_eq!(a.dim(), (2, 3));
        assert_eq!(a[[1, 2]], 6.0);
        let f8: Vec<u8> = [0.5f64, -1.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            npy(p, &npy_bytes("<f8", "(1, 2)", &f8)).unwrap()[[0, 1]],
            -1.5
        );
        assert_eq!(
            npy(p, &npy_bytes("|u1", "(2, 1)", &[7, 255])).unwrap()[[1, 0]],
            255.0
        );
        let err = npy(p, &npy_bytes("<i8", "(1, 1)", &[0; 8]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("astype('float32')"), "{err}");
        let err = npy(p, &npy_bytes("<f4", "(6,)", &f4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not 2-D"), "{err}");
        assert!(npy(p, &npy_bytes("<f4", "(2, 4)", &f4)).is_err());
    }

    #[test]
    fn reads_fvecs_and_raw() {
        let p = Path::new("x.fvecs");
        let mut b = Vec::new();
        for row in [[1f32, 2.0], [3.0, 4.0]] {
            b.extend(2i32.to_le_bytes());
            b.extend(row.iter().flat_map(|v| v.to_le_bytes()));
        }
        assert_eq!(fvecs(p, &b).unwrap()[[1, 1]], 4.0);
        b.truncate(b.len() - 1);
        assert!(fvecs(p, &b).is_err());
        let r: Vec<u8> = [1f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(raw(p, &r, 2).unwrap().dim(), (2, 2));
        assert!(raw(p, &r, 3).unwrap_err().to_string().contains("--dim"));
    }
}
