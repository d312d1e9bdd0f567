//! Structured synthetic text-embedding-like vectors (the `clustered-1536-*-angular` sets), for
//! scaling runs where real embedding files cannot be downloaded.
//!
//! Each vector is the normalised sum of
//! - a **shared direction** common to every vector (text embeddings are anisotropic: unrelated
//!   texts of OpenAI's ada-002 still have cosine similarities around 0.7),
//! - a **topic** direction (topics drawn with Zipf popularity, as real corpora are uneven),
//! - a **subtopic** direction inside the topic,
//! - a **low-rank** variation: a Gaussian in a `RANK`-dimensional subspace with a power-law
//!   spectrum (embeddings have a low intrinsic dimension),
//! - a small isotropic **noise** over all dimensions.
//!
//! Rows are generated independently from a seed and their row number, so the result does not
//! depend on the thread count, and the first n rows of a larger set are the n-row set: the
//! sizes of a scaling series are nested samples of one distribution. Query rows come from a
//! separate stream of the same distribution.

use super::rng::Rng;
use crate::{Error, Result};
use ndarray::{Array2, ArrayViewMut1, Axis};
use rayon::prelude::*;

/// Shape of a set and the constants of its distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Embeddings {
    /// Train rows.
    pub train: usize,
    /// Query rows.
    pub test: usize,
    /// Dimension.
    pub dims: usize,
    /// Topics, and subtopics per topic.
    pub topics: usize,
    pub subtopics: usize,
    /// Dimension of the low-rank variation.
    pub rank: usize,
    /// Squared weights (shares of the expected squared norm) of the shared direction, topic,
    /// subtopic, low-rank and noise parts.
    pub weights: [f64; 5],
}

impl Embeddings {
    /// The distribution of the `clustered-1536-*` sets, with `train` and `test` rows.
    pub fn openai_like(train: usize, test: usize) -> Embeddings {
        Embeddings {
            train,
            test,
            dims: 1536,
            topics: 200,
            subtopics: 50,
            rank: 48,
            weights: [0.62, 0.12, 0.10, 0.13, 0.03],
        }
    }
}

/// Row streams: train and query rows never share a random stream.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Train = 1,
    Test = 2,
}

/// The fixed vectors of the distribution: directions and the low-rank basis.
pub struct Model {
    spec: Embeddings,
    shared: Vec<f32>,
    topics: Array2<f32>,
    subtopics: Array2<f32>,
    basis: Array2<f32>,
    /// Standard deviation of each low-rank coordinate (power law, sum of squares 1).
    spectrum: Vec<f32>,
    /// Cumulative topic popularity (Zipf, exponent 1).
    topic_cdf: Vec<f64>,
}

/// A random unit vector of `d` dimensions.
fn unit(rng: &mut Rng, d: usize) -> Vec<f32> {
    let v: Vec<f64> = (0..d).map(|_| rng.normal()).collect();
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.into_iter().map(|x| (x / n) as f32).collect()
}

fn units(rng: &mut Rng, rows: usize, d: usize) -> Array2<f32> {
    let flat: Vec<f32> = (0..rows).flat_map(|_| unit(rng, d)).collect();
    Array2::from_shape_vec((rows, d), flat).unwrap_or_else(|_| Array2::zeros((rows, d)))
}

impl Model {
    /// The distribution's fixed vectors for `seed`.
    pub fn new(spec: Embeddings, seed: u64) -> Result<Model> {
        if spec.dims == 0 || spec.topics == 0 || spec.subtopics == 0 || spec.rank == 0 {
            return Err(Error::Config(format!(
                "synthetic embeddings need positive dims, topics, subtopics and rank: {spec:?}"
            )));
        }
        let mut rng = Rng::new(seed ^ 0x005E_ED0F_E3BE_DD15);
        let d = spec.dims;
        let shared = unit(&mut rng, d);
        let topics = units(&mut rng, spec.topics, d);
        let subtopics = units(&mut rng, spec.topics * spec.subtopics, d);
        let basis = units(&mut rng, spec.rank, d);
        let raw: Vec<f64> = (1..=spec.rank).map(|i| 1.0 / i as f64).collect();
        let total: f64 = raw.iter().sum();
        let spectrum = raw.iter().map(|v| (v / total).sqrt() as f32).collect();
        let mut acc = 0.0;
        let weights: Vec<f64> = (1..=spec.topics).map(|i| 1.0 / i as f64).collect();
        let sum: f64 = weights.iter().sum();
        let topic_cdf = weights
            .iter()
            .map(|w| {
                acc += w / sum;
                acc
            })
            .collect();
        Ok(Model {
            spec,
            shared,
            topics,
            subtopics,
            basis,
            spectrum,
            topic_cdf,
        })
    }

