//! MariaDB index build (under the shared watch: timeout, Ctrl-C), its size, the cache check,
//! the plan check.

use super::errors::sql_err;
use super::search::{query_sql, settings_sql, vector_bytes};
use super::stop::KillWhenCopying;
use super::{ALGORITHM, Engine, INDEX_NAME, MariaDb, distance_name};
use crate::backend::filter::{self, Plan};
use crate::backend::sql::{attrs, guard, watch};
use crate::backend::sql::{SqlConn, count_rows};
use crate::backend::{BuildReport, BuildWatch, Cancel, MemoryPlan, plan};
use crate::params::Params;
use crate::{Error, Result};
use mysql::Conn;
use mysql::prelude::Queryable;
use std::time::Instant;

pub(super) fn build(
    b: &mut MariaDb,
    params: &Params,
    cancel: &Cancel<'_>,
    progress: &BuildWatch,
) -> Result<BuildReport> {
    let l = b.loaded()?.clone();
    let args = ALGORITHM.build_args(params, l.rows)?;
    let m = args.required_int("M")?;
    let engine = Engine::parse(args.text("engine"));
    if l.stream.is_some() && engine != Engine::InnoDb {
        return Err(Error::Config(format!(
            "mariadb: a stream table is InnoDB; build args engine={} are for sweeps only \
             (drop the engine argument)",
            engine.sql()
        )));
    }
    let mut notices = Vec::new();
    if engine != Engine::InnoDb {
        // The other engine's table is filled server-side from the loaded InnoDB table.
        let src = b.qualified(Engine::InnoDb, &l.spec.dataset)?;
        let r = b.ensure_table(
            engine,
            &l.spec,
            l.rows,
            &l.fingerprint,
            &mut |c, qt| {
                let t0 = Instant::now();
                c.run(
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
                engine.sql(),
                r.seconds
            ));
        }
    }
    b.built = None;
    if l.engine != engine {
        let old_table = b.table(l.engine, &l.spec.dataset)?;
        guard::clear_build(&mut b.conn, &old_table)?;
        let old = b.qualified(l.engine, &l.spec.dataset)?;
        b.conn.run(
            &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {old}"),
            "dropping the previous vector index",
        )?;
        if let Some(l) = b.loaded.as_mut() {
            l.engine = engine;
        }
    }
    let t = match &l.stream {
        Some(s) => s.clone(),
        None => b.table(engine, &l.spec.dataset)?,
    };
    let qt = t.qualified(b.conn.dialect());
    guard::clear_build(&mut b.conn, &t)?;
    b.conn.run(
        &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {qt}"),
        "dropping the previous vector index",
    )?;
    filter::check_attributes(ALGORITHM.name, &args, l.attrs.as_deref(), "build")?;
    if let Some(a) = &l.attrs {
        // The other engine's table gets the attributes too (kept once filled).
        if engine != Engine::InnoDb {
            attrs::ensure(&mut b.conn, &t, &a.columns)?;
        }
        attrs::set_btrees(&mut b.conn, &t, a.names(), filter::wants_btree(&args))?;
    }
    // Tagged, so that a later run can tell this build from a live one if this process dies.
    let sql = format!(
        "ALTER TABLE {qt} ADD VECTOR INDEX {INDEX_NAME} (v) M={m} DISTANCE={} {}",
        distance_name(l.spec.metric),
        guard::tag()
    );
    // MariaDB's PROGRESS counts the rows copied against the table's *estimated* row count
    // (InnoDB statistics, e.g. 125,001 for 250,000 rows of 1536-d vectors), so it can pass
    // 100%: rescaled to the rows loaded.
    let estimate: Option<u64> = b
        .conn
        .exec_first(
            "SELECT TABLE_ROWS FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
            (&t.schema, &t.name),
        )
        .map_err(|e| sql_err(e, "reading the table's row estimate"))?
        .flatten();
    let progress_scale = match estimate {
        Some(e) if e > 0 && l.rows > 0 => e as f64 / l.rows as f64,
        _ => 1.0,
    };
    // The client enforces the time limit, not max_statement_time (see `stop`).
    let kill = KillWhenCopying {
        url: &b.url,
        conn_id: b.conn.connection_id(),
        progress_scale,
        killer: None,
        last: None,
    };
    let w = watch::run_reporting(kill, cancel, b.build_timeout, progress, || {
        b.conn.query_drop(&sql)
    });
    let seconds = w.seconds;
    w.finish(
        ALGORITHM.name,
        params,
        b.build_timeout,
        |e| sql_err(e, "building the vector index"),
        || recover_table(b, &qt),
    )?;
    if b.conn.warnings() > 0 {
        let w: Vec<(String, u32, String)> = b
            .conn
            .query("SHOW WARNINGS")
            .map_err(|e| sql_err(e, "reading build warnings"))?;
        notices.extend(w.into_iter().map(|(lvl, c, m)| format!("{lvl} {c}: {m}")));
    }
    let index_size_bytes = index_size(b, engine, &t.name)?;
    notices.extend(check_cache(&mut b.conn, index_size_bytes)?);
    settle(b, &qt, l.spec.metric)?;
    let identity = index_identity(b, engine, &t.name)?.unwrap_or_default();
    b.built = Some((guard::new_build(&mut b.conn, &t)?, identity));
    b.built_args = Some(params.clone());
    Ok(BuildReport {
        seconds,
        index_size_bytes,
        phases: Vec::new(),
        notices,
    })
}

