//! The Redis server: the version check (vector sets need 8.0), the version and settings
//! recorded with every result, `servers check` (vector sets proved on a scratch key, the
//! settings that distort a benchmark) and the permissions a run needs. The backend and
//! `servers check` use these same functions.

use super::conn::{self, READ_LIMIT, query, redis_error};
use super::decl;
use crate::backend::ServerInfo;
use crate::backend::server::{CheckReport, Version, human_bytes};
use crate::connect::{ServerKind, ServerUrl};
use crate::{Error, Result};
use redis::Connection;
use std::collections::BTreeMap;

/// Server settings (`CONFIG GET`) recorded with every result and shown by `servers check`,
/// in this order, followed by those the algorithms' parameters set (none today).
pub const SETTINGS: &[&str] = &[
    "maxmemory",
    "maxmemory-policy",
    "io-threads",
    "save",
    "appendonly",
    "appendfsync",
    "hz",
    "busy-reply-threshold",
];

/// `INFO section` as `field -> value`.
pub fn info(
    conn: &mut Connection,
    url: &ServerUrl,
    section: &str,
) -> Result<BTreeMap<String, String>> {
    let text: String = query(
        conn,
        url,
        redis::cmd("INFO").arg(section),
        &format!("reading INFO {section}"),
    )?;
    Ok(parse_info(&text))
}

/// `field:value` lines of an INFO reply (comments and blank lines skipped).
pub fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The server's version, or an [`Error::Server`] when it is not Redis 8.0 or newer.
pub fn check_version(conn: &mut Connection, url: &ServerUrl) -> Result<Version> {
    let server = info(conn, url, "server")?;
    version_ok(&server, url)
}

/// The version rule on its own, for unit tests.
fn version_ok(server: &BTreeMap<String, String>, url: &ServerUrl) -> Result<Version> {
    let (major, minor) = decl::MIN_VERSION;
    let text = server.get("redis_version").cloned().unwrap_or_default();
    let v = Version::parse(&text).ok_or_else(|| {
        Error::Server(format!(
            "the server at {url} reported an unreadable version '{text}' (INFO server has no \
             redis_version): is it Redis?"
        ))
    })?;
    if let Some(valkey) = server.get("valkey_version") {
        return Err(Error::Server(format!(
            "the server at {url} is Valkey {valkey}, which has no vector sets; annbench needs \
             Redis {major}.{minor} or newer"
        )));
    }
    if !v.at_least(decl::MIN_VERSION) {
        return Err(Error::Server(format!(
            "Redis {v} at {url} has no vector sets (VADD, VSIM); annbench needs Redis \
             {major}.{minor} or newer (scripts/databases.sh up starts Redis 8)"
        )));
    }
    Ok(v)
}

/// [`SETTINGS`] as the server reports them (`CONFIG GET`; where ACLs refuse CONFIG, the
/// INFO fields that carry the same values).
pub fn read_settings(conn: &mut Connection, url: &ServerUrl) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut refused = false;
    for name in settings() {
        match redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query::<Vec<String>>(conn)
        {
            Ok(pair) if pair.len() == 2 => out.push((name.to_string(), pair[1].clone())),
            Ok(_) => {}
            Err(e) if e.code() == Some("NOPERM") => refused = true,
            Err(e) => return Err(redis_error(url, "reading the settings (CONFIG GET)", e)),
        }
    }
    if refused {
        let memory = info(conn, url, "memory")?;
        let persistence = info(conn, url, "persistence")?;
        for (name, field, from) in [
            ("maxmemory", "maxmemory", &memory),
            ("maxmemory-policy", "maxmemory_policy", &memory),
            ("appendonly", "aof_enabled", &persistence),
        ] {
            if let Some(v) = from.get(field) {
                out.push((name.to_string(), v.clone()));
            }
        }
        out.push((
            "config".to_string(),
            "CONFIG GET refused by ACL (values from INFO)".to_string(),
        ));
    }
    Ok(out)
}

/// [`SETTINGS`], then the ones the algorithms' parameters set.
pub fn settings() -> Vec<&'static str> {
    let mut all = SETTINGS.to_vec();
    all.extend(crate::backend::parameter_settings(ServerKind::Redis));
    all
}

