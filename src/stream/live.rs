//! The live set of a runbook: which tags are live and which train row each holds. Runs of
//! tags holding consecutive rows are kept as spans (a map from the first tag), so a step over
//! ten million rows is a few map operations, and checking a whole runbook never allocates per
//! row.

use super::step::{Operation, Step};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::ops::Range;

/// Tags `[start, end)` hold train rows `[row, row + end - start)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    end: usize,
    row: usize,
}

/// Which tags are live after the steps applied so far, and the train row each holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveSet {
    /// Disjoint spans keyed by their first tag.
    spans: BTreeMap<usize, Span>,
    len: usize,
}

impl LiveSet {
    /// An empty live set (before the first step).
    pub fn new() -> Self {
        LiveSet::default()
    }

    /// Applies one step: an insert makes tags `[start, end)` live holding the rows of the
    /// same ids, a delete removes tags, a replace points tags at other rows; search and
    /// maintenance change nothing. An error (a tag inserted that is live, or deleted or
    /// replaced that is not) leaves the set as it was; its message names the tags but not the
    /// step ([`super::Runbook::validate`] adds that).
    pub fn apply(&mut self, step: &Step) -> Result<()> {
        match &step.op {
            Operation::Insert { start, end } => {
                self.check_free(*start..*end)?;
                self.add(*start..*end, *start);
            }
            Operation::Delete { start, end } => {
                self.check_live(*start..*end)?;
                self.remove(*start..*end);
            }
            Operation::Replace { tags, ids } => {
                if tags.len() != ids.len() {
                    return Err(Error::Config(format!(
                        "replace ranges differ in length: tags [{}, {}) hold {} but ids [{}, {}) \
                         hold {}",
                        tags.start,
                        tags.end,
                        tags.len(),
                        ids.start,
                        ids.end,
                        ids.len()
                    )));
                }
                self.check_live(tags.clone())?;
                self.remove(tags.clone());
                self.add(tags.clone(), ids.start);
            }
            Operation::Search | Operation::Maintenance(_) => {}
        }
        Ok(())
    }

    /// Whether `tag` is live.
    pub fn is_live(&self, tag: usize) -> bool {
        self.row_of(tag).is_some()
    }

    /// The train row `tag` holds, if it is live.
    pub fn row_of(&self, tag: usize) -> Option<usize> {
        let (&start, span) = self.spans.range(..=tag).next_back()?;
        (tag < span.end).then(|| span.row + (tag - start))
    }

