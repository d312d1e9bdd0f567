//! Which labels make a series, and in which order: the order given (`--series a,b,c`, globs
//! such as `nightly-*` expanded in natural order), the time each label's run started, or the
//! server version compared as numbers.

use crate::results::PointResult;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// How the elements of a series are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// As `--series` lists them.
    Given,
    /// By the time each label's run started (the default without `--series`).
    #[default]
    Time,
    /// By the server version, compared as versions (`11.10` after `11.9`).
    Version,
}

impl Order {
    /// The order when none is asked for: as `--series` lists the labels, else by time.
    pub fn default_for(series: &[String]) -> Order {
        if series.is_empty() {
            Order::Time
        } else {
            Order::Given
        }
    }
}

impl std::str::FromStr for Order {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "given" => Ok(Order::Given),
            "time" => Ok(Order::Time),
            "version" => Ok(Order::Version),
            other => Err(format!(
                "unknown order '{other}': expected given, time or version"
            )),
        }
    }
}

/// One label of a store: the facts that order it.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelFacts {
    pub label: String,
    /// The earliest start of its points' runs (or, for files without a start time, the
    /// earliest finish), RFC 3339.
    pub time: Option<String>,
    /// Whether `time` is a finish time (files written before start times were recorded).
    pub time_is_finish: bool,
    /// The server versions of its points (one, normally).
    pub versions: Vec<String>,
    /// The client host names of its points (empty names left out).
    pub hosts: Vec<String>,
}

/// The facts of every label in `points`, by label.
pub fn label_facts<'a>(
    points: impl IntoIterator<Item = &'a PointResult>,
) -> BTreeMap<String, LabelFacts> {
    let mut out: BTreeMap<String, LabelFacts> = BTreeMap::new();
    for p in points {
        let Some(label) = &p.label else { continue };
        let f = out.entry(label.clone()).or_insert_with(|| LabelFacts {
            label: label.clone(),
            time: None,
            time_is_finish: false,
            versions: Vec::new(),
            hosts: Vec::new(),
        });
        let env = &p.environment;
        let (t, finish) = match &env.started_at {
            Some(s) => (Some(s.clone()), false),
            None => (
                Some(env.finished_at.clone()).filter(|s| !s.is_empty()),
                true,
            ),
        };
        if let Some(t) = t {
            // A started time wins over a finish time; the earliest of each kind.
            let replace = match &f.time {
                None => true,
                Some(old) => {
                    (f.time_is_finish && !finish) || (f.time_is_finish == finish && t < *old)
                }
            };
            if replace {
                f.time = Some(t);
                f.time_is_finish = finish;
            }
        }
        if !f.versions.contains(&env.server_version) && !env.server_version.is_empty() {
            f.versions.push(env.server_version.clone());
        }
        if !env.hostname.is_empty() && !f.hosts.contains(&env.hostname) {
            f.hosts.push(env.hostname.clone());
        }
    }
    out
}

