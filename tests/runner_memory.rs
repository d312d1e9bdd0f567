//! `annbench run --memory` and `scripts/databases.sh --memory` against real managed servers:
//! the `memtest` instances (`scripts/databases.sh up-instance memtest mariadb|postgres`, which
//! scripts/test.sh starts), restarted through the script that `servers.env` names. Each share
//! is stored as its own series, cold and warm, with the share among the server settings; the
//! memory-limited server reads from storage; a rerun measures nothing again; Redis, unmanaged,
//! main and remote servers are refused before any work. They fail, never skip, without the
//! servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::dataset::{Dataset, save};
use annbench::results::{PointResult, load_points};
use backend_util::{data, name};
use std::process::{Command, Output};

/// The tests restart the same instances: one at a time.
static INSTANCES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    INSTANCES.lock().unwrap_or_else(|e| e.into_inner())
}

fn url(var: &str) -> String {
    annbench::connect::lookup(var).unwrap().unwrap_or_else(|| {
        panic!(
            "{var} is not set: run scripts/databases.sh up and up-instance memtest mariadb|postgres"
        )
    })
}

/// The stored points of a sweep of one build on `server` with `extra` arguments, in `dir`.
struct Sweep {
    dir: tempfile::TempDir,
    dataset: String,
}

impl Sweep {
    fn new(algorithm: &str, rows: usize) -> Sweep {
        let dir = tempfile::tempdir().unwrap();
        let (train, test) = data(rows, 10);
        let dataset = Dataset {
            name: name(&format!("{algorithm}-memory")),
            metric: Metric::Euclidean,
            train,
            test,
            ground_truth: None,
        };
        save(&dataset, &dir.path().join(format!("{}.hdf5", dataset.name))).unwrap();
        Sweep {
            dir,
            dataset: dataset.name,
        }
    }

    fn run(&self, algorithm: &str, extra: &[&str]) -> Output {
        self.command(algorithm, extra).output().unwrap()
    }

    fn command(&self, algorithm: &str, extra: &[&str]) -> Command {
        let file = self.dir.path().join(format!("{}.hdf5", self.dataset));
        let results = self.dir.path().join("results");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
        cmd.args([
            "run",
            "--dataset",
            file.to_str().unwrap(),
            "--algorithm",
            algorithm,
        ])
        .args([
            "--results",
            results.to_str().unwrap(),
            "--runs",
            "2",
            "--min-time",
            "0",
        ])
        .args(["-q"])
        .args(extra);
        cmd
    }

    fn points(&self) -> Vec<PointResult> {
        let results = self.dir.path().join("results");
        load_points(&results, &self.dataset, 10, self.dir.path()).unwrap_or_default()
    }
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn series<'a>(points: &'a [PointResult], label: &str) -> Vec<&'a PointResult> {
    points
        .iter()
        .filter(|p| p.label.as_deref() == Some(label))
        .collect()
}

fn setting<'a>(p: &'a PointResult, name: &str) -> &'a str {
    p.environment
        .server_settings
        .get(name)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no {name} in {:?}", p.environment.server_settings))
}

/// Every share has a cold series (one timed pass) and a warm one (the usual passes) of the
/// same build, its share recorded; with `same_answers`, the answers of the full-memory points
/// (pgvector's search does not depend on what its buffers hold; MariaDB's graph cache does).
fn check_series(
    points: &[PointResult],
    labels: &[(&str, &str)],
    queries: usize,
    same_answers: bool,
) {
    let full = series(points, "m");
    assert_eq!(full.len(), queries, "{:?}", labels_of(points));
    for (label, share) in labels {
        for cold in [true, false] {
            let l = if cold {
                format!("{label}-cold")
            } else {
                label.to_string()
            };
            let s = series(points, &l);
            assert_eq!(s.len(), queries, "series {l}: {:?}", labels_of(points));
            for p in s {
                assert_eq!(setting(p, "annbench.memory_share"), *share);
                assert_eq!(setting(p, "annbench.memory_via"), "settings");
                assert_eq!(p.passes.len() == 1, cold, "{l}: {} passes", p.passes.len());
                let f = full.iter().find(|f| f.query_args == p.query_args).unwrap();
                assert_eq!(f.build_seconds, p.build_seconds, "the same build");
                assert_eq!(f.index_size_bytes, p.index_size_bytes, "the same index");
                assert!(p.index_size_bytes.unwrap() > 0);
                // The same index answers the same, whatever the memory.
                assert!(
                    !same_answers || f.neighbors == p.neighbors,
                    "{l}: other answers than at full memory"
                );
            }
        }
    }
}

