//! The f32 matrix product of a query block with a train block (the `gemm` crate's kernel,
//! which picks AVX-512, AVX2/FMA or portable code at run time).

use ndarray::ArrayView2;

/// Writes `alpha * queries . train^T` into `out` (row-major, `queries.nrows()` x
/// `train.nrows()`), single-threaded: the caller runs blocks in parallel.
pub(super) fn product(
    queries: ArrayView2<f32>,
    train: ArrayView2<f32>,
    alpha: f32,
    out: &mut [f32],
) {
    let (m, d, n) = (queries.nrows(), queries.ncols(), train.nrows());
    assert_eq!(train.ncols(), d, "train and query dimensions differ");
    assert!(out.len() >= m * n, "product buffer too small");
    if m == 0 || n == 0 {
        return;
    }
    let (qs0, qs1) = (queries.strides()[0], queries.strides()[1]);
    let (ts0, ts1) = (train.strides()[0], train.strides()[1]);
    // SAFETY: the pointers and strides describe the live views `queries` (m x d) and `train`
    // (n x d, read as the d x n matrix train^T); `out` holds m x n with row stride n (checked
    // above). gemm computes dst = 0 * dst + alpha * lhs . rhs without reading dst.
    unsafe {
        gemm::gemm(
            m,
            n,
            d,
            out.as_mut_ptr(),
            1,
            n as isize,
            false,
            queries.as_ptr(),
            qs1,
            qs0,
            train.as_ptr(),
            ts0,
            ts1,
            0.0,
            alpha,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, s};

    /// Integer inputs have exact products in f32: the result must equal the plain triple
    /// loop, also for strided views and sizes that are no multiple of any kernel tile.
    #[test]
    fn equals_the_plain_product_on_views() {
        let a = Array2::from_shape_fn((37, 21), |(i, j)| ((i * 7 + j * 3) % 11) as f32 - 5.0);
        let b = Array2::from_shape_fn((53, 42), |(i, j)| ((i * 5 + j) % 13) as f32 - 6.0);
        let bv = b.slice(s![.., ..;2]);
        let mut out = vec![f32::NAN; 37 * 53];
        product(a.view(), bv, -2.0, &mut out);
        for i in 0..37 {
            for j in 0..53 {
                let want: f32 = (0..21).map(|t| a[[i, t]] * bv[[j, t]]).sum::<f32>() * -2.0;
                assert_eq!(out[i * 53 + j], want, "({i}, {j})");
            }
        }
    }
}
