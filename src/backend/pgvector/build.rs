//! pgvector index build (with phases from `pg_stat_progress_create_index` and the server's
//! notices), its size, the plan check and server settings.

use super::search::{VecParam, query_args_sql, query_sql};
use super::{PgVector, Variant, pg_err};
use crate::backend::watch::percent;
use crate::backend::{BuildPhase, BuildReport, BuildWatch, Cancel, ServerInfo};
use crate::params::Params;
use crate::{Error, Metric, Result};
use postgres::Client;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Settings recorded with every result.
const SETTINGS: &[&str] = &[
    "shared_buffers",
    "maintenance_work_mem",
    "max_parallel_maintenance_workers",
    "work_mem",
    "effective_cache_size",
    "max_parallel_workers_per_gather",
    "jit",
    "hnsw.ef_search",
    "hnsw.iterative_scan",
];

/// How often the progress of a build is sampled.
const POLL: Duration = Duration::from_millis(20);

/// Validated build arguments.
#[derive(Debug, PartialEq)]
pub(super) struct BuildArgs {
    pub m: i64,
    pub ef_construction: i64,
    pub maintenance_work_mem: Option<String>,
}

/// Parse `M` (2..=100), `ef_construction` (>= 2*M, <= 1000) and optionally
/// `maintenance_work_mem` (e.g. `"4GB"`, applied to the build session only).
pub(super) fn parse_build_args(args: &Params) -> Result<BuildArgs> {
    let int = |key: &str, range: std::ops::RangeInclusive<i64>| -> Result<Option<i64>> {
        args.get(key)
            .map(|v| {
                v.as_i64().filter(|n| range.contains(n)).ok_or_else(|| {
                    Error::Config(format!(
                        "pgvector build arg {key}={v}: expected an integer in {range:?}"
                    ))
                })
            })
            .transpose()
    };
    for key in args.keys() {
        if !matches!(
            key.as_str(),
            "M" | "m" | "ef_construction" | "maintenance_work_mem"
        ) {
            return Err(Error::Config(format!(
                "pgvector has no build arg '{key}': use M, ef_construction and optionally \
                 maintenance_work_mem"
            )));
        }
    }
    let m = int("M", 2..=100)?.or(int("m", 2..=100)?);
    let m = m.ok_or_else(|| Error::Config("pgvector build args need M (2..=100)".into()))?;
    let ef = int("ef_construction", 4..=1000)?.ok_or_else(|| {
        Error::Config("pgvector build args need ef_construction (>= 2*M, <= 1000)".into())
    })?;
    if ef < 2 * m {
        return Err(Error::Config(format!(
            "pgvector build point M={m}, ef_construction={ef}: ef_construction must be at \
             least 2*M = {}",
            2 * m
        )));
    }
    let mwm = match args.get("maintenance_work_mem") {
        None => None,
        Some(v) => {
            let s = v.as_str().unwrap_or_default();
            let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let unit = &s[digits.len()..];
            let ok = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && matches!(unit, "kB" | "MB" | "GB" | "TB");
            if !ok {
                return Err(Error::Config(format!(
                    "pgvector build arg maintenance_work_mem={v}: expected e.g. \"512MB\" or \
                     \"4GB\""
                )));
            }
            Some(s.to_string())
        }
    };
    Ok(BuildArgs {
        m,
        ef_construction: ef,
        maintenance_work_mem: mwm,
    })
}

pub(super) fn server_info(c: &mut Client) -> Result<ServerInfo> {
    let row = c
        .query_one(
            "SELECT current_setting('server_version'), \
             (SELECT extversion FROM pg_extension WHERE extname = 'vector')",
            &[],
        )
        .map_err(|e| pg_err(e, "reading the server version"))?;
    let (pg, ext): (String, Option<String>) = (row.get(0), row.get(1));
    let names: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
    let rows = c
        .query(
            "SELECT n, coalesce(current_setting(n, true), '') FROM unnest($1::text[]) AS n",
            &[&names],
        )
        .map_err(|e| pg_err(e, "reading server settings"))?;
    Ok(ServerInfo {
        version: format!(
            "PostgreSQL {pg}, pgvector {}",
            ext.unwrap_or_else(|| "?".into())
        ),
        settings: rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
    })
}

fn opclass(variant: Variant, metric: Metric, d: usize) -> String {
    let m = match metric {
        Metric::Euclidean => "l2",
        Metric::Angular => "cosine",
    };
    match variant {
        Variant::Vector => format!("v vector_{m}_ops"),
        Variant::HalfvecIndex => format!("(v::halfvec({d})) halfvec_{m}_ops"),
        Variant::HalfvecColumn => format!("v halfvec_{m}_ops"),
    }
}

