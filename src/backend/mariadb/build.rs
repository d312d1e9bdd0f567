//! MariaDB index build, its size, the cache check, the plan check and server settings.

use super::search::{query_args_sql, query_sql, vector_bytes};
use super::stop::{StopReason, stoppable};
use super::{Engine, INDEX_NAME, MariaDb, distance_name, sql_err};
use crate::backend::{BuildReport, BuildWatch, Cancel, ServerInfo};
use crate::backend::{MemoryPlan, plan};
use crate::params::Params;
use crate::{Error, Result};
use mysql::Conn;
use mysql::prelude::Queryable;
use std::time::Instant;

/// Server variables recorded with every result.
const SETTINGS: &[&str] = &[
    "mhnsw_max_cache_size",
    "mhnsw_ef_search",
    "mhnsw_default_m",
    "innodb_buffer_pool_size",
    "key_buffer_size",
    "version_compile_machine",
];

/// Validated build arguments.
#[derive(Debug, PartialEq)]
pub(super) struct BuildArgs {
    pub m: i64,
    pub engine: Engine,
}

/// Parse `M` (3..=200, required) and `engine` (InnoDB | MyISAM, default InnoDB).
pub(super) fn parse_build_args(args: &Params) -> Result<BuildArgs> {
    let mut m = None;
    let mut engine = Engine::InnoDb;
    for (key, value) in args {
        match key.as_str() {
            "M" | "m" => {
                m = Some(
                    value
                        .as_i64()
                        .filter(|v| (3..=200).contains(v))
                        .ok_or_else(|| {
                            Error::Config(format!(
                                "mariadb build arg M={value}: expected an integer in 3..=200"
                            ))
                        })?,
                )
            }
            "engine" => {
                engine = match value.as_str().map(str::to_ascii_lowercase).as_deref() {
                    Some("innodb") => Engine::InnoDb,
                    Some("myisam") => Engine::MyIsam,
                    _ => {
                        return Err(Error::Config(format!(
                            "mariadb build arg engine={value}: expected InnoDB or MyISAM"
                        )));
                    }
                }
            }
            other => {
                return Err(Error::Config(format!(
                    "mariadb has no build arg '{other}': use M (3..=200) and optionally engine"
                )));
            }
        }
    }
    let m = m.ok_or_else(|| Error::Config("mariadb build args need M (3..=200)".into()))?;
    Ok(BuildArgs { m, engine })
}

pub(super) fn server_info(conn: &mut Conn) -> Result<ServerInfo> {
    let version: Option<String> = conn
        .query_first("SELECT VERSION()")
        .map_err(|e| sql_err(e, "reading the server version"))?;
    let names = SETTINGS
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(",");
    let rows: Vec<(String, String)> = conn
        .query(format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})"
        ))
        .map_err(|e| sql_err(e, "reading server settings"))?;
    Ok(ServerInfo {
        version: format!("MariaDB {}", version.unwrap_or_default()),
        settings: rows.into_iter().collect(),
    })
}

