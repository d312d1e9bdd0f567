//! Where the servers are, for every kind of database: `--mariadb URL` / `--postgres URL`, the
//! `ANNBENCH_*_URL` env vars, the ann-benchmarks forks' `*_CONN_ARGS` conventions, and defaults
//! that find the servers `scripts/databases.sh` started. Opening a connection, version checks
//! and driver errors belong to each database's backend (`src/backend/mariadb/`,
//! `src/backend/postgres/`); the messages they share are in [`errors`].
//!
//! A [`ServerUrl`] never shows its password: `Display` and `redacted()` mask it.

pub mod errors;
mod resolve;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

    /// The URL flag for this kind, e.g. `--mariadb`.
    pub fn flag(self) -> &'static str {
        match self {
            ServerKind::MariaDb => "--mariadb",
            ServerKind::Postgres => "--postgres",
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

/// Resolve the URL of the `kind` server: `explicit` (`--mariadb`, `--postgres`), then its
/// `ANNBENCH_*_URL`, then `*_CONN_ARGS` + `*_DB_NAME`, then the `servers.env` of
/// `scripts/databases.sh`.
pub fn server_url(kind: ServerKind, explicit: Option<&str>) -> Result<ServerUrl> {
    resolve_with_source(kind, explicit).map(|(u, _)| u)
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
