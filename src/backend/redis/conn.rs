//! Connecting to Redis and its errors: the URL (`redis://[user]:password@host:port[/db]`) is
//! turned into the client's settings here (TCP with `TCP_NODELAY`, the handshake bounded by
//! [`HANDSHAKE_LIMIT`], every later command by a read timeout), and every client error
//! becomes an annbench error that names the server by its redacted URL and the fix.

use super::decl;
use crate::backend::handshake::{HANDSHAKE_LIMIT, foreign_protocol, within};
use crate::connect::errors::{START_HINT, scrub, tidy};
use crate::connect::{CONNECT_TIMEOUT, ServerUrl};
use crate::{Error, Result};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo};
use std::time::Duration;

/// The longest one command of a timed pass, or one batch of a load or build, may wait for its
/// answer before the connection counts as lost (a server stopped with SIGSTOP, a partition).
pub const READ_LIMIT: Duration = Duration::from_secs(120);

/// The client's settings for `url`: its host, port, user and password. The database number
/// is not among them: [`connect`] selects it itself (see [`select`]).
pub fn connection_info(url: &ServerUrl) -> Result<ConnectionInfo> {
    let u = url.expose();
    if u.scheme() == "rediss" {
        return Err(Error::Config(format!(
            "Redis URL {url}: {}",
            decl::TLS_REFUSAL
        )));
    }
    if u.scheme() != decl::SCHEME {
        return Err(Error::Config(format!(
            "bad Redis URL {url}: expected {}",
            decl::EXAMPLE_URL
        )));
    }
    let host = match u.host() {
        Some(url::Host::Domain(d)) => d.to_string(),
        Some(url::Host::Ipv4(v4)) => v4.to_string(),
        Some(url::Host::Ipv6(v6)) => v6.to_string(),
        None => {
            return Err(Error::Config(format!(
                "bad Redis URL {url}: no host; expected {}",
                decl::EXAMPLE_URL
            )));
        }
    };
    database(url)?;
    if u.query().is_some() {
        return Err(Error::Config(format!(
            "bad Redis URL {url}: annbench takes no ?options in a Redis URL; expected {}",
            decl::EXAMPLE_URL
        )));
    }
    let mut redis = RedisConnectionInfo::default();
    let user = url.user();
    if !user.is_empty() {
        redis = redis.set_username(user);
    }
    if let Some(pw) = url.password() {
        redis = redis.set_password(pw);
    }
    let port = u.port().unwrap_or(decl::DEFAULT_PORT);
    let info = ConnectionAddr::Tcp(host, port)
        .into_connection_info()
        .map_err(|e| {
            Error::Config(format!(
                "bad Redis URL {url}: {}",
                scrub(&e.to_string(), url)
            ))
        })?
        .set_tcp_settings(redis::io::tcp::TcpSettings::default().set_nodelay(true))
        .set_redis_settings(redis);
    Ok(info)
}

/// The database number the URL's path names (`/3`; none is 0).
fn database(url: &ServerUrl) -> Result<i64> {
    let path = url.expose().path().trim_matches('/');
    if path.is_empty() {
        return Ok(0);
    }
    path.parse().map_err(|_| {
        Error::Config(format!(
            "bad Redis URL {url}: the path '/{path}' must be a database number (e.g. /0)"
        ))
    })
}

/// Open a connection (TCP connect within [`CONNECT_TIMEOUT`], the whole handshake within
/// [`HANDSHAKE_LIMIT`]) to the URL's database, whose commands wait at most `read_limit` for
/// their answer.
pub fn connect(url: &ServerUrl, read_limit: Duration) -> Result<redis::Connection> {
    let info = connection_info(url)?;
    let db = database(url)?;
    let at = url.clone();
    within(url, HANDSHAKE_LIMIT, move || {
        let client = redis::Client::open(info).map_err(|e| redis_error(&at, "connecting", e))?;
        let mut conn = client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(|e| redis_error(&at, "connecting", e))?;
        conn.set_read_timeout(Some(read_limit))
            .and_then(|_| conn.set_write_timeout(Some(read_limit)))
            .map_err(|e| redis_error(&at, "connecting", e))?;
        if db != 0 {
            select(&mut conn, &at, db)?;
        }
        Ok(conn)
    })
}

/// `SELECT db`, sent here rather than in the client's handshake so that a refusal is known to
/// be the URL path's: a number past the server's `databases` setting is named with the range
/// the server has (`CONFIG GET databases`, where the user may read it).
fn select(conn: &mut redis::Connection, url: &ServerUrl, db: i64) -> Result<()> {
    let e = match redis::cmd("SELECT").arg(db).query::<()>(conn) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let out_of_range = e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError)
        && e.detail().is_some_and(|d| d.contains("out of range"));
    if !out_of_range {
        return Err(redis_error(url, "selecting the database of the URL's path", e));
    }
    let count = redis::cmd("CONFIG")
        .arg("GET")
        .arg("databases")
        .query::<Vec<String>>(conn)
        .ok()
        .and_then(|pair| pair.get(1)?.parse::<i64>().ok())
        .filter(|&n| n > 0);
    let has = match count {
        Some(n) => format!("the server has {n} (0 to {})", n - 1),
        None => "the server has fewer (its `databases` setting)".to_string(),
    };
    Err(Error::Config(format!(
        "Redis URL {url}: the path '/{db}' names database {db}, and {has}: give one of them in \
         the URL's path (e.g. /0), or raise `databases` in the server's configuration"
    )))
}

