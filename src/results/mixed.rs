//! Points of one dataset name measured on different data. Every annbench point records the
//! fingerprint of the data it was measured on ([`crate::dataset::fingerprint`]; a filtered
//! point, the data's with its filter's). Within one dataset name, k and filter, every point
//! must carry the same one: a table, comparison or merged store that mixed two would set
//! numbers of different data side by side as if they were one dataset's. Points without a
//! fingerprint (files of earlier versions, ann-benchmarks results) are not judged.

use crate::params::Params;
use crate::registry::filter::filter_of;
use std::collections::BTreeMap;

/// One point's fingerprint and where it is.
#[derive(Debug, Clone)]
pub struct Print {
    /// The dataset name, k and filter the fingerprint must agree within.
    pub group: String,
    pub fingerprint: String,
    /// Where the point is: its file (and store).
    pub source: String,
}

impl Print {
    /// The print of a point of `dataset` at `count` with `query_args`, found at `source`.
    pub fn of(
        dataset: &str,
        count: usize,
        query_args: &Params,
        fingerprint: &str,
        source: String,
    ) -> Print {
        let filter = filter_of(query_args)
            .map(|(kind, s)| format!(", {kind} filter at selectivity {s}"))
            .unwrap_or_default();
        Print {
            group: format!("'{dataset}' (k={count}{filter})"),
            fingerprint: fingerprint.to_string(),
            source,
        }
    }
}

/// The first group whose points carry more than one fingerprint, described: the group and,
/// per fingerprint, how many points carry it and one of them. `None` when none mixes.
pub fn mixed(prints: &[Print]) -> Option<String> {
    let mut groups: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for p in prints {
        groups
            .entry(&p.group)
            .or_default()
            .entry(&p.fingerprint)
            .or_default()
            .push(&p.source);
    }
    let (group, by_print) = groups.into_iter().find(|(_, f)| f.len() > 1)?;
    let each: Vec<String> = by_print
        .iter()
        .map(|(f, sources)| {
            let short = &f[..f.len().min(12)];
            format!(
                "fingerprint {short}: {} point(s), e.g. {}",
                sources.len(),
                sources[0]
            )
        })
        .collect();
    Some(format!(
        "the points of {group} were measured on {} different data files under that name \
         ({})",
        by_print.len(),
        each.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_print_per_group_passes_and_two_are_named() {
        let q = Params::new();
        let mut f = Params::new();
        f.insert("selectivity".into(), "0.1".into());
        let a = Print::of("d", 10, &q, "aaaa", "s1/a.hdf5".into());
        let b = Print::of("d", 10, &q, "bbbb", "s2/b.hdf5".into());
        // A filtered point's fingerprint is its filter's: another group.
        let c = Print::of("d", 10, &f, "cccc", "s1/c.hdf5".into());
        let k = Print::of("d", 5, &q, "dddd", "s1/d.hdf5".into());
        assert_eq!(mixed(&[a.clone(), c.clone(), k, a.clone()]), None);
        let e = mixed(&[a, c, b]).unwrap();
        assert!(
            e.contains("'d' (k=10) were measured on 2 different data files")
                && e.contains("fingerprint aaaa: 1 point(s), e.g. s1/a.hdf5")
                && e.contains("fingerprint bbbb: 1 point(s), e.g. s2/b.hdf5"),
            "{e}"
        );
    }
}
