//! Server cost per query against the real servers: CPU and context switches of the local
//! server's processes, execution time and reads from the servers' own statistics, and the
//! fallback to those statistics alone when no server process is visible (a remote-style URL:
//! the connection goes through a forwarding process, as through a port mapping). They fail,
//! never skip, without the servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::backend::{BackendOptions, create};
use annbench::connect::ServerKind;
use annbench::dataset::Dataset;
use annbench::results::{PointResult, ServerCost};
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