/// What tells this index from one another session built in its place, `None` when there is
/// no vector index on table `t`: the InnoDB id of its hidden table `t#i#NN` (new for every
/// build; NN is 01 unless the attribute B-tree came first, see [`index_size`]), or for MyISAM
/// the table's creation time (a build copies the table).
pub(super) fn index_identity(b: &mut MariaDb, engine: Engine, t: &str) -> Result<Option<String>> {
    let (db, conn) = (b.db.clone(), &mut b.conn);
    let exists: Option<i64> = conn
        .exec_first(
            "SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? \
             AND TABLE_NAME = ? AND INDEX_NAME = ? LIMIT 1",
            (&db, t, INDEX_NAME),
        )
        .map_err(|e| sql_err(e, "looking up the vector index"))?;
    if exists.is_none() {
        return Ok(None);
    }
    let id: Option<String> = match engine {
        Engine::InnoDb => {
            let prefix = format!("{db}/{t}#i#");
            conn.exec::<(String, String), _, _>(
                "SELECT NAME, CAST(TABLE_ID AS CHAR) FROM information_schema.INNODB_SYS_TABLES \
                 WHERE NAME LIKE ?",
                (format!("{}%", prefix.replace('_', "\\_")),),
            )
            .map(|rows| {
                rows.into_iter()
                    .find(|(name, _)| name.starts_with(&prefix))
                    .map(|(_, id)| id)
            })
        }
        Engine::MyIsam => conn.exec_first(
            "SELECT CAST(CREATE_TIME AS CHAR) FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
            (&db, t),
        ),
    }
    .map_err(|e| sql_err(e, "reading the vector index's id"))?;
    Ok(Some(id.unwrap_or_default()))
}

/// After a stopped build: remove whatever it left (an index that completed after the stop)
/// and check that the table still holds its rows. A table MariaDB left damaged is dropped with
/// its metadata, so that the next load recreates it instead of reusing it.
fn recover_table(b: &mut MariaDb, qt: &str) -> Result<()> {
    let l = b.loaded()?.clone();
    let dropped = b.conn.run(
        &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {qt}"),
        "dropping the stopped build's index",
    );
    if let Some(stream) = &l.stream {
        // The rows are the stream's, not a load's: only a failed drop says it is damaged.
        if dropped.is_err() {
            crate::backend::sql::reuse::drop_table(&mut b.conn, stream)?;
            b.loaded = None;
        }
        return Ok(());
    }
    let table = b.table(l.engine, &l.spec.dataset)?;
    if dropped.is_err() || count_rows(&mut b.conn, &table).ok() != Some(l.rows as u64) {
        b.drop_tables(&l.spec.dataset)?;
    }
    Ok(())
}

