//! One labelled run (`me`) against another (`base`), e.g. two server versions: at matched
//! parameters (same algorithm, build args, query args and clients) and at matched recall
//! targets (each label's best point at each threshold, same algorithm and clients). Each pair
//! gets the ratio me / base of a [`Measure`] (QPS), its 95% interval and a verdict: faster,
//! slower or within noise; and, where both points measured it, the same for the server's CPU
//! per query (costlier, cheaper). The summary statistics of both kinds of ratio carry
//! bootstrap intervals (see [`super::stats`]).
//!
//! The ratio interval of a pair is the distribution-free Mann-Whitney interval of the two
//! sides' passes (`metrics::interval::ratio_interval`); when a side was measured on several
//! builds (`--rebuilds`), the conservative `[me.low / base.high, me.high / base.low]` of the
//! two points' intervals, which carry the build spread. A pair is *faster* when its whole
//! interval lies above `1 + noise`, *slower* when it lies below `1 - noise`, and *within
//! noise* otherwise (criterion's rule). Without an interval (a single pass, `--stat best`)
//! the ratio alone is held against the noise threshold. A pair with a side measured under
//! heavy interference or with a stalled pass, or whose sides ran on a CPU of different speed
//! (their speed probes differ by more than the noise threshold, see `runner::speed`), is
//! *disturbed*: the machine may have made the difference, so none is claimed
//! (`--judge-disturbed` judges it anyway).
//!
//! Two points that ran interleaved in one run (the same `interleave.run` and the same build
//! parameters, so their rounds ran back to back) are *paired* instead ([`Rule::Paired`]): the
//! ratio, interval and verdict come from their round ratios ([`super::paired`]), for QPS,
//! server CPU per query and context switches per query, judged against `paired_noise`
//! (`--paired-noise`, 1%).

use super::paired::{
    BuildSpread, DEFAULT_PAIRED_NOISE, PairedRatio, RoundMeasure, paired_build_spread, paired_ratio,
};
use super::ratio::{Judge, cost_side, rate, side};
use super::series::{check_one_dataset, cmp_params, params_identity};
use super::settings::{SettingDiff, settings_differ};
use super::stats::{PairGroups, RatioStats, Stat, ratio_stats};
use super::table::{RecallRow, best_at_recall_of};
use crate::metrics::interval::Interval;
use crate::results::PointResult;

pub use super::ratio::{Measure, Side, Verdict};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Default `--noise`: differences within 5% are not called.
pub const DEFAULT_NOISE: f64 = 0.05;

/// Said with every comparison: two runs never share an index build.
pub const BUILD_VARIANCE_NOTE: &str = "each run built its own indexes, and HNSW builds are \
    randomised: a ratio includes build-to-build variance, which the intervals cover only for \
    points measured with --rebuilds 2 or more";

/// How a pair was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// Same algorithm, build args, query args and clients.
    Params,
    /// Best QPS of each side at the same recall threshold, algorithm and clients.
    Recall,
}

impl MatchKind {
    /// `params` or `recall`, the value of the `match` column.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Params => "params",
            MatchKind::Recall => "recall",
        }
    }
}

/// Which rule rated a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The two sides' passes as two independent samples (runs measured apart).
    Unpaired,
    /// Round by round: the two points ran interleaved in one run ([`super::paired`]).
    Paired,
}

impl Rule {
    /// `paired` or `unpaired`, the value of the `rule` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Unpaired => "unpaired",
            Rule::Paired => "paired",
        }
    }
}

/// Options of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    pub thresholds: Vec<f64>,
    /// Differences within this share are "within noise" for unpaired pairs (`--noise`).
    pub noise: f64,
    /// The same for paired pairs (`--paired-noise`): pairing resolves smaller differences.
    pub paired_noise: f64,
    /// The statistic the points were given (see [`super::stats::apply_stat`]).
    pub stat: Stat,
    pub measure: Measure,
    /// Give pairs with a disturbed side (interference, stalls) a verdict like the others.
    pub judge_disturbed: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            thresholds: super::DEFAULT_THRESHOLDS.to_vec(),
            noise: DEFAULT_NOISE,
            paired_noise: DEFAULT_PAIRED_NOISE,
            stat: Stat::Median,
            measure: Measure::Qps,
            judge_disturbed: false,
        }
    }
}

