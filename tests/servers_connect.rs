//! Connection errors against the real servers: unreachable, wrong password, missing database,
//! too-old MariaDB; and the happy path of the connect-time checks.

mod servers_support;

use annbench::backend::mariadb::server::{
    check_version as check_mariadb_version, connect as connect_mariadb,
};
use annbench::backend::postgres::server::{connect as connect_postgres, ensure_pgvector};
use servers_support::*;

#[test]
fn unreachable_port_says_to_start_the_server() {
    let port = closed_port();
    for base in [mariadb(), postgres()] {
        let mut u = base.expose().clone();
        u.set_port(Some(port)).unwrap();
        let url = annbench::connect::ServerUrl::parse(base.kind(), u.as_str()).unwrap();
        let msg = if base.kind() == annbench::connect::ServerKind::MariaDb {
            err_text(connect_mariadb(&url), "connect")
        } else {
            err_text(connect_postgres(&url), "connect")
        };
        assert!(msg.contains("cannot reach"), "{msg}");
        assert!(
            msg.contains(&format!(":{port}/")),
            "names the address: {msg}"
        );
        assert!(msg.contains("scripts/databases.sh up"), "{msg}");
    }
}

#[test]
fn wrong_password_is_reported_but_never_echoed() {
    let secret = "Wr0ng-s3cret-pw";
    let m = with(&mariadb(), None, Some(secret), None);
    let msg = err_text(connect_mariadb(&m), "MariaDB connect with a wrong password");
    assert!(msg.contains("wrong password"), "{msg}");
    assert!(!msg.contains(secret), "password echoed: {msg}");

    let p = with(&postgres(), None, Some(secret), None);
    let msg = err_text(
        connect_postgres(&p),
        "PostgreSQL connect with a wrong password",
    );
    assert!(msg.contains("wrong password"), "{msg}");
    assert!(!msg.contains(secret), "password echoed: {msg}");
}

#[test]
fn missing_database_is_named() {
    let db = unique("annbench_no_such_db");
    let msg = err_text(
        connect_mariadb(&with(&mariadb(), None, None, Some(&db))),
        "connect",
    );
    assert!(msg.contains(&format!("has no database '{db}'")), "{msg}");
    assert!(msg.contains("CREATE DATABASE"), "{msg}");
    let msg = err_text(
        connect_postgres(&with(&postgres(), None, None, Some(&db))),
        "connect",
    );
    assert!(msg.contains(&format!("has no database '{db}'")), "{msg}");
}

#[test]
fn mariadb_10_11_is_refused_with_its_version() {
    let url = old_mariadb();
    let mut conn = connect_mariadb(&url).expect("the legacy server accepts connections");
    let msg = err_text(
        check_mariadb_version(&mut conn, &url),
        "version check on 10.11",
    );
    assert!(msg.contains("MariaDB 10.11."), "{msg}");
    assert!(
        msg.contains("has no VECTOR type; annbench needs 11.7 or newer"),
        "{msg}"
    );
}

#[test]
fn current_servers_pass_the_connect_time_checks() {
    let url = mariadb();
    let mut conn = connect_mariadb(&url).expect("connect to MariaDB");
    let v = check_mariadb_version(&mut conn, &url).expect("MariaDB is new enough");
    assert!(v.at_least((11, 7)), "{v}");
    assert!(v.text.contains("MariaDB"), "{}", v.text);

    let url = postgres();
    let mut client = connect_postgres(&url).expect("connect to PostgreSQL");
    let v = ensure_pgvector(&mut client, &url).expect("pgvector is enabled");
    assert!(v.at_least((0, 7)), "pgvector {v}");
}

