//! `annbench servers ...`

use super::out::outln;
use super::server_urls::ServerUrls;
use crate::backend::{BackendOptions, databases};
use crate::servers::{CheckOutcome, ServerCheck, check_all};
use crate::{Error, Result};
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum ServersCommand {
    /// Connect to each server and report version, vector support, the settings that shape
    /// results, and warnings with the value to set. Exits non-zero if a server is unusable.
    Check(CheckArgs),
    /// Drop the tables (and indexes) annbench loaded for a dataset, to free the servers' disk;
    /// the next run loads them again.
    DropTables(DropArgs),
}

#[derive(Debug, Args)]
pub struct DropArgs {
    /// Dataset name, as given to `annbench run`.
    #[arg(long)]
    dataset: String,
    /// Only on this server, by its database: mariadb, postgres, ... (default: every
    /// configured one).
    #[arg(long, value_parser = database_key)]
    server: Option<String>,
    /// One URL flag per database (`--mariadb URL`, ...), defaults as for `servers check`.
    #[command(flatten)]
    servers: ServerUrls,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// One URL flag per database (`--mariadb URL`, `--postgres URL`, ...).
    #[command(flatten)]
    servers: ServerUrls,
    /// text, or json (the findings as JSON).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    format: String,
    /// The same as --format json (kept for scripts).
    #[arg(long, hide = true)]
    json: bool,
}

pub fn run(cmd: ServersCommand) -> Result<()> {
    match cmd {
        ServersCommand::Check(args) => check(args),
        ServersCommand::DropTables(args) => drop_tables(args),
    }
}

/// `--server KEY`: a registered database's key.
fn database_key(text: &str) -> std::result::Result<String, String> {
    match crate::backend::database(text) {
        Some(_) => Ok(text.to_string()),
        None => Err(format!("expected one of {}", database_keys().join(", "))),
    }
}

fn database_keys() -> Vec<&'static str> {
    databases().iter().map(|d| d.kind.key()).collect()
}

/// `--mariadb URL / --postgres URL / ...`, for messages.
fn url_flags() -> String {
    databases()
        .iter()
        .map(|d| format!("{} URL", d.kind.flag()))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn drop_tables(args: DropArgs) -> Result<()> {
    let opts = args.servers.apply(BackendOptions::default())?;
    let mut done = 0;
    for db in databases() {
        let wanted = args.server.as_deref().is_none_or(|w| w == db.kind.key());
        if wanted && opts.url(db.kind).is_ok() {
            crate::backend::drop_tables(db, &args.dataset, &opts)?;
            outln!(
                "{}: dropped the tables of '{}'",
                db.kind.key(),
                args.dataset
            );
            done += 1;
        }
    }
    if done == 0 {
        return Err(Error::Config(format!(
            "no server configured: pass {} (see `annbench servers check`)",
            url_flags()
        )));
    }
    Ok(())
}

fn check(args: CheckArgs) -> Result<()> {
    let opts = args.servers.apply(BackendOptions::default())?;
    let outcomes = check_all(&opts);
    if args.json || args.format == "json" {
        let text = serde_json::to_string_pretty(&outcomes)
            .map_err(|e| Error::Results(format!("cannot write JSON: {e}")))?;
        outln!("{text}");
    } else {
        for (i, outcome) in outcomes.iter().enumerate() {
            if i > 0 {
                outln!();
            }
            print_outcome(outcome);
        }
    }
    let checked: Vec<&ServerCheck> = outcomes
        .iter()
        .filter_map(|o| match o {
            CheckOutcome::Checked(c) => Some(c),
            CheckOutcome::NotConfigured { .. } | CheckOutcome::Stopped { .. } => None,
        })
        .collect();
    let unusable: Vec<&str> = checked
        .iter()
        .filter(|c| !c.usable())
        .map(|c| c.server)
        .collect();
    if checked.is_empty() {
        let vars: Vec<&str> = databases().iter().map(|d| d.kind.decl().url_var).collect();
        return Err(Error::Config(format!(
            "no server configured: pass {}, set {}, or run scripts/databases.sh up",
            url_flags(),
            vars.join(" / ")
        )));
    }
    if !unusable.is_empty() {
        return Err(Error::Server(format!(
            "unusable for benchmarking: {} (see above)",
            unusable.join(", ")
        )));
    }
    Ok(())
}

fn print_outcome(outcome: &CheckOutcome) {
    let c = match outcome {
        CheckOutcome::NotConfigured { server, hint } => {
            outln!("{server}: not configured ({hint})");
            return;
        }
        CheckOutcome::Stopped {
            server,
            instance,
            url,
            hint,
        } => {
            outln!("{server} '{instance}' {url} (from servers.env): {hint}");
            return;
        }
        CheckOutcome::Checked(c) => c,
    };
    match &c.instance {
        Some(name) => outln!("{} '{name}' {} (from {})", c.server, c.url, c.source),
        None => outln!("{} {} (from {})", c.server, c.url, c.source),
    }
    let row = |k: &str, v: &str| outln!("  {k:<34} {v}");
    let r = &c.report;
    if let Some(v) = &r.version {
        row("version", v);
    }
    if let Some(v) = &r.vector_support {
        row("vector support", v);
    }
    for (k, v) in &r.settings {
        row(k, v);
    }
    for (k, v) in &r.cost_sources {
        row("server cost", &format!("{k}: {v}"));
    }
    for w in &r.warnings {
        outln!("  warning: {w}");
    }
    match &c.error {
        None if r.warnings.is_empty() => outln!("  status: usable"),
        None => outln!("  status: usable, with {} warning(s)", r.warnings.len()),
        Some(e) => outln!("  status: UNUSABLE: {e}"),
    }
}
