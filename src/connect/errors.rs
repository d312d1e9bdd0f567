//! Connection-error messages every database shares: what to do when a server is unreachable,
//! and scrubbing passwords from driver text. Each database's own driver errors are mapped in
//! its backend (`src/backend/<database>/errors.rs`). Messages name the server by its redacted
//! URL and never contain the password.

use super::ServerUrl;
use std::io;

/// The fix for an unreachable server.
pub const START_HINT: &str = "is the server running? Start local servers with scripts/databases.sh up, \
     or pass the URL of yours";

/// An I/O failure while `context` (e.g. "connecting") as a message.
pub fn io_message(url: &ServerUrl, context: &str, e: &io::Error) -> String {
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

/// `connection refused` / `connection timed out`, else `fallback`.
pub fn kind_text(kind: io::ErrorKind, fallback: &str) -> String {
    match kind {
        io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        io::ErrorKind::TimedOut => "connection timed out".to_string(),
        _ => fallback.to_string(),
    }
}

/// The I/O error somewhere in `err`'s chain of sources.
pub fn find_io<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return Some(io);
        }
        source = s.source();
    }
    None
}

/// Mask the password's places in a driver message: the password field of any URL in it, and
/// `password=` values (see [`mask_secrets`]). Only those places: a password that is also a user,
/// database or table name (`ann`, `annbench`) must not turn `user 'ann'` into `user '***'`
/// or `annbench_check_t` into `***bench_check_t`. Neither driver quotes the password in its
/// messages (MariaDB: `Access denied for user 'u'@'h' (using password: YES)`; PostgreSQL:
/// `password authentication failed for user "u"`).
pub fn scrub(text: &str, _url: &ServerUrl) -> String {
    mask_secrets(text)
}

/// A server message fit for a terminal: a long quoted value (MariaDB quotes the bytes of a
/// rejected vector, kilobytes of `\xNN`) is cut to its start and length, control characters
/// are escaped, and the whole is cut to [`crate::terminal::MAX_QUOTED`] characters.
pub fn tidy(message: &str) -> String {
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
    let out = out.replace('\u{fffd}', "?");
    crate::terminal::bound(&crate::terminal::escape(&out), crate::terminal::MAX_QUOTED)
}

/// A driver's or server's message for an error: passwords masked (see [`mask_secrets`]),
/// then [`tidy`].
pub fn server_text(message: &str) -> String {
    tidy(&mask_secrets(message))
}

/// Mask the password in URL-ish text that may not parse: the part after the first `:` of the
/// user part (before the last `@`), whatever the scheme looks like (`postgres//u:pw@h`,
/// `mysql:/u:pw@h`, `u:pw@h`), every `password=` value (libpq's `key=value` form, URL query
/// parameters, percent-encoded keys too), and a non-numeric "port" that may be a password cut
/// short by a raw `/` or `#`.
pub fn redact_text(text: &str) -> String {
    let text = mask_password_values(text);
    // The scheme, however mangled its `://` (`postgres//`, `mysql:/`): a database's own
    // scheme, or any scheme followed by `://`.
    let run = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
        .unwrap_or(text.len());
    let known = crate::registry::databases()
        .iter()
        .flat_map(|d| d.schemes.iter())
        .any(|s| s.eq_ignore_ascii_case(&text[..run]));
    // One `:` and the slashes after it end the scheme; a second `:` starts the user part's
    // password (`redis://:pw@h`, the default user's form), so it must stay in the rest.
    let scheme_end = if run > 0 && (known || text[run..].starts_with("://")) {
        let rest = &text[run..];
        let rest = rest.strip_prefix(':').unwrap_or(rest);
        text.len() - rest.trim_start_matches('/').len()
    } else {
        0
    };
    let (prefix, rest) = text.split_at(scheme_end);
    format!("{prefix}{}", mask_authority(rest))
}

/// `user:pw@host...` -> `user:***@host...` (the last `@` ends the user part, as a raw `@` in a
/// password would have it); with no user part, a `host:port` whose port is not a number (a
/// password cut short) -> `host:***`.
fn mask_authority(rest: &str) -> String {
    if let Some(at) = rest.rfind('@') {
        let (user_part, host_part) = rest.split_at(at);
        return match user_part.find(':') {
            Some(c) => format!("{}:***{host_part}", &user_part[..c]),
            None => rest.to_string(),
        };
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    // An IPv6 literal `[::1]:5432` holds colons of its own.
    let host_end = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |i| i + 1)
    } else {
        0
    };
    match authority[host_end..].split_once(':') {
        Some((host, port)) if !port.is_empty() && !port.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}{host}:***{tail}", &authority[..host_end])
        }
        _ => rest.to_string(),
    }
}

