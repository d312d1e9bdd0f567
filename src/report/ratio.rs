//! One pair of points compared: the measure compared, each side's figure and samples, the
//! ratio me / base with its 95% interval, and the verdict (see [`super::compare`]).

use super::names::point_name;
use super::stats::{Stat, pass_groups};
use crate::metrics::interval::{Interval, LEVEL, median_interval, ratio_interval};
use crate::results::{Flag, PassServerCost, PointResult, Storage};

/// What is compared. Higher is better for QPS; server CPU per query is a cost (lower is
/// better) and names its verdicts accordingly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Measure {
    #[default]
    Qps,
    /// Server CPU seconds per query (local servers), the median of the passes in use.
    ServerCpu,
    /// KiB the server processes read from storage per query (local servers), the median of
    /// the passes in use.
    ServerReads,
}

impl Measure {
    /// Column prefix and display name.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Qps => "qps",
            Measure::ServerCpu => "server_cpu",
            Measure::ServerReads => "server_read_kib",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Measure::Qps => "QPS",
            Measure::ServerCpu => "server CPU per query",
            Measure::ServerReads => "server KiB read per query",
        }
    }

    /// Words for a ratio beyond the noise: (above 1, below 1).
    pub fn verdict_words(self) -> (&'static str, &'static str) {
        match self {
            Measure::Qps => ("faster", "slower"),
            Measure::ServerCpu => ("costlier", "cheaper"),
            Measure::ServerReads => ("more", "fewer"),
        }
    }

    /// The point's figure and interval.
    fn figure(self, p: &PointResult) -> (f64, Option<Interval>) {
        match self {
            Measure::Qps => (p.metrics.qps, p.metrics.qps_interval()),
            Measure::ServerCpu | Measure::ServerReads => {
                let server = p.metrics.server.as_ref();
                let value = match self {
                    Measure::ServerCpu => server.and_then(|s| s.cpu_per_query),
                    _ => server.and_then(|s| s.server_read_kib_per_query),
                };
                let samples = self.samples(p);
                let interval = match samples.as_slice() {
                    [one] => median_interval(one, LEVEL),
                    _ => None,
                };
                (value.unwrap_or(f64::NAN), interval)
            }
        }
    }

    /// The point's samples per build (passes in use).
    fn samples(self, p: &PointResult) -> Vec<Vec<f64>> {
        match self {
            Measure::Qps => pass_groups(p),
            Measure::ServerCpu => cost_groups(p, |s| s.cpu_seconds()),
            Measure::ServerReads => {
                cost_groups(p, |s| s.process_read_bytes.map(|b| b as f64 / 1024.0))
            }
        }
    }
}

/// A server cost per query of the passes in use (`cost` of a pass / its queries), one list
/// per build.
fn cost_groups(p: &PointResult, cost: fn(&PassServerCost) -> Option<f64>) -> Vec<Vec<f64>> {
    let mut groups: Vec<(usize, Vec<f64>)> = Vec::new();
    for pass in p.passes.iter().filter(|x| x.used && x.queries > 0) {
        let Some(c) = pass.server.as_ref().and_then(cost) else {
            continue;
        };
        let v = c / pass.queries as f64;
        match groups.iter_mut().find(|g| g.0 == pass.build) {
            Some(g) => g.1.push(v),
            None => groups.push((pass.build, vec![v])),
        }
    }
    groups.into_iter().map(|g| g.1).collect()
}

/// The side of a point for a server cost (`ServerCpu`, `ServerReads`), when it has the
/// figure and it is above zero (a ratio to nothing is no ratio: a cached point read nothing).
pub(super) fn cost_side(p: &PointResult, m: Measure) -> Option<Side> {
    let s = side(p, m);
    (s.value.is_finite() && s.value > 0.0 && !s.groups.is_empty()).then_some(s)
}

