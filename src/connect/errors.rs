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

/// Remove the URL's password from a driver message, should a server ever echo it.
pub fn scrub(text: &str, url: &ServerUrl) -> String {
    match url.password() {
        Some(pw) if pw.len() >= 3 => text.replace(&pw, "***"),
        _ => text.to_string(),
    }
}
