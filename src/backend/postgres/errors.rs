//! PostgreSQL driver errors as annbench errors. At connect time ([`postgres_error`]) every
//! failure is a server problem with the fix (password, database, privilege, unreachable);
//! while running ([`pg_err`]) a failed statement is a backend error and a lost connection a
//! server error, both naming what was being done.

use crate::Error;
use crate::connect::ServerUrl;
use crate::connect::errors::{START_HINT, find_io, io_message, scrub, server_text};

/// The port a PostgreSQL server listens on unless told otherwise.
const DEFAULT_PORT: u16 = 5432;

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
            return crate::backend::handshake::foreign_protocol(url, &text, DEFAULT_PORT);
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
    let detail = server_text(&scrub(db_err.message(), url));
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
        let fix = privilege_fix(db_err.message(), context, &db, &user);
        format!(
            "PostgreSQL at {url}: user '{user}' lacks a privilege while {context} ({detail}). {fix}"
        )
    } else if *code == SqlState::TOO_MANY_CONNECTIONS {
        format!(
            "PostgreSQL at {url} has too many connections: raise max_connections or use fewer clients"
        )
    } else {
        let hint = db_err
            .hint()
            .map(|h| format!(" (hint: {})", server_text(h)))
            .unwrap_or_default();
        format!(
            "PostgreSQL at {url}, while {context}: {} {detail}{hint}",
            code.code()
        )
    };
    Error::Server(msg)
}

/// The fix for a refused privilege, from what the server says is missing: `permission denied
/// for database D` (creating a schema needs CREATE on the database, whatever the user may do in
/// the schema), `for schema S`, `for table T`, `to create extension`, `must be owner of ...`.
pub fn privilege_fix(message: &str, context: &str, db: &str, user: &str) -> String {
    let object = |kind: &str| {
        message
            .split_once(&format!("permission denied for {kind} "))
            .map(|(_, o)| o.trim().to_string())
    };
    if context == "connecting" {
        return format!("Grant it as a superuser, e.g. GRANT CONNECT ON DATABASE {db} TO {user}");
    }
    if let Some(d) = object("database") {
        return format!(
            "Grant it as a superuser, e.g. GRANT CREATE ON DATABASE {d} TO {user}; or create \
             the schema annbench uses as a user who may (CREATE SCHEMA ... AUTHORIZATION {user})"
        );
    }
    if let Some(schema) = object("schema") {
        return format!(
            "Grant it as a superuser, e.g. GRANT USAGE, CREATE ON SCHEMA {schema} TO {user}"
        );
    }
    if let Some(t) = object("table").or_else(|| object("relation")) {
        return format!(
            "Grant it as a superuser, e.g. GRANT SELECT, INSERT, DELETE ON {t} TO {user}"
        );
    }
    if message.contains("to create extension") {
        return format!(
            "Only a superuser (or, for a trusted extension, the owner of database {db}) may \
             enable pgvector: run CREATE EXTENSION vector; in database {db} as one"
        );
    }
    if let Some(object) = message.strip_prefix("must be owner of ") {
        return format!(
            "Only the owner of {object} (or a superuser) may do this: run annbench as that \
             user, or have the owner drop it"
        );
    }
    let schema = crate::backend::BackendOptions::default()
        .schema()
        .unwrap_or_else(|_| "annbench".into());
    format!(
        "Grant it as a superuser, e.g. GRANT USAGE, CREATE ON SCHEMA {schema} TO {user}, or use \
         a database {user} owns"
    )
}

/// Map a driver error while running: a closed connection or a server shutting down is a
/// server problem, any other database error a backend failure; both name what was being done.
pub fn pg_err(e: postgres::Error, what: &str) -> Error {
    match e.as_db_error() {
        // Class 57P is the server going away (shutdown, terminated backend); 57014 is only a
        // cancelled statement and the session lives on.
        Some(db) if !db.code().code().starts_with("57P") => {
            let mut msg = format!(
                "PostgreSQL error while {what}: {}",
                server_text(db.message())
            );
            if let Some(h) = db.hint() {
                msg.push_str(&format!(" (hint: {})", server_text(h)));
            }
            Error::Backend(msg)
        }
        Some(db) => Error::Server(format!(
            "PostgreSQL connection lost while {what}: {} (is the server still running?)",
            server_text(db.message())
        )),
        _ if e.is_closed() || find_io(&e).is_some() => Error::Server(format!(
            "PostgreSQL connection lost while {what}: {} (is the server still running?)",
            server_text(&e.to_string())
        )),
        _ => Error::Backend(format!(
            "PostgreSQL error while {what}: {}",
            server_text(&e.to_string())
        )),
    }
}

/// Whether `e` is PostgreSQL's answer to a concurrent session creating the same object at
/// the same moment (`IF NOT EXISTS` does not cover that race).
pub fn is_duplicate(e: &postgres::Error) -> bool {
    e.code()
        .is_some_and(|c| matches!(c.code(), "23505" | "42P06" | "42P07" | "42710"))
}

#[cfg(test)]
mod tests {
    use super::privilege_fix;

    #[test]
    fn the_fix_names_the_privilege_that_is_missing() {
        let fix = |m: &str| privilege_fix(m, "creating schema annbench", "bench", "u");
        assert!(
            fix("permission denied for database bench")
                .contains("GRANT CREATE ON DATABASE bench TO u"),
            "{}",
            fix("permission denied for database bench")
        );
        assert!(
            fix("permission denied for schema annbench")
                .contains("GRANT USAGE, CREATE ON SCHEMA annbench TO u")
        );
        assert!(
            fix("permission denied for table annbench_tables").contains("ON annbench_tables TO u")
        );
        assert!(fix("permission denied to create extension \"vector\"").contains("superuser"));
        assert!(fix("must be owner of table vec_x").contains("owner of table vec_x"));
        assert!(!fix("permission denied for database bench").contains("SCHEMA public"));
        assert!(
            privilege_fix("x", "connecting", "bench", "u")
                .contains("GRANT CONNECT ON DATABASE bench TO u")
        );
    }
}
