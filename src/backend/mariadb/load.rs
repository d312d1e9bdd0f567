//! Bulk loading the train vectors into a MariaDB table.
//!
//! The rows stream from memory: the train matrix is encoded in chunks of about
//! [`CHUNK_BYTES`], each sent by one statement, so memory stays bounded for any dataset size.
//! With several connections each takes the next free chunk. `benches`/`examples` compare the
//! methods; [`LoadMethod::default`] is the fastest measured (see `docs/bench-backends.md`).

use super::sql_err;
use crate::backend::parallel::on_each_connection;
use super::server::connect as connect_mariadb;
use crate::connect::ServerUrl;
use crate::{Error, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, LocalInfileHandler};
use ndarray::ArrayView2;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Target size of one encoded chunk (one statement).
const CHUNK_BYTES: usize = 16 << 20;
/// Multi-row INSERT statements stay well under the default 16 MiB max_allowed_packet.
const INSERT_BYTES: usize = 4 << 20;

/// How rows are sent to MariaDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadMethod {
    /// `LOAD DATA LOCAL INFILE`, raw little-endian f32 bytes, backslash-escaped.
    LoadDataBinary,
    /// `LOAD DATA LOCAL INFILE`, hex text decoded by `UNHEX()` on the server.
    LoadDataHex,
    /// Multi-row `INSERT ... VALUES (id, X'..'), ...` text statements of ~4 MiB: the fastest
    /// measured on MariaDB 11.8 (about 2x LOAD DATA LOCAL INFILE through the Rust driver,
    /// whose local-infile stream is sent in 4 KiB packets), so the default.
    #[default]
    InsertMultiRow,
    /// One prepared `INSERT ... VALUES (?, CAST(? AS BINARY))` per row, autocommit: the naive
    /// baseline, for benchmarks only.
    InsertRowByRow,
}

impl LoadMethod {
    /// The method's name, recorded in the load report and metadata.
    pub fn label(self) -> &'static str {
        match self {
            LoadMethod::LoadDataBinary => "LOAD DATA LOCAL INFILE (binary)",
            LoadMethod::LoadDataHex => "LOAD DATA LOCAL INFILE (hex)",
            LoadMethod::InsertMultiRow => "multi-row INSERT (hex literals)",
            LoadMethod::InsertRowByRow => "row-by-row prepared INSERT",
        }
    }
}

/// Load all rows of `train` into `table` (already created, empty) with `connections`
/// connections. Returns the wall seconds of the load.
pub fn load_rows(
    url: &ServerUrl,
    table: &str,
    train: ArrayView2<'_, f32>,
    method: LoadMethod,
    connections: usize,
) -> Result<f64> {
    let row_bytes = train.ncols() * 4 * 2 + 16;
    let budget = if method == LoadMethod::InsertMultiRow {
        INSERT_BYTES
    } else {
        CHUNK_BYTES
    };
    let chunk_rows = (budget / row_bytes).max(1);
    let n_chunks = train.nrows().div_ceil(chunk_rows);
    let next = AtomicUsize::new(0);
    let mut conns = Vec::with_capacity(connections.max(1));
    for _ in 0..connections.max(1) {
        let mut c = connect_mariadb(url)?;
        c.query_drop("SET SESSION unique_checks = 0, foreign_key_checks = 0")
            .map_err(|e| sql_err(e, "preparing the load session"))?;
        conns.push(c);
    }
    let start = Instant::now();
    // Connections take the next chunk until none is left, so a slow one does not hold the rest.
    on_each_connection(conns, |_, mut conn| {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n_chunks {
                return Ok(());
            }
            let lo = i * chunk_rows;
            let hi = (lo + chunk_rows).min(train.nrows());
            load_chunk(&mut conn, table, train, lo, hi, method)?;
        }
    })?;
    Ok(start.elapsed().as_secs_f64())
}

