//! `annbench servers ...`

use super::out::outln;
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
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: ServersCommand) -> Result<()> {
    match cmd {
        ServersCommand::Check(args) => check(args),
        ServersCommand::DropTables(args) => drop_tables(args),
    }
}

fn drop_tables(args: DropArgs) -> Result<()> {
    use crate::backend::{BackendOptions, mariadb::MariaDb, pgvector};
    let opts = BackendOptions {
        mariadb_url: args.mariadb,
        postgres_url: args.postgres,
        ..BackendOptions::default()
    };
    let wanted = |s: &str| args.server.as_deref().is_none_or(|w| w == s);
    let configured = |url: &Option<String>, mariadb: bool| {
        url.is_some()
            || if mariadb {
                crate::connect::mariadb_url(None).is_ok()
            } else {
                crate::connect::postgres_url(None).is_ok()
            }
    };
    let mut done = 0;
    if wanted("mariadb") && configured(&opts.mariadb_url, true) {
        MariaDb::connect(&opts)?.drop_tables(&args.dataset)?;
        println!("mariadb: dropped the tables of '{}'", args.dataset);
        done += 1;
    }
    if wanted("postgres") && configured(&opts.postgres_url, false) {
        for variant in [pgvector::Variant::Vector, pgvector::Variant::HalfvecColumn] {
            pgvector::PgVector::connect(&opts, variant)?.drop_table(&args.dataset)?;
        }
        println!("postgres: dropped the tables of '{}'", args.dataset);
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
    let outcomes = check_all(args.mariadb.as_deref(), args.postgres.as_deref());
    if args.json {
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
    if let Some(v) = &c.version {
        row("version", v);
    }
    if let Some(v) = &c.vector_support {
        row("vector support", v);
    }
    for (k, v) in &c.settings {
        row(k, v);
    }
    for w in &c.warnings {
        outln!("  warning: {w}");
    }
    match &c.error {
        None if c.warnings.is_empty() => outln!("  status: usable"),
        None => outln!("  status: usable, with {} warning(s)", c.warnings.len()),
        Some(e) => outln!("  status: UNUSABLE: {e}"),
    }
}
