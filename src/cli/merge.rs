//! `annbench merge DIR...`: combine result stores into one, then say whether each sharded plan
//! in it is complete.

use super::out::{errln, outln};
use crate::Result;
use crate::results::merge::{self, OnConflict};
use clap::Args;
use std::path::PathBuf;

/// Combine result stores (e.g. the shards of a sweep) into one.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result directories to merge, e.g. the --results of each shard.
    #[arg(required = true, value_name = "DIR")]
    pub sources: Vec<PathBuf>,
    /// Store to merge into (created when missing; may be one of the DIRs).
    #[arg(
        long = "results",
        env = "ANNBENCH_RESULTS",
        default_value = "results",
        value_name = "DIR"
    )]
    pub results: PathBuf,
    /// Two different measurements of one point: refuse (nothing is merged), by-host (keep
    /// both, labelled <label>@<host>) or newest (keep the one that finished last).
    #[arg(long, default_value = "refuse", value_name = "RULE", value_parser = parse_rule)]
    pub on_conflict: OnConflict,
    /// Fail unless every sharded sweep in the merged store has all its points.
    #[arg(long)]
    pub complete: bool,
    /// Say what would be copied; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn parse_rule(text: &str) -> std::result::Result<OnConflict, String> {
    text.parse().map_err(|e: crate::Error| e.to_string())
}

pub fn run(args: MergeArgs) -> Result<()> {
    let plan = merge::plan(&args.sources, &args.results, args.on_conflict)?;
    for dir in &plan.empty {
        errln!("warning: {} holds no result files", dir.display());
    }
    let relabelled = plan.copies.iter().filter(|c| c.label.is_some()).count();
    let replaced = plan.copies.iter().filter(|c| c.replaces).count();
    let files = if args.dry_run {
        merge::files_after(&plan, &args.results)?
    } else {
        merge::apply(&plan, &args.results)?;
        merge::store_files(&args.results)?
    };
    let mut parts = vec![format!(
        "{} point file(s) {} {}",
        plan.copies.len(),
        if args.dry_run {
            "would be copied into"
        } else {
            "copied into"
        },
        args.results.display()
    )];
    if relabelled > 0 {
        parts.push(format!("{relabelled} of them kept by host (label@host)"));
    }
    if replaced > 0 {
        parts.push(format!("{replaced} replacing older measurements"));
    }
    parts.push(format!("{} already there", plan.unchanged));
    if plan.duplicates > 0 {
        parts.push(format!("{} identical copies merged once", plan.duplicates));
    }
    if plan.superseded > 0 {
        parts.push(format!("{} older measurement(s) left out", plan.superseded));
    }
    outln!("{}", parts.join(", "));
    for c in plan.copies.iter().filter(|c| c.label.is_some()) {
        outln!("  {} -> {}", c.from.display(), c.to.display());
    }
    let plans = merge::plans(&files)?;
    for p in &plans {
        outln!("{}", p.describe());
    }
    let incomplete = plans.iter().filter(|p| !p.complete()).count();
    if args.complete && incomplete > 0 {
        return Err(crate::Error::Results(format!(
            "{incomplete} sharded sweep(s) in {} are incomplete (listed above): rerun the \
             missing or unfinished shards with the same arguments (they resume from their \
             results directory), then merge again",
            args.results.display()
        )));
    }
    Ok(())
}
