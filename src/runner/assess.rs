//! From a point's passes to its figures, and whether to measure more. Pure functions over
//! [`Pass`] records, so the rules are tested on synthetic passes.
//!
//! - A pass is *stalled* when its QPS is below a third of the median of the point's other
//!   passes, or one of its queries took at least a second and 50 times the pass's median
//!   latency. A pass under heavy interference or stalled is *disturbed*.
//! - The figures use the undisturbed passes when there are at least `--runs` of them in each
//!   build, else every pass (and the point is flagged).
//! - The figure is the median QPS of those passes with its order-statistic interval; with
//!   several builds, the median of the builds' medians with an interval that spans every
//!   build's interval and the spread of their medians (build variance folded in).
//! - More passes are measured while the point is flagged or its interval is wider than
//!   `--target-ci`, until the point's timed passes on the build have lasted `--max-time`.

use crate::metrics::LatencySummary;
use crate::metrics::interval::{Interval, LEVEL, cv, median, median_interval};
use crate::results::{Flag, Pass};
use std::time::Duration;

/// An interval wider than this share of the median flags the point (`spread`).
pub const SPREAD_LIMIT: f64 = 0.10;
/// A pass slower than the median of the others divided by this is stalled.
pub const STALL_FACTOR: f64 = 3.0;
/// A query at least this slow (seconds) and [`STALL_QUERY_FACTOR`] x the pass's median
/// latency stalls its pass.
pub const STALL_QUERY_SECONDS: f64 = 1.0;
pub const STALL_QUERY_FACTOR: f64 = 50.0;
/// Passes per point at most (records and buffers stay bounded).
pub const MAX_PASSES: usize = 1000;

/// When to stop measuring a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// Passes per build at least (`--runs`).
    pub runs: usize,
    /// Interval half-width target as a share of the median (`--target-ci`).
    pub target_ci: Option<f64>,
    /// Time of a point's timed passes (per build) beyond which no extra pass starts
    /// (`--max-time`).
    pub max_time: Duration,
}

/// The figures of a point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figures {
    pub qps: f64,
    pub interval: Option<Interval>,
    pub best: f64,
    pub cv: Option<f64>,
    /// Passes behind the figure.
    pub used: usize,
    pub flags: Vec<Flag>,
    /// Latency of the median pass in use.
    pub latency: Option<LatencySummary>,
    /// Median QPS of each build's passes in use.
    pub build_medians: Vec<f64>,
}

/// Set `stalled` on every pass (relative to the point's other passes). O(n log n): the
/// median of the others is read from the sorted passes with the pass's own slot skipped.
pub fn mark_stalls(passes: &mut [Pass]) {
    let mut order: Vec<(f64, usize)> = passes.iter().map(Pass::qps).zip(0..).collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = order.len();
    for (rank, &(qps, i)) in order.iter().enumerate() {
        let others = n - 1;
        let at = |t: usize| order[if t < rank { t } else { t + 1 }].0;
        let median_of_others = (others > 0).then(|| (at((others - 1) / 2) + at(others / 2)) / 2.0);
        let slow_pass = median_of_others.is_some_and(|m| qps * STALL_FACTOR < m);
        let slow_query = passes[i]
            .latency
            .is_some_and(|l| l.max >= STALL_QUERY_SECONDS && l.max >= STALL_QUERY_FACTOR * l.p50);
        passes[i].stalled = slow_pass || slow_query;
    }
}

/// Set `used`: per build, the undisturbed passes when at least `runs` of them, else all.
pub fn choose(passes: &mut [Pass], runs: usize) {
    for b in builds(passes) {
        let clean = passes
            .iter()
            .filter(|p| p.build == b && !p.disturbed())
            .count();
        for p in passes.iter_mut().filter(|p| p.build == b) {
            p.used = clean < runs.max(1) || !p.disturbed();
        }
    }
}

/// The distinct build numbers, ascending.
fn builds(passes: &[Pass]) -> Vec<usize> {
    let mut b: Vec<usize> = passes.iter().map(|p| p.build).collect();
    b.sort_unstable();
    b.dedup();
    b
}

