//! `annbench stream` against the real servers: a simple runbook (insert all, search, delete
//! half, search, insert it again, search) on the bundled SIFT-5k set, scored against exact
//! truth over the live rows; resume after an interruption between steps, and a fresh start
//! when the table is not in the state the last stored step left. They fail, never skip,
//! without the servers' URLs.

use annbench::Error;
use annbench::results::stream::StreamRun;
use annbench::runner::stream::{StreamOptions, run_stream};
use annbench::runner::{Event, NoProgress, Progress};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// One stream test at a time per server: they share the stream tables of one dataset name.
static SERIAL: Mutex<()> = Mutex::new(());

const DATASET: &str = "sift-5k-128-euclidean";

fn simple_runbook(dir: &Path) -> PathBuf {
    let path = dir.join("simple.yaml");
    std::fs::write(
        &path,
        format!(
            "{DATASET}:\n  max_pts: 4500\n  1:\n    operation: insert\n    start: 0\n    end: 4500\n  \
             2:\n    operation: search\n  3:\n    operation: delete\n    start: 0\n    end: 2250\n  \
             4:\n    operation: search\n  5:\n    operation: insert\n    start: 0\n    end: 2250\n  \
             6:\n    operation: search\n  gt_url: none\n"
        ),
    )
    .unwrap();
    path
}

/// A data dir holding a copy of the bundled SIFT-5k set, and options for `algorithm`.
fn setup(dir: &Path, algorithm: &str, build: &str, query: &str) -> StreamOptions {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("datasets/{DATASET}.hdf5")),
        data.join(format!("{DATASET}.hdf5")),
    )
    .unwrap();
    StreamOptions {
        dataset: DATASET.into(),
        data_dir: data,
        runbook: simple_runbook(dir),
        algorithm: algorithm.into(),
        build_overrides: build.split(';').map(String::from).collect(),
        query_overrides: vec![query.into()],
        count: 10,
        runs: 2,
        min_time: Duration::from_millis(50),
        batch: 700,
        markers: 2,
        results_dir: dir.join("results"),
        // Each test has a schema of its own: tests run in parallel.
        backend: annbench::backend::BackendOptions {
            schema: Some(format!("annbench_stream_{}", algorithm.replace('-', "_"))),
            ..Default::default()
        },
        ..StreamOptions::default()
    }
}

/// Stops the run after `after` steps are stored.
struct StopAfter {
    after: usize,
    seen: AtomicUsize,
    stop: AtomicBool,
}

