//! The assignment of build points to shards: longest estimated build first, each to the shard
//! with the least estimated work so far (ties to the lowest shard). A pure function of the
//! plan, so every shard computes the same one on its own.

use super::cost;
use crate::config::Grid;
use crate::params::Params;
use sha2::{Digest, Sha256};
use std::cmp::Ordering;

/// One build point of the plan and the shard that owns it.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Position of its grid in the plan, and of the build in the grid.
    pub grid: usize,
    pub build: usize,
    pub algorithm: String,
    pub build_args: Params,
    /// Relative build cost ([`cost::estimate`]); the median of the estimated builds when
    /// `estimated` is false.
    pub cost: f64,
    pub estimated: bool,
    /// Query points x client counts measured on this build.
    pub points: usize,
    /// Owning shard, from 0.
    pub shard: usize,
}

/// Every build point of a plan with its shard, in plan order.
#[derive(Debug, Clone)]
pub struct Assignment {
    pub shards: usize,
    pub units: Vec<Unit>,
    /// 12 hex digits naming the plan and its split (what each shard computed; stored with
    /// every point so merges can tell plans apart).
    pub digest: String,
}

/// What one shard owns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Share {
    pub builds: usize,
    pub points: usize,
    pub cost: f64,
}

impl Assignment {
    /// Points of the whole plan.
    pub fn total_points(&self) -> usize {
        self.units.iter().map(|u| u.points).sum()
    }

    /// Estimated cost of the whole plan.
    pub fn total_cost(&self) -> f64 {
        self.units.iter().map(|u| u.cost).sum()
    }

    /// Builds, points and cost owned by `shard` (from 0).
    pub fn share(&self, shard: usize) -> Share {
        self.units
            .iter()
            .filter(|u| u.shard == shard)
            .fold(Share::default(), |s, u| Share {
                builds: s.builds + 1,
                points: s.points + u.points,
                cost: s.cost + u.cost,
            })
    }

    /// The grids restricted to `shard`'s builds; grids it owns nothing of are left out.
    pub fn grids_of(&self, grids: &[Grid], shard: usize) -> Vec<Grid> {
        grids
            .iter()
            .enumerate()
            .filter_map(|(g, grid)| {
                let builds: Vec<_> = self
                    .units
                    .iter()
                    .filter(|u| u.grid == g && u.shard == shard)
                    .map(|u| grid.builds[u.build].clone())
                    .collect();
                (!builds.is_empty()).then(|| Grid {
                    builds,
                    ..grid.clone()
                })
            })
            .collect()
    }
}

/// Split the plan (`grids`, for `dataset` at k = `count` with `label` and `clients`) over
/// `shards` shards.
pub fn assign(
    grids: &[Grid],
    shards: usize,
    dataset: &str,
    count: usize,
    label: Option<&str>,
    clients: &[usize],
) -> Assignment {
    let shards = shards.max(1);
    let mut units: Vec<Unit> = Vec::new();
    for (g, grid) in grids.iter().enumerate() {
        for (b, build) in grid.builds.iter().enumerate() {
            let estimate = cost::estimate(&grid.algorithm, &build.build_args);
            units.push(Unit {
                grid: g,
                build: b,
                algorithm: grid.algorithm.clone(),
                build_args: build.build_args.clone(),
                cost: estimate.unwrap_or(f64::NAN),
                estimated: estimate.is_some(),
                points: build.query_args.len() * clients.len(),
                shard: 0,
            });
        }
    }
    // Builds without a model weigh as a typical build of this plan.
    let mut known: Vec<f64> = units
        .iter()
        .filter(|u| u.estimated)
        .map(|u| u.cost)
        .collect();
    known.sort_by(f64::total_cmp);
    let typical = known.get(known.len() / 2).copied().unwrap_or(1.0);
    for u in units.iter_mut().filter(|u| !u.estimated) {
        u.cost = typical;
    }
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| {
        units[b]
            .cost
            .total_cmp(&units[a].cost)
            .then_with(|| a.cmp(&b))
    });
    let mut load = vec![0.0f64; shards];
    for i in order {
        let least = (0..shards)
            .min_by(|&a, &b| {
                load[a]
                    .partial_cmp(&load[b])
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| a.cmp(&b))
            })
            .unwrap_or(0);
        load[least] += units[i].cost;
        units[i].shard = least;
    }
    let digest = digest(grids, shards, dataset, count, label, clients, &units);
    Assignment {
        shards,
        units,
        digest,
    }
}