    /// Writes row `row` of `stream` into `out` (length `dims`), normalised.
    fn row(&self, seed: u64, stream: Stream, row: usize, mut out: ArrayViewMut1<f32>) {
        let s = &self.spec;
        let mut rng = Rng::new(
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ ((stream as u64) << 56)
                ^ (row as u64).wrapping_mul(0xD1B5_4A32_D192_ED03),
        );
        let u = rng.uniform();
        let topic = self.topic_cdf.partition_point(|&c| c < u).min(s.topics - 1);
        let sub = topic * s.subtopics + rng.below(s.subtopics);
        let w = s.weights.map(|x| x.max(0.0).sqrt() as f32);
        let out = out
            .as_slice_mut()
            .expect("rows of a standard-layout matrix");
        let (t, st) = (self.topics.row(topic), self.subtopics.row(sub));
        for (((o, &g), &a), &b) in out.iter_mut().zip(&self.shared).zip(t).zip(st) {
            *o = w[0] * g + w[1] * a + w[2] * b;
        }
        for (basis, &sd) in self.basis.rows().into_iter().zip(&self.spectrum) {
            let z = w[3] * sd * rng.normal() as f32;
            for (o, &b) in out.iter_mut().zip(basis) {
                *o += z * b;
            }
        }
        // Isotropic noise of expected squared norm w[4]^2.
        let scale = w[4] / (s.dims as f32).sqrt();
        let mut i = 0;
        while i < out.len() {
            let (a, b) = normal_pair(&mut rng);
            out[i] += scale * a;
            if i + 1 < out.len() {
                out[i + 1] += scale * b;
            }
            i += 2;
        }
        let n = out
            .iter()
            .map(|&v| f64::from(v) * f64::from(v))
            .sum::<f64>();
        let inv = (1.0 / n.sqrt()) as f32;
        out.iter_mut().for_each(|v| *v *= inv);
    }

    /// Fills `out` (rows x dims) with rows `first..` of `stream`, in parallel.
    pub fn fill(&self, seed: u64, stream: Stream, first: usize, out: &mut Array2<f32>) {
        out.axis_chunks_iter_mut(Axis(0), 256)
            .into_par_iter()
            .enumerate()
            .for_each(|(c, mut chunk)| {
                for (i, row) in chunk.rows_mut().into_iter().enumerate() {
                    self.row(seed, stream, first + c * 256 + i, row);
                }
            });
    }
}

/// Two independent standard normals (Box-Muller, both outputs).
fn normal_pair(rng: &mut Rng) -> (f32, f32) {
    let u1 = 1.0 - rng.uniform();
    let u2 = rng.uniform();
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
    ((r * c) as f32, (r * s) as f32)
}

/// Train and query matrices of `spec` for `seed`.
pub fn generate(spec: Embeddings, seed: u64) -> Result<(Array2<f32>, Array2<f32>)> {
    let model = Model::new(spec, seed)?;
    let mut train = Array2::zeros((spec.train, spec.dims));
    model.fill(seed, Stream::Train, 0, &mut train);
    let mut test = Array2::zeros((spec.test, spec.dims));
    model.fill(seed, Stream::Test, 0, &mut test);
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(train: usize) -> Embeddings {
        Embeddings {
            dims: 64,
            topics: 8,
            subtopics: 4,
            rank: 8,
            ..Embeddings::openai_like(train, 20)
        }
    }

    #[test]
    fn seeded_nested_and_normalised() {
        let (a, qa) = generate(small(300), 7).unwrap();
        let (b, qb) = generate(small(100), 7).unwrap();
        assert_eq!(a.slice(ndarray::s![..100, ..]), b, "sizes are nested");
        assert_eq!(qa, qb, "queries do not depend on the train size");
        assert_ne!(generate(small(100), 8).unwrap().0, b);
        for r in a.rows() {
            let n: f32 = r.iter().map(|v| v * v).sum();
            assert!((n - 1.0).abs() < 1e-4, "{n}");
        }
    }

    #[test]
    fn vectors_share_a_direction_and_cluster_by_topic() {
        let (a, _) = generate(small(400), 1).unwrap();
        let cos = a.dot(&a.t());
        let mean_off_diag = (cos.sum() - 400.0) / (400.0 * 399.0);
        // The shared direction carries 62% of the squared norm.
        assert!((0.5..0.8).contains(&mean_off_diag), "{mean_off_diag}");
        // Every row has a neighbour much closer than the average row.
        let closest: f32 = (0..400)
            .map(|i| {
                (0..400)
                    .filter(|&j| j != i)
                    .map(|j| cos[[i, j]])
                    .fold(f32::MIN, f32::max)
            })
            .sum::<f32>()
            / 400.0;
        assert!(closest > mean_off_diag + 0.15, "{closest}");
    }

    #[test]
    fn bad_shapes_are_refused() {
        let mut s = small(10);
        s.rank = 0;
        assert!(generate(s, 1).is_err());
    }
}
