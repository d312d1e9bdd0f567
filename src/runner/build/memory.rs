//! `run --memory 100%,50%,25%,10%`: after a build's own points, restart its server (an instance
//! `scripts/databases.sh` manages) with its caches at each share of the index size, and measure
//! each point right after the restart (the `cold` series: one timed pass and the recall) and
//! then warm (the usual passes), each share its own series: label `mem<P>-cold` and `mem<P>`
//! (after `<label>-` when the run has one). The server's caches, read past the OS cache, are
//! what the share bounds (docs/memory.md); the share and the way it was set are recorded as
//! server settings (`annbench.memory_share`, `annbench.memory_bytes`).
//!
//! Resume: each series is looked up like any point, so a rerun measures only what is missing
//! (rebuilding the index when a share is). The server is put back to its full memory before a
//! build and after the sweep; a stop in between leaves it running at a share, and the rerun's
//! first restart puts it back.

use super::{BuildCost, Todo};
use crate::backend::Backend;
use crate::config::BuildPoint;
use crate::connect::{ServerKind, ServerUrl};
use crate::runner::SweepSummary;
use crate::runner::assess::Policy;
use crate::runner::build;
use crate::runner::ctx::{Ctx, warn};
use crate::runner::measure::PassBuffers;
use crate::runner::point::PointRun;
use crate::{Error, Result};
use std::io::Write;
use std::time::Duration;

/// The smallest cache each server starts with, in bytes: PostgreSQL's shared_buffers is at
/// least 16 pages of 8 kB; MariaDB's buffer pool at least 6 MiB with 16 KiB pages (11.8: "requires
/// innodb_buffer_pool_size >= 6 MiB", although the variable's floor is 2 MiB; its
/// mhnsw_max_cache_size at least 1 MiB). scripts/lib/databases-<db>.sh holds the same figures
/// (`<db>_memory_min_kib`).
pub fn server_minimum(kind: ServerKind) -> Option<u64> {
    match kind {
        ServerKind::Postgres => Some(128 << 10),
        ServerKind::MariaDb => Some(6 << 20),
        _ => None,
    }
}

/// `100%,50%` -> [1.0, 0.5]: shares in (0, 100%], each once.
pub fn parse_shares(text: &str) -> std::result::Result<Vec<f64>, String> {
    let mut out: Vec<f64> = Vec::new();
    for part in text.split(',').map(str::trim) {
        let share = part
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                format!(
                    "--memory '{part}': a share of the index size in percent, above 0% and at \
                     most 100% (e.g. --memory 100%,50%,25%,10%)"
                )
            })?
            / 100.0;
        if out.iter().any(|s| (s - share).abs() < 1e-12) {
            return Err(format!("--memory names {part} twice"));
        }
        out.push(share);
    }
    Ok(out)
}

/// The series label of `share` (cold or warm) under the run's label.
pub fn series_label(label: Option<&str>, share: f64, cold: bool) -> String {
    let pct = share * 100.0;
    let pct = if (pct - pct.round()).abs() < 1e-9 {
        format!("{}", pct.round() as u64)
    } else {
        format!("{pct}").replace('.', "_")
    };
    let series = format!("mem{pct}{}", if cold { "-cold" } else { "" });
    match label {
        Some(l) => format!("{l}-{series}"),
        None => series,
    }
}

/// Whether `label` is spelt as a `--memory` series is (`mem50`, `x-mem12_5-cold`): such a
/// label is kept for those series, whose points it would otherwise stand in for.
pub fn is_series_label(label: &str) -> bool {
    let l = label.strip_suffix("-cold").unwrap_or(label);
    let Some(i) = l.rfind("mem") else {
        return false;
    };
    let share = &l[i + 3..];
    (i == 0 || l[..i].ends_with('-'))
        && !share.is_empty()
        && share.chars().all(|c| c.is_ascii_digit() || c == '_')
        && share.starts_with(|c: char| c.is_ascii_digit())
}

