//! Where a server URL comes from, in order: its database's flag (`--mariadb`), its
//! `ANNBENCH_*_URL` variable, the ann-benchmarks forks' `*_CONN_ARGS` + `*_DB_NAME` variables
//! (for the databases that have them), then `servers.env` written by `scripts/databases.sh up`.

use super::{ServerKind, ServerUrl};
use crate::{Error, Result};
use std::fmt;
use std::path::PathBuf;

/// Where a resolved URL was found (shown by `annbench servers check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlSource {
    /// `--mariadb` / `--postgres` on the command line (or an explicit API argument).
    Flag,
    /// An environment variable holding a URL, e.g. `ANNBENCH_MARIADB_URL`.
    EnvUrl(&'static str),
    /// `MARIADB_CONN_ARGS` / `POSTGRES_CONN_ARGS` (`user:password:host:port`).
    ConnArgs(&'static str),
    /// A line of the `servers.env` file written by `scripts/databases.sh`.
    ServersEnv(PathBuf),
}

impl fmt::Display for UrlSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlSource::Flag => f.write_str("command line"),
            UrlSource::EnvUrl(v) | UrlSource::ConnArgs(v) => write!(f, "${v}"),
            UrlSource::ServersEnv(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The database the ann-benchmarks forks use when `*_DB_NAME` is not set.
pub const FORKS_DEFAULT_DB: &str = "ann";

/// Resolve a URL and say where it came from, reading the process environment.
pub fn resolve_with_source(
    kind: ServerKind,
    explicit: Option<&str>,
) -> Result<(ServerUrl, UrlSource)> {
    resolve_from(kind, explicit, &|k| std::env::var(k).ok())
}

/// [`resolve_with_source`] with an injectable environment (tests use a map). Nothing
/// configured is a [`Error::Config`] that lists every way to configure the server.
pub fn resolve_from(
    kind: ServerKind,
    explicit: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(ServerUrl, UrlSource)> {
    find_url(kind, explicit, env)?.ok_or_else(|| not_configured(kind, env))
}

/// Like [`resolve_from`], but `Ok(None)` when no setting names this server at all.
pub fn find_url(
    kind: ServerKind,
    explicit: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(ServerUrl, UrlSource)>> {
    let decl = kind.decl();
    let nonempty = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(text) = explicit {
        return Ok(Some((ServerUrl::parse(kind, text)?, UrlSource::Flag)));
    }
    if let Some(text) = nonempty(decl.url_var) {
        let url = ServerUrl::parse(kind, &text)
            .map_err(|e| Error::Config(format!("${}: {e}", decl.url_var)))?;
        return Ok(Some((url, UrlSource::EnvUrl(decl.url_var))));
    }
    if let Some(forks) = decl.forks
        && let Some(args) = nonempty(forks.conn_args)
    {
        let db = nonempty(forks.db_name).unwrap_or_else(|| FORKS_DEFAULT_DB.to_string());
        let url = conn_args_url(kind, forks.conn_args, &args, &db)?;
        return Ok(Some((url, UrlSource::ConnArgs(forks.conn_args))));
    }
    let path = servers_env_path(env);
    if let Some(text) = read_servers_env(&path, decl.url_var)? {
        let url = ServerUrl::parse(kind, &text)
            .map_err(|e| Error::Config(format!("{} in {}: {e}", decl.url_var, path.display())))?;
        return Ok(Some((url, UrlSource::ServersEnv(path))));
    }
    Ok(None)
}

/// Which setting names the `kind` server, in [`find_url`]'s order, and its text with the
/// password masked, whether or not it parses: how `servers check` names a malformed setting.
pub fn setting_shown(
    kind: ServerKind,
    explicit: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(String, UrlSource)> {
    let decl = kind.decl();
    let nonempty = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let shown = |t: &str| format!("'{}'", super::errors::mask_secrets(&super::redact_text(t)));
    if let Some(text) = explicit {
        return Some((shown(text), UrlSource::Flag));
    }
    if let Some(text) = nonempty(decl.url_var) {
        return Some((shown(&text), UrlSource::EnvUrl(decl.url_var)));
    }
    if let Some(forks) = decl.forks
        && let Some(args) = nonempty(forks.conn_args)
    {
        let key = format!("{}=", forks.conn_args);
        let masked = super::errors::mask_secrets(&format!("{key}{args}"));
        let value = masked.strip_prefix(&key).unwrap_or("***").to_string();
        return Some((format!("'{value}'"), UrlSource::ConnArgs(forks.conn_args)));
    }
    let path = servers_env_path(env);
    match read_servers_env(&path, decl.url_var) {
        Ok(Some(text)) => Some((shown(&text), UrlSource::ServersEnv(path))),
        _ => None,
    }
}

/// The error for a server named nowhere: every way to name it.
pub fn not_configured(kind: ServerKind, env: &dyn Fn(&str) -> Option<String>) -> Error {
    let decl = kind.decl();
    let forks = decl.forks.map_or(String::new(), |f| {
        format!(
            " (or {}=user:password:host:port with {})",
            f.conn_args, f.db_name
        )
    });
    Error::Config(format!(
        "no {} server given: pass {} URL, set {}{forks}, or start local servers with \
         scripts/databases.sh up (it writes {})",
        kind.name(),
        decl.flag,
        decl.url_var,
        servers_env_path(env).display()
    ))
}

/// `user:password:host:port` as the forks split it; a password may itself contain `:`.
fn conn_args_url(kind: ServerKind, var: &str, args: &str, db: &str) -> Result<ServerUrl> {
    let bad = |why: &str| Error::Config(format!("${var} must be user:password:host:port ({why})"));
    let (user, rest) = args.split_once(':').ok_or_else(|| bad("no ':'"))?;
    let (rest, port) = rest.rsplit_once(':').ok_or_else(|| bad("too few fields"))?;
    let (password, host) = rest.rsplit_once(':').ok_or_else(|| bad("too few fields"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| bad(&format!("port '{port}' is not a number")))?;
    if user.is_empty() || host.is_empty() {
        return Err(bad("empty user or host"));
    }
    let scheme = kind.decl().schemes.first().copied().unwrap_or_default();
    let mut url = url::Url::parse(&format!("{scheme}://placeholder/"))
        .map_err(|e| Error::Config(format!("${var}: {e}")))?;
    // The parts are taken as they are: encode everything, `%` included, so a `%41` in a
    // password stays those three characters.
    let enc = |t: &str| {
        percent_encoding::utf8_percent_encode(t, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let host_ok = url.set_host(Some(host)).is_ok();
    let set_ok = url.set_port(Some(port)).is_ok()
        && url.set_username(&enc(user)).is_ok()
        && url.set_password(Some(&enc(password))).is_ok();
    if !host_ok || !set_ok {
        return Err(bad(&format!("host '{host}' is not valid")));
    }
    url.set_path(db);
    ServerUrl::parse(kind, url.as_str())
}

/// `$ANNBENCH_CACHE_DIR/servers.env`, else `$HOME/.cache/annbench/servers.env`.
pub fn servers_env_path(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let cache = env("ANNBENCH_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env("HOME").unwrap_or_else(|| "/root".into())).join(".cache/annbench")
        });
    cache.join("servers.env")
}

/// The value of `key` in a `KEY=value` file (`export ` prefixes, `#` comments and quotes
/// allowed). `Ok(None)` when the file or key is absent.
pub fn read_servers_env(path: &std::path::Path, key: &str) -> Result<Option<String>> {
    Ok(servers_env_entries(path)?
        .into_iter()
        .find_map(|(k, v)| (k == key).then_some(v)))
}

/// Every `KEY=value` line of such a file, in order (empty when it is absent).
pub fn servers_env_entries(path: &std::path::Path) -> Result<Vec<(String, String)>> {
    let Some(text) = crate::fsutil::read_text_if_any(path, "server URLs")? else {
        return Ok(Vec::new());
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Ok(text
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("export ").unwrap_or(line);
            let (k, v) = line.split_once('=')?;
            let v = v.trim().trim_matches(['"', '\'']);
            Some((k.trim().to_string(), v.to_string()))
        })
        .collect())
}

/// A value from the environment, else from `servers.env` (e.g. `ANNBENCH_TEST_OLD_MARIADB_URL`).
pub fn lookup(key: &str) -> Result<Option<String>> {
    if let Some(v) = std::env::var(key).ok().filter(|v| !v.is_empty()) {
        return Ok(Some(v));
    }
    read_servers_env(&servers_env_path(&|k| std::env::var(k).ok()), key)
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
