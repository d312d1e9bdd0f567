//! What every database vertical provides (`mariadb/`, `postgres/`): one [`Database`] with its
//! `server_info` (recorded with every result) and its `servers check`, plus the database-neutral
//! pieces they share: server versions and the memory sizes recommended for this machine.

use super::ServerInfo;
use crate::Result;
use crate::connect::{ServerKind, ServerUrl};
use std::fmt;

/// A database server annbench runs algorithms on.
pub struct Database {
    pub kind: ServerKind,
    /// What an algorithm's `min_version` is a version of, e.g. `MariaDB` or `pgvector`.
    pub versioned: &'static str,
    /// Connect, check the server can run vector indexes (version, extension) and read its
    /// version and the settings that shape results. The same function sweeps record with
    /// every result and `servers check` shows.
    pub server_info: fn(&ServerUrl) -> Result<ServerInfo>,
    /// `servers check`: fill `report` (version first, so a failure still shows it), prove
    /// vector support on a scratch table, and warn about settings that distort benchmarks on
    /// a machine with `ram` bytes.
    pub check: fn(&ServerUrl, &mut CheckReport, u64) -> Result<()>,
    /// Prove every privilege a run needs in `schema` (the database or schema annbench keeps
    /// its tables in), on a scratch table left behind by nothing: `run` calls it for every
    /// server before it loads anything, `servers check` does the same steps.
    pub privileges: fn(&ServerUrl, &str) -> Result<()>,
    /// Ask every wait of this process on this database's servers to end soon (Ctrl-C, a
    /// signal, KeyboardInterrupt), for drivers that cannot be interrupted otherwise; and
    /// forget that request when a new run starts. `None`: its waits are bounded already.
    pub stop_waits: Option<StopWaits>,
    /// The connections this URL's user may hold on the server at once (its settings, read
    /// through one connection), so that a run that would open more fails before any write;
    /// `None`: not read.
    pub connection_limit: Option<fn(&ServerUrl) -> Result<ConnectionLimit>>,
    /// The connections a streaming run (`annbench stream`) holds on the server at once besides
    /// its search connections: its admin connection, a writer of its own where the database
    /// has one, and the one that stops a statement or watches an index build.
    pub stream_connections: usize,
}

/// The connections a user may hold on a server at once ([`Database::connection_limit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimit {
    pub most: usize,
    /// Which settings make it, e.g. `max_connections 100 less 3 reserved for superusers`.
    pub why: String,
}

/// The hooks of [`Database::stop_waits`].
#[derive(Debug, Clone, Copy)]
pub struct StopWaits {
    pub request: fn(),
    pub clear: fn(),
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Database({})", self.kind.name())
    }
}

/// What `servers check` found on one server.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckReport {
    /// The server's version text, when it could be read.
    pub version: Option<String>,
    /// e.g. `VECTOR type, MHNSW index` or `pgvector 0.8.0 (vector, halfvec)`.
    pub vector_support: Option<String>,
    /// Settings that shape results, as `(name, value)` with human-readable sizes.
    pub settings: Vec<(String, String)>,
    /// Settings that would distort a benchmark, each with the value to set.
    pub warnings: Vec<String>,
    /// The sources of server cost per query (`/proc`, the statement statistics) and whether
    /// each is available, as `(source, state)`.
    #[serde(default)]
    pub cost_sources: Vec<(String, String)>,
}

/// A dotted version, e.g. MariaDB `11.8.9` or pgvector `0.8.0`, with the server's full text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// As the server reported it, e.g. `11.8.9-MariaDB-0+deb13u1`.
    pub text: String,
}

impl Version {
    /// Parse the leading `major.minor[.patch]` of `text`; `None` if it has none.
    pub fn parse(text: &str) -> Option<Version> {
        let head: String = text
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = head.split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some(Version {
            major,
            minor,
            patch,
            text: text.trim().to_string(),
        })
    }

    /// True when this version is `major.minor` or newer.
    pub fn at_least(&self, (major, minor): (u32, u32)) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

pub const GIB: u64 = 1 << 30;
pub const MIB: u64 = 1 << 20;

/// A quarter of RAM, in 256 MiB steps, at least 256 MiB: the size suggested for each cache.
pub fn recommended(ram: u64) -> u64 {
    ((ram / 4) / (256 * MIB)).max(1) * 256 * MIB
}

/// Below this a cache setting is reported: 1 GiB, or the recommendation on small machines.
pub fn floor(ram: u64) -> u64 {
    recommended(ram).min(GIB)
}

/// `4294967296` -> `4G`, `805306368` -> `768M` (my.cnf / PostgreSQL style without the B).
pub fn short(bytes: u64) -> String {
    if bytes % GIB == 0 {
        format!("{}G", bytes / GIB)
    } else {
        format!("{}M", bytes / MIB)
    }
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

/// A table name no other check uses at the same time (process id and a per-process counter).
pub fn scratch_table() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("annbench_check_{}_{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        let v = Version::parse("11.8.9-MariaDB-0+deb13u1").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (11, 8, 9));
        assert_eq!(Version::parse("0.8").unwrap().to_string(), "0.8.0");
        assert!(Version::parse("MariaDB").is_none());
        assert!(v.at_least((11, 7)) && !v.at_least((12, 0)));
    }

    #[test]
    fn sizes() {
        assert_eq!(recommended(16 * GIB), 4 * GIB);
        assert_eq!(recommended(GIB / 2), 256 * MIB);
        assert_eq!(short(recommended(3 * GIB)), "768M");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(16 << 20), "16.0 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
