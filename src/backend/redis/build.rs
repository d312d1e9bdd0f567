//! Loading the rows and building the vector set.
//!
//! **Load vs build.** A vector set builds its HNSW graph as elements are added, so "loading
//! the vectors" and "building the index" are one command (`VADD`) in Redis. annbench keeps
//! the two figures apart the way the SQL backends have them:
//!
//! - **load** stores every train row once, as its FP32 bytes, in a plain hash
//!   `<prefix>:<table>:rows` (field = the train row id in decimal), with large `HSET`
//!   commands (about 4 MiB each). That is the "table": its seconds are the load seconds, its
//!   `MEMORY USAGE` the table size, and it is reused across runs when its metadata says it
//!   holds exactly these rows (fingerprint, rows, dimension) and it still has that many
//!   fields.
//! - **build** deletes the vector set key and inserts every stored row with the point's
//!   `M`, `ef_construction` (VADD's `EF`) and quantization, server-side: a small Lua script (`EVAL`) reads a batch of
//!   rows from the hash and `VADD`s each (`FP32` blob, element = the row id), so the build
//!   seconds are the insertions alone, without sending the vectors again over the network
//!   (the same work a client's `VADD` does once its bytes have arrived). Batches grow until
//!   one takes about a tenth of a second, so Ctrl-C and `--timeout` stop a build within a
//!   few tenths of a second: the key is then deleted and nothing is measured.
//!
//! Every build ends with `VINFO` (size, quantization and `M` must be what was asked) and a
//! build id written to the metadata hash; [`super::Redis`]'s `check_index` compares both
//! after every point.

use super::conn::query;
use super::{ALGORITHM, Built, Keys, Loaded, Redis};
use crate::backend::sql::watch::{Stop, Watched};
use crate::backend::{BuildReport, BuildWatch, Cancel, LoadReport, TableSpec};
use crate::connect::ServerUrl;
use crate::params::Params;
use crate::{Error, Result};
use ndarray::ArrayView2;
use redis::Connection;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Bytes of row data per `HSET` of the load.
const LOAD_BATCH_BYTES: usize = 4 << 20;

/// The build's batches grow (doubling from [`FIRST_BATCH`]) while one takes less than this.
const BATCH_TARGET: Duration = Duration::from_millis(100);
const FIRST_BATCH: usize = 32;
const MAX_BATCH: usize = 8192;

/// Redis' build exploration factor when a point sets no `ef_construction` (`VSET_DEFAULT_C_EF`).
pub const DEFAULT_BUILD_EF: i64 = 200;

/// Adds the rows `ARGV[1] .. ARGV[2]-1` of hash `KEYS[1]` to the vector set `KEYS[2]` with
/// quantization `ARGV[3]`, `EF ARGV[4]` and `M ARGV[5]`, and when `ARGV[6]` is `1` each
/// row's JSON attributes from hash `KEYS[3]` (`SETATTR`); returns how many were added (a row
/// missing from the hash is an error).
const BUILD_SCRIPT: &str = r#"
local added = 0
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) - 1 do
  local id = tostring(i)
  local blob = redis.call('HGET', KEYS[1], id)
  if not blob then
    return redis.error_reply('ERR annbench: row ' .. id .. ' is missing from ' .. KEYS[1])
  end
  local attrs = false
  if ARGV[6] == '1' then
    attrs = redis.call('HGET', KEYS[3], id)
  end
  if attrs then
    added = added + redis.call('VADD', KEYS[2], 'FP32', blob, id, ARGV[3], 'EF', ARGV[4], 'M', ARGV[5], 'SETATTR', attrs)
  else
    added = added + redis.call('VADD', KEYS[2], 'FP32', blob, id, ARGV[3], 'EF', ARGV[4], 'M', ARGV[5])
  end
end
return added
"#;

/// Run [`BUILD_SCRIPT`] for rows `from..to` (`EVAL`: the server caches the compiled script,
/// and the client needs no script support).
#[allow(clippy::too_many_arguments)]
pub fn eval_batch(
    conn: &mut Connection,
    url: &ServerUrl,
    rows: &str,
    vset: &str,
    attrs: Option<&str>,
    from: usize,
    to: usize,
    quant: &str,
    ef: i64,
    m: i64,
) -> Result<i64> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(BUILD_SCRIPT)
        .arg(3)
        .arg(rows)
        .arg(vset)
        .arg(attrs.unwrap_or(rows));
    cmd.arg(from).arg(to).arg(quant).arg(ef).arg(m);
    cmd.arg(if attrs.is_some() { "1" } else { "0" });
    query(
        conn,
        url,
        &cmd,
        "adding rows to the vector set (EVAL of the build script)",
    )
}