pub(super) fn build(
    b: &mut PgVector,
    args: &Params,
    cancel: &Cancel<'_>,
    watch: &BuildWatch,
) -> Result<BuildReport> {
    let args = parse_build_args(args)?;
    let l = b.loaded()?.clone();
    let d = l.spec.dimension;
    let max_d = match b.variant {
        Variant::Vector => 2000,
        Variant::HalfvecIndex | Variant::HalfvecColumn => 4000,
    };
    if d > max_d {
        return Err(Error::Config(format!(
            "{}: pgvector's HNSW index supports at most {max_d} dimensions; this dataset has \
             {d} (use pgvector_halfvec for up to 4000)",
            b.variant.algorithm()
        )));
    }
    b.exec(
        &format!("DROP INDEX IF EXISTS {}.{}", b.schema, l.index),
        "dropping the previous HNSW index",
    )?;
    match &args.maintenance_work_mem {
        Some(m) => b.exec(
            &format!("SET maintenance_work_mem = '{m}'"),
            "setting memory",
        )?,
        None => b.exec("RESET maintenance_work_mem", "resetting memory")?,
    }
    let pid: i32 = b
        .client
        .query_one("SELECT pg_backend_pid()", &[])
        .map_err(|e| pg_err(e, "reading the backend pid"))?
        .get(0);
    let mut watcher = crate::connect::connect_postgres(&b.url)?;
    // Set last so that the timeout bounds CREATE INDEX alone, never the set-up queries above.
    match b.build_timeout {
        Some(t) => b.exec(
            &format!("SET statement_timeout = {}", t.as_millis().max(1)),
            "setting the build timeout",
        )?,
        None => b.exec("RESET statement_timeout", "resetting the build timeout")?,
    }
    b.drain_notices();
    let sql = format!(
        "CREATE INDEX {} ON {} USING hnsw ({}) WITH (m = {}, ef_construction = {})",
        l.index,
        l.table,
        opclass(b.variant, l.spec.metric, d),
        args.m,
        args.ef_construction
    );
    let done = AtomicBool::new(false);
    let (result, seconds, samples) = std::thread::scope(|s| {
        let poller = s.spawn(|| poll_phases(&mut watcher, pid, &done, cancel, watch));
        let t0 = Instant::now();
        let r = b.client.batch_execute(&sql);
        let seconds = t0.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let (samples, stopped) = poller.join().unwrap_or_default();
        (r, seconds, (t0, samples, stopped))
    });
    let notices = b.drain_notices();
    if b.build_timeout.is_some() {
        // Reset on every outcome but a lost connection, whose own error is the one to report.
        let reset = b.exec("RESET statement_timeout", "resetting the build timeout");
        if result.is_ok() {
            reset?;
        }
    }
    if samples.2 && result.is_err() {
        return Err(Error::Interrupted);
    }
    // An error that arrives once the limit has passed is the timeout, whatever its wording.
    let timed_out = result.as_ref().err().is_some_and(|e| {
        let server_said = e.as_db_error().map(|db| db.code().code());
        server_said == Some("57014")
            || (server_said.is_some_and(|c| !c.starts_with("57P"))
                && b.build_timeout.is_some_and(|t| seconds >= t.as_secs_f64()))
    });
    if let (true, Some(t)) = (timed_out, b.build_timeout) {
        return Err(Error::Backend(format!(
            "{}: the index build (M={}, ef_construction={}) took longer than the build timeout \
             of {:?} and was cancelled; raise --timeout or choose smaller parameters",
            b.variant.algorithm(),
            args.m,
            args.ef_construction,
            t
        )));
    }
    result.map_err(|e| pg_err(e, "building the HNSW index"))?;
    let size: i64 = b
        .client
        .query_one(
            &format!("SELECT pg_relation_size('{}.{}')", b.schema, l.index),
            &[],
        )
        .map_err(|e| pg_err(e, "reading the index size"))?
        .get(0);
    Ok(BuildReport {
        seconds,
        index_size_bytes: size as u64,
        phases: phases(samples.0, &samples.1, seconds),
        notices,
    })
}

