//! A series is the points of one algorithm, label and client count: the unit that tables,
//! Pareto frontiers and comparisons pick from.

use crate::dataset::filters::FilterKind;
use crate::results::PointResult;
use std::collections::BTreeSet;
use std::fmt;

/// (algorithm, label, clients). Orders by algorithm, then label (unlabelled first), then
/// clients, which is the row order of every report.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesKey {
    pub algorithm: String,
    pub label: Option<String>,
    pub clients: usize,
    /// The filter's selectivity of filtered points (`selectivity` query arg): points at
    /// different selectivities answer different questions, so they never share a frontier,
    /// a best-at-recall row or a recall-matched comparison.
    pub selectivity: Option<String>,
    /// The filter's kind (`filter` query arg, range by default): nor do points of two kinds.
    pub filter: Option<crate::dataset::filters::FilterKind>,
}

impl SeriesKey {
    /// The series `point` belongs to.
    pub fn of(point: &PointResult) -> Self {
        SeriesKey {
            algorithm: point.algorithm.clone(),
            label: point.label.clone(),
            clients: point.clients,
            selectivity: super::point_filter::selectivity(point).map(str::to_string),
            filter: super::point_filter::filter_kind(point),
        }
    }
}

impl fmt::Display for SeriesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.algorithm)?;
        if let Some(label) = &self.label {
            write!(f, " [{label}]")?;
        }
        write!(f, " x{} clients", self.clients)?;
        if let Some(s) = &self.selectivity {
            write!(f, " at selectivity {s}")?;
        }
        if let Some(k) = self.filter.filter(|k| *k != FilterKind::Range) {
            write!(f, " ({k} filter)")?;
        }
        Ok(())
    }
}

/// The distinct series of `points`, sorted.
pub fn series_keys<'a>(points: impl IntoIterator<Item = &'a PointResult>) -> Vec<SeriesKey> {
    let set: BTreeSet<SeriesKey> = points.into_iter().map(SeriesKey::of).collect();
    set.into_iter().collect()
}

/// Which columns a report needs to tell its series apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Distinct {
    /// More than one label (counting "no label") among the points.
    pub labels: bool,
    /// More than one client count among the points.
    pub clients: bool,
}

impl Distinct {
    /// What varies among `points`.
    pub fn of<'a>(points: impl IntoIterator<Item = &'a PointResult>) -> Self {
        let mut labels: BTreeSet<Option<&str>> = BTreeSet::new();
        let mut clients: BTreeSet<usize> = BTreeSet::new();
        for p in points {
            labels.insert(p.label.as_deref());
            clients.insert(p.clients);
        }
        Distinct {
            labels: labels.len() > 1,
            clients: clients.len() > 1,
        }
    }
}

/// An error unless all `points` are of one dataset and one count (k): best-QPS tables and
/// comparisons across datasets or k would compare unlike things.
pub fn check_one_dataset<'a>(
    points: impl IntoIterator<Item = &'a PointResult>,
    what: &str,
) -> crate::Result<()> {
    let sets: BTreeSet<(&str, usize)> = points
        .into_iter()
        .map(|p| (p.dataset.as_str(), p.count))
        .collect();
    if sets.len() > 1 {
        let list: Vec<String> = sets.iter().map(|(d, k)| format!("{d} (k={k})")).collect();
        return Err(crate::Error::Config(format!(
            "a {what} needs points of one dataset and one count, got {}; select one with \
             --dataset and --count",
            list.join(", ")
        )));
    }
    Ok(())
}

/// Orders parameter maps key by key: numbers numerically (so `ef_search=40` comes before
/// `ef_search=200`), strings alphabetically, in the maps' own key order.
pub fn cmp_params(a: &crate::params::Params, b: &crate::params::Params) -> std::cmp::Ordering {
    use serde_json::Value;
    use std::cmp::Ordering;
    let value = |x: &Value, y: &Value| match (x.as_f64(), y.as_f64()) {
        (Some(p), Some(q)) => p.total_cmp(&q),
        _ => x.to_string().cmp(&y.to_string()),
    };
    for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
        let o = ka.cmp(kb).then_with(|| value(va, vb));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// A hashable identity of a point's algorithm, build and query parameters (parameter names
/// sorted, so the order in a config does not matter). Dataset, count, label and clients are
/// not part of it.
pub fn params_identity(p: &PointResult) -> String {
    let canon = |params: &crate::params::Params| {
        let mut pairs: Vec<(&String, String)> =
            params.iter().map(|(k, v)| (k, v.to_string())).collect();
        pairs.sort();
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{}|{}|{}",
        p.algorithm,
        canon(&p.build_args),
        canon(&p.query_args)
    )
}

/// (dataset, count, algorithm, label, clients) of a point, borrowed.
fn head(p: &PointResult) -> (&str, usize, &str, Option<&str>, usize) {
    let label = p.label.as_deref();
    (
        p.dataset.as_str(),
        p.count,
        p.algorithm.as_str(),
        label,
        p.clients,
    )
}

/// The report order of points: dataset, count, series, then build and query parameters.
pub fn cmp_points(a: &PointResult, b: &PointResult) -> std::cmp::Ordering {
    // Same order as SeriesKey, without building keys (this runs n log n times).
    head(a)
        .cmp(&head(b))
        .then_with(|| cmp_params(&a.build_args, &b.build_args))
        .then_with(|| cmp_params(&a.query_args, &b.query_args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::{params, point};
    use std::cmp::Ordering;

    #[test]
    fn params_order_numerically() {
        let a = params(&[("M", 8), ("ef_search", 40)]);
        let b = params(&[("M", 8), ("ef_search", 200)]);
        assert_eq!(cmp_params(&a, &b), Ordering::Less);
        assert_eq!(cmp_params(&b, &b), Ordering::Equal);
    }

    #[test]
    fn mixed_datasets_are_refused_with_the_fix() {
        let mut b = point("mariadb", &[], &[], 1.0, 1.0);
        b.count = 100;
        let err = check_one_dataset(&[point("mariadb", &[], &[], 1.0, 1.0), b], "recall table")
            .unwrap_err()
            .to_string();
        assert!(err.contains("k=100") && err.contains("--count"), "{err}");
    }
}
