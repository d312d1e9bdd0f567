//! Signals to `annbench run` during a pgvector index build, against the real server: SIGTERM
//! (what `timeout`, CI runners and `docker stop` send) and SIGHUP stop the sweep like Ctrl-C
//! (one message, exit status 130, no build left running, no index left), and after a SIGKILL
//! an immediate rerun succeeds (it once failed on the dead run's build, still running on the
//! server).

mod servers_support;

use servers_support::Stopped;

use annbench::backend::postgres::server::connect;
use annbench::backend::table::table_name;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The tests of this file run one at a time: one stops server processes (SIGSTOP), and a run
/// of another test waiting on what they hold would fail for that reason alone.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// 4000 SIFT rows saved as `test-signals-<case>.hdf5` under `dir`.
fn dataset(dir: &Path, case: &str) -> (PathBuf, String) {
    let sift = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sift-5k-128-euclidean.hdf5");
    let mut d = annbench::dataset::hdf5_io::open_head(&sift, 4000, 10).unwrap();
    d.name = format!("test-signals-{case}");
    let file = dir.join(format!("{}.hdf5", d.name));
    annbench::dataset::save(&d, &file).unwrap();
    (file, d.name)
}

fn annbench_run(dir: &Path, file: &Path, build: &str) -> Command {
    let grid = dir.join(format!("grid-{}.yml", build.len()));
    std::fs::write(
        &grid,
        format!(
            "algorithm: pgvector\ngroups:\n  - build: {{{build}}}\n    query: {{ef_search: [10]}}\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
    cmd.args(["run", "--algorithm", "pgvector", "--runs", "1", "--dataset"])
        .arg(file)
        .arg("--config")
        .arg(&grid)
        .arg("--results")
        .arg(dir.join("results"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Kills the child when the test fails half-way.
struct Reaped(Option<Child>);

impl Reaped {
    /// Wait for the child and collect its output.
    fn output(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Server sessions running a statement on `table`'s index (the build).
fn builds(pg: &mut postgres::Client, index: &str) -> i64 {
    pg.query_one(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
        &[&format!("CREATE INDEX {index} %")],
    )
    .unwrap()
    .get(0)
}

/// Start a slow build, wait until the server runs it, then send `signal`.
fn signal_during_build(dir: &Path, file: &Path, index: &str, signal: libc::c_int) -> Reaped {
    let mut pg = connect(&servers_support::postgres()).unwrap();
    let child = Reaped(Some(
        annbench_run(dir, file, "M: [48], ef_construction: [400]")
            .spawn()
            .unwrap(),
    ));
    let t0 = Instant::now();
    while builds(&mut pg, index) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the build never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sends a signal to the child this test started.
    assert_eq!(
        unsafe { libc::kill(child.0.as_ref().unwrap().id() as libc::pid_t, signal) },
        0
    );
    child
}

/// No build running on `index`, and no index left (waiting a few seconds for the server).
fn assert_tidy(index: &str) {
    let mut pg = connect(&servers_support::postgres()).unwrap();
    let t0 = Instant::now();
    while builds(&mut pg, index) > 0 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(builds(&mut pg, index), 0, "a build is still running");
    let left: Option<String> = pg
        .query_one(
            "SELECT to_regclass($1)::text",
            &[&format!("annbench.{index}")],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, None, "the index was left behind");
}

#[test]
fn sigterm_and_sighup_stop_a_build_like_ctrl_c() {
    let _alone = one_at_a_time();
    for (case, signal) in [("term", libc::SIGTERM), ("hup", libc::SIGHUP)] {
        let dir = tempfile::tempdir().unwrap();
        let (file, name) = dataset(dir.path(), case);
        let index = format!("{}_vidx", table_name("vec", &name).unwrap());
        let out = signal_during_build(dir.path(), &file, &index, signal).output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{case}: {stderr}");
        assert_eq!(stderr.matches("interrupted").count(), 1, "{case}: {stderr}");
        assert!(!stderr.contains("error:"), "{case}: {stderr}");
        assert_tidy(&index);
    }
}

#[test]
fn a_run_right_after_a_sigkill_during_a_build_succeeds() {
    let _alone = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (file, name) = dataset(dir.path(), "kill");
    let index = format!("{}_vidx", table_name("vec", &name).unwrap());
    signal_during_build(dir.path(), &file, &index, libc::SIGKILL).output();
    let rerun = annbench_run(dir.path(), &file, "M: [8], ef_construction: [32]")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    assert_tidy(&index);
}

/// The query sessions (searchers) that last ran a query on `table`. Only those: the run's
/// admin session may be inside a statement on the shared metadata table, and stopping it
/// there would hold a lock that other tests' runs wait for.
fn query_sessions(pg: &mut postgres::Client, table: &str) -> Vec<i32> {
    pg.query(
        "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE $1 \
         AND query LIKE 'SELECT id FROM %ORDER BY%'",
        &[&format!("%{table}%")],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

/// Point files under `dir` (hidden temp files aside).
fn stored_points(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                stored_points(&p)
            } else {
                let name = e.file_name().to_string_lossy().into_owned();
                usize::from(!name.starts_with('.') && name.ends_with(".hdf5"))
            }
        })
        .sum()
}

/// The server process answering the queries stops (SIGSTOP) after the first point is stored
/// (points measured one after the other, so the first is stored before the second starts);
/// Ctrl-C then ends the run within the stop's bound (exit 130, one message), and the stored
/// point stays. Without the watchdog the query waited for ever.
#[test]
fn ctrl_c_ends_a_run_whose_queries_wait_on_a_stopped_server_process() {
    let _alone = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (file, name) = dataset(dir.path(), "stall");
    let table = table_name("vec", &name).unwrap().to_string();
    let grid = dir.path().join("grid-stall.yml");
    std::fs::write(
        &grid,
        "algorithm: pgvector\ngroups:\n  - build: {M: [8], ef_construction: [32]}\n    \
         query: {ef_search: [10, 20, 40, 80]}\n",
    )
    .unwrap();
    let child = Reaped(Some(
        Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args(["run", "--algorithm", "pgvector", "--runs", "2"])
            .args(["--min-time", "3s", "--order", "points", "--dataset"])
            .arg(&file)
            .arg("--config")
            .arg(&grid)
            .arg("--results")
            .arg(dir.path().join("results"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let t0 = Instant::now();
    while stored_points(&dir.path().join("results")) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "no point was stored"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut pg = connect(&servers_support::postgres()).unwrap();
    let mut pids = query_sessions(&mut pg, &table);
    while pids.is_empty() {
        if t0.elapsed() > Duration::from_secs(180) {
            let seen: Vec<String> = pg
                .query("SELECT query FROM pg_stat_activity", &[])
                .unwrap()
                .iter()
                .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
                .collect();
            panic!("no query session on {table}: {seen:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
        pids = query_sessions(&mut pg, &table);
    }
    let _stopped: Vec<Stopped> = pids.into_iter().map(Stopped::new).collect();
    std::thread::sleep(Duration::from_millis(500));
    let t1 = Instant::now();
    // SAFETY: sends a signal to the child this test started.
    assert_eq!(
        unsafe { libc::kill(child.0.as_ref().unwrap().id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = child.output();
    let took = t1.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {stderr}");
    assert_eq!(stderr.matches("interrupted").count(), 1, "{stderr}");
    assert!(stored_points(&dir.path().join("results")) >= 1);
}
