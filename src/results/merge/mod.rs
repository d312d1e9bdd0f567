//! `annbench merge DIR...`: combine result stores (the shards of a sweep, runs copied back from
//! several nodes) into one, which tables, exports and reports then read like any store.
//!
//! A point's path inside a store is its identity. Copies of one file, or of one measurement,
//! are merged once. Two different measurements of one point are refused, naming both, unless
//! the caller picks a rule: keep each under its label and host (`label@host`), or keep the
//! newer. Everything is decided before the first file is written, and every file is copied
//! whole (temp file, sync, rename): a merge that stops leaves whole points, and running it
//! again finishes it.

mod copy;
mod plans;
mod scan;

pub use plans::{PlanStatus, plans, store_files};

use crate::{Error, Result};
use scan::{Entry, Measured, measured, same_bytes};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What to do with two different measurements of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Stop and name them (nothing is written).
    Refuse,
    /// Keep both, each labelled `<label>@<host>` (`<host>` without a label).
    ByHost,
    /// Keep the one that finished last.
    Newest,
}

impl FromStr for OnConflict {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "refuse" => Ok(OnConflict::Refuse),
            "by-host" => Ok(OnConflict::ByHost),
            "newest" => Ok(OnConflict::Newest),
            other => Err(Error::Config(format!(
                "--on-conflict {other}: expected refuse, by-host or newest"
            ))),
        }
    }
}

/// One file to write into the store.
#[derive(Debug, Clone)]
pub struct Copy {
    pub from: PathBuf,
    /// Path inside the store.
    pub to: PathBuf,
    /// The new label, when the point is kept by host.
    pub label: Option<String>,
    /// True when it replaces a file of the store (`newest`).
    pub replaces: bool,
}

/// What a merge does.
#[derive(Debug, Clone, Default)]
pub struct MergePlan {
    pub copies: Vec<Copy>,
    /// Store files kept under another label (by host) and then removed.
    pub removals: Vec<PathBuf>,
    /// Points already in the store, byte for byte or as the same measurement.
    pub unchanged: usize,
    /// Further copies of a point found in more than one source (merged once), or of one the
    /// store already holds.
    pub duplicates: usize,
    /// Measurements left out by `newest`.
    pub superseded: usize,
    /// Sources that hold no point file.
    pub empty: Vec<PathBuf>,
}

/// A file and, for annbench files, its measurement.
struct Found {
    entry: Entry,
    measured: Option<Measured>,
    in_store: bool,
}

/// Decide how `sources` merge into `store`; reads, writes nothing.
pub fn plan(sources: &[PathBuf], store: &Path, rule: OnConflict) -> Result<MergePlan> {
    if sources.is_empty() {
        return Err(Error::Config(
            "name the result directories to merge, e.g. annbench merge results-1 results-2".into(),
        ));
    }
    let mut out = MergePlan::default();
    let mut groups: BTreeMap<PathBuf, Vec<Entry>> = BTreeMap::new();
    for dir in sources {
        if !dir.is_dir() {
            return Err(Error::Config(format!(
                "{} is not a directory: name result directories written by annbench run \
                 --results",
                dir.display()
            )));
        }
        let entries = scan::point_files(dir)?;
        if entries.is_empty() {
            out.empty.push(dir.clone());
        }
        for e in entries {
            groups.entry(e.rel.clone()).or_default().push(e);
        }
    }
    let stored: BTreeMap<PathBuf, Entry> = plans::store_files(store)?
        .into_iter()
        .map(|(rel, path)| {
            let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            (rel.clone(), Entry { rel, path, len })
        })
        .collect();
    let mut conflicts = Vec::new();
    let mut prints = Vec::new();
    let in_sources: BTreeSet<PathBuf> = groups.keys().cloned().collect();
    for (rel, entries) in groups {
        let mut found: Vec<Found> = Vec::new();
        if let Some(e) = stored.get(&rel) {
            let m = measured(&e.path)?;
            if let Some(m) = &m {
                prints.extend(print_of(m, e, &[]));
            }
            found.push(Found {
                measured: m,
                entry: e.clone(),
                in_store: true,
            });
        }
        let mut in_store = false;
        for e in entries {
            let m = measured(&e.path)?;
            if let Some(m) = &m {
                prints.extend(print_of(m, &e, sources));
            }
            let twin = found
                .iter()
                .map(|f| Ok((f.in_store, same_point(f, &e, m.as_ref())?)))
                .collect::<Result<Vec<_>>>()?
                .into_iter()
                .find(|(_, same)| *same);
            match twin {
                Some((true, _)) if !in_store => {
                    in_store = true;
                    out.unchanged += 1;
                }
                Some(_) => out.duplicates += 1,
                None => found.push(Found {
                    entry: e,
                    measured: m,
                    in_store: false,
                }),
            }
        }
        match found.as_slice() {
            [] => {}
            [one] if one.in_store => {}
            [one] => out.copies.push(Copy {
                from: one.entry.path.clone(),
                to: rel.clone(),
                label: None,
                replaces: false,
            }),
            _ => {
                if let Err(why) = resolve(&rel, &found, rule, &stored, &mut out) {
                    conflicts.push(why);
                }
            }
        }
    }
    // Points the store keeps that no source holds count as well: a source may not bring
    // other data under a name the store has.
    for (rel, e) in &stored {
        if !in_sources.contains(rel) {
            if let Some(m) = measured(&e.path)? {
                prints.extend(print_of(&m, e, &[]));
            }
        }
    }
    if let Some(what) = super::mixed::mixed(&prints) {
        return Err(Error::Results(format!(
            "{what}; nothing was merged. One store holds one data file's points per dataset \
             name (tables and comparisons set them side by side as one dataset's): merge these \
             into separate stores (--results), or measure one side again on the other's file \
             and merge that"
        )));
    }
    if !conflicts.is_empty() {
        return Err(refusal(&conflicts, rule));
    }
    check_targets(&out, &stored)?;
    Ok(out)
}

