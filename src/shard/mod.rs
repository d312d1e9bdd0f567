//! Sweeps split over a cluster: `annbench run --shard I/N` runs a deterministic, cost-balanced
//! share of the plan's index builds, so the N shards together cover the plan exactly once.
//!
//! The unit of work is one build point (an index build and every query point measured on it):
//! splitting a build's query points over shards would build the same index several times.
//! Every shard computes the whole plan and the same assignment from it ([`assign`]), with no
//! coordination; a digest of the plan is stored with every point, so `annbench merge` can tell
//! shards of one plan from shards of a plan run with other arguments.

mod assign;
mod cost;
mod env;

pub use assign::{Assignment, Unit, assign};
pub use cost::estimate as estimate_cost;
pub use env::detect;

use crate::config::Grid;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One shard of N: `index` counts from 0, shown as `index + 1` of `count` (`2/3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
    /// Where it came from, e.g. `--shard`, `SLURM_ARRAY_TASK_ID=1, SLURM_ARRAY_TASK_COUNT=3`.
    pub source: String,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// Most shards a plan splits into (a Kubernetes Indexed Job's limit of completions); every
/// shard computes the assignment of all of them.
pub const MAX_SHARDS: usize = 100_000;

/// An error when `count` shards, read from `source`, are more than [`MAX_SHARDS`].
fn check_count(count: usize, source: &str) -> Result<()> {
    if count > MAX_SHARDS {
        return Err(Error::Config(format!(
            "{source}: {count} shards; give 1 to {MAX_SHARDS} shards (a shard that gets no \
             build runs nothing, so more shards than index builds only wastes jobs)"
        )));
    }
    Ok(())
}

impl Shard {
    /// `I/N` with I counted from 1, as `--shard` and `ANNBENCH_SHARD` take it.
    pub fn parse(text: &str, source: &str) -> Result<Shard> {
        let bad = |why: &str| {
            Error::Config(format!(
                "{source} '{text}': {why}; give I/N with 1 <= I <= N, e.g. --shard 2/3 for the \
                 second of three shards"
            ))
        };
        let (i, n) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| bad("expected I/N"))?;
        let i: usize = i.trim().parse().map_err(|_| bad("I is not a number"))?;
        let n: usize = n.trim().parse().map_err(|_| bad("N is not a number"))?;
        if n == 0 {
            return Err(bad("N must be at least 1"));
        }
        if n > MAX_SHARDS {
            return Err(bad(&format!("N must be at most {MAX_SHARDS}")));
        }
        if i == 0 || i > n {
            return Err(bad(&format!(
                "shards are numbered 1 to {n} (Slurm's SLURM_ARRAY_TASK_ID and Kubernetes' \
                 JOB_COMPLETION_INDEX are read without --shard)"
            )));
        }
        Ok(Shard {
            index: i - 1,
            count: n,
            source: source.to_string(),
        })
    }
}

/// What a point records about the shard that measured it (stored in its environment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based shard number.
    pub index: usize,
    pub count: usize,
    /// Digest of the whole plan every shard computed ([`Assignment::digest`]).
    pub plan: String,
    /// Points of the whole plan (all shards), to tell a complete merge from a partial one.
    pub plan_points: usize,
    /// Where the shard number came from (`--shard`, Slurm or Kubernetes variables).
    pub source: String,
}

impl ShardInfo {
    /// `2/3`.
    pub fn shard(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// The plan seen by one shard: its share of the grids and what to record with its points.
#[derive(Debug, Clone)]
pub struct Selection {
    /// This shard's builds, grids without a build left out, in plan order.
    pub grids: Vec<Grid>,
    pub info: ShardInfo,
    pub assignment: Assignment,
}

/// This shard's part of `grids` (the whole plan of a sweep of `dataset` with k = `count`,
/// `label` and these client counts).
pub fn select(
    grids: &[Grid],
    shard: &Shard,
    dataset: &str,
    count: usize,
    label: Option<&str>,
    clients: &[usize],
) -> Selection {
    let assignment = assign(grids, shard.count, dataset, count, label, clients);
    let grids = assignment.grids_of(grids, shard.index);
    Selection {
        info: ShardInfo {
            index: shard.index + 1,
            count: shard.count,
            plan: assignment.digest.clone(),
            plan_points: assignment.total_points(),
            source: shard.source.clone(),
        },
        grids,
        assignment,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_one_based_shards() {
        let s = Shard::parse(" 2/3 ", "--shard").unwrap();
        assert_eq!((s.index, s.count, s.to_string()), (1, 3, "2/3".to_string()));
        assert_eq!(Shard::parse("1/1", "--shard").unwrap().index, 0);
        for bad in ["0/3", "4/3", "1/0", "3", "a/3", "1/b", "-1/3", ""] {
            let e = Shard::parse(bad, "--shard").unwrap_err().to_string();
            assert!(e.contains("--shard") && e.contains("I/N"), "{bad}: {e}");
        }
        let e = Shard::parse("0/3", "--shard").unwrap_err().to_string();
        assert!(e.contains("numbered 1 to 3"), "{e}");
    }
}
