//! Connection settings for MariaDB and PostgreSQL: `--mariadb URL` / `--postgres URL`, the
//! `ANNBENCH_*_URL` env vars, the ann-benchmarks forks' `*_CONN_ARGS` conventions, and defaults
//! that find the servers `scripts/databases.sh` started.
//!
//! A [`ServerUrl`] never shows its password: `Display` and `redacted()` mask it.

mod checks;
mod errors;
mod resolve;

pub use checks::{
    MIN_MARIADB, MIN_PGVECTOR_HALFVEC, Version, check_mariadb_version, ensure_pgvector,
};
pub use errors::{mariadb_error, postgres_error};
pub use resolve::{
    FORKS_DEFAULT_DB, UrlSource, find_url, lookup, not_configured, read_servers_env, resolve_from,
    resolve_with_source, servers_env_path,
};

use crate::{Error, Result};
use std::fmt;
use std::time::Duration;

/// How long a connection attempt may take before it is reported as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Which server a URL is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    MariaDb,
    Postgres,
}

/// A parsed connection URL (`mysql://` / `mariadb://` or `postgres://` / `postgresql://`).
#[derive(Clone)]
pub struct ServerUrl {
    kind: ServerKind,
    url: url::Url,
}

impl ServerUrl {
    /// Parse and check the scheme.
    pub fn parse(kind: ServerKind, text: &str) -> Result<Self> {
        let url = url::Url::parse(text).map_err(|e| {
            Error::Config(format!(
                "bad {} URL '{}': {e}",
                kind.name(),
                redact_text(text)
            ))
        })?;
        let ok = match kind {
            ServerKind::MariaDb => matches!(url.scheme(), "mysql" | "mariadb"),
            ServerKind::Postgres => matches!(url.scheme(), "postgres" | "postgresql"),
        };
        if !ok {
            return Err(Error::Config(format!(
                "bad {} URL '{}': expected {}",
                kind.name(),
                redact_text(text),
                kind.example()
            )));
        }
        Ok(ServerUrl { kind, url })
    }

    /// MariaDB or PostgreSQL.
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The database named in the URL path (empty when none).
    pub fn database(&self) -> String {
        percent_decode(self.url.path().trim_start_matches('/'))
    }

    /// The decoded password, for scrubbing driver messages (never for display).
    pub(crate) fn password(&self) -> Option<String> {
        self.url.password().map(percent_decode)
    }

    /// The URL itself, with the password (only for handing to a driver).
    pub fn expose(&self) -> &url::Url {
        &self.url
    }

    /// How the driver reaches the server: `unix socket` when the URL names one (MariaDB's
    /// `?socket=PATH`, a PostgreSQL host that is a percent-encoded directory), else `tcp`.
    /// Recorded with results: the transport changes latency and client CPU.
    pub fn transport(&self) -> &'static str {
        let unix = match self.kind {
            ServerKind::MariaDb => self.url.query_pairs().any(|(k, _)| k == "socket"),
            ServerKind::Postgres => self
                .url
                .host_str()
                .is_some_and(|h| percent_decode(h).starts_with('/')),
        };
        if unix { "unix socket" } else { "tcp" }
    }

    /// The URL with the password replaced by `***`.
    pub fn redacted(&self) -> String {
        let mut u = self.url.clone();
        if u.password().is_some() {
            let _ = u.set_password(Some("***"));
        }
        u.to_string()
    }
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerUrl({})", self.redacted())
    }
}

impl ServerKind {
    /// `MariaDB` or `PostgreSQL`.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::MariaDb => "MariaDB",
            ServerKind::Postgres => "PostgreSQL",
        }
    }

    fn example(self) -> &'static str {
        match self {
            ServerKind::MariaDb => "mysql://user:password@127.0.0.1:3306/annbench",
            ServerKind::Postgres => "postgres://user:password@127.0.0.1:5432/annbench",
        }
    }
}

/// Mask anything between `//user:` and `@` in a URL-ish string that failed to parse.
fn redact_text(text: &str) -> String {
    match (text.find("://"), text.rfind('@')) {
        (Some(s), Some(at)) if at > s + 3 => {
            let creds = &text[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &text[..s + 3], &creds[..c], &text[at..]),
                None => text.to_string(),
            }
        }
        _ => text.to_string(),
    }
}