/// Version and settings (raw server values), for the result files. Fails like
/// [`check_version`] on a server without vector sets.
pub fn server_info(conn: &mut Connection, url: &ServerUrl) -> Result<ServerInfo> {
    let server = info(conn, url, "server")?;
    let version = version_ok(&server, url)?;
    let mut settings: BTreeMap<String, String> = read_settings(conn, url)?.into_iter().collect();
    for field in ["redis_mode", "arch_bits", "multiplexing_api"] {
        if let Some(v) = server.get(field) {
            settings.insert(field.to_string(), v.clone());
        }
    }
    Ok(ServerInfo {
        version: format!("Redis {}", version.text),
        settings,
    })
}

/// [`server_info`] on a connection of its own (the [`crate::backend::Database`] entry).
pub fn server_info_at(url: &ServerUrl) -> Result<ServerInfo> {
    server_info(&mut conn::connect(url, READ_LIMIT)?, url)
}

/// The settings the warnings look at.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Bytes; 0 is no limit.
    pub maxmemory: u64,
    pub maxmemory_policy: String,
    /// RDB snapshot rules (`save`), empty when off.
    pub save: String,
    pub appendonly: bool,
}

impl Settings {
    fn of(pairs: &[(String, String)]) -> Settings {
        let get = |n: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        Settings {
            maxmemory: get("maxmemory").parse().unwrap_or(0),
            maxmemory_policy: get("maxmemory-policy"),
            save: get("save"),
            appendonly: matches!(get("appendonly").as_str(), "yes" | "1"),
        }
    }
}

/// Warnings for a Redis server on a machine with `ram` bytes.
pub fn warnings(s: &Settings, ram: u64) -> Vec<String> {
    let mut w = Vec::new();
    if s.maxmemory > 0 && s.maxmemory_policy != "noeviction" {
        w.push(format!(
            "maxmemory is {} with maxmemory-policy {}: Redis may evict the rows or the vector \
             set during a sweep. Set CONFIG SET maxmemory-policy noeviction (or maxmemory 0)",
            human_bytes(s.maxmemory),
            s.maxmemory_policy
        ));
    } else if s.maxmemory > 0 && s.maxmemory < ram / 4 {
        w.push(format!(
            "maxmemory is {}: a load or build past it fails with OOM. Raise it above the rows \
             plus the vector set (CONFIG SET maxmemory 0 for no limit)",
            human_bytes(s.maxmemory)
        ));
    }
    if !s.save.trim().is_empty() {
        w.push(format!(
            "RDB snapshots are on (save \"{}\"): a snapshot forks the server during a load or \
             build, which distorts build times and doubles memory. Turn them off for \
             benchmarks: CONFIG SET save \"\"",
            s.save
        ));
    }
    if s.appendonly {
        w.push(
            "appendonly is on: every VADD and row written is also appended to the AOF, which \
             slows loads and builds. Turn it off for benchmarks: CONFIG SET appendonly no"
                .to_string(),
        );
    }
    w
}

/// The vector-set commands a run uses, proved on a scratch key and removed: VADD (FP32 blob,
/// a quantization, EF and M, also from a script as builds run it), VSIM (FP32, COUNT, EF),
/// VINFO, VCARD, MEMORY USAGE, the rows hash and DEL. A missing ACL permission fails naming
/// it; a server without vector sets fails naming the fix.
pub fn prove(conn: &mut Connection, url: &ServerUrl, prefix: &str) -> Result<String> {
    let key = format!("{prefix}:{}", crate::backend::server::scratch_table());
    let rows = format!("{key}:rows");
    let result = prove_on(conn, url, &key, &rows);
    let cleanup: Result<i64> = query(
        conn,
        url,
        redis::cmd("DEL").arg(&key).arg(&rows),
        "removing the scratch key",
    );
    let found = result?;
    cleanup?;
    Ok(found)
}

