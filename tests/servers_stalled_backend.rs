//! A PostgreSQL session whose server process stops answering mid-statement (its backend
//! stopped with SIGSTOP, continued afterwards, always): the watchdog ends a bounded call at
//! its limit, and a stop request ends any call within the grace, over TCP and over the Unix
//! socket. One test function: a stop request applies to the whole process.

mod servers_support;

use servers_support::Stopped;

use annbench::backend::postgres::server::connect_watched;
use annbench::backend::postgres::watchdog::{self, STOP_GRACE};
use annbench::connect::{ServerKind, ServerUrl, lookup};
use std::time::{Duration, Instant};

/// A connection on `url` with its backend stopped; the call `wait` then makes on it must end
/// with the watchdog's error, within `bound`.
fn stalled_call_ends(url: &ServerUrl, bound: Duration, arm: Option<Duration>, what: &str) {
    let (mut client, conn) = connect_watched(url).unwrap();
    assert!(
        conn.is_some(),
        "{what}: the connection's socket was not found"
    );
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    let stopped = Stopped::new(pid);
    let t0 = Instant::now();
    let guard = arm.map(|limit| watchdog::arm(conn, limit));
    let e = client
        .query_one("SELECT 1", &[])
        .map(drop)
        .map_err(|e| watchdog::pg_err(conn, e, "running a query").to_string())
        .unwrap_err();
    let took = t0.elapsed();
    drop(guard);
    drop(stopped);
    assert!(took < bound, "{what}: the call ended after {took:?}");
    assert!(
        e.contains("PostgreSQL stopped answering while running a query"),
        "{what}: {e}"
    );
    assert!(!e.contains(url.expose().password().unwrap_or("-")), "{e}");
}

#[test]
fn a_stopped_backend_ends_a_bounded_call_and_a_stop_request_ends_any_call() {
    let tcp = servers_support::postgres();
    let unix = lookup("ANNBENCH_POSTGRES_SOCKET_URL")
        .unwrap()
        .expect("ANNBENCH_POSTGRES_SOCKET_URL is not set: run scripts/databases.sh up");
    let unix = ServerUrl::parse(ServerKind::Postgres, &unix).unwrap();
    for (url, transport) in [(&tcp, "tcp"), (&unix, "unix socket")] {
        // A call armed with a 2 s limit: ends soon after it, with the limit in the message.
        stalled_call_ends(
            url,
            Duration::from_secs(10),
            Some(Duration::from_secs(2)),
            transport,
        );
    }
    // An unbounded call: a stop request ends it within the grace.
    let (mut client, conn) = connect_watched(&tcp).unwrap();
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    let stopped = Stopped::new(pid);
    let t0 = Instant::now();
    let waiter = std::thread::spawn(move || {
        let r = client.query_one("SELECT 1", &[]).map(drop);
        r.map_err(|e| watchdog::pg_err(conn, e, "running a query").to_string())
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(!waiter.is_finished(), "a stopped backend answered");
    watchdog::request_stop();
    let e = waiter.join().unwrap().unwrap_err();
    let took = t0.elapsed();
    watchdog::clear_stop();
    drop(stopped);
    assert!(
        took < STOP_GRACE + Duration::from_secs(5),
        "ended after {took:?}"
    );
    assert!(e.contains("asked to stop"), "{e}");
    // Healthy connections made after the stop was cleared are left alone.
    let (mut fresh, _) = connect_watched(&tcp).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    fresh.query_one("SELECT 1", &[]).unwrap();
}
