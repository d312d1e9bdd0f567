//! Server cost per query against the real servers: CPU, context switches and storage I/O of
//! the local server's processes and of the device holding its data directory, execution time
//! and reads from the servers' own statistics, and the fallback to those statistics alone
//! when no server process is visible (a remote-style URL: the connection goes through a
//! forwarding process, as through a port mapping). They fail, never skip, without the
//! servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::backend::{BackendOptions, create};
use annbench::connect::ServerKind;
use annbench::dataset::Dataset;
use annbench::results::{PointResult, ServerCost, Storage};
use annbench::runner::{NoProgress, SweepOptions, run_sweep_with};
use backend_util::{data, name};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn url(var: &str) -> String {
    annbench::connect::lookup(var)
        .unwrap()
        .unwrap_or_else(|| panic!("{var} is not set: run scripts/databases.sh up"))
}

/// One point of `algorithm` (1 client, 3 passes of 0.3 s) on 2,000 SIFT rows.
fn sweep(algorithm: &str, kind: ServerKind, server_url: String) -> PointResult {
    let (train, test) = data(2000, 50);
    let dataset = Dataset {
        name: name(&format!("cost-{algorithm}")),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = SweepOptions {
        dataset: dataset.name.clone(),
        algorithms: vec![algorithm.into()],
        build_overrides: vec!["M=8".into()],
        query_overrides: vec!["ef_search=40".into()],
        count: 10,
        runs: 3,
        min_time: Duration::from_millis(300),
        results_dir: dir.path().join("results"),
        ..SweepOptions::default()
    };
    let backend = BackendOptions::default().with_url(kind, server_url);
    let summary = run_sweep_with(dataset, &opts, &NoProgress, &|a| create(a, &backend)).unwrap();
    let p = summary.points[0].result.clone();
    // What is stored is what was measured.
    let stored = annbench::results::read_point(&summary.points[0].path).unwrap();
    assert_eq!(stored.metrics.server, p.metrics.server);
    assert_eq!(stored.passes, p.passes);
    p
}

/// The statement statistics: every pass counted its executions and their time, below the
/// client's latency of the same queries.
fn assert_statements(p: &PointResult, source: &str) -> ServerCost {
    let s = p.metrics.server.clone().expect("a server cost");
    assert_eq!(s.statements_source.as_deref(), Some(source), "{s:?}");
    for pass in p.passes.iter() {
        let c = pass.server.expect("every pass has a server cost");
        let n = c.statements.unwrap();
        // Exactly the pass's queries; a little slack for a statement of another session.
        assert!(
            n >= pass.queries as u64 && n <= pass.queries as u64 + 5,
            "{n} vs {}",
            pass.queries
        );
        let exec = c.exec_seconds.unwrap() / n as f64;
        let latency = pass.latency.unwrap().mean;
        assert!(
            exec > 0.0 && exec < latency,
            "exec {exec} latency {latency}"
        );
    }
    let exec = s.exec_per_query.unwrap();
    assert!(exec > 0.0 && exec < p.metrics.latency_mean, "{s:?}");
    assert!(s.client_network_per_query.unwrap() > 0.0, "{s:?}");
    assert!(s.buffer_hits_per_query.is_some(), "{s:?}");
    s
}

/// Local server: CPU per query is positive and below the wall time per query of one client
/// (one client cannot keep the server busier than the wall clock).
fn assert_local(p: &PointResult, source: &str, process: &str) {
    let s = assert_statements(p, source);
    let src = s.cpu_source.clone().unwrap_or_default();
    assert!(src.starts_with("/proc") && src.contains(process), "{s:?}");
    assert!(s.notes.is_empty(), "{s:?}");
    for pass in &p.passes {
        let c = pass.server.unwrap();
        let cpu = c.cpu_seconds().unwrap() / pass.queries as f64;
        let wall = pass.wall_seconds / pass.queries as f64;
        assert!(cpu > 0.0 && cpu < wall, "cpu {cpu} wall {wall} per query");
        assert!(c.voluntary_switches.unwrap() > 0, "{c:?}");
    }
    assert!(
        s.cpu_per_query.unwrap() > 0.0 && s.cpu_cv.is_some(),
        "{s:?}"
    );
    assert!(s.build_cpu_seconds.unwrap() > 0.0, "{s:?}");
    assert!(s.memory_after_build_bytes.unwrap() > 1 << 20, "{s:?}");
    assert!(s.memory_after_passes_bytes.unwrap() > 1 << 20, "{s:?}");
    assert_cached(p);
}

/// A small index, built and queried just now (the recall pass warmed it): storage I/O is
/// measured on every pass, the server read (about) nothing, and the point is cached. The
/// device is shared with the rest of the machine, so its reads are not held to zero; the
/// server's own reads decide, held to the threshold.
fn assert_cached(p: &PointResult) {
    let s = p.metrics.server.clone().unwrap();
    let src = s.io_source.clone().unwrap_or_default();
    assert!(
        src.starts_with("/proc/diskstats: ") && src.contains("whole device"),
        "{s:?}"
    );
    for pass in &p.passes {
        let c = pass.server.unwrap();
        assert!(
            c.process_read_bytes.is_some() && c.process_write_bytes.is_some(),
            "{c:?}"
        );
        assert!(
            c.device_reads.is_some() && c.device_read_bytes.is_some(),
            "{c:?}"
        );
        assert!(
            c.device_writes.is_some() && c.device_write_bytes.is_some(),
            "{c:?}"
        );
    }
    let read = s.server_read_kib_per_query.unwrap();
    assert!(
        read <= 1.0,
        "the server read {read} KiB per query from storage: {s:?}"
    );
    // The device's reads are every process's: other work on the machine reads it too (a
    // build next door showed 8 reads per query on a cached point), so they are present, not
    // bounded.
    assert!(s.io_reads_per_query.unwrap() >= 0.0, "{s:?}");
    assert!(s.io_read_kib_per_query.is_some() && s.io_write_kib_per_query.is_some());
    assert!(s.io_writes_per_query.is_some() && s.server_write_kib_per_query.is_some());
    assert_eq!(s.storage(), Some(Storage::Cached), "{s:?}");
    // What `annbench run --expect` says of it.
    assert!(annbench::runner::expect::warnings([p], Storage::Cached).is_empty());
    let w = annbench::runner::expect::warnings([p], Storage::IoBound);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("expected io-bound but it is cached"), "{w:?}");
}

