//! `annbench servers check`: version, vector support and benchmark-shaping settings of each
//! server, with warnings that say which value to set.
//!
//! The checks are real: they connect, enable pgvector where allowed, and create (then drop) a
//! small table with a vector index, so missing privileges show up here rather than mid-sweep.

mod mariadb;
mod postgres;
mod rules;

pub use mariadb::mariadb_server_info;
pub use postgres::postgres_server_info;
pub use rules::{MariaDbSettings, PostgresSettings, mariadb_warnings, postgres_warnings};

use crate::connect::{ServerKind, UrlSource, find_url, not_configured};

/// What `servers check` found for one server.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerCheck {
    /// `MariaDB` or `PostgreSQL`.
    pub server: &'static str,
    /// The URL with its password masked.
    pub url: String,
    /// Where the URL came from (flag, env var, servers.env).
    pub source: String,
    /// The server's version text, when it could be read.
    pub version: Option<String>,
    /// e.g. `VECTOR type, MHNSW index` or `pgvector 0.8.0 (vector, halfvec)`.
    pub vector_support: Option<String>,
    /// Settings that shape results, as `(name, value)` with human-readable sizes.
    pub settings: Vec<(String, String)>,
    /// Settings that would distort a benchmark, each with the value to set.
    pub warnings: Vec<String>,
    /// Why the server cannot be used; `None` when it can.
    pub error: Option<String>,
}

impl ServerCheck {
    fn new(kind: ServerKind, url: String, source: String) -> Self {
        ServerCheck {
            server: kind.name(),
            url,
            source,
            version: None,
            vector_support: None,
            settings: Vec::new(),
            warnings: Vec::new(),
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
    NotConfigured { server: &'static str, hint: String },
}

/// Resolve both URLs (explicit ones first, see [`crate::connect`]) and check each server.
/// A server with no URL anywhere is reported as not configured.
pub fn check_all(mariadb: Option<&str>, postgres: Option<&str>) -> Vec<CheckOutcome> {
    [
        (ServerKind::MariaDb, mariadb),
        (ServerKind::Postgres, postgres),
    ]
    .into_iter()
    .map(|(kind, explicit)| check_one(kind, explicit))
    .collect()
}

/// Check one server kind, resolving its URL like the backends do.
pub fn check_one(kind: ServerKind, explicit: Option<&str>) -> CheckOutcome {
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
            let mut c = ServerCheck::new(kind, String::new(), describe_source(None));
            c.error = Some(e.to_string());
            return CheckOutcome::Checked(c);
        }
    };
    let mut c = ServerCheck::new(kind, url.redacted(), describe_source(Some(&source)));
    let ram = machine_ram();
    let result = match kind {
        ServerKind::MariaDb => mariadb::check(&url, &mut c, ram),
        ServerKind::Postgres => postgres::check(&url, &mut c, ram),
    };
    if let Err(e) = result {
        c.error = Some(e.to_string());
    }
    CheckOutcome::Checked(c)
}

/// A table name no other check uses at the same time (process id and a per-process counter).
fn scratch_table() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("annbench_check_{}_{n}", std::process::id())
}

fn describe_source(source: Option<&UrlSource>) -> String {
    source.map(|s| s.to_string()).unwrap_or_default()
}

/// Total RAM of this machine in bytes (the recommended sizes assume a local server).
fn machine_ram() -> u64 {
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    sys.total_memory()
}

/// `6442450944` -> `6.0 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(16 << 20), "16.0 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
