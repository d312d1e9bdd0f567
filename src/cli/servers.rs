//! `annbench servers ...`

use super::out::outln;
use crate::connect::ServerKind;
use crate::servers::{CheckOutcome, ServerCheck, check_all};
use crate::{Error, Result};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;

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
    /// Only on this server: mariadb or postgres (default: every configured one).
    #[arg(long, value_parser = ["mariadb", "postgres"])]
    server: Option<String>,
    /// MariaDB URL (default as for `servers check`).
    #[arg(long, value_name = "URL")]
    mariadb: Option<String>,
    /// PostgreSQL URL (default as for `servers check`).
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// MariaDB URL, e.g. mysql://user:password@127.0.0.1:3306/annbench. Default:
    /// $ANNBENCH_MARIADB_URL, then $MARIADB_CONN_ARGS + $MARIADB_DB_NAME, then the server
    /// scripts/databases.sh started.
    #[arg(long, value_name = "URL")]
    mariadb: Option<String>,
    /// PostgreSQL URL, e.g. postgres://user:password@127.0.0.1:5432/annbench. Default:
    /// $ANNBENCH_POSTGRES_URL, then $POSTGRES_CONN_ARGS + $POSTGRES_DB_NAME, then the server
    /// scripts/databases.sh started.
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
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

fn drop_tables(args: DropArgs) -> Result<()> {
    use crate::backend::pgvector::{Hnsw, Variant};
    use crate::backend::{BackendOptions, mariadb::MariaDb, postgres::PgBackend};
    let opts = BackendOptions::default().with_urls([
        (ServerKind::MariaDb, args.mariadb),
        (ServerKind::Postgres, args.postgres),
    ]);
    let wanted = |s: &str| args.server.as_deref().is_none_or(|w| w == s);
    let configured = |kind: ServerKind| opts.url(kind).is_ok();
    let mut done = 0;
    if wanted("mariadb") && configured(ServerKind::MariaDb) {
        MariaDb::connect(&opts)?.drop_tables(&args.dataset)?;
        outln!("mariadb: dropped the tables of '{}'", args.dataset);
        done += 1;
    }
    if wanted("postgres") && configured(ServerKind::Postgres) {
        // One algorithm per column type: each table is shared by the algorithms storing it.
        for index in [&Hnsw(Variant::Vector), &Hnsw(Variant::HalfvecColumn)] {
            PgBackend::connect(&opts, index)?.drop_table(&args.dataset)?;
        }
        outln!("postgres: dropped the tables of '{}'", args.dataset);
        done += 1;
    }
    if done == 0 {
        return Err(Error::Config(
            "no server configured: pass --mariadb / --postgres URLs (see `annbench servers check`)"
                .into(),
        ));
    }
    Ok(())
}

fn check(args: CheckArgs) -> Result<()> {
    let urls: BTreeMap<ServerKind, String> = [
        (ServerKind::MariaDb, args.mariadb),
        (ServerKind::Postgres, args.postgres),
    ]
    .into_iter()
    .filter_map(|(kind, url)| Some((kind, url?)))
    .collect();
    let outcomes = check_all(&urls);
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
            CheckOutcome::NotConfigured { .. } => None,
        })
        .collect();
    let unusable: Vec<&str> = checked
        .iter()
        .filter(|c| !c.usable())
        .map(|c| c.server)
        .collect();
    if checked.is_empty() {
        return Err(Error::Config(
            "no server configured: pass --mariadb URL / --postgres URL, set \
             ANNBENCH_MARIADB_URL / ANNBENCH_POSTGRES_URL, or run scripts/databases.sh up"
                .into(),
        ));
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
        CheckOutcome::Checked(c) => c,
    };
    outln!("{} {} (from {})", c.server, c.url, c.source);
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
