//! The checks of a runbook against the algorithm and its server, made before any write (a
//! step that cannot run once failed after step 1): every maintenance step is one the
//! algorithm's database runs, from its declaration, with no server; and the most connections
//! the run opens at once fit the server's limit.

use super::StreamOptions;
use crate::Result;
use crate::registry::{MaintenanceOp, StreamBuild};
use crate::runner::preflight::Connections;
use crate::stream::{Operation, Runbook, Step};

/// Refuse a runbook `algorithm` cannot run: an algorithm without streaming runbooks, or a
/// maintenance step its database has not (`vacuum` on MariaDB, `optimize` on PostgreSQL),
/// naming the file, the entry, the step and what the database runs.
pub fn check_runbook(runbook: &Runbook, algorithm: &str) -> Result<()> {
    refuse_unsupported(algorithm)?;
    let decl = crate::registry::find_algorithm(algorithm)?;
    let runs = decl
        .database
        .map_or(&[][..], |kind| kind.decl().stream_maintenance);
    for step in &runbook.steps {
        let Operation::Maintenance(what) = &step.op else {
            continue;
        };
        for &m in what {
            let op = MaintenanceOp::from(m);
            if !runs.contains(&op) {
                let e = crate::backend::stream::unsupported(algorithm, op, runs);
                return Err(runbook.step_error(step, e.to_string()));
            }
        }
    }
    Ok(())
}

/// Refuse an algorithm whose database cannot run a runbook (before the runbook is read).
pub(super) fn refuse_unsupported(algorithm: &str) -> Result<()> {
    match crate::registry::find_algorithm(algorithm)?.stream_build {
        Some(_) => Ok(()),
        None => Err(crate::backend::stream::not_streaming(algorithm)),
    }
}

/// The most connections a run of `opts` opens on its server at once: its search clients,
/// from the first step with an index on, and at a write step with an index the clients that
/// search during it and the one looking for marker rows (`run_step`), with the `held`
/// connections of the backend's own ([`crate::backend::Database::stream_connections`]).
pub(super) fn connections(
    runbook: &Runbook,
    opts: &StreamOptions,
    build: Option<StreamBuild>,
    held: usize,
) -> Connections {
    let first_insert = runbook
        .steps
        .iter()
        .position(|s| matches!(s.op, Operation::Insert { .. }));
    // The steps that run on an index (IVFFlat's is built after the first insert step).
    let indexed = |i: usize| match build {
        Some(StreamBuild::AfterFirstInsert) => first_insert.is_some_and(|f| i > f),
        _ => true,
    };
    let during = |s: &Step| {
        let clients = s.during.map_or(0, |d| d.clients);
        let marker = usize::from(matches!(s.op, Operation::Insert { .. }) && opts.markers > 0);
        (clients, marker)
    };
    let busiest = runbook
        .steps
        .iter()
        .enumerate()
        .filter(|&(i, s)| s.op.writes() && indexed(i))
        .map(|(_, s)| (during(s), s.number))
        .max_by_key(|&((clients, marker), _)| clients + marker);
    let mut what = vec![format!("{} search client(s) (--clients)", opts.clients)];
    let mut count = opts.clients + held;
    if let Some(((clients, marker), step)) = busiest {
        if clients > 0 {
            what.push(format!(
                "{clients} searching during step {step} (during: clients)"
            ));
        }
        if marker > 0 {
            what.push("1 looking for marker rows (--markers)".into());
        }
        count += clients + marker;
    }
    what.push(format!(
        "{held} of annbench's own (admin, writer where the database has one, statement \
         stopper)"
    ));
    Connections {
        count,
        what: what.join(", "),
    }
}

