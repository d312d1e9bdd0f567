//! Per-query candidate selection from a block of approximate f32 scores.

/// Scores compared per chunk before looking at single entries: one vectorised compare rejects
/// a whole chunk, which is what almost every chunk is once the threshold has settled.
const CHUNK: usize = 16;

/// Candidate list of one query: approximate scores with train ids, pruned to `keep` when it
/// reaches `2 * keep`.
pub(super) struct Candidates {
    /// (approximate score, train id); after [`Candidates::finish`] sorted by score.
    pub items: Vec<(f32, u32)>,
    /// Every row left out has an approximate score >= this (infinite until the first prune).
    pub threshold: f32,
    /// Whether any row with a finite score was left out.
    pub pruned: bool,
    /// Rows offered so far (to tell "all rows kept" from "some scored NaN or infinite").
    pub offered: usize,
    keep: usize,
}

/// The ranking score of a product entry `g` and its row's term `t`.
#[inline(always)]
fn score(g: f32, t: f32, product: bool) -> f32 {
    if product { g * t } else { g + t }
}

impl Candidates {
    /// An empty list that keeps the `keep` lowest scores.
    pub fn new(keep: usize) -> Self {
        Candidates {
            items: Vec::with_capacity(2 * keep),
            threshold: f32::INFINITY,
            pruned: false,
            offered: 0,
            keep,
        }
    }

    /// Offers the scores `gemm[j] (op) terms[j]` of train rows `first + j`, where the score is
    /// `g + t` (euclidean) or `g * t` (angular, `product`).
    pub fn offer(&mut self, gemm: &[f32], terms: &[f32], first: usize, product: bool) {
        self.offered += gemm.len();
        let whole = gemm.len() / CHUNK * CHUNK;
        for (c, (gs, ts)) in gemm[..whole]
            .chunks_exact(CHUNK)
            .zip(terms[..whole].chunks_exact(CHUNK))
            .enumerate()
        {
            let (gs, ts): (&[f32; CHUNK], &[f32; CHUNK]) = match (gs.try_into(), ts.try_into()) {
                (Ok(g), Ok(t)) => (g, t),
                _ => unreachable!("chunks_exact yields CHUNK values"),
            };
            let threshold = self.threshold;
            // `|` rather than `||`: no early exit, so the compiler vectorises the compare.
            let hit = gs
                .iter()
                .zip(ts)
                .fold(false, |h, (&g, &t)| h | (score(g, t, product) < threshold));
            if hit {
                self.push_below(gs, ts, first + c * CHUNK, product);
            }
        }
        self.push_below(&gemm[whole..], &terms[whole..], first + whole, product);
    }

    /// Pushes the rows of `gemm`/`terms` (train ids from `first`) that score below the
    /// threshold, pruning as the list fills.
    fn push_below(&mut self, gemm: &[f32], terms: &[f32], first: usize, product: bool) {
        for (j, (&g, &t)) in gemm.iter().zip(terms).enumerate() {
            let s = score(g, t, product);
            if s < self.threshold {
                self.items.push((s, (first + j) as u32));
                if self.items.len() == 2 * self.keep {
                    self.prune();
                }
            }
        }
    }

    fn prune(&mut self) {
        let keep = self.keep;
        if self.items.len() > keep {
            self.items
                .select_nth_unstable_by(keep - 1, |a, b| a.0.total_cmp(&b.0));
            self.items.truncate(keep);
            self.threshold = self.items[keep - 1].0;
            self.pruned = true;
        }
    }

    /// Prunes to `keep` and sorts the kept candidates by approximate score.
    pub fn finish(&mut self) {
        self.prune();
        self.items.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    }

    /// True when every offered row is in the list (none was pruned or scored NaN/infinite).
    pub fn holds_every_row(&self) -> bool {
        !self.pruned && self.items.len() == self.offered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked compare keeps exactly what a row-by-row scan keeps: the `keep` lowest
    /// scores, whatever the chunk boundaries.
    #[test]
    fn keeps_the_lowest_scores_across_chunk_boundaries() {
        let mut rng = crate::dataset::rng::Rng::new(7);
        let scores: Vec<f32> = (0..1003).map(|_| rng.normal() as f32).collect();
        let terms = vec![0f32; scores.len()];
        let mut c = Candidates::new(40);
        // Uneven pieces, as train blocks of different lengths would give.
        c.offer(&scores[..517], &terms[..517], 0, false);
        c.offer(&scores[517..], &terms[517..], 517, false);
        c.finish();
        let mut want: Vec<(f32, u32)> = scores.iter().copied().zip(0..).collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(c.items, want[..40]);
        assert!(c.pruned && !c.holds_every_row());
        assert!(c.threshold >= want[39].0);
    }

    /// NaN scores are never candidates, and the list then does not claim to hold every row.
    #[test]
    fn nan_scores_are_left_out_and_noticed() {
        let mut c = Candidates::new(4);
        c.offer(&[1.0, f32::NAN, 0.5], &[0.0; 3], 0, false);
        c.finish();
        assert_eq!(c.items, [(0.5, 2), (1.0, 0)]);
        assert!(!c.pruned && !c.holds_every_row());
    }
}