/// The figures of the passes marked `used`.
pub fn figures(passes: &[Pass]) -> Figures {
    let used: Vec<&Pass> = passes.iter().filter(|p| p.used).collect();
    let qps: Vec<f64> = used.iter().map(|p| p.qps()).collect();
    let per_build: Vec<(f64, Option<Interval>)> = builds(passes)
        .into_iter()
        .filter_map(|b| {
            let q: Vec<f64> = used
                .iter()
                .filter(|p| p.build == b)
                .map(|p| p.qps())
                .collect();
            Some((median(&q)?, median_interval(&q, LEVEL)))
        })
        .collect();
    let build_medians: Vec<f64> = per_build.iter().map(|b| b.0).collect();
    let (figure, interval) = if per_build.len() > 1 {
        (median(&build_medians).unwrap_or(0.0), envelope(&per_build))
    } else {
        (median(&qps).unwrap_or(0.0), median_interval(&qps, LEVEL))
    };
    let mut flags = Vec::new();
    if used.iter().any(|p| p.interference.is_some_and(|i| i.heavy)) {
        flags.push(Flag::Interference);
    }
    if interval.is_some_and(|i| figure > 0.0 && i.relative_width(figure) > SPREAD_LIMIT) {
        flags.push(Flag::Spread);
    }
    if used.iter().any(|p| p.stalled) {
        flags.push(Flag::Stalled);
    }
    // The median pass: the lower middle one by QPS.
    let mut by_qps = used.clone();
    by_qps.sort_by(|a, b| a.qps().total_cmp(&b.qps()));
    let latency = by_qps
        .get(by_qps.len().saturating_sub(1) / 2)
        .and_then(|p| p.latency);
    Figures {
        qps: figure,
        interval,
        best: qps.iter().copied().fold(0.0, f64::max),
        cv: cv(&qps),
        used: used.len(),
        flags,
        latency,
        build_medians,
    }
}

/// Several builds: every build's interval (or median) and the interval of the builds' medians
/// together; its level is that of the medians' interval (a lower bound).
fn envelope(per_build: &[(f64, Option<Interval>)]) -> Option<Interval> {
    let medians: Vec<f64> = per_build.iter().map(|b| b.0).collect();
    let of_medians = median_interval(&medians, LEVEL)?;
    let low = per_build
        .iter()
        .map(|(m, i)| i.map_or(*m, |i| i.low))
        .fold(of_medians.low, f64::min);
    let high = per_build
        .iter()
        .map(|(m, i)| i.map_or(*m, |i| i.high))
        .fold(of_medians.high, f64::max);
    Some(Interval {
        low,
        high,
        level: of_medians.level,
    })
}

