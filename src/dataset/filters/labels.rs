//! The label filter's category columns.
//!
//! A label filter of selectivity `s` is `labelN = v`: category `v` of column `labelN` is given
//! to exactly `max(1, round(s * n))` rows. Categories in one column are disjoint, and the
//! selectivities a workload asks for may sum above 1 (0.001, 0.01, 0.1, 0.5 and 0.9 sum to
//! 1.511), so they are packed first-fit-decreasing into as few columns as hold them: the
//! largest first, each into the first column with room for its rows (the row counts of a
//! column sum to at most `n`). In each column the rows are a seeded shuffle of `0..n`
//! (SplitMix64 + Fisher-Yates, a stream of its own per column, independent of the range
//! filter's permutation); the categories take consecutive runs of it in placement order
//! (`v` = 1, 2, ...) and every other row gets 0.

use super::Column;
use crate::dataset::rng::Rng;

/// Where one requested count went: `columns[column]`, category `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub column: usize,
    pub value: i64,
}

/// First-fit-decreasing: the indices of `counts` per column (largest first; equal counts in
/// request order), each column's counts summing to at most `capacity`.
pub fn pack(counts: &[usize], capacity: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
    let mut columns: Vec<(usize, Vec<usize>)> = Vec::new();
    for i in order {
        match columns
            .iter_mut()
            .find(|(used, _)| used + counts[i] <= capacity)
        {
            Some((used, members)) => {
                *used += counts[i];
                members.push(i);
            }
            None => columns.push((counts[i], vec![i])),
        }
    }
    columns.into_iter().map(|(_, m)| m).collect()
}

/// The generator of column `number` (1-based) for `seed`: the seed and the column number
/// mixed through SplitMix64, so each column's stream starts far from the others' and from
/// the range filter's (which starts at `seed` itself).
fn column_rng(seed: u64, number: usize) -> Rng {
    let mut mix = Rng::new(seed ^ 0x6c61_6265_6c00_0000 ^ number as u64);
    Rng::new(mix.next_u64())
}

/// The label columns for `counts` (each at most `n`) on `n` rows, and where each count went.
pub fn label_columns(counts: &[usize], n: usize, seed: u64) -> (Vec<Column>, Vec<Placed>) {
    let mut placed = vec![
        Placed {
            column: 0,
            value: 0
        };
        counts.len()
    ];
    let mut columns = Vec::new();
    for (c, members) in pack(counts, n).into_iter().enumerate() {
        let mut rows: Vec<u32> = (0..n as u32).collect();
        column_rng(seed, c + 1).shuffle(&mut rows);
        let mut values = vec![0i32; n];
        let mut next = 0;
        for (j, &i) in members.iter().enumerate() {
            let value = j as i32 + 1;
            for &r in &rows[next..next + counts[i]] {
                values[r as usize] = value;
            }
            next += counts[i];
            placed[i] = Placed {
                column: c,
                value: i64::from(value),
            };
        }
        columns.push(Column {
            name: format!("label{}", c + 1),
            values,
        });
    }
    (columns, placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_fills_the_first_column_with_room() {
        // 0.001, 0.01, 0.1, 0.5, 0.9 of 10,000 rows: 0.9 + 0.1 fill label1 exactly.
        let counts = [10, 100, 1000, 5000, 9000];
        assert_eq!(pack(&counts, 10_000), [vec![4, 2], vec![3, 1, 0]]);
        // One row fewer: 0.1 no longer fits beside 0.9, 0.01 and 0.001 do.
        assert_eq!(pack(&counts, 9_999), [vec![4, 1, 0], vec![3, 2]]);
        assert_eq!(pack(&[10_000, 1], 10_000), [vec![0], vec![1]]);
        assert_eq!(
            pack(&[3, 3, 3], 10),
            [vec![0, 1, 2]],
            "ties in request order"
        );
    }

    #[test]
    fn categories_have_exact_counts_and_are_reproducible() {
        let counts = [5, 50, 500, 2500, 4500];
        let (columns, placed) = label_columns(&counts, 5000, 42);
        assert_eq!(columns.len(), 2);
        for (i, p) in placed.iter().enumerate() {
            let got = columns[p.column]
                .values
                .iter()
                .filter(|&&v| i64::from(v) == p.value)
                .count();
            assert_eq!(got, counts[i], "count {i}");
            assert!(p.value >= 1);
        }
        assert_eq!(
            placed[4],
            Placed {
                column: 0,
                value: 1
            }
        );
        assert_eq!(
            placed[0],
            Placed {
                column: 1,
                value: 3
            },
            "4500+500 fill label1"
        );
        let zeros = columns[1].values.iter().filter(|&&v| v == 0).count();
        assert_eq!(zeros, 5000 - 2500 - 50 - 5);
        let (again, _) = label_columns(&counts, 5000, 42);
        assert_eq!(again, columns, "seeded");
        let (other, _) = label_columns(&counts, 5000, 43);
        assert_ne!(other[0].values, columns[0].values);
        // Independent of each other and of the range filter's permutation.
        let attr = super::super::attributes(5000, 42);
        let first: Vec<usize> = (0..5000).filter(|&i| columns[0].values[i] == 1).collect();
        let low_attr = first.iter().filter(|&&i| attr[i] < 4500).count();
        assert!((3900..4200).contains(&low_attr), "{low_attr} of 4500");
    }
}