fn load_chunk(
    conn: &mut Conn,
    table: &str,
    train: ArrayView2<'_, f32>,
    lo: usize,
    hi: usize,
    method: LoadMethod,
) -> Result<()> {
    let what = "loading rows into MariaDB";
    match method {
        LoadMethod::LoadDataBinary | LoadMethod::LoadDataHex => {
            let mut buf = Vec::with_capacity((hi - lo) * (train.ncols() * 9 + 12));
            for i in lo..hi {
                write!(buf, "{i}\t").map_err(|e| Error::Backend(e.to_string()))?;
                for x in train.row(i) {
                    let b = x.to_le_bytes();
                    if method == LoadMethod::LoadDataHex {
                        push_hex(&mut buf, &b);
                    } else {
                        push_escaped(&mut buf, &b);
                    }
                }
                buf.push(b'\n');
            }
            let data = Arc::new(Mutex::new(Some(buf)));
            let slot = Arc::clone(&data);
            conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |_, w| {
                let chunk = slot.lock().ok().and_then(|mut s| s.take());
                w.write_all(chunk.as_deref().unwrap_or_default())
            })));
            let columns = if method == LoadMethod::LoadDataHex {
                "(id, @h) SET v = UNHEX(@h)"
            } else {
                "(id, v)"
            };
            let escape = if method == LoadMethod::LoadDataHex {
                "''"
            } else {
                "'\\\\'"
            };
            let sql = format!(
                "LOAD DATA LOCAL INFILE 'annbench' INTO TABLE {table} CHARACTER SET binary \
                 FIELDS TERMINATED BY '\\t' ESCAPED BY {escape} LINES TERMINATED BY '\\n' {columns}"
            );
            let r = conn.query_drop(sql).map_err(|e| sql_err(e, what));
            conn.set_local_infile_handler(None);
            r?;
            check_warnings(conn, lo, hi)
        }
        LoadMethod::InsertMultiRow => {
            let mut sql = format!("INSERT INTO {table} (id, v) VALUES ").into_bytes();
            for i in lo..hi {
                if i > lo {
                    sql.push(b',');
                }
                write!(sql, "({i},X'").map_err(|e| Error::Backend(e.to_string()))?;
                for x in train.row(i) {
                    push_hex(&mut sql, &x.to_le_bytes());
                }
                sql.extend_from_slice(b"')");
            }
            let sql = String::from_utf8(sql).map_err(|e| Error::Backend(e.to_string()))?;
            conn.query_drop(sql).map_err(|e| sql_err(e, what))
        }
        LoadMethod::InsertRowByRow => {
            let stmt = conn
                .prep(format!(
                    "INSERT INTO {table} (id, v) VALUES (?, CAST(? AS BINARY))"
                ))
                .map_err(|e| sql_err(e, what))?;
            for i in lo..hi {
                let bytes: Vec<u8> = train.row(i).iter().flat_map(|x| x.to_le_bytes()).collect();
                conn.exec_drop(&stmt, (i as i64, bytes))
                    .map_err(|e| sql_err(e, what))?;
            }
            Ok(())
        }
    }
}

/// LOAD DATA turns bad values into warnings, not errors; any warning means lost data.
fn check_warnings(conn: &mut Conn, lo: usize, hi: usize) -> Result<()> {
    let loaded = conn.affected_rows();
    if conn.warnings() == 0 {
        if loaded != (hi - lo) as u64 {
            return Err(Error::Backend(format!(
                "MariaDB loaded {loaded} rows of rows {lo}..{hi}; expected {}",
                hi - lo
            )));
        }
        return Ok(());
    }
    let shown: Vec<(String, u32, String)> = conn
        .query("SHOW WARNINGS LIMIT 3")
        .map_err(|e| sql_err(e, "reading load warnings"))?;
    let text: Vec<String> = shown
        .into_iter()
        .map(|(_, c, m)| format!("{c}: {m}"))
        .collect();
    Err(Error::Backend(format!(
        "MariaDB reported warnings loading rows {lo}..{hi}: {}",
        text.join("; ")
    )))
}

fn push_hex(buf: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in bytes {
        buf.push(HEX[usize::from(b >> 4)]);
        buf.push(HEX[usize::from(b & 15)]);
    }
}

/// Escape the bytes LOAD DATA treats specially with `ESCAPED BY '\\'`: the escape character,
/// the field and line terminators, and NUL (which `\0` restores).
fn push_escaped(buf: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            0 => buf.extend_from_slice(b"\\0"),
            _ => buf.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings() {
        let mut b = Vec::new();
        push_hex(&mut b, &1.0f32.to_le_bytes());
        assert_eq!(b, b"0000803F");
        let mut e = Vec::new();
        push_escaped(&mut e, &[b'a', b'\\', b'\t', b'\n', 0, 9]);
        assert_eq!(e, b"a\\\\\\t\\n\\0\\t");
    }
}