pub(super) fn build(
    b: &mut MariaDb,
    args: &Params,
    cancel: &Cancel<'_>,
    watch: &BuildWatch,
) -> Result<BuildReport> {
    let args = parse_build_args(args)?;
    let l = b.loaded()?.clone();
    let mut notices = Vec::new();
    if args.engine != Engine::InnoDb {
        // The other engine's table is filled server-side from the loaded InnoDB table.
        let (src, _) = b.qualified(Engine::InnoDb, &l.spec.dataset)?;
        let r = b.ensure_table(
            args.engine,
            &l.spec,
            l.rows,
            &l.fingerprint,
            &mut |b, qt| {
                let t0 = Instant::now();
                b.exec(
                    &format!("INSERT INTO {qt} (id, v) SELECT id, v FROM {src}"),
                    "copying rows into the MyISAM table",
                )?;
                Ok((
                    t0.elapsed().as_secs_f64(),
                    format!("INSERT ... SELECT from {src}"),
                ))
            },
        )?;
        if !r.reused {
            notices.push(format!(
                "created the {} table from the InnoDB table in {:.2} s (not part of the build time)",
                args.engine.sql(),
                r.seconds
            ));
        }
    }
    if l.engine != args.engine {
        let (old, _) = b.qualified(l.engine, &l.spec.dataset)?;
        b.exec(
            &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {old}"),
            "dropping the previous vector index",
        )?;
        if let Some(l) = b.loaded.as_mut() {
            l.engine = args.engine;
        }
    }
    let (qt, t) = b.qualified(args.engine, &l.spec.dataset)?;
    b.exec(
        &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {qt}"),
        "dropping the previous vector index",
    )?;
    let sql = format!(
        "ALTER TABLE {qt} ADD VECTOR INDEX {INDEX_NAME} (v) M={} DISTANCE={}",
        args.m,
        distance_name(l.spec.metric)
    );
    // The time limit is enforced here, not with max_statement_time (see `stop`).
    let t0 = Instant::now();
    let deadline = b.build_timeout.map(|t| t0 + t);
    let id = b.conn.connection_id();
    let (result, stop) = stoppable(&b.url, id, cancel, deadline, watch, || {
        b.conn.query_drop(&sql)
    });
    let elapsed = t0.elapsed();
    // A build over its limit is never measured, whatever the server answered: a kill can
    // surface as ERROR 1317, 1939 or success (when the statement was past its copy phase).
    let timed_out = b.build_timeout.is_some_and(|t| elapsed >= t);
    if stop == Some(StopReason::Cancelled) || timed_out {
        if let Err(e) = result {
            // A lost connection is the error to report; there is nothing to recover through it.
            if let lost @ Error::Server(_) = sql_err(e, "building the vector index") {
                return Err(lost);
            }
        }
        recover_table(b, &qt)?;
        if stop == Some(StopReason::Cancelled) {
            return Err(Error::Interrupted);
        }
        return Err(Error::Backend(format!(
            "mariadb: the index build (M={}) was stopped after {:.2} s because it exceeded \
             the build timeout of {:?} (--timeout); raise --timeout or choose a smaller M",
            args.m,
            elapsed.as_secs_f64(),
            b.build_timeout.unwrap_or_default(),
        )));
    }
    result.map_err(|e| sql_err(e, "building the vector index"))?;
    let seconds = elapsed.as_secs_f64();
    if b.conn.warnings() > 0 {
        let w: Vec<(String, u32, String)> = b
            .conn
            .query("SHOW WARNINGS")
            .map_err(|e| sql_err(e, "reading build warnings"))?;
        notices.extend(w.into_iter().map(|(lvl, c, m)| format!("{lvl} {c}: {m}")));
    }
    let index_size_bytes = index_size(b, args.engine, &t)?;
    check_cache(&mut b.conn, index_size_bytes)?;
    settle(b, &qt, l.spec.metric)?;
    Ok(BuildReport {
        seconds,
        index_size_bytes,
        phases: Vec::new(),
        notices,
    })
}

/// After a stopped build: remove whatever it left (an index that completed after the stop)
/// and check that the table still holds its rows. A table MariaDB left damaged is dropped with
/// its metadata, so that the next load recreates it instead of reusing it.
fn recover_table(b: &mut MariaDb, qt: &str) -> Result<()> {
    let rows = b.loaded()?.rows as u64;
    let dropped = b.exec(
        &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {qt}"),
        "dropping the stopped build's index",
    );
    if dropped.is_err() || b.count_rows(qt).ok() != Some(rows) {
        let dataset = b.loaded()?.spec.dataset.clone();
        b.drop_tables(&dataset)?;
    }
    Ok(())
}

/// Observed on MariaDB 11.8.9: the first index search after `ADD VECTOR INDEX` can return a
/// worse answer than every later one, even with a high ef_search (the second identical query
/// is exact). One untimed search right after the build keeps that out of every measurement.
fn settle(b: &mut MariaDb, qt: &str, metric: crate::Metric) -> Result<()> {
    b.exec(
        &format!("SET @annbench_v = (SELECT v FROM {qt} ORDER BY id LIMIT 1)"),
        "settling the new index",
    )?;
    let f = match metric {
        crate::Metric::Euclidean => "VEC_DISTANCE_EUCLIDEAN",
        crate::Metric::Angular => "VEC_DISTANCE_COSINE",
    };
    b.exec(
        &format!("SELECT id FROM {qt} ORDER BY {f}(v, @annbench_v) LIMIT 1"),
        "settling the new index",
    )
}

/// Size of the index's hidden table `<table>#i#01`.
fn index_size(b: &mut MariaDb, engine: Engine, t: &str) -> Result<u64> {
    match engine {
        Engine::InnoDb => b.tablespace_size(&format!("{}/{t}#i#01", b.db)),
        Engine::MyIsam => {
            let datadir = match &b.datadir {
                Some(d) => d.clone(),
                None => {
                    let d: Option<String> = b
                        .conn
                        .query_first("SELECT @@datadir")
                        .map_err(|e| sql_err(e, "reading @@datadir"))?;
                    d.unwrap_or_default().into()
                }
            };
            let dir = datadir.join(&b.db);
            let mut total = 0;
            for ext in ["MYD", "MYI"] {
                let p = dir.join(format!("{t}#i#01.{ext}"));
                total += std::fs::metadata(&p)
                    .map_err(|e| {
                        Error::Backend(format!(
                            "mariadb: cannot read the MyISAM index file {} ({e}); the index size \
                             of a MyISAM table is read from the server's data directory: run on \
                             the server's machine or set the data directory option \
                             (BackendOptions::mariadb_datadir), or use engine=InnoDB",
                            p.display()
                        ))
                    })?
                    .len();
            }
            Ok(total)
        }
    }
}