/// Resolve the MariaDB URL: explicit (`--mariadb`), then `ANNBENCH_MARIADB_URL`, then
/// `MARIADB_CONN_ARGS` + `MARIADB_DB_NAME`, then the `servers.env` of `scripts/databases.sh`.
pub fn mariadb_url(explicit: Option<&str>) -> Result<ServerUrl> {
    resolve_with_source(ServerKind::MariaDb, explicit).map(|(u, _)| u)
}

/// Resolve the PostgreSQL URL, like [`mariadb_url`] with the `POSTGRES_*` names.
pub fn postgres_url(explicit: Option<&str>) -> Result<ServerUrl> {
    resolve_with_source(ServerKind::Postgres, explicit).map(|(u, _)| u)
}

/// Open a MariaDB connection with errors that name the server and the fix. TCP is used even
/// on loopback (the driver's switch to the Unix socket is off unless the URL asks for it with
/// `?prefer_socket=true`), so both databases are measured over the same transport.
pub fn connect_mariadb(url: &ServerUrl) -> Result<mysql::Conn> {
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
            errors::scrub(&e.to_string(), url)
        ))
    })?;
    let mut builder = mysql::OptsBuilder::from_opts(opts);
    if !asks_socket {
        builder = builder.prefer_socket(false);
    }
    if !has_timeout {
        builder = builder.tcp_connect_timeout(Some(CONNECT_TIMEOUT));
    }
    mysql::Conn::new(builder).map_err(|e| mariadb_error(url, "connecting", e))
}

/// Open a PostgreSQL connection with errors that name the server and the fix.
pub fn connect_postgres(url: &ServerUrl) -> Result<postgres::Client> {
    connect_postgres_with(url, postgres_config(url)?)
}

/// Connect with `config` (from [`postgres_config`], e.g. with a notice callback added), with
/// the same errors as [`connect_postgres`].
pub fn connect_postgres_with(
    url: &ServerUrl,
    config: postgres::Config,
) -> Result<postgres::Client> {
    config
        .connect(postgres::NoTls)
        .map_err(|e| postgres_error(url, "connecting", e))
}

/// The driver configuration of `url`, with annbench's connect timeout unless the URL sets one.
pub fn postgres_config(url: &ServerUrl) -> Result<postgres::Config> {
    let mut config: postgres::Config =
        url.expose()
            .as_str()
            .parse()
            .map_err(|e: postgres::Error| {
                Error::Config(format!(
                    "bad PostgreSQL URL {url}: {}",
                    errors::scrub(&e.to_string(), url)
                ))
            })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    Ok(config)
}

/// Decode `%XX` escapes (URL user, password and path parts).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_never_displayed() {
        let u =
            ServerUrl::parse(ServerKind::MariaDb, "mysql://bob:s3cret@127.0.0.1:3306/db").unwrap();
        assert!(!u.to_string().contains("s3cret"));
        assert!(!format!("{u:?}").contains("s3cret"));
        let err = ServerUrl::parse(ServerKind::Postgres, "mysql://bob:s3cret@h/db").unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn decodes_database_and_password() {
        let u =
            ServerUrl::parse(ServerKind::Postgres, "postgres://u:a%40b%3Ac@h:1/my%20db").unwrap();
        assert_eq!(u.database(), "my db");
        assert_eq!(u.password().as_deref(), Some("a@b:c"));
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn transport_follows_the_url() {
        let t = |kind, text| ServerUrl::parse(kind, text).unwrap().transport();
        assert_eq!(
            t(ServerKind::MariaDb, "mysql://u:p@127.0.0.1:3306/db"),
            "tcp"
        );
        assert_eq!(
            t(
                ServerKind::MariaDb,
                "mysql://u:p@localhost/db?socket=%2Frun%2Fm.sock"
            ),
            "unix socket"
        );
        assert_eq!(t(ServerKind::Postgres, "postgres://u:p@h:5432/db"), "tcp");
        assert_eq!(
            t(
                ServerKind::Postgres,
                "postgres://u:p@%2Frun%2Fpostgresql:5432/db"
            ),
            "unix socket"
        );
    }
}