impl Progress for StopAfter {
    fn on_event(&self, event: &Event<'_>) {
        if let Event::StreamStep { .. } = event {
            if self.seen.fetch_add(1, Ordering::SeqCst) + 1 >= self.after {
                self.stop.store(true, Ordering::SeqCst);
            }
        }
    }
    fn cancelled(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// The live rows after each step of the simple runbook.
const LIVE: [usize; 6] = [4500, 4500, 2250, 2250, 4500, 4500];

fn check_run(run: &StreamRun, algorithm: &str) {
    assert!(run.complete, "{algorithm}: {run:?}");
    let live: Vec<usize> = run.steps.iter().map(|s| s.live_rows).collect();
    assert_eq!(live, LIVE, "{algorithm}");
    for s in &run.steps {
        match s.operation.as_str() {
            "search" => {
                let f = &s.searches[0];
                // Deleted rows are never answers: every returned id is live, and the recall
                // is against the truth over the live rows (a table that kept the deleted
                // rows would score about half of this at step 4).
                assert_eq!(f.not_live, 0, "{algorithm} step {}: {f:?}", s.step);
                assert!(
                    f.recall >= 0.9,
                    "{algorithm} step {}: recall {} against the live truth",
                    s.step,
                    f.recall
                );
                assert!(
                    f.qps > 0.0 && f.qps_low <= f.qps && f.qps <= f.qps_high,
                    "{f:?}"
                );
            }
            "insert" | "delete" => {
                let w = s.write.as_ref().expect("a write step has its figures");
                // Freshness markers on inserts into an index only, as many as asked (setup:
                // 2); IVFFlat's first insert comes before its index.
                let markers = w.freshness.as_ref().map(|f| f.markers);
                let before_index = run.build_after_step.is_some_and(|b| s.step <= b);
                let expected = (s.operation == "insert" && !before_index).then(|| w.batches.min(2));
                assert_eq!(markers, expected, "{algorithm} step {}: {w:?}", s.step);
                assert_eq!(w.rows_changed, w.rows, "{algorithm} step {}: {w:?}", s.step);
                assert!(w.achieved_rate > 0.0 && w.batches >= 1, "{w:?}");
                let sizes = s.sizes.as_ref().expect("sizes after a write");
                assert_eq!(
                    sizes.rows as usize, s.live_rows,
                    "{algorithm} step {}",
                    s.step
                );
            }
            other => panic!("unexpected step {other}"),
        }
    }
}

fn simple_run_and_resume(algorithm: &str, build: &str, query: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let opts = setup(dir.path(), algorithm, build, query);
    // Interrupted after step 3 is stored: the rerun resumes after it.
    let stop = StopAfter {
        after: 3,
        seen: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
    };
    match run_stream(&opts, &stop) {
        Err(Error::Interrupted) => {}
        other => panic!("{algorithm}: expected an interruption, got {other:?}"),
    }
    let summary = run_stream(&opts, &NoProgress).unwrap();
    let outcome = &summary.runs[0];
    assert_eq!(outcome.resumed_after, Some(3), "{algorithm}");
    check_run(&outcome.run, algorithm);
    // The three stored steps were kept, not measured again.
    let started: Vec<f64> = outcome.run.steps.iter().map(|s| s.started).collect();
    assert!(started.windows(2).all(|w| w[0] <= w[1]), "{started:?}");
    // Complete: not run again.
    let again = run_stream(&opts, &NoProgress).unwrap();
    assert!(again.runs[0].skipped, "{algorithm}");
    // Export: one row per step (the searches once per query point).
    let table = annbench::report::stream::stream_table(std::slice::from_ref(&outcome.run));
    assert_eq!(table.rows.len(), 6);
    // The HTML report of a dataset with streaming runs alone: their timeline.
    let options = annbench::report::html::ReportOptions {
        streams: vec![outcome.run.clone()],
        ..Default::default()
    };
    let html = annbench::report::html::html_report(Vec::new(), &options).unwrap();
    for part in [
        "chart-stream-recall",
        "chart-stream-qps",
        "chart-stream-rate",
        "mean recall",
    ] {
        assert!(html.contains(part), "{algorithm}: the report has no {part}");
    }
}

#[test]
fn pgvector_simple_runbook_resumes_after_an_interruption() {
    simple_run_and_resume("pgvector", "m=16;ef_construction=64", "ef_search=100");
}

#[test]
fn mariadb_simple_runbook_resumes_after_an_interruption() {
    simple_run_and_resume("mariadb", "m=16", "ef_search=100");
}

#[test]
fn pgvector_ivfflat_builds_after_the_first_insert() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let opts = setup(dir.path(), "pgvector_ivfflat", "lists=20", "probes=20");
    let run = run_stream(&opts, &NoProgress).unwrap().runs.remove(0).run;
    assert_eq!(run.build_after_step, Some(1));
    // The first insert runs before the index exists: no marker can be found, none is sent.
    let first = run.steps[0].write.as_ref().unwrap();
    assert!(first.freshness.is_none(), "{first:?}");
    check_run(&run, "pgvector_ivfflat");
}

#[test]
fn a_table_changed_since_the_last_step_starts_again() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(
        dir.path(),
        "pgvector",
        "m=8;ef_construction=32",
        "ef_search=40",
    );
    opts.backend.schema = Some("annbench_stream_changed".into());
    let stop = StopAfter {
        after: 2,
        seen: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
    };
    assert!(matches!(run_stream(&opts, &stop), Err(Error::Interrupted)));
    // Another run of the same dataset on the same schema with other parameters recreates
    // the stream table: the stored steps no longer describe it.
    let mut other = opts.clone();
    other.build_overrides = vec!["m=4".into(), "ef_construction=16".into()];
    other.results_dir = dir.path().join("other-results");
    run_stream(&other, &NoProgress).unwrap();
    let warnings = Warnings::default();
    let summary = run_stream(&opts, &warnings).unwrap();
    assert_eq!(summary.runs[0].resumed_after, None);
    let w = warnings.0.lock().unwrap().join("\n");
    assert!(w.contains("starting again from the first step"), "{w}");
    check_run(&summary.runs[0].run, "pgvector");
}