/// The verdict on one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The ratio is beyond `1 + noise` (faster, for QPS).
    Above,
    /// The ratio is below `1 - noise` (slower, for QPS).
    Below,
    WithinNoise,
    /// A side's figure was measured under heavy interference or with a stalled pass, or the
    /// two sides ran on a CPU whose speed differed by more than the noise threshold: no
    /// difference is claimed, whatever the interval (unless `--judge-disturbed`).
    Disturbed,
}

/// Whether a side's figure relied on disturbed passes (interference, stalls).
pub(super) fn disturbed(s: &Side) -> bool {
    s.flags
        .iter()
        .any(|f| matches!(f, Flag::Interference | Flag::Stalled))
}

/// How much slower the CPU was for `m` than for `b` (`0.2`: 20% slower; negative: faster),
/// from the two points' speed probes, when both have one. A pair whose machine speeds differ
/// by more than the noise threshold is *disturbed*: on a virtual machine a core's speed
/// drifts by tens of percent between minutes, and the QPS ratio of such a pair would say more
/// about the machine than about the database.
pub fn speed_change(b: &Side, m: &Side) -> Option<f64> {
    let (b, m) = (b.cpu_probe_us?, m.cpu_probe_us?);
    (b > 0.0).then(|| m / b - 1.0)
}

/// One side of a pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub name: String,
    pub recall: f64,
    pub value: f64,
    pub interval: Option<Interval>,
    pub flags: Vec<Flag>,
    /// The point's CPU speed probe (CPU microseconds of fixed work; see `runner::speed`).
    pub cpu_probe_us: Option<f64>,
    /// Cached or IO-bound, where the server's storage reads were measured, and the KiB the
    /// server read per query it was judged on.
    pub storage: Option<Storage>,
    pub server_read_kib: Option<f64>,
    /// Samples per build, for the bootstrap.
    pub(super) groups: Vec<Vec<f64>>,
}

pub(super) fn side(p: &PointResult, m: Measure) -> Side {
    let (value, interval) = m.figure(p);
    Side {
        name: point_name(p),
        recall: p.metrics.recall,
        value,
        interval,
        flags: p.metrics.flags.clone(),
        cpu_probe_us: p.cpu_probe_us(),
        storage: p.metrics.server.as_ref().and_then(|s| s.storage()),
        server_read_kib: p
            .metrics
            .server
            .as_ref()
            .and_then(|s| s.server_read_kib_per_query),
        groups: m.samples(p),
    }
}

/// How a pair is judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Judge {
    pub noise: f64,
    pub stat: Stat,
    /// Judge pairs with a disturbed side like the others.
    pub disturbed: bool,
}

/// The ratio, its interval and the verdict of two sides.
pub(super) fn rate(b: &Side, m: &Side, judge: Judge) -> (f64, Option<Interval>, Verdict) {
    let Judge { noise, stat, .. } = judge;
    let ratio = m.value / b.value;
    let interval = match stat {
        Stat::Best => None,
        Stat::Median if b.groups.len() > 1 || m.groups.len() > 1 => {
            match (b.interval, m.interval) {
                (Some(bi), Some(mi)) if bi.low > 0.0 => Some(Interval {
                    low: mi.low / bi.high,
                    high: mi.high / bi.low,
                    level: bi.level * mi.level,
                }),
                _ => None,
            }
        }
        Stat::Median => ratio_interval(&b.groups[0], &m.groups[0], LEVEL),
    };
    let (low, high) = interval.map_or((ratio, ratio), |i| (i.low, i.high));
    let unequal = speed_change(b, m).is_some_and(|c| c.abs() > noise);
    let verdict = if !judge.disturbed && (disturbed(b) || disturbed(m) || unequal) {
        Verdict::Disturbed
    } else if low > 1.0 + noise {
        Verdict::Above
    } else if high < 1.0 - noise {
        Verdict::Below
    } else {
        Verdict::WithinNoise
    };
    (ratio, interval, verdict)
}
