//! Paired statistics of servers measured interleaved in one run (`Pass::round`,
//! `PointMetrics::interleave`): the passes of one round of every server ran back to back, so
//! the machine's drift (a CPU whose speed wanders by up to 25% between minutes) hits both
//! sides of a round alike and cancels in their ratio. Pure functions.
//!
//! - **Rounds.** A pass is identified by (build, round); a round present on both sides gives
//!   one *round ratio* me / base of QPS, and, where both passes measured the server, of CPU
//!   seconds per query ((user + system) / queries) and of context switches per query
//!   ((voluntary + involuntary) / queries). Rounds where either pass is disturbed (heavy
//!   interference, stalled) are left out and counted.
//! - **Estimator.** The 20% trimmed mean of the log round ratios, with the Tukey-McLaughlin
//!   (Yuen) interval: the standard error from the winsorized variance, `s_w / ((1 - 2g) sqrt n)`,
//!   and Student's t with `n - 2 floor(g n) - 1` degrees of freedom. Round ratios have heavy
//!   tails (a quiet round next to one where a neighbour's job woke up: 0.75x to 1.26x around a
//!   true 1.00x): the plain mean's interval is widened by every outlier, the median's is wide
//!   under normal noise; the trimmed mean keeps about 94% of the mean's efficiency under
//!   normal noise and loses little under heavy tails, and its interval needs no symmetry of
//!   the noise. Logs make the ratio and its inverse symmetric (1.25x and 0.8x).
//! - **Build spread.** HNSW builds are randomised: two servers' graphs differ even when the
//!   servers are identical, and the rounds of one build say nothing about that. With
//!   `--rebuilds 2` or more on both sides, each build's paired ratio (the median of its log
//!   round ratios) varies from build to build with the two graphs, while the drift cancels in
//!   it; its variance, pooled across the pairs of the run (`sum (B_i - 1) s_i^2 / sum (B_i -
//!   1)`) and split evenly between the two servers, is the build spread
//!   ([`paired_build_spread`]). The ratio's interval grows by `t * sqrt((s_base^2 + s_me^2) /
//!   B)` over the pair's `B` builds (Welch-Satterthwaite degrees of freedom), added in
//!   quadrature to the paired half-width.
//! - **Verdict.** Faster (costlier, for a cost) when the whole interval lies above
//!   `1 + noise`, slower (cheaper) below `1 - noise`, within noise otherwise; the paired
//!   default noise is 1% ([`DEFAULT_PAIRED_NOISE`]).

use super::ratio::Verdict;
use crate::metrics::interval::{Interval, LEVEL, median};
use crate::results::{Pass, PointResult};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::{BTreeMap, BTreeSet};

/// Default `--paired-noise`: paired differences within 1% are not called.
pub const DEFAULT_PAIRED_NOISE: f64 = 0.01;

/// Share trimmed from each end of the sorted log round ratios.
pub const TRIM: f64 = 0.2;

/// Fewest paired rounds a pair needs for a paired interval (fewer: the unpaired rule).
pub const MIN_ROUNDS: usize = 3;

/// The per-pass figure a round ratio is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RoundMeasure {
    Qps,
    /// Server CPU seconds (user + system) per query.
    CpuPerQuery,
    /// Server context switches (voluntary + involuntary) per query.
    SwitchesPerQuery,
    /// KiB the server processes read from storage per query.
    ReadKibPerQuery,
}

impl RoundMeasure {
    /// The figure of one pass, when it has one (positive and finite).
    pub fn of(self, p: &Pass) -> Option<f64> {
        if p.queries == 0 {
            return None;
        }
        let q = p.queries as f64;
        let v = match self {
            RoundMeasure::Qps => p.qps(),
            RoundMeasure::CpuPerQuery => p.server.as_ref()?.cpu_seconds()? / q,
            RoundMeasure::SwitchesPerQuery => {
                let s = p.server.as_ref()?;
                (s.voluntary_switches? + s.involuntary_switches?) as f64 / q
            }
            RoundMeasure::ReadKibPerQuery => {
                p.server.as_ref()?.process_read_bytes? as f64 / 1024.0 / q
            }
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }
}

/// The log round ratios of a pair of points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rounds {
    /// `ln(me / base)` of each (build, round) present on both sides, in (build, round) order.
    pub logs: Vec<f64>,
    /// The builds those rounds belong to.
    pub builds: BTreeSet<usize>,
    /// The build of each entry of `logs`.
    pub log_builds: Vec<usize>,
    /// Rounds present on both sides left out because a pass was disturbed.
    pub disturbed: usize,
}

