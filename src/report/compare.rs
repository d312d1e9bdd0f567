//! Relative QPS of one labelled run (`me`) against another (`base`), e.g. two server versions:
//! at matched parameters (same algorithm, build args, query args and clients) and at matched
//! recall targets (each label's best QPS at each threshold, same algorithm and clients), with
//! summary statistics of the ratios (me / base).

use super::names::point_name;
use super::series::{check_one_dataset, cmp_params};
use super::stats::{Summary, summary};
use super::table::{RecallRow, best_at_recall_of};
use crate::results::PointResult;
use std::collections::BTreeSet;

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

/// One matched pair. For a recall match, a side that did not reach the threshold has no name,
/// recall or QPS, and the pair has no ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    pub kind: MatchKind,
    pub algorithm: String,
    pub clients: usize,
    /// The recall threshold (recall matches only).
    pub threshold: Option<f64>,
    pub base_name: Option<String>,
    pub me_name: Option<String>,
    pub base_recall: Option<f64>,
    pub me_recall: Option<f64>,
    pub base_qps: Option<f64>,
    pub me_qps: Option<f64>,
    /// me QPS / base QPS.
    pub ratio: Option<f64>,
}

/// The comparison of two labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub base: String,
    pub me: String,
    /// Parameter matches (report order), then recall matches (threshold order given).
    pub rows: Vec<Matched>,
    /// Statistics of the ratios at matched parameters (`None` when nothing matched).
    pub params_summary: Option<Summary>,
    /// Statistics of the ratios at matched recall targets.
    pub recall_summary: Option<Summary>,
}

/// Compare the points labelled `me` with those labelled `base` (one dataset and count).
/// When a label holds several points with the same parameters and clients (reruns), the one
/// with the highest QPS stands for them.
pub fn compare(
    points: &[PointResult],
    base: &str,
    me: &str,
    thresholds: &[f64],
) -> crate::Result<Comparison> {
    if base == me {
        return Err(crate::Error::Config(format!(
            "--base and --me are both '{base}': give two different labels"
        )));
    }
    check_one_dataset(points, "comparison")?;
    let base_pts = labelled(points, base)?;
    let me_pts = labelled(points, me)?;
    let mut rows = param_matches(&base_pts, &me_pts);
    rows.extend(recall_matches(&base_pts, &me_pts, thresholds)?);
    let ratios = |k: MatchKind| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.kind == k)
            .filter_map(|r| r.ratio)
            .collect()
    };
    Ok(Comparison {
        base: base.to_string(),
        me: me.to_string(),
        params_summary: summary(&ratios(MatchKind::Params)),
        recall_summary: summary(&ratios(MatchKind::Recall)),
        rows,
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

fn same_params(a: &PointResult, b: &PointResult) -> bool {
    a.algorithm == b.algorithm
        && a.clients == b.clients
        && a.build_args == b.build_args
        && a.query_args == b.query_args
}

/// The fastest of the points in `pts` with the same parameters as `p`.
fn fastest<'a>(pts: &[&'a PointResult], p: &PointResult) -> Option<&'a PointResult> {
    pts.iter()
        .copied()
        .filter(|q| same_params(q, p))
        .max_by(|a, b| a.metrics.qps.total_cmp(&b.metrics.qps))
}

fn param_matches(base: &[&PointResult], me: &[&PointResult]) -> Vec<Matched> {
    let mut keys: Vec<&PointResult> = Vec::new();
    for &p in me {
        if !keys.iter().any(|k| same_params(k, p)) {
            keys.push(p);
        }
    }
    keys.sort_by(|a, b| {
        (&a.algorithm, a.clients)
            .cmp(&(&b.algorithm, b.clients))
            .then_with(|| cmp_params(&a.build_args, &b.build_args))
            .then_with(|| cmp_params(&a.query_args, &b.query_args))
    });
    keys.into_iter()
        .filter_map(|k| {
            let (b, m) = (fastest(base, k)?, fastest(me, k)?);
            let name = point_name(m);
            Some(Matched {
                kind: MatchKind::Params,
                algorithm: m.algorithm.clone(),
                clients: m.clients,
                threshold: None,
                base_name: Some(name.clone()),
                me_name: Some(name),
                base_recall: Some(b.metrics.recall),
                me_recall: Some(m.metrics.recall),
                base_qps: Some(b.metrics.qps),
                me_qps: Some(m.metrics.qps),
                ratio: Some(m.metrics.qps / b.metrics.qps),
            })
        })
        .collect()
}

fn recall_matches(
    base: &[&PointResult],
    me: &[&PointResult],
    thresholds: &[f64],
) -> crate::Result<Vec<Matched>> {
    let bt = best_at_recall_of(base, thresholds, None)?;
    let mt = best_at_recall_of(me, thresholds, None)?;
    let mut out = Vec::new();
    for &t in thresholds {
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
            let find = |rows: &[RecallRow]| {
                rows.iter()
                    .find(|r| {
                        r.threshold == t
                            && r.series.algorithm == algorithm
                            && r.series.clients == clients
                    })
                    .and_then(|r| r.best.clone())
            };
            let (b, m) = (find(&bt.rows), find(&mt.rows));
            let ratio = match (&b, &m) {
                (Some(b), Some(m)) => Some(m.qps / b.qps),
                _ => None,
            };
            out.push(Matched {
                kind: MatchKind::Recall,
                algorithm,
                clients,
                threshold: Some(t),
                base_name: b.as_ref().map(|x| x.name.clone()),
                me_name: m.as_ref().map(|x| x.name.clone()),
                base_recall: b.as_ref().map(|x| x.recall),
                me_recall: m.as_ref().map(|x| x.recall),
                base_qps: b.as_ref().map(|x| x.qps),
                me_qps: m.as_ref().map(|x| x.qps),
                ratio,
            });
        }
    }
    Ok(out)
}