/// One matched pair. For a recall match, a side that did not reach the threshold is `None`
/// and the pair has no ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    pub kind: MatchKind,
    pub algorithm: String,
    pub clients: usize,
    /// The recall threshold (recall matches only).
    pub threshold: Option<f64>,
    pub base: Option<Side>,
    pub me: Option<Side>,
    /// me / base.
    pub ratio: Option<f64>,
    pub ratio_interval: Option<Interval>,
    pub verdict: Option<Verdict>,
    /// Server CPU per query of the same two points, when both sides have it.
    pub cpu: Option<CpuPair>,
    /// The rule the ratio, interval and verdict follow.
    pub rule: Rule,
    /// The paired figures of the measure (paired pairs; the same ratio, interval and verdict,
    /// with the rounds and the two parts of the half-width).
    pub paired: Option<PairedRatio>,
    /// Server context switches per query, me / base (paired pairs whose passes have them).
    pub switches: Option<PairedRatio>,
    /// KiB the server read from storage per query, me / base, when both sides read some.
    pub reads: Option<CpuPair>,
}

/// A server cost per query of a matched pair (CPU, storage reads): me / base (below 1: `me`
/// costs the server less).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuPair {
    pub base: Side,
    pub me: Side,
    pub ratio: f64,
    pub ratio_interval: Option<Interval>,
    pub verdict: Verdict,
    /// The paired figures (paired pairs).
    pub paired: Option<PairedRatio>,
}

/// Summary of the ratios of one match kind.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioSummary {
    pub n: usize,
    pub above: usize,
    pub below: usize,
    pub within_noise: usize,
    pub disturbed: usize,
    pub stats: RatioStats,
}

/// The comparison of two labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub base: String,
    pub me: String,
    pub options: CompareOptions,
    /// Parameter matches (report order), then recall matches (threshold order given).
    pub rows: Vec<Matched>,
    pub params_summary: Option<RatioSummary>,
    pub recall_summary: Option<RatioSummary>,
    /// The same summaries of the server CPU ratios (pairs whose sides both have it).
    pub cpu_params_summary: Option<RatioSummary>,
    pub cpu_recall_summary: Option<RatioSummary>,
    /// The same summaries of the storage read ratios (pairs whose sides both read some).
    pub read_params_summary: Option<RatioSummary>,
    pub read_recall_summary: Option<RatioSummary>,
    /// What the reader must know (build variance, flagged points).
    pub notes: Vec<String>,
    /// How many pairs were paired, their precision and the build spread.
    pub pairing: Pairing,
    /// Server settings and versions whose values differ between the two labels.
    pub settings: Vec<SettingDiff>,
}

/// The paired part of a comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pairing {
    /// Pairs with a ratio, and how many of them were paired.
    pub pairs: usize,
    pub paired: usize,
    /// The median of the paired pairs' paired half-widths (as a share).
    pub median_half_width: Option<f64>,
    /// Rounds left out of the paired pairs because a pass was disturbed.
    pub disturbed_rounds: usize,
    /// The build spread of the measure in each interleaved run the pairs come from.
    pub spreads: Vec<RunSpread>,
}

/// The build spread of both labels in one interleaved run (`None`: fewer than two builds).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpread {
    pub run: String,
    pub base: Option<BuildSpread>,
    pub me: Option<BuildSpread>,
}

impl RunSpread {
    /// Both sides' spreads, when both were measured.
    pub fn both(&self) -> Option<(BuildSpread, BuildSpread)> {
        self.base.zip(self.me)
    }
}

/// Compare the points labelled `me` with those labelled `base` with default options.
pub fn compare(
    points: &[PointResult],
    base: &str,
    me: &str,
    thresholds: &[f64],
) -> crate::Result<Comparison> {
    let opts = CompareOptions {
        thresholds: thresholds.to_vec(),
        ..CompareOptions::default()
    };
    compare_with(points, base, me, &opts)
}