/// [`crate::runner::preflight::check_connections`] for a stream.
pub(super) fn check_connections(
    runbook: &Runbook,
    opts: &StreamOptions,
    sweep: &crate::runner::SweepOptions,
    grid: &crate::config::Grid,
) -> Result<()> {
    let build = crate::registry::find_algorithm(&grid.algorithm)?.stream_build;
    let needed =
        |db: &crate::backend::Database| connections(runbook, opts, build, db.stream_connections);
    crate::runner::preflight::check_connections(
        sweep,
        std::slice::from_ref(grid),
        &needed,
        "lower --clients or the runbook's during clients",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runbook(steps: &str) -> Runbook {
        Runbook::parse(&format!("x:\n{steps}"), "rb.yaml", "x", None).unwrap()
    }

    #[test]
    fn a_maintenance_step_the_database_has_not_is_refused_with_the_step() {
        let rb = runbook(
            "  1: {operation: insert, start: 0, end: 10}\n  2: {operation: maintenance, what: \
             [reindex, vacuum]}\n  3: {operation: search}\n",
        );
        let e = check_runbook(&rb, "mariadb").unwrap_err().to_string();
        assert_eq!(
            e,
            "rb.yaml: entry 'x', step 2 (maintenance): mariadb has no 'vacuum' maintenance \
             operation: it runs optimize, reindex (change the runbook's maintenance step)"
        );
        check_runbook(&rb, "pgvector").unwrap();
        let rb = runbook(
            "  1: {operation: insert, start: 0, end: 10}\n  2: {operation: maintenance, what: \
             optimize}\n  3: {operation: search}\n",
        );
        let e = check_runbook(&rb, "pgvector_ivfflat")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("step 2 (maintenance): pgvector_ivfflat has no 'optimize'")
                && e.contains("it runs vacuum, reindex"),
            "{e}"
        );
        check_runbook(&rb, "mariadb").unwrap();
        let e = check_runbook(&rb, "exact").unwrap_err().to_string();
        assert!(e.contains("does not run streaming runbooks"), "{e}");
    }

    #[test]
    fn the_most_connections_at_once_are_counted_from_the_busiest_step() {
        let rb = runbook(
            "  1: {operation: insert, start: 0, end: 10, during: {clients: 7}}\n  2: \
             {operation: search}\n  3: {operation: delete, start: 0, end: 5, during: {clients: \
             3}}\n  4: {operation: insert, start: 0, end: 5}\n  5: {operation: search}\n",
        );
        let opts = StreamOptions {
            clients: 4,
            markers: 2,
            ..StreamOptions::default()
        };
        // Graph indexes exist from the first step: step 1 (7 during + 1 marker searcher).
        let c = connections(&rb, &opts, Some(StreamBuild::BeforeFirstInsert), 3);
        assert_eq!(c.count, 4 + 7 + 1 + 3, "{}", c.what);
        assert!(c.what.contains("7 searching during step 1"), "{}", c.what);
        // IVFFlat's index comes after the first insert: no searches during it, so step 3's 3
        // (a delete: no marker rows) or step 4's marker searcher.
        let c = connections(&rb, &opts, Some(StreamBuild::AfterFirstInsert), 2);
        assert_eq!(c.count, 4 + 3 + 2, "{}", c.what);
        let none = StreamOptions {
            markers: 0,
            ..opts.clone()
        };
        let c = connections(&rb, &none, Some(StreamBuild::BeforeFirstInsert), 2);
        assert_eq!(c.count, 4 + 7 + 2, "{}", c.what);
    }

    #[test]
    fn the_stream_s_passes_stop_by_run_s_rule() {
        let opts = StreamOptions {
            runs: 4,
            min_time: std::time::Duration::from_millis(500),
            ..StreamOptions::default()
        };
        let policy = opts.as_sweep().policy();
        assert_eq!(policy.runs, 4);
        assert_eq!(policy.max_time, std::time::Duration::from_secs(4));
        let given = StreamOptions {
            max_time: Some(std::time::Duration::from_secs(9)),
            ..opts
        };
        assert_eq!(
            given.as_sweep().policy().max_time,
            std::time::Duration::from_secs(9)
        );
    }
}
