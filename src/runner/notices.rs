//! What the run log and the result file say about a measured point: wrong or short answers,
//! stalled and disturbed passes, flags, and a client that may be the bottleneck.

use super::assess::{Figures, Policy};
use super::interference;
use crate::results::Pass;

/// The client used more than this share of a core per connection: it may be the bottleneck.
pub const CLIENT_CPU_WARN_SHARE: f64 = 0.5;

/// What the recall pass found.
pub(super) struct FirstRun {
    pub k: usize,
    pub queries: usize,
    pub duplicates: usize,
    pub overlong: usize,
    pub short: usize,
}

/// The notices of a point from its passes and figures.
pub(super) fn point_notices(
    passes: &[Pass],
    clients: usize,
    f: &Figures,
    first: &FirstRun,
    policy: &Policy,
) -> Vec<String> {
    let k = first.k;
    let mut out = Vec::new();
    if first.duplicates > 0 {
        out.push(format!(
            "the backend returned the same id twice for {} queries; repeats were not counted",
            first.duplicates
        ));
    }
    if first.overlong > 0 {
        out.push(format!(
            "the backend returned more than k={k} ids for {} queries",
            first.overlong
        ));
    }
    if first.short > 0 {
        out.push(format!(
            "the backend returned fewer than k={k} ids for {} of {} queries (for pgvector: \
             ef_search below k, or iterative scans off); missing ids count as misses",
            first.short, first.queries
        ));
    }
    let left_out: Vec<&Pass> = passes.iter().filter(|p| !p.used).collect();
    let stalled = passes.iter().filter(|p| p.stalled).count();
    let heavy: Vec<&Pass> = passes
        .iter()
        .filter(|p| p.interference.is_some_and(|i| i.heavy))
        .collect();
    if stalled > 0 {
        let slowest = passes
            .iter()
            .filter(|p| p.stalled)
            .filter_map(|p| p.latency.map(|l| l.max))
            .fold(0.0, f64::max);
        out.push(format!(
            "{stalled} of {} passes stalled (far slower than the others; slowest query {slowest:.3} s)",
            passes.len()
        ));
    }
    if let Some(worst) = heavy.iter().filter_map(|p| p.interference).max_by(|a, b| {
        a.other_share()
            .unwrap_or(0.0)
            .total_cmp(&b.other_share().unwrap_or(0.0))
    }) {
        out.push(format!(
            "{} of {} passes ran under heavy interference (worst: {})",
            heavy.len(),
            passes.len(),
            interference::describe(&worst)
        ));
    }
    if !left_out.is_empty() {
        out.push(format!(
            "{} disturbed passes were measured again and left out of the figures",
            left_out.len()
        ));
    }
    if !f.flags.is_empty() {
        let names: Vec<&str> = f.flags.iter().map(|f| f.as_str()).collect();
        let ci = f
            .interval
            .map(|i| format!(" [{:.1}, {:.1}]", i.low, i.high))
            .unwrap_or_default();
        // Say only what happened: extra passes ran only when some fit in --max-time.
        let max_time = policy.max_time.as_secs_f64();
        let builds = passes.iter().map(|p| p.build).max().map_or(1, |b| b + 1);
        let after = if passes.len() > policy.runs * builds {
            format!("re-measured within --max-time {max_time:.0} s")
        } else {
            format!("no extra pass fit in --max-time {max_time:.0} s")
        };
        out.push(format!(
            "figure flagged ({}): QPS {:.1}{ci} from {} passes; {after}",
            names.join(", "),
            f.qps,
            f.used,
        ));
    }
    out.extend(client_cpu_notice(passes, clients));
    out
}
/// Whether a notice of [`point_notices`] is about the machine's noise (stalled or disturbed
/// passes, a flagged figure): stored with the point and marked `~` in tables, but summed up
/// once at the end of a run (`runner::noise`) instead of a warning line per point.
pub fn is_noise(notice: &str) -> bool {
    notice.starts_with("figure flagged (")
        || notice.contains(" passes stalled (")
        || notice.contains(" passes ran under heavy interference")
        || notice.contains(" disturbed passes were measured again")
}

/// A notice when the median pass's client CPU exceeded [`CLIENT_CPU_WARN_SHARE`] of a core per
/// connection: the numbers may then measure the client rather than the server.
fn client_cpu_notice(passes: &[Pass], clients: usize) -> Option<String> {
    let mut used: Vec<&Pass> = passes
        .iter()
        .filter(|p| p.used && p.wall_seconds > 0.0)
        .collect();
    used.sort_by(|a, b| a.qps().total_cmp(&b.qps()));
    let mid = used.get(used.len().saturating_sub(1) / 2)?;
    let cpu = mid.client_cpu_seconds?;
    let share = cpu / mid.wall_seconds / clients.max(1) as f64;
    (share > CLIENT_CPU_WARN_SHARE).then(|| {
        format!(
            "client CPU was {:.0}% of a core per connection ({cpu:.3} s over {:.3} s wall, {clients} \
             client(s)): the client may be the bottleneck, not the server",
            share * 100.0,
            mid.wall_seconds
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_cpu_notice_uses_the_median_pass_per_connection() {
        let pass = |wall: f64, cpu: f64| Pass {
            wall_seconds: wall,
            queries: 10,
            client_cpu_seconds: Some(cpu),
            ..Pass::default()
        };
        // Median pass: 1 s wall, 1.2 s CPU over 2 clients = 60% per connection -> notice.
        let n = client_cpu_notice(&[pass(2.0, 0.1), pass(1.0, 1.2), pass(0.5, 0.1)], 2).unwrap();
        assert!(n.contains("60%"), "{n}");
        assert!(client_cpu_notice(&[pass(1.0, 0.4)], 1).is_none());
        assert!(client_cpu_notice(&[], 1).is_none());
    }
}
