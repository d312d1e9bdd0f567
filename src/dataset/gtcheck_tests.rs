//! Each way ground truth can be wrong is refused; exact ground truth passes.

use super::*;
use crate::dataset::rng::Rng;
use crate::dataset::{GroundTruth, groundtruth};
use ndarray::{Array2, s};

fn data(metric: Metric, n: usize, q: usize, d: usize) -> Dataset {
    let mut rng = Rng::new(7);
    let train = Array2::from_shape_fn((n, d), |_| (rng.uniform() * 10.0 - 5.0) as f32);
    let test = Array2::from_shape_fn((q, d), |_| (rng.uniform() * 10.0 - 5.0) as f32);
    let gt = groundtruth::compute(train.view(), test.view(), metric, 10);
    Dataset {
        name: "t".into(),
        metric,
        train,
        test,
        ground_truth: Some(gt),
    }
}

fn err(ds: &Dataset) -> String {
    verify(ds).unwrap_err()
}

#[test]
fn exact_ground_truth_passes_and_small_files_are_checked_whole() {
    for metric in [Metric::Euclidean, Metric::Angular] {
        let ds = data(metric, 500, 40, 16);
        assert_eq!(verify(&ds), Ok(Coverage { rows: 40, of: 40 }));
    }
}

#[test]
fn reversed_rows_are_refused() {
    let mut ds = data(Metric::Euclidean, 500, 40, 16);
    let gt = ds.ground_truth.as_mut().unwrap();
    let ids = gt.neighbors.slice(s![5, ..;-1]).to_owned();
    let dist = gt.distances.slice(s![5, ..;-1]).to_owned();
    gt.neighbors.row_mut(5).assign(&ids);
    gt.distances.row_mut(5).assign(&dist);
    let e = err(&ds);
    assert!(
        e.contains("row 5 is not sorted") && e.contains("datasets groundtruth"),
        "{e}"
    );
}

#[test]
fn zeroed_distances_are_refused() {
    let mut ds = data(Metric::Angular, 500, 40, 16);
    ds.ground_truth.as_mut().unwrap().distances.fill(0.0);
    let e = err(&ds);
    assert!(
        e.contains("query 0, neighbour 0") && e.contains("does not match"),
        "{e}"
    );
}

#[test]
fn ids_of_other_rows_are_refused() {
    let mut ds = data(Metric::Euclidean, 500, 40, 16);
    let gt = ds.ground_truth.as_mut().unwrap();
    gt.neighbors.mapv_inplace(|id| (id + 1) % 500);
    assert!(err(&ds).contains("does not match"));
}

#[test]
fn a_row_listing_an_id_twice_is_refused() {
    let mut ds = data(Metric::Euclidean, 500, 40, 16);
    let gt = ds.ground_truth.as_mut().unwrap();
    // Sorted, and each distance its id's: only the repeat is wrong.
    let (id, dist) = (gt.neighbors[[9, 4]], gt.distances[[9, 4]]);
    gt.neighbors[[9, 5]] = id;
    gt.distances[[9, 5]] = dist;
    let e = err(&ds);
    assert!(
        e.contains(&format!(
            "row 9 lists train id {id} twice (positions 4 and 5)"
        )) && e.contains("datasets groundtruth"),
        "{e}"
    );
}

#[test]
fn the_other_metric_and_squared_distances_are_named() {
    let mut ds = data(Metric::Euclidean, 500, 40, 16);
    let cos = groundtruth::compute(ds.train.view(), ds.test.view(), Metric::Angular, 10);
    ds.ground_truth = Some(cos);
    let e = err(&ds);
    assert!(e.contains("look like angular distances"), "{e}");

    let mut ds = data(Metric::Euclidean, 500, 40, 16);
    ds.ground_truth
        .as_mut()
        .unwrap()
        .distances
        .mapv_inplace(|d| d * d);
    assert!(err(&ds).contains("squared euclidean"), "{}", err(&ds));

    let mut ds = data(Metric::Angular, 500, 40, 16);
    let l2 = groundtruth::compute(ds.train.view(), ds.test.view(), Metric::Euclidean, 10);
    ds.ground_truth = Some(GroundTruth { ..l2 });
    assert!(err(&ds).contains("does not match"), "{}", err(&ds));
}

#[test]
fn large_files_are_sampled_within_the_budget() {
    let mut ds = data(Metric::Euclidean, 300, 1000, 16);
    let budget = 100 * 10 * 16;
    assert_eq!(
        verify_within(&ds, budget),
        Ok(Coverage {
            rows: 100,
            of: 1000
        })
    );
    // The first row is always among the sampled ones.
    ds.ground_truth
        .as_mut()
        .unwrap()
        .distances
        .row_mut(0)
        .mapv_inplace(|d| d + 50.0);
    assert!(verify_within(&ds, budget).is_err());
}

#[test]
fn column_major_arrays_are_checked_too() {
    let mut ds = data(Metric::Angular, 200, 20, 8);
    ds.train = ds
        .train
        .t()
        .as_standard_layout()
        .into_owned()
        .reversed_axes();
    ds.test = ds
        .test
        .t()
        .as_standard_layout()
        .into_owned()
        .reversed_axes();
    assert!(
        ds.train.as_slice().is_none(),
        "the test needs a non-contiguous row"
    );
    assert_eq!(verify(&ds), Ok(Coverage { rows: 20, of: 20 }));
}
