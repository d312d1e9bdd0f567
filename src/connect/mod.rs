//! Where the servers are, for every database in the registry: its URL flag (`--mariadb URL`),
//! its `ANNBENCH_*_URL` variable, the ann-benchmarks forks' `*_CONN_ARGS` conventions, and
//! defaults that find the servers `scripts/databases.sh` started; each database declares these
//! names ([`crate::registry::DatabaseDecl`]), so nothing here names one. Opening a connection, version checks
//! and driver errors belong to each database's backend (`src/backend/mariadb/`,
//! `src/backend/postgres/`); the messages they share are in [`errors`].
//!
//! A [`ServerUrl`] never shows its password: `Display` and `redacted()` mask it.

pub mod errors;
mod resolve;

pub use errors::{is_secret_key, mask_secrets, redact_text};
pub use resolve::{
    FORKS_DEFAULT_DB, UrlSource, find_url, lookup, not_configured, read_servers_env, resolve_from,
    resolve_with_source, servers_env_entries, servers_env_path, setting_shown,
};

use crate::{Error, Result};
use std::fmt;
use std::time::Duration;

/// How long a connection attempt may take before it is reported as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub use crate::registry::ServerKind;

/// A parsed connection URL (`mysql://` / `mariadb://` or `postgres://` / `postgresql://`).
#[derive(Clone)]
pub struct ServerUrl {
    kind: ServerKind,
    url: url::Url,
}

