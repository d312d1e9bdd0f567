//! `annbench history`: a series of labelled runs, its change points, and the regression gate.

use super::report::{Source, emit, load};
use crate::metrics::changepoint;
use crate::report::history::order::Order;
use crate::report::history::{self, HistoryFormat, HistoryOptions};
use crate::report::select::select;
use clap::Args;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub source: Source,
    /// The labels of the series, in order, or globs such as 'nightly-*' (expanded in natural
    /// order: nightly-9 before nightly-10), comma-separated or repeated; a label that holds a
    /// comma is named whole. Default: every label of the store.
    #[arg(long, value_name = "LABELS")]
    pub series: Vec<String>,
    /// given (as --series lists them; the default with --series), time (when each label's
    /// run started; the default without), or version (the server version, compared as
    /// numbers).
    #[arg(long, value_parser = clap::value_parser!(Order))]
    pub order: Option<Order>,
    /// Ratios against this label (default: the first run of the series).
    #[arg(long)]
    pub base: Option<String>,
    /// Only points of this algorithm (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub algorithm: Vec<String>,
    /// Recall thresholds of the best-QPS-at-recall lines.
    #[arg(long, value_delimiter = ',', default_value = "0.99,0.95,0.9", value_parser = super::report::parse_recall)]
    pub recall: Vec<f64>,
    /// text (Otava's layout: one row per run, a marker line at each change), markdown, csv
    /// (one row per line and run) or json (elements, lines, change points with Otava's
    /// fields).
    #[arg(long, default_value = "text", value_parser = clap::value_parser!(HistoryFormat))]
    pub format: HistoryFormat,
    /// Runs analysed at once (Otava's --window), 2 or more.
    #[arg(long, default_value_t = history::DEFAULT_WINDOW, value_parser = parse_window)]
    pub window: usize,
    /// A change point is kept when its t-test p-value is below this (Otava's -P), above 0
    /// and at most 1.
    #[arg(long, default_value_t = changepoint::DEFAULT_MAX_PVALUE, value_parser = parse_pvalue)]
    pub p_value: f64,
    /// ... and its magnitude is above this (Otava's -M): the larger of mean after / mean
    /// before - 1 and its reverse, in absolute value, e.g. 2% or 0.02 (a halving is 100%).
    #[arg(long, default_value = "2%", value_parser = parse_magnitude)]
    pub magnitude: f64,
    /// same: refuse a series whose runs came from several client hosts (a host change would
    /// look like a change point); any: analyse them together.
    #[arg(long, default_value = "same", value_parser = ["same", "any"])]
    pub hosts: String,
    /// regression: exit with status 1 when the newest run lies after a regression change
    /// point (QPS or recall down, server CPU or switches per query up) of any line whose
    /// p-value is below --p-value divided by the number of series searched.
    #[arg(long, value_parser = ["regression"])]
    pub fail_on: Option<String>,
}

/// Runs analysed at once: 2 or more.
fn parse_window(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(w) if w >= 2 => Ok(w),
        _ => Err(format!(
            "'{text}': give a whole number of runs, 2 or more, e.g. 8"
        )),
    }
}

/// A probability in (0, 1], in words when it is not.
fn parse_pvalue(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err(format!(
            "'{text}': give a probability above 0 and at most 1, e.g. 0.001"
        )),
    }
}

/// `2%` or `0.02` (any share of 0 or more: Otava's magnitude of a halving is 1).
fn parse_magnitude(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
        _ => Err(format!(
            "'{text}': give a share of 0 or more, such as 2% or 0.02"
        )),
    }
}

impl HistoryArgs {
    pub fn options(&self) -> HistoryOptions {
        HistoryOptions {
            series: self.series.clone(),
            order: self.order.unwrap_or(Order::default_for(&self.series)),
            base: self.base.clone(),
            algorithms: self.algorithm.clone(),
            thresholds: self.recall.clone(),
            change: changepoint::Options {
                window: self.window,
                max_pvalue: self.p_value,
                min_magnitude: self.magnitude,
            },
            hosts_any: self.hosts == "any",
        }
    }
}

pub fn run(args: HistoryArgs) -> crate::Result<()> {
    let src = &args.source;
    let points = select(load(src)?, None, src.clients)?;
    let h = history::history(&points, &args.options())?;
    emit(src, &h.render(args.format)?)?;
    if args.fail_on.is_some() {
        let failing = h.gate();
        if let Some((line, c)) = failing.first() {
            return Err(crate::Error::Regression(format!(
                "regression: the newest run ('{}') lies after {} regression change point(s) \
                 with p below {:.1e}, first {} {:+.1}% at '{}' (p = {:.2e}) [{}]",
                h.elements[h.elements.len() - 1].label,
                failing.len(),
                h.gate_pvalue(),
                c.metric.name(),
                c.forward_change_percent,
                c.label,
                c.pvalue,
                line.name
            )));
        }
    }
    Ok(())
}
