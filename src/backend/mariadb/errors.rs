//! MariaDB driver errors as annbench errors. At connect time ([`mariadb_error`]) every failure
//! is a server problem with the fix (password, database, privilege, unreachable); while
//! running ([`sql_err`]) a failed statement is a backend error and a lost connection a server
//! error, both naming what was being done.

use crate::Error;
use crate::connect::ServerUrl;
use crate::connect::errors::{START_HINT, io_message, kind_text, scrub, server_text, tidy};

/// A MariaDB driver error during `context` (e.g. "connecting", "creating the table").
pub fn mariadb_error(url: &ServerUrl, context: &str, err: mysql::Error) -> Error {
    let user = url.user();
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
                tidy(&scrub(&e.message, url))
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
                tidy(&scrub(&e.message, url))
            ),
        },
        mysql::Error::IoError(e) => io_message(url, context, e),
        // The driver's own Display wraps these as `CodecError { .. }` (Rust debug style).
        mysql::Error::CodecError(e) => {
            match std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>()) {
                Some(io) => io_message(url, context, io),
                None => format!(
                    "MariaDB at {url}, while {context}: {}",
                    scrub(&e.to_string(), url)
                ),
            }
        }
        mysql::Error::UrlError(e) => {
            format!("bad MariaDB URL {url}: {}", scrub(&url_error_text(e), url))
        }
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

/// The URL error's text without the driver's `URL ParseError { .. }` wrapping.
pub fn url_error_text(e: &mysql::UrlError) -> String {
    match e {
        mysql::UrlError::ParseError(p) => p.to_string(),
        other => other.to_string(),
    }
}

/// Map a driver error: a lost or refused connection is a server problem, anything else a
/// backend failure; both name what was being done.
pub fn sql_err(e: mysql::Error, what: &str) -> Error {
    let lost = match &e {
        mysql::Error::MySqlError(m) => matches!(m.code, 1053 | 1077 | 1152 | 1927 | 2006 | 2013),
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => true,
        mysql::Error::DriverError(d) => matches!(
            d,
            mysql::DriverError::ConnectTimeout
                | mysql::DriverError::CouldNotConnect(_)
                | mysql::DriverError::PacketOutOfSync
                | mysql::DriverError::UnexpectedPacket
                | mysql::DriverError::Timeout
        ),
        _ => false,
    };
    let text = server_text(&driver_text(&e));
    if lost {
        Error::Server(format!(
            "MariaDB connection lost while {what}: {text} (is the server still running?)"
        ))
    } else {
        Error::Backend(format!("MariaDB error while {what}: {text}"))
    }
}

/// The driver error in words: its `Display` wraps every kind as `IoError { .. }`,
/// `MySqlError { .. }` and so on (Rust debug style); the error inside says it plainly.
fn driver_text(e: &mysql::Error) -> String {
    match e {
        mysql::Error::IoError(io) => io.to_string(),
        mysql::Error::CodecError(c) => std::error::Error::source(c)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map_or_else(|| c.to_string(), |io| io.to_string()),
        mysql::Error::DriverError(d) => d.to_string(),
        mysql::Error::MySqlError(m) => format!("error {} ({}): {}", m.code, m.state, m.message),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_are_server_errors() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        let e = sql_err(mysql::Error::IoError(reset), "running a query");
        assert!(
            matches!(&e, Error::Server(m) if m.contains("running a query")),
            "{e:?}"
        );
        // In words, not the driver's `IoError { .. }`.
        assert!(
            e.to_string().contains("a query: reset (is the server"),
            "{e}"
        );
        let gone = mysql::Error::DriverError(mysql::DriverError::PacketOutOfSync);
        assert!(matches!(sql_err(gone, "x"), Error::Server(_)));
        let ours = mysql::Error::DriverError(mysql::DriverError::MixedParams);
        assert!(matches!(sql_err(ours, "x"), Error::Backend(_)));
        let missing = mysql::Error::MySqlError(mysql::MySqlError {
            state: "42S02".into(),
            message: "Table 'annbench.t' doesn't exist".into(),
            code: 1146,
        });
        let e = sql_err(missing, "searching").to_string();
        assert_eq!(
            e,
            "MariaDB error while searching: error 1146 (42S02): Table 'annbench.t' doesn't exist"
        );
    }
}