fn labels_of(points: &[PointResult]) -> Vec<Option<String>> {
    points.iter().map(|p| p.label.clone()).collect()
}

#[test]
fn postgres_memory_sweep_restarts_at_each_share_reads_storage_and_resumes() {
    let _one = one_at_a_time();
    let server = url("ANNBENCH_POSTGRES_MEMTEST_URL");
    let sweep = Sweep::new("pgvector", 2000);
    let args = [
        "--postgres",
        &server,
        "--label",
        "m",
        "--build",
        "M=8",
        "--build",
        "ef_construction=32",
        "--query",
        "ef_search=40",
        "--memory",
        "100%,10%",
    ];
    let out = sweep.run("pgvector", &args);
    assert!(out.status.success(), "{}", text(&out));
    let points = sweep.points();
    check_series(&points, &[("m-mem100", "1"), ("m-mem10", "0.1")], 1, true);
    for p in series(&points, "m-mem10")
        .into_iter()
        .chain(series(&points, "m-mem10-cold"))
    {
        // The share's caches, read past the OS cache: shared_buffers at 10% of the index (or
        // PostgreSQL's smallest, 128 kB), and the index read from storage.
        assert_eq!(setting(p, "debug_io_direct"), "data");
        let bytes: u64 = setting(p, "annbench.memory_bytes").parse().unwrap();
        let index = p.index_size_bytes.unwrap();
        assert!(
            bytes == (128 << 10) || bytes == (index as f64 * 0.1).ceil() as u64,
            "{bytes}"
        );
        let cost = p
            .metrics
            .server
            .as_ref()
            .expect("server cost of a local server");
        let read = cost
            .server_read_kib_per_query
            .expect("the processes' storage reads");
        assert!(read > 0.0, "{:?}: no storage reads at 10% memory", p.label);
        // A search touches far more than the 16 pages of 128 kB: it reads pages every query.
        assert_eq!(
            cost.storage(),
            Some(annbench::results::Storage::IoBound),
            "{cost:?}"
        );
    }
    // Back at its full memory: the main figures' shared_buffers, no longer the share's.
    let full = series(&points, "m")[0];
    assert_ne!(
        setting(full, "shared_buffers"),
        setting(series(&points, "m-mem10")[0], "shared_buffers")
    );

    // table --by-memory: one row per share, cold and warm side by side; plot draws them.
    let results = sweep.dir.path().join("results");
    let report = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args(args)
            .args([
                "--dataset",
                &sweep.dataset,
                "--results",
                results.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    let out = report(&["table", "--by-memory", "--format", "csv"]);
    assert!(out.status.success(), "{}", text(&out));
    let csv = String::from_utf8_lossy(&out.stdout).to_string();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[0].contains("memory_share_percent") && rows[0].contains("qps_cold"),
        "{csv}"
    );
    assert_eq!(rows.len(), 3, "a header and the shares 100% and 10%: {csv}");
    // --label names the run whose series to show (they are labelled m-mem100, ...).
    let out = report(&["table", "--by-memory", "--format", "csv", "--label", "m"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), csv);
    let out = report(&["table", "--by-memory", "--label", "nope"]);
    assert!(
        !out.status.success() && text(&out).contains("--label nope: no --memory series"),
        "{}",
        text(&out)
    );
    let png = sweep.dir.path().join("qps.png");
    let out = report(&["plot", "qps-memory", "-o", png.to_str().unwrap()]);
    assert!(out.status.success() && png.exists(), "{}", text(&out));

    // A rerun finds every series stored and measures nothing.
    let before: Vec<_> = points
        .iter()
        .map(|p| p.environment.finished_at.clone())
        .collect();
    // --expect checks the stored share points too, each named by its series.
    let mut expect = args.to_vec();
    expect.extend(["--expect", "cached"]);
    let again = sweep.run("pgvector", &expect);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains("[m-mem10]: expected cached but it is io-bound"),
        "{}",
        text(&again)
    );
    let after: Vec<_> = sweep
        .points()
        .iter()
        .map(|p| p.environment.finished_at.clone())
        .collect();
    assert_eq!(before, after);
}

