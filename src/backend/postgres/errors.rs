//! PostgreSQL driver errors as annbench errors. At connect time ([`postgres_error`]) every
//! failure is a server problem with the fix (password, database, privilege, unreachable);
//! while running ([`pg_err`]) a failed statement is a backend error and a lost connection a
//! server error, both naming what was being done.

use crate::Error;
use crate::connect::ServerUrl;
use crate::connect::errors::{START_HINT, find_io, io_message, scrub};

/// What the driver says when the server's first bytes are not PostgreSQL's protocol.
const PROTOCOL_ERRORS: &[&str] = &["unknown message tag", "unexpected message", "error parsing"];

/// A PostgreSQL driver error during `context`.
pub fn postgres_error(url: &ServerUrl, context: &str, err: postgres::Error) -> Error {
    use postgres::error::SqlState;
    let user = url.user();
    let db = url.database();
    let Some(db_err) = err.as_db_error() else {
        let text = scrub(&err.to_string(), url);
        // A server of another kind greets first (MariaDB's handshake), in bytes PostgreSQL's
        // protocol cannot parse.
        let io_text = find_io(&err).map(|io| scrub(&io.to_string(), url));
        let text = io_text.unwrap_or(text);
        if context == "connecting" && PROTOCOL_ERRORS.iter().any(|p| text.contains(p)) {
            return Error::Server(format!(
                "the server at {url} does not speak PostgreSQL's protocol ({text}): is this \
                 the port of another kind of server, e.g. MariaDB? Give the PostgreSQL port \
                 (5432 by default)"
            ));
        }
        // No server answer: the socket failed, timed out or closed.
        if let Some(io) = find_io(&err) {
            return Error::Server(io_message(url, context, io));
        }
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

/// Map a driver error while running: a closed connection or a server shutting down is a
/// server problem, any other database error a backend failure; both name what was being done.
pub fn pg_err(e: postgres::Error, what: &str) -> Error {
    match e.as_db_error() {
        // Class 57P is the server going away (shutdown, terminated backend); 57014 is only a
        // cancelled statement and the session lives on.
        Some(db) if !db.code().code().starts_with("57P") => {
            let mut msg = format!("PostgreSQL error while {what}: {}", db.message());
            if let Some(h) = db.hint() {
                msg.push_str(&format!(" (hint: {h})"));
            }
            Error::Backend(msg)
        }
        Some(db) => Error::Server(format!(
            "PostgreSQL connection lost while {what}: {} (is the server still running?)",
            db.message()
        )),
        _ if e.is_closed() || find_io(&e).is_some() => Error::Server(format!(
            "PostgreSQL connection lost while {what}: {e} (is the server still running?)"
        )),
        _ => Error::Backend(format!("PostgreSQL error while {what}: {e}")),
    }
}

/// Whether `e` is PostgreSQL's answer to a concurrent session creating the same object at
/// the same moment (`IF NOT EXISTS` does not cover that race).
pub fn is_duplicate(e: &postgres::Error) -> bool {
    e.code()
        .is_some_and(|c| matches!(c.code(), "23505" | "42P06" | "42P07" | "42710"))
}
