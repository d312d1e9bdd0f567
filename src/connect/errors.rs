//! Driver errors turned into [`Error::Server`] messages that say what is wrong and what to do.
//! Messages name the server by its redacted URL and never contain the password: the driver's
//! text is scrubbed too, in case a server ever echoes it.

use super::{ServerKind, ServerUrl};
use crate::Error;
use std::io;

const START_HINT: &str = "is the server running? Start local servers with scripts/databases.sh up, \
     or pass the URL of yours";

/// A MariaDB driver error during `context` (e.g. "connecting", "creating the table").
pub fn mariadb_error(url: &ServerUrl, context: &str, err: mysql::Error) -> Error {
    let user = url.expose().username().to_string();
    let db = url.database();
    let msg = match &err {
        mysql::Error::MySqlError(e) => match e.code {
            // ER_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR
            1045 | 1698 => format!(
                "MariaDB at {url} refused user '{user}': wrong password or unknown user. \
                 Check the user and password in the URL"
            ),
            // ER_BAD_DB_ERROR
            1049 => format!(
                "MariaDB at {url} has no database '{db}': create it (CREATE DATABASE `{db}`) \
                 or name an existing one in the URL path"
            ),
            // ER_DBACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR,
            // ER_SPECIFIC_ACCESS_DENIED_ERROR
            1044 | 1142 | 1143 | 1227 => format!(
                "MariaDB at {url}: user '{user}' lacks a privilege while {context}: {}. \
                 Grant it, e.g. GRANT ALL ON `{db}`.* TO '{user}'@'%'",
                scrub(&e.message, url)
            ),
            // ER_CON_COUNT_ERROR
            1040 => format!(
                "MariaDB at {url} has too many connections: raise max_connections or use \
                 fewer clients"
            ),
            _ => format!(
                "MariaDB at {url}, while {context}: error {} ({}): {}",
                e.code,
                e.state,
                scrub(&e.message, url)
            ),
        },
        mysql::Error::IoError(e) => io_message(url, context, e),
        mysql::Error::DriverError(e) => match e {
            mysql::DriverError::ConnectTimeout => {
                format!("cannot reach MariaDB at {url}: connection timed out; {START_HINT}")
            }
            mysql::DriverError::CouldNotConnect(Some((_, desc, kind))) => format!(
                "cannot reach MariaDB at {url}: {}; {START_HINT}",
                kind_text(*kind, &scrub(desc, url))
            ),
            mysql::DriverError::CouldNotConnect(None) => {
                format!("cannot reach MariaDB at {url}; {START_HINT}")
            }
            other => format!(
                "MariaDB at {url}, while {context}: {}",
                scrub(&other.to_string(), url)
            ),
        },
        other => format!(
            "MariaDB at {url}, while {context}: {}",
            scrub(&other.to_string(), url)
        ),
    };
    Error::Server(msg)
}

/// A PostgreSQL driver error during `context`.
pub fn postgres_error(url: &ServerUrl, context: &str, err: postgres::Error) -> Error {
    use postgres::error::SqlState;
    let user = url.expose().username().to_string();
    let db = url.database();
    let Some(db_err) = err.as_db_error() else {
        // No server answer: the socket failed, timed out or closed.
        if let Some(io) = find_io(&err) {
            return Error::Server(io_message(url, context, io));
        }
        let text = scrub(&err.to_string(), url);
        return Error::Server(if err.is_closed() || context == "connecting" {
            format!("cannot talk to PostgreSQL at {url} while {context}: {text}; {START_HINT}")
        } else {
            format!("PostgreSQL at {url}, while {context}: {text}")
        });
    };
    let detail = scrub(db_err.message(), url);
    let code = db_err.code();
    let msg = if *code == SqlState::INVALID_PASSWORD
        || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
    {
        format!(
            "PostgreSQL at {url} refused user '{user}': wrong password, unknown user, or no \
             pg_hba.conf entry ({detail}). Check the user and password in the URL"
        )
    } else if *code == SqlState::INVALID_CATALOG_NAME {
        format!(
            "PostgreSQL at {url} has no database '{db}': create it (CREATE DATABASE {db}) or \
             name an existing one in the URL path"
        )
    } else if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        let hint = if context == "connecting" {
            format!("GRANT CONNECT ON DATABASE {db} TO {user}")
        } else {
            format!("GRANT CREATE ON SCHEMA public TO {user}, or use a database {user} owns")
        };
        format!(
            "PostgreSQL at {url}: user '{user}' lacks a privilege while {context} ({detail}). \
             Grant it as a superuser, e.g. {hint}"
        )
    } else if *code == SqlState::TOO_MANY_CONNECTIONS {
        format!(
            "PostgreSQL at {url} has too many connections: raise max_connections or use fewer clients"
        )
    } else {
        let hint = db_err
            .hint()
            .map(|h| format!(" (hint: {h})"))
            .unwrap_or_default();
        format!(
            "PostgreSQL at {url}, while {context}: {} {detail}{hint}",
            code.code()
        )
    };
    Error::Server(msg)
}

fn io_message(url: &ServerUrl, context: &str, e: &io::Error) -> String {
    let what = kind_text(e.kind(), &scrub(&e.to_string(), url));
    if context == "connecting" {
        format!(
            "cannot reach {} at {url}: {what}; {START_HINT}",
            url.kind().name()
        )
    } else {
        format!(
            "lost the connection to {} at {url} while {context}: {what} (did the server stop?)",
            url.kind().name()
        )
    }
}

fn kind_text(kind: io::ErrorKind, fallback: &str) -> String {
    match kind {
        io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        io::ErrorKind::TimedOut => "connection timed out".to_string(),
        _ => fallback.to_string(),
    }
}

fn find_io(err: &postgres::Error) -> Option<&io::Error> {
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return Some(io);
        }
        source = s.source();
    }
    None
}

/// Remove the URL's password from a driver message, should a server ever echo it.
pub(crate) fn scrub(text: &str, url: &ServerUrl) -> String {
    match url.password() {
        Some(pw) if pw.len() >= 3 => text.replace(&pw, "***"),
        _ => text.to_string(),
    }
}

impl ServerKind {
    /// The URL flag for this kind, e.g. `--mariadb`.
    pub fn flag(self) -> &'static str {
        match self {
            ServerKind::MariaDb => "--mariadb",
            ServerKind::Postgres => "--postgres",
        }
    }
}