/// `VINFO key` as `field -> value` (empty when the key does not exist).
pub fn vinfo(
    conn: &mut Connection,
    url: &ServerUrl,
    key: &str,
) -> Result<BTreeMap<String, String>> {
    let v: redis::Value = query(conn, url, redis::cmd("VINFO").arg(key), "reading VINFO")?;
    let mut out = BTreeMap::new();
    let items = match v {
        redis::Value::Array(items) => items,
        redis::Value::Map(pairs) => pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        _ => Vec::new(),
    };
    for pair in items.chunks(2) {
        if let [k, v] = pair {
            let text = |x: &redis::Value| -> String {
                redis::from_redis_value_ref::<String>(x).unwrap_or_default()
            };
            out.insert(text(k), text(v));
        }
    }
    Ok(out)
}

/// `MEMORY USAGE key SAMPLES 0` (every element counted), 0 when the key does not exist.
pub fn memory_usage(conn: &mut Connection, url: &ServerUrl, key: &str) -> Result<u64> {
    let n: Option<u64> = query(
        conn,
        url,
        redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(key)
            .arg("SAMPLES")
            .arg(0),
        "reading MEMORY USAGE",
    )?;
    Ok(n.unwrap_or(0))
}

/// The server's name of a quantization in VINFO's `quant-type`.
pub fn quant_type(quantization: &str) -> &'static str {
    match quantization {
        "NOQUANT" => "f32",
        "BIN" => "bin",
        _ => "int8",
    }
}