#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl Progress for Warnings {
    fn on_event(&self, event: &Event<'_>) {
        if let Event::Warning(w) = event {
            self.0.lock().unwrap().push(w.to_string());
        }
    }
}

#[test]
fn a_runbook_that_deletes_rows_that_are_not_live_is_refused_before_any_server_work() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(
        dir.path(),
        "pgvector",
        "m=8;ef_construction=32",
        "ef_search=40",
    );
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        format!(
            "{DATASET}:\n  max_pts: 100\n  1: {{operation: insert, start: 0, end: 100}}\n  \
             2: {{operation: delete, start: 50, end: 150}}\n  3: {{operation: search}}\n"
        ),
    )
    .unwrap();
    opts.runbook = bad;
    // No server is reachable at this URL: the runbook is refused first.
    opts.backend = annbench::backend::BackendOptions::default().with_url(
        annbench::connect::ServerKind::Postgres,
        "postgres://u:p@127.0.0.1:1/db",
    );
    let e = run_stream(&opts, &NoProgress).unwrap_err().to_string();
    assert!(e.contains("step 2"), "{e}");
}

/// Ends every server session of the run (those whose last statement names its schema) once
/// `after` steps are stored: what a server restart or a crash looks like to the client.
struct EndSessionsAfter {
    algorithm: &'static str,
    schema: String,
    after: usize,
    seen: AtomicUsize,
    ended: AtomicUsize,
}

impl EndSessionsAfter {
    fn end_sessions(&self) -> usize {
        if self.algorithm == "mariadb" {
            use mysql::prelude::Queryable;
            let url = annbench::connect::server_url(annbench::connect::ServerKind::MariaDb, None)
                .unwrap();
            let mut admin = annbench::backend::mariadb::server::connect(&url).unwrap();
            // Idle MariaDB sessions show no statement: every other session of the test user
            // (the stream tests run one at a time, under SERIAL).
            let ids: Vec<u64> = admin
                .query(
                    "SELECT ID FROM information_schema.PROCESSLIST \
                     WHERE USER = SUBSTRING_INDEX(USER(), '@', 1) AND ID <> CONNECTION_ID()",
                )
                .unwrap();
            for id in &ids {
                // A session may end between the listing and the kill.
                let _ = admin.query_drop(format!("KILL CONNECTION {id}"));
            }
            ids.len()
        } else {
            let url = annbench::connect::server_url(annbench::connect::ServerKind::Postgres, None)
                .unwrap();
            let mut admin = annbench::backend::postgres::server::connect(&url).unwrap();
            let like = format!("%{}%", self.schema);
            admin
                .query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE query LIKE $1 AND pid <> pg_backend_pid()",
                    &[&like],
                )
                .unwrap()
                .len()
        }
    }
}