/// The fingerprint of a point at `e` (in one of `sources`, else in the store), if it has one.
fn print_of(m: &Measured, e: &Entry, sources: &[PathBuf]) -> Option<super::mixed::Print> {
    let f = m.fingerprint.as_deref()?;
    let source = if sources.iter().any(|s| e.path.starts_with(s)) {
        e.path.display().to_string()
    } else {
        format!("{} (in the store)", e.path.display())
    };
    Some(super::mixed::Print::of(
        &m.dataset,
        m.count,
        &m.query_args,
        f,
        source,
    ))
}

/// The same file, the same bytes, or the same measurement (host, finish time and passes).
fn same_point(f: &Found, e: &Entry, m: Option<&Measured>) -> Result<bool> {
    if same_file(&f.entry.path, &e.path) || same_bytes(&f.entry, e)? {
        return Ok(true);
    }
    Ok(match (&f.measured, m) {
        (Some(a), Some(b)) => same_measurement(a, b),
        _ => false,
    })
}

/// One measurement, whatever its label: same host, finish time and passes.
fn same_measurement(a: &Measured, b: &Measured) -> bool {
    !a.finished_at.is_empty()
        && (&a.hostname, &a.finished_at, &a.passes) == (&b.hostname, &b.finished_at, &b.passes)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Apply `rule` to two or more measurements of the point at `rel`, or say why it cannot.
fn resolve(
    rel: &Path,
    found: &[Found],
    rule: OnConflict,
    stored: &BTreeMap<PathBuf, Entry>,
    out: &mut MergePlan,
) -> std::result::Result<(), String> {
    let ms: Vec<&Measured> = found.iter().filter_map(|f| f.measured.as_ref()).collect();
    let what = ms
        .first()
        .map_or_else(|| rel.display().to_string(), |m| m.what.clone());
    let list: Vec<String> = found
        .iter()
        .map(|f| match &f.measured {
            Some(m) => format!(
                "{} (host {}, finished {})",
                f.entry.path.display(),
                if m.hostname.is_empty() {
                    "not recorded"
                } else {
                    &m.hostname
                },
                m.finished_at
            ),
            None => format!("{} (an ann-benchmarks file)", f.entry.path.display()),
        })
        .collect();
    let head = format!(
        "{what} was measured {} times: {}",
        found.len(),
        list.join("; ")
    );
    if ms.len() < found.len() || rule == OnConflict::Refuse {
        return Err(head);
    }
    match rule {
        OnConflict::Refuse => Err(head),
        OnConflict::Newest => {
            let newest = found
                .iter()
                .max_by(|a, b| finished(a).cmp(finished(b)))
                .filter(|n| found.iter().filter(|f| finished(f) == finished(n)).count() == 1)
                .ok_or_else(|| format!("{head}: no single one finished last"))?;
            out.superseded += found.len() - 1;
            if !newest.in_store {
                out.copies.push(Copy {
                    from: newest.entry.path.clone(),
                    to: rel.to_path_buf(),
                    label: None,
                    replaces: found.iter().any(|f| f.in_store),
                });
            }
            Ok(())
        }
        OnConflict::ByHost => {
            let hosts: BTreeSet<&str> = ms.iter().map(|m| m.hostname.as_str()).collect();
            if hosts.len() < ms.len() || hosts.contains("") {
                return Err(format!(
                    "{head}: by-host needs a different recorded host for each"
                ));
            }
            for f in found {
                let m = f.measured.as_ref().ok_or_else(|| head.clone())?;
                let label = match &m.label {
                    Some(l) => format!("{l}@{}", m.hostname),
                    None => m.hostname.clone(),
                };
                let to = relabelled_path(&f.entry.path, &label).map_err(|e| e.to_string())?;
                if f.in_store {
                    out.removals.push(rel.to_path_buf());
                }
                // Merged by host before: the store already holds it under the new label.
                let kept = match stored.get(&to) {
                    Some(e) => measured(&e.path)
                        .map_err(|e| e.to_string())?
                        .is_some_and(|s| same_measurement(&s, m)),
                    None => false,
                };
                if kept {
                    out.unchanged += 1;
                    continue;
                }
                out.copies.push(Copy {
                    from: f.entry.path.clone(),
                    to,
                    label: Some(label),
                    replaces: false,
                });
            }
            Ok(())
        }
    }
}

fn finished(f: &Found) -> &str {
    f.measured.as_ref().map_or("", |m| m.finished_at.as_str())
}

/// Where the point in `file` goes under `label`, inside a store.
fn relabelled_path(file: &Path, label: &str) -> Result<PathBuf> {
    let mut point = super::read_point(file)?;
    point.label = Some(label.to_string());
    super::point_path(Path::new(""), &point.key())
}

/// Two copies may not land on one path, nor a relabelled point on a different stored one.
fn check_targets(out: &MergePlan, stored: &BTreeMap<PathBuf, Entry>) -> Result<()> {
    let mut seen = BTreeSet::new();
    for c in &out.copies {
        let clash = !seen.insert(c.to.clone())
            || (c.label.is_some() && stored.contains_key(&c.to) && !out.removals.contains(&c.to));
        if clash {
            return Err(Error::Results(format!(
                "{} would be written twice (a point kept by host has the label of another point \
                 in the store); merge with --on-conflict newest or refuse, or rename the label",
                c.to.display()
            )));
        }
    }
    Ok(())
}

fn refusal(conflicts: &[String], rule: OnConflict) -> Error {
    const SHOWN: usize = 10;
    let mut text = format!(
        "{} point(s) were measured more than once, differently; nothing was merged:",
        conflicts.len()
    );
    for c in conflicts.iter().take(SHOWN) {
        text.push_str(&format!("\n  {c}"));
    }
    if conflicts.len() > SHOWN {
        text.push_str(&format!("\n  ... and {} more", conflicts.len() - SHOWN));
    }
    text.push_str(match rule {
        OnConflict::Refuse => {
            "\nkeep each measurement under its label and host with --on-conflict by-host, keep \
             the newer with --on-conflict newest, or remove the one you do not want"
        }
        _ => "\nremove the measurements you do not want and merge again",
    });
    Error::Results(text)
}

/// Carry out `plan` on `store`: every copy (whole files), then the removals.
pub fn apply(plan: &MergePlan, store: &Path) -> Result<()> {
    std::fs::create_dir_all(store).map_err(|e| Error::io(store, "cannot create directory", e))?;
    // A full disk is found before the first copy, not half-way through the merge.
    let bytes: u64 = plan
        .copies
        .iter()
        .filter_map(|c| std::fs::metadata(&c.from).ok())
        .map(|m| m.len())
        .sum();
    let what = format!("{} point file(s)", plan.copies.len());
    crate::fsutil::ensure_space(store, bytes, &what)?;
    for c in &plan.copies {
        copy::copy_point(&c.from, &store.join(&c.to), c.label.as_deref())?;
    }
    for rel in &plan.removals {
        copy::remove_point(&store.join(rel))?;
    }
    Ok(())
}

/// The store's files after `plan` (for a dry run's plan summary).
pub fn files_after(plan: &MergePlan, store: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let replaced: BTreeSet<&PathBuf> = plan
        .copies
        .iter()
        .map(|c| &c.to)
        .chain(plan.removals.iter())
        .collect();
    let mut files: Vec<(PathBuf, PathBuf)> = store_files(store)?
        .into_iter()
        .filter(|(rel, _)| !replaced.contains(rel))
        .collect();
    files.extend(plan.copies.iter().map(|c| (c.to.clone(), c.from.clone())));
    Ok(files)
}