/// Compare the points labelled `me` with those labelled `base` (one dataset and count). When
/// a label holds several points with the same parameters and clients, the one with the
/// highest figure stands for them.
pub fn compare_with(
    points: &[PointResult],
    base: &str,
    me: &str,
    opts: &CompareOptions,
) -> crate::Result<Comparison> {
    if base == me {
        return Err(crate::Error::Config(format!(
            "--base and --me are both '{base}': give two different labels"
        )));
    }
    for (flag, v) in [
        ("--noise", opts.noise),
        ("--paired-noise", opts.paired_noise),
    ] {
        if !(0.0..1.0).contains(&v) {
            return Err(crate::Error::Config(format!(
                "{flag} {v}: give a share such as 5% or 0.05 (0 to below 100%)"
            )));
        }
    }
    check_one_dataset(points, "comparison")?;
    let base_pts = labelled(points, base)?;
    let me_pts = labelled(points, me)?;
    let ctx = Ctx {
        opts,
        spreads: spreads(&base_pts, &me_pts),
    };
    let mut rows = param_matches(&base_pts, &me_pts, &ctx);
    rows.extend(recall_matches(&base_pts, &me_pts, &ctx)?);
    let summary = |k: MatchKind| summarise(rows.iter().filter(|r| r.kind == k), opts);
    let cost_summary = |k: MatchKind, of: fn(&Matched) -> Option<&CpuPair>| {
        let pairs: Vec<Matched> = rows
            .iter()
            .filter(|r| r.kind == k)
            .filter_map(|r| of(r).map(|c| cpu_as_matched(r, c)))
            .collect();
        summarise(pairs.iter(), opts)
    };
    let cpu_summary = |k: MatchKind| cost_summary(k, |r| r.cpu.as_ref());
    let read_summary = |k: MatchKind| cost_summary(k, |r| r.reads.as_ref());
    let mut notes = vec![BUILD_VARIANCE_NOTE.to_string()];
    let flagged = rows
        .iter()
        .filter(|r| {
            [&r.base, &r.me]
                .iter()
                .any(|s| s.as_ref().is_some_and(|s| !s.flags.is_empty()))
        })
        .count();
    if flagged > 0 {
        notes.push(format!(
            "{flagged} pair(s) include a point flagged (~) for interference, stalls or a wide \
             interval"
        ));
    }
    notes.extend(disturbed_note(&rows, opts, base, me));
    let pairing = pairing(&rows, &ctx, opts.measure.into());
    notes.extend(pairing_notes(&pairing, &rows, opts, base, me));
    if opts.stat == Stat::Best {
        notes.push(
            "--stat best: ratios of best passes, without intervals; verdicts use the noise \
             threshold alone"
                .into(),
        );
    }
    Ok(Comparison {
        base: base.to_string(),
        me: me.to_string(),
        options: opts.clone(),
        params_summary: summary(MatchKind::Params),
        recall_summary: summary(MatchKind::Recall),
        cpu_params_summary: cpu_summary(MatchKind::Params),
        cpu_recall_summary: cpu_summary(MatchKind::Recall),
        read_params_summary: read_summary(MatchKind::Params),
        read_recall_summary: read_summary(MatchKind::Recall),
        rows,
        notes,
        pairing,
        settings: settings_differ(points, &[base, me]),
    })
}

impl From<Measure> for RoundMeasure {
    fn from(m: Measure) -> Self {
        match m {
            Measure::Qps => RoundMeasure::Qps,
            Measure::ServerCpu => RoundMeasure::CpuPerQuery,
            Measure::ServerReads => RoundMeasure::ReadKibPerQuery,
        }
    }
}

/// What rating a pair needs besides its points.
struct Ctx<'a> {
    opts: &'a CompareOptions,
    /// The build spread of each label, by (interleaved run, measure).
    spreads: HashMap<(String, RoundMeasure), RunSpread>,
}

impl Ctx<'_> {
    fn spread(&self, run: &str, m: RoundMeasure) -> Option<(BuildSpread, BuildSpread)> {
        self.spreads.get(&(run.to_string(), m))?.both()
    }
}

/// The build spread of every measure of both labels in each run both took part in, from the
/// pairs of points (same parameters and clients) that ran in it.
fn spreads(
    base: &[&PointResult],
    me: &[&PointResult],
) -> HashMap<(String, RoundMeasure), RunSpread> {
    let mut pairs: BTreeMap<&str, Vec<(&PointResult, &PointResult)>> = BTreeMap::new();
    for &b in base {
        let partner = me.iter().copied().find(|m| {
            shared_run(b, m).is_some()
                && cmp_params(&b.query_args, &m.query_args) == std::cmp::Ordering::Equal
        });
        if let (Some(m), Some(run)) = (partner, b.metrics.interleave.as_ref()) {
            pairs.entry(run.run.as_str()).or_default().push((b, m));
        }
    }
    let mut out = HashMap::new();
    for (run, pairs) in pairs {
        for m in [
            RoundMeasure::Qps,
            RoundMeasure::CpuPerQuery,
            RoundMeasure::SwitchesPerQuery,
            RoundMeasure::ReadKibPerQuery,
        ] {
            let s = paired_build_spread(pairs.iter().copied(), m);
            let spread = RunSpread {
                run: run.to_string(),
                base: s,
                me: s,
            };
            out.insert((run.to_string(), m), spread);
        }
    }
    out
}