/// The load's metadata, in the hash `<prefix>:<table>:meta`.
fn table_meta(spec: &TableSpec, rows: usize, fingerprint: &str) -> [(&'static str, String); 4] {
    [
        ("dataset", spec.dataset.clone()),
        ("rows", rows.to_string()),
        ("dimension", spec.dimension.to_string()),
        ("fingerprint", fingerprint.to_string()),
    ]
}

/// Reuse the rows hash when it holds exactly `train`, else store it afresh (see the module
/// docs). The metadata is written only after every row is in, so a load that died half-way
/// is never reused.
pub(super) fn load(
    b: &mut Redis,
    spec: &TableSpec,
    train: ArrayView2<'_, f32>,
    fingerprint: &str,
) -> Result<LoadReport> {
    let keys = b.keys(&spec.dataset)?;
    let rows = train.nrows();
    let want = table_meta(spec, rows, fingerprint);
    let url = b.url.clone();
    let have: BTreeMap<String, String> = query(
        &mut b.conn,
        &url,
        redis::cmd("HGETALL").arg(&keys.meta),
        "reading the table's metadata",
    )?;
    let same = want.iter().all(|(k, v)| have.get(*k) == Some(v));
    if same && have.contains_key("load_seconds") {
        let n: u64 = query(
            &mut b.conn,
            &url,
            redis::cmd("HLEN").arg(&keys.rows),
            "counting the stored rows",
        )?;
        if n == rows as u64 {
            return Ok(LoadReport {
                seconds: have["load_seconds"].parse().unwrap_or(0.0),
                rows,
                reused: true,
                table_size_bytes: Some(memory_usage(&mut b.conn, &url, &keys.rows)?),
                method: have.get("method").cloned().unwrap_or_default(),
            });
        }
    }
    let _: i64 = query(
        &mut b.conn,
        &url,
        redis::cmd("DEL")
            .arg(&keys.meta)
            .arg(&keys.vset)
            .arg(&keys.rows)
            .arg(&keys.attrs),
        "removing the old rows, attributes and vector set",
    )?;
    let d = spec.dimension;
    let per_cmd = (LOAD_BATCH_BYTES / (4 * d)).clamp(1, 10_000);
    let t0 = Instant::now();
    let mut blob = Vec::with_capacity(4 * d);
    let mut start = 0;
    while start < rows {
        let end = (start + per_cmd).min(rows);
        let mut cmd = redis::cmd("HSET");
        cmd.arg(&keys.rows);
        for i in start..end {
            blob.clear();
            blob.extend(train.row(i).iter().flat_map(|x| x.to_le_bytes()));
            cmd.arg(i.to_string()).arg(blob.as_slice());
        }
        let _: i64 = query(&mut b.conn, &url, &cmd, "loading the rows (HSET)")?;
        start = end;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let n: u64 = query(
        &mut b.conn,
        &url,
        redis::cmd("HLEN").arg(&keys.rows),
        "counting the stored rows",
    )?;
    if n != rows as u64 {
        return Err(Error::Backend(format!(
            "redis: {} holds {n} rows after the load; expected {rows}",
            keys.rows
        )));
    }
    let method = format!("HSET of FP32 blobs into a hash, {per_cmd} rows per command");
    let mut cmd = redis::cmd("HSET");
    cmd.arg(&keys.meta);
    for (k, v) in &want {
        cmd.arg(*k).arg(v);
    }
    cmd.arg("load_seconds")
        .arg(seconds.to_string())
        .arg("method")
        .arg(&method);
    let _: i64 = query(&mut b.conn, &url, &cmd, "recording the table's metadata")?;
    Ok(LoadReport {
        seconds,
        rows,
        reused: false,
        table_size_bytes: Some(memory_usage(&mut b.conn, &url, &keys.rows)?),
        method,
    })
}

/// A build id: this process, the time and a per-process counter.
fn new_build_id() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() % 1_000_000_000_000)
        .unwrap_or(0);
    format!(
        "{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Forget the recorded build and delete the vector set.
pub(super) fn drop_vset(b: &mut Redis, keys: &Keys) -> Result<()> {
    b.built = None;
    let url = b.url.clone();
    let _: i64 = query(
        &mut b.conn,
        &url,
        redis::cmd("HDEL")
            .arg(&keys.meta)
            .arg("build_id")
            .arg("build_args")
            .arg("vset_uid"),
        "clearing the recorded build",
    )?;
    let _: i64 = query(
        &mut b.conn,
        &url,
        redis::cmd("DEL").arg(&keys.vset),
        "deleting the vector set",
    )?;
    Ok(())
}

/// Delete the vector set and add every stored row with `params` (see the module docs).
pub(super) fn build(
    b: &mut Redis,
    params: &Params,
    cancel: &Cancel<'_>,
    progress: &BuildWatch,
) -> Result<BuildReport> {
    let l: Loaded = b.loaded()?.clone();
    let args = ALGORITHM.build_args(params, l.rows)?;
    let m = args.required_int("M")?;
    let ef = args.int("ef_construction").unwrap_or(DEFAULT_BUILD_EF);
    let quant = args
        .text("quantization")
        .ok_or_else(|| Error::Config(format!("redis build args {params:?} lack quantization")))?
        .to_string();
    let keys = b.keys(&l.spec.dataset)?;
    drop_vset(b, &keys)?;
    let url = b.url.clone();
    let timeout = b.build_timeout;
    let t0 = Instant::now();
    let mut stop = None;
    let mut result: Result<()> = Ok(());
    let (mut done, mut batch) = (0usize, FIRST_BATCH);
    while done < l.rows {
        if cancel() {
            stop = Some(Stop::Cancelled);
            break;
        }
        if timeout.is_some_and(|t| t0.elapsed() >= t) {
            stop = Some(Stop::TimedOut);
            break;
        }
        let end = (done + batch).min(l.rows);
        let started = Instant::now();
        let attrs = l.attrs.is_some().then_some(keys.attrs.as_str());
        match eval_batch(
            &mut b.conn,
            &url,
            &keys.rows,
            &keys.vset,
            attrs,
            done,
            end,
            &quant,
            ef,
            m,
        ) {
            Ok(n) if n == (end - done) as i64 => {}
            Ok(n) => {
                result = Err(Error::Backend(format!(
                    "redis: the build added {n} of rows {done}..{end} to {}: the vector set \
                     already held some of them (another session is writing to it)",
                    keys.vset
                )));
                break;
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
        done = end;
        if started.elapsed() < BATCH_TARGET {
            batch = (batch * 2).min(MAX_BATCH);
        }
        progress.set(
            "adding elements (VADD)",
            crate::backend::watch::percent(done as i64, l.rows as i64),
        );
    }
    let w = Watched {
        result,
        seconds: t0.elapsed().as_secs_f64(),
        stop,
        phases: Vec::new(),
    };
    let seconds = w.seconds;
    let mut keys_for_recover = Some(keys.clone());
    w.finish(
        ALGORITHM.name,
        params,
        timeout,
        |e| e,
        || {
            let k = keys_for_recover.take().expect("recover runs once");
            drop_vset(b, &k)
        },
    )?;
    let info = vinfo(&mut b.conn, &url, &keys.vset)?;
    let size: u64 = info.get("size").and_then(|s| s.parse().ok()).unwrap_or(0);
    let qt = info.get("quant-type").cloned().unwrap_or_default();
    let hm: i64 = info.get("hnsw-m").and_then(|s| s.parse().ok()).unwrap_or(0);
    if size != l.rows as u64 || qt != quant_type(&quant) || hm != m {
        return Err(Error::Backend(format!(
            "redis: after the build VINFO {} reports size {size}, quant-type {qt}, hnsw-m \
             {hm}; expected {}, {}, {m}",
            keys.vset,
            l.rows,
            quant_type(&quant)
        )));
    }
    let uid = info.get("vset-uid").cloned().unwrap_or_default();
    let index_size_bytes = memory_usage(&mut b.conn, &url, &keys.vset)?;
    let id = new_build_id();
    let described = crate::params::describe(&args_params(m, ef, &quant));
    let _: i64 = query(
        &mut b.conn,
        &url,
        redis::cmd("HSET")
            .arg(&keys.meta)
            .arg("build_id")
            .arg(&id)
            .arg("build_args")
            .arg(&described)
            .arg("vset_uid")
            .arg(&uid),
        "recording the build id",
    )?;
    b.built = Some(Built {
        id,
        uid,
        m,
        ef,
        quant: quant.clone(),
        with_attrs: l.attrs.is_some(),
    });
    Ok(BuildReport {
        seconds,
        index_size_bytes,
        phases: Vec::new(),
        notices: Vec::new(),
    })
}

/// The build's arguments as stored with the build id.
fn args_params(m: i64, ef: i64, quant: &str) -> Params {
    let mut p = Params::new();
    p.insert("M".into(), m.into());
    p.insert("ef_construction".into(), ef.into());
    p.insert("quantization".into(), quant.into());
    p
}
