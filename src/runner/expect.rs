//! `annbench run --expect cached|io-bound`: after a sweep, one warning for each point whose
//! storage reads say the other (docs/server-cost.md: a point is IO-bound when its server
//! read more than [`IO_BOUND_KIB_PER_QUERY`] KiB per query from storage), and one for the
//! points where the reads were not measured, so an expectation is never taken as met
//! unchecked.

use crate::report::names::point_name;
use crate::results::{IO_BOUND_KIB_PER_QUERY, PointResult, Storage};

/// The warnings of `expect` over `points` (those of the sweep, measured now or stored).
pub fn warnings<'a>(
    points: impl IntoIterator<Item = &'a PointResult>,
    expect: Storage,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut unmeasured = Vec::new();
    for p in points {
        let server = p.metrics.server.as_ref();
        let (Some(storage), Some(kib)) = (
            server.and_then(|s| s.storage()),
            server.and_then(|s| s.server_read_kib_per_query),
        ) else {
            unmeasured.push(format!("{}{}", point_name(p), clients_text(p)));
            continue;
        };
        if storage == expect {
            continue;
        }
        let reads = server
            .and_then(|s| s.io_reads_per_query)
            .map_or(String::new(), |r| {
                format!(", the data directory's device {r:.3} reads per query")
            });
        let side = match storage {
            Storage::IoBound => "above",
            Storage::Cached => "not above",
        };
        out.push(format!(
            "{}{}: expected {} but it is {}: the server read {kib:.3} KiB per query from \
             storage{reads} ({side} {IO_BOUND_KIB_PER_QUERY} KiB per query)",
            point_name(p),
            clients_text(p),
            expect.as_str(),
            storage.as_str(),
        ));
    }
    if !unmeasured.is_empty() {
        out.push(format!(
            "--expect {}: storage reads were not measured for {} point(s) ({}): a remote \
             server, or its processes' /proc/<pid>/io not readable by this user; nothing \
             to check there",
            expect.as_str(),
            unmeasured.len(),
            unmeasured.join(", ")
        ));
    }
    out
}

/// The clients and the label (a `--memory` series' `mem10-cold`) that tell points apart.
fn clients_text(p: &PointResult) -> String {
    let mut out = String::new();
    if p.clients > 1 {
        out.push_str(&format!(" x{} clients", p.clients));
    }
    if let Some(l) = &p.label {
        out.push_str(&format!(" [{l}]"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ServerCost;

    fn point(kib: Option<f64>) -> PointResult {
        let mut p = crate::report::testutil::point("pgvector", &[("m", 16)], &[], 0.9, 100.0);
        p.metrics.server = Some(ServerCost {
            server_read_kib_per_query: kib,
            io_reads_per_query: kib.map(|k| k / 8.0),
            io_bound: kib.map(|k| Storage::of_read_kib(k) == Storage::IoBound),
            ..ServerCost::default()
        });
        p
    }

    #[test]
    fn each_point_against_the_expectation_warns_once() {
        let pts = [point(Some(0.0)), point(Some(64.0)), point(Some(0.5))];
        let w = warnings(&pts, Storage::Cached);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("expected cached but it is io-bound"), "{w:?}");
        assert!(w[0].contains("64.000 KiB per query"), "{w:?}");
        assert!(w[0].contains("8.000 reads per query"), "{w:?}");
        // A --memory series' point is named by its series.
        let mut share = point(Some(64.0));
        share.label = Some("mem10-cold".into());
        let w = warnings([&share], Storage::Cached);
        assert!(w[0].contains("[mem10-cold]: expected cached"), "{w:?}");
        let w = warnings(&pts, Storage::IoBound);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w.iter()
                .all(|x| x.contains("expected io-bound but it is cached"))
        );
    }

    #[test]
    fn points_without_the_figure_are_named_not_taken_as_met() {
        let mut remote = point(None);
        remote.metrics.server = None;
        let w = warnings([&point(None), &remote], Storage::Cached);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("not measured for 2 point(s)"), "{w:?}");
        assert!(warnings(std::iter::empty(), Storage::Cached).is_empty());
    }

    #[test]
    fn expectations_are_read_in_words() {
        assert_eq!("cached".parse::<Storage>().unwrap(), Storage::Cached);
        assert_eq!("IO_bound".parse::<Storage>().unwrap(), Storage::IoBound);
        let e = "warm".parse::<Storage>().unwrap_err().to_string();
        assert!(e.contains("--expect warm: give cached or io-bound"), "{e}");
    }
}