#[test]
fn mariadb_memory_sweep_measures_each_share_with_its_buffer_pool() {
    let _one = one_at_a_time();
    let server = url("ANNBENCH_MARIADB_MEMTEST_URL");
    let sweep = Sweep::new("mariadb", 2000);
    let out_sweep = sweep.run(
        "mariadb",
        &[
            "--mariadb",
            &server,
            "--label",
            "m",
            "--build",
            "M=8",
            "--query",
            "ef_search=40",
            "--memory",
            "50%",
        ],
    );
    let out = &out_sweep;
    assert!(out.status.success(), "{}", text(out));
    let points = sweep.points();
    check_series(&points, &[("m-mem50", "0.5")], 1, false);
    // MariaDB's answers may change with its graph cache (docs/memory.md): the sweep says so.
    let full = series(&points, "m")[0].metrics.recall;
    if points
        .iter()
        .any(|p| (p.metrics.recall - full).abs() > 1e-9)
    {
        assert!(
            text(out).contains("at full memory before the restarts"),
            "{}",
            text(out)
        );
    }
    let p = series(&points, "m-mem50")[0];
    assert!(
        p.environment
            .notices
            .iter()
            .any(|n| n.starts_with("memory share 50%")),
        "{:?}",
        p.environment.notices
    );
    let bytes: u64 = setting(p, "annbench.memory_bytes").parse().unwrap();
    // The buffer pool grows in 1 MiB blocks, from 6 MiB (16 KiB pages).
    let pool: u64 = setting(p, "innodb_buffer_pool_size").parse().unwrap();
    assert_eq!(pool, bytes.div_ceil(1 << 20).max(6) << 20);
    assert_eq!(setting(p, "innodb_flush_method"), "O_DIRECT");
    // table --by-memory shows the share the caches held (raised by MariaDB's 6 MiB floor on
    // a small index), beside the one asked.
    let index = p.index_size_bytes.unwrap() as f64;
    let results = sweep.dir.path().join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(["table", "--by-memory", "--format", "json", "--dataset"])
        .arg(&sweep.dataset)
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let csv = String::from_utf8_lossy(&out.stdout).to_string();
    let json: serde_json::Value = serde_json::from_str(&csv).unwrap();
    let cell = |name: &str| -> f64 {
        let rows = json.as_array().or_else(|| json["rows"].as_array()).unwrap();
        rows[0][name].as_f64().expect(name)
    };
    assert!((cell("asked_share_percent") - 50.0).abs() < 1e-6, "{csv}");
    // The buffer pool as the server reported it (whole MiB, at least 6 MiB) over the index.
    let held = 100.0 * pool as f64 / index;
    let shown = cell("memory_share_percent");
    assert!((shown - held).abs() < 1e-3, "{shown} vs {held}: {csv}");
    assert!(
        (cell("memory_mib") - (pool >> 20) as f64).abs() < 1e-9,
        "{csv}"
    );
    if bytes as f64 > index * 0.5 * 1.001 {
        assert!(
            text(&out_sweep).contains("smallest cache"),
            "{}",
            text(&out_sweep)
        );
    }
    // A graph larger than the share's graph cache is measured, with the notice that says so.
    let cache: u64 = setting(p, "mhnsw_max_cache_size").parse().unwrap();
    if cache < p.index_size_bytes.unwrap() {
        assert!(
            p.environment
                .notices
                .iter()
                .any(|n| n.contains("larger than mhnsw_max_cache_size")),
            "{:?}",
            p.environment.notices
        );
    }
}

