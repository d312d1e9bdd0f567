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
                tidy(&scrub(&e.message, url))
            ),
        },
        mysql::Error::IoError(e) => io_message(url, context, e),
        // The driver's own Display wraps these as `CodecError { .. }` (Rust debug style).
        mysql::Error::CodecError(e) => {
            match std::error::Error::source(e).and_then(|s| s.downcast_ref::<io::Error>()) {
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

/// A PostgreSQL driver error during `context`.
pub fn postgres_error(url: &ServerUrl, context: &str, err: postgres::Error) -> Error {
    use postgres::error::SqlState;
    let user = url.user();
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

/// Remove the URL's password from a driver message, should a server ever echo it (decoded and
/// as written in the URL).
pub(crate) fn scrub(text: &str, url: &ServerUrl) -> String {
    let mut out = text.to_string();
    let raw = url.expose().password().map(str::to_string);
    for pw in url.password().into_iter().chain(raw) {
        if pw.len() >= 3 {
            out = out.replace(&pw, "***");
        }
    }
    out
}

/// The URL error's text without the driver's `URL ParseError { .. }` wrapping.
pub(crate) fn url_error_text(e: &mysql::UrlError) -> String {
    match e {
        mysql::UrlError::ParseError(p) => p.to_string(),
        other => other.to_string(),
    }
}

/// A server message fit for a terminal: a long quoted value (MariaDB quotes the bytes of a
/// rejected vector, kilobytes of `\xNN`) is cut to its start and length, and control
/// characters are escaped.
pub(crate) fn tidy(message: &str) -> String {
    const KEEP: usize = 24;
    let mut out = String::with_capacity(message.len().min(512));
    let mut parts = message.split('\'');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        out.push('\'');
        // Odd parts are inside quotes.
        let chars = part.chars().count();
        if i % 2 == 0 && chars > 2 * KEEP {
            out.extend(part.chars().take(KEEP));
            out.push_str(&format!("... ({chars} characters)"));
        } else {
            out.push_str(part);
        }
    }
    out.chars()
        .map(|c| match c {
            c if c.is_control() => format!("\\x{:02X}", c as u32 & 0xff),
            '\u{fffd}' => "?".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Mask the password in URL-ish text that may not parse: the part after the first `:` of the
/// user part (before the last `@`), whatever the scheme looks like (`postgres//u:pw@h`,
/// `mysql:/u:pw@h`, `u:pw@h`), every `password=` value (libpq's `key=value` form, URL query
/// parameters), and a non-numeric "port" that may be a password cut short by a raw `/` or `#`.
pub fn redact_text(text: &str) -> String {
    let text = mask_password_values(text);
    let scheme_end = ["postgresql", "postgres", "mariadb", "mysql"]
        .iter()
        .find(|s| {
            text.get(..s.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(s))
        })
        .map_or(0, |s| {
            let rest = &text[s.len()..];
            s.len() + rest.len() - rest.trim_start_matches([':', '/']).len()
        });
    let (prefix, rest) = text.split_at(scheme_end);
    if let Some(at) = rest.rfind('@') {
        let (user_part, host_part) = rest.split_at(at);
        return match user_part.find(':') {
            Some(c) => format!("{prefix}{}:***{host_part}", &user_part[..c]),
            None => text.clone(),
        };
    }
    // No user part: `host:port`, where a port that is not a number may be a password.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.split_once(':') {
        Some((host, port)) if !port.is_empty() && !port.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{prefix}{host}:***{tail}")
        }
        _ => text.clone(),
    }
}

/// `password=VALUE` (any case; VALUE quoted with `'` or up to a space, `&` or `;`) -> `***`.
fn mask_password_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find("password") {
        let key_end = i + found + "password".len();
        let after = &text[key_end..];
        let eq = after.len() - after.trim_start().len();
        if !after[eq..].starts_with('=') {
            out.push_str(&text[i..key_end]);
            i = key_end;
            continue;
        }
        let value_start = key_end + eq + 1;
        let value = &text[value_start..];
        let lead = value.len() - value.trim_start().len();
        let body = &value[lead..];
        let len = if let Some(q) = body.strip_prefix('\'') {
            // libpq quoting: \' and \\ are escapes inside '...'.
            let mut end = q.len();
            let mut chars = q.char_indices();
            while let Some((j, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => {
                        end = j + 1;
                        break;
                    }
                    _ => {}
                }
            }
            1 + end
        } else {
            body.find([' ', '\t', '&', ';']).unwrap_or(body.len())
        };
        out.push_str(&text[i..value_start + lead]);
        out.push_str("***");
        i = value_start + lead + len;
    }
    out.push_str(&text[i..]);
    out
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
