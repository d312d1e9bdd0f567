//! A streaming run stopped at any moment resumes to the results of an uninterrupted run, on
//! both databases: stops inside every kind of step (insert, delete, replace, search,
//! maintenance) from the library, Ctrl-C and SIGKILL of the command in the middle of a write
//! step, a server restart in the middle of a write step, a table whose marker is a step ahead
//! of the stored file, and a table changed by hand (which starts again). Every rerun ends
//! with the live sets of the runbook, the table holding exactly them, and recall against
//! their exact truth.

mod servers_support;

use annbench::Error;
use annbench::results::stream::StreamRun;
use annbench::runner::stream::{StreamOptions, run_stream};
use annbench::runner::{Event, NoProgress, Progress};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const DATASET: &str = "sift-5k-128-euclidean";

/// Tests that restart a server run alone against it.
static TWIN: Mutex<()> = Mutex::new(());

/// Insert, search, delete, search, replace, search, insert again, maintenance, search; write
/// steps in batches of 150 rows, paced to `rate` rows/s when given (so that a signal lands
/// inside them).
fn runbook(dir: &Path, maintenance: &str, rate: Option<u32>) -> PathBuf {
    let pace = rate.map_or(String::new(), |r| format!(", rate: {r}"));
    let path = dir.join("resume.yaml");
    std::fs::write(
        &path,
        format!(
            "{DATASET}:\n  max_pts: 3000\n\
             \x20 1: {{operation: insert, start: 0, end: 3000, batch: 300}}\n\
             \x20 2: {{operation: search}}\n\
             \x20 3: {{operation: delete, start: 0, end: 1500, batch: 150{pace}}}\n\
             \x20 4: {{operation: search}}\n\
             \x20 5: {{operation: replace, tags_start: 1500, tags_end: 2500, ids_start: 3000, \
             ids_end: 4000, batch: 150{pace}}}\n\
             \x20 6: {{operation: search}}\n\
             \x20 7: {{operation: insert, start: 0, end: 1500, batch: 150{pace}}}\n\
             \x20 8: {{operation: maintenance, what: [{maintenance}]}}\n\
             \x20 9: {{operation: search}}\n"
        ),
    )
    .unwrap();
    path
}

/// The live rows after each step of [`runbook`].
const LIVE: [usize; 9] = [3000, 3000, 1500, 1500, 1500, 1500, 3000, 3000, 3000];

struct Db {
    algorithm: &'static str,
    build: &'static str,
    query: &'static str,
    maintenance: &'static str,
    flag: &'static str,
}

const PG: Db = Db {
    algorithm: "pgvector",
    build: "m=8;ef_construction=32",
    query: "ef_search=80",
    maintenance: "vacuum",
    flag: "--postgres",
};

const MARIADB: Db = Db {
    algorithm: "mariadb",
    build: "m=8",
    query: "ef_search=80",
    maintenance: "optimize",
    flag: "--mariadb",
};

/// A data dir with a copy of the bundled SIFT-5k set and options for `db` on `schema`.
fn setup(dir: &Path, db: &Db, schema: &str, rate: Option<u32>) -> StreamOptions {
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
        runbook: runbook(dir, db.maintenance, rate),
        algorithm: db.algorithm.into(),
        build_overrides: db.build.split(';').map(String::from).collect(),
        query_overrides: vec![db.query.into()],
        count: 10,
        runs: 1,
        min_time: Duration::ZERO,
        markers: 0,
        results_dir: dir.join("results"),
        backend: annbench::backend::BackendOptions {
            schema: Some(schema.into()),
            ..Default::default()
        },
        ..StreamOptions::default()
    }
}

/// What an uninterrupted run gives: every step, the runbook's live sets, the table holding
/// them after every write, every answer live and recall against the live truth.
fn check_complete(run: &StreamRun, what: &str) {
    assert!(run.complete, "{what}: {run:?}");
    let live: Vec<usize> = run.steps.iter().map(|s| s.live_rows).collect();
    assert_eq!(live, LIVE, "{what}");
    let steps: Vec<u32> = run.steps.iter().map(|s| s.step).collect();
    assert_eq!(steps, (1..=9).collect::<Vec<_>>(), "{what}");
    for s in &run.steps {
        if let Some(w) = &s.write {
            // Every row the step names changed once (a partial replace written again once
            // counted only the rest on MariaDB).
            assert_eq!(w.rows_changed, w.rows, "{what} step {}: {w:?}", s.step);
        }
        if let Some(sizes) = &s.sizes {
            assert_eq!(sizes.rows as usize, s.live_rows, "{what} step {}", s.step);
        }
        if s.operation == "search" {
            let f = &s.searches[0];
            assert_eq!(f.not_live, 0, "{what} step {}: {f:?}", s.step);
            assert!(f.recall >= 0.9, "{what} step {}: {f:?}", s.step);
        }
    }
}

