//! `annbench servers check`: version, vector support and benchmark-shaping settings of each
//! server the registered algorithms run on, with warnings that say which value to set. Each
//! database's own check lives with its backend ([`crate::backend::Database::check`]).
//!
//! The checks are real: they connect, enable pgvector where allowed, and create (then drop) a
//! small table with a vector index, so missing privileges show up here rather than mid-sweep.

use crate::backend::BackendOptions;
use crate::backend::Database;
use crate::backend::server::CheckReport;
use crate::connect::{ServerKind, UrlSource, find_url, not_configured, setting_shown};

/// What `servers check` found for one server.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerCheck {
    /// `MariaDB` or `PostgreSQL`.
    pub server: &'static str,
    /// The server's name: given as `--postgres NAME=URL`, or an instance
    /// `scripts/databases.sh up-instance` started (`ANNBENCH_POSTGRES_<NAME>_URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The URL with its password masked.
    pub url: String,
    /// Where the URL came from (flag, env var, servers.env).
    pub source: String,
    /// Version, vector support, settings and warnings.
    #[serde(flatten)]
    pub report: CheckReport,
    /// Why the server cannot be used; `None` when it can.
    pub error: Option<String>,
}

impl ServerCheck {
    fn new(kind: ServerKind, url: String, source: String) -> Self {
        ServerCheck {
            server: kind.name(),
            instance: None,
            url,
            source,
            report: CheckReport::default(),
            error: None,
        }
    }

    /// True when annbench can benchmark on this server.
    pub fn usable(&self) -> bool {
        self.error.is_none()
    }
}

/// The outcome for one server kind: checked, or not configured anywhere.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum CheckOutcome {
    Checked(ServerCheck),
    NotConfigured {
        server: &'static str,
        hint: String,
    },
    /// An instance `servers.env` lists whose port nothing listens on (stopped, or the machine
    /// rebooted): reported with the command that starts it, and not a failure of the check.
    Stopped {
        server: &'static str,
        instance: String,
        url: String,
        hint: String,
    },
}

/// Check the server of every database the registered algorithms use, resolving each URL
/// like the backends do (explicit ones in `urls` first, see [`crate::connect`]). A server
/// with no URL anywhere is reported as not configured.
/// Named servers (`--postgres NAME=URL`) are checked each under its name; with no flag for a
/// database, the instances `servers.env` lists are checked after its main server.
pub fn check_all(opts: &BackendOptions) -> Vec<CheckOutcome> {
    let mut out = Vec::new();
    for db in crate::backend::databases() {
        let named = opts.named(db.kind);
        if !named.is_empty() {
            for s in named {
                out.push(named_check(db, &s.name, &s.url, "the command line"));
            }
            continue;
        }
        let explicit = opts.urls.get(&db.kind).map(String::as_str);
        out.push(check_database(db, explicit));
        if explicit.is_none() {
            for (name, url) in managed_instances(db.kind) {
                out.push(match stopped_instance(db.kind, &name, &url) {
                    Some(stopped) => stopped,
                    None => named_check(db, &name, &url, "servers.env"),
                });
            }
        }
    }
    out
}

fn named_check(db: &Database, name: &str, url: &str, from: &str) -> CheckOutcome {
    let mut outcome = check_database(db, Some(url));
    if let CheckOutcome::Checked(c) = &mut outcome {
        c.instance = Some(name.to_string());
        c.source = format!("{from}, as '{name}'");
    }
    outcome
}

/// `Some` when nothing listens on the loopback port of a `servers.env` instance. Only a refused
/// connection counts: any other answer (a timeout, a wrong password) goes through the full check.
fn stopped_instance(kind: ServerKind, name: &str, url: &str) -> Option<CheckOutcome> {
    let parsed = crate::connect::ServerUrl::parse(kind, url).ok()?;
    let port = parsed.tcp_port()?;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let refused = matches!(
        std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2)),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused
    );
    let loopback = parsed
        .expose()
        .host_str()
        .is_some_and(|h| h == "127.0.0.1" || h == "localhost" || h == "[::1]");
    (refused && loopback).then(|| CheckOutcome::Stopped {
        server: kind.name(),
        instance: name.to_string(),
        url: parsed.to_string(),
        hint: format!(
            "not running; start it with scripts/databases.sh restart-instance {}:{name}",
            kind.key()
        ),
    })
}

/// The extra instances of `kind` that `scripts/databases.sh up-instance` wrote to
/// `servers.env` (`ANNBENCH_<KEY>_<NAME>_URL`), as (name in lower case, URL).
pub fn managed_instances(kind: ServerKind) -> Vec<(String, String)> {
    let env = |k: &str| std::env::var(k).ok();
    let path = crate::connect::servers_env_path(&env);
    let prefix = format!("ANNBENCH_{}_", kind.key().to_ascii_uppercase());
    let entries = crate::connect::servers_env_entries(&path).unwrap_or_default();
    entries
        .into_iter()
        .filter_map(|(key, value)| {
            let name = key.strip_prefix(&prefix)?.strip_suffix("_URL")?;
            // The main server's socket URL is not an instance.
            if name.is_empty() || name == "SOCKET" || name.ends_with("_SOCKET") {
                return None;
            }
            Some((name.to_ascii_lowercase().replace('_', "-"), value))
        })
        .collect()
}

/// Check the server of one kind, resolving its URL like the backends do.
pub fn check_one(kind: ServerKind, explicit: Option<&str>) -> CheckOutcome {
    match crate::backend::databases()
        .into_iter()
        .find(|d| d.kind == kind)
    {
        Some(db) => check_database(db, explicit),
        None => CheckOutcome::NotConfigured {
            server: kind.name(),
            hint: "no registered algorithm runs on it".into(),
        },
    }
}

fn check_database(db: &Database, explicit: Option<&str>) -> CheckOutcome {
    let kind = db.kind;
    let env = |k: &str| std::env::var(k).ok();
    let (url, source) = match find_url(kind, explicit, &env) {
        Ok(Some(found)) => found,
        Ok(None) => {
            return CheckOutcome::NotConfigured {
                server: kind.name(),
                hint: not_configured(kind, &env).to_string(),
            };
        }
        Err(e) => {
            // A malformed setting: name it (masked) and where it came from.
            let (shown, source) = setting_shown(kind, explicit, &env)
                .map(|(text, source)| (text, source.to_string()))
                .unwrap_or_else(|| ("(malformed)".into(), "an unknown setting".into()));
            let mut c = ServerCheck::new(kind, shown, source);
            c.error = Some(e.to_string());
            return CheckOutcome::Checked(c);
        }
    };
    let mut c = ServerCheck::new(kind, url.redacted(), describe_source(&source));
    if let Err(e) = (db.check)(&url, &mut c.report, machine_ram()) {
        c.error = Some(e.to_string());
    }
    CheckOutcome::Checked(c)
}

fn describe_source(source: &UrlSource) -> String {
    source.to_string()
}

/// Total RAM of this machine in bytes (the recommended sizes assume a local server).
fn machine_ram() -> u64 {
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    sys.total_memory()
}
