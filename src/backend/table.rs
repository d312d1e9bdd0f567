//! Shared by the database backends: safe identifiers derived from dataset names, checks on the
//! train matrix before anything is sent, and a fingerprint that decides whether an existing
//! table can be reused.

use crate::{Error, Result};
use ndarray::ArrayView2;
use rayon::prelude::*;

/// Longest identifier both servers accept (PostgreSQL truncates at 63 bytes, MariaDB at 64).
pub const MAX_IDENT: usize = 63;

/// Longest part of a table name taken from the dataset name; longer names are cut and get a
/// hash suffix so two long names cannot share a table.
const MAX_STEM: usize = 40;

/// Check that `name` is a safe SQL identifier: `[a-z0-9_]`, starts with a letter or `_`, at most
/// [`MAX_IDENT`] bytes. Used for every identifier annbench puts into SQL text.
pub fn check_ident(name: &str, what: &str) -> Result<()> {
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let ok_start = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b == b'_');
    if !ok_chars || !ok_start || name.len() > MAX_IDENT {
        return Err(Error::Config(format!(
            "invalid {what} '{name}': use lower-case letters, digits and '_' (starting with a \
             letter), at most {MAX_IDENT} characters"
        )));
    }
    Ok(())
}

/// Table name for a dataset: `<prefix>_<stem>` where the stem is the dataset name lower-cased
/// with every other character replaced by `_`. When that changed or cut the name, an 8-hex hash
/// of the original name is appended so distinct datasets get distinct tables.
pub fn table_name(prefix: &str, dataset: &str) -> Result<String> {
    let mut stem: String = dataset
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.trim_matches('_').is_empty() {
        return Err(Error::Config(format!(
            "dataset name '{dataset}' has no letters or digits to name a table after; rename it"
        )));
    }
    // Only '-' and '.' are common in dataset names; anything else gets the hash as well.
    let lossy = dataset
        .chars()
        .any(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'));
    if stem.len() > MAX_STEM || lossy {
        stem.truncate(MAX_STEM);
        stem = format!("{stem}_{:08x}", fnv1a(dataset.as_bytes()) as u32);
    }
    let name = format!("{prefix}_{stem}");
    check_ident(&name, "table name")?;
    Ok(name)
}

/// Refuse a train matrix whose dimension differs from `dimension`, that holds NaN or inf, or
/// whose squared distances overflow float32 (see
/// [`crate::dataset::validate::MAX_SQUARED_LENGTH`]), naming the first bad row.
pub fn check_train(train: ArrayView2<'_, f32>, dimension: usize, dataset: &str) -> Result<()> {
    check_train_within(train, dimension, dataset, f32::MAX, "")
}

/// [`check_train`] that also refuses finite values beyond +-`max_abs` (e.g. float16's range
/// for a halfvec column), in the same single pass; `limit` names that range and the fix.
pub fn check_train_within(
    train: ArrayView2<'_, f32>,
    dimension: usize,
    dataset: &str,
    max_abs: f32,
    limit: &str,
) -> Result<()> {
    check_rows_within("train", train, dimension, dataset, max_abs, limit)
}

/// The data check of every algorithm ([`super::Algorithm::check_data`]) that takes any finite
/// float32 vectors: [`check_train`] on train and on test.
pub fn check_data(
    spec: &super::TableSpec,
    train: ArrayView2<'_, f32>,
    test: ArrayView2<'_, f32>,
) -> Result<()> {
    check_data_within(spec, train, test, f32::MAX, "")
}

/// [`check_data`] that also refuses values beyond +-`max_abs` in train or test (a float16
/// index or column refuses them, and so does a query cast to float16).
pub fn check_data_within(
    spec: &super::TableSpec,
    train: ArrayView2<'_, f32>,
    test: ArrayView2<'_, f32>,
    max_abs: f32,
    limit: &str,
) -> Result<()> {
    let (d, name) = (spec.dimension, spec.dataset.as_str());
    check_rows_within("train", train, d, name, max_abs, limit)?;
    check_rows_within("test", test, d, name, max_abs, limit)
}

/// A streaming batch's values (`what` names it, e.g. `insert batch`): finite, squared
/// lengths within float32, and within +-`max_abs` (`limit` names that range and the fix);
/// the error names the batch row. An empty batch passes.
pub fn check_batch_values(
    what: &str,
    m: ArrayView2<'_, f32>,
    dataset: &str,
    max_abs: f32,
    limit: &str,
) -> Result<()> {
    if m.nrows() == 0 {
        return Ok(());
    }
    check_rows_within(what, m, m.ncols(), dataset, max_abs, limit)
}

/// The checks of [`check_train_within`] on the matrix `what` (`train` or `test`).
fn check_rows_within(
    what: &str,
    m: ArrayView2<'_, f32>,
    dimension: usize,
    dataset: &str,
    max_abs: f32,
    limit: &str,
) -> Result<()> {
    if m.ncols() != dimension {
        return Err(Error::Dataset(format!(
            "dataset '{dataset}': {what} vectors have {} dimensions but the table spec says \
             {dimension}; fix the dataset or the spec",
            m.ncols()
        )));
    }
    if m.nrows() == 0 || dimension == 0 {
        return Err(Error::Dataset(format!(
            "dataset '{dataset}': the {what} matrix is empty ({} x {dimension})",
            m.nrows()
        )));
    }
    // False for NaN and +-inf whatever `max_abs` is.
    let ok = |x: &f32| x.abs() <= max_abs;
    let long = |row: &ndarray::ArrayView1<'_, f32>| {
        crate::dataset::validate::squared_length(row.view())
            > crate::dataset::validate::MAX_SQUARED_LENGTH
    };
    let bad = m
        .outer_iter()
        .into_par_iter()
        .enumerate()
        .find_first(|(_, row)| !row.iter().all(ok) || long(row));
    if let Some((i, row)) = bad.as_ref().filter(|(_, row)| row.iter().all(ok)) {
        let why = crate::dataset::validate::bad_row(what, *i, row.view()).unwrap_or_default();
        return Err(Error::Dataset(format!(
            "dataset '{dataset}': {why} (nothing was sent to the server)"
        )));
    }
    if let Some((i, row)) = bad {
        let (j, x) = row
            .iter()
            .enumerate()
            .find(|(_, x)| !ok(x))
            .map_or((0, f32::NAN), |(j, x)| (j, *x));
        if x.is_finite() {
            return Err(Error::Dataset(format!(
                "dataset '{dataset}': {what} row {i} has the value {x} at column {j}, outside \
                 {limit} (nothing was sent to the server)"
            )));
        }
        return Err(Error::Dataset(format!(
            "dataset '{dataset}': {what} row {i} holds {x} at column {j}; vector indexes need \
             finite values, so clean the data (nothing was sent to the server)"
        )));
    }
    Ok(())
}

