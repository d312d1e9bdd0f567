//! Missing privileges and a pgvector that is installed but not creatable, against the real
//! servers. Each test makes its own users/databases (unique per process) and drops them.

mod servers_support;

use annbench::backend::mariadb::server::connect as connect_mariadb;
use annbench::backend::postgres::server::{connect as connect_postgres, ensure_pgvector};
use annbench::connect::ServerUrl;
use annbench::servers::{CheckOutcome, check_one};
use mysql::prelude::Queryable;
use servers_support::*;

fn checked_error(url: &ServerUrl) -> String {
    match check_one(url.kind(), Some(url.expose().as_str())) {
        CheckOutcome::Checked(c) => c.error.expect("the check should find the server unusable"),
        other => panic!("expected a checked server, got {other:?}"),
    }
}

#[test]
fn mariadb_user_without_privileges() {
    let admin_url = mariadb();
    let mut admin = connect_mariadb(&admin_url).expect("admin connection");
    let (none, select_only) = (unique("ab_noprivs"), unique("ab_selonly"));
    let db = admin_url.database();
    for user in [&none, &select_only] {
        admin
            .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
            .unwrap();
        admin
            .query_drop(format!(
                "CREATE USER '{user}'@'%' IDENTIFIED BY 'pw-{user}'"
            ))
            .unwrap();
    }
    admin
        .query_drop(format!("GRANT SELECT ON `{db}`.* TO '{select_only}'@'%'"))
        .unwrap();

    let url = with(&admin_url, Some(&none), Some(&format!("pw-{none}")), None);
    let msg = err_text(connect_mariadb(&url), "connect without privileges");
    let msg2 = checked_error(&with(
        &admin_url,
        Some(&select_only),
        Some(&format!("pw-{select_only}")),
        None,
    ));
    for user in [&none, &select_only] {
        admin
            .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
            .unwrap();
    }

    assert!(
        msg.contains(&format!("user '{none}' lacks a privilege")),
        "{msg}"
    );
    assert!(msg.contains("GRANT ALL ON"), "{msg}");
    assert!(
        msg2.contains("lacks a privilege while creating a test table"),
        "{msg2}"
    );
    assert!(msg2.contains("CREATE command denied"), "{msg2}");
}

/// Drops the scratch database and role even when an assertion fails.
struct PgScratch {
    admin: postgres::Client,
    db: String,
    role: String,
}

impl Drop for PgScratch {
    fn drop(&mut self) {
        // One statement per call: DROP DATABASE may not run inside a transaction block.
        let _ = (self.admin)
            .batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.db));
        let _ = (self.admin).batch_execute(&format!("DROP ROLE IF EXISTS {}", self.role));
    }
}

