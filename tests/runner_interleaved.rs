//! Two servers of one database in one sweep, interleaved, against the real servers: the main
//! MariaDB and PostgreSQL and their `twin` instances (`scripts/databases.sh up-instance twin
//! ...`, started by scripts/test.sh). Every point carries the run's id, every timed pass its
//! round, the rounds match between the servers, each server's own processes are read for its
//! cost, and a point missing on one server is measured again on both. They fail, never skip,
//! without the servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::backend::{BackendOptions, create};
use annbench::connect::ServerKind;
use annbench::dataset::Dataset;
use annbench::results::PointResult;
use annbench::runner::{
    Event, NoProgress, Progress, SweepOptions, SweepSummary, run_sweep_servers_with,
};
use backend_util::{data, name};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// One test of this file on the twins at a time: one ends this process's sessions on a twin,
/// which must be its own.
static TWINS: Mutex<()> = Mutex::new(());

fn url(var: &str) -> String {
    annbench::connect::lookup(var).unwrap().unwrap_or_else(|| {
        panic!("{var} is not set: run scripts/databases.sh up and up-instance twin")
    })
}

/// The two servers of `kind` as `a` (main) and `b` (twin).
fn servers(kind: ServerKind, main: &str, twin: &str) -> BackendOptions {
    let mut opts = BackendOptions::default();
    opts.add_urls(
        kind,
        &[format!("a={}", url(main)), format!("b={}", url(twin))],
    )
    .unwrap();
    opts
}

fn sweep(algorithm: &str, grid: &str, backend: &BackendOptions, dir: &Path) -> SweepSummary {
    let (train, test) = data(1500, 20);
    let dataset = Dataset {
        name: name(&format!("{algorithm}-interleaved")),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let config = dir.join("grid.yml");
    std::fs::write(&config, grid).unwrap();
    let opts = SweepOptions {
        dataset: dataset.name.clone(),
        algorithms: vec![algorithm.into()],
        config_files: vec![config],
        runs: 4,
        min_time: Duration::from_millis(40),
        results_dir: dir.join("results"),
        backend: backend.clone(),
        ..SweepOptions::default()
    };
    run_sweep_servers_with(dataset, &opts, &NoProgress, &|algo, server| match server {
        Some(s) => create(algo, &backend.for_server(s)),
        None => panic!("an interleaved run connects to named servers only"),
    })
    .unwrap()
}

fn of<'s>(summary: &'s SweepSummary, label: &str) -> Vec<&'s PointResult> {
    summary
        .points
        .iter()
        .map(|p| &p.result)
        .filter(|p| p.label.as_deref() == Some(label))
        .collect()
}

/// (build, round) of every timed pass of a point.
fn rounds(p: &PointResult) -> BTreeSet<(usize, usize)> {
    p.passes
        .iter()
        .map(|pass| {
            (
                pass.build,
                pass.round.expect("a timed pass without its round"),
            )
        })
        .collect()
}

fn check_paired(summary: &SweepSummary, points: usize) {
    let (a, b) = (of(summary, "a"), of(summary, "b"));
    assert_eq!(
        (a.len(), b.len()),
        (points, points),
        "{:?}",
        summary.warnings
    );
    let run = a[0]
        .metrics
        .interleave
        .as_ref()
        .expect("no interleave record");
    assert_eq!(run.servers, vec!["a".to_string(), "b".to_string()]);
    for (pa, pb) in a.iter().zip(&b) {
        assert_eq!(pa.query_args, pb.query_args);
        assert_eq!(pa.metrics.interleave.as_ref(), Some(run));
        assert_eq!(pb.metrics.interleave.as_ref(), Some(run));
        let (ra, rb) = (rounds(pa), rounds(pb));
        assert_eq!(ra, rb, "the servers ran different rounds");
        // Each round once per point and server, numbered from 0 without gaps.
        assert_eq!(ra.len(), pa.passes.len());
        assert!(ra.len() >= 4, "{ra:?}");
        assert_eq!(ra.iter().map(|r| r.1).max(), Some(ra.len() - 1));
    }
}