/// Whether build `build` of a point needs another pass, given the seconds its timed passes
/// on that build have lasted.
pub fn needs_more(passes: &[Pass], build: usize, policy: &Policy, seconds: f64) -> bool {
    let mine = passes.iter().filter(|p| p.build == build).count();
    if mine < policy.runs.max(1) {
        return true;
    }
    if seconds >= policy.max_time.as_secs_f64() || passes.len() >= MAX_PASSES {
        return false;
    }
    let f = figures(passes);
    let wide = policy.target_ci.is_some_and(|t| match f.interval {
        Some(i) => f.qps <= 0.0 || (f.qps - i.low).max(i.high - f.qps) > t * f.qps,
        None => true,
    });
    wide || !f.flags.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Interference;

    fn pass(qps: f64) -> Pass {
        Pass {
            wall_seconds: 1.0,
            queries: qps as usize,
            ..Pass::default()
        }
    }

    fn heavy(mut p: Pass) -> Pass {
        p.interference = Some(Interference {
            heavy: true,
            ..Interference::default()
        });
        p
    }

    const POLICY: Policy = Policy {
        runs: 6,
        target_ci: None,
        max_time: Duration::from_secs(20),
    };

    #[test]
    fn median_interval_and_flags_of_clean_passes() {
        let mut ps: Vec<Pass> = [1000.0, 1010.0, 990.0, 1020.0, 980.0, 1005.0]
            .iter()
            .map(|&q| pass(q))
            .collect();
        mark_stalls(&mut ps);
        choose(&mut ps, 6);
        let f = figures(&ps);
        assert_eq!((f.qps, f.used, f.best), (1002.5, 6, 1020.0));
        let i = f.interval.unwrap();
        assert_eq!((i.low, i.high), (980.0, 1020.0));
        assert!(f.flags.is_empty(), "{:?}", f.flags);
        assert!(!needs_more(&ps, 0, &POLICY, 6.5));
    }

    #[test]
    fn disturbed_passes_are_replaced_then_left_out() {
        let mut ps: Vec<Pass> = [1000.0, 1010.0, 990.0, 1020.0, 980.0, 1005.0]
            .iter()
            .map(|&q| pass(q))
            .collect();
        ps[1] = heavy(pass(600.0));
        ps[4] = pass(200.0); // stalled: 5x slower than the others
        mark_stalls(&mut ps);
        assert!(ps[4].stalled && !ps[0].stalled);
        choose(&mut ps, 6);
        // 4 clean passes < 6: all are used, the point is flagged and measured again.
        let f = figures(&ps);
        assert_eq!(f.used, 6);
        assert_eq!(
            f.flags,
            vec![Flag::Interference, Flag::Spread, Flag::Stalled]
        );
        assert!(needs_more(&ps, 0, &POLICY, 6.5));
        // ...but not past --max-time.
        assert!(!needs_more(&ps, 0, &POLICY, 20.0));
        ps.push(pass(1001.0));
        ps.push(pass(999.0));
        mark_stalls(&mut ps);
        choose(&mut ps, 6);
        let f = figures(&ps);
        assert_eq!((f.used, f.qps), (6, 1000.5));
        assert!(f.flags.is_empty());
        assert!(!ps[1].used && !ps[4].used);
    }

    #[test]
    fn a_single_slow_query_stalls_its_pass() {
        let mut ps = vec![pass(1000.0), pass(1000.0)];
        ps[1].latency = Some(LatencySummary {
            p50: 0.001,
            max: 30.0,
            ..LatencySummary::default()
        });
        mark_stalls(&mut ps);
        assert!(ps[1].stalled && !ps[0].stalled);
    }

    #[test]
    fn target_ci_asks_for_passes_until_narrow_enough() {
        let policy = Policy {
            runs: 3,
            target_ci: Some(0.02),
            ..POLICY
        };
        // 3 passes: [min, max] = +-5%: too wide for +-2%.
        let mut ps: Vec<Pass> = [950.0, 1000.0, 1050.0].iter().map(|&q| pass(q)).collect();
        choose(&mut ps, 3);
        assert!(needs_more(&ps, 0, &policy, 3.0));
        for q in [1001.0, 999.0, 1002.0, 998.0, 1000.5, 999.5, 1000.2] {
            ps.push(pass(q));
        }
        choose(&mut ps, 3);
        // 10 passes: [x(2), x(9)] = [998, 1002]: within 2%.
        assert!(!needs_more(&ps, 0, &policy, 10.0));
    }

    #[test]
    fn builds_fold_their_spread_into_the_interval() {
        let mut ps = Vec::new();
        for (b, base) in [(0usize, 1000.0), (1, 1100.0), (2, 1050.0)] {
            for d in [-5.0, 0.0, 5.0] {
                let mut p = pass(base + d);
                p.build = b;
                ps.push(p);
            }
        }
        choose(&mut ps, 3);
        let f = figures(&ps);
        assert_eq!(f.build_medians, vec![1000.0, 1100.0, 1050.0]);
        assert_eq!(f.qps, 1050.0);
        let i = f.interval.unwrap();
        assert_eq!((i.low, i.high), (995.0, 1105.0));
        // The builds differ by 10%: the interval is wide, so the last build measures more;
        // a fourth build would first need passes of its own.
        assert_eq!(f.flags, vec![Flag::Spread]);
        let policy = Policy { runs: 3, ..POLICY };
        assert!(needs_more(&ps, 2, &policy, 3.0));
        assert!(!needs_more(&ps, 2, &policy, 20.0));
        assert!(needs_more(&ps, 3, &policy, 20.0));
    }
}
