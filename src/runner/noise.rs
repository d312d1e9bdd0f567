//! The machine's noise over a run, said once at its end instead of a warning per point: how
//! far the passes of a point spread, how much the CPU speed probe drifted, and how many
//! figures are flagged. Between runs, a difference inside the drift cannot be told from the
//! machine: the summary then points to interleaved runs (several servers in one run).

use super::SweepPoint;
use crate::metrics::interval::median;

/// What the measured points of a run say about the machine's noise.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Noise {
    /// Points measured by the run (stored ones are not counted).
    pub points: usize,
    /// Of those, with a flag (`~`).
    pub flagged: usize,
    /// Median over the points of the passes' coefficient of variation.
    pub median_cv: Option<f64>,
    /// Median over the points of the 95% interval's half-width, as a share of the median.
    pub median_half_width: Option<f64>,
    /// Spread of the CPU speed probe over every pass of the run: (95th - 5th percentile) /
    /// median. Slow drift of the machine shows here.
    pub probe_drift: Option<f64>,
    /// Some point ran interleaved with other servers.
    pub interleaved: bool,
}

impl Noise {
    /// The noise of the points this run measured.
    pub fn of(points: &[SweepPoint]) -> Noise {
        let measured: Vec<&crate::results::PointResult> = points
            .iter()
            .filter(|p| !p.skipped)
            .map(|p| &p.result)
            .collect();
        let cvs: Vec<f64> = measured.iter().filter_map(|p| p.metrics.qps_cv).collect();
        let widths: Vec<f64> = measured
            .iter()
            .filter_map(|p| {
                let i = p.metrics.qps_interval()?;
                (p.metrics.qps > 0.0).then(|| (i.high - i.low) / 2.0 / p.metrics.qps)
            })
            .collect();
        let mut probes: Vec<f64> = measured
            .iter()
            .flat_map(|p| &p.passes)
            .filter_map(|p| p.interference.and_then(|i| i.cpu_probe_us))
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        probes.sort_by(f64::total_cmp);
        let probe_drift = if probes.len() >= 10 {
            let at = |q: f64| probes[((probes.len() - 1) as f64 * q).round() as usize];
            median(&probes).map(|m| (at(0.95) - at(0.05)) / m)
        } else {
            None
        };
        Noise {
            points: measured.len(),
            flagged: measured
                .iter()
                .filter(|p| !p.metrics.flags.is_empty())
                .count(),
            median_cv: median(&cvs),
            median_half_width: median(&widths),
            probe_drift,
            interleaved: measured.iter().any(|p| p.metrics.interleave.is_some()),
        }
    }

    /// The summary's lines; none when nothing was measured.
    pub fn lines(&self) -> Vec<String> {
        if self.points == 0 {
            return Vec::new();
        }
        let pct = |x: f64| format!("{:.1}%", x * 100.0);
        let mut spread = Vec::new();
        if let Some(cv) = self.median_cv {
            spread.push(format!(
                "the passes of a point spread by {} (median CV)",
                pct(cv)
            ));
        }
        if let Some(w) = self.median_half_width {
            spread.push(format!("95% intervals +-{} of the median", pct(w)));
        }
        if let Some(d) = self.probe_drift {
            spread.push(format!(
                "the CPU speed probe varied {} over the run (5th to 95th percentile)",
                pct(d)
            ));
        }
        let mut out = Vec::new();
        if !spread.is_empty() {
            out.push(format!("noise on this machine: {}", spread.join("; ")));
        }
        if self.flagged > 0 {
            out.push(format!(
                "~ {} of {} figure(s) flagged: an interval wider than 10% of the median, heavy \
                 interference or stalled passes (the details are in each point's file; \
                 docs/methodology.md)",
                self.flagged, self.points
            ));
        }
        if !self.interleaved {
            let drift = self
                .probe_drift
                .map_or(String::new(), |d| format!(" (here up to {})", pct(d)));
            out.push(format!(
                "between runs, differences inside the machine's drift{drift} cannot be told from \
                 it: to compare servers, measure them in one interleaved run \
                 (--postgres a=URL --postgres b=URL, then annbench compare; docs/methodology.md)"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Interference, Pass};

    fn point(cv: f64, flagged: bool, probes: &[f64]) -> SweepPoint {
        let mut r = crate::report::testutil::point("mariadb", &[], &[], 0.9, 100.0);
        r.metrics.qps_cv = Some(cv);
        r.metrics.qps_ci_low = Some(100.0 * (1.0 - cv));
        r.metrics.qps_ci_high = Some(100.0 * (1.0 + cv));
        if flagged {
            r.metrics.flags = vec![crate::results::Flag::Spread];
        }
        r.passes = probes
            .iter()
            .map(|&p| Pass {
                interference: Some(Interference {
                    cpu_probe_us: Some(p),
                    ..Interference::default()
                }),
                ..Pass::default()
            })
            .collect();
        SweepPoint {
            path: "p.hdf5".into(),
            skipped: false,
            result: r,
        }
    }

    #[test]
    fn the_summary_states_spread_drift_and_flags_once() {
        let slow: Vec<f64> = (0..20).map(|i| 100.0 + i as f64).collect();
        let points = vec![
            point(0.02, false, &slow),
            point(0.2, true, &slow),
            point(0.04, false, &[]),
        ];
        let n = Noise::of(&points);
        assert_eq!((n.points, n.flagged), (3, 1));
        assert_eq!(n.median_cv, Some(0.04));
        // Probe values 100..=119 twice: 5th percentile 101, 95th 118, median 109.5.
        let d = n.probe_drift.unwrap();
        assert!((d - 17.0 / 109.5).abs() < 0.01, "{d}");
        let text = n.lines().join("\n");
        assert!(text.contains("1 of 3 figure(s) flagged"), "{text}");
        assert!(text.contains("interleaved run"), "{text}");
    }

    #[test]
    fn stored_points_say_nothing() {
        let mut p = point(0.5, true, &[]);
        p.skipped = true;
        assert!(Noise::of(&[p]).lines().is_empty());
    }
}