/// The plan of an index with `args` over `rows` x `dimension`: its estimated size against
/// `mhnsw_max_cache_size`, which must hold it (see [`check_cache`]).
pub(super) fn memory_plan(
    b: &mut MariaDb,
    rows: usize,
    dimension: usize,
    args: &Params,
) -> Result<MemoryPlan> {
    let a = parse_build_args(args)?;
    let need = plan::mariadb_index_bytes(rows, dimension, a.m as usize);
    let cache = cache_size(&mut b.conn)?;
    let want = (need as f64 * 1.1 / (1 << 20) as f64).ceil() as u64;
    Ok(MemoryPlan {
        algorithm: "mariadb".into(),
        what: format!("the MHNSW index of {rows} x {dimension} (M={})", a.m),
        need_bytes: need,
        setting: "mhnsw_max_cache_size".into(),
        setting_bytes: cache,
        consequence: "queries would evict and re-read graph nodes (cache churn), so annbench \
                      refuses to measure such an index"
            .into(),
        fix: format!(
            "SET GLOBAL mhnsw_max_cache_size = {} (or start mariadbd with \
             --mhnsw-max-cache-size={want}M), then run again",
            want << 20
        ),
        enforced: true,
    })
}

fn cache_size(conn: &mut Conn) -> Result<u64> {
    let cache: Option<u64> = conn
        .query_first("SELECT @@GLOBAL.mhnsw_max_cache_size")
        .map_err(|e| sql_err(e, "reading mhnsw_max_cache_size"))?;
    Ok(cache.unwrap_or(0))
}

/// An index larger than `mhnsw_max_cache_size` makes the server evict and reload graph nodes
/// during queries, so QPS would measure cache churn: refuse, with the fix.
fn check_cache(conn: &mut Conn, index_bytes: u64) -> Result<()> {
    let cache = cache_size(conn)?;
    if cache < index_bytes {
        return Err(Error::Backend(format!(
            "mariadb: the index ({index_bytes} bytes) is larger than mhnsw_max_cache_size \
             ({cache} bytes), so query results would measure cache churn. Raise it, e.g. \
             SET GLOBAL mhnsw_max_cache_size = {} (or start mariadbd with \
             --mhnsw-max-cache-size=4G), then run again",
            index_bytes.next_power_of_two().max(1 << 30)
        )));
    }
    Ok(())
}

pub(super) fn verify_index_used(
    b: &mut MariaDb,
    query: &[f32],
    k: usize,
    query_args: &Params,
) -> Result<()> {
    let l = b.loaded()?.clone();
    let (qt, _) = b.qualified(l.engine, &l.spec.dataset)?;
    let set = query_args_sql(query_args)?;
    if !set.is_empty() {
        b.exec(&set, "setting query args")?;
    }
    let sql = format!("EXPLAIN {}", query_sql(&qt, l.spec.metric, k));
    let rows: Vec<mysql::Row> = b
        .conn
        .exec(&sql, (vector_bytes(query),))
        .map_err(|e| sql_err(e, "running EXPLAIN"))?;
    let mut plan = Vec::new();
    let mut used = false;
    for row in &rows {
        let col = |name: &str| -> String {
            row.get_opt::<Option<String>, _>(name)
                .and_then(|r| r.ok())
                .flatten()
                .unwrap_or_else(|| "NULL".into())
        };
        let (ty, key, extra) = (col("type"), col("key"), col("Extra"));
        used |= key == INDEX_NAME && !extra.contains("filesort");
        plan.push(format!("type={ty} key={key} extra='{extra}'"));
    }
    if !used {
        return Err(Error::Backend(format!(
            "mariadb: the query does not use the vector index {INDEX_NAME} (it would be a full \
             scan); plan: {}; query: {sql}",
            plan.join(" | ")
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
        let a = parse_build_args(&p(json!({"M": 8}))).unwrap();
        assert_eq!(
            a,
            BuildArgs {
                m: 8,
                engine: Engine::InnoDb
            }
        );
        let a = parse_build_args(&p(json!({"M": 8, "engine": "MyISAM"}))).unwrap();
        assert_eq!(a.engine, Engine::MyIsam);
        for bad in [
            json!({"M": 2}),
            json!({"M": 201}),
            json!({}),
            json!({"M": 8, "x": 1}),
        ] {
            assert!(parse_build_args(&p(bad.clone())).is_err(), "{bad}");
        }
        let e = parse_build_args(&p(json!({"M": 8, "engine": "Aria"}))).unwrap_err();
        assert!(e.to_string().contains("InnoDB or MyISAM"));
    }
}