/// The passes of a point with a round, by (build, round); the first pass of a (build, round)
/// stands for it.
fn by_round(passes: &[Pass]) -> BTreeMap<(usize, usize), &Pass> {
    let mut out = BTreeMap::new();
    for p in passes {
        if let Some(r) = p.round {
            out.entry((p.build, r)).or_insert(p);
        }
    }
    out
}

/// The round ratios me / base of `measure` (see the module docs).
pub fn round_ratios(base: &[Pass], me: &[Pass], measure: RoundMeasure) -> Rounds {
    let (b, m) = (by_round(base), by_round(me));
    let mut out = Rounds::default();
    for (key, bp) in &b {
        let Some(mp) = m.get(key) else { continue };
        if bp.disturbed() || mp.disturbed() {
            out.disturbed += 1;
            continue;
        }
        if let (Some(x), Some(y)) = (measure.of(bp), measure.of(mp)) {
            out.logs.push((y / x).ln());
            out.log_builds.push(key.0);
            out.builds.insert(key.0);
        }
    }
    out
}

/// A location estimate with a symmetric interval `estimate +- half_width`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub estimate: f64,
    pub half_width: f64,
    /// Degrees of freedom of the t quantile.
    pub df: f64,
    pub n: usize,
}

/// The two-sided `level` quantile of Student's t with `df` degrees of freedom.
fn t_quantile(df: f64, level: f64) -> Option<f64> {
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(t.inverse_cdf(1.0 - (1.0 - level) / 2.0))
}

/// The `trim` trimmed mean of the finite `values` with its Tukey-McLaughlin interval at
/// `level` (module docs); `None` for fewer than [`MIN_ROUNDS`] values.
pub fn trimmed_mean(values: &[f64], trim: f64, level: f64) -> Option<Estimate> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n < MIN_ROUNDS || !(0.0..0.5).contains(&trim) {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let g = (trim * n as f64).floor() as usize;
    let kept = &v[g..n - g];
    let estimate = kept.iter().sum::<f64>() / kept.len() as f64;
    let (lo, hi) = (v[g], v[n - 1 - g]);
    let w: Vec<f64> = v.iter().map(|x| x.clamp(lo, hi)).collect();
    let wm = w.iter().sum::<f64>() / n as f64;
    let wvar = w.iter().map(|x| (x - wm).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = wvar.sqrt() / ((1.0 - 2.0 * g as f64 / n as f64) * (n as f64).sqrt());
    let df = (n - 2 * g - 1) as f64;
    Some(Estimate {
        estimate,
        half_width: t_quantile(df, level)? * se,
        df,
        n,
    })
}

/// The spread of one server's per-build figures, pooled across points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuildSpread {
    /// Pooled variance of a build's log figure.
    pub variance: f64,
    /// Its degrees of freedom: sum over the points of (builds - 1).
    pub df: usize,
    /// Points with two builds or more that it pools.
    pub points: usize,
}

impl BuildSpread {
    /// The standard deviation of a build's figure as a share (`0.03`: 3%).
    pub fn share(&self) -> f64 {
        self.variance.sqrt().exp() - 1.0
    }
}