/// Observed on MariaDB 11.8.9: the first index search after `ADD VECTOR INDEX` can return a
/// worse answer than every later one, even with a high ef_search (the second identical query
/// is exact). One untimed search right after the build keeps that out of every measurement.
pub(super) fn settle(b: &mut MariaDb, qt: &str, metric: crate::Metric) -> Result<()> {
    b.conn.run(
        &format!("SET @annbench_v = (SELECT v FROM {qt} ORDER BY id LIMIT 1)"),
        "settling the new index",
    )?;
    let f = match metric {
        crate::Metric::Euclidean => "VEC_DISTANCE_EUCLIDEAN",
        crate::Metric::Angular => "VEC_DISTANCE_COSINE",
    };
    b.conn.run(
        &format!("SELECT id FROM {qt} ORDER BY {f}(v, @annbench_v) LIMIT 1"),
        "settling the new index",
    )
}

/// Size of the index's hidden table `<table>#i#NN`.
pub(super) fn index_size(b: &mut MariaDb, engine: Engine, t: &str) -> Result<u64> {
    match engine {
        Engine::InnoDb => {
            // The vector index's tablespace is `<table>#i#NN`, NN its key number: 01 when it
            // is the only secondary key, later when the attribute B-tree came first.
            let prefix = format!("{}/{t}#i#", b.db);
            let names: Vec<String> = b
                .conn
                .exec(
                    "SELECT NAME FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME LIKE ?",
                    (format!("{}%", prefix.replace('_', "\\_")),),
                )
                .map_err(|e| sql_err(e, "listing the index tablespaces"))?;
            let name = names
                .into_iter()
                .find(|n| n.starts_with(&prefix))
                .unwrap_or_else(|| format!("{prefix}01"));
            b.tablespace_size(&name)
        }
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
            // `<table>#i#NN`, NN the vector index's key number (see InnoDB above).
            let prefix = format!("{t}#i#");
            let stem = std::fs::read_dir(&dir)
                .ok()
                .and_then(|entries| {
                    entries
                        .filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .find(|n| n.starts_with(&prefix) && n.ends_with(".MYD"))
                })
                .map_or_else(|| format!("{prefix}01"), |n| n.trim_end_matches(".MYD").to_string());
            for ext in ["MYD", "MYI"] {
                let p = dir.join(format!("{stem}.{ext}"));
                total += std::fs::metadata(&p)
                    .map_err(|e| {
                        Error::Backend(format!(
                            "mariadb: cannot read the MyISAM index file {} ({e}); the index size \
                             of a MyISAM table is read from the server's data directory: run on \
                             the server's machine or set the data directory option \
                             (BackendOptions::data_dirs, or ANNBENCH_MARIADB_DATADIR), or use engine=InnoDB",
                            p.display()
                        ))
                    })?
                    .len();
            }
            Ok(total)
        }
    }
}

/// The plan of an index with `params` over `rows` x `dimension`: its estimated size against
/// `mhnsw_max_cache_size`, which should hold it (see [`check_cache`]).
pub(super) fn memory_plan(
    b: &mut MariaDb,
    rows: usize,
    dimension: usize,
    params: &Params,
) -> Result<MemoryPlan> {
    let args = ALGORITHM.build_args(params, rows)?;
    let m = args.required_int("M")?;
    let need = plan::mariadb_index_bytes(rows, dimension, m as usize);
    let cache = cache_size(&mut b.conn)?;
    let want = (need as f64 * 1.1 / (1 << 20) as f64).ceil() as u64;
    Ok(MemoryPlan {
        algorithm: "mariadb".into(),
        what: format!("the MHNSW index of {rows} x {dimension} (M={m})"),
        need_bytes: need,
        setting: "mhnsw_max_cache_size".into(),
        setting_bytes: cache,
        consequence: "queries evict graph nodes and rebuild them from the table (reading \
                      storage when the buffer pool does not hold it); the points are measured \
                      and carry this notice"
            .into(),
        fix: format!(
            "SET GLOBAL mhnsw_max_cache_size = {} (or start mariadbd with \
             --mhnsw-max-cache-size={want}M), then run again",
            want << 20
        ),
        enforced: false,
    })
}

