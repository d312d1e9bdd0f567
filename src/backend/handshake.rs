//! A connection attempt with a bound on the whole handshake. The drivers' connect timeouts
//! cover the TCP connect only: a listener that accepts and never answers (a stopped server,
//! a proxy with nothing behind it, or a server of the other kind: PostgreSQL waits for the
//! client to speak first, as a MariaDB client does) would hang the attempt for ever. The
//! attempt runs on a helper thread; past the limit the caller gets a clear error at once and
//! the helper, still blocked in the driver, is left to end with the process.

use crate::connect::{CONNECT_TIMEOUT, ServerUrl};
use crate::{Error, Result};
use std::sync::mpsc;
use std::time::Duration;

/// The longest a connection attempt (TCP connect, greeting, authentication) may take.
pub const HANDSHAKE_LIMIT: Duration = CONNECT_TIMEOUT;

/// Run `attempt` (a driver's connect) and wait at most `limit` for it.
pub fn within<T: Send + 'static>(
    url: &ServerUrl,
    limit: Duration,
    attempt: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("annbench-connect".into())
        .spawn(move || {
            let _ = tx.send(attempt());
        });
    if let Err(e) = spawned {
        return Err(Error::Server(format!(
            "cannot start a connection to {url}: {e}"
        )));
    }
    match rx.recv_timeout(limit) {
        Ok(result) => result,
        Err(_) => Err(Error::Server(format!(
            "{} at {url} did not complete the connection handshake within {} s: the server \
             accepted the connection but sent nothing. Is it stopped (SIGSTOP, a hung \
             machine), or is this the port of another kind of server (PostgreSQL and Redis \
             wait silently for a client that does not speak their protocol)?",
            url.kind().name(),
            limit.as_secs()
        ))),
    }
}

/// A server at `url` answered the connection in something other than its database's protocol
/// (`seen`: what the driver saw, in words): most often the port of another kind of server.
/// Every database says it in these words, naming the others and its own default port.
pub fn foreign_protocol(url: &ServerUrl, seen: &str, default_port: u16) -> Error {
    let name = url.kind().name();
    let others: Vec<&str> = crate::registry::databases()
        .iter()
        .map(|d| d.name)
        .filter(|n| *n != name)
        .collect();
    Error::Server(format!(
        "the server at {url} does not speak {name}'s protocol ({seen}): is this the port of \
         another kind of server, e.g. {}? Give the {name} port ({default_port} by default)",
        others.join(" or ")
    ))
}
