//! The index build of any pgvector algorithm (timeout, Ctrl-C, phases from
//! `pg_stat_progress_create_index`, the server's notices, the index size) and the plan check.

use super::errors::pg_err;
use super::search::VecParam;
use super::server::connect_watched;
use super::watchdog;
use super::{Loaded, PgBackend};
use crate::backend::filter::{self, Plan};
use crate::backend::sql::watch::{self, Watch};
use crate::backend::sql::{SqlConn, attrs, guard};
use crate::backend::watch::percent;
use crate::backend::{BuildReport, BuildWatch, Cancel};
use crate::params::Params;
use crate::{Error, Result};
use postgres::{Client, Statement};

/// Stops a build with `pg_cancel_backend` and samples its phase, from a connection of its own.
struct PgWatch {
    client: Client,
    conn: Option<watchdog::Conn>,
    pid: i32,
    progress: Option<Statement>,
}

impl Watch for PgWatch {
    fn stop(&mut self) {
        let _bound = watchdog::arm(self.conn, watchdog::WATCH_LIMIT);
        let _ = self
            .client
            .execute("SELECT pg_cancel_backend($1)", &[&self.pid]);
    }

    /// The phase, and tuples done out of the total where the server knows the total, else
    /// heap blocks scanned out of the table's (pgvector inserts each row into the graph as the
    /// scan reads it, so the scan's progress is the build's).
    fn progress(&mut self) -> Option<(String, Option<f64>)> {
        let stmt = self.progress.as_ref()?;
        let _bound = watchdog::arm(self.conn, watchdog::WATCH_LIMIT);
        let row = self.client.query_opt(stmt, &[&self.pid]).ok()??;
        let phase: String = row.try_get(0).ok()?;
        let n = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0);
        let pct = percent(n(4), n(3)).or_else(|| percent(n(2), n(1)));
        Some((phase, pct))
    }
}

pub(super) fn build(
    b: &mut PgBackend,
    params: &Params,
    cancel: &Cancel<'_>,
    report: &BuildWatch,
) -> Result<BuildReport> {
    let l = b.loaded()?.clone();
    let algo = b.index.algorithm();
    let args = algo.build_args(params, l.rows)?;
    let target = b.target(&l);
    b.built = None;
    let c = &mut b.client;
    guard::clear_build(c, &l.table)?;
    c.run(
        &format!("DROP INDEX IF EXISTS {}.{}", b.schema, l.index),
        "dropping the previous index",
    )?;
    filter::check_attributes(algo.name, &args, l.attrs.as_deref(), "build")?;
    if let Some(a) = &l.attrs {
        attrs::set_btrees(c, &l.table, a.names(), filter::wants_btree(&args))?;
    }
    match args.text("maintenance_work_mem") {
        Some(m) => c.run(
            &format!("SET maintenance_work_mem = '{m}'"),
            "setting memory",
        )?,
        None => c.run("RESET maintenance_work_mem", "resetting memory")?,
    }
    let pid: i32 = c
        .query_one("SELECT pg_backend_pid()", &[])
        .map_err(|e| pg_err(e, "reading the backend pid"))?
        .get(0);
    let (mut watcher, watcher_conn) = connect_watched(&b.url)?;
    let progress = watcher
        .prepare(
            "SELECT phase, blocks_total, blocks_done, tuples_total, tuples_done \
             FROM pg_stat_progress_create_index WHERE pid = $1",
        )
        .ok();
    b.drain_notices();
    // Tagged, so that a later run can tell this build from a live one if this process dies.
    let sql = format!(
        "CREATE INDEX {} ON {} USING {} {}",
        l.index,
        target.table,
        b.index.using(&target, &args)?,
        guard::tag()
    );
    // The watcher enforces the time limit with pg_cancel_backend, as for Ctrl-C: a session
    // statement_timeout would also bound the statements after the build, and resetting it is
    // itself a statement that the timeout can cancel on a busy machine.
    let w = watch::run_reporting(
        PgWatch {
            client: watcher,
            conn: watcher_conn,
            pid,
            progress,
        },
        cancel,
        b.build_timeout,
        report,
        || {
            // A server that stops answering (SIGSTOP) acts on no cancel: past the timeout and
            // some slack, the client closes the connection itself.
            let limit = b.build_timeout.map(|t| t + watchdog::BUILD_SLACK);
            let _bound = limit.map(|l| watchdog::arm(b.conn, l));
            b.client.batch_execute(&sql)
        },
    );
    let notices = b.drain_notices();
    let conn = b.conn;
    let (seconds, phases) = (w.seconds, w.phases.clone());
    let drop_index = format!("DROP INDEX IF EXISTS {}.{}", b.schema, l.index);
    w.finish(
        algo.name,
        params,
        b.build_timeout,
        |e| watchdog::pg_err(conn, e, "building the index"),
        // A build that completed as it was stopped leaves its index; nothing else is left.
        || {
            b.client
                .run(&drop_index, "dropping the stopped build's index")
        },
    )?;
    let id = guard::new_build(&mut b.client, &l.table)?;
    let oid = super::index_oid(&mut b.client, &b.schema, &l.index)?.unwrap_or(0);
    b.built = Some((id, oid));
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
        phases,
        notices,
    })
}

