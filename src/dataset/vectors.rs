//! Readers for users' own vector files: NumPy `.npy` (float32, float64 or uint8, C order),
//! `.fvecs` (TEXMEX: int32 dimension then that many float32, per vector) and raw little-endian
//! float32 with a given dimension. Every reader returns an n x d f32 matrix or an error naming
//! the file, what is wrong and the fix.

use crate::{Error, Result};
use ndarray::Array2;
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

/// Reads `path` in `format` into an n x d f32 matrix (values are not checked for NaN here).
pub fn read(path: &Path, format: Format) -> Result<Array2<f32>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, "cannot read vectors from", e))?;
    match format {
        Format::Npy => npy(path, &bytes),
        Format::Fvecs => fvecs(path, &bytes),
        Format::Raw { dim } => raw(path, &bytes, dim),
    }
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn raw(path: &Path, bytes: &[u8], dim: usize) -> Result<Array2<f32>> {
    let row = dim * 4;
    if dim == 0 || bytes.is_empty() || bytes.len() % row != 0 {
        return Err(bad(
            path,
            format!(
                "{} bytes is not a whole number of {dim}-dimensional float32 vectors ({row} bytes \
             each); check --dim",
                bytes.len()
            ),
        ));
    }
    let v = f32s(bytes);
    Array2::from_shape_vec((v.len() / dim, dim), v).map_err(|e| bad(path, e))
}

fn fvecs(path: &Path, bytes: &[u8]) -> Result<Array2<f32>> {
    if bytes.len() < 4 {
        return Err(bad(path, "too short for an .fvecs file"));
    }
    let dim = i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let row = 4 + 4 * dim.max(0) as usize;
    if dim <= 0 || bytes.len() % row != 0 {
        return Err(bad(
            path,
            format!(
                "not an .fvecs file: first dimension {dim} does not divide the size {} into \
             records of 4 + 4 * dim bytes",
                bytes.len()
            ),
        ));
    }
    let d = dim as usize;
    let mut data = Vec::with_capacity(bytes.len() / row * d);
    for (i, rec) in bytes.chunks_exact(row).enumerate() {
        if rec[..4] != bytes[..4] {
            return Err(bad(
                path,
                format!("record {i} has a different dimension than record 0 ({dim})"),
            ));
        }
        data.extend(f32s(&rec[4..]));
    }
    Array2::from_shape_vec((data.len() / d, d), data).map_err(|e| bad(path, e))
}

fn npy(path: &Path, bytes: &[u8]) -> Result<Array2<f32>> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad(
            path,
            "not a .npy file (no NumPy magic); save with numpy.save",
        ));
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(path, format!("unsupported .npy version {v}"))),
    };
    let header = bytes
        .get(start..start + hlen)
        .and_then(|h| std::str::from_utf8(h).ok())
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
    let data = &bytes[start + hlen..];
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
    if data.len() != n * d * width {
        return Err(bad(
            path,
            format!(
                "holds {} data bytes, expected {n} x {d} x {width}",
                data.len()
            ),
        ));
    }
    let v: Vec<f32> = match width {
        4 => f32s(data),
        8 => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
            .collect(),
        _ => data.iter().map(|&b| f32::from(b)).collect(),
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