/// Refuse a query vector whose dimension differs from the table's (shared by every searcher).
pub fn check_query(query: &[f32], dimension: usize) -> Result<()> {
    if query.len() == dimension {
        return Ok(());
    }
    Err(Error::Backend(format!(
        "query has {} dimensions; the table has {dimension}",
        query.len()
    )))
}

/// A 64-bit fingerprint of the shape and every bit of the train matrix, computed per row in
/// parallel and combined in row order. Decides whether a stored table holds exactly this data.
pub fn fingerprint(train: ArrayView2<'_, f32>) -> u64 {
    let rows: Vec<u64> = train
        .outer_iter()
        .into_par_iter()
        .map(|row| {
            let mut h = 0x243f_6a88_85a3_08d3_u64;
            for x in row.iter() {
                h = mix(h ^ u64::from(x.to_bits()));
            }
            h
        })
        .collect();
    let mut h = mix(train.nrows() as u64 ^ ((train.ncols() as u64) << 32));
    for r in rows {
        h = mix(h ^ r);
    }
    h
}

/// A fingerprint as text for the metadata table (16 hex digits).
pub fn fingerprint_hex(train: ArrayView2<'_, f32>) -> String {
    format!("{:016x}", fingerprint(train))
}

fn mix(x: u64) -> u64 {
    // splitmix64 finaliser: cheap and every input bit affects every output bit.
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn table_names_are_safe_and_distinct() {
        assert_eq!(
            table_name("t", "fashion-mnist-784-euclidean").unwrap(),
            "t_fashion_mnist_784_euclidean"
        );
        let a = table_name("t", "My.Set").unwrap();
        let b = table_name("t", "my_set").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("t_my_set_"), "{a}");
        let long = "x".repeat(200);
        let n = table_name("t", &long).unwrap();
        assert!(n.len() <= MAX_IDENT, "{n}");
        assert!(table_name("t", "---").is_err());
        assert!(table_name("t", "a'; DROP TABLE x; --").unwrap().len() <= MAX_IDENT);
    }

    #[test]
    fn idents_are_checked() {
        assert!(check_ident("abc_1", "x").is_ok());
        for bad in ["", "1abc", "a-b", "A", "a b", "a`b", &"a".repeat(64)] {
            assert!(check_ident(bad, "x").is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_train_is_refused_with_position() {
        let m = array![[1.0f32, 2.0], [3.0, f32::NAN]];
        let e = check_train(m.view(), 2, "d").unwrap_err().to_string();
        assert!(e.contains("row 1") && e.contains("column 1"), "{e}");
        let e = check_train(m.view(), 3, "d").unwrap_err().to_string();
        assert!(e.contains("2 dimensions") && e.contains('3'), "{e}");
        let inf = array![[f32::INFINITY]];
        assert!(check_train(inf.view(), 1, "d").is_err());
        let huge = array![[1.0f32, 0.0], [0.0, 1e20]];
        let e = check_train(huge.view(), 2, "d").unwrap_err().to_string();
        assert!(e.contains("train' row 1") && e.contains("float32"), "{e}");
    }

    #[test]
    fn fingerprint_sees_every_value_and_the_shape() {
        let a = array![[1.0f32, 2.0], [3.0, 4.0]];
        let mut b = a.clone();
        b[[1, 1]] = 4.000_001;
        let c = array![[1.0f32, 2.0, 3.0, 4.0]];
        let swapped = array![[3.0f32, 4.0], [1.0, 2.0]];
        let fa = fingerprint(a.view());
        assert_eq!(fa, fingerprint(a.clone().view()));
        assert_ne!(fa, fingerprint(b.view()));
        assert_ne!(fa, fingerprint(c.view()));
        assert_ne!(fa, fingerprint(swapped.view()));
    }
}