fn prove_on(conn: &mut Connection, url: &ServerUrl, key: &str, rows: &str) -> Result<String> {
    let blob = |v: [f32; 3]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let _: i64 = query(
        conn,
        url,
        redis::cmd("HSET")
            .arg(rows)
            .arg("0")
            .arg(blob([1.0, 0.0, 0.0]))
            .arg("1")
            .arg(blob([0.0, 1.0, 0.0])),
        "writing a scratch hash (HSET)",
    )?;
    let _: bool = query(
        conn,
        url,
        redis::cmd("VADD")
            .arg(key)
            .arg("FP32")
            .arg(blob([1.0, 0.0, 0.0]))
            .arg("0")
            .arg("NOQUANT")
            .arg("EF")
            .arg(10)
            .arg("M")
            .arg(8),
        "adding to a scratch vector set (VADD FP32)",
    )?;
    let added: i64 = super::build::eval_batch(conn, url, rows, key, None, 1, 2, "NOQUANT", 10, 8)?;
    if added != 1 {
        return Err(Error::Server(format!(
            "Redis at {url}: the build script added {added} element(s) to the scratch vector \
             set; expected 1"
        )));
    }
    let ids: Vec<String> = query(
        conn,
        url,
        redis::cmd("VSIM")
            .arg(key)
            .arg("FP32")
            .arg(blob([0.1, 1.0, 0.0]))
            .arg("COUNT")
            .arg(1)
            .arg("EF")
            .arg(10),
        "querying a scratch vector set (VSIM FP32)",
    )?;
    if ids != ["1"] {
        return Err(Error::Server(format!(
            "Redis at {url}: VSIM on a scratch vector set answered {ids:?}; expected [\"1\"]"
        )));
    }
    let vinfo = super::build::vinfo(conn, url, key)?;
    let _: Option<i64> = query(
        conn,
        url,
        redis::cmd("MEMORY").arg("USAGE").arg(key),
        "reading MEMORY USAGE",
    )?;
    if vinfo.get("size").map(String::as_str) != Some("2") {
        return Err(Error::Server(format!(
            "Redis at {url}: VINFO of the scratch vector set reports {vinfo:?}; expected 2 \
             elements"
        )));
    }
    Ok(
        "vector sets (VADD from a client and from the build script, VSIM, VINFO, MEMORY \
        USAGE: built and queried a scratch set)"
            .to_string(),
    )
}

/// `servers check`: fill `report` for the server at `url`.
pub fn check(url: &ServerUrl, report: &mut CheckReport, ram: u64) -> Result<()> {
    let mut c = conn::connect(url, READ_LIMIT)?;
    let server = info(&mut c, url, "server")?;
    report.version = server.get("redis_version").map(|v| format!("Redis {v}"));
    version_ok(&server, url)?;
    let pairs = read_settings(&mut c, url)?;
    for (name, value) in &pairs {
        let shown = match name.as_str() {
            "maxmemory" => match value.parse::<u64>() {
                Ok(0) => "0 (no limit)".to_string(),
                Ok(n) => human_bytes(n),
                Err(_) => value.clone(),
            },
            "save" if value.trim().is_empty() => "\"\" (snapshots off)".to_string(),
            _ => value.clone(),
        };
        report.settings.push((name.clone(), shown));
    }
    let prefix = crate::backend::BackendOptions::default().schema()?;
    report.vector_support = Some(prove(&mut c, url, &prefix)?);
    report.warnings = warnings(&Settings::of(&pairs), ram);
    report.cost_sources = super::cost::sources();
    Ok(())
}

/// [`crate::backend::Database::privileges`]: connect and prove what a run under the key
/// prefix `schema` needs.
pub fn privileges_at(url: &ServerUrl, schema: &str) -> Result<()> {
    let mut c = conn::connect(url, READ_LIMIT)?;
    check_version(&mut c, url)?;
    prove(&mut c, url, schema).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::server::GIB;

    fn url() -> ServerUrl {
        ServerUrl::parse(ServerKind::Redis, "redis://:pw@127.0.0.1:1").unwrap()
    }

    #[test]
    fn version_rule() {
        let info = |text: &str| parse_info(text);
        assert!(version_ok(&info("# Server\r\nredis_version:8.0.2\r\n"), &url()).is_ok());
        let old = version_ok(&info("redis_version:7.2.4\r\n"), &url()).unwrap_err();
        assert!(
            old.to_string().contains("Redis 7.2.4") && old.to_string().contains("8.0"),
            "{old}"
        );
        let valkey = version_ok(&info("redis_version:7.2.4\nvalkey_version:8.1.1\n"), &url());
        assert!(valkey.unwrap_err().to_string().contains("Valkey 8.1.1"));
        assert!(version_ok(&info("x:y"), &url()).is_err());
    }

    #[test]
    fn distorting_settings_are_flagged() {
        let s = Settings {
            maxmemory: GIB,
            maxmemory_policy: "allkeys-lru".into(),
            save: "3600 1".into(),
            appendonly: true,
        };
        let w = warnings(&s, 16 * GIB);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("allkeys-lru") && w[0].contains("noeviction"));
        assert!(w[1].contains("save \"\""));
        let good = Settings {
            maxmemory_policy: "noeviction".into(),
            ..Settings::default()
        };
        assert!(warnings(&good, 16 * GIB).is_empty());
    }
}