/// A TCP forwarder in its own process (not a database server): annbench sees no server
/// process behind its connections, as with a remote server. Returns it and its port.
fn forwarder(to_port: u16) -> (Child, u16) {
    let code = r#"
import socket, sys, threading
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64)
print(srv.getsockname()[1], flush=True)
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    for x, y in ((c, u), (u, c)):
        threading.Thread(target=pipe, args=(x, y), daemon=True).start()
"#;
    let mut child = Command::new("python3")
        .args(["-c", code, &to_port.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the forwarder");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().parse().unwrap())
}

/// `url` with its port replaced.
fn via(url: &str, port: u16) -> String {
    let at = url.rfind('@').unwrap();
    let slash = at + url[at..].find('/').unwrap();
    let colon = at + url[at..slash].rfind(':').unwrap();
    format!("{}:{port}{}", &url[..colon], &url[slash..])
}

fn port(url: &str) -> u16 {
    let at = url.rfind('@').unwrap();
    let slash = at + url[at..].find('/').unwrap();
    let colon = at + url[at..slash].rfind(':').unwrap();
    url[colon + 1..slash].parse().unwrap()
}

fn assert_remote(p: &PointResult, source: &str) {
    let s = assert_statements(p, source);
    assert_eq!(s.cpu_source, None, "{s:?}");
    assert_eq!(s.cpu_per_query, None, "{s:?}");
    assert_eq!(s.build_cpu_seconds, None, "{s:?}");
    assert!(
        s.notes.iter().any(|n| n.contains("unavailable")),
        "a note says why: {s:?}"
    );
    assert!(
        p.passes
            .iter()
            .all(|x| x.server.unwrap().cpu_seconds().is_none())
    );
    // No storage figure either: absent, never zero as if measured.
    assert_eq!(
        (
            s.io_reads_per_query,
            s.server_read_kib_per_query,
            s.storage()
        ),
        (None, None, None),
        "{s:?}"
    );
    assert_eq!(s.io_source, None, "{s:?}");
    for pass in &p.passes {
        let c = pass.server.unwrap();
        assert_eq!(
            (c.process_read_bytes, c.device_reads),
            (None, None),
            "{c:?}"
        );
    }
    let w = annbench::runner::expect::warnings([p], Storage::Cached);
    assert!(w.len() == 1 && w[0].contains("not measured"), "{w:?}");
}

/// One test, so no other test thread holds connections to other servers meanwhile.
#[test]
fn server_cost_local_and_remote_style() {
    let maria = url("ANNBENCH_MARIADB_URL");
    let pg = url("ANNBENCH_POSTGRES_URL");
    let p = sweep("mariadb", ServerKind::MariaDb, maria.clone());
    assert_local(&p, "performance_schema statement statistics", "mariadbd");
    let p = sweep("pgvector", ServerKind::Postgres, pg.clone());
    assert_local(&p, "pg_stat_statements", "backend pid");

    for (algorithm, kind, u, source) in [
        (
            "mariadb",
            ServerKind::MariaDb,
            &maria,
            "performance_schema statement statistics",
        ),
        ("pgvector", ServerKind::Postgres, &pg, "pg_stat_statements"),
    ] {
        let (mut child, fwd) = forwarder(port(u));
        let p = sweep(algorithm, kind, via(u, fwd));
        let _ = child.kill();
        let _ = child.wait();
        assert_remote(&p, source);
    }
}

/// `annbench run --expect`: a small pgvector point, warm, is cached; `--expect io-bound`
/// warns once at the end naming it and its reads, `--expect cached` does not; the tables
/// show the storage figures and the mark.
#[test]
fn run_expect_warns_once_at_the_end_for_a_point_that_says_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let data_dir = dir.path().join("data");
    let annbench = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
            .args(args)
            .arg("--results")
            .arg(&results)
            .arg("--data-dir")
            .arg(&data_dir)
            .env("ANNBENCH_POSTGRES_URL", url("ANNBENCH_POSTGRES_URL"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "annbench {args:?}: {err}");
        (String::from_utf8_lossy(&out.stdout).to_string(), err)
    };
    let set = backend_util::sift_path();
    let run = |expect: &str| {
        annbench(&[
            "run",
            "--dataset",
            set.to_str().unwrap(),
            "--algorithm",
            "pgvector",
            "--build",
            "M=8",
            "--build",
            "ef_construction=32",
            "--query",
            "ef_search=20",
            "--runs",
            "3",
            "--min-time",
            "0.3",
            "--expect",
            expect,
        ])
        .1
    };
    let err = run("io-bound");
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("expected io-bound but it is cached"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].starts_with("warning: PGVector(m=8, ef_construction=32, ef_search=20)")
            && said[0].contains("KiB per query from storage"),
        "{err}"
    );
    // The point is stored: the rerun skips it and checks it again, silently when it matches.
    let err = run("cached");
    assert!(!err.contains("expected"), "{err}");
    let (table, _) = annbench(&[
        "table",
        "--dataset",
        set.to_str().unwrap(),
        "--server-cost",
        "--recall",
        "0.5",
    ]);
    for heading in ["storage", "reads/q", "rKB/q", "wKB/q", "server read KiB/q"] {
        assert!(table.contains(heading), "{heading}: {table}");
    }
    assert!(table.contains("cached"), "{table}");
    let (json, _) = annbench(&[
        "export",
        "--dataset",
        set.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let row = &rows[0];
    assert_eq!(row["storage"], "cached", "{row}");
    assert!(
        row["io_reads"].is_number() && row["io_read_kib"].is_number(),
        "{row}"
    );
    assert!(row["server_read_kib"].as_f64().unwrap() <= 1.0, "{row}");
    assert!(
        row["io_source"]
            .as_str()
            .unwrap()
            .contains("/proc/diskstats"),
        "{row}"
    );
    eprintln!("figures of a cached point: {row}");
}
