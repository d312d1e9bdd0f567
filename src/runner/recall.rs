//! Recall from returned ids: their distances recomputed by the client from the train vectors.

use crate::dataset::Dataset;
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView2};

/// Distances of the returned ids, recomputed from the train vectors (`+inf` for missing or
/// repeated ids). Returns them and the number of queries with a repeated id. An id outside the
/// table is an error: the backend is answering from some other data.
pub fn recompute_distances(
    data: &Dataset,
    queries: ArrayView2<'_, f32>,
    neighbors: ArrayView2<'_, i64>,
) -> Result<(Array2<f32>, usize)> {
    let n = data.train.nrows() as i64;
    let metric: Metric = data.metric;
    let mut out = Array2::from_elem(neighbors.raw_dim(), f32::INFINITY);
    let mut duplicates = 0;
    for (i, ids) in neighbors.rows().into_iter().enumerate() {
        let query = queries.row(i);
        let query = query.as_slice().unwrap_or(&[]);
        let mut repeated = false;
        for (j, &id) in ids.iter().enumerate() {
            if id == -1 {
                continue;
            }
            if !(0..n).contains(&id) {
                return Err(Error::Backend(format!(
                    "query {i}: the backend returned id {id}, but the train set has rows 0..{n}"
                )));
            }
            if ids.iter().take(j).any(|&p| p == id) {
                repeated = true;
                continue;
            }
            let row = data.train.row(id as usize);
            out[[i, j]] = match row.as_slice() {
                Some(r) => metric.distance(r, query),
                None => metric.distance(&row.to_vec(), query),
            };
        }
        duplicates += usize::from(repeated);
    }
    Ok((out, duplicates))
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