/// The labels of the series, in order. `patterns` (labels or globs with `*` and `?`) choose
/// them; none: every label.
pub fn series_labels(
    facts: &BTreeMap<String, LabelFacts>,
    patterns: &[String],
    order: Order,
) -> crate::Result<Vec<String>> {
    if facts.is_empty() {
        return Err(crate::Error::Config(
            "no point has a label: a series is made of labelled runs (`annbench run --label \
             NAME`, or --label auto for the server's version)"
                .into(),
        ));
    }
    let mut natural: Vec<&String> = facts.keys().collect();
    natural.sort_by(|a, b| natural_cmp(a, b));
    let mut chosen: Vec<String> = Vec::new();
    if patterns.is_empty() {
        chosen = natural.iter().map(|s| s.to_string()).collect();
    }
    // `a,b` names two labels unless a label is spelt so (labels may hold commas).
    let patterns: Vec<&str> = patterns
        .iter()
        .flat_map(|p| match facts.contains_key(p) {
            true => vec![p.as_str()],
            false => p.split(',').map(str::trim).collect(),
        })
        .collect();
    for pat in patterns {
        let matched: Vec<&String> = natural
            .iter()
            .copied()
            .filter(|l| glob_match(pat, l))
            .collect();
        if matched.is_empty() {
            return Err(crate::Error::Config(format!(
                "--series: no label matches '{pat}'; the labels present are {}",
                natural
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for l in matched {
            if !chosen.contains(l) {
                chosen.push(l.clone());
            }
        }
    }
    match order {
        Order::Given => {}
        Order::Time => {
            if let Some(l) = chosen.iter().find(|l| facts[*l].time.is_none()) {
                return Err(crate::Error::Config(format!(
                    "--order time: the points labelled '{l}' record no time; order the series \
                     with --series a,b,c or --order version"
                )));
            }
            chosen.sort_by(|a, b| facts[a].time.cmp(&facts[b].time));
        }
        Order::Version => {
            let mut keyed = Vec::new();
            for l in &chosen {
                let f = &facts[l];
                let [v] = f.versions.as_slice() else {
                    return Err(crate::Error::Config(format!(
                        "--order version: the points labelled '{l}' come from {} server \
                         versions ({}); pick one server's points with --algorithm",
                        f.versions.len(),
                        f.versions.join("; ")
                    )));
                };
                let parsed = version_numbers(v);
                if parsed.is_empty() {
                    return Err(crate::Error::Config(format!(
                        "--order version: the server version of '{l}' ('{v}') holds no \
                         version number; order with --series or --order time"
                    )));
                }
                keyed.push((parsed, f.time.clone(), l.clone()));
            }
            // Versions of two products (MariaDB 11.8, PostgreSQL 17) are not one order.
            let products: std::collections::BTreeSet<&str> = chosen
                .iter()
                .filter_map(|l| facts[l].versions.first()?.split_whitespace().next())
                .collect();
            if products.len() > 1 {
                return Err(crate::Error::Config(format!(
                    "--order version: the runs come from different servers ({}), whose versions \
                     do not order one series; pick one with --algorithm",
                    products.into_iter().collect::<Vec<_>>().join(", ")
                )));
            }
            keyed.sort();
            chosen = keyed.into_iter().map(|k| k.2).collect();
        }
    }
    Ok(chosen)
}

/// The version numbers in a version string, in order: `PostgreSQL 17.6, pgvector 0.8.0` ->
/// `[[17, 6], [0, 8, 0]]`. Compared as lists, `11.10` comes after `11.9`.
pub fn version_numbers(text: &str) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let mut current: Vec<u64> = Vec::new();
    let mut digits = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            current.push(digits.parse().unwrap_or(u64::MAX));
            digits.clear();
            if c == '.' && chars.peek().is_some_and(|n| n.is_ascii_digit()) {
                continue;
            }
        }
        if current.len() > 1 {
            out.push(std::mem::take(&mut current));
        }
        current.clear();
    }
    if !digits.is_empty() {
        current.push(digits.parse().unwrap_or(u64::MAX));
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}

/// `text` against a pattern where `*` matches any run of characters and `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Natural order: runs of digits compared as numbers (`run-9` before `run-10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let chunks = |s: &str| -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, text)) if *d == digit => text.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    };
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, ta), (db, tb)) in ca.iter().zip(&cb) {
        let o = match (da, db) {
            (true, true) => {
                let (x, y) = (ta.trim_start_matches('0'), tb.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            _ => ta.cmp(tb),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(
            version_numbers("PostgreSQL 17.6, pgvector 0.8.0"),
            vec![vec![17, 6], vec![0, 8, 0]]
        );
        assert_eq!(
            version_numbers("MariaDB 11.10.2-MariaDB"),
            vec![vec![11, 10, 2]]
        );
        assert!(version_numbers("MariaDB 11.9.1") < version_numbers("MariaDB 11.10.0"));
        assert!(version_numbers("no version").is_empty());
    }

    #[test]
    fn globs_and_natural_order() {
        assert!(glob_match("nightly-*", "nightly-12"));
        assert!(glob_match("n?ght*", "night"));
        assert!(!glob_match("nightly-*", "weekly-1"));
        assert!(glob_match("*", ""));
        let mut v = vec!["run-10", "run-9", "run-1"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["run-1", "run-9", "run-10"]);
    }

    #[test]
    fn a_label_with_a_comma_is_named_whole() {
        let facts: BTreeMap<String, LabelFacts> = ["11.8, tuned", "r1", "r2"]
            .into_iter()
            .map(|l| {
                let f = LabelFacts {
                    label: l.into(),
                    time: None,
                    time_is_finish: false,
                    versions: vec![],
                    hosts: vec![],
                };
                (l.to_string(), f)
            })
            .collect();
        let named = |p: &[&str]| {
            let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            series_labels(&facts, &p, Order::Given)
        };
        assert_eq!(named(&["r2,r1"]).unwrap(), ["r2", "r1"]);
        assert_eq!(
            named(&["r1", "11.8, tuned"]).unwrap(),
            ["r1", "11.8, tuned"]
        );
        let e = named(&["11.8"]).unwrap_err().to_string();
        assert!(e.contains("no label matches '11.8'"), "{e}");
    }
}
