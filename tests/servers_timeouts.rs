//! No wait without a bound when a server does not answer: a listener that accepts and never
//! replies, a URL of one database pointing at the other's port, and a real server stopped
//! with SIGSTOP (continued afterwards, always, even when the test fails). Every case must end
//! with a clear error; a hang fails the test by never finishing. One test function: the
//! stopped servers must not stall other tests of this file.

mod servers_support;

use annbench::connect::{ServerKind, ServerUrl};
use annbench::servers::{CheckOutcome, check_one};
use servers_support::*;
use std::net::TcpListener;
use std::process::Command;

/// The error of `servers check` for `url` (the server must be found unusable).
fn check_error(kind: ServerKind, url: &str) -> String {
    match check_one(kind, Some(url)) {
        CheckOutcome::Checked(c) => c.error.expect("the check should find the server unusable"),
        other => panic!("expected a checked server, got {other:?}"),
    }
}

/// A loopback listener that accepts connections and never sends a byte; its port.
fn silent_listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s); // kept open, never answered
        }
    });
    port
}

/// `url` with another port.
fn on_port(url: &ServerUrl, port: u16) -> String {
    let mut u = url.expose().clone();
    u.set_port(Some(port)).unwrap();
    u.to_string()
}

/// The pid of the local server `name` (`MariaDB`, `PostgreSQL`) from `databases.sh status`.
fn server_pid(name: &str) -> i32 {
    let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/databases.sh"))
        .arg("status")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(name) && l.contains("running, pid "))
        .unwrap_or_else(|| panic!("{name} not running: {text}"));
    let pid = line.split("pid ").nth(1).unwrap();
    pid.split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn unanswered_connections_end_with_a_clear_error() {
    let (maria, pg) = (mariadb(), postgres());
    let handshake = "did not complete the connection handshake";

    // A listener that accepts and never replies, under both URLs.
    let port = silent_listener();
    for (kind, url) in [
        (ServerKind::MariaDb, on_port(&maria, port)),
        (ServerKind::Postgres, on_port(&pg, port)),
    ] {
        let e = check_error(kind, &url);
        assert!(e.contains(handshake), "{kind:?}: {e}");
        assert!(!e.contains(maria.expose().password().unwrap_or("-")), "{e}");
    }

    // A MariaDB URL at PostgreSQL's port: PostgreSQL waits for the client to speak first.
    let e = check_error(
        ServerKind::MariaDb,
        &on_port(&maria, pg.expose().port().unwrap()),
    );
    assert!(
        e.contains(handshake) && e.contains("another kind of server"),
        "{e}"
    );
    // A PostgreSQL URL at MariaDB's port: MariaDB's greeting is not PostgreSQL's protocol.
    let e = check_error(
        ServerKind::Postgres,
        &on_port(&pg, maria.expose().port().unwrap()),
    );
    assert!(e.contains("does not speak PostgreSQL's protocol"), "{e}");

    // Real servers stopped with SIGSTOP: `servers check` (a new connection) gives up.
    for (name, kind, url) in [
        ("MariaDB", ServerKind::MariaDb, &maria),
        ("PostgreSQL", ServerKind::Postgres, &pg),
    ] {
        let stopped = Stopped::new(server_pid(name));
        let e = check_error(kind, url.expose().as_str());
        drop(stopped);
        assert!(e.contains(handshake), "{name}: {e}");
    }
}
