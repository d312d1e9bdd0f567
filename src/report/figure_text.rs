//! Figures as text people read: flags, a QPS with its interval, an interval.

use crate::metrics::interval::Interval;
use crate::results::Flag;

/// `a,b` of the flags (empty when none).
pub fn flags_text(flags: &[Flag]) -> String {
    flags
        .iter()
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// `~1234.5 [1200.0, 1250.3]`: the figure, `~` when flagged, and its interval when known,
/// with its coverage when below 95% (fewer than 6 passes): `[900.0, 1100.0] 75%`.
pub fn qps_text(qps: f64, interval: Option<Interval>, flagged: bool) -> String {
    let mark = if flagged { "~" } else { "" };
    match interval {
        Some(i) => format!("{mark}{qps:.1} {}", interval_text(i, 1)),
        None => format!("{mark}{qps:.1}"),
    }
}

/// `[low, high]` with `decimals`, and the coverage when it is below 95%.
pub fn interval_text(i: Interval, decimals: usize) -> String {
    let level = if i.level < crate::metrics::interval::LEVEL - 1e-9 {
        format!(" {:.0}%", i.level * 100.0)
    } else {
        String::new()
    };
    format!("[{:.decimals$}, {:.decimals$}]{level}", i.low, i.high)
}