#[test]
fn postgres_privileges_and_pgvector_not_creatable() {
    let admin_url = postgres();
    let mut s = PgScratch {
        admin: connect_postgres(&admin_url).expect("admin connection"),
        db: unique("ab_novector"),
        role: unique("ab_norights"),
    };
    let (db, role) = (s.db.clone(), s.role.clone());
    for sql in [
        format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
        format!("DROP ROLE IF EXISTS {role}"),
        format!("CREATE DATABASE {db}"),
        format!("REVOKE CONNECT ON DATABASE {db} FROM PUBLIC"),
        format!("CREATE ROLE {role} LOGIN PASSWORD 'pw-{role}'"),
    ] {
        s.admin
            .batch_execute(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    // A role that may not connect to the database.
    let no_connect = with(
        &admin_url,
        Some(&role),
        Some(&format!("pw-{role}")),
        Some(&db),
    );
    let msg = err_text(connect_postgres(&no_connect), "connect without CONNECT");
    assert!(
        msg.contains(&format!("user '{role}' lacks a privilege while connecting")),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("GRANT CONNECT ON DATABASE {db}")),
        "{msg}"
    );

    // A fresh database without the extension; the (non-superuser) owner may not create it.
    let fresh = with(&admin_url, None, None, Some(&db));
    let mut client = connect_postgres(&fresh).expect("owner connects to its database");
    let msg = err_text(
        ensure_pgvector(&mut client, &fresh),
        "pgvector in a fresh database",
    );
    assert!(msg.contains("is installed on PostgreSQL"), "{msg}");
    assert!(
        msg.contains(&format!("not enabled in database {db}")),
        "{msg}"
    );
    assert!(msg.contains("CREATE EXTENSION vector"), "{msg}");
    drop(client);

    // A role that can connect to the benchmark database but not create tables there.
    let no_create = with(&admin_url, Some(&role), Some(&format!("pw-{role}")), None);
    // It is told the grant on the schema runs use (or on the database, to create it).
    let msg = checked_error(&no_create);
    assert!(
        msg.contains(&format!("user '{role}' lacks a privilege"))
            && msg.contains("keeps its tables in schema annbench"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("GRANT USAGE, CREATE ON SCHEMA annbench TO {role}"))
            || msg.contains("GRANT CREATE ON DATABASE"),
        "{msg}"
    );
}

/// Counts the loads a sweep starts.
#[derive(Default)]
struct Loads(std::sync::atomic::AtomicUsize);

impl annbench::runner::Progress for Loads {
    fn on_event(&self, e: &annbench::runner::Event<'_>) {
        if matches!(e, annbench::runner::Event::LoadStarted { .. }) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The grants once documented (`GRANT ALL ON annbench.*`) lack PROCESS, which index sizes
/// need: `servers check` says so with the grant, and `run` fails before it loads anything
/// (it used to fail after the load and build). With PROCESS granted both pass.
#[test]
fn mariadb_without_process_fails_the_check_and_the_run_up_front() {
    let admin_url = mariadb();
    let mut admin = connect_mariadb(&admin_url).expect("admin connection");
    let user = unique("ab_noprocess");
    let db = annbench::backend::BackendOptions::default()
        .schema()
        .unwrap();
    for sql in [
        format!("DROP USER IF EXISTS '{user}'@'%'"),
        format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw-{user}'"),
        format!("GRANT ALL ON `{db}`.* TO '{user}'@'%'"),
    ] {
        admin
            .query_drop(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let url = with(&admin_url, Some(&user), Some(&format!("pw-{user}")), None);
    let check = checked_error(&url);
    let dir = tempfile::tempdir().unwrap();
    let opts = annbench::runner::SweepOptions {
        dataset: concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/datasets/sift-5k-128-euclidean.hdf5"
        )
        .into(),
        algorithms: vec!["mariadb".into()],
        build_overrides: vec!["M=4".into()],
        query_overrides: vec!["ef_search=10".into()],
        runs: 1,
        results_dir: dir.path().join("results"),
        backend: annbench::backend::BackendOptions::default().with_url(
            annbench::connect::ServerKind::MariaDb,
            url.expose().as_str(),
        ),
        ..Default::default()
    };
    let loads = Loads::default();
    let run = annbench::runner::run_sweep(&opts, &loads).map(|_| ());
    admin
        .query_drop(format!("GRANT PROCESS ON *.* TO '{user}'@'%'"))
        .unwrap();
    let granted = check_one(url.kind(), Some(url.expose().as_str()));
    admin
        .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
        .unwrap();

    for msg in [&check, &err_text(run, "run without PROCESS")] {
        assert!(
            msg.contains(&format!("user '{user}' lacks the PROCESS privilege"))
                && msg.contains(&format!("GRANT PROCESS ON *.* TO '{user}'@'%'")),
            "{msg}"
        );
        assert!(!msg.contains(&format!("pw-{user}")), "{msg}");
    }
    assert_eq!(loads.0.load(std::sync::atomic::Ordering::Relaxed), 0);
    match granted {
        CheckOutcome::Checked(c) => assert!(c.error.is_none(), "{:?}", c.error),
        other => panic!("expected a checked server, got {other:?}"),
    }
}

/// A role that may create tables in the schema annbench but not create schemas in the
/// database: `CREATE SCHEMA IF NOT EXISTS` is refused even with the schema there (`permission
/// denied for database`), and the role was told to `GRANT CREATE ON SCHEMA public`, which does
/// not help. Now a schema that exists is not created again, so the role is usable; where the
/// schema is missing, it is told the privilege that is: CREATE on the database.
#[test]
fn postgres_schema_privileges_without_database_create() {
    use annbench::backend::BackendOptions;
    use annbench::backend::pgvector::{Hnsw, Variant};
    use annbench::backend::postgres::PgBackend;
    use annbench::connect::ServerKind;
    static INDEX: Hnsw = Hnsw(Variant::Vector);
    let admin_url = postgres();
    let mut admin = connect_postgres(&admin_url).expect("admin connection");
    let role = unique("ab_schemaonly");
    let db = admin_url.database();
    // The schema and annbench's metadata table, as any run leaves them.
    let as_admin =
        BackendOptions::default().with_url(ServerKind::Postgres, admin_url.expose().as_str());
    drop(PgBackend::connect(&as_admin, &INDEX).expect("the admin sets up the schema"));
    let revoke = [
        format!("REVOKE ALL ON annbench.annbench_tables FROM {role}"),
        format!("REVOKE ALL ON SCHEMA annbench FROM {role}"),
        format!("DROP ROLE IF EXISTS {role}"),
    ];
    for sql in revoke.iter().skip(2).cloned().chain([
        format!("CREATE ROLE {role} LOGIN PASSWORD 'pw-{role}'"),
        format!("GRANT USAGE, CREATE ON SCHEMA annbench TO {role}"),
        format!("GRANT SELECT, INSERT, DELETE ON annbench.annbench_tables TO {role}"),
    ]) {
        admin
            .batch_execute(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let url = with(&admin_url, Some(&role), Some(&format!("pw-{role}")), None);
    let checked = check_one(url.kind(), Some(url.expose().as_str()));
    let as_role = BackendOptions::default().with_url(ServerKind::Postgres, url.expose().as_str());
    let connected = PgBackend::connect(&as_role, &INDEX).map(drop);
    let missing = BackendOptions {
        schema: Some(unique("ab_noschema")),
        ..as_role.clone()
    };
    let refused = PgBackend::connect(&missing, &INDEX).map(drop);
    for sql in &revoke {
        let _ = admin.batch_execute(sql);
    }

    match checked {
        CheckOutcome::Checked(c) => assert!(c.error.is_none(), "{:?}", c.error),
        other => panic!("expected a checked server, got {other:?}"),
    }
    connected.expect("a run connects with privileges on the schema only");
    let msg = err_text(refused, "a run in a schema the role may not create");
    assert!(msg.contains("permission denied for database"), "{msg}");
    assert!(
        msg.contains(&format!("GRANT CREATE ON DATABASE {db} TO {role}")),
        "{msg}"
    );
    assert!(!msg.contains("SCHEMA public"), "{msg}");
}

/// More `--clients` than the server takes from the user (within the 1024 annbench allows)
/// once failed after the load and build with "too many connections"; the server's limit is
/// read with the privileges, and the run refused before it loads anything.
#[test]
fn more_clients_than_the_server_takes_fail_the_run_up_front() {
    for (algorithm, kind, url) in [
        ("mariadb", annbench::connect::ServerKind::MariaDb, mariadb()),
        (
            "pgvector",
            annbench::connect::ServerKind::Postgres,
            postgres(),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let opts = annbench::runner::SweepOptions {
            dataset: concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/datasets/sift-5k-128-euclidean.hdf5"
            )
            .into(),
            algorithms: vec![algorithm.into()],
            clients: vec![1, 1000],
            runs: 1,
            results_dir: dir.path().join("results"),
            backend: annbench::backend::BackendOptions::default()
                .with_url(kind, url.expose().as_str()),
            ..Default::default()
        };
        let loads = Loads::default();
        let msg = annbench::runner::run_sweep(&opts, &loads)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("connections from this user (max_connections")
                && msg.contains("this run opens up to 1001 at once (--clients 1000 and the admin")
                && msg.contains("give fewer --clients, or raise the server's max_connections"),
            "{algorithm}: {msg}"
        );
        assert_eq!(loads.0.load(std::sync::atomic::Ordering::Relaxed), 0);
    }
}