/// An error when a stored point of a share series was not measured at a share (a plain run
/// labelled so by an earlier version): taking it as the share's point would be a wrong one.
pub(in crate::runner) fn check_stored(todo: &[Todo<'_>]) -> Result<()> {
    for t in todo {
        if let Some(p) = &t.stored {
            if !p
                .environment
                .server_settings
                .contains_key("annbench.memory_share")
            {
                return Err(Error::Config(format!(
                    "{} is labelled '{}', the name of a --memory series, but was not measured \
                     at a memory share; move it out of the store, or give this run another \
                     --label",
                    t.path.display(),
                    p.label.as_deref().unwrap_or("")
                )));
            }
        }
    }
    Ok(())
}

/// Every series label of the sweep's shares, for resume.
pub(in crate::runner) fn series_labels(ctx: &Ctx<'_>) -> Vec<String> {
    ctx.opts
        .memory
        .iter()
        .flat_map(|&s| [true, false].map(|cold| series_label(ctx.label.as_deref(), s, cold)))
        .collect()
}

/// Refuse what `--memory` cannot do, before any server work: Redis (everything in memory), a
/// server scripts/databases.sh does not manage or only as a main server, a remote one, and
/// `--restart` beside it.
pub(in crate::runner) fn check(
    opts: &crate::runner::SweepOptions,
    grids: &[crate::config::Grid],
) -> Result<()> {
    if let Some(g) = grids
        .iter()
        .find(|g| crate::backend::algorithm(&g.algorithm).is_none_or(|a| a.database.is_none()))
    {
        return Err(Error::Config(format!(
            "--memory restarts a server with less memory; {} runs on no server: leave it out \
             of this run",
            g.algorithm
        )));
    }
    let kinds = server_kinds(grids);
    if opts.restart {
        return Err(Error::Config(
            "--memory measures each share cold (right after a restart) and warm itself: leave \
             out --restart"
                .into(),
        ));
    }
    // One restart per share: a second client count's "cold" pass would run on the caches the
    // first one warmed.
    if opts.clients.len() > 1 {
        return Err(Error::Config(format!(
            "--memory measures each share cold right after its restart, once: give one client \
             count (--clients {}), not {}; run the other counts in a run of their own",
            opts.clients[0],
            opts.clients
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    for kind in kinds {
        if server_minimum(kind).is_none() {
            return Err(Error::Config(format!(
                "--memory cannot run {} with less memory than its index: it keeps everything \
                 in memory (no cache to shrink, nothing read from storage)",
                kind.name()
            )));
        }
        let urls = opts.backend.urls_of(kind)?;
        // Each share is measured on the one server the build ran on; an interleaved run's
        // other servers would get no share series.
        if urls.len() > 1 {
            return Err(Error::Config(format!(
                "--memory measures one server per run; {} {} servers were given ({}): run \
                 each with --memory on its own (the series carry the server's name as label)",
                urls.len(),
                kind.name(),
                urls.iter()
                    .map(|(named, _)| named.map_or("-", |n| n.name.as_str()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for (_, url) in urls {
            instance_id(&url)?;
        }
    }
    Ok(())
}

/// The scripts/databases.sh and instance id (ENGINE:NAME) of the server at `url`.
fn instance_id(url: &ServerUrl) -> Result<(String, String)> {
    let (script, id) = super::restart::managed(url, "--memory")?;
    if !id.contains(':') {
        return Err(Error::Config(format!(
            "--memory: the server at {} is scripts/databases.sh's main {id} server, which keeps \
             its memory; run on an instance of its own: scripts/databases.sh up-instance NAME \
             {id}, then --{id} with its URL (ANNBENCH_{}_NAME_URL)",
            url.redacted(),
            id.to_uppercase()
        )));
    }
    Ok((script, id))
}

/// The kinds of server the grids' algorithms run on, each once.
fn server_kinds(grids: &[crate::config::Grid]) -> Vec<ServerKind> {
    let mut kinds = Vec::new();
    for g in grids {
        if let Some(d) = crate::backend::algorithm(&g.algorithm).and_then(|a| a.database) {
            if !kinds.contains(&d.kind) {
                kinds.push(d.kind);
            }
        }
    }
    kinds
}

/// Exclusive locks on the instances a `--memory` sweep restarts, held while it runs. A second
/// sweep restarting the same instance would measure its points at the first one's share; the
/// system drops a lock when its process ends, also on kill -9, so a stopped sweep never
/// leaves one behind.
pub(in crate::runner) struct InstanceLocks(#[allow(dead_code)] Vec<std::fs::File>);

/// Lock every instance of the sweep's servers (after [`check`]), or say which sweep holds one.
pub(in crate::runner) fn lock(
    opts: &crate::runner::SweepOptions,
    grids: &[crate::config::Grid],
) -> Result<InstanceLocks> {
    use std::os::fd::AsRawFd;
    let dir = crate::connect::servers_env_path(&|k| std::env::var(k).ok())
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let mut held = Vec::new();
    for kind in server_kinds(grids) {
        for (_, url) in opts.backend.urls_of(kind)? {
            let (_, id) = instance_id(&url)?;
            let path = dir.join(format!("memory-{}.lock", id.replace(':', "-")));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| Error::io(&path, "cannot open the instance lock", e))?;
            // SAFETY: a valid open descriptor; flock only reads it.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(Error::Config(format!(
                    "--memory: another sweep ({}) is restarting the instance {id} at its shares; \
                     wait for it to end (two sweeps on one instance would measure at each \
                     other's memory)",
                    match holder.trim() {
                        "" => "of another process".to_string(),
                        h => format!("process {h}"),
                    }
                )));
            }
            // Who holds it, for the message above (the lock, not the text, is what counts).
            let _ = file.set_len(0);
            let _ = (&file).write_all(std::process::id().to_string().as_bytes());
            held.push(file);
        }
    }
    Ok(InstanceLocks(held))
}

/// Restart the server at `url` with its caches at `bytes` (`None`: its full memory again).
/// The script runs in a process group of its own: a Ctrl-C meant for the sweep does not stop
/// it half-way, and the sweep stops once the server is up again.
pub(in crate::runner) fn restart_with(url: &ServerUrl, bytes: Option<u64>) -> Result<()> {
    let (script, id) = instance_id(url)?;
    let memory = bytes.map_or_else(|| "off".to_string(), |b| format!("{}K", b.div_ceil(1024)));
    super::restart::run_script(
        &script,
        &["restart-instance", &id, "--memory", &memory],
        "--memory",
    )
}

/// Put every server of the sweep back to its full memory (before the first build: a stopped
/// sweep may have left one at a share).
pub(in crate::runner) fn reset(
    opts: &crate::runner::SweepOptions,
    kinds: &[ServerKind],
) -> Result<()> {
    for &kind in kinds {
        for (_, url) in opts.backend.urls_of(kind)? {
            restart_with(&url, None)?;
        }
    }
    Ok(())
}

/// The bytes a share of `index_bytes` gives the server, and why it differs when it does.
pub fn share_bytes(
    kind: ServerKind,
    index_bytes: u64,
    share: f64,
    ram_bytes: u64,
) -> std::result::Result<(u64, Option<String>), String> {
    let want = (index_bytes as f64 * share).ceil() as u64;
    let min = server_minimum(kind).unwrap_or(0);
    let pct = share * 100.0;
    if want >= ram_bytes && ram_bytes > 0 {
        return Err(format!(
            "{pct}% of the index ({}) is not less than this machine's RAM ({}): not reachable",
            human(want),
            human(ram_bytes)
        ));
    }
    if want < min {
        return Ok((
            min,
            Some(format!(
                "{pct}% of the index ({}) is below {}'s smallest cache ({}): measured at {} ({:.1}%)",
                human(want),
                kind.name(),
                human(min),
                human(min),
                min as f64 * 100.0 / index_bytes.max(1) as f64
            )),
        ));
    }
    Ok((want, None))
}

fn human(b: u64) -> String {
    crate::backend::plan::human_bytes(b)
}

/// The sweep's shares for an index of about `index_bytes` (before the build: the plan's
/// estimate), a warning for each share the machine's RAM cannot give. A share raised to the
/// server's smallest cache is said after the build, from the built index's size: the size
/// models are far off for small indexes (MariaDB: 2.0 MiB estimated, 10 MiB built, at
/// 4,500 x 128), where that raise happens.
pub(in crate::runner) fn plan_shares(
    ctx: &Ctx<'_>,
    kind: ServerKind,
    index_bytes: u64,
    summary: &mut SweepSummary,
) {
    for &share in &ctx.opts.memory {
        if let Err(why) = share_bytes(kind, index_bytes, share, ctx.host.ram_bytes) {
            warn(
                ctx.progress,
                summary,
                format!(
                    "{} memory plan (the index estimated at {} before the build; the points \
                     record the share of its real size): {why}",
                    ctx.algorithm,
                    human(index_bytes)
                ),
            );
        }
    }
}

/// Measure every share's missing points of this build: restart at the share, measure cold,
/// then warm; finally put the server back to its full memory.
pub(in crate::runner) fn sweep(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    report: &crate::backend::BuildReport,
    full: &[(crate::params::Params, usize, f64)],
    summary: &mut SweepSummary,
) -> Result<()> {
    let kind = crate::backend::algorithm(ctx.algorithm)
        .and_then(|a| a.database)
        .map(|d| d.kind)
        .ok_or_else(|| Error::Config(format!("--memory: {} runs on no server", ctx.algorithm)))?;
    let url = ctx.url(kind)?;
    let index = report.index_size_bytes;
    let result = (|| {
        for &share in &ctx.opts.memory {
            if ctx.progress.cancelled() {
                return Err(Error::Interrupted);
            }
            let (bytes, why) = match share_bytes(kind, index, share, ctx.host.ram_bytes) {
                Ok(b) => b,
                Err(why) => {
                    warn(
                        ctx.progress,
                        summary,
                        format!("{}: {why}: skipped", ctx.algorithm),
                    );
                    continue;
                }
            };
            let cold = series_ctx(ctx, share, true);
            let warm = series_ctx(ctx, share, false);
            let todo_cold = build::todo_of(&cold, build, summary)?;
            let todo_warm = build::todo_of(&warm, build, summary)?;
            check_stored(&todo_cold)?;
            check_stored(&todo_warm)?;
            if todo_cold
                .iter()
                .chain(&todo_warm)
                .all(|t| t.stored.is_some())
            {
                build::report_stored(&cold, todo_cold, summary);
                build::report_stored(&warm, todo_warm, summary);
                continue;
            }
            restart_with(&url, Some(bytes))?;
            backend.reconnect()?;
            backend.check_index()?;
            let mut note = format!(
                "memory share {}%: the server's caches hold {} of the {} index, read past the \
                 OS cache (scripts/databases.sh --memory)",
                share * 100.0,
                human(bytes),
                human(index)
            );
            if let Some(why) = why {
                warn(
                    ctx.progress,
                    summary,
                    format!("{} (built index {}): {why}", ctx.algorithm, human(index)),
                );
                note = format!("{note}; {why}");
            }
            let server = memory_server(backend, share, bytes)?;
            // MariaDB's graph cache at the share: a graph larger than it is said so.
            let graph = server.settings.get("mhnsw_max_cache_size");
            if let Some(n) = graph
                .and_then(|c| c.parse().ok())
                .and_then(|c| crate::backend::mariadb::cache_notice(index, c))
            {
                note = format!("{note}; {n}");
            }
            let cold = Ctx {
                server: server.clone(),
                ..cold
            };
            let warm = Ctx { server, ..warm };
            let series = Series {
                report,
                note: &note,
                full,
            };
            measure(&cold, backend, build, &series, &todo_cold, true, summary)?;
            measure(&warm, backend, build, &series, &todo_warm, false, summary)?;
        }
        Ok(())
    })();
    // Back to its full memory, also after a failed share (not after a Ctrl-C: the script
    // would run after the user asked to stop; the rerun resets it first).
    if !matches!(result, Err(Error::Interrupted)) {
        restart_with(&url, None)?;
        backend.reconnect()?;
    }
    result
}

/// This context for the series of `share`.
fn series_ctx<'a>(ctx: &Ctx<'a>, share: f64, cold: bool) -> Ctx<'a> {
    Ctx {
        label: Some(series_label(ctx.label.as_deref(), share, cold)),
        ..ctx.clone()
    }
}

/// The server's version and settings as it now runs, with the share recorded beside them.
fn memory_server(
    backend: &mut dyn Backend,
    share: f64,
    bytes: u64,
) -> Result<crate::backend::ServerInfo> {
    let mut server = backend.server_info()?;
    let set = &mut server.settings;
    set.insert("annbench.memory_share".into(), format!("{share}"));
    set.insert("annbench.memory_bytes".into(), bytes.to_string());
    set.insert("annbench.memory_via".into(), "settings".into());
    Ok(server)
}

/// What the points of one share carry: the build's report, the share's notice, and each
/// point's recall at full memory (for the check that memory does not change the answers).
struct Series<'a> {
    report: &'a crate::backend::BuildReport,
    note: &'a str,
    full: &'a [(crate::params::Params, usize, f64)],
}

/// Store `point`, warning first when its recall differs from the same point's at full
/// memory (the same index should answer the same; MariaDB's reloaded graph may not).
fn store(
    ctx: &Ctx<'_>,
    series: &Series<'_>,
    report: &crate::backend::BuildReport,
    point: crate::results::PointResult,
    todo: &Todo<'_>,
    summary: &mut SweepSummary,
) -> Result<()> {
    let before = series
        .full
        .iter()
        .find(|(q, c, _)| *q == point.query_args && *c == point.clients)
        .map(|f| f.2);
    if let Some(before) = before.filter(|b| (b - point.metrics.recall).abs() > 1e-9) {
        warn(
            ctx.progress,
            summary,
            format!(
                "{} {}: recall {:.4} differs from {before:.4} at full memory before the \
                 restarts: the index reloaded from storage answers differently",
                build::point_label(&point),
                point.label.as_deref().unwrap_or(""),
                point.metrics.recall
            ),
        );
    }
    build::store_point(ctx, report, point, todo, summary)
}

/// Measure the missing points of `todo` in this series: cold, one timed pass each right after
/// the restart (the first point meets the emptiest cache); warm, the usual passes.
fn measure(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    series: &Series<'_>,
    todo: &[Todo<'_>],
    cold: bool,
    summary: &mut SweepSummary,
) -> Result<()> {
    let (report, note) = (series.report, series.note);
    let missing: Vec<&Todo<'_>> = todo.iter().filter(|t| t.stored.is_none()).collect();
    let mut runs: Vec<PointRun> = missing
        .iter()
        .map(|t| PointRun::new(t.query_args.clone(), t.clients))
        .collect();
    // The build's report (its size, seconds and phases) is that of the build measured before
    // the restarts; the server's cost of the build stays unmeasured (this is no build).
    let mut with_note = report.clone();
    with_note.notices.push(note.to_string());
    let mut cost = BuildCost::find(ctx);
    cost.first_report = with_note.clone();
    let (ready, mut searchers) = build::connect(ctx, backend, with_note, &mut runs, summary)?;
    let step = ready.step(ctx, build, 0);
    let mut bufs = PassBuffers::new(
        ctx.queries.nrows(),
        ctx.opts.count,
        build::max_clients(ctx.opts),
    );
    // A measured point, finished and stored under its share's series (cold and warm alike).
    let mut keep = |run: &mut PointRun| -> Result<()> {
        let point = build::finish(ctx, build, run, &ready.probe, &cost, None)?;
        store(
            ctx,
            series,
            &ready.report,
            point,
            build::find_todo(&missing, run)?,
            summary,
        )
    };
    if !cold {
        let mut done = |run: &mut PointRun, failed: Option<crate::Error>| -> Result<()> {
            backend_ok(failed)?;
            keep(run)
        };
        return crate::runner::schedule::measure(
            &step,
            &mut runs,
            &mut searchers,
            &mut bufs,
            &mut done,
        );
    }
    let one = Policy {
        runs: 1,
        target_ci: None,
        max_time: Duration::ZERO,
    };
    for run in runs.iter_mut() {
        if ctx.progress.cancelled() {
            return Err(Error::Interrupted);
        }
        run.apply_args(&mut searchers)?;
        run.timed_pass(&step.env, &mut searchers, &mut bufs, &one)?;
        run.recall_pass(&step.env, &mut searchers, &mut bufs, 0, &ready.report)?;
        keep(run)?;
    }
    Ok(())
}

/// A point that failed fails the share (the sweep's error handling records it).
fn backend_ok(failed: Option<crate::Error>) -> Result<()> {
    failed.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_labels_are_told_from_other_labels() {
        for l in ["mem50", "mem50-cold", "x-mem12_5", "a-b-mem100-cold"] {
            assert!(is_series_label(l), "{l}");
            assert!(is_series_label(&series_label(
                Some("x"),
                0.5,
                l.ends_with("-cold")
            )));
        }
        for l in [
            "memory",
            "mem",
            "mem-cold",
            "xmem50",
            "mem_5",
            "mem50x",
            "nightly-3",
        ] {
            assert!(!is_series_label(l), "{l}");
        }
    }
}
