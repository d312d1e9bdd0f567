//! Bulk loading the train vectors into a MariaDB table.
//!
//! The rows stream from memory: the train matrix is sent in chunks of about [`CHUNK_BYTES`] of
//! vector data, so memory stays bounded for any dataset size. With several connections each
//! takes the next free chunk. `examples/bench_mariadb_load.rs` measures every method against
//! mariadb-connector-python; [`LoadMethod::default`] is the fastest measured (figures in
//! `docs/bench-backends.md`). How one chunk is sent is in `load_send`, the methods are in
//! `load_method`.

use super::load_send::send_chunk;
pub use super::load_method::{LoadMethod, PREPARED_ROWS};
use super::sql_err;
use crate::backend::parallel::on_each_connection;
use super::server::connect as connect_mariadb;
use crate::connect::ServerUrl;
use crate::{Error, Result};
use mysql::Conn;
use mysql::prelude::Queryable;
use ndarray::ArrayView2;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Vector bytes per chunk. One chunk is one statement (one `COM_STMT_BULK_EXECUTE` packet,
/// one multi-row INSERT, one LOAD DATA), kept well under the default 16 MiB
/// `max_allowed_packet` even as hex text (2 characters per byte).
pub const CHUNK_BYTES: usize = 4 << 20;

/// Connections a MariaDB load uses unless told otherwise: one used less server CPU than two
/// at 60,000 x 784 and at 1,000,000 x 1,536, and loaded faster (docs/bench-backends.md).
pub const DEFAULT_CONNECTIONS: usize = 1;

/// Vector bytes per transaction on each connection.
pub const COMMIT_BYTES: usize = 256 << 20;

/// What a load did: its wall time and the method as it actually ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// From the first row sent to the last commit acknowledged (connections are opened
    /// before).
    pub seconds: f64,
    /// The method's label, with the number of connections when more than one.
    pub method: String,
}

/// Load all rows of `train` into `table` (already created, empty) with `connections`
/// connections.
pub fn load_rows(
    url: &ServerUrl,
    table: &str,
    train: ArrayView2<'_, f32>,
    method: LoadMethod,
    connections: usize,
) -> Result<Loaded> {
    load_rows_with(url, table, train, method, connections, &[])
}

