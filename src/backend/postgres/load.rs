//! Bulk loading the train vectors into a PostgreSQL table with binary COPY (or, as a
//! benchmark baseline only, one INSERT per row). With several connections each copies one
//! contiguous slice of rows.

use super::errors::pg_err;
use super::search::VecParam;
use super::server::connect;
use crate::backend::parallel::on_each_connection;
use crate::connect::ServerUrl;
use crate::{Error, Result};
use ndarray::ArrayView2;
use postgres::Client;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use std::time::Instant;

/// Connections a load uses unless told otherwise: 2 loaded faster than 1 in
/// `docs/bench-backends.md`.
pub const DEFAULT_CONNECTIONS: usize = 2;

/// How rows are sent to PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadMethod {
    /// `COPY ... FROM STDIN WITH (FORMAT BINARY)`.
    #[default]
    CopyBinary,
    /// One prepared `INSERT` per row, autocommit: the naive baseline for benchmarks.
    InsertRowByRow,
}

impl LoadMethod {
    /// The method's name, recorded in the load report and metadata.
    pub fn label(self) -> &'static str {
        match self {
            LoadMethod::CopyBinary => "COPY BINARY",
            LoadMethod::InsertRowByRow => "row-by-row prepared INSERT",
        }
    }
}

/// Load all rows of `train` into `table` (created, empty, committed) with `connections`
/// connections. Returns the wall seconds of the row transfer.
pub fn load_rows(
    url: &ServerUrl,
    table: &str,
    train: ArrayView2<'_, f32>,
    method: LoadMethod,
    connections: usize,
) -> Result<f64> {
    let n = connections.max(1).min(train.nrows());
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = connect(url)?;
        // Each slice commits on its own; no need to wait for the WAL flush per statement.
        c.batch_execute("SET synchronous_commit = off")
            .map_err(|e| pg_err(e, "preparing the load session"))?;
        clients.push(c);
    }
    let per = train.nrows().div_ceil(n);
    let start = Instant::now();
    on_each_connection(clients, |i, mut c| {
        let lo = (i * per).min(train.nrows());
        let hi = ((i + 1) * per).min(train.nrows());
        load_slice(&mut c, table, train, lo, hi, method)
    })?;
    Ok(start.elapsed().as_secs_f64())
}

fn load_slice(
    c: &mut Client,
    table: &str,
    train: ArrayView2<'_, f32>,
    lo: usize,
    hi: usize,
    method: LoadMethod,
) -> Result<()> {
    let what = "loading rows into PostgreSQL";
    let row = |i: usize| -> Vec<f32> { train.row(i).to_vec() };
    match method {
        LoadMethod::CopyBinary => {
            let vtype = column_type(c, table)?;
            let w = c
                .copy_in(&format!(
                    "COPY {table} (id, v) FROM STDIN WITH (FORMAT BINARY)"
                ))
                .map_err(|e| pg_err(e, what))?;
            let mut w = BinaryCopyInWriter::new(w, &[Type::INT4, vtype]);
            for i in lo..hi {
                let id = i32::try_from(i).map_err(|_| too_many(i))?;
                match train.row(i).as_slice() {
                    Some(v) => w.write(&[&id, &VecParam(v)]),
                    None => w.write(&[&id, &VecParam(&row(i))]),
                }
                .map_err(|e| pg_err(e, what))?;
            }
            let n = w.finish().map_err(|e| pg_err(e, what))?;
            if n != (hi - lo) as u64 {
                return Err(Error::Backend(format!(
                    "PostgreSQL copied {n} rows of rows {lo}..{hi}; expected {}",
                    hi - lo
                )));
            }
        }
        LoadMethod::InsertRowByRow => {
            let stmt = c
                .prepare(&format!("INSERT INTO {table} (id, v) VALUES ($1, $2)"))
                .map_err(|e| pg_err(e, what))?;
            for i in lo..hi {
                let id = i32::try_from(i).map_err(|_| too_many(i))?;
                let v = row(i);
                c.execute(&stmt, &[&id, &VecParam(&v)])
                    .map_err(|e| pg_err(e, what))?;
            }
        }
    }
    Ok(())
}

/// The server's `vector` type (an extension type: its OID differs per database).
/// The type of the table's `v` column (`vector` or `halfvec`), as the server infers it for an
/// INSERT: binary COPY needs it, and [`VecParam`] encodes f32 or f16 by it.
pub(super) fn column_type(c: &mut Client, table: &str) -> Result<Type> {
    let stmt = c
        .prepare(&format!("INSERT INTO {table} (id, v) VALUES ($1, $2)"))
        .map_err(|e| pg_err(e, "looking up the vector column type"))?;
    Ok(stmt.params()[1].clone())
}

fn too_many(i: usize) -> Error {
    Error::Dataset(format!(
        "train row {i} does not fit the int4 id column (at most {} rows)",
        i32::MAX
    ))
}
