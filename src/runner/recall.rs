//! Recall from returned ids: their distances recomputed by the client from the train vectors.

use crate::dataset::Dataset;
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView2};

/// The returned ids' distances from their queries, recomputed by the client.
pub struct Rescored {
    /// `+inf` for a gap (-1), a repeated id and an id with no train row.
    pub distances: Array2<f32>,
    /// Queries whose answer repeats an id (each repeat scored once).
    pub repeated: usize,
    /// Returned ids with no train row, and the first of them as (query, id).
    pub unmapped: usize,
    pub first_unmapped: Option<(usize, i64)>,
}

/// Distances of the returned ids from their queries, each from the train row `row_of` maps it
/// to (the id itself in a sweep, the row a tag holds at a streaming step).
pub fn rescore(
    data: &Dataset,
    queries: ArrayView2<'_, f32>,
    neighbors: ArrayView2<'_, i64>,
    row_of: impl Fn(i64) -> Option<usize>,
) -> Rescored {
    let metric: Metric = data.metric;
    let mut out = Rescored {
        distances: Array2::from_elem(neighbors.raw_dim(), f32::INFINITY),
        repeated: 0,
        unmapped: 0,
        first_unmapped: None,
    };
    for (i, ids) in neighbors.rows().into_iter().enumerate() {
        let query = queries.row(i);
        let query: std::borrow::Cow<'_, [f32]> = match query.as_slice() {
            Some(q) => q.into(),
            None => query.to_vec().into(),
        };
        let mut repeated = false;
        for (j, &id) in ids.iter().enumerate() {
            if id == -1 {
                continue;
            }
            if ids.iter().take(j).any(|&p| p == id) {
                repeated = true;
                continue;
            }
            let Some(row) = row_of(id) else {
                out.unmapped += 1;
                out.first_unmapped.get_or_insert((i, id));
                continue;
            };
            let row = data.train.row(row);
            out.distances[[i, j]] = match row.as_slice() {
                Some(r) => metric.distance(r, &query),
                None => metric.distance(&row.to_vec(), &query),
            };
        }
        out.repeated += usize::from(repeated);
    }
    out
}

/// Distances of the returned ids, recomputed from the train vectors (`+inf` for missing or
/// repeated ids). Returns them and the number of queries with a repeated id. An id outside the
/// table is an error: the backend is answering from some other data.
pub fn recompute_distances(
    data: &Dataset,
    queries: ArrayView2<'_, f32>,
    neighbors: ArrayView2<'_, i64>,
) -> Result<(Array2<f32>, usize)> {
    let n = data.train.nrows();
    let r = rescore(data, queries, neighbors, |id| {
        usize::try_from(id).ok().filter(|&row| row < n)
    });
    if let Some((i, id)) = r.first_unmapped {
        return Err(Error::Backend(format!(
            "query {i}: the backend returned id {id}, but the train set has rows 0..{n}"
        )));
    }
    Ok((r.distances, r.repeated))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn distances_are_recomputed_and_repeats_or_gaps_never_count() {
        let data = Dataset {
            name: "t".into(),
            metric: Metric::Euclidean,
            train: array![[0.0f32, 0.0], [3.0, 4.0], [6.0, 8.0]],
            test: array![[0.0f32, 0.0]],
            ground_truth: None,
        };
        let ids = array![[1i64, 1, -1, 2]];
        let (d, dups) = recompute_distances(&data, data.test.view(), ids.view()).unwrap();
        assert_eq!(d.row(0).to_vec(), [5.0, f32::INFINITY, f32::INFINITY, 10.0]);
        assert_eq!(dups, 1);
        let bad = array![[3i64]];
        assert!(recompute_distances(&data, data.test.view(), bad.view()).is_err());
    }
}