impl Progress for EndSessionsAfter {
    fn on_event(&self, event: &Event<'_>) {
        if let Event::StreamStep { .. } = event {
            if self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.after {
                self.ended.store(self.end_sessions(), Ordering::SeqCst);
                // pg_terminate_backend only signals the processes: give them time to go.
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
}

/// The sessions end after step 3 (the delete): the run fails with the server's error in
/// words, the three steps stay stored, and the rerun resumes after them.
fn sessions_ended_mid_run(algorithm: &'static str, build: &str, query: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(dir.path(), algorithm, build, query);
    let schema = format!("annbench_stream_ended_{algorithm}");
    opts.backend.schema = Some(schema.clone());
    let ending = EndSessionsAfter {
        algorithm,
        schema,
        after: 3,
        seen: AtomicUsize::new(0),
        ended: AtomicUsize::new(0),
    };
    let e = match run_stream(&opts, &ending) {
        Err(e) => e.to_string(),
        Ok(s) => panic!("{algorithm}: the run went on without its sessions: {s:?}"),
    };
    assert!(
        ending.ended.load(Ordering::SeqCst) >= 1,
        "{algorithm}: no session ended"
    );
    assert!(
        e.contains("connection") && !e.contains("panicked") && !e.contains("Error {"),
        "{algorithm}: {e}"
    );
    // Nothing of the run was lost: the file holds the three steps before the end.
    let stored: Vec<PathBuf> = walk(&dir.path().join("results"));
    assert_eq!(stored.len(), 1, "{algorithm}: {stored:?}");
    let run: StreamRun =
        serde_json::from_str(&std::fs::read_to_string(&stored[0]).unwrap()).unwrap();
    assert!(!run.complete, "{algorithm}");
    assert_eq!(run.steps.len(), 3, "{algorithm}");
    // The rerun (the server back, new sessions) resumes after step 3 and completes.
    let summary = run_stream(&opts, &NoProgress).unwrap();
    assert_eq!(summary.runs[0].resumed_after, Some(3), "{algorithm}");
    check_run(&summary.runs[0].run, algorithm);
}

/// Every JSON file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out
}

#[test]
fn pgvector_sessions_ended_mid_run_fail_clearly_and_the_rerun_resumes() {
    sessions_ended_mid_run("pgvector", "m=8;ef_construction=32", "ef_search=40");
}

#[test]
fn mariadb_sessions_ended_mid_run_fail_clearly_and_the_rerun_resumes() {
    sessions_ended_mid_run("mariadb", "m=8", "ef_search=40");
}

/// 1,000 rows inserted, all but 5 deleted, then searched with k = 10: recall is over the 5
/// live rows, and a missing answer is a miss (it once scored as a hit: recall 1.0 where the
/// index returned 8 ids over 20 queries). Each query answered with fewer than 5 ids misses
/// at least one of them, which bounds the recall.
fn few_live_rows(algorithm: &str, build: &str, query: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(dir.path(), algorithm, build, query);
    opts.backend.schema = Some(format!("annbench_stream_few_{algorithm}"));
    let rb = dir.path().join("few.yaml");
    std::fs::write(
        &rb,
        format!(
            "{DATASET}:\n  max_pts: 1000\n  1: {{operation: insert, start: 0, end: 1000}}\n  \
             2: {{operation: delete, start: 0, end: 995}}\n  3: {{operation: search}}\n"
        ),
    )
    .unwrap();
    opts.runbook = rb;
    let run = run_stream(&opts, &NoProgress).unwrap().runs.remove(0).run;
    let s = &run.steps[2];
    assert_eq!(s.live_rows, 5);
    let f = &s.searches[0];
    let q = 500.0; // the bundled set's queries
    let bound = 1.0 - f.short as f64 / (q * 5.0);
    assert!(
        f.recall <= bound + 1e-9,
        "{algorithm}: recall {} with {} of 500 queries answered short (at most {bound})",
        f.recall,
        f.short
    );
    assert_eq!(f.not_live, 0, "{algorithm}: {f:?}");
}

#[test]
fn pgvector_few_live_rows_score_missing_answers_as_misses() {
    few_live_rows("pgvector", "m=8;ef_construction=32", "ef_search=10");
}

#[test]
fn mariadb_few_live_rows_score_missing_answers_as_misses() {
    few_live_rows("mariadb", "m=8", "ef_search=10");
}

#[test]
fn a_count_above_the_train_rows_is_refused_before_any_server_work() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(dir.path(), "pgvector", "m=8", "ef_search=10");
    opts.count = 4501;
    let e = run_stream(&opts, &NoProgress).unwrap_err().to_string();
    assert!(
        e.contains("--count 4501 is larger than the 4500 train vectors"),
        "{e}"
    );
}

/// A runbook at `dir/name.yaml` with `steps` (YAML lines under the entry).
fn runbook_of(dir: &Path, name: &str, steps: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, format!("{DATASET}:\n{steps}")).unwrap();
    path
}

/// A maintenance step the algorithm's database has not (`vacuum` on MariaDB, `optimize` on
/// PostgreSQL) once failed after step 1 had written; it is refused from the declarations,
/// before any server is reached.
#[test]
fn a_maintenance_step_the_database_has_not_is_refused_before_any_server_work() {
    for (algorithm, what, kind, url) in [
        (
            "mariadb",
            "vacuum",
            annbench::connect::ServerKind::MariaDb,
            "mysql://u:p@127.0.0.1:1/db",
        ),
        (
            "pgvector",
            "optimize",
            annbench::connect::ServerKind::Postgres,
            "postgres://u:p@127.0.0.1:1/db",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = setup(dir.path(), algorithm, "m=8", "ef_search=40");
        opts.build_overrides.clear();
        opts.runbook = runbook_of(
            dir.path(),
            "maintenance",
            &format!(
                "  1: {{operation: insert, start: 0, end: 100}}\n  2: {{operation: maintenance, \
                 what: {what}}}\n  3: {{operation: search}}\n"
            ),
        );
        // No server is reachable at this URL: the runbook is refused first.
        opts.backend = annbench::backend::BackendOptions::default().with_url(kind, url);
        let e = run_stream(&opts, &NoProgress).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "step 2 (maintenance): {algorithm} has no '{what}' maintenance operation"
            )),
            "{algorithm}: {e}"
        );
    }
}