impl ServerUrl {
    /// The TCP port the URL names explicitly (`None` for a default port or a Unix socket).
    /// Whether the URL names this machine over TCP: 127.0.0.0/8, ::1 or localhost.
    pub fn is_loopback(&self) -> bool {
        match self.url.host() {
            Some(url::Host::Ipv4(a)) => a.is_loopback(),
            Some(url::Host::Ipv6(a)) => a.is_loopback(),
            // Hosts of postgres:// and mysql:// URLs (schemes the url crate does not know)
            // are kept as text, addresses too.
            Some(url::Host::Domain(d)) => {
                let d = d.trim_start_matches('[').trim_end_matches(']');
                d.eq_ignore_ascii_case("localhost")
                    || d.parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback())
            }
            None => false,
        }
    }

    pub fn tcp_port(&self) -> Option<u16> {
        let socket = self
            .url
            .host_str()
            .is_some_and(|h| h.starts_with('%') || h.starts_with('/'))
            || self
                .url
                .query_pairs()
                .any(|(k, _)| k == "socket" || k == "host");
        if socket { None } else { self.url.port() }
    }

    /// Parse and check the scheme. Errors never show the password, however malformed the
    /// text (see [`errors::redact_text`]).
    pub fn parse(kind: ServerKind, text: &str) -> Result<Self> {
        let shown = errors::redact_text(text);
        let url = url::Url::parse(text).map_err(|e| {
            let hint = match e {
                url::ParseError::RelativeUrlWithoutBase if text.contains('=') => format!(
                    "; annbench takes a URL, not key=value settings: {}",
                    kind.example()
                ),
                url::ParseError::RelativeUrlWithoutBase => {
                    format!("; expected a URL such as {}", kind.example())
                }
                _ if text.contains('@') => format!("; {}", encode_hint(kind)),
                _ => String::new(),
            };
            Error::Config(format!("bad {} URL '{shown}': {e}{hint}", kind.name()))
        })?;
        if !kind.decl().schemes.contains(&url.scheme()) {
            return Err(Error::Config(format!(
                "bad {} URL '{shown}': expected {}",
                kind.name(),
                kind.example()
            )));
        }
        // `mysql:/u:pw@h` parses, as a path with no host: refuse it before it is ever shown.
        if url.host_str().is_none_or(str::is_empty) {
            return Err(Error::Config(format!(
                "bad {} URL '{shown}': no host; expected {}",
                kind.name(),
                kind.example()
            )));
        }
        // `postgres://bob:1234/pw@h/db` parses as host `bob`, port 1234 and a path holding the
        // rest of the password: an `@` after a host with no user part is a raw `/` or `?` in a
        // password, never a URL annbench would show.
        if url.username().is_empty()
            && (url.path().contains('@') || url.query().is_some_and(|q| q.contains('@')))
        {
            return Err(Error::Config(format!(
                "bad {} URL '{shown}': an '@' follows the host, so the password holds a raw '/' \
                 or '?'; {}",
                kind.name(),
                encode_hint(kind)
            )));
        }
        // A connection URL has no `#part`: there is one when a password holds a raw '#'.
        if url.fragment().is_some() {
            return Err(Error::Config(format!(
                "bad {} URL '{shown}': it has a '#' part; {}",
                kind.name(),
                encode_hint(kind)
            )));
        }
        Ok(ServerUrl { kind, url })
    }

    /// The database it is for.
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The database named in the URL path (empty when none).
    pub fn database(&self) -> String {
        percent_decode(self.url.path().trim_start_matches('/'))
    }

    /// The decoded user name.
    pub fn user(&self) -> String {
        percent_decode(self.url.username())
    }

    /// The decoded password, for drivers that take it apart from the URL (never for display).
    /// A `?password=` query parameter (libpq's URL form) counts too.
    pub fn password(&self) -> Option<String> {
        self.url.password().map(percent_decode).or_else(|| {
            self.url
                .query_pairs()
                .find(|(k, _)| k.eq_ignore_ascii_case("password"))
                .map(|(_, v)| v.into_owned())
        })
    }

    /// The URL itself, with the password (only for handing to a driver).
    pub fn expose(&self) -> &url::Url {
        &self.url
    }

    /// How the driver reaches the server: `unix socket` when the URL names one (as its
    /// database declares: MariaDB's `?socket=PATH`, a PostgreSQL host that is a
    /// percent-encoded directory), else `tcp`.
    /// Recorded with results: the transport changes latency and client CPU.
    pub fn transport(&self) -> &'static str {
        if self.kind.decl().unix_socket.applies(&self.url) {
            "unix socket"
        } else {
            "tcp"
        }
    }

    /// The URL with the password (in the user part or a `password=` parameter) replaced by
    /// `***`.
    pub fn redacted(&self) -> String {
        let mut u = self.url.clone();
        if u.password().is_some() {
            let _ = u.set_password(Some("***"));
        }
        if u.query_pairs().any(|(k, _)| errors::is_secret_key(&k)) {
            let pairs: Vec<(String, String)> = u
                .query_pairs()
                .map(|(k, v)| {
                    let v = if errors::is_secret_key(&k) {
                        "***".into()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), v)
                })
                .collect();
            u.query_pairs_mut().clear().extend_pairs(pairs);
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

/// How to write a password that holds URL syntax.
fn encode_hint(kind: ServerKind) -> String {
    let parts = kind.decl().forks.map_or(String::new(), |f| {
        format!(
            ", or give the parts with {} (user:password:host:port, taken as is)",
            f.conn_args
        )
    });
    format!(
        "if the password contains @ # / ? : or %, percent-encode them in the URL \
         (%40 %23 %2F %3F %3A %25){parts}"
    )
}

/// Resolve the URL of the `kind` server: `explicit` (`--mariadb`, `--postgres`), then its
/// `ANNBENCH_*_URL`, then `*_CONN_ARGS` + `*_DB_NAME`, then the `servers.env` of
/// `scripts/databases.sh`.
pub fn server_url(kind: ServerKind, explicit: Option<&str>) -> Result<ServerUrl> {
    resolve_with_source(kind, explicit).map(|(u, _)| u)
}

/// Decode `%XX` escapes (URL user, password and path parts); invalid escapes stay as is.
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_are_told_from_other_hosts() {
        let at = |kind, u: &str| ServerUrl::parse(kind, u).unwrap().is_loopback();
        for (kind, scheme) in [
            (ServerKind::MariaDb, "mysql"),
            (ServerKind::Postgres, "postgres"),
        ] {
            for host in ["127.0.0.1", "127.1.2.3", "localhost", "[::1]"] {
                assert!(at(kind, &format!("{scheme}://u:p@{host}:1/db")), "{host}");
            }
            for host in ["192.0.2.1", "db.example", "[2001:db8::1]"] {
                assert!(!at(kind, &format!("{scheme}://u:p@{host}:1/db")), "{host}");
            }
        }
        assert!(at(ServerKind::Redis, "redis://:p@127.0.0.1:6379"));
    }

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
    fn malformed_urls_never_show_the_password() {
        let pw = "Zq9pw";
        let cases = [
            "postgres//bob:Zq9pw@h/db",
            "mysql:/bob:Zq9pw@h/db",
            "mysql:bob:Zq9pw@h/db",
            "bob:Zq9pw@127.0.0.1/db",
            "host=h user=bob password=Zq9pw dbname=d",
            "host=h password = 'Zq 9\\'pw Zq9pw' dbname=d",
            "postgres://bob:Zq9pw#x@h/db",
            "postgres://bob:12#Zq9pw@h/db",
            "postgres://bob:Zq/9pw@h/db",
            "mysql://bob:Zq9pw",
            "postgres://h/db?sslmode=off&password=Zq9pw",
            "http://bob:Zq9pw@h/db",
            "mysql://bob:%5AZq9pw@h:notaport/db",
            "postgres://bob:1234/Zq9pw@h/db",
            "mysql://bob:1234?Zq9pw@h/db",
            "postgres://u@h/db?pass%77ord=Zq9pw",
            "host=h user=bob passfile=/x/Zq9pw dbname=d",
            // The default user's form (Redis's usual one): an empty user, then `:password`.
            "redis://:Zq9pw#x@127.0.0.1:6390",
            "redis://:Zq#9pw@127.0.0.1:6390",
            "redis://:Zq9?pw@127.0.0.1:6390/0",
            "redis://:Zq9/pw@127.0.0.1:6390",
            "redis://:Zq@9pw@127.0.0.1:6390",
            "redis:/:Zq9#pw@127.0.0.1:6390",
            "postgres://:Zq9#pw@127.0.0.1:5432/db",
            "mysql://:Zq9?pw@127.0.0.1/db",
            "mysql://u:Zq9#pw@host/db",
            "mysql://u:Zq9?pw@host/db",
            "postgres://:Zq/9#pw@h/db?sslmode=off",
        ];
        for text in cases {
            for kind in [ServerKind::MariaDb, ServerKind::Postgres, ServerKind::Redis] {
                let shown = match ServerUrl::parse(kind, text) {
                    Ok(u) => format!("{u} {u:?}"),
                    Err(e) => e.to_string(),
                };
                assert!(
                    !shown.contains(pw) && !shown.contains("9pw"),
                    "{text}: {shown}"
                );
            }
            assert!(
                !redact_text(text).contains("Zq9"),
                "{text}: {}",
                redact_text(text)
            );
        }
        let e = ServerUrl::parse(ServerKind::Postgres, "postgres://u:a/b@h/db").unwrap_err();
        assert!(e.to_string().contains("%2F"), "{e}");
        let e = ServerUrl::parse(ServerKind::Postgres, "host=h password=x").unwrap_err();
        assert!(e.to_string().contains("not key=value"), "{e}");
        let q = ServerUrl::parse(ServerKind::Postgres, "postgres://u@h/db?password=Zq9pw").unwrap();
        assert_eq!(q.password().as_deref(), Some("Zq9pw"));
    }

    #[test]
    fn driver_messages_are_tidied() {
        let long = format!(
            "Incorrect vector value: '{}' for column `v`",
            "\\x00".repeat(500)
        );
        let t = errors::tidy(&long);
        assert!(
            t.len() < 120 && t.contains("(2000 characters)") && t.ends_with("column `v`"),
            "{t}"
        );
        assert_eq!(errors::tidy("a\nb 'short'"), "a\\x0ab 'short'");
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