pub(super) fn verify_index_used(
    b: &mut PgBackend,
    query: &[f32],
    k: usize,
    params: &Params,
) -> Result<String> {
    let l: Loaded = b.loaded()?.clone();
    let algo = b.index.algorithm();
    let args = algo.query_args(params)?;
    filter::check_attributes(algo.name, &args, l.attrs.as_deref(), "query")?;
    let target = b.target(&l);
    let set = b.index.settings(&target, &args)?;
    if !set.is_empty() {
        b.client.run(&set, "setting query args")?;
    }
    let q = b.index.query(&target, k, &args);
    let rows = b
        .client
        .query(&format!("EXPLAIN {q}"), &[&VecParam(query)])
        .map_err(|e| pg_err(e, "running EXPLAIN"))?;
    let plan: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0)).collect();
    let filtered = !target.filter(&args).is_empty();
    let btrees = match &l.attrs {
        Some(a) => a
            .names()
            .map(|n| attrs::btree_name(&l.table, n))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let found = classify(&plan, &l.index, &btrees, filtered);
    let lines = plan
        .iter()
        .map(|s| s.trim())
        .collect::<Vec<_>>()
        .join(" | ");
    match found {
        Some(p) => Ok(format!("{} ({lines})", p.as_str())),
        None => Err(Error::Backend(format!(
            "{}: the query does not use the vector index {}{} (it would be an exact scan); \
             plan: {lines}; query: {q}",
            algo.name,
            l.index,
            if filtered {
                " nor the attribute B-tree"
            } else {
                ""
            },
        ))),
    }
}

/// What serves the query in an EXPLAIN: the vector index, else (filtered queries only) one of
/// the attribute columns' B-trees, else nothing acceptable.
fn classify(plan: &[String], index: &str, btrees: &[String], filtered: bool) -> Option<Plan> {
    let vector = format!("Index Scan using {index} ");
    if plan.iter().any(|line| line.contains(&vector)) {
        return Some(Plan::VectorIndex);
    }
    let on_btree = |line: &String| {
        btrees.iter().any(|b| {
            line.contains(&format!("Index Scan using {b} "))
                || line.contains(&format!("Bitmap Index Scan on {b}"))
                || line.contains(&format!("Index Only Scan using {b} "))
        })
    };
    (filtered && plan.iter().any(on_btree)).then_some(Plan::BtreeSort)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_with_the_vector_index_or_a_filtered_btree_pass() {
        let lines = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let aidx = lines(&["t_aidx", "t_l2idx"]);
        let hnsw = lines(&[
            "Limit",
            "  ->  Index Scan using t_vidx on t",
            "  Filter: (attr < 5)",
        ]);
        assert_eq!(
            classify(&hnsw, "t_vidx", &aidx, true),
            Some(Plan::VectorIndex)
        );
        let btree = lines(&[
            "Limit",
            "  ->  Sort",
            "        ->  Bitmap Heap Scan on t",
            "              ->  Bitmap Index Scan on t_aidx",
        ]);
        assert_eq!(
            classify(&btree, "t_vidx", &aidx, true),
            Some(Plan::BtreeSort)
        );
        assert_eq!(classify(&btree, "t_vidx", &aidx, false), None, "unfiltered");
        let full = lines(&[
            "Limit",
            "  ->  Sort",
            "        ->  Index Scan using t_pkey on t",
        ]);
        assert_eq!(classify(&full, "t_vidx", &aidx, true), None);
        let seq = lines(&["Limit", "  ->  Sort", "        ->  Seq Scan on t"]);
        assert_eq!(classify(&seq, "t_vidx", &aidx, true), None);
    }
}
