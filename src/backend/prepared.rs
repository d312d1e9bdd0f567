//! The searchers' prepared query: prepared once for the `k` in use and reused for every query
//! (the runner keeps `k` fixed for a sweep), so a search is one execute round trip.

use crate::Result;

/// The statement prepared for the last `k` asked for.
pub struct PreparedFor<S> {
    cached: Option<(usize, S)>,
}

impl<S: Clone> PreparedFor<S> {
    pub fn new() -> Self {
        PreparedFor { cached: None }
    }

    /// The statement for `k`, prepared with `prepare(k)` when `k` changed or on first use.
    pub fn get(&mut self, k: usize, prepare: impl FnOnce(usize) -> Result<S>) -> Result<S> {
        match &self.cached {
            Some((cached_k, s)) if *cached_k == k => Ok(s.clone()),
            _ => {
                let s = prepare(k)?;
                self.cached = Some((k, s.clone()));
                Ok(s)
            }
        }
    }
}

impl<S: Clone> Default for PreparedFor<S> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepares_once_per_k() {
        let mut p = PreparedFor::new();
        let mut calls = 0;
        for k in [10, 10, 10, 5, 5, 10] {
            let s = p
                .get(k, |k| {
                    calls += 1;
                    Ok(format!("LIMIT {k}"))
                })
                .unwrap();
            assert_eq!(s, format!("LIMIT {k}"));
        }
        assert_eq!(calls, 3);
    }

    #[test]
    fn a_failed_prepare_is_retried() {
        let mut p: PreparedFor<u8> = PreparedFor::new();
        assert!(
            p.get(1, |_| Err(crate::Error::Backend("down".into())))
                .is_err()
        );
        assert_eq!(p.get(1, |_| Ok(7)).unwrap(), 7);
    }
}
