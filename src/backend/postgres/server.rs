//! The PostgreSQL server: connecting, pgvector present and enabled (created when the user
//! may), and the version and settings recorded with every result. `servers check` and the
//! backends use these same functions.

use super::errors::postgres_error;
use super::watchdog::{self, Conn};
use crate::backend::ServerInfo;
use crate::backend::handshake::HANDSHAKE_LIMIT;
use crate::backend::server::Version;
use crate::connect::{CONNECT_TIMEOUT, ServerKind, ServerUrl};
use crate::{Error, Result};
use postgres::Client;
use std::sync::{Arc, Mutex};

/// Settings recorded with every result and shown by `servers check`, in this order, followed
/// by those the algorithms' parameters set ([`crate::backend::parameter_settings`]).
pub const SETTINGS: &[&str] = &[
    "shared_buffers",
    "maintenance_work_mem",
    "max_parallel_maintenance_workers",
    "max_parallel_workers_per_gather",
    "work_mem",
    "effective_cache_size",
    "jit",
    "max_connections",
    "hnsw.iterative_scan",
    // `data`: the data files are read past the OS cache (scripts/databases.sh --memory).
    "debug_io_direct",
];

/// [`SETTINGS`], then the ones the algorithms' parameters set.
pub fn settings() -> Vec<&'static str> {
    let mut all = SETTINGS.to_vec();
    all.extend(crate::backend::parameter_settings(ServerKind::Postgres));
    all
}

/// The driver configuration of `url`, with annbench's connect timeout unless the URL sets one.
pub fn config(url: &ServerUrl) -> Result<postgres::Config> {
    let mut config: postgres::Config =
        url.expose()
            .as_str()
            .parse()
            .map_err(|e: postgres::Error| {
                Error::Config(format!(
                    "bad PostgreSQL URL {url}: {}",
                    crate::connect::errors::scrub(&e.to_string(), url)
                ))
            })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    Ok(config)
}

/// Open a connection, with errors that name the server and the fix.
pub fn connect(url: &ServerUrl) -> Result<Client> {
    Ok(connect_watched(url)?.0)
}

/// [`connect`], also returning the connection's socket as the [`watchdog`] knows it.
pub fn connect_watched(url: &ServerUrl) -> Result<(Client, Option<Conn>)> {
    connect_config(url, config(url)?)
}

/// Connect with `config`, the whole handshake bounded ([`crate::backend::handshake`]), and
/// put the connection under the [`watchdog`].
fn connect_config(url: &ServerUrl, config: postgres::Config) -> Result<(Client, Option<Conn>)> {
    let at = url.clone();
    let before = watchdog::sockets();
    let mut client = crate::backend::handshake::within(url, HANDSHAKE_LIMIT, move || {
        config
            .connect(postgres::NoTls)
            .map_err(|e| postgres_error(&at, "connecting", e))
    })?;
    let conn = watchdog::register(&mut client, &before);
    Ok((client, conn))
}

/// [`connect`], collecting the server's notices (e.g. "maintenance_work_mem exceeded") into
/// `notices`.
pub fn connect_collecting(
    url: &ServerUrl,
    notices: Arc<Mutex<Vec<String>>>,
) -> Result<(Client, Option<Conn>)> {
    let mut config = config(url)?;
    config.notice_callback(move |n| {
        if let Ok(mut v) = notices.lock() {
            v.push(format!("{}: {}", n.severity(), n.message()));
        }
    });
    connect_config(url, config)
}

/// Version, with pgvector's, and [`settings`], for the result files. Enables pgvector like
/// [`ensure_pgvector`], and fails like it.
pub fn server_info(client: &mut Client, url: &ServerUrl) -> Result<ServerInfo> {
    let pgvector = ensure_pgvector(client, url)?;
    // Loads pgvector's library into the session, so its settings read as set, not as ''.
    client
        .batch_execute("SELECT '[1]'::vector")
        .map_err(|e| postgres_error(url, "loading pgvector", e))?;
    let version: String = client
        .query_one("SELECT current_setting('server_version')", &[])
        .map_err(|e| postgres_error(url, "reading the version", e))?
        .get(0);
    let rows = client
        .query(
            "SELECT n, coalesce(current_setting(n, true), '') FROM unnest($1::text[]) AS n",
            &[&settings()],
        )
        .map_err(|e| postgres_error(url, "reading settings", e))?;
    Ok(ServerInfo {
        version: format!("PostgreSQL {version}, pgvector {}", pgvector.text),
        settings: rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
            .collect(),
    })
}

/// [`server_info`] on a connection of its own (the [`crate::backend::Database`] entry).
pub fn server_info_at(url: &ServerUrl) -> Result<ServerInfo> {
    server_info(&mut connect(url)?, url)
}

/// The pgvector version enabled in the URL's database. Creates the extension when it is
/// installed but not enabled and the user may; otherwise an [`Error::Server`] saying who must
/// do what (install the package, or run `CREATE EXTENSION vector` as a superuser). Each
/// algorithm checks the version against its own minimum ([`crate::backend::Algorithm`]).
pub fn ensure_pgvector(client: &mut Client, url: &ServerUrl) -> Result<Version> {
    if let Some(v) = enabled_pgvector(client, url)? {
        return Ok(v);
    }
    let db = url.database();
    let user = url.user();
    let available: Option<String> = client
        .query_opt(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'",
            &[],
        )
        .map_err(|e| postgres_error(url, "looking for pgvector", e))?
        .and_then(|row| row.get(0));
    let Some(available) = available else {
        let major: String = client
            .query_one(
                "SELECT current_setting('server_version_num')::int / 10000 || ''",
                &[],
            )
            .map(|r| r.get(0))
            .unwrap_or_else(|_| "NN".into());
        return Err(Error::Server(format!(
            "pgvector is not installed on PostgreSQL at {url}: install it (Debian/Ubuntu: \
             apt-get install postgresql-{major}-pgvector; else build \
             https://github.com/pgvector/pgvector), then as a superuser run \
             CREATE EXTENSION vector; in database {db}"
        )));
    };
    if let Err(e) = client.batch_execute("CREATE EXTENSION IF NOT EXISTS vector") {
        // Another connection may have created it at the same moment.
        if let Some(v) = enabled_pgvector(client, url)? {
            return Ok(v);
        }
        if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            return Err(Error::Server(format!(
                "pgvector {available} is installed on PostgreSQL at {url} but not enabled in \
                 database {db}, and user '{user}' may not create it: as a superuser run \
                 CREATE EXTENSION vector; in database {db} (e.g. psql -d {db} -c 'CREATE \
                 EXTENSION vector')"
            )));
        }
        return Err(postgres_error(url, "creating the vector extension", e));
    }
    enabled_pgvector(client, url)?.ok_or_else(|| {
        Error::Server(format!(
            "pgvector at {url}: CREATE EXTENSION vector did not enable it"
        ))
    })
}

fn enabled_pgvector(client: &mut Client, url: &ServerUrl) -> Result<Option<Version>> {
    let row = client
        .query_opt(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
            &[],
        )
        .map_err(|e| postgres_error(url, "looking for pgvector", e))?;
    Ok(row.and_then(|r| r.get::<_, Option<String>>(0)).map(|text| {
        Version::parse(&text).unwrap_or(Version {
            major: 0,
            minor: 0,
            patch: 0,
            text,
        })
    }))
}
