//! Making a filter workload: selectivities parsed, the columns drawn from the seed, the
//! exact ground truth of every filter computed with annbench's exact search.

use super::{COLUMN, Column, FilterKind, Filters, Level, WIDTH, labels};
use crate::dataset::{Dataset, GroundTruth, groundtruth};
use crate::{Error, Result};
use ndarray::{Array2, Axis};

/// `s` as a selectivity in (0, 1]: a number, or text like `0.01` or `1%`. Returns the value
/// and its canonical text (shortest decimal, e.g. `0.001`, `0.5`, `1`).
pub fn parse_selectivity(value: &serde_json::Value) -> std::result::Result<(f64, String), String> {
    let bad = || {
        format!("{value} is not a selectivity: give a share of the rows in (0, 1], e.g. 0.01 or 1%")
    };
    let s = match value {
        serde_json::Value::Number(n) => n.as_f64().ok_or_else(bad)?,
        serde_json::Value::String(t) => {
            let t = t.trim();
            match t.strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
                None => t.parse::<f64>().map_err(|_| bad())?,
            }
        }
        _ => return Err(bad()),
    };
    if !(s > 0.0 && s <= 1.0) {
        return Err(format!(
            "selectivity {value} is outside (0, 1]: give the share of rows the filter keeps, \
             e.g. 0.01 for 1%"
        ));
    }
    // Six decimals name every selectivity down to one in a million; trailing zeros dropped.
    let text = format!("{s:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    if text == "0" {
        return Err(format!(
            "selectivity {value} is below 0.000001, the finest annbench names"
        ));
    }
    Ok((s, text))
}

/// The rows a filter of selectivity `s` keeps on `rows` rows: `max(1, round(s * rows))`. Also
/// the range filter's bound: `attr < threshold` keeps exactly that many rows.
pub fn threshold(s: f64, rows: usize) -> i64 {
    ((s * rows as f64).round() as i64).clamp(1, rows.max(1) as i64)
}

/// A seeded permutation of `0..n`: the range filter's column.
pub fn attributes(n: usize, seed: u64) -> Vec<i32> {
    let mut v: Vec<i32> = (0..n as i32).collect();
    crate::dataset::rng::Rng::new(seed).shuffle(&mut v);
    v
}

/// The filter workload of `ds` at `selectivities` (any text [`parse_selectivity`] takes) for
/// each of `kinds`: columns from `seed`, exact filtered ground truth per kind and selectivity.
pub fn generate(
    ds: &Dataset,
    selectivities: &[String],
    kinds: &[FilterKind],
    seed: u64,
) -> Result<Filters> {
    let n = ds.train.nrows();
    if n > i32::MAX as usize {
        return Err(Error::Dataset(format!(
            "'{}': {n} train rows do not fit int32 attributes",
            ds.name
        )));
    }
    if selectivities.is_empty() {
        return Err(Error::Config(
            "--selectivity: give at least one share of rows in (0, 1], e.g. 0.001,0.01,0.1".into(),
        ));
    }
    if kinds.is_empty() {
        return Err(Error::Config(
            "--kind: give range, label or range,label".into(),
        ));
    }
    let mut parsed: Vec<(f64, String)> = Vec::new();
    for s in selectivities {
        let p = parse_selectivity(&serde_json::Value::String(s.clone()))
            .map_err(|e| Error::Config(format!("--selectivity: {e}")))?;
        if !parsed.iter().any(|(_, t)| *t == p.1) {
            parsed.push(p);
        }
    }
    parsed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut f = Filters {
        seed,
        vectors: crate::dataset::fingerprint::vectors_digest(ds),
        columns: Vec::new(),
        levels: Vec::new(),
    };
    if kinds.contains(&FilterKind::Range) {
        let attr = attributes(n, seed);
        for (s, text) in &parsed {
            let t = threshold(*s, n);
            let ids: Vec<usize> = (0..n).filter(|&i| i64::from(attr[i]) < t).collect();
            f.levels.push(Level {
                kind: FilterKind::Range,
                selectivity: text.clone(),
                column: COLUMN.into(),
                value: t,
                count: t,
                truth: truth_over(ds, &ids)?,
            });
        }
        f.columns.push(Column {
            name: COLUMN.into(),
            values: attr,
        });
    }
    if kinds.contains(&FilterKind::Label) {
        let counts: Vec<usize> = parsed
            .iter()
            .map(|(s, _)| threshold(*s, n) as usize)
            .collect();
        let (columns, placed) = labels::label_columns(&counts, n, seed);
        let mut levels = Vec::new();
        for ((_, text), p) in parsed.iter().zip(placed) {
            let column = &columns[p.column];
            let ids: Vec<usize> = (0..n)
                .filter(|&i| i64::from(column.values[i]) == p.value)
                .collect();
            levels.push(Level {
                kind: FilterKind::Label,
                selectivity: text.clone(),
                column: column.name.clone(),
                value: p.value,
                count: ids.len() as i64,
                truth: truth_over(ds, &ids)?,
            });
        }
        f.columns.extend(columns);
        f.levels.extend(levels);
    }
    Ok(f)
}

