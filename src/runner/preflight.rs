//! Checks of where and under what name results go, made before anything touches a server:
//! a bad label, an over-long file name or an unwritable (or full) `--results` directory
//! fails in a second, not after the load, build and measurement it would have thrown away.

use super::SweepOptions;
use crate::config::Grid;
use crate::results::{self, PointKey};
use crate::{Error, Result};

/// Check the label, every point's file name, and that `--results` is a writable directory
/// with room for at least one point of `queries` queries.
pub(super) fn check(
    opts: &SweepOptions,
    grids: &[Grid],
    dataset: &str,
    queries: usize,
) -> Result<()> {
    if opts.label.is_some() && !opts.backend.servers.is_empty() {
        return Err(Error::Config(
            "--label and named servers (--postgres NAME=URL) together: the names are the \
             labels of their servers' points; leave --label out"
                .into(),
        ));
    }
    if let Some(label) = &opts.label {
        if label.trim().is_empty() {
            return Err(Error::Config(
                "--label is empty: give a name such as mariadb-11.8, or leave the option out"
                    .into(),
            ));
        }
        if let Some(c) = label.chars().find(|c| c.is_control()) {
            return Err(Error::Config(format!(
                "--label {label:?} holds the control character {c:?}; use printable text"
            )));
        }
    }
    if opts.memory.is_empty() {
        for grid in grids {
            if let Some(l) = labels(opts, &grid.algorithm)
                .into_iter()
                .flatten()
                .find(|l| super::build::memory::is_series_label(l))
            {
                return Err(Error::Config(format!(
                    "label '{l}' is spelt as a --memory series (mem<P> or mem<P>-cold at its \
                     end), which it would stand in for; choose another label"
                )));
            }
        }
    }
    for grid in grids {
        for build in &grid.builds {
            for query_args in &build.query_args {
                for &clients in &opts.clients {
                    for label in labels(opts, &grid.algorithm) {
                        let key = PointKey::new(
                            dataset,
                            opts.count,
                            &grid.algorithm,
                            &build.build_args,
                            query_args,
                            clients,
                            label,
                        );
                        results::point_path(&opts.results_dir, &key)?;
                    }
                }
            }
        }
    }
    crate::fsutil::check_writable_dir(&opts.results_dir, "--results")?;
    // Neighbours and distances (12 bytes each), latencies, and about 32 KiB of attributes.
    let point = queries * (opts.count * 12 + 8) + (32 << 10);
    crate::fsutil::ensure_space(&opts.results_dir, point as u64, "results")
}

/// Refuse a dataset wider than any selected algorithm's table and index take, naming the
/// algorithms that take it, before any table is loaded (a sweep of several algorithms would
/// otherwise load and measure the first ones, then fail on the one that cannot hold it).
pub(super) fn check_dimensions(grids: &[Grid], dimension: usize) -> Result<()> {
    for grid in grids {
        if let Some(algorithm) = crate::backend::algorithm(&grid.algorithm) {
            crate::backend::check_dimension(algorithm, dimension)?;
        }
    }
    Ok(())
}

/// Every selected algorithm's checks of the data (the metric its index compares by, and
/// [`crate::backend::Algorithm::check_data`]:
/// e.g. the float16 range of a halfvec column, the vector lengths MariaDB takes), on train and
/// test, all before the first table of any algorithm is loaded: a sweep of several algorithms
/// once loaded and measured pgvector, then stopped at MariaDB's refusal of the same data.
pub(crate) fn check_data(grids: &[Grid], data: &crate::dataset::Dataset) -> Result<()> {
    let spec = crate::backend::TableSpec {
        dataset: data.name.clone(),
        metric: data.metric,
        dimension: data.dimension(),
    };
    for grid in grids {
        if let Some(algorithm) = crate::backend::algorithm(&grid.algorithm) {
            // The metric first: an index that compares by the other one refuses any values.
            crate::backend::check_metric(algorithm, data.metric)?;
            (algorithm.check_data)(&spec, data.train.view(), data.test.view())
                .map_err(|e| Error::Dataset(format!("{}: {e}", algorithm.name)))?;
        }
    }
    Ok(())
}

/// Connect to every server the grids need and prove every privilege a run needs there
/// ([`crate::backend::Database::privileges`]), so a missing grant fails before the first
/// table is loaded, not after a load and build on another server.
pub(super) fn check_privileges(opts: &SweepOptions, grids: &[Grid]) -> Result<()> {
    let schema = opts.backend.schema()?;
    for db in databases(grids) {
        for (name, url) in opts.backend.urls_of(db.kind)? {
            (db.privileges)(&url, &schema).map_err(|e| match name {
                Some(s) => s.error(e),
                None => e,
            })?;
        }
    }
    Ok(())
}

