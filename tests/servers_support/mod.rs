//! Shared helpers for the real-server tests (`tests/servers_*.rs`). The servers come from the
//! usual settings (`ANNBENCH_*_URL`, `*_CONN_ARGS`, or the `servers.env` written by
//! `scripts/databases.sh up`); with none configured a test fails and says how to start them.
#![allow(dead_code)]

use annbench::connect::{ServerKind, ServerUrl, lookup, server_url};

/// The MariaDB >= 11.7 test server.
pub fn mariadb() -> ServerUrl {
    server_url(ServerKind::MariaDb, None).unwrap_or_else(|e| {
        panic!("no MariaDB test server: run scripts/databases.sh up (CI does). Details: {e}")
    })
}

/// The PostgreSQL + pgvector test server.
pub fn postgres() -> ServerUrl {
    server_url(ServerKind::Postgres, None).unwrap_or_else(|e| {
        panic!("no PostgreSQL test server: run scripts/databases.sh up (CI does). Details: {e}")
    })
}

/// The Redis 8 test server.
pub fn redis() -> ServerUrl {
    server_url(ServerKind::Redis, None).unwrap_or_else(|e| {
        panic!("no Redis test server: run scripts/databases.sh up (CI does). Details: {e}")
    })
}

/// The too-old MariaDB 10.11 started by `scripts/databases.sh up-legacy`.
pub fn old_mariadb() -> ServerUrl {
    let text = lookup("ANNBENCH_TEST_OLD_MARIADB_URL")
        .unwrap_or_else(|e| panic!("cannot read ANNBENCH_TEST_OLD_MARIADB_URL: {e}"))
        .unwrap_or_else(|| {
            panic!(
                "no legacy MariaDB test server: run scripts/databases.sh up-legacy (CI does); \
                 it sets ANNBENCH_TEST_OLD_MARIADB_URL in servers.env"
            )
        });
    ServerUrl::parse(ServerKind::MariaDb, &text).expect("ANNBENCH_TEST_OLD_MARIADB_URL parses")
}

/// `url` with another user, password and/or database.
pub fn with(
    url: &ServerUrl,
    user: Option<&str>,
    password: Option<&str>,
    db: Option<&str>,
) -> ServerUrl {
    let mut u = url.expose().clone();
    if let Some(user) = user {
        u.set_username(user).unwrap();
    }
    if let Some(pw) = password {
        u.set_password(Some(pw)).unwrap();
    }
    if let Some(db) = db {
        u.set_path(db);
    }
    ServerUrl::parse(url.kind(), u.as_str()).unwrap()
}

/// A name no other test process uses: `prefix_<pid>`.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}_{}", std::process::id())
}

/// A loopback port with nothing listening (bound, then released).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The error text of `r`, or a panic naming what unexpectedly succeeded.
pub fn err_text<T>(r: annbench::Result<T>, what: &str) -> String {
    match r {
        Ok(_) => panic!("{what} succeeded but should have failed"),
        Err(annbench::Error::Server(msg)) => msg,
        Err(other) => panic!("{what}: expected a Server error, got {other:?}"),
    }
}

/// SIGSTOPs a process (a server or one of its sessions) and SIGCONTs it when dropped, also
/// when the test panics.
pub struct Stopped(pub i32);

impl Stopped {
    pub fn new(pid: i32) -> Self {
        // SAFETY: a signal to a process of the test's own database server.
        assert_eq!(
            unsafe { libc::kill(pid, libc::SIGSTOP) },
            0,
            "SIGSTOP {pid}"
        );
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}
