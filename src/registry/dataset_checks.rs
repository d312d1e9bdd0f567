//! Whether a dataset fits an algorithm's declaration: its dimension and its metric, refused
//! before anything is sent to a server, with the registered algorithms that take it.

use super::{ALGORITHMS, AlgorithmDecl};
use crate::{Metric, Result};

/// Refuse a dimension above what `algorithm`'s table and index take, naming the registered
/// algorithms on the same server that take it.
pub fn check_dimension(algorithm: &AlgorithmDecl, dimension: usize) -> Result<()> {
    if dimension <= algorithm.max_dimension {
        return Ok(());
    }
    let others: Vec<String> = ALGORITHMS
        .iter()
        .filter(|a| a.database == algorithm.database && a.max_dimension >= dimension)
        .map(|a| format!("{} (up to {})", a.name, a.max_dimension))
        .collect();
    let hint = if others.is_empty() {
        String::new()
    } else {
        format!("; {} take(s) it", others.join(", "))
    };
    Err(crate::Error::Config(format!(
        "{}: its index takes at most {} dimensions; this dataset has {dimension}{hint} \
         (nothing was sent to the server)",
        algorithm.name, algorithm.max_dimension
    )))
}

/// Refuse a dataset whose metric `algorithm`'s index does not compare by (its declared
/// [`AlgorithmDecl::metrics`]), naming the registered algorithms that take it.
pub fn check_metric(algorithm: &AlgorithmDecl, metric: Metric) -> Result<()> {
    if algorithm.metrics.contains(&metric) {
        return Ok(());
    }
    let takes: Vec<&str> = algorithm.metrics.iter().map(|m| m.as_str()).collect();
    let example = match algorithm.metrics.first() {
        Some(Metric::Angular) => " (e.g. glove-25-angular)",
        Some(Metric::Euclidean) => " (e.g. sift-128-euclidean)",
        None => "",
    };
    let others: Vec<&str> = ALGORITHMS
        .iter()
        .filter(|a| a.database.is_some() && a.metrics.contains(&metric))
        .map(|a| a.name)
        .collect();
    let hint = if others.is_empty() {
        String::new()
    } else {
        format!(
            ", or an algorithm that takes {}: {}",
            metric.as_str(),
            others.join(", ")
        )
    };
    Err(crate::Error::Config(format!(
        "{}: its index compares vectors by {} only; this dataset is {}: use {} dataset{example}{hint} \
         (nothing was sent to the server)",
        algorithm.name,
        takes.join(" or "),
        metric.as_str(),
        algorithm
            .metrics
            .iter()
            .map(|m| match m {
                Metric::Angular => "an angular",
                Metric::Euclidean => "a euclidean",
            })
            .collect::<Vec<_>>()
            .join(" or "),
    )))
}
