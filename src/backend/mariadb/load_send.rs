//! Sending one chunk of train rows (`lo..hi`, ids are row numbers) with one [`LoadMethod`].
//! Vectors are MariaDB's `VECTOR` bytes: the f32 values little-endian, 4 bytes each.

use super::load_method::{LoadMethod, PREPARED_ROWS};
use super::sql_err;
use crate::{Error, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, LocalInfileHandler, Value};
use ndarray::ArrayView2;
use std::io::Write;
use std::sync::{Arc, Mutex};

const WHAT: &str = "loading rows into MariaDB";

/// Send rows `lo..hi` of `train` into `table` with `method` (the session's character set is
/// `binary`, see `load::load_rows_with`).
pub(super) fn send_chunk(
    conn: &mut Conn,
    table: &str,
    train: ArrayView2<'_, f32>,
    lo: usize,
    hi: usize,
    method: LoadMethod,
) -> Result<()> {
    match method {
        LoadMethod::Bulk => {
            let stmt = conn
                .prep(format!("INSERT INTO {table} (id, v) VALUES (?, ?)"))
                .map_err(|e| sql_err(e, WHAT))?;
            // exec_batch sends COM_STMT_BULK_EXECUTE, split at max_allowed_packet.
            conn.exec_batch(&stmt, (lo..hi).map(|i| (i as i64, row_bytes(train, i))))
                .map_err(|e| sql_err(e, WHAT))
        }
        LoadMethod::PreparedMultiRow => {
            for start in (lo..hi).step_by(PREPARED_ROWS) {
                let end = (start + PREPARED_ROWS).min(hi);
                let rows = vec!["(?, ?)"; end - start].join(",");
                // The driver caches the statement: one prepare per distinct row count.
                let stmt = conn
                    .prep(format!("INSERT INTO {table} (id, v) VALUES {rows}"))
                    .map_err(|e| sql_err(e, WHAT))?;
                let mut params = Vec::with_capacity(2 * (end - start));
                for i in start..end {
                    params.push(Value::Int(i as i64));
                    params.push(Value::Bytes(row_bytes(train, i)));
                }
                conn.exec_drop(&stmt, params)
                    .map_err(|e| sql_err(e, WHAT))?;
            }
            Ok(())
        }
        LoadMethod::InsertHex => {
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
            conn.query_drop(sql).map_err(|e| sql_err(e, WHAT))
        }
        LoadMethod::LoadDataBinary => load_data(conn, table, train, lo, hi),
        LoadMethod::InsertRowByRow => {
            let stmt = conn
                .prep(format!("INSERT INTO {table} (id, v) VALUES (?, ?)"))
                .map_err(|e| sql_err(e, WHAT))?;
            for i in lo..hi {
                conn.exec_drop(&stmt, (i as i64, row_bytes(train, i)))
                    .map_err(|e| sql_err(e, WHAT))?;
            }
            Ok(())
        }
    }
}

/// Row `i` as VECTOR bytes.
fn row_bytes(train: ArrayView2<'_, f32>, i: usize) -> Vec<u8> {
    let row = train.row(i);
    let mut b = vec![0u8; row.len() * 4];
    for (o, x) in b.chunks_exact_mut(4).zip(row.iter()) {
        o.copy_from_slice(&x.to_le_bytes());
    }
    b
}

/// `LOAD DATA LOCAL INFILE` of tab-separated `id\tvector` lines, the vector bytes escaped.
fn load_data(
    conn: &mut Conn,
    table: &str,
    train: ArrayView2<'_, f32>,
    lo: usize,
    hi: usize,
) -> Result<()> {
    let mut buf = Vec::with_capacity((hi - lo) * (train.ncols() * 5 + 12));
    for i in lo..hi {
        write!(buf, "{i}\t").map_err(|e| Error::Backend(e.to_string()))?;
        for x in train.row(i) {
            push_escaped(&mut buf, &x.to_le_bytes());
        }
        buf.push(b'\n');
    }
    let data = Arc::new(Mutex::new(Some(buf)));
    let slot = Arc::clone(&data);
    conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |_, w| {
        let chunk = slot.lock().ok().and_then(|mut s| s.take());
        w.write_all(chunk.as_deref().unwrap_or_default())
    })));
    let sql = format!(
        "LOAD DATA LOCAL INFILE 'annbench' INTO TABLE {table} CHARACTER SET binary \
         FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' (id, v)"
    );
    let r = conn.query_drop(sql).map_err(|e| sql_err(e, WHAT));
    conn.set_local_infile_handler(None);
    r?;
    check_warnings(conn, lo, hi)
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
        let m = ndarray::arr2(&[[1.0f32, -2.5], [0.0, 3.0]]);
        assert_eq!(
            row_bytes(m.view(), 0),
            [1.0f32.to_le_bytes(), (-2.5f32).to_le_bytes()].concat()
        );
    }
}