/// Connections a run opens on one server at once, and what they are (for the message).
pub(super) struct Connections {
    pub count: usize,
    pub what: String,
}

/// Refuse a run that would open more connections at once than a server takes from its user
/// ([`crate::backend::Database::connection_limit`]), before any write: it would fail part-way
/// with "too many connections". `needed` gives the run's count on a server of each database;
/// `fix` says what to lower. Connections of other clients are not counted: they come and go.
pub(super) fn check_connections(
    opts: &SweepOptions,
    grids: &[Grid],
    needed: &dyn Fn(&crate::backend::Database) -> Connections,
    fix: &str,
) -> Result<()> {
    for db in databases(grids) {
        let Some(limit_of) = db.connection_limit else {
            continue;
        };
        let need = needed(db);
        for (name, url) in opts.backend.urls_of(db.kind)? {
            let named = |e: Error| match name {
                Some(s) => s.error(e),
                None => e,
            };
            let limit = limit_of(&url).map_err(named)?;
            if need.count > limit.most {
                return Err(named(Error::Config(format!(
                    "{} at {} takes at most {} connections from this user ({}), and this run \
                     opens up to {} at once ({}): {fix}, or raise the server's max_connections",
                    db.kind.name(),
                    url.redacted(),
                    limit.most,
                    limit.why,
                    need.count,
                    need.what
                ))));
            }
        }
    }
    Ok(())
}

fn databases(grids: &[Grid]) -> Vec<&'static crate::backend::Database> {
    let mut out: Vec<&'static crate::backend::Database> = Vec::new();
    for db in grids
        .iter()
        .filter_map(|g| crate::backend::algorithm(&g.algorithm)?.database)
    {
        if !out.iter().any(|d| d.kind == db.kind) {
            out.push(db);
        }
    }
    out
}

/// The databases the grids' algorithms run on, each once.
pub(super) fn kinds(grids: &[Grid]) -> Vec<crate::connect::ServerKind> {
    databases(grids).into_iter().map(|d| d.kind).collect()
}

/// Resolve and parse the URL of every server the grids need (no connection yet), so a missing
/// or malformed URL fails before the dataset is read.
/// Two named servers must be two servers: one server under two names would load one table
/// and build one index twice over.
pub(super) fn check_servers(opts: &SweepOptions, grids: &[Grid]) -> Result<()> {
    for db in databases(grids) {
        let urls = opts.backend.urls_of(db.kind)?;
        for (i, (a, ua)) in urls.iter().enumerate() {
            let same = urls[..i].iter().find(|(_, ub)| same_server(ua, ub));
            if let Some((b, _)) = same {
                return Err(Error::Config(format!(
                    "servers '{}' and '{}' ({}) are the same server, {}: an interleaved run \
                     needs two servers (e.g. scripts/databases.sh up-instance NAME {})",
                    b.map_or("?", |s| s.name.as_str()),
                    a.map_or("?", |s| s.name.as_str()),
                    db.kind.decl().flag,
                    ua.redacted(),
                    db.kind.key()
                )));
            }
        }
    }
    Ok(())
}

/// Whether two URLs reach the same server (host and port, or socket).
fn same_server(a: &crate::connect::ServerUrl, b: &crate::connect::ServerUrl) -> bool {
    let (a, b) = (a.expose(), b.expose());
    fn local(h: Option<&str>) -> Option<&str> {
        match h {
            Some("localhost" | "127.0.0.1" | "::1" | "[::1]") => Some("localhost"),
            other => other,
        }
    }
    let socket = |u: &url::Url| {
        u.query_pairs()
            .find(|(k, _)| k == "socket" || k == "host")
            .map(|(_, v)| v.into_owned())
    };
    local(a.host_str()) == local(b.host_str()) && a.port() == b.port() && socket(a) == socket(b)
}

/// The labels of an algorithm's points: each named server's, else `--label`.
fn labels<'o>(opts: &'o SweepOptions, algorithm: &str) -> Vec<Option<&'o str>> {
    let named = opts.backend.named_for(algorithm);
    if named.is_empty() {
        vec![opts.label.as_deref()]
    } else {
        named.into_iter().map(|s| Some(s.name.as_str())).collect()
    }
}