/// SHA-256 of the plan's identity and split, cut to 12 hex digits.
fn digest(
    grids: &[Grid],
    shards: usize,
    dataset: &str,
    count: usize,
    label: Option<&str>,
    clients: &[usize],
    units: &[Unit],
) -> String {
    let mut h = Sha256::new();
    let mut line = |text: String| {
        h.update(text.as_bytes());
        h.update(b"\n");
    };
    line("annbench shard plan v1".into());
    line(format!(
        "{dataset}\n{count}\n{label:?}\n{clients:?}\n{shards}"
    ));
    for u in units {
        let queries = &grids[u.grid].builds[u.build].query_args;
        line(format!(
            "{}\t{}\t{}\t{}",
            u.algorithm,
            serde_json::Value::Object(u.build_args.clone()),
            serde_json::to_string(queries).unwrap_or_default(),
            u.shard
        ));
    }
    let bytes = h.finalize();
    bytes.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Overrides, load_grid};

    fn grid(algorithm: &str, build: &[&str], query: Option<&str>) -> Grid {
        let over = Overrides {
            build: build
                .iter()
                .map(|b| crate::config::parse_override(b).unwrap())
                .collect(),
            query: query
                .map(|q| crate::config::parse_override(q).unwrap())
                .into_iter()
                .collect(),
        };
        load_grid(algorithm, None, &over, None).unwrap()
    }

    fn plan() -> Vec<Grid> {
        vec![
            grid("mariadb", &["M=4,8,16,32"], Some("ef_search=10,20")),
            grid(
                "pgvector",
                &["M=8,16,32", "ef_construction=64,128,256"],
                Some("ef_search=10,20,40"),
            ),
            grid("exact", &[], None),
        ]
    }

    fn split(n: usize) -> Assignment {
        assign(&plan(), n, "d", 10, Some("x"), &[1, 2])
    }

    /// (algorithm, build args) of every build a shard owns, over all shards.
    fn owned(a: &Assignment, grids: &[Grid]) -> Vec<(String, Params)> {
        let mut all = Vec::new();
        for s in 0..a.shards {
            for g in a.grids_of(grids, s) {
                all.extend(
                    g.builds
                        .iter()
                        .map(|b| (g.algorithm.clone(), b.build_args.clone())),
                );
            }
        }
        all
    }

    #[test]
    fn shards_cover_the_plan_exactly_once() {
        let grids = plan();
        let mut whole: Vec<String> = owned(&split(1), &grids)
            .iter()
            .map(|u| format!("{u:?}"))
            .collect();
        assert_eq!(whole.len(), 4 + 9 + 1);
        whole.sort();
        for n in 1..=20 {
            let a = split(n);
            let mut union: Vec<String> =
                owned(&a, &grids).iter().map(|u| format!("{u:?}")).collect();
            union.sort();
            assert_eq!(union, whole, "{n} shards");
            let points: usize = (0..n).map(|s| a.share(s).points).sum();
            assert_eq!(points, a.total_points());
            assert_eq!(a.total_points(), (4 * 2 + 9 * 3 + 1) * 2);
        }
    }

    #[test]
    fn the_split_is_deterministic_and_balanced_by_cost() {
        let a = split(3);
        let b = split(3);
        assert_eq!(a.digest, b.digest);
        let owners = |a: &Assignment| a.units.iter().map(|u| u.shard).collect::<Vec<_>>();
        assert_eq!(owners(&a), owners(&b));
        // Longest first to the least loaded: no shard exceeds the ideal by more than the
        // largest build.
        let largest = a.units.iter().map(|u| u.cost).fold(0.0, f64::max);
        let ideal = a.total_cost() / 3.0;
        for s in 0..3 {
            let share = a.share(s);
            assert!(
                share.builds > 0 && share.cost <= ideal + largest,
                "{share:?}"
            );
        }
        // The costliest build (MariaDB M=32) goes first, to shard 1.
        let top = a
            .units
            .iter()
            .max_by(|x, y| x.cost.total_cmp(&y.cost))
            .unwrap();
        assert_eq!(
            (
                top.algorithm.as_str(),
                crate::params::describe(&top.build_args),
                top.shard
            ),
            ("mariadb", "m=32".to_string(), 0)
        );
        // exact has no estimate and weighs as the median build.
        let exact = a.units.iter().find(|u| u.algorithm == "exact").unwrap();
        assert!(!exact.estimated && exact.cost > 0.0);
    }

    #[test]
    fn equal_costs_go_round_robin_and_extra_shards_stay_empty() {
        let grids = vec![grid("exact", &[], None)];
        let a = assign(&grids, 3, "d", 10, None, &[1]);
        assert_eq!(a.share(0).builds, 1);
        assert!(a.grids_of(&grids, 1).is_empty() && a.grids_of(&grids, 2).is_empty());
        let g = vec![
            grid("mariadb", &["M=8"], Some("ef_search=10")),
            grid("mariadb", &["M=8"], Some("ef_search=20")),
        ];
        let owners: Vec<usize> = assign(&g, 2, "d", 10, None, &[1])
            .units
            .iter()
            .map(|u| u.shard)
            .collect();
        assert_eq!(owners, [0, 1]);
    }

    #[test]
    fn the_digest_names_the_plan_and_the_split() {
        let base = split(3).digest;
        assert_eq!(base.len(), 12);
        assert_ne!(base, split(4).digest);
        assert_ne!(
            base,
            assign(&plan(), 3, "other", 10, Some("x"), &[1, 2]).digest
        );
        assert_ne!(base, assign(&plan(), 3, "d", 10, Some("y"), &[1, 2]).digest);
        assert_ne!(base, assign(&plan(), 3, "d", 10, Some("x"), &[1]).digest);
        assert_ne!(
            base,
            assign(&plan()[..2], 3, "d", 10, Some("x"), &[1, 2]).digest
        );
    }
}
