//! The frontier of (recall, value) points where higher recall is better and the value is
//! better either higher (QPS) or lower (build time, index size).

/// Indices of the points of `xy` (recall, value) that no other point beats (recall at least
/// as high and value at least as good, one of them strictly), by recall ascending. Points
/// with a value or recall that is not a finite number are left out; of several equal points
/// the first stays. With `higher_is_better` this is [`crate::report::pareto`]'s frontier.
pub fn frontier(xy: &[(f64, f64)], higher_is_better: bool) -> Vec<usize> {
    let good = |v: f64| if higher_is_better { v } else { -v };
    let mut order: Vec<usize> = (0..xy.len())
        .filter(|&i| xy[i].0.is_finite() && xy[i].1.is_finite())
        .collect();
    // Recall descending, then value best first, then input order: a point is on the frontier
    // exactly when its value beats every point before it.
    order.sort_by(|&a, &b| {
        xy[b]
            .0
            .total_cmp(&xy[a].0)
            .then(good(xy[b].1).total_cmp(&good(xy[a].1)))
            .then(a.cmp(&b))
    });
    let mut out = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for i in order {
        if good(xy[i].1) > best {
            best = good(xy[i].1);
            out.push(i);
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    #[test]
    fn higher_is_better_matches_pareto() {
        let xy = [
            (0.90, 900.0),
            (0.95, 500.0),
            (0.93, 400.0),
            (0.99, 100.0),
            (0.95, 500.0),
            (0.80, 800.0),
            (f64::NAN, 5000.0),
        ];
        let pts: Vec<_> = xy
            .iter()
            .map(|&(r, q)| point("mariadb", &[], &[], r, q))
            .collect();
        let expected: Vec<usize> = crate::report::pareto(&pts)[0]
            .points
            .iter()
            .map(|p| p.index)
            .collect();
        assert_eq!(frontier(&xy, true), expected);
        assert_eq!(expected, vec![0, 1, 3]);
    }

    #[test]
    fn lower_is_better_keeps_the_cheapest_build_per_recall() {
        // (recall, seconds): a(0.90, 5) b(0.95, 10) c(0.93, 12: beaten by b) d(0.99, 30)
        // e(0.85, 6: beaten by a) f(0.99, 40: beaten by d)
        let xy = [
            (0.90, 5.0),
            (0.95, 10.0),
            (0.93, 12.0),
            (0.99, 30.0),
            (0.85, 6.0),
            (0.99, 40.0),
        ];
        assert_eq!(frontier(&xy, false), vec![0, 1, 3]);
    }
}