/// Exact ground truth over the train rows `ids` (ascending), mapped back to train ids:
/// `min(WIDTH, ids.len())` wide.
pub fn truth_over(ds: &Dataset, ids: &[usize]) -> Result<GroundTruth> {
    let sub = ds.train.select(Axis(0), ids);
    let width = WIDTH.min(ids.len());
    let gt = groundtruth::try_compute(sub.view(), ds.test.view(), ds.metric, width)?;
    let neighbors: Array2<i32> = gt.neighbors.mapv(|j| ids[j as usize] as i32);
    Ok(GroundTruth {
        neighbors,
        distances: gt.distances,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::random;
    use super::*;
    use serde_json::json;

    #[test]
    fn selectivities_parse_canonically_and_refuse_out_of_range() {
        let p = |v| parse_selectivity(&v).map(|(_, t)| t);
        assert_eq!(p(json!(0.01)).unwrap(), "0.01");
        assert_eq!(p(json!("1%")).unwrap(), "0.01");
        assert_eq!(p(json!("0.100")).unwrap(), "0.1");
        assert_eq!(p(json!(1)).unwrap(), "1");
        for bad in [json!(0), json!(1.5), json!(-0.1), json!("x"), json!("0")] {
            let e = p(bad.clone()).unwrap_err();
            assert!(
                e.contains("(0, 1]") || e.contains("not a selectivity"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn thresholds_keep_exact_row_counts() {
        assert_eq!(threshold(0.001, 4500), 5);
        assert_eq!(threshold(0.5, 4500), 2250);
        assert_eq!(threshold(1.0, 4500), 4500);
        assert_eq!(threshold(0.000001, 10), 1, "at least one row");
        let a = attributes(1000, 7);
        assert_eq!(a, attributes(1000, 7), "seeded");
        assert_ne!(a, attributes(1000, 8));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<i32>>(), "a permutation");
    }

    #[test]
    fn filtered_truth_only_holds_matching_rows() {
        let ds = random("t", 600, 20);
        let sels = ["0.5".into(), "0.01".into(), "1%".into()];
        let f = generate(&ds, &sels, &FilterKind::ALL, 5).unwrap();
        assert_eq!(f.selectivities(FilterKind::Range), ["0.01", "0.5"]);
        assert_eq!(f.selectivities(FilterKind::Label), ["0.01", "0.5"]);
        let low = f.level(FilterKind::Range, "0.01", "t").unwrap();
        assert_eq!((low.value, low.count), (6, 6));
        assert_eq!(
            low.truth.neighbors.ncols(),
            6,
            "as wide as the matching rows"
        );
        for l in &f.levels {
            let column = f.column(&l.column).unwrap();
            for &id in &l.truth.neighbors {
                assert!(l.matches(column[id as usize]), "{}", l.condition());
            }
        }
        let e = f
            .level(FilterKind::Range, "0.2", "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--selectivity 0.01,0.5,0.2"), "{e}");
        f.check_for(&ds).unwrap();
        // Each filter's ground truth is checked as a main file's: edited distances, a
        // repeated id, rows that are not the test queries'.
        let mut edited = f.clone();
        edited.levels[1].truth.distances.mapv_inplace(|d| d * 2.0);
        let e = edited.check_for(&ds).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{} filter at selectivity", edited.levels[1].kind))
                && e.contains("does not match the vectors")
                && e.contains("annbench datasets filter t"),
            "{e}"
        );
        let mut repeated = f.clone();
        let t = &mut repeated.levels[0].truth;
        t.neighbors[[2, 1]] = t.neighbors[[2, 0]];
        t.distances[[2, 1]] = t.distances[[2, 0]];
        let e = repeated.check_for(&ds).unwrap_err().to_string();
        assert!(e.contains("row 2 lists train id"), "{e}");
        let mut short = f.clone();
        short.levels[0].truth.neighbors = short.levels[0]
            .truth
            .neighbors
            .slice(ndarray::s![..2, ..])
            .to_owned();
        short.levels[0].truth.distances = short.levels[0]
            .truth
            .distances
            .slice(ndarray::s![..2, ..])
            .to_owned();
        let e = short.check_for(&ds).unwrap_err().to_string();
        assert!(e.contains("rows but 'test' has"), "{e}");
        let e = generate(&ds, &sels, &[], 5).unwrap_err().to_string();
        assert!(e.contains("--kind"), "{e}");
    }

    #[test]
    fn label_only_workloads_have_no_range_column() {
        let ds = random("t", 500, 5);
        let f = generate(&ds, &["0.9".into(), "0.2".into()], &[FilterKind::Label], 9).unwrap();
        let names: Vec<&str> = f.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["label1", "label2"],
            "0.9 and 0.2 do not share a column"
        );
        assert_eq!(f.kinds(), [FilterKind::Label]);
        let l = f.level(FilterKind::Label, "0.2", "t").unwrap();
        assert_eq!((l.condition().as_str(), l.count), ("label2 = 1", 100));
    }
}