/// The spread between builds of the paired ratio of two servers' points, pooled over the
/// pairs of one run: each build's ratio is the median of its log round ratios, so the drift
/// of the machine cancels in it as in the rounds, and what varies from build to build is the
/// two servers' graphs (and a little of the rounds' own noise, which errs on the wide side).
/// Two servers' builds cannot be told apart, so the variance is returned split evenly between
/// them, as one [`BuildSpread`] for each side. `None` when no pair has two builds.
pub fn paired_build_spread<'a>(
    pairs: impl IntoIterator<Item = (&'a PointResult, &'a PointResult)>,
    measure: RoundMeasure,
) -> Option<BuildSpread> {
    let (mut ss, mut df, mut n) = (0.0, 0usize, 0usize);
    for (base, me) in pairs {
        let rounds = round_ratios(&base.passes, &me.passes, measure);
        let mut by_build: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for (&b, &log) in rounds.log_builds.iter().zip(&rounds.logs) {
            by_build.entry(b).or_default().push(log);
        }
        let per_build: Vec<f64> = by_build.values().filter_map(|v| median(v)).collect();
        if per_build.len() < 2 {
            continue;
        }
        let mean = per_build.iter().sum::<f64>() / per_build.len() as f64;
        ss += per_build.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        df += per_build.len() - 1;
        n += 1;
    }
    (df > 0).then(|| BuildSpread {
        variance: ss / df as f64 / 2.0,
        df,
        points: n,
    })
}

/// The half-width (in logs) the build spread adds to the ratio of a pair over `builds`
/// builds: `t * sqrt((s_b^2 + s_m^2) / builds)`, Welch-Satterthwaite degrees of freedom.
pub fn build_half_width(base: BuildSpread, me: BuildSpread, builds: usize, level: f64) -> f64 {
    let b = builds.max(1) as f64;
    let (vb, vm) = (base.variance / b, me.variance / b);
    let var = vb + vm;
    if var <= 0.0 {
        return 0.0;
    }
    let df = var * var / (vb * vb / base.df as f64 + vm * vm / me.df as f64);
    t_quantile(df, level).map_or(f64::INFINITY, |t| t * var.sqrt())
}

/// The paired ratio of one pair and one measure.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedRatio {
    /// me / base: `exp` of the trimmed mean of the log round ratios.
    pub ratio: f64,
    /// The interval the verdict uses: the paired half-width and the build spread's.
    pub interval: Interval,
    /// The paired interval's half-width alone (the measurement's precision), as a share.
    pub paired_half_width: f64,
    /// What the build spread adds, as a share; `None` when it was not measured (one build,
    /// or fewer than two on a side).
    pub build_half_width: Option<f64>,
    pub rounds: usize,
    pub disturbed_rounds: usize,
    pub builds: usize,
    pub verdict: Verdict,
}

/// The paired ratio me / base of `measure` (module docs); `spread` is each side's build
/// spread when both were measured. `None` with fewer than [`MIN_ROUNDS`] paired rounds.
pub fn paired_ratio(
    base: &[Pass],
    me: &[Pass],
    measure: RoundMeasure,
    spread: Option<(BuildSpread, BuildSpread)>,
    noise: f64,
) -> Option<PairedRatio> {
    let rounds = round_ratios(base, me, measure);
    let e = trimmed_mean(&rounds.logs, TRIM, LEVEL)?;
    let builds = rounds.builds.len();
    let build_hw = spread
        .filter(|_| builds > 0)
        .map(|(b, m)| build_half_width(b, m, builds, LEVEL));
    let hw = build_hw.map_or(e.half_width, |b| e.half_width.hypot(b));
    let interval = Interval {
        low: (e.estimate - hw).exp(),
        high: (e.estimate + hw).exp(),
        level: LEVEL,
    };
    Some(PairedRatio {
        ratio: e.estimate.exp(),
        interval,
        paired_half_width: e.half_width.exp() - 1.0,
        build_half_width: build_hw.map(|h| h.exp() - 1.0),
        rounds: e.n,
        disturbed_rounds: rounds.disturbed,
        builds,
        verdict: judge(interval, noise),
    })
}

