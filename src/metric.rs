//! Distance metrics as ann-benchmarks names them. `euclidean` maps to L2 and `angular` to
//! cosine distance on both servers.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A supported distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// L2 distance.
    Euclidean,
    /// Cosine distance, 1 - cos(a, b).
    Angular,
}

impl Metric {
    /// The ann-benchmarks name.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Euclidean => "euclidean",
            Metric::Angular => "angular",
        }
    }

    /// Distance between two vectors in f64 accumulation (used to recompute the distances of
    /// returned ids; not the ground-truth hot path).
    pub fn distance(self, a: &[f32], b: &[f32]) -> f32 {
        debug_assert_eq!(a.len(), b.len());
        match self {
            Metric::Euclidean => {
                let s: f64 = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| {
                        let d = f64::from(*x) - f64::from(*y);
                        d * d
                    })
                    .sum();
                s.sqrt() as f32
            }
            Metric::Angular => {
                let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
                for (x, y) in a.iter().zip(b) {
                    let (x, y) = (f64::from(*x), f64::from(*y));
                    dot += x * y;
                    na += x * x;
                    nb += y * y;
                }
                if na == 0.0 || nb == 0.0 {
                    return 1.0;
                }
                (1.0 - dot / (na.sqrt() * nb.sqrt())) as f32
            }
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = crate::Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "euclidean" => Ok(Metric::Euclidean),
            "angular" => Ok(Metric::Angular),
            "hamming" | "jaccard" | "dot" => Err(crate::Error::Dataset(format!(
                "distance '{s}' is not supported by these backends (MariaDB and pgvector \
                 benchmarks here use euclidean or angular)"
            ))),
            other => Err(crate::Error::Dataset(format!(
                "unknown distance '{other}': expected euclidean or angular"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_by_hand() {
        assert_eq!(Metric::Euclidean.distance(&[0.0, 0.0], &[3.0, 4.0]), 5.0);
        assert!((Metric::Angular.distance(&[1.0, 0.0], &[0.0, 2.0]) - 1.0).abs() < 1e-7);
        assert!(Metric::Angular.distance(&[1.0, 1.0], &[2.0, 2.0]).abs() < 1e-7);
    }

    #[test]
    fn unsupported_metric_is_named() {
        let err = "jaccard".parse::<Metric>().unwrap_err().to_string();
        assert!(
            err.contains("jaccard") && err.contains("not supported"),
            "{err}"
        );
    }
}