#[test]
fn two_mariadb_servers_run_interleaved_and_each_is_read_for_its_own_cost() {
    let _twins = TWINS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let backend = servers(
        ServerKind::MariaDb,
        "ANNBENCH_MARIADB_URL",
        "ANNBENCH_MARIADB_TWIN_URL",
    );
    let grid = "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n    query: {ef_search: [10, 40]}\n";
    let summary = sweep("mariadb", grid, &backend, dir.path());
    check_paired(&summary, 2);
    // Two mariadbd processes on the machine: each server's CPU comes from its own process.
    let source = |label: &str| {
        let p = of(&summary, label)[0];
        let cost = p.metrics.server.as_ref().expect("no server cost");
        assert!(cost.cpu_per_query.is_some_and(|c| c > 0.0), "{cost:?}");
        cost.cpu_source.clone().unwrap()
    };
    assert_ne!(source("a"), source("b"));

    // A point lost on one server is measured again on both: its partner must be of the same run.
    let lost = &summary
        .points
        .iter()
        .find(|p| p.result.label.as_deref() == Some("b"))
        .unwrap()
        .path;
    std::fs::remove_file(lost).unwrap();
    let again = sweep("mariadb", grid, &backend, dir.path());
    let measured: Vec<&str> = again
        .points
        .iter()
        .filter(|p| !p.skipped)
        .filter_map(|p| p.result.label.as_deref())
        .collect();
    assert_eq!(measured.len(), 2, "{measured:?}");
    assert!(measured.contains(&"a") && measured.contains(&"b"));
}

#[test]
fn two_postgres_servers_run_interleaved() {
    let _twins = TWINS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let backend = servers(
        ServerKind::Postgres,
        "ANNBENCH_POSTGRES_URL",
        "ANNBENCH_POSTGRES_TWIN_URL",
    );
    let grid = "algorithm: pgvector\ngroups:\n  - build: {M: 8, ef_construction: 32}\n    query: {ef_search: [20]}\n";
    let summary = sweep("pgvector", grid, &backend, dir.path());
    check_paired(&summary, 1);
    for label in ["a", "b"] {
        let p = of(&summary, label)[0];
        let cost = p.metrics.server.as_ref().expect("no server cost");
        assert!(cost.cpu_per_query.is_some(), "{label}: {cost:?}");
    }
}

#[test]
fn one_server_under_two_names_is_refused() {
    let mut backend = BackendOptions::default();
    let main = url("ANNBENCH_MARIADB_URL");
    backend
        .add_urls(
            ServerKind::MariaDb,
            &[format!("a={main}"), format!("b={main}")],
        )
        .unwrap();
    let (train, test) = data(100, 5);
    let dataset = Dataset {
        name: name("same-server"),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = SweepOptions {
        dataset: dataset.name.clone(),
        algorithms: vec!["mariadb".into()],
        build_overrides: vec!["M=8".into()],
        query_overrides: vec!["ef_search=10".into()],
        results_dir: dir.path().join("results"),
        backend: backend.clone(),
        ..SweepOptions::default()
    };
    let e = run_sweep_servers_with(dataset, &opts, &NoProgress, &|algo, s| {
        create(algo, &backend.for_server(s.unwrap()))
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("are the same server"), "{e}");
    // Nothing was written.
    assert!(!dir.path().join("results").join("same-server").exists());
}

/// The loopback ports this process's open TCP connections to `port` come from (from
/// `/proc/net/tcp` and this process's file descriptors): how a server lists them
/// (MariaDB's PROCESSLIST host `127.0.0.1:PORT`, PostgreSQL's `client_port`).
fn own_client_ports(port: u16) -> Vec<u16> {
    let inodes: BTreeSet<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let mut out = Vec::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let port_of = |addr: &str| u16::from_str_radix(addr.rsplit(':').next()?, 16).ok();
            // 01: established.
            if f.len() > 9 && f[3] == "01" && port_of(f[2]) == Some(port) && inodes.contains(f[9]) {
                out.extend(port_of(f[1]));
            }
        }
    }
    out
}

/// Ends this process's sessions on the server at `url` (a twin) from an admin connection of
/// its own: what a crash or a restart of that server looks like to the run. Returns how many.
fn end_own_sessions(url: &annbench::connect::ServerUrl) -> usize {
    let ports = own_client_ports(url.expose().port().unwrap());
    if url.kind() == ServerKind::MariaDb {
        use mysql::prelude::Queryable;
        let mut admin = annbench::backend::mariadb::server::connect(url).unwrap();
        let rows: Vec<(u64, String)> = admin
            .query(
                "SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()",
            )
            .unwrap();
        let mut ended = 0;
        for (id, host) in rows {
            let port = host.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
            if port.is_some_and(|p| ports.contains(&p)) {
                // A session may end between the listing and the kill.
                ended += usize::from(admin.query_drop(format!("KILL CONNECTION {id}")).is_ok());
            }
        }
        ended
    } else {
        let mut admin = annbench::backend::postgres::server::connect(url).unwrap();
        let ports: Vec<i32> = ports.into_iter().map(i32::from).collect();
        let n = admin
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE client_port = ANY($1) AND pid <> pg_backend_pid()",
                &[&ports],
            )
            .unwrap()
            .len();
        // pg_terminate_backend only signals the processes: give them time to go.
        std::thread::sleep(Duration::from_millis(500));
        n
    }
}