/// Stops the run at the `polls`-th look at a stop request once step `after` is stored in
/// this run (inside the step after it: before one of its batches, or in a search pass).
struct StopIn {
    after: u32,
    polls: usize,
    reached: std::sync::atomic::AtomicBool,
    polled: AtomicUsize,
}

impl StopIn {
    fn new(after: u32, polls: usize) -> Self {
        StopIn {
            after,
            polls,
            reached: std::sync::atomic::AtomicBool::new(false),
            polled: AtomicUsize::new(0),
        }
    }
}

impl Progress for StopIn {
    fn on_event(&self, event: &Event<'_>) {
        if let Event::StreamStep { record, .. } = event {
            if record.step >= self.after {
                self.reached.store(true, Ordering::SeqCst);
            }
        }
    }
    fn cancelled(&self) -> bool {
        self.reached.load(Ordering::SeqCst)
            && self.polled.fetch_add(1, Ordering::SeqCst) + 1 >= self.polls
    }
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

/// The run's stored file.
fn stored(dir: &Path) -> (PathBuf, StreamRun) {
    let files = walk(&dir.join("results"));
    assert_eq!(files.len(), 1, "{files:?}");
    let run = annbench::results::stream::read_stream(&files[0])
        .unwrap()
        .unwrap();
    (files[0].clone(), run)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out
}

/// One run stopped inside each kind of step in turn (a delete after two of its ten batches,
/// a search pass, a replace, an insert, a maintenance step), each rerun resuming after the
/// last stored step; the last rerun completes as an uninterrupted run would.
fn stops_inside_every_kind_of_step(db: &Db) {
    let dir = tempfile::tempdir().unwrap();
    let schema = format!("annbench_resume_steps_{}", db.algorithm);
    let opts = setup(dir.path(), db, &schema, None);
    // (the step stored before the stop, polls into the next step): the delete after some of
    // its batches, the search's recall pass, the replace after some batches, the insert after
    // some, the maintenance step's recall pass before its operation. The rows the stopped
    // delete and insert had committed are read from the table: the rerun must undo exactly
    // those.
    let mut committed = std::collections::BTreeMap::new();
    for (after, polls) in [(2, 5), (3, 2), (4, 5), (6, 6), (7, 3)] {
        let stop = StopIn::new(after, polls);
        match run_stream(&opts, &stop) {
            Err(Error::Interrupted) => {}
            other => panic!("{}: stop in step {}: {other:?}", db.algorithm, after + 1),
        }
        let (_, run) = stored(dir.path());
        assert_eq!(run.steps.len(), after as usize, "{}", db.algorithm);
        let rows = table_rows(db, &schema);
        match after + 1 {
            3 => committed.insert(3, 3000 - rows),
            7 => committed.insert(7, rows - 1500),
            _ => None,
        };
    }
    let warnings = Warnings::default();
    let summary = run_stream(&opts, &warnings).unwrap();
    assert_eq!(summary.runs[0].resumed_after, Some(7), "{}", db.algorithm);
    let run = &summary.runs[0].run;
    check_complete(run, db.algorithm);
    // The stopped delete and insert had whole batches committed: undone, and the steps ran
    // again whole. A replace is written again as it is.
    for (&step, &rows) in &committed {
        assert!(
            rows % 150 == 0 && rows < 1500,
            "{} step {step}: {rows}",
            db.algorithm
        );
        let undone = run.steps[step - 1].undone_rows.unwrap_or(0);
        assert_eq!(undone, rows, "{} step {step}", db.algorithm);
    }
    assert!(
        committed.values().any(|&r| r > 0),
        "{}: no stop left rows to undo: {committed:?}",
        db.algorithm
    );
    // The replace's tags all got their earlier vectors back: MariaDB counts those the stopped
    // run had changed (whole batches), PostgreSQL every row it wrote back.
    let undone = run.steps[4].undone_rows.unwrap_or(0);
    if db.algorithm == "pgvector" {
        assert_eq!(undone, 1000, "{}", db.algorithm);
    } else {
        assert!(
            undone % 150 == 0 && undone < 1000,
            "{}: {undone}",
            db.algorithm
        );
    }
    // The export carries the undone rows and the runbook's fingerprint (runs of two runbooks
    // in one store were once indistinguishable there).
    let table = annbench::report::stream::stream_table(std::slice::from_ref(run));
    let col = |name: &str| table.columns.iter().position(|c| c.name == name).unwrap();
    let (undone_col, step_col, fp_col) =
        (col("undone_rows"), col("step"), col("runbook_fingerprint"));
    for row in &table.rows {
        let annbench::report::render::Cell::Int(step) = row[step_col] else {
            panic!("step {:?}", row[step_col]);
        };
        let want = run.steps[step as usize - 1].undone_rows;
        match (&row[undone_col], want) {
            (annbench::report::render::Cell::Int(n), Some(w)) => assert_eq!(*n as u64, w),
            (annbench::report::render::Cell::Null, None) => {}
            (got, want) => panic!("step {step}: exported {got:?}, stored {want:?}"),
        }
        assert!(
            matches!(&row[fp_col], annbench::report::render::Cell::Text(t) if *t == run.identity.runbook_fingerprint)
        );
    }
    let w = warnings.0.lock().unwrap().join("\n");
    assert!(!w.contains("starting again"), "{}: {w}", db.algorithm);
}

#[test]
fn pgvector_stops_inside_every_kind_of_step_and_resumes() {
    stops_inside_every_kind_of_step(&PG);
}

#[test]
fn mariadb_stops_inside_every_kind_of_step_and_resumes() {
    stops_inside_every_kind_of_step(&MARIADB);
}

/// A stop after a step's marker reached the table but before its record reached the file:
/// the table is one step ahead of the file. The rerun undoes that step and runs it again.
/// Then rows deleted by hand behind the run's back: the rerun starts again and says why.
fn marker_ahead_then_rows_deleted_by_hand(db: &Db) {
    let dir = tempfile::tempdir().unwrap();
    let schema = format!("annbench_resume_ahead_{}", db.algorithm);
    let opts = setup(dir.path(), db, &schema, None);
    assert!(matches!(
        run_stream(&opts, &StopIn::new(3, 1)),
        Err(Error::Interrupted)
    ));
    // Step 3 (the delete of 1500 rows) is in the table and its marker; drop it from the file.
    let (path, mut run) = stored(dir.path());
    assert_eq!(run.steps.len(), 3);
    run.steps.pop();
    annbench::results::stream::write_stream(&path, &run).unwrap();
    let summary = run_stream(&opts, &NoProgress).unwrap();
    assert_eq!(summary.runs[0].resumed_after, Some(2), "{}", db.algorithm);
    let done = &summary.runs[0].run;
    check_complete(done, db.algorithm);
    assert_eq!(done.steps[2].undone_rows, Some(1500), "{}", db.algorithm);

    // Stopped after step 1; then half the table deleted by hand.
    let again = StreamOptions {
        force: true,
        ..opts.clone()
    };
    assert!(matches!(
        run_stream(&again, &StopIn::new(1, 1)),
        Err(Error::Interrupted)
    ));
    delete_by_hand(db, &schema, "id < 1500");
    let warnings = Warnings::default();
    let summary = run_stream(&opts, &warnings).unwrap();
    assert_eq!(summary.runs[0].resumed_after, None, "{}", db.algorithm);
    check_complete(&summary.runs[0].run, db.algorithm);
    let w = warnings.0.lock().unwrap().join("\n");
    assert!(
        w.contains(
            "holds 1500 rows (ids 1500 to 2999) where step 1 left 3000 rows (ids 0 to 2999)"
        ) && w.contains("starting again from the first step"),
        "{}: {w}",
        db.algorithm
    );
}

#[test]
fn pgvector_marker_ahead_of_the_file_and_rows_deleted_by_hand() {
    marker_ahead_then_rows_deleted_by_hand(&PG);
}

#[test]
fn mariadb_marker_ahead_of_the_file_and_rows_deleted_by_hand() {
    marker_ahead_then_rows_deleted_by_hand(&MARIADB);
}

/// `DELETE FROM` the stream table(s) of `schema` `WHERE cond`.
fn delete_by_hand(db: &Db, schema: &str, cond: &str) {
    if db.algorithm == "mariadb" {
        use mysql::prelude::Queryable;
        let url = servers_support::mariadb();
        let mut c = annbench::backend::mariadb::server::connect(&url).unwrap();
        let tables: Vec<String> = c
            .exec(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? \
                 AND TABLE_NAME LIKE 'stream%'",
                (schema,),
            )
            .unwrap();
        assert!(!tables.is_empty());
        for t in tables {
            c.query_drop(format!("DELETE FROM `{schema}`.`{t}` WHERE {cond}"))
                .unwrap();
        }
    } else {
        let url = servers_support::postgres();
        let mut c = annbench::backend::postgres::server::connect(&url).unwrap();
        let tables: Vec<String> = c
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = $1 \
                 AND tablename LIKE 'stream%'",
                &[&schema],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert!(!tables.is_empty());
        for t in tables {
            c.batch_execute(&format!("DELETE FROM \"{schema}\".\"{t}\" WHERE {cond}"))
                .unwrap();
        }
    }
}

/// The rows of the stream table of `schema` (one per test schema).
fn table_rows(db: &Db, schema: &str) -> u64 {
    if db.algorithm == "mariadb" {
        use mysql::prelude::Queryable;
        let mut c =
            annbench::backend::mariadb::server::connect(&servers_support::mariadb()).unwrap();
        let t: String = c
            .exec_first(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? \
                 AND TABLE_NAME LIKE 'stream%'",
                (schema,),
            )
            .unwrap()
            .unwrap();
        c.query_first::<u64, _>(format!("SELECT COUNT(*) FROM `{schema}`.`{t}`"))
            .unwrap()
            .unwrap()
    } else {
        let mut c =
            annbench::backend::postgres::server::connect(&servers_support::postgres()).unwrap();
        let t: String = c
            .query_one(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = $1 \
                 AND tablename LIKE 'stream%'",
                &[&schema],
            )
            .unwrap()
            .get(0);
        let n: i64 = c
            .query_one(&format!("SELECT count(*) FROM \"{schema}\".\"{t}\""), &[])
            .unwrap()
            .get(0);
        n as u64
    }
}

/// `annbench stream` as a user runs it, against `url`.
fn command(dir: &Path, opts: &StreamOptions, db: &Db, url: Option<&str>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_annbench"));
    c.args(["stream", "--dataset", DATASET, "--algorithm", db.algorithm]);
    c.arg("--runbook").arg(&opts.runbook);
    c.arg("--data-dir").arg(&opts.data_dir);
    c.arg("--results").arg(dir.join("results"));
    for b in db.build.split(';') {
        c.args(["--build", b]);
    }
    c.args([
        "--query",
        db.query,
        "--runs",
        "1",
        "--min-time",
        "0",
        "--markers",
        "0",
    ]);
    if let Some(s) = &opts.backend.schema {
        c.args(["--schema", s]);
    }
    if let Some(u) = url {
        c.args([db.flag, u]);
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Waits until the stored file holds `steps` steps (the child still running).
fn wait_for_steps(dir: &Path, child: &mut Child, steps: usize) {
    let t0 = Instant::now();
    loop {
        let files = walk(&dir.join("results"));
        if let Some(f) = files.first() {
            if let Ok(Some(run)) = annbench::results::stream::read_stream(f) {
                if run.steps.len() >= steps {
                    return;
                }
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before step {steps}"
        );
        assert!(t0.elapsed() < Duration::from_secs(180), "no step {steps}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Rerun the command to the end; the stored run.
fn rerun(dir: &Path, opts: &StreamOptions, db: &Db, url: Option<&str>) -> StreamRun {
    let out = command(dir, opts, db, url).output().unwrap();
    assert!(
        out.status.success(),
        "{}: rerun failed: {}",
        db.algorithm,
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resumed after step"),
        "{}: {err}",
        db.algorithm
    );
    stored(dir).1
}

/// Ctrl-C and SIGKILL of `annbench stream` in the middle of a paced write step (step 3, a
/// delete of ten batches at 1000 rows/s), and of step 5 (a replace); each rerun resumes.
fn signals_inside_a_write_step(db: &Db) {
    for (signal, name) in [(libc::SIGINT, "Ctrl-C"), (libc::SIGKILL, "SIGKILL")] {
        let dir = tempfile::tempdir().unwrap();
        let schema = format!("annbench_resume_sig_{}", db.algorithm);
        let opts = setup(dir.path(), db, &schema, Some(1000));
        // Into step 3 (1500 rows at 1000 rows/s) from the start, then into step 5 (1000
        // rows) on the rerun that resumes.
        for (after, wait, force) in [(2, 600, true), (4, 300, false)] {
            let mut cmd = command(dir.path(), &opts, db, None);
            if force {
                cmd.arg("--force");
            }
            let mut child = cmd.spawn().unwrap();
            wait_for_steps(dir.path(), &mut child, after);
            std::thread::sleep(Duration::from_millis(wait));
            // SAFETY: signals the child this test started.
            assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
            let out = child.wait_with_output().unwrap();
            assert!(!out.status.success(), "{}: {name}", db.algorithm);
            if signal == libc::SIGINT {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains("run again")
                        && !err.contains("did not answer")
                        && !err.contains("server running"),
                    "{} {name}: {err}",
                    db.algorithm
                );
            }
            let run = stored(dir.path()).1;
            assert!(run.steps.len() >= after, "{}: {name}", db.algorithm);
        }
        let run = rerun(dir.path(), &opts, db, None);
        check_complete(&run, &format!("{} after {name}", db.algorithm));
    }
}

#[test]
fn pgvector_ctrl_c_and_sigkill_inside_a_write_step_then_resume() {
    signals_inside_a_write_step(&PG);
}

#[test]
fn mariadb_ctrl_c_and_sigkill_inside_a_write_step_then_resume() {
    signals_inside_a_write_step(&MARIADB);
}

/// The server restarted (its `twin` instance, scripts/databases.sh restart-instance) in the
/// middle of a paced write step: the run fails naming the lost server, the rerun resumes.
fn server_restart_inside_a_write_step(db: &Db, instance: &str, var: &str) {
    let _alone = TWIN.lock().unwrap_or_else(|e| e.into_inner());
    let url = annbench::connect::lookup(var)
        .unwrap()
        .unwrap_or_else(|| panic!("{var} is not set: scripts/databases.sh up-instance twin"));
    let dir = tempfile::tempdir().unwrap();
    let schema = format!("annbench_resume_restart_{}", db.algorithm);
    let opts = setup(dir.path(), db, &schema, Some(1000));
    let mut child = command(dir.path(), &opts, db, Some(&url))
        .arg("--force")
        .spawn()
        .unwrap();
    wait_for_steps(dir.path(), &mut child, 2);
    std::thread::sleep(Duration::from_millis(400));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/databases.sh");
    let restarted = Command::new("bash")
        .arg(&script)
        .args(["restart-instance", instance])
        .output()
        .unwrap();
    assert!(
        restarted.status.success(),
        "{}",
        String::from_utf8_lossy(&restarted.stderr)
    );
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The run may have finished step 3 before the server went: then it failed later, or not.
    let run = stored(dir.path()).1;
    if !out.status.success() {
        assert!(
            !err.contains("panicked") && !err.contains("Error {"),
            "{}: {err}",
            db.algorithm
        );
        let run = rerun(dir.path(), &opts, db, Some(&url));
        check_complete(&run, &format!("{} after a restart", db.algorithm));
    } else {
        check_complete(&run, &format!("{} (restart after the run)", db.algorithm));
    }
}

#[test]
fn pgvector_server_restart_inside_a_write_step_then_resume() {
    server_restart_inside_a_write_step(&PG, "postgres:twin", "ANNBENCH_POSTGRES_TWIN_URL");
}

#[test]
fn mariadb_server_restart_inside_a_write_step_then_resume() {
    server_restart_inside_a_write_step(&MARIADB, "mariadb:twin", "ANNBENCH_MARIADB_TWIN_URL");
}