#[test]
fn memory_sweeps_are_refused_where_they_cannot_run() {
    let sweep = Sweep::new("redis", 200);
    let refused = |algorithm: &str, flag: &str, server: &str, want: &str| {
        let out = sweep.run(algorithm, &[flag, server, "--memory", "50%"]);
        assert!(!out.status.success(), "{}", text(&out));
        assert!(text(&out).contains(want), "want '{want}' in {}", text(&out));
        assert!(sweep.points().is_empty());
    };
    refused(
        "redis",
        "--redis",
        &url("ANNBENCH_REDIS_URL"),
        "keeps everything in memory",
    );
    refused(
        "mariadb",
        "--mariadb",
        "mysql://annbench:x@127.0.0.1:1/annbench",
        "not one scripts/databases.sh manages",
    );
    // The main server keeps its memory: only an instance of its own is restarted at a share.
    refused(
        "pgvector",
        "--postgres",
        &url("ANNBENCH_POSTGRES_URL"),
        "main postgres server",
    );
    // A second client count's cold pass would run on the caches the first one warmed.
    let memtest = url("ANNBENCH_POSTGRES_MEMTEST_URL");
    let out = sweep.run(
        "pgvector",
        &[
            "--postgres",
            &memtest,
            "--memory",
            "50%",
            "--clients",
            "1,2",
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("give one client count"),
        "{}",
        text(&out)
    );
    assert!(sweep.points().is_empty());
    // Another host's server with a managed port number is still not this machine's.
    let remote = url("ANNBENCH_POSTGRES_MEMTEST_URL").replace("127.0.0.1", "192.0.2.1");
    refused("pgvector", "--postgres", &remote, "on another host");
    // An algorithm without a server has no memory to lower: refused before any work, in the
    // dry run too, which shows the share series a real run adds.
    refused("exact", "--postgres", &memtest, "exact runs on no server");
    let out = sweep.run(
        "pgvector",
        &["--postgres", &memtest, "--memory", "100%,10%", "--dry-run"],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("series mem100-cold, mem100, mem10-cold, mem10;"),
        "{}",
        text(&out)
    );
    let main = url("ANNBENCH_POSTGRES_URL");
    let out = sweep.run(
        "pgvector",
        &["--postgres", &main, "--memory", "10%", "--dry-run"],
    );
    assert!(
        !out.status.success() && text(&out).contains("main postgres server"),
        "{}",
        text(&out)
    );
    // A plain run's label spelt as a share series would stand in for that series' points.
    let out = sweep.run("pgvector", &["--postgres", &main, "--label", "col-mem50"]);
    assert!(
        !out.status.success() && text(&out).contains("spelt as a --memory series"),
        "{}",
        text(&out)
    );
    // Two named servers: each share would be measured on one of them only.
    let two = [format!("a={memtest}"), format!("b={main}")];
    let out = sweep.run(
        "pgvector",
        &[
            "--postgres",
            &two[0],
            "--postgres",
            &two[1],
            "--memory",
            "50%",
        ],
    );
    assert!(
        !out.status.success() && text(&out).contains("run each with --memory on its own"),
        "{}",
        text(&out)
    );
    assert!(sweep.points().is_empty());
    // Bad shares name the input.
    for bad in ["0%", "150%", "50", "50%,50%"] {
        let out = sweep.run("pgvector", &["--memory", bad]);
        assert!(
            !out.status.success() && text(&out).contains("--memory"),
            "{}",
            text(&out)
        );
    }
}

/// scripts/databases.sh --memory: Redis refused by name, a size below the server's smallest
/// cache or above RAM refused, the memory remembered across a plain restart.
#[test]
fn the_script_sets_and_keeps_an_instances_memory() {
    let _one = one_at_a_time();
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/databases.sh");
    let sh = |args: &[&str]| {
        let out = Command::new(&script).args(args).output().unwrap();
        (out.status.success(), text(&out))
    };
    let (ok, out) = sh(&["up-instance", "memtest", "redis", "--memory", "16M"]);
    assert!(
        !ok && out.contains("redis keeps everything in memory"),
        "{out}"
    );
    let (ok, out) = sh(&["restart-instance", "postgres:memtest", "--memory", "64K"]);
    assert!(
        !ok && out.contains("below postgres's smallest cache"),
        "{out}"
    );
    let (ok, out) = sh(&[
        "restart-instance",
        "postgres:memtest",
        "--memory",
        "100000G",
    ]);
    assert!(!ok && out.contains("RAM"), "{out}");
    let (ok, out) = sh(&["restart-instance", "postgres", "--memory", "64M"]);
    assert!(!ok && out.contains("main server"), "{out}");
    let (ok, out) = sh(&["restart-instance", "postgres:memtest", "--memory", "3M"]);
    assert!(ok, "{out}");
    let (ok, out) = sh(&["restart-instance", "postgres:memtest"]);
    assert!(ok, "{out}");
    let (_, status) = sh(&["status"]);
    assert!(status.contains("memory: 3072K via settings"), "{status}");
    let (ok, out) = sh(&["restart-instance", "postgres:memtest", "--memory", "off"]);
    assert!(ok, "{out}");
}

/// A second `--memory` sweep on an instance another sweep is restarting is refused before it
/// touches the server (it would measure at the other sweep's share).
#[test]
fn a_second_memory_sweep_on_one_instance_is_refused() {
    use std::os::fd::AsRawFd;
    let _one = one_at_a_time();
    let server = url("ANNBENCH_POSTGRES_MEMTEST_URL");
    let env = annbench::connect::servers_env_path(&|k| std::env::var(k).ok());
    let path = env.parent().unwrap().join("memory-postgres-memtest.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    // SAFETY: a valid descriptor. Held as a running sweep holds it.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
    let sweep = Sweep::new("pgvector", 200);
    let out = sweep.run("pgvector", &["--postgres", &server, "--memory", "50%"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("another sweep"), "{}", text(&out));
    assert!(sweep.points().is_empty());
    drop(file);
    // Released (as when a sweep ends or is killed): the next sweep runs.
    let out = sweep.run(
        "pgvector",
        &[
            "--postgres",
            &server,
            "--memory",
            "50%",
            "--build",
            "M=8",
            "--build",
            "ef_construction=16",
            "--query",
            "ef_search=10",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
}

/// A kill -9 of the sweep while scripts/databases.sh restarts the instance: the script goes on
/// (its own process group, its output to a file, not to the dead sweep's pipe) and leaves the
/// server running; the rerun measures.
#[test]
fn a_kill_during_a_restart_leaves_the_instance_running() {
    let _one = one_at_a_time();
    let server = url("ANNBENCH_POSTGRES_MEMTEST_URL");
    let sweep = Sweep::new("pgvector", 300);
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--postgres",
        &server,
        "--memory",
        "50%",
        "--build",
        "M=8",
        "--build",
        "ef_construction=16",
        "--query",
        "ef_search=10",
    ];
    // Whether scripts/databases.sh is restarting the instance.
    let running = || {
        std::fs::read_dir("/proc").unwrap().any(|e| {
            let cmd = e.unwrap().path().join("cmdline");
            std::fs::read(cmd).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("restart-instance") && c.contains("postgres:memtest")
            })
        })
    };
    let mut child = sweep
        .command("pgvector", &args)
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !running() {
        assert!(started.elapsed().as_secs() < 120, "no restart began");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Wait for the script to end, then the server must answer.
    while running() {
        assert!(started.elapsed().as_secs() < 240, "the restart never ended");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let port: u16 = server
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next()?.parse().ok())
        .unwrap();
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "the instance was left stopped"
    );
    let out = sweep.run("pgvector", &args);
    assert!(out.status.success(), "{}", text(&out));
}
