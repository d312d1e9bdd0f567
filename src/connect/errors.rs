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

/// Remove the URL's password from a driver message, should a server ever echo it (decoded and
/// as written in the URL).
pub fn scrub(text: &str, url: &ServerUrl) -> String {
    let mut out = text.to_string();
    let raw = url.expose().password().map(str::to_string);
    for pw in url.password().into_iter().chain(raw) {
        if pw.len() >= 3 {
            out = out.replace(&pw, "***");
        }
    }
    out
}

/// A server message fit for a terminal: a long quoted value (MariaDB quotes the bytes of a
/// rejected vector, kilobytes of `\xNN`) is cut to its start and length, and control
/// characters are escaped.
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