/// Passwords with URL-special characters survive `*_CONN_ARGS` (encoded) and reach the server
/// decoded, on both servers.
#[test]
fn conn_args_passwords_with_special_characters_connect() {
    use annbench::connect::{ServerKind, resolve_from};
    use mysql::prelude::Queryable;
    let pw = "p@ss:w/rd%?#1";
    let user = unique("ab_special");

    let m = mariadb();
    let mut admin = connect_mariadb(&m).unwrap();
    admin
        .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
        .unwrap();
    admin
        .query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY '{pw}'"))
        .unwrap();
    admin
        .query_drop(format!(
            "GRANT SELECT ON `{}`.* TO '{user}'@'%'",
            m.database()
        ))
        .unwrap();
    let host = m.expose().host_str().unwrap().to_string();
    let args = format!("{user}:{pw}:{host}:{}", m.expose().port().unwrap());
    let env = |k: &str| match k {
        "MARIADB_CONN_ARGS" => Some(args.clone()),
        "MARIADB_DB_NAME" => Some(m.database()),
        _ => None,
    };
    let (url, _) = resolve_from(ServerKind::MariaDb, None, &env).unwrap();
    let result = connect_mariadb(&url).map(|_| ());
    admin
        .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
        .unwrap();
    result.expect("MariaDB login with an encoded special-character password");
    assert!(!url.to_string().contains("p@ss"), "{url}");

    let p = postgres();
    let mut admin = connect_postgres(&p).unwrap();
    admin
        .batch_execute(&format!("DROP ROLE IF EXISTS {user}"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE ROLE {user} LOGIN PASSWORD '{pw}'"))
        .unwrap();
    let args = format!("{user}:{pw}:{host}:{}", p.expose().port().unwrap());
    let env = |k: &str| match k {
        "POSTGRES_CONN_ARGS" => Some(args.clone()),
        "POSTGRES_DB_NAME" => Some(p.database()),
        _ => None,
    };
    let (url, _) = resolve_from(ServerKind::Postgres, None, &env).unwrap();
    let result = connect_postgres(&url).map(|_| ());
    admin
        .batch_execute(&format!("DROP ROLE IF EXISTS {user}"))
        .unwrap();
    result.expect("PostgreSQL login with an encoded special-character password");
}

#[test]
fn server_info_for_result_files() {
    use annbench::backend::mariadb::server::server_info as mariadb_server_info;
    use annbench::backend::postgres::server::server_info as postgres_server_info;
    let url = mariadb();
    let info = mariadb_server_info(&mut connect_mariadb(&url).unwrap(), &url).unwrap();
    assert!(info.version.starts_with("MariaDB 11."), "{}", info.version);
    let cache: u64 = info.settings["mhnsw_max_cache_size"].parse().unwrap();
    assert!(cache > 0, "{info:?}");

    let url = postgres();
    let info = postgres_server_info(&mut connect_postgres(&url).unwrap(), &url).unwrap();
    assert!(info.version.starts_with("PostgreSQL "), "{}", info.version);
    assert!(info.version.contains(", pgvector 0."), "{}", info.version);
    assert!(
        info.settings.contains_key("maintenance_work_mem"),
        "{info:?}"
    );

    let old = old_mariadb();
    let msg = err_text(
        mariadb_server_info(&mut connect_mariadb(&old).unwrap(), &old),
        "server info on 10.11",
    );
    assert!(msg.contains("no VECTOR type"), "{msg}");
}

#[test]
fn mariadb_errors_read_as_text_not_bytes_or_rust_debug() {
    use mysql::prelude::Queryable;
    let url = mariadb();
    let mut c = connect_mariadb(&url).unwrap();
    let table = unique("bytes_err");
    c.query_drop(format!("CREATE TABLE {table} (v VECTOR(2) NOT NULL)"))
        .unwrap();
    // A rejected vector: the server quotes all 6,000 of its bytes in the message.
    let bytes: Vec<u8> = (0..6000).map(|i| (i % 256) as u8).collect();
    let err = c
        .exec_drop(format!("INSERT INTO {table} VALUES (?)"), (bytes,))
        .unwrap_err();
    c.query_drop(format!("DROP TABLE {table}")).unwrap();
    let msg = annbench::backend::mariadb::errors::mariadb_error(&url, "loading", err).to_string();
    assert!(msg.contains("Incorrect vector value"), "{msg}");
    assert!(msg.len() < 400, "{} bytes: {msg}", msg.len());
    assert!(!msg.chars().any(|ch| ch.is_control()), "{msg}");

    // A session killed by the server: the driver's CodecError/IoError becomes plain words.
    let mut victim = connect_mariadb(&url).unwrap();
    let id = victim.connection_id();
    c.query_drop(format!("KILL CONNECTION {id}")).unwrap();
    let err = victim.query_drop("SELECT 1").unwrap_err();
    let msg = annbench::backend::mariadb::errors::mariadb_error(&url, "querying", err).to_string();
    for debug in ["CodecError", "IoError", "DriverError", " { "] {
        assert!(!msg.contains(debug), "{msg}");
    }
    assert!(
        msg.contains("lost the connection") && msg.contains("querying"),
        "{msg}"
    );
}

/// The `servers check` error for `url` of `kind` (the server must be found unusable).
fn check_error(kind: annbench::connect::ServerKind, url: &str) -> String {
    match annbench::servers::check_one(kind, Some(url)) {
        annbench::servers::CheckOutcome::Checked(c) => {
            c.error.expect("the check should find the server unusable")
        }
        other => panic!("expected a checked server, got {other:?}"),
    }
}

/// A loopback server that answers every connection as an HTTP server does, then closes it.
fn http_listener() -> u16 {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let _ = s.read(&mut [0u8; 1024]);
            let _ = s.write_all(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    port
}

/// A Redis URL at another server's port (MariaDB greets first, PostgreSQL closes the connection
/// on Redis's first command, an HTTP server answers in HTTP) says the server there does not
/// speak Redis's protocol, never the client's `Incompatible type - Parse error` nor "is the
/// server running?"; a database number past the server's names the path and the valid range,
/// never `DB index is out of range` alone.
#[test]
fn a_redis_url_at_another_servers_port_or_past_its_databases_says_so() {
    use annbench::connect::ServerKind;
    let url = redis();
    let at = |port: u16| {
        let mut u = url.expose().clone();
        u.set_port(Some(port)).unwrap();
        u.to_string()
    };
    let ports = [
        ("MariaDB", mariadb().expose().port().unwrap()),
        ("PostgreSQL", postgres().expose().port().unwrap()),
        ("HTTP", http_listener()),
    ];
    for (other, port) in ports {
        let e = check_error(ServerKind::Redis, &at(port));
        assert!(
            e.contains("does not speak Redis's protocol")
                && e.contains("another kind of server")
                && e.contains("6379 by default")
                && e.contains(&format!(":{port}")),
            "{other}: {e}"
        );
        for raw in [
            "Incompatible type",
            "Parse error",
            "is the server running",
            "\\x0a",
        ] {
            assert!(!e.contains(raw), "{other}: {e}");
        }
    }
    let mut u = url.expose().clone();
    u.set_path("/99");
    let e = check_error(ServerKind::Redis, u.as_str());
    assert!(
        e.contains("'/99'")
            && e.contains("the server has ")
            && e.contains("(0 to ")
            && e.contains("/0"),
        "{e}"
    );
    assert!(
        !e.contains("ResponseError") && !e.contains("refused to switch"),
        "{e}"
    );
    // A number within the range connects.
    u.set_path("/15");
    let check = annbench::servers::check_one(ServerKind::Redis, Some(u.as_str()));
    match check {
        annbench::servers::CheckOutcome::Checked(c) => assert!(c.usable(), "{:?}", c.error),
        other => panic!("{other:?}"),
    }
}