/// Mask every password's place in free text (a command line, a driver message, a stored
/// command): the password field of each `scheme://user:password@host` URL, every
/// `password=` (`passfile=`, `sslpassword=`, ...) value, quoted or not, and the password field
/// of `*_CONN_ARGS=user:password:host:port`. Nothing else: other text that happens to equal
/// the password stays.
pub fn mask_secrets(text: &str) -> String {
    let text = mask_conn_args(&mask_password_values(text));
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // A quoted URL ends at its closing quote (a password may hold a space); else at a
        // space or a quote.
        let scheme =
            head[..i].trim_end_matches(|c: char| c.is_ascii_alphanumeric() || "+.-".contains(c));
        let end = match scheme.chars().last() {
            Some(q @ ('\'' | '"' | '`')) => tail.find(q),
            _ => {
                tail.find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '<' | '>'))
            }
        }
        .unwrap_or(tail.len());
        out.push_str(&mask_authority(&tail[..end]));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Whether a `key=value` key names a secret: `password` (libpq, JDBC, query parameters),
/// `sslpassword`, `passwd`, `pwd` (ODBC), `passfile` (where a password is kept).
pub fn is_secret_key(key: &str) -> bool {
    let k = percent_encoding::percent_decode_str(key)
        .decode_utf8_lossy()
        .to_ascii_lowercase();
    k.contains("password") || k.contains("passwd") || k == "pwd" || k == "passfile"
}

/// `KEY=VALUE` with a secret key (any case, percent-encoded or not, spaces around `=` as libpq
/// allows; VALUE quoted with `'` or `"`, libpq's `\'` escapes inside, or up to a space, `&`,
/// `;` or `,`) -> `KEY=***`.
fn mask_password_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = text[i..].find('=') {
        let eq = i + found;
        i = eq + 1;
        let before = text[..eq].trim_end();
        let key_start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '%'))
            .map_or(0, |(j, c)| j + c.len_utf8());
        if key_start < copied || !is_secret_key(&before[key_start..]) {
            continue;
        }
        let value = &text[eq + 1..];
        let lead = value.len() - value.trim_start().len();
        let body = &value[lead..];
        let len = match body.chars().next() {
            Some(quote @ ('\'' | '"')) => {
                let q = &body[1..];
                let mut end = q.len();
                let mut chars = q.char_indices();
                while let Some((j, c)) = chars.next() {
                    if c == '\\' {
                        chars.next();
                    } else if c == quote {
                        end = j + 1;
                        break;
                    }
                }
                1 + end
            }
            _ => body
                .find(|c: char| c.is_whitespace() || matches!(c, '&' | ';' | ','))
                .unwrap_or(body.len()),
        };
        let value_start = eq + 1 + lead;
        out.push_str(&text[copied..value_start]);
        out.push_str("***");
        copied = value_start + len;
        i = copied;
    }
    out.push_str(&text[copied..]);
    out
}

/// `MARIADB_CONN_ARGS=user:password:host:port` (any `*_CONN_ARGS=`) -> `user:***:host:port`;
/// a value with fewer fields keeps only its user.
fn mask_conn_args(text: &str) -> String {
    const KEY: &str = "_CONN_ARGS=";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(KEY) {
        let (head, tail) = rest.split_at(i + KEY.len());
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"'))
            .unwrap_or(tail.len());
        let value = &tail[..end];
        let fields: Vec<&str> = value.split(':').collect();
        match fields.len() {
            0 | 1 => out.push_str(if value.is_empty() { "" } else { "***" }),
            2 | 3 => out.push_str(&format!("{}:***", fields[0])),
            n => out.push_str(&format!(
                "{}:***:{}:{}",
                fields[0],
                fields[n - 2],
                fields[n - 1]
            )),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_places_of_a_password_are_masked() {
        // The password `ann` is also the user's name and the start of table names.
        let msg =
            "Access denied for user 'ann'@'%' to table annbench_check_1 (using password: YES)";
        assert_eq!(mask_secrets(msg), msg);
        assert_eq!(
            mask_secrets("at mysql://ann:ann@h:3306/annbench: user 'ann'"),
            "at mysql://ann:***@h:3306/annbench: user 'ann'"
        );
        assert_eq!(
            mask_secrets("postgres://u@h/db?sslmode=off&password=ann&x=1 for annbench"),
            "postgres://u@h/db?sslmode=off&password=***&x=1 for annbench"
        );
        assert_eq!(
            mask_secrets("host=h password='a b\\' c' passfile=/p/pw dbname=ann"),
            "host=h password=*** passfile=*** dbname=ann"
        );
        assert_eq!(
            mask_secrets("PASSWORD = \"x y\", Pwd=z; sslpassword=k"),
            "PASSWORD = ***, Pwd=***; sslpassword=***"
        );
        assert_eq!(
            mask_secrets("MARIADB_CONN_ARGS=u:p:w:127.0.0.1:3306 POSTGRES_CONN_ARGS=u:pw"),
            "MARIADB_CONN_ARGS=u:***:127.0.0.1:3306 POSTGRES_CONN_ARGS=u:***"
        );
        assert_eq!(mask_secrets("pass%77ord=s3"), "pass%77ord=***");
        assert_eq!(
            mask_secrets("'postgres://u:a b@h/db' and mysql://h:3306/db"),
            "'postgres://u:***@h/db' and mysql://h:3306/db"
        );
        assert_eq!(
            redact_text("postgres://[::1]:5432/db"),
            "postgres://[::1]:5432/db"
        );
    }
}