/// The interleaved run two points share, when their rounds ran back to back: the same run id
/// and the same build parameters (the rounds of one index build).
pub fn shared_run<'a>(b: &'a PointResult, m: &PointResult) -> Option<&'a str> {
    let (rb, rm) = (
        b.metrics.interleave.as_ref()?,
        m.metrics.interleave.as_ref()?,
    );
    (rb.run == rm.run
        && b.clients == m.clients
        && cmp_params(&b.build_args, &m.build_args) == std::cmp::Ordering::Equal)
        .then_some(rb.run.as_str())
}

fn pairing(rows: &[Matched], ctx: &Ctx<'_>, m: RoundMeasure) -> Pairing {
    let rated: Vec<&Matched> = rows.iter().filter(|r| r.ratio.is_some()).collect();
    let paired: Vec<&PairedRatio> = rated.iter().filter_map(|r| r.paired.as_ref()).collect();
    let widths: Vec<f64> = paired.iter().map(|p| p.paired_half_width).collect();
    let mut spreads: Vec<RunSpread> = ctx
        .spreads
        .iter()
        .filter(|((_, measure), _)| *measure == m)
        .map(|(_, s)| s.clone())
        .collect();
    spreads.sort_by(|a, b| a.run.cmp(&b.run));
    Pairing {
        pairs: rated.len(),
        paired: paired.len(),
        median_half_width: crate::metrics::interval::median(&widths),
        disturbed_rounds: paired.iter().map(|p| p.disturbed_rounds).sum(),
        spreads,
    }
}

/// The notes on the paired pairs: how many, their rule and precision, the build spread.
fn pairing_notes(
    p: &Pairing,
    rows: &[Matched],
    opts: &CompareOptions,
    base: &str,
    me: &str,
) -> Vec<String> {
    let mut notes = Vec::new();
    if p.spreads.is_empty() {
        return notes;
    }
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    if p.paired > 0 {
        notes.push(format!(
            "{} of {} pair(s) are paired ('{base}' and '{me}' ran interleaved in one run): their \
             ratio is the 20% trimmed mean of the per-round ratios (rule \"paired\"), faster or \
             slower when the whole 95% interval lies beyond +-{:.0}% (--paired-noise); median \
             paired half-width +-{}{}",
            p.paired,
            p.pairs,
            opts.paired_noise * 100.0,
            p.median_half_width.map_or("-".into(), pct),
            if p.disturbed_rounds > 0 {
                format!(
                    "; {} round(s) with a disturbed pass left out",
                    p.disturbed_rounds
                )
            } else {
                String::new()
            }
        ));
    }
    let unpaired_in_run = rows
        .iter()
        .filter(|r| r.rule == Rule::Unpaired && r.ratio.is_some())
        .count();
    if unpaired_in_run > 0 && p.paired > 0 {
        notes.push(format!(
            "{unpaired_in_run} pair(s) follow the unpaired rule (+-{:.0}%, --noise): their \
             points did not run in the same rounds (other build parameters, another run, or \
             fewer than {} rounds in common)",
            opts.noise * 100.0,
            super::paired::MIN_ROUNDS
        ));
    }
    for s in &p.spreads {
        notes.push(match (s.base, s.me) {
            (Some(b), Some(m)) => format!(
                "build spread (run {}): a build's figure varies by {} in '{base}' ({} point(s)) \
                 and {} in '{me}' ({} point(s)) between builds; the paired intervals include it",
                s.run,
                pct(b.share()),
                b.points,
                pct(m.share()),
                m.points
            ),
            _ => format!(
                "build spread not measured (run {}): a side has one build per point, and HNSW \
                 builds are randomised, so the paired intervals hold the rounds' precision but \
                 not the two builds' luck; run with --rebuilds 2 (or more) to measure it and \
                 fold it into the verdicts",
                s.run
            ),
        });
    }
    notes
}