fn cache_size(conn: &mut Conn) -> Result<u64> {
    let cache: Option<u64> = conn
        .query_first("SELECT @@GLOBAL.mhnsw_max_cache_size")
        .map_err(|e| sql_err(e, "reading mhnsw_max_cache_size"))?;
    Ok(cache.unwrap_or(0))
}

/// An index larger than `mhnsw_max_cache_size` makes the server evict graph nodes and rebuild
/// them from the table during queries: its points measure that (a server given less memory
/// than its index, `run --memory`), so they are measured and carry this notice, with the fix
/// for those who meant the graph to fit.
fn check_cache(conn: &mut Conn, index_bytes: u64) -> Result<Option<String>> {
    Ok(cache_notice(index_bytes, cache_size(conn)?))
}

/// The notice of an index of `index_bytes` whose graph cache holds `cache` bytes, if it does
/// not fit (also for the points of a `run --memory` share, whose cache is the share's).
pub fn cache_notice(index_bytes: u64, cache: u64) -> Option<String> {
    if cache >= index_bytes {
        return None;
    }
    Some(format!(
        "the index ({}) is larger than mhnsw_max_cache_size ({}): queries evict graph nodes \
         and rebuild them from the table, reading storage where the buffer pool does not hold \
         it, so these points measure a graph that does not fit its cache. For one that fits: \
         SET GLOBAL mhnsw_max_cache_size = {}, then run again",
        crate::backend::plan::human_bytes(index_bytes),
        crate::backend::plan::human_bytes(cache),
        index_bytes.next_power_of_two().max(1 << 30)
    ))
}

pub(super) fn verify_index_used(
    b: &mut MariaDb,
    query: &[f32],
    k: usize,
    query_args: &Params,
) -> Result<String> {
    let l = b.loaded()?.clone();
    let t = b.current(&l)?;
    let qt = t.qualified(b.conn.dialect());
    let args = ALGORITHM.query_args(query_args)?;
    filter::check_attributes(ALGORITHM.name, &args, l.attrs.as_deref(), "query")?;
    b.conn.run(&settings_sql(&args), "setting query args")?;
    let filter = filter::where_clause(&args, l.attrs.as_deref());
    let sql = format!("EXPLAIN {}", query_sql(&qt, l.spec.metric, k, &filter));
    let rows: Vec<mysql::Row> = b
        .conn
        .exec(&sql, (vector_bytes(query),))
        .map_err(|e| sql_err(e, "running EXPLAIN"))?;
    let mut plan = Vec::new();
    let mut found = None;
    let btrees = match &l.attrs {
        Some(a) => a
            .names()
            .map(|n| attrs::btree_name(&t, n))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    for row in &rows {
        let col = |name: &str| -> String {
            row.get_opt::<Option<String>, _>(name)
                .and_then(|r| r.ok())
                .flatten()
                .unwrap_or_else(|| "NULL".into())
        };
        let (ty, key, extra) = (col("type"), col("key"), col("Extra"));
        if key == INDEX_NAME && !extra.contains("filesort") {
            found = Some(Plan::VectorIndex);
        } else if !filter.is_empty() && btrees.contains(&key) {
            // The B-tree finds the matching rows, a filesort orders them by exact distance.
            found = found.or(Some(Plan::BtreeSort));
        }
        plan.push(format!("type={ty} key={key} extra='{extra}'"));
    }
    match found {
        Some(p) => Ok(format!("{} ({})", p.as_str(), plan.join(" | "))),
        None => Err(Error::Backend(format!(
            "mariadb: the query does not use the vector index {INDEX_NAME}{} (it would be a \
             full scan); plan: {}; query: {sql}",
            if filter.is_empty() {
                String::new()
            } else {
                format!(" nor an attribute B-tree ({})", btrees.join(", "))
            },
            plan.join(" | ")
        ))),
    }
}

