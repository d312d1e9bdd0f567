//! Seeded benchmark data, so the benchmarks need no downloads: `pixels` has the shape and
//! value distribution of Fashion-MNIST (u8 intensities as float32, about half of them 0),
//! `normal` is normalised Gaussian vectors, like text embeddings.

use annbench::dataset::rng::Rng;
use annbench::{Error, Result};
use ndarray::Array2;

pub fn generate(rows: usize, dim: usize, values: &str, seed: u64) -> Result<Array2<f32>> {
    let mut rng = Rng::new(seed);
    match values {
        "pixels" => Ok(Array2::from_shape_fn((rows, dim), |_| {
            if rng.uniform() < 0.5 {
                0.0
            } else {
                (1 + rng.below(255)) as f32
            }
        })),
        "normal" => {
            let mut a = Array2::from_shape_fn((rows, dim), |_| rng.normal() as f32);
            for mut r in a.outer_iter_mut() {
                let n = r.dot(&r).sqrt().max(f32::MIN_POSITIVE);
                r /= n;
            }
            Ok(a)
        }
        _ => Err(Error::Config(format!(
            "--values {values}: use pixels or normal"
        ))),
    }
}