/// Which events count towards the moment a test acts at.
type Picks = dyn Fn(&Event<'_>) -> bool + Sync;

/// Ends the twin's sessions of this run at the `at`-th event that `when` picks.
struct EndTwinAt<'a> {
    twin: annbench::connect::ServerUrl,
    when: &'a Picks,
    at: usize,
    seen: AtomicUsize,
    ended: AtomicUsize,
}

impl Progress for EndTwinAt<'_> {
    fn on_event(&self, event: &Event<'_>) {
        if (self.when)(event) && self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
            self.ended
                .store(end_own_sessions(&self.twin), Ordering::SeqCst);
        }
    }
}

/// A two-server run whose second server (the twin) ends its sessions after its build, before
/// the recall passes, and amid the timed rounds: the error names that server, by its name and
/// masked URL (it said only "connection lost"), and never the first.
fn a_lost_second_server_is_named(
    kind: ServerKind,
    main: &str,
    twin: &str,
    algorithm: &str,
    build: &str,
) {
    let _twins = TWINS.lock().unwrap_or_else(|e| e.into_inner());
    let backend = servers(kind, main, twin);
    let twin_url = annbench::connect::ServerUrl::parse(kind, &url(twin)).unwrap();
    let main_port = annbench::connect::ServerUrl::parse(kind, &url(main))
        .unwrap()
        .expose()
        .port()
        .unwrap();
    let (train, test) = data(1500, 20);
    let dataset = Dataset {
        name: name(&format!("{algorithm}-lost-twin")),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let builds = |e: &Event<'_>| matches!(e, Event::BuildFinished { .. });
    let measures = |e: &Event<'_>| matches!(e, Event::MeasureStarted { .. });
    let passes = |e: &Event<'_>| matches!(e, Event::PassFinished { .. });
    let moments: [(&str, &Picks, usize); 3] = [
        ("after its build", &builds, 2),
        ("before the recall passes", &measures, 1),
        ("amid the timed rounds", &passes, 7),
    ];
    for (moment, when, at) in moments {
        let dir = tempfile::tempdir().unwrap();
        let opts = SweepOptions {
            dataset: dataset.name.clone(),
            algorithms: vec![algorithm.into()],
            build_overrides: build.split(';').map(String::from).collect(),
            query_overrides: vec!["ef_search=10,40".into()],
            runs: 4,
            min_time: Duration::from_millis(40),
            results_dir: dir.path().join("results"),
            backend: backend.clone(),
            ..SweepOptions::default()
        };
        let progress = EndTwinAt {
            twin: twin_url.clone(),
            when,
            at,
            seen: AtomicUsize::new(0),
            ended: AtomicUsize::new(0),
        };
        let r = run_sweep_servers_with(dataset.clone(), &opts, &progress, &|algo, s| {
            create(algo, &backend.for_server(s.unwrap()))
        });
        let e = match r {
            Err(e) => e.to_string(),
            Ok(s) => panic!(
                "{moment}: the run went on without the twin's sessions: {:?}",
                s.warnings
            ),
        };
        assert!(
            progress.ended.load(Ordering::SeqCst) >= 1,
            "{moment}: no session ended"
        );
        let named = format!("server 'b' ({twin_url})");
        assert!(
            e.contains(&named),
            "{moment}: the error does not name {named}: {e}"
        );
        assert!(
            !e.contains("server 'a'") && !e.contains(&format!(":{main_port}/")),
            "{moment}: {e}"
        );
        assert!(
            !e.contains(twin_url.expose().password().unwrap()),
            "{moment}: {e}"
        );
    }
}

#[test]
fn a_lost_second_mariadb_server_is_named_in_the_error() {
    a_lost_second_server_is_named(
        ServerKind::MariaDb,
        "ANNBENCH_MARIADB_URL",
        "ANNBENCH_MARIADB_TWIN_URL",
        "mariadb",
        "M=8",
    );
}

#[test]
fn a_lost_second_postgres_server_is_named_in_the_error() {
    a_lost_second_server_is_named(
        ServerKind::Postgres,
        "ANNBENCH_POSTGRES_URL",
        "ANNBENCH_POSTGRES_TWIN_URL",
        "pgvector",
        "M=8;ef_construction=32",
    );
}
