//! Time estimates of a sweep from earlier measurements: cost grows as `rows^a`, linearly with
//! the dimension. With measurements at two or more sizes the exponent `a` is fitted (least
//! squares in log-log), else the growth measured in `docs/scaling.md` is assumed.

/// Growth of the load time with rows (both servers load at a steady rate).
pub const LOAD_EXPONENT: f64 = 1.0;
/// Growth of the index build time with rows (HNSW inserts cost about log n each; the fits
/// in docs/scaling.md, from 25k to 250k rows of 1536-d data, are close to this).
pub const BUILD_EXPONENT: f64 = 1.1;
/// Growth of the time per query with rows at fixed parameters (graph search grows slowly).
pub const QUERY_EXPONENT: f64 = 0.2;

/// One earlier measurement: `seconds` for `rows` x `dim`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub rows: usize,
    pub dim: usize,
    pub seconds: f64,
    /// Where it comes from, e.g. the dataset name.
    pub source: String,
}

/// An estimate and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    /// The growth exponent used.
    pub exponent: f64,
    /// Whether the exponent was fitted from the samples (else assumed).
    pub fitted: bool,
    /// The samples' sources, nearest size first.
    pub basis: Vec<String>,
}

/// Estimated seconds for `rows` x `dim` from `samples` (positive times only); `None` without
/// samples. The nearest sample in log size anchors the estimate.
pub fn extrapolate(
    samples: &[Sample],
    rows: usize,
    dim: usize,
    default_exp: f64,
) -> Option<Estimate> {
    let good: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.seconds > 0.0 && s.rows > 0 && s.dim > 0)
        .collect();
    if good.is_empty() || rows == 0 {
        return None;
    }
    // Per dimension, so samples of other dimensions fit the same line.
    let pts: Vec<(f64, f64)> = good
        .iter()
        .map(|s| ((s.rows as f64).ln(), (s.seconds / s.dim as f64).ln()))
        .collect();
    let (fitted, exponent) = match fit_slope(&pts) {
        Some(a) => (true, a.clamp(0.0, 2.5)),
        None => (false, default_exp),
    };
    let target = (rows as f64).ln();
    let mut order: Vec<usize> = (0..good.len()).collect();
    order.sort_by(|&a, &b| {
        (pts[a].0 - target)
            .abs()
            .total_cmp(&(pts[b].0 - target).abs())
    });
    let anchor = good[order[0]];
    let seconds = anchor.seconds
        * (rows as f64 / anchor.rows as f64).powf(exponent)
        * (dim as f64 / anchor.dim as f64);
    Some(Estimate {
        seconds,
        exponent,
        fitted,
        basis: order.iter().map(|&i| good[i].source.clone()).collect(),
    })
}

/// Least-squares slope, when the x values span at least a factor 1.5 (else `None`).
fn fit_slope(pts: &[(f64, f64)]) -> Option<f64> {
    let n = pts.len() as f64;
    let (lo, hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
            (l.min(p.0), h.max(p.0))
        });
    if pts.len() < 2 || hi - lo < 1.5f64.ln() {
        return None;
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// `1h 05m`, `12m 30s`, `45 s`.
pub fn human_seconds(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(rows: usize, dim: usize, seconds: f64) -> Sample {
        Sample {
            rows,
            dim,
            seconds,
            source: format!("{rows}"),
        }
    }

    #[test]
    fn one_sample_scales_with_the_assumed_growth() {
        let e = extrapolate(&[s(100, 10, 2.0)], 400, 20, 1.0).unwrap();
        assert!((e.seconds - 16.0).abs() < 1e-9 && !e.fitted, "{e:?}");
        assert_eq!(extrapolate(&[], 10, 10, 1.0), None);
        assert_eq!(extrapolate(&[s(100, 10, 0.0)], 10, 10, 1.0), None);
    }

    #[test]
    fn two_sizes_fit_the_exponent_and_the_nearest_anchors() {
        // seconds = rows^1.5 / 1000 exactly.
        let f = |n: usize| (n as f64).powf(1.5) / 1000.0;
        let e = extrapolate(&[s(1000, 8, f(1000)), s(4000, 8, f(4000))], 16000, 8, 1.0).unwrap();
        assert!(e.fitted && (e.exponent - 1.5).abs() < 1e-9, "{e:?}");
        assert!((e.seconds - f(16000)).abs() / f(16000) < 1e-9, "{e:?}");
        assert_eq!(e.basis, vec!["4000", "1000"]);
        // Sizes too close together to fit: the assumed exponent.
        let e = extrapolate(&[s(1000, 8, 1.0), s(1100, 8, 1.2)], 2000, 8, 1.0).unwrap();
        assert!(!e.fitted, "{e:?}");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_seconds(45.2), "45 s");
        assert_eq!(human_seconds(750.0), "12m 30s");
        assert_eq!(human_seconds(3900.0), "1h 05m");
    }
}
