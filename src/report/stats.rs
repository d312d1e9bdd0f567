//! Summary statistics of a set of ratios: pure functions with hand-computed tests.

use serde::Serialize;

/// min, max, mean, median and sample standard deviation of some values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (divides by n - 1); `None` for a single value.
    pub stddev: Option<f64>,
}

/// The summary of `values`, or `None` when there are none. Values that are not finite are
/// left out (a ratio against a zero QPS, say).
pub fn summary(values: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(Summary {
        n: v.len(),
        min: v[0],
        max: v[v.len() - 1],
        mean: mean(&v),
        median: median_sorted(&v),
        stddev: stddev(&v),
    })
}

/// Arithmetic mean; NaN for no values.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Median of sorted values: the middle one, or the mean of the two middle ones.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Sample standard deviation (n - 1 in the denominator); `None` for fewer than 2 values.
pub fn stddev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_even_count() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum 32, sample var 32/7.
        let s = summary(&[9.0, 2.0, 4.0, 5.0, 4.0, 7.0, 4.0, 5.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.max, s.mean, s.median),
            (8, 2.0, 9.0, 5.0, 4.5)
        );
        assert!((s.stddev.unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn by_hand_odd_count_and_single() {
        // 0.5, 1, 3: mean 1.5, median 1, deviations -1, -0.5, 1.5 -> ss 3.5, var 1.75.
        let s = summary(&[3.0, 0.5, 1.0]).unwrap();
        assert_eq!((s.mean, s.median), (1.5, 1.0));
        assert!((s.stddev.unwrap() - 1.75f64.sqrt()).abs() < 1e-12);
        let one = summary(&[2.5]).unwrap();
        assert_eq!(
            (one.min, one.max, one.median, one.stddev),
            (2.5, 2.5, 2.5, None)
        );
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(summary(&[]), None);
        assert_eq!(summary(&[f64::NAN, f64::INFINITY]), None);
        assert_eq!(summary(&[f64::NAN, 2.0]).unwrap().n, 1);
    }
}