/// A client error while `context` (e.g. "connecting", "loading the rows") as an annbench
/// error: at connect time and for a lost or silent connection an [`Error::Server`], else an
/// [`Error::Backend`] (a command the server refused), each with the fix.
pub fn redis_error(url: &ServerUrl, context: &str, e: redis::RedisError) -> Error {
    let code = e.code().unwrap_or_default().to_string();
    let detail = tidy(&scrub(e.detail().unwrap_or_default(), url));
    let text = tidy(&scrub(&e.to_string(), url));
    let user = match url.user() {
        u if u.is_empty() => "default".to_string(),
        u => u,
    };
    let server = |msg: String| Error::Server(msg);
    if e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(code.as_str(), "WRONGPASS" | "NOAUTH")
        || text.contains("WRONGPASS")
        || text.contains("NOAUTH")
    {
        return server(format!(
            "Redis at {url} refused user '{user}' ({}): wrong password or unknown user, or \
             the server needs a password the URL does not give. Put it in the URL: \
             redis://:PASSWORD@host:port (the default user) or redis://USER:PASSWORD@host:port",
            if code.is_empty() {
                "authentication failed".to_string()
            } else {
                code.clone()
            }
        ));
    }
    if code == "NOPERM" || text.contains("NOPERM") {
        return server(format!(
            "Redis at {url}: user '{user}' lacks a permission while {context}: {detail}. Allow \
             it, e.g. ACL SETUSER {user} on +@all ~annbench:* (or at least +vadd +vsim +vinfo \
             +vcard +del +hset +hgetall +hmget +hlen +exists +memory +info +eval +evalsha \
             +script on ~annbench:*)"
        ));
    }
    let lower = text.to_ascii_lowercase();
    if ["vadd", "vsim", "vinfo", "vcard"]
        .iter()
        .any(|c| lower.contains(&format!("unknown command '{c}'")))
    {
        return server(format!(
            "Redis at {url} has no vector sets (the server does not know VADD/VSIM) while \
             {context}: annbench needs Redis {}.{} or newer, where vector sets are built in \
             (scripts/databases.sh up starts one), or an older server with the vectorset \
             module loaded (--loadmodule /path/to/vset.so)",
            decl::MIN_VERSION.0,
            decl::MIN_VERSION.1
        ));
    }
    if e.is_timeout() {
        return server(format!(
            "Redis at {url} did not answer while {context}: no reply within the read timeout \
             (did the server stop, or is it busy with a long script?)"
        ));
    }
    // Another kind of server at this port: its greeting is not Redis's protocol (MariaDB, an
    // HTTP server), or it closes the connection on Redis's first command (PostgreSQL). A Redis
    // server always answers, even to refuse (`-NOAUTH`, `-ERR max number of clients`).
    if context == "connecting" && e.kind() == redis::ErrorKind::Parse {
        return foreign_protocol(url, "its greeting is not a Redis reply", decl::DEFAULT_PORT);
    }
    if context == "connecting" && e.is_connection_dropped() && !e.is_connection_refusal() {
        return foreign_protocol(
            url,
            &format!("it closed the connection without an answer: {text}"),
            decl::DEFAULT_PORT,
        );
    }
    if context == "connecting" && (e.is_io_error() || e.is_connection_refusal()) {
        let what = if e.is_connection_refusal() {
            "connection refused".to_string()
        } else {
            text.clone()
        };
        return server(format!("cannot reach Redis at {url}: {what}; {START_HINT}"));
    }
    if e.is_connection_dropped() || e.is_io_error() {
        return server(format!(
            "lost the connection to Redis at {url} while {context}: {text} (did the server stop?)"
        ));
    }
    if code == "OOM" || text.contains("OOM") {
        return server(format!(
            "Redis at {url} is out of memory while {context} (maxmemory reached): {detail}. \
             Raise maxmemory (CONFIG SET maxmemory 0 for no limit) or use a smaller dataset"
        ));
    }
    if context == "connecting" {
        return server(format!("Redis at {url}, while connecting: {text}"));
    }
    Error::Backend(format!("Redis at {url}, while {context}: {text}"))
}

/// Run `cmd` on `conn`, mapping its error with [`redis_error`].
pub fn query<T: redis::FromRedisValue>(
    conn: &mut redis::Connection,
    url: &ServerUrl,
    cmd: &redis::Cmd,
    context: &str,
) -> Result<T> {
    cmd.query(conn).map_err(|e| redis_error(url, context, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::ServerKind;

    fn parse(text: &str) -> ServerUrl {
        ServerUrl::parse(ServerKind::Redis, text).unwrap()
    }

    #[test]
    fn urls_become_client_settings() {
        let i = connection_info(&parse("redis://bob:s%40cret@127.0.0.1:6390/3")).unwrap();
        assert_eq!(i.addr().to_string(), "127.0.0.1:6390");
        let r = i.redis_settings();
        assert_eq!((r.username(), r.password()), (Some("bob"), Some("s@cret")));
        assert_eq!(database(&parse("redis://bob:s%40cret@127.0.0.1:6390/3")).unwrap(), 3);
        let i = connection_info(&parse("redis://:pw@localhost")).unwrap();
        assert_eq!(i.addr().to_string(), "localhost:6379");
        assert_eq!(i.redis_settings().username(), None);
        let e = connection_info(&parse("rediss://:Zq9pw@h:6379"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("without TLS") && !e.contains("Zq9pw"), "{e}");
        let e = connection_info(&parse("redis://:Zq9pw@h:6379/annbench"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("database number") && !e.contains("Zq9pw"), "{e}");
        assert!(ServerUrl::parse(ServerKind::Redis, "mysql://u:Zq9pw@h/db").is_err());
    }
}