    /// Live tags.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before anything is inserted (or once everything is deleted).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Live tags in ascending order.
    pub fn live_tags(&self) -> impl Iterator<Item = usize> + '_ {
        self.spans.iter().flat_map(|(&start, s)| start..s.end)
    }

    /// `(tag, train row)` of every live tag, tags ascending.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.spans
            .iter()
            .flat_map(|(&start, s)| (start..s.end).map(move |t| (t, s.row + (t - start))))
    }

    /// Runs of live tags holding consecutive rows: `(tags, first row)`, tags ascending.
    pub fn spans(&self) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
        self.spans.iter().map(|(&start, s)| (start..s.end, s.row))
    }

    /// The spans that overlap `tags`, in order.
    fn overlapping(&self, tags: &Range<usize>) -> Vec<(usize, Span)> {
        let mut out = Vec::new();
        if let Some((&start, &span)) = self.spans.range(..tags.start).next_back() {
            if span.end > tags.start {
                out.push((start, span));
            }
        }
        out.extend(self.spans.range(tags.clone()).map(|(&s, &span)| (s, span)));
        out
    }

    /// An error naming the first live tag in `tags`, if any.
    fn check_free(&self, tags: Range<usize>) -> Result<()> {
        match self.overlapping(&tags).first() {
            None => Ok(()),
            Some((start, span)) => {
                let first = (*start).max(tags.start);
                let last = span.end.min(tags.end);
                Err(Error::Config(format!(
                    "inserts tags [{}, {}) but tags [{first}, {last}) are already live (a tag \
                     is inserted once; delete it first, or replace it to give it another row)",
                    tags.start, tags.end
                )))
            }
        }
    }

    /// An error naming the first tag in `tags` that is not live, if any.
    fn check_live(&self, tags: Range<usize>) -> Result<()> {
        let mut next = tags.start;
        for (start, span) in self.overlapping(&tags) {
            if start > next {
                break;
            }
            next = span.end;
        }
        if next >= tags.end {
            return Ok(());
        }
        let gap_end = self
            .spans
            .range(next..tags.end)
            .next()
            .map_or(tags.end, |(&s, _)| s);
        Err(Error::Config(format!(
            "tags [{}, {}) must all be live but tags [{next}, {gap_end}) are not (never \
             inserted, or deleted before)",
            tags.start, tags.end
        )))
    }

    /// Removes `tags` (all live) from their spans.
    fn remove(&mut self, tags: Range<usize>) {
        for (start, span) in self.overlapping(&tags) {
            self.spans.remove(&start);
            if start < tags.start {
                self.spans.insert(
                    start,
                    Span {
                        end: tags.start,
                        row: span.row,
                    },
                );
            }
            if span.end > tags.end {
                self.spans.insert(
                    tags.end,
                    Span {
                        end: span.end,
                        row: span.row + (tags.end - start),
                    },
                );
            }
            let gone = span.end.min(tags.end) - start.max(tags.start);
            self.len -= gone;
        }
    }

    /// Adds `tags` (none live) holding rows from `row`, merged with neighbours that continue
    /// both the tags and the rows.
    fn add(&mut self, tags: Range<usize>, row: usize) {
        if tags.is_empty() {
            return;
        }
        self.len += tags.len();
        let (mut start, mut span) = (tags.start, Span { end: tags.end, row });
        if let Some((&ls, &left)) = self.spans.range(..start).next_back() {
            if left.end == start && left.row + (start - ls) == row {
                self.spans.remove(&ls);
                start = ls;
                span.row = left.row;
            }
        }
        if let Some(&right) = self.spans.get(&span.end) {
            if right.row == span.row + (span.end - start) {
                self.spans.remove(&span.end);
                span.end = right.end;
            }
        }
        self.spans.insert(start, span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(op: Operation) -> Step {
        Step::new(1, op)
    }

    fn insert(start: usize, end: usize) -> Step {
        step(Operation::Insert { start, end })
    }

    fn delete(start: usize, end: usize) -> Step {
        step(Operation::Delete { start, end })
    }

    fn replace(tags: Range<usize>, ids: Range<usize>) -> Step {
        step(Operation::Replace { tags, ids })
    }

    /// The spans agree with a plain map from tag to row on random steps.
    #[test]
    fn spans_agree_with_a_plain_map() {
        let mut rng = crate::dataset::rng::Rng::new(11);
        let mut live = LiveSet::new();
        let mut plain: BTreeMap<usize, usize> = BTreeMap::new();
        for _ in 0..3000 {
            let a = rng.below(200);
            let b = a + 1 + rng.below(20);
            let s = match rng.below(3) {
                0 => insert(a, b),
                1 => delete(a, b),
                _ => {
                    let r = rng.below(300);
                    replace(a..b, r..r + (b - a))
                }
            };
            let ok = match &s.op {
                Operation::Insert { start, end } => (*start..*end).all(|t| !plain.contains_key(&t)),
                Operation::Delete { start, end } => (*start..*end).all(|t| plain.contains_key(&t)),
                Operation::Replace { tags, .. } => tags.clone().all(|t| plain.contains_key(&t)),
                _ => true,
            };
            let before = live.clone();
            let got = live.apply(&s);
            assert_eq!(got.is_ok(), ok, "{s:?}: {got:?}");
            if !ok {
                assert_eq!(live, before, "a refused step changes nothing");
                continue;
            }
            match &s.op {
                Operation::Insert { start, end } => plain.extend((*start..*end).map(|t| (t, t))),
                Operation::Delete { start, end } => (*start..*end).for_each(|t| {
                    plain.remove(&t);
                }),
                Operation::Replace { tags, ids } => {
                    plain.extend(tags.clone().map(|t| (t, ids.start + (t - tags.start))))
                }
                _ => {}
            }
            assert_eq!(live.len(), plain.len());
            let entries: Vec<_> = live.entries().collect();
            let want: Vec<_> = plain.iter().map(|(&t, &r)| (t, r)).collect();
            assert_eq!(entries, want);
        }
        for t in 0..240 {
            assert_eq!(live.row_of(t), plain.get(&t).copied(), "tag {t}");
            assert_eq!(live.is_live(t), plain.contains_key(&t));
        }
    }

    #[test]
    fn errors_name_the_tags() {
        let mut live = LiveSet::new();
        live.apply(&insert(0, 10)).unwrap();
        let e = live.apply(&insert(5, 20)).unwrap_err().to_string();
        assert!(e.contains("[5, 10) are already live"), "{e}");
        let e = live.apply(&delete(8, 14)).unwrap_err().to_string();
        assert!(e.contains("[10, 14) are not"), "{e}");
        let e = live.apply(&replace(0..3, 50..52)).unwrap_err().to_string();
        assert!(e.contains("differ in length"), "{e}");
        live.apply(&delete(2, 4)).unwrap();
        let e = live.apply(&replace(0..6, 50..56)).unwrap_err().to_string();
        assert!(e.contains("[2, 4) are not"), "{e}");
        assert_eq!(live.len(), 8);
        assert_eq!(
            live.live_tags().collect::<Vec<_>>(),
            [0, 1, 4, 5, 6, 7, 8, 9]
        );
    }

    #[test]
    fn contiguous_inserts_make_one_span() {
        let mut live = LiveSet::new();
        for c in 0..64 {
            live.apply(&insert(c * 100, (c + 1) * 100)).unwrap();
        }
        assert_eq!(live.spans().count(), 1);
        live.apply(&replace(100..200, 9000..9100)).unwrap();
        assert_eq!(live.spans().count(), 3);
        assert_eq!(live.row_of(150), Some(9050));
        assert_eq!(live.row_of(250), Some(250));
    }
}