/// The note on pairs without a verdict ("disturbed"), with the spread of machine speeds when
/// that is why.
fn disturbed_note(rows: &[Matched], opts: &CompareOptions, base: &str, me: &str) -> Option<String> {
    let disturbed: Vec<&Matched> = rows
        .iter()
        .filter(|r| r.verdict == Some(Verdict::Disturbed))
        .collect();
    if disturbed.is_empty() {
        return None;
    }
    let speed: Vec<f64> = disturbed
        .iter()
        .filter_map(|r| super::ratio::speed_change(r.base.as_ref()?, r.me.as_ref()?))
        .filter(|c| c.abs() > opts.noise)
        .collect();
    let machine = match speed.iter().copied().reduce(f64::min) {
        Some(lo) => {
            let hi = speed.iter().copied().fold(lo, f64::max);
            let range = if hi - lo < 0.005 {
                format!("{:+.0}%", lo * 100.0)
            } else {
                format!("{:+.0}% to {:+.0}%", lo * 100.0, hi * 100.0)
            };
            format!(
                " ({} of them because the CPU ran at another speed: the speed probe took \
                 {range} more CPU time in '{me}' than in '{base}')",
                speed.len()
            )
        }
        None => String::new(),
    };
    Some(format!(
        "{} pair(s) have a side measured under heavy interference or with a stalled pass, or \
         ran on a CPU of another speed{machine}: their verdict is \"disturbed\" and no \
         difference is claimed, as the machine may have made it; measure again on a quiet \
         machine, or pass --judge-disturbed to judge them by their intervals",
        disturbed.len()
    ))
}

fn summarise<'a>(
    rows: impl Iterator<Item = &'a Matched>,
    opts: &CompareOptions,
) -> Option<RatioSummary> {
    let rated: Vec<&Matched> = rows.filter(|r| r.ratio.is_some()).collect();
    let ratios: Vec<f64> = rated.iter().filter_map(|r| r.ratio).collect();
    let groups: Vec<PairGroups> = rated
        .iter()
        .filter_map(|r| {
            Some((
                r.base.as_ref()?.groups.clone(),
                r.me.as_ref()?.groups.clone(),
            ))
        })
        .collect();
    let with_intervals = opts.stat == Stat::Median;
    let stats = ratio_stats(&ratios, with_intervals.then_some(&groups[..]))?;
    let count = |v: Verdict| rated.iter().filter(|r| r.verdict == Some(v)).count();
    Some(RatioSummary {
        n: ratios.len(),
        above: count(Verdict::Above),
        below: count(Verdict::Below),
        within_noise: count(Verdict::WithinNoise),
        disturbed: count(Verdict::Disturbed),
        stats,
    })
}

fn labelled<'a>(points: &'a [PointResult], label: &str) -> crate::Result<Vec<&'a PointResult>> {
    let mine: Vec<&PointResult> = points
        .iter()
        .filter(|p| p.label.as_deref() == Some(label))
        .collect();
    if mine.is_empty() {
        let labels: BTreeSet<&str> = points.iter().filter_map(|p| p.label.as_deref()).collect();
        let known = if labels.is_empty() {
            "no point has a label (runs get one with `annbench run --label NAME`)".to_string()
        } else {
            format!(
                "the labels present are {}",
                labels.into_iter().collect::<Vec<_>>().join(", ")
            )
        };
        return Err(crate::Error::Config(format!(
            "no results labelled '{label}': {known}"
        )));
    }
    Ok(mine)
}

/// A server cost pair (CPU, storage reads) as a [`Matched`], for [`summarise`].
fn cpu_as_matched(r: &Matched, c: &CpuPair) -> Matched {
    Matched {
        base: Some(c.base.clone()),
        me: Some(c.me.clone()),
        ratio: Some(c.ratio),
        ratio_interval: c.ratio_interval,
        verdict: Some(c.verdict),
        cpu: None,
        reads: None,
        paired: c.paired.clone(),
        rule: if c.paired.is_some() {
            Rule::Paired
        } else {
            Rule::Unpaired
        },
        ..r.clone()
    }
}

