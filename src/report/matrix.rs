//! The comparison matrix: several servers (run labels) against one base, as the published
//! relative-QPS tables lay it out: one row per matched point (the base's parameters) or per
//! best-QPS-at-recall threshold, one column per server, each cell that server's ratio to the
//! base with its interval and verdict (paired or unpaired, see [`super::compare`]) and the
//! server CPU per query ratio beside it. Each column is the [`Comparison`] of that server
//! with the base; the matrix lines their pairs up.

use super::compare::{CompareOptions, Comparison, MatchKind, Matched, compare_with};
use super::settings::{SettingDiff, settings_differ};
use crate::results::PointResult;

/// One row of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixRow {
    pub kind: MatchKind,
    pub algorithm: String,
    pub clients: usize,
    /// The recall threshold (recall rows).
    pub threshold: Option<f64>,
    /// The base's point (parameters); for a recall row, the base's best point at the
    /// threshold, `None` when the base did not reach it.
    pub base_name: Option<String>,
    /// The base's figure of the compared measure.
    pub base_value: Option<f64>,
    /// For each server, the index of its pair in its comparison's rows.
    pub cells: Vec<Option<usize>>,
}

/// Servers against a base.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub base: String,
    /// The servers compared with the base, in the order given.
    pub servers: Vec<String>,
    /// The comparison of each server with the base, in the same order.
    pub comparisons: Vec<Comparison>,
    /// Parameter rows first (in the first comparison's order, then rows only later servers
    /// have), then recall rows by threshold as given.
    pub rows: Vec<MatrixRow>,
    /// Settings and versions that differ between the base and the servers (labels in the
    /// order base, servers).
    pub settings: Vec<SettingDiff>,
}

impl Matrix {
    /// The pair of `server` (its index in [`Self::servers`]) in `row`, when it has one.
    pub fn cell(&self, row: &MatrixRow, server: usize) -> Option<&Matched> {
        row.cells
            .get(server)
            .copied()
            .flatten()
            .and_then(|i| self.comparisons.get(server)?.rows.get(i))
    }

    /// The labels in order: base, then the servers.
    pub fn labels(&self) -> Vec<&str> {
        std::iter::once(self.base.as_str())
            .chain(self.servers.iter().map(String::as_str))
            .collect()
    }

    /// The options every comparison of the matrix used.
    pub fn options(&self) -> &CompareOptions {
        &self.comparisons[0].options
    }
}

/// The row a pair belongs to: parameter pairs by the base's point, recall pairs by
/// threshold.
fn key(r: &Matched) -> (MatchKind, String, usize, Option<u64>, Option<String>) {
    let name = match r.kind {
        MatchKind::Params => r.base.as_ref().map(|s| s.name.clone()),
        MatchKind::Recall => None,
    };
    (
        r.kind,
        r.algorithm.clone(),
        r.clients,
        r.threshold.map(f64::to_bits),
        name,
    )
}

/// The matrix of `servers` against `base` (each compared as [`compare_with`] does).
pub fn matrix(
    points: &[PointResult],
    base: &str,
    servers: &[String],
    opts: &CompareOptions,
) -> crate::Result<Matrix> {
    if servers.is_empty() {
        return Err(crate::Error::Config(
            "no server to compare with the base: give --me LABEL (once per server)".into(),
        ));
    }
    for (i, s) in servers.iter().enumerate() {
        if servers[..i].contains(s) {
            return Err(crate::Error::Config(format!(
                "--me {s} is given twice: give each label once"
            )));
        }
    }
    let comparisons = servers
        .iter()
        .map(|s| compare_with(points, base, s, opts))
        .collect::<crate::Result<Vec<_>>>()?;
    let mut keys = Vec::new();
    let mut rows: Vec<MatrixRow> = Vec::new();
    for (s, c) in comparisons.iter().enumerate() {
        for (i, r) in c.rows.iter().enumerate() {
            let k = key(r);
            let at = match keys.iter().position(|x| *x == k) {
                Some(at) => at,
                None => {
                    keys.push(k);
                    rows.push(MatrixRow {
                        kind: r.kind,
                        algorithm: r.algorithm.clone(),
                        clients: r.clients,
                        threshold: r.threshold,
                        base_name: r.base.as_ref().map(|b| b.name.clone()),
                        base_value: r.base.as_ref().map(|b| b.value),
                        cells: vec![None; servers.len()],
                    });
                    rows.len() - 1
                }
            };
            rows[at].cells[s] = Some(i);
        }
    }
    // Parameter rows first, recall rows by the thresholds' order (stable within each).
    let order = |r: &MatrixRow| match r.kind {
        MatchKind::Params => 0,
        MatchKind::Recall => {
            1 + r
                .threshold
                .and_then(|t| opts.thresholds.iter().position(|x| *x == t))
                .unwrap_or(opts.thresholds.len())
        }
    };
    rows.sort_by_key(order);
    let labels: Vec<&str> = std::iter::once(base)
        .chain(servers.iter().map(String::as_str))
        .collect();
    Ok(Matrix {
        base: base.to_string(),
        servers: servers.to_vec(),
        settings: settings_differ(points, &labels),
        comparisons,
        rows,
    })
}
