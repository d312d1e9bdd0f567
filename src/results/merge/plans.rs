//! Whether a merged store holds every point of each sharded plan in it: the points of a
//! sharded sweep record their plan's digest, shard and point count.

use super::scan::measured;
use crate::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The points of one sharded plan found in a store.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanStatus {
    pub plan: String,
    /// `<dataset>/<count>` directory of its points.
    pub at: String,
    /// Shards the plan was split into, and those with at least one point here (1-based).
    pub shards: usize,
    pub seen: BTreeSet<usize>,
    pub points: usize,
    pub plan_points: usize,
}

impl PlanStatus {
    pub fn complete(&self) -> bool {
        self.points == self.plan_points && self.seen.len() == self.shards
    }

    /// `plan 3fa9c2d1e0b7 (sift/10): 3 of 3 shard(s), 36 of 36 point(s)`, and what is missing.
    pub fn describe(&self) -> String {
        let missing: Vec<String> = (1..=self.shards)
            .filter(|s| !self.seen.contains(s))
            .map(|s| format!("{s}/{}", self.shards))
            .collect();
        let mut text = format!(
            "plan {} ({}): {} of {} shard(s), {} of {} point(s)",
            self.plan,
            self.at,
            self.seen.len(),
            self.shards,
            self.points,
            self.plan_points
        );
        if !missing.is_empty() {
            text.push_str(&format!("; none from shard {}", missing.join(", ")));
        } else if self.points < self.plan_points {
            text.push_str("; some shards have not finished");
        } else if self.points > self.plan_points {
            text.push_str("; more than the plan: points measured twice are kept by host");
        }
        text
    }
}

/// Group the sharded points among `files` (`(path inside the store, file)`) by plan.
pub fn plans(files: &[(PathBuf, PathBuf)]) -> Result<Vec<PlanStatus>> {
    let mut by_plan: BTreeMap<(String, String), PlanStatus> = BTreeMap::new();
    for (rel, path) in files {
        let Some(info) = measured(path)?.and_then(|m| m.shard) else {
            continue;
        };
        let at: Vec<String> = rel
            .components()
            .take(2)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let at = at.join("/");
        let status = by_plan
            .entry((info.plan.clone(), at.clone()))
            .or_insert_with(|| PlanStatus {
                plan: info.plan.clone(),
                at,
                shards: info.count,
                seen: BTreeSet::new(),
                points: 0,
                plan_points: info.plan_points,
            });
        status.seen.insert(info.index);
        status.points += 1;
    }
    Ok(by_plan.into_values().collect())
}

/// Every point file of `store` as `(path inside the store, file)`.
pub fn store_files(store: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    if !store.is_dir() {
        return Ok(Vec::new());
    }
    Ok(super::scan::point_files(store)?
        .into_iter()
        .map(|e| (e.rel, e.path))
        .collect())
}