fn pair(
    kind: MatchKind,
    algorithm: &str,
    clients: usize,
    threshold: Option<f64>,
    b: Option<&PointResult>,
    m: Option<&PointResult>,
    ctx: &Ctx<'_>,
) -> Matched {
    let opts = ctx.opts;
    let judge = Judge {
        noise: opts.noise,
        stat: opts.stat,
        disturbed: opts.judge_disturbed,
    };
    let run = b.zip(m).and_then(|(b, m)| shared_run(b, m));
    let paired_of = |measure: RoundMeasure| {
        let (b, m, run) = (b?, m?, run?);
        paired_ratio(
            &b.passes,
            &m.passes,
            measure,
            ctx.spread(run, measure),
            opts.paired_noise,
        )
    };
    let (bs, ms) = (
        b.map(|p| side(p, opts.measure)),
        m.map(|p| side(p, opts.measure)),
    );
    let paired = paired_of(opts.measure.into());
    let rated = match (&bs, &ms, &paired) {
        (Some(_), Some(_), Some(p)) => Some((p.ratio, Some(p.interval), p.verdict)),
        (Some(b), Some(m), None) if b.value > 0.0 => Some(rate(b, m, judge)),
        _ => None,
    };
    let cost = |measure: Measure| {
        let side = |p: &PointResult| cost_side(p, measure);
        b.and_then(side).zip(m.and_then(side)).map(|(base, me)| {
            let paired = paired_of(measure.into());
            let (ratio, ratio_interval, verdict) = match &paired {
                Some(p) => (p.ratio, Some(p.interval), p.verdict),
                None => rate(&base, &me, judge),
            };
            CpuPair {
                base,
                me,
                ratio,
                ratio_interval,
                verdict,
                paired,
            }
        })
    };
    let cpu = cost(Measure::ServerCpu);
    Matched {
        kind,
        algorithm: algorithm.to_string(),
        clients,
        threshold,
        base: bs,
        me: ms,
        ratio: rated.map(|r| r.0),
        ratio_interval: rated.and_then(|r| r.1),
        verdict: rated.map(|r| r.2),
        cpu,
        rule: if paired.is_some() {
            Rule::Paired
        } else {
            Rule::Unpaired
        },
        switches: paired_of(RoundMeasure::SwitchesPerQuery),
        reads: cost(Measure::ServerReads),
        paired,
    }
}

/// The fastest point of each (parameters, clients) in `pts`, keyed by identity.
fn fastest_by_params<'a>(pts: &[&'a PointResult]) -> HashMap<(String, usize), &'a PointResult> {
    let mut out: HashMap<(String, usize), &PointResult> = HashMap::new();
    for &p in pts {
        let slot = out.entry((params_identity(p), p.clients)).or_insert(p);
        if p.metrics.qps > slot.metrics.qps {
            *slot = p;
        }
    }
    out
}

fn param_matches(base: &[&PointResult], me: &[&PointResult], ctx: &Ctx<'_>) -> Vec<Matched> {
    let base = fastest_by_params(base);
    let mut pairs: Vec<(&PointResult, &PointResult)> = fastest_by_params(me)
        .into_iter()
        .filter_map(|(key, m)| base.get(&key).map(|&b| (b, m)))
        .collect();
    pairs.sort_by(|(_, a), (_, b)| {
        (&a.algorithm, a.clients)
            .cmp(&(&b.algorithm, b.clients))
            .then_with(|| cmp_params(&a.build_args, &b.build_args))
            .then_with(|| cmp_params(&a.query_args, &b.query_args))
    });
    pairs
        .into_iter()
        .map(|(b, m)| {
            pair(
                MatchKind::Params,
                &m.algorithm,
                m.clients,
                None,
                Some(b),
                Some(m),
                ctx,
            )
        })
        .collect()
}

fn recall_matches<'a>(
    base: &'a [&'a PointResult],
    me: &'a [&'a PointResult],
    ctx: &Ctx<'_>,
) -> crate::Result<Vec<Matched>> {
    let opts = ctx.opts;
    let bt = best_at_recall_of(base, &opts.thresholds, None)?;
    let mt = best_at_recall_of(me, &opts.thresholds, None)?;
    let mut out = Vec::new();
    for &t in &opts.thresholds {
        let mut keys: Vec<(String, usize)> = bt
            .rows
            .iter()
            .filter(|r| r.threshold == t)
            .map(|r| (r.series.algorithm.clone(), r.series.clients))
            .filter(|k| {
                mt.rows
                    .iter()
                    .any(|r| (&r.series.algorithm, r.series.clients) == (&k.0, k.1))
            })
            .collect();
        keys.sort();
        keys.dedup();
        for (algorithm, clients) in keys {
            let find =
                |rows: &[RecallRow], pts: &'a [&'a PointResult]| -> Option<&'a PointResult> {
                    rows.iter()
                        .find(|r| {
                            r.threshold == t
                                && r.series.algorithm == algorithm
                                && r.series.clients == clients
                        })
                        .and_then(|r| r.best.as_ref())
                        .map(|b| pts[b.index])
                };
            let (b, m) = (find(&bt.rows, base), find(&mt.rows, me));
            out.push(pair(
                MatchKind::Recall,
                &algorithm,
                clients,
                Some(t),
                b,
                m,
                ctx,
            ));
        }
    }
    Ok(out)
}
