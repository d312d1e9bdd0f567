//! The MariaDB server: connecting, the version check (VECTOR needs 11.7), and the version and
//! settings recorded with every result. `servers check` and the backend use these same
//! functions.

use super::errors::{mariadb_error, url_error_text};
use crate::backend::ServerInfo;
use crate::backend::handshake::HANDSHAKE_LIMIT;
use crate::backend::server::Version;
use crate::connect::{CONNECT_TIMEOUT, ServerKind, ServerUrl};
use crate::{Error, Result};
use mysql::prelude::Queryable;
use std::time::Duration;

/// The longest one query of a timed pass may wait for its answer before the connection
/// counts as lost (a server stopped with SIGSTOP, a network partition).
pub const QUERY_READ_LIMIT: Duration = Duration::from_secs(120);

/// The first MariaDB with the VECTOR type and MHNSW index.
pub use super::decl::MIN_MARIADB;

/// Server variables recorded with every result and shown by `servers check`, in this order,
/// followed by those the algorithms' parameters set ([`crate::backend::parameter_settings`]).
pub const SETTINGS: &[&str] = &[
    "mhnsw_max_cache_size",
    "innodb_buffer_pool_size",
    // O_DIRECT: InnoDB reads its data files past the OS cache (scripts/databases.sh --memory).
    "innodb_flush_method",
    "mhnsw_default_m",
    "key_buffer_size",
    "local_infile",
    "max_connections",
    "version_compile_machine",
];

/// Open a connection with errors that name the server and the fix. TCP is used even on
/// loopback (the driver's switch to the Unix socket is off unless the URL asks for it with
/// `?prefer_socket=true`), so both databases are measured over the same transport.
pub fn connect(url: &ServerUrl) -> Result<mysql::Conn> {
    connect_reading(url, None)
}

/// [`connect`], and a statement whose answer does not start within `read_limit` fails as a
/// lost connection instead of waiting for a server that stopped answering (`None`: no limit,
/// for statements that may run for hours, such as builds without `--timeout`).
pub fn connect_reading(url: &ServerUrl, read_limit: Option<Duration>) -> Result<mysql::Conn> {
    let mut u = url.expose().clone();
    if u.scheme() != "mysql" && u.set_scheme("mysql").is_err() {
        return Err(Error::Config(format!(
            "bad MariaDB URL {url}: cannot use its scheme"
        )));
    }
    let asks_socket = u.query_pairs().any(|(k, _)| k == "prefer_socket");
    let has_timeout = u.query_pairs().any(|(k, _)| k == "tcp_connect_timeout_ms");
    let opts = mysql::Opts::from_url(u.as_str()).map_err(|e| {
        Error::Config(format!(
            "bad MariaDB URL {url}: {}",
            crate::connect::errors::scrub(&url_error_text(&e), url)
        ))
    })?;
    let mut builder = mysql::OptsBuilder::from_opts(opts);
    if !asks_socket {
        builder = builder.prefer_socket(false);
    }
    if !has_timeout {
        builder = builder.tcp_connect_timeout(Some(CONNECT_TIMEOUT));
    }
    builder = builder.read_timeout(read_limit).write_timeout(read_limit);
    let at = url.clone();
    crate::backend::handshake::within(url, HANDSHAKE_LIMIT, move || {
        mysql::Conn::new(builder).map_err(|e| mariadb_error(&at, "connecting", e))
    })
}

/// The server's version, or an [`Error::Server`] when it is not MariaDB 11.7 or newer
/// (e.g. "MariaDB 10.11.19 at ... has no VECTOR type; annbench needs 11.7 or newer").
pub fn check_version(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<Version> {
    let text: Option<String> = conn
        .query_first("SELECT VERSION()")
        .map_err(|e| mariadb_error(url, "reading the server version", e))?;
    version_ok(&text.unwrap_or_default(), url)
}

/// The version rule on its own, for unit tests.
fn version_ok(text: &str, url: &ServerUrl) -> Result<Version> {
    let (min_major, min_minor) = MIN_MARIADB;
    let v = Version::parse(text).ok_or_else(|| {
        Error::Server(format!(
            "server at {url} reported an unreadable version '{text}'"
        ))
    })?;
    if !text.contains("MariaDB") {
        return Err(Error::Server(format!(
            "the server at {url} is not MariaDB (version '{text}'); the MHNSW backend needs \
             MariaDB {min_major}.{min_minor} or newer"
        )));
    }
    if !v.at_least(MIN_MARIADB) {
        return Err(Error::Server(format!(
            "MariaDB {v} at {url} has no VECTOR type; annbench needs {min_major}.{min_minor} or \
             newer (scripts/databases.sh up starts MariaDB 11.8)"
        )));
    }
    Ok(v)
}

/// Version and [`SETTINGS`] (raw server values), for the result files. Fails like
/// [`check_version`] on a server without VECTOR support.
pub fn server_info(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<ServerInfo> {
    let version = check_version(conn, url)?;
    Ok(ServerInfo {
        version: format!("MariaDB {}", version.text),
        settings: read_variables(conn, url)?.into_iter().collect(),
    })
}

/// [`server_info`] on a connection of its own (the [`crate::backend::Database`] entry).
pub fn server_info_at(url: &ServerUrl) -> Result<ServerInfo> {
    server_info(&mut connect(url)?, url)
}

/// [`SETTINGS`], then the ones the algorithms' parameters set.
pub fn settings() -> Vec<&'static str> {
    let mut all = SETTINGS.to_vec();
    all.extend(crate::backend::parameter_settings(ServerKind::MariaDb));
    all
}

/// `SHOW GLOBAL VARIABLES` for [`settings`], as `(name, value)`.
fn read_variables(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<Vec<(String, String)>> {
    let list = settings()
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    conn.query(format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"
    ))
    .map_err(|e| mariadb_error(url, "reading settings", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::ServerKind;

    fn url() -> ServerUrl {
        ServerUrl::parse(ServerKind::MariaDb, "mysql://u:pw@127.0.0.1:1/db").unwrap()
    }

    #[test]
    fn version_rule() {
        assert!(version_ok("11.7.2-MariaDB", &url()).is_ok());
        let old = version_ok("10.11.19-MariaDB-0+deb12u1", &url()).unwrap_err();
        assert!(old.to_string().contains("MariaDB 10.11.19"), "{old}");
        assert!(old.to_string().contains("no VECTOR type"), "{old}");
        let mysql = version_ok("8.4.0", &url()).unwrap_err();
        assert!(mysql.to_string().contains("not MariaDB"), "{mysql}");
    }
}