/// More connections at once than the server takes (`during: {clients: 1000}`, within the 1024
/// clients annbench allows) once failed after step 1 with "too many connections"; the server's
/// limit is read at the start and the run refused before any write, naming the count.
fn too_many_connections(algorithm: &str, build: &str, query: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(dir.path(), algorithm, build, query);
    opts.runbook = runbook_of(
        dir.path(),
        "crowded",
        "  1: {operation: insert, start: 0, end: 100, during: {clients: 1000}}\n  2: \
         {operation: search}\n",
    );
    let e = run_stream(&opts, &NoProgress).unwrap_err().to_string();
    assert!(
        e.contains("connections from this user (max_connections")
            && e.contains("this run opens up to 1")
            && e.contains("1000 searching during step 1")
            && e.contains("raise the server's max_connections"),
        "{algorithm}: {e}"
    );
    assert!(
        !dir.path().join("results").exists() || walk(&dir.path().join("results")).is_empty(),
        "{algorithm}: nothing is stored"
    );
}

#[test]
fn pgvector_more_connections_than_the_server_takes_are_refused_before_any_write() {
    too_many_connections("pgvector", "m=8;ef_construction=32", "ef_search=40");
}

#[test]
fn mariadb_more_connections_than_the_server_takes_are_refused_before_any_write() {
    too_many_connections("mariadb", "m=8", "ef_search=40");
}

/// Cancelled `after` past the stored step `step`.
struct CancelLater {
    step: u32,
    after: Duration,
    at: Mutex<Option<std::time::Instant>>,
}

impl Progress for CancelLater {
    fn on_event(&self, event: &Event<'_>) {
        if let Event::StreamStep { record, .. } = event {
            if record.step == self.step {
                *self.at.lock().unwrap() = Some(std::time::Instant::now() + self.after);
            }
        }
    }
    fn cancelled(&self) -> bool {
        self.at
            .lock()
            .unwrap()
            .is_some_and(|t| std::time::Instant::now() >= t)
    }
}

/// Ctrl-C while a paced insert waits for its next batch (20 s apart) once held the run until
/// the wait ended, and the CLI then blamed the server; annbench's own waits end at once.
fn stop_during_a_paced_insert(algorithm: &str, build: &str, query: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = setup(dir.path(), algorithm, build, query);
    opts.runbook = runbook_of(
        dir.path(),
        "paced",
        "  1: {operation: insert, start: 0, end: 100}\n  2: {operation: search}\n  3: \
         {operation: insert, start: 100, end: 300, batch: 100, rate: 5}\n  4: {operation: \
         search}\n",
    );
    // Step 3 writes its first 100 rows, then waits 20 s for the second batch; the stop comes
    // a second into that wait.
    let progress = CancelLater {
        step: 2,
        after: Duration::from_secs(1),
        at: Mutex::new(None),
    };
    let outcome = run_stream(&opts, &progress);
    let returned = std::time::Instant::now();
    assert!(
        matches!(outcome, Err(Error::Interrupted)),
        "{algorithm}: {outcome:?}"
    );
    let cancelled = progress.at.lock().unwrap().expect("step 2 was stored");
    let late = returned.saturating_duration_since(cancelled);
    // "At once": a poll of 20 ms; the bound is generous, the wait it replaces was 19 s.
    assert!(
        late < Duration::from_secs(3),
        "{algorithm}: the run ended {late:?} after the stop"
    );
}

#[test]
fn pgvector_a_stop_during_a_paced_insert_ends_the_wait_at_once() {
    stop_during_a_paced_insert("pgvector", "m=8;ef_construction=32", "ef_search=40");
}

#[test]
fn mariadb_a_stop_during_a_paced_insert_ends_the_wait_at_once() {
    stop_during_a_paced_insert("mariadb", "m=8", "ef_search=40");
}