/// Sample the build's phase and progress until `done`; returns (first time seen, phase) per
/// change, and whether the build was cancelled: once `cancel` is true, `pg_cancel_backend` is
/// sent on each poll until the statement returns (one sent before the statement started does
/// nothing). Progress goes to `watch`: tuples done out of the total where the server knows the
/// total, else heap blocks scanned out of the table's (pgvector inserts each row into the graph
/// as the scan reads it, so the scan's progress is the build's).
fn poll_phases(
    c: &mut Client,
    pid: i32,
    done: &AtomicBool,
    cancel: &Cancel<'_>,
    watch: &BuildWatch,
) -> (Vec<(Instant, String)>, bool) {
    let mut seen: Vec<(Instant, String)> = Vec::new();
    let mut stopped = false;
    let Ok(stmt) = c.prepare(
        "SELECT phase, blocks_total, blocks_done, tuples_total, tuples_done \
         FROM pg_stat_progress_create_index WHERE pid = $1",
    ) else {
        return (seen, stopped);
    };
    while !done.load(Ordering::Relaxed) {
        if cancel() {
            stopped |= c.execute("SELECT pg_cancel_backend($1)", &[&pid]).is_ok();
        }
        if let Ok(Some(row)) = c.query_opt(&stmt, &[&pid]) {
            let phase: String = row.get(0);
            let n = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0);
            let pct = percent(n(4), n(3)).or_else(|| percent(n(2), n(1)));
            watch.set(&phase, pct);
            if seen.last().is_none_or(|(_, p)| *p != phase) {
                seen.push((Instant::now(), phase));
            }
        }
        std::thread::sleep(POLL);
    }
    (seen, stopped)
}

/// Durations of the sampled phases: each lasts until the next one is first seen, the last
/// until the statement ended (`total` seconds after `start`). Time before the first sample
/// is added to the first phase. Phases shorter than the sampling period may be missed.
fn phases(start: Instant, seen: &[(Instant, String)], total: f64) -> Vec<BuildPhase> {
    let mut out = Vec::new();
    for (i, (at, name)) in seen.iter().enumerate() {
        let from = if i == 0 {
            0.0
        } else {
            at.duration_since(start).as_secs_f64()
        };
        let to = seen
            .get(i + 1)
            .map_or(total, |(next, _)| next.duration_since(start).as_secs_f64());
        out.push(BuildPhase {
            name: name.clone(),
            seconds: (to - from).max(0.0),
        });
    }
    out
}

pub(super) fn verify_index_used(
    b: &mut PgVector,
    query: &[f32],
    k: usize,
    query_args: &Params,
) -> Result<()> {
    let l = b.loaded()?.clone();
    let set = query_args_sql(query_args)?;
    if !set.is_empty() {
        b.exec(&set, "setting query args")?;
    }
    let q = query_sql(&l.table, b.variant, l.spec.metric, l.spec.dimension, k);
    let sql = format!("EXPLAIN {q}");
    let rows = b
        .client
        .query(&sql, &[&VecParam(query)])
        .map_err(|e| pg_err(e, "running EXPLAIN"))?;
    let plan: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0)).collect();
    let wanted = format!("Index Scan using {} ", l.index);
    if !plan.iter().any(|line| line.contains(&wanted)) {
        return Err(Error::Backend(format!(
            "{}: the query does not use the HNSW index {} (it would be an exact scan); plan: \
             {}; query: {q}",
            b.variant.algorithm(),
            l.index,
            plan.iter()
                .map(|s| s.trim())
                .collect::<Vec<_>>()
                .join(" | ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: serde_json::Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn build_args() {
        let a = parse_build_args(&p(json!({"M": 16, "ef_construction": 64}))).unwrap();
        assert_eq!(
            (a.m, a.ef_construction, a.maintenance_work_mem),
            (16, 64, None)
        );
        let e = parse_build_args(&p(json!({"M": 16, "ef_construction": 31}))).unwrap_err();
        assert!(e.to_string().contains("at least 2*M = 32"), "{e}");
        for bad in [
            json!({"M": 1, "ef_construction": 64}),
            json!({"M": 101, "ef_construction": 400}),
            json!({"ef_construction": 64}),
            json!({"M": 8}),
            json!({"M": 8, "ef_construction": 64, "maintenance_work_mem": "1 GB; DROP"}),
            json!({"M": 8, "ef_construction": 64, "lists": 3}),
        ] {
            assert!(parse_build_args(&p(bad.clone())).is_err(), "{bad}");
        }
        let a = parse_build_args(&p(
            json!({"M": 8, "ef_construction": 64, "maintenance_work_mem": "64MB"}),
        ))
        .unwrap();
        assert_eq!(a.maintenance_work_mem.as_deref(), Some("64MB"));
    }

    #[test]
    fn phase_durations_cover_the_build() {
        let t0 = Instant::now();
        let seen = vec![
            (t0 + Duration::from_millis(10), "a".to_string()),
            (t0 + Duration::from_millis(50), "b".to_string()),
        ];
        let ph = phases(t0, &seen, 0.2);
        assert_eq!(ph.len(), 2);
        assert!((ph[0].seconds - 0.05).abs() < 1e-9 && (ph[1].seconds - 0.15).abs() < 1e-9);
    }
}