/// [`load_rows`] with extra session statements run on each connection before the timer starts
/// (benchmarks measure e.g. `SET unique_checks = 0`; the default runs none, see
/// `docs/bench-backends.md`).
pub fn load_rows_with(
    url: &ServerUrl,
    table: &str,
    train: ArrayView2<'_, f32>,
    method: LoadMethod,
    connections: usize,
    session: &[&str],
) -> Result<Loaded> {
    let connections = connections.max(1);
    let chunk_rows = (CHUNK_BYTES / (train.ncols() * 4).max(1)).max(1);
    let n_chunks = train.nrows().div_ceil(chunk_rows);
    let mut conns = Vec::with_capacity(connections);
    for _ in 0..connections {
        let mut c = connect_mariadb(url)?;
        // Parameters of the prepared methods are sent as strings (the driver has no BLOB
        // type); in the binary character set the server stores their bytes as they are.
        // Without it a VECTOR column rejects them, and CAST(? AS BINARY) doubles the
        // server's CPU per row.
        c.query_drop("SET SESSION character_set_client = binary")
            .map_err(|e| sql_err(e, "preparing the load session"))?;
        for sql in session {
            c.query_drop(sql)
                .map_err(|e| sql_err(e, &format!("running `{sql}` before the load")))?;
        }
        let executes = stmt_executes(&mut c)?;
        conns.push((c, executes));
    }
    let next = AtomicUsize::new(0);
    let bulk_fallback = AtomicUsize::new(0);
    let start = Instant::now();
    // Connections take the next chunk until none is left, so a slow one does not hold the rest.
    on_each_connection(conns, |_, (mut conn, executes_before)| {
        // Transactions of up to COMMIT_BYTES: a commit waits for the redo log's fsync, which
        // on a busy disk costs more than the rows it commits (except for the naive baseline,
        // which commits every row like a naive client).
        let batched = method != LoadMethod::InsertRowByRow;
        let tx = |conn: &mut Conn, sql: &str| -> Result<()> {
            if batched {
                conn.query_drop(sql)
                    .map_err(|e| sql_err(e, "committing loaded rows"))?;
            }
            Ok(())
        };
        let (mut rows, mut uncommitted) = (0, 0);
        tx(&mut conn, "START TRANSACTION")?;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n_chunks {
                break;
            }
            let lo = i * chunk_rows;
            let hi = (lo + chunk_rows).min(train.nrows());
            send_chunk(&mut conn, table, train, lo, hi, method)?;
            rows += hi - lo;
            uncommitted += (hi - lo) * train.ncols() * 4;
            if uncommitted >= COMMIT_BYTES {
                tx(&mut conn, "COMMIT")?;
                tx(&mut conn, "START TRANSACTION")?;
                uncommitted = 0;
            }
        }
        tx(&mut conn, "COMMIT")?;
        if method == LoadMethod::Bulk && rows > 1 {
            // The driver silently executes row by row when the server does not offer the bulk
            // protocol (e.g. a proxy in between): then the label must say so.
            let executes = stmt_executes(&mut conn)? - executes_before;
            if executes >= rows as u64 {
                bulk_fallback.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let mut label = if bulk_fallback.load(Ordering::Relaxed) > 0 {
        "prepared INSERT per row (the server refused COM_STMT_BULK_EXECUTE)".to_string()
    } else {
        method.label().to_string()
    };
    if connections > 1 {
        label = format!("{label} x{connections} connections");
    }
    Ok(Loaded {
        seconds,
        method: label,
    })
}

/// MariaDB's data check ([`crate::backend::Algorithm::check_data`]): what every backend
/// checks, and the vector lengths MariaDB refuses, in train and test (a query vector of such
/// a length is refused as well).
pub fn check_data(
    spec: &crate::backend::TableSpec,
    train: ArrayView2<'_, f32>,
    test: ArrayView2<'_, f32>,
) -> Result<()> {
    crate::backend::table::check_data(spec, train, test)?;
    check_lengths_of("train", train, &spec.dataset)?;
    check_lengths_of("test", test, &spec.dataset)
}

/// MariaDB refuses a vector whose squared length overflows a float (>= f32::MAX, e.g. one
/// value of 2^64: "Incorrect vector value", measured on 11.8). Name the row before sending
/// anything.
pub fn check_lengths(train: ArrayView2<'_, f32>, dataset: &str) -> Result<()> {
    check_lengths_of("train", train, dataset)
}

fn check_lengths_of(what: &str, train: ArrayView2<'_, f32>, dataset: &str) -> Result<()> {
    let too_long = |row: &ndarray::ArrayView1<'_, f32>| {
        row.iter()
            .map(|&x| f64::from(x) * f64::from(x))
            .sum::<f64>()
            >= f64::from(f32::MAX)
    };
    let bad = train
        .outer_iter()
        .into_par_iter()
        .enumerate()
        .find_first(|(_, row)| too_long(row));
    match bad {
        None => Ok(()),
        Some((i, row)) => Err(Error::Dataset(format!(
            "dataset '{dataset}': {what} row {i} has a squared length of {:.3e}, beyond the \
             float range (3.4e38) that MariaDB accepts for a VECTOR; scale the vectors down \
             (nothing was sent to the server)",
            row.iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum::<f64>()
        ))),
    }
}

/// The session's count of executed prepared statements (a bulk execution counts once).
fn stmt_executes(conn: &mut Conn) -> Result<u64> {
    let row: Option<(String, u64)> = conn
        .query_first("SHOW SESSION STATUS LIKE 'Com_stmt_execute'")
        .map_err(|e| sql_err(e, "reading the session's statement count"))?;
    row.map(|(_, n)| n).ok_or_else(|| {
        Error::Backend("MariaDB did not report Com_stmt_execute in SHOW SESSION STATUS".into())
    })
}
