//! `run --restart`: after a build's warm passes, restart the server (one that
//! `scripts/databases.sh` manages: `servers.env` names it under `ANNBENCH_MANAGED_<port>`),
//! reconnect, and measure each point again as its own series, labelled `<label>-cold` (or
//! `cold`): the first timed pass after the restart, then the recall pass. A recall after the
//! restart that differs from the one before it is a warning: the index reloaded from disk
//! answers differently (MariaDB 12.3.3 fixed such a loss for cosine indexes, MDEV-39858).
//!
//! The points after the restart run in grid order, so only the first is measured on an empty
//! cache; the later ones find what the earlier ones loaded.

use super::{BuildCost, Todo};
use crate::backend::Backend;
use crate::config::BuildPoint;
use crate::connect::{ServerKind, ServerUrl};
use crate::params::Params;
use crate::runner::SweepSummary;
use crate::runner::assess::Policy;
use crate::runner::build;
use crate::runner::ctx::{Ctx, warn};
use crate::runner::measure::PassBuffers;
use crate::runner::point::PointRun;
use crate::{Error, Result};
use std::time::Duration;

/// The `scripts/databases.sh` that manages the server at `url`, and its instance id there;
/// `option` (`--restart`, `--memory`) names what needs it in the refusal. Its servers listen
/// on loopback only, so a URL of another host is never one of them, whatever its port.
pub(super) fn managed(url: &ServerUrl, option: &str) -> Result<(String, String)> {
    let not = |why: &str| {
        Error::Config(format!(
            "{option}: the server at {} is not one scripts/databases.sh manages ({why}); \
             {option} works with the servers it starts on this machine (scripts/databases.sh \
             up, up-instance)",
            url.redacted()
        ))
    };
    if !url.is_loopback() {
        return Err(not("it is on another host"));
    }
    let port = url
        .tcp_port()
        .ok_or_else(|| not("no TCP port in its URL"))?;
    let id = crate::connect::lookup(&format!("ANNBENCH_MANAGED_{port}"))?
        .ok_or_else(|| not(&format!("servers.env has no ANNBENCH_MANAGED_{port}")))?;
    let script = crate::connect::lookup("ANNBENCH_DATABASES_SH")?
        .ok_or_else(|| not("servers.env has no ANNBENCH_DATABASES_SH"))?;
    Ok((script, id))
}

/// Every server the algorithms of `kinds` run on is managed (before any server work).
pub(in crate::runner) fn check(
    opts: &crate::runner::SweepOptions,
    kinds: &[ServerKind],
) -> Result<()> {
    for &kind in kinds {
        if let Some(why) = kind.decl().no_restart {
            return Err(Error::Config(format!(
                "--restart cannot measure {} across a restart: {why}",
                kind.name()
            )));
        }
        for (_, url) in opts.backend.urls_of(kind)? {
            managed(&url, "--restart")?;
        }
    }
    Ok(())
}

/// Restart the server at `url` and wait until it answers (the script waits).
fn restart(url: &ServerUrl) -> Result<()> {
    let (script, id) = managed(url, "--restart")?;
    run_script(&script, &["restart-instance", &id], "--restart")
}

/// Run scripts/databases.sh with `args` and wait for it. It runs in a process group of its
/// own, and writes to a file rather than a pipe: a Ctrl-C meant for the sweep, a second one,
/// or a kill -9 of annbench does not stop it between stopping the server and starting it
/// again (writing to the pipe of a dead reader killed it there, leaving the server down).
pub(super) fn run_script(script: &str, args: &[&str], option: &str) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let cannot = |e: std::io::Error| Error::Server(format!("{option}: cannot run {script}: {e}"));
    let log = std::env::temp_dir().join(format!(
        "annbench-restart-{}-{}.log",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let file = std::fs::File::create(&log).map_err(cannot)?;
    let status = std::process::Command::new(script)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(file.try_clone().map_err(cannot)?)
        .stderr(file)
        .process_group(0)
        .status()
        .map_err(cannot);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    if status?.success() {
        return Ok(());
    }
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    Err(Error::Server(format!(
        "{option}: `{script} {}` failed: {}",
        args.join(" "),
        tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
    )))
}

/// The label of the cold series of a server labelled `label`.
pub fn cold_label(label: Option<&str>) -> String {
    match label {
        Some(l) => format!("{l}-cold"),
        None => "cold".into(),
    }
}

/// Restart this context's server, reconnect `backend`, and store each point of `todo` once
/// more, measured right after the restart; `warm` holds each point's recall before it.
pub(in crate::runner) fn cold_series(
    ctx: &Ctx<'_>,
    backend: &mut dyn Backend,
    build: &BuildPoint,
    report: &crate::backend::BuildReport,
    todo: &[&Todo<'_>],
    warm: &[(Params, usize, f64)],
    summary: &mut SweepSummary,
) -> Result<()> {
    let kind = crate::backend::algorithm(ctx.algorithm)
        .and_then(|a| a.database)
        .map(|d| d.kind)
        .ok_or_else(|| Error::Config(format!("--restart: {} runs on no server", ctx.algorithm)))?;
    let url = ctx.url(kind)?;
    restart(&url)?;
    backend.reconnect()?;
    backend.check_index()?;
    let cold = Ctx {
        label: Some(cold_label(ctx.label.as_deref())),
        ..ctx.clone()
    };
    let mut runs: Vec<PointRun> = todo
        .iter()
        .map(|t| PointRun::new(t.query_args.clone(), t.clients))
        .collect();
    // The build's report (its index size: the points once said 0 bytes) is that of the
    // build; its server cost stays unmeasured (`BuildCost::find`: this is no build).
    let mut cost = BuildCost::find(&cold);
    cost.first_report = report.clone();
    let (ready, mut searchers) =
        build::connect(&cold, backend, report.clone(), &mut runs, summary)?;
    let step = ready.step(&cold, build, 0);
    let one = Policy {
        runs: 1,
        target_ci: None,
        max_time: Duration::ZERO,
    };
    let mut bufs = PassBuffers::new(
        ctx.queries.nrows(),
        ctx.opts.count,
        build::max_clients(ctx.opts),
    );
    for (run, t) in runs.iter_mut().zip(todo) {
        run.apply_args(&mut searchers)?;
        run.timed_pass(&step.env, &mut searchers, &mut bufs, &one)?;
        run.recall_pass(&step.env, &mut searchers, &mut bufs, 0, &ready.report)?;
        let point = build::finish(&cold, build, run, &ready.probe, &cost, None)?;
        let before = warm
            .iter()
            .find(|(q, c, _)| *q == run.query_args && *c == run.clients)
            .map(|w| w.2);
        if let Some(before) = before.filter(|b| (b - point.metrics.recall).abs() > 1e-9) {
            warn(
                ctx.progress,
                summary,
                format!(
                    "{}: recall after the restart {:.4} differs from before it {before:.4}: \
                     the index reloaded from disk answers differently",
                    build::point_label(&point),
                    point.metrics.recall
                ),
            );
        }
        let path = crate::results::point_path(&ctx.opts.results_dir, &point.key())?;
        let stored = Todo {
            query_args: t.query_args,
            clients: run.clients,
            path,
            stored: None,
            supersedes: None,
        };
        build::store_point(&cold, &cost.first_report, point, &stored, summary)?;
    }
    Ok(())
}
