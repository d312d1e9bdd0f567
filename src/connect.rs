//! Connection settings for MariaDB and PostgreSQL: `--mariadb URL` / `--postgres URL`, the
//! `ANNBENCH_*_URL` env vars, the ann-benchmarks forks' `*_CONN_ARGS` conventions, and defaults
//! that find the servers `scripts/databases.sh` started.
//!
//! A [`ServerUrl`] never shows its password: `Display` and `redacted()` mask it.

use crate::{Error, Result};
use std::fmt;

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

    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The URL itself, with the password (only for handing to a driver).
    pub fn expose(&self) -> &url::Url {
        &self.url
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

/// Resolve the MariaDB URL: explicit (`--mariadb`), then the environment, then the defaults of
/// `scripts/databases.sh`.
pub fn mariadb_url(explicit: Option<&str>) -> Result<ServerUrl> {
    resolve(ServerKind::MariaDb, explicit)
}

/// Resolve the PostgreSQL URL, like [`mariadb_url`].
pub fn postgres_url(explicit: Option<&str>) -> Result<ServerUrl> {
    resolve(ServerKind::Postgres, explicit)
}

fn resolve(kind: ServerKind, explicit: Option<&str>) -> Result<ServerUrl> {
    let var = match kind {
        ServerKind::MariaDb => "ANNBENCH_MARIADB_URL",
        ServerKind::Postgres => "ANNBENCH_POSTGRES_URL",
    };
    let text = explicit
        .map(str::to_string)
        .or_else(|| std::env::var(var).ok())
        .ok_or_else(|| {
            Error::Config(format!(
                "no {} server given: pass --{} URL or set {var}",
                kind.name(),
                match kind {
                    ServerKind::MariaDb => "mariadb",
                    ServerKind::Postgres => "postgres",
                }
            ))
        })?;
    ServerUrl::parse(kind, &text)
}

/// Open a MariaDB connection with errors that name the server and the fix.
pub fn connect_mariadb(url: &ServerUrl) -> Result<mysql::Conn> {
    let opts = mysql::Opts::from_url(url.expose().as_str())
        .map_err(|e| Error::Config(format!("bad MariaDB URL {url}: {e}")))?;
    mysql::Conn::new(opts).map_err(|e| Error::Server(format!("MariaDB at {url}: {e}")))
}

/// Open a PostgreSQL connection with errors that name the server and the fix.
pub fn connect_postgres(url: &ServerUrl) -> Result<postgres::Client> {
    postgres::Client::connect(url.expose().as_str(), postgres::NoTls)
        .map_err(|e| Error::Server(format!("PostgreSQL at {url}: {e}")))
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
}
