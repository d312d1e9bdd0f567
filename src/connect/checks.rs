//! Connect-time checks the backends run: MariaDB new enough for VECTOR, pgvector present in
//! the database (created when the user may).

use super::{ServerUrl, postgres_error};
use crate::{Error, Result};
use mysql::prelude::Queryable;
use std::fmt;

/// A dotted version, e.g. MariaDB `11.8.9` or pgvector `0.8.0`, with the server's full text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// As the server reported it, e.g. `11.8.9-MariaDB-0+deb13u1`.
    pub text: String,
}

/// The first MariaDB with the VECTOR type and MHNSW index.
pub const MIN_MARIADB: (u32, u32) = (11, 7);
/// The first pgvector with `halfvec`.
pub const MIN_PGVECTOR_HALFVEC: (u32, u32) = (0, 7);

impl Version {
    /// Parse the leading `major.minor[.patch]` of `text`; `None` if it has none.
    pub fn parse(text: &str) -> Option<Version> {
        let head: String = text
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = head.split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some(Version {
            major,
            minor,
            patch,
            text: text.trim().to_string(),
        })
    }

    /// True when this version is `major.minor` or newer.
    pub fn at_least(&self, (major, minor): (u32, u32)) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The server's version, or an [`Error::Server`] when it is not MariaDB 11.7 or newer
/// (e.g. "MariaDB 10.11.19 at ... has no VECTOR type; annbench needs 11.7 or newer").
pub fn check_mariadb_version(conn: &mut mysql::Conn, url: &ServerUrl) -> Result<Version> {
    let text: Option<String> = conn
        .query_first("SELECT VERSION()")
        .map_err(|e| super::mariadb_error(url, "reading the server version", e))?;
    let text = text.unwrap_or_default();
    mariadb_version_ok(&text, url)
}

/// The version rule on its own, for unit tests.
pub(crate) fn mariadb_version_ok(text: &str, url: &ServerUrl) -> Result<Version> {
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

/// The pgvector version enabled in the URL's database. Creates the extension when it is
/// installed but not enabled and the user may; otherwise an [`Error::Server`] saying who must
/// do what (install the package, or run `CREATE EXTENSION vector` as a superuser).
pub fn ensure_pgvector(client: &mut postgres::Client, url: &ServerUrl) -> Result<Version> {
    if let Some(v) = enabled_pgvector(client, url)? {
        return Ok(v);
    }
    let db = url.database();
    let user = url.expose().username().to_string();
    let available: Option<String> = client
        .query_opt(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'",
            &[],
        )
        .map_err(|e| postgres_error(url, "looking for pgvector", e))?
        .and_then(|row| row.get(0));
    let Some(available) = available else {
        let major: String = client
            .query_one(
                "SELECT current_setting('server_version_num')::int / 10000 || ''",
                &[],
            )
            .map(|r| r.get(0))
            .unwrap_or_else(|_| "NN".into());
        return Err(Error::Server(format!(
            "pgvector is not installed on PostgreSQL at {url}: install it (Debian/Ubuntu: \
             apt-get install postgresql-{major}-pgvector; else build \
             https://github.com/pgvector/pgvector), then as a superuser run \
             CREATE EXTENSION vector; in database {db}"
        )));
    };
    if let Err(e) = client.batch_execute("CREATE EXTENSION IF NOT EXISTS vector") {
        // Another connection may have created it at the same moment.
        if let Some(v) = enabled_pgvector(client, url)? {
            return Ok(v);
        }
        if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            return Err(Error::Server(format!(
                "pgvector {available} is installed on PostgreSQL at {url} but not enabled in \
                 database {db}, and user '{user}' may not create it: as a superuser run \
                 CREATE EXTENSION vector; in database {db} (e.g. psql -d {db} -c 'CREATE \
                 EXTENSION vector')"
            )));
        }
        return Err(postgres_error(url, "creating the vector extension", e));
    }
    enabled_pgvector(client, url)?.ok_or_else(|| {
        Error::Server(format!(
            "pgvector at {url}: CREATE EXTENSION vector did not enable it"
        ))
    })
}

fn enabled_pgvector(client: &mut postgres::Client, url: &ServerUrl) -> Result<Option<Version>> {
    let row = client
        .query_opt(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
            &[],
        )
        .map_err(|e| postgres_error(url, "looking for pgvector", e))?;
    Ok(row.and_then(|r| r.get::<_, Option<String>>(0)).map(|text| {
        Version::parse(&text).unwrap_or(Version {
            major: 0,
            minor: 0,
            patch: 0,
            text,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::ServerKind;

    fn url() -> ServerUrl {
        ServerUrl::parse(ServerKind::MariaDb, "mysql://u:pw@127.0.0.1:1/db").unwrap()
    }

    #[test]
    fn parses_versions() {
        let v = Version::parse("11.8.9-MariaDB-0+deb13u1").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (11, 8, 9));
        assert_eq!(Version::parse("0.8").unwrap().to_string(), "0.8.0");
        assert!(Version::parse("MariaDB").is_none());
    }

    #[test]
    fn version_rule() {
        assert!(mariadb_version_ok("11.7.2-MariaDB", &url()).is_ok());
        let old = mariadb_version_ok("10.11.19-MariaDB-0+deb12u1", &url()).unwrap_err();
        assert!(old.to_string().contains("MariaDB 10.11.19"), "{old}");
        assert!(old.to_string().contains("no VECTOR type"), "{old}");
        let mysql = mariadb_version_ok("8.4.0", &url()).unwrap_err();
        assert!(mysql.to_string().contains("not MariaDB"), "{mysql}");
    }
}