/// Faster (above) when the whole interval lies above `1 + noise`, slower (below) when it
/// lies below `1 - noise`, within noise otherwise.
pub fn judge(i: Interval, noise: f64) -> Verdict {
    if i.low > 1.0 + noise {
        Verdict::Above
    } else if i.high < 1.0 - noise {
        Verdict::Below
    } else {
        Verdict::WithinNoise
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::rng::Rng;
    use crate::results::{Interference, PassServerCost};

    /// A pass of 1,000 queries at `qps` in (build, round).
    fn pass(build: usize, round: usize, qps: f64) -> Pass {
        Pass {
            wall_seconds: 1000.0 / qps,
            queries: 1000,
            build,
            round: Some(round),
            ..Pass::default()
        }
    }

    /// Student's t-like heavy-tailed noise: a normal divided by the root of a chi-square of 2
    /// degrees of freedom over 2 (t with 2 degrees of freedom: infinite variance).
    fn heavy(rng: &mut Rng) -> f64 {
        let z = rng.normal();
        let chi2 = rng.normal().powi(2) + rng.normal().powi(2);
        z / (chi2 / 2.0).sqrt().max(1e-3)
    }

    #[test]
    fn trimmed_mean_by_hand() {
        // 10 values, g = 2: kept 3..8 sorted -> 3,4,5,6,7,8 mean 5.5; winsorized
        // 3,3,3,4,5,6,7,8,8,8 mean 5.5, squared deviations 42.5, variance 42.5/9.
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0];
        let e = trimmed_mean(&v, TRIM, 0.95).unwrap();
        assert!((e.estimate - 5.5).abs() < 1e-12, "{e:?}");
        assert_eq!((e.df, e.n), (5.0, 10));
        let se = (42.5f64 / 9.0).sqrt() / (0.6 * 10f64.sqrt());
        let t = t_quantile(5.0, 0.95).unwrap();
        assert!((t - 2.5706).abs() < 1e-3, "{t}");
        assert!((e.half_width - t * se).abs() < 1e-12);
        assert!(trimmed_mean(&[1.0, 2.0], TRIM, 0.95).is_none());
    }

    #[test]
    fn trimmed_mean_covers_under_heavy_tails_and_beats_the_mean() {
        // 400 samples of 60 rounds with t(2) noise of scale 3% around log 0.05: the trimmed
        // mean's interval covers the truth about 95% of the time, and the estimate is closer
        // to the truth than the plain mean in most samples.
        let mut rng = Rng::new(5);
        let (mut covered, mut closer, trials) = (0, 0, 400);
        for _ in 0..trials {
            let v: Vec<f64> = (0..60).map(|_| 0.05 + 0.03 * heavy(&mut rng)).collect();
            let e = trimmed_mean(&v, TRIM, 0.95).unwrap();
            if (e.estimate - 0.05).abs() <= e.half_width {
                covered += 1;
            }
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            if (e.estimate - 0.05).abs() < (mean - 0.05).abs() {
                closer += 1;
            }
        }
        let coverage = covered as f64 / trials as f64;
        println!("heavy tails: coverage {coverage}, trimmed closer {closer}/{trials}");
        assert!((0.91..=0.99).contains(&coverage), "coverage {coverage}");
        assert!(closer > trials / 2, "{closer}");
    }

    #[test]
    fn rounds_pair_by_build_and_round_and_skip_disturbed() {
        let base = vec![pass(0, 0, 100.0), pass(0, 1, 100.0), pass(1, 0, 100.0)];
        let mut me = vec![pass(0, 1, 110.0), pass(1, 0, 90.0), pass(1, 5, 1.0)];
        let r = round_ratios(&base, &me, RoundMeasure::Qps);
        assert_eq!(r.logs.len(), 2);
        assert!((r.logs[0] - 1.1f64.ln()).abs() < 1e-12);
        assert!((r.logs[1] - 0.9f64.ln()).abs() < 1e-12);
        assert_eq!(r.builds.into_iter().collect::<Vec<_>>(), [0, 1]);
        me[1].interference = Some(Interference {
            heavy: true,
            ..Interference::default()
        });
        let r = round_ratios(&base, &me, RoundMeasure::Qps);
        assert_eq!((r.logs.len(), r.disturbed), (1, 1));
    }

    #[test]
    fn cost_per_query_rounds() {
        let cost = |cpu: f64, switches: u64| PassServerCost {
            cpu_user_seconds: Some(cpu * 0.75),
            cpu_system_seconds: Some(cpu * 0.25),
            voluntary_switches: Some(switches),
            involuntary_switches: Some(switches),
            ..PassServerCost::default()
        };
        let mut b = pass(0, 0, 100.0);
        b.server = Some(cost(2.0, 500));
        let mut m = pass(0, 0, 100.0);
        m.server = Some(cost(2.5, 250));
        let cpu = round_ratios(&[b.clone()], &[m.clone()], RoundMeasure::CpuPerQuery);
        assert!((cpu.logs[0] - 1.25f64.ln()).abs() < 1e-12);
        let sw = round_ratios(&[b.clone()], &[m], RoundMeasure::SwitchesPerQuery);
        assert!((sw.logs[0] - 0.5f64.ln()).abs() < 1e-12);
        // No server cost on one side: no CPU round.
        let none = round_ratios(&[b], &[pass(0, 0, 1.0)], RoundMeasure::CpuPerQuery);
        assert!(none.logs.is_empty());
    }

    #[test]
    fn the_build_spread_holds_the_graphs_not_the_drift() {
        // Pair 1: builds whose ratio is 1.00 then 1.08, under a drift of 30% between the builds
        // that hits both servers alike; pair 2: 1.00, 1.04, 1.00; pair 3 has one build.
        let pair = |ratios: &[f64]| {
            let mut base = crate::report::testutil::point("mariadb", &[], &[], 0.9, 100.0);
            let mut me = base.clone();
            for (b, &ratio) in ratios.iter().enumerate() {
                let drift = 1.0 + 0.3 * b as f64;
                for r in 0..5 {
                    base.passes.push(pass(b, r, 100.0 * drift));
                    me.passes.push(pass(b, r, 100.0 * drift * ratio));
                }
            }
            (base, me)
        };
        let pairs = [pair(&[1.0, 1.08]), pair(&[1.0, 1.04, 1.0]), pair(&[1.0])];
        let s = paired_build_spread(pairs.iter().map(|(b, m)| (b, m)), RoundMeasure::Qps).unwrap();
        let (d1, d2) = (1.08f64.ln(), 1.04f64.ln());
        // ss: pair 1 (d1/2)^2 * 2; pair 2: deviations 2d2/3, -d2/3, -d2/3 -> 6 d2^2 / 9.
        let expected = (d1 * d1 / 2.0 + 6.0 * d2 * d2 / 9.0) / 3.0 / 2.0;
        assert_eq!((s.df, s.points), (3, 2));
        assert!((s.variance - expected).abs() < 1e-12, "{s:?}");
        let alone = pairs[2..].iter().map(|(b, m)| (b, m));
        assert!(paired_build_spread(alone, RoundMeasure::Qps).is_none());
    }

    #[test]
    fn build_spread_widens_and_judges() {
        let rounds = |me: f64| -> (Vec<Pass>, Vec<Pass>) {
            let mut rng = Rng::new(3);
            let mut b = Vec::new();
            let mut m = Vec::new();
            for r in 0..40 {
                let drift = 1.0 + 0.2 * (r as f64 / 6.0).sin();
                b.push(pass(0, r, 1000.0 * drift * (1.0 + 0.01 * rng.normal())));
                m.push(pass(
                    0,
                    r,
                    1000.0 * me * drift * (1.0 + 0.01 * rng.normal()),
                ));
            }
            (b, m)
        };
        let (b, m) = rounds(1.05);
        let alone = paired_ratio(&b, &m, RoundMeasure::Qps, None, 0.01).unwrap();
        assert_eq!(alone.verdict, Verdict::Above);
        assert!(alone.build_half_width.is_none());
        let spread = BuildSpread {
            variance: 0.04f64.powi(2),
            df: 4,
            points: 4,
        };
        let wide = paired_ratio(&b, &m, RoundMeasure::Qps, Some((spread, spread)), 0.01).unwrap();
        assert_eq!(wide.ratio, alone.ratio);
        assert_eq!(wide.paired_half_width, alone.paired_half_width);
        assert!(wide.interval.high - wide.interval.low > alone.interval.high - alone.interval.low);
        assert!(wide.build_half_width.unwrap() > alone.paired_half_width);
        let (b, m) = rounds(1.0);
        let aa = paired_ratio(&b, &m, RoundMeasure::Qps, None, 0.01).unwrap();
        assert_eq!(aa.verdict, Verdict::WithinNoise);
        assert!(aa.interval.low <= 1.0 && 1.0 <= aa.interval.high, "{aa:?}");
    }
}
