//! The runbook model, its reader (big-ann-benchmarks' YAML, read as is; see [`super`] for the
//! format and annbench's extensions) and its checks.
//!
//! Reading checks the structure (keys, types, ranges, step numbering, a search step) and
//! replays the steps on a [`LiveSet`] (tags inserted that are live, deleted or replaced that
//! are not, the live count against `max_pts`). [`Runbook::validate`] repeats the replay
//! against a dataset's train row count, before anything runs. Every error names the file, the
//! entry, the step and the fix.

use super::live::LiveSet;
use super::step::{During, Maintenance, Operation, Step};
use crate::{Error, Result};
use std::fmt::Write as _;
use std::path::Path;

#[path = "runbook_read.rs"]
mod read;
#[path = "runbook_yaml.rs"]
mod yaml;

pub use read::{MAX_BATCH, MAX_STEPS, MAX_TAGS, RATES};
use read::{list_or_none, read_entry};
use yaml::scalar_text;

/// A streaming runbook: one entry of a runbook file, its steps in numeric order.
#[derive(Debug, Clone, PartialEq)]
pub struct Runbook {
    /// The entry key (a dataset name in big-ann-benchmarks' files).
    pub entry: String,
    /// Where it was read from (a file path, or `generated`), for messages.
    pub source: String,
    /// The most tags live at any time: the file's `max_pts`, or the peak of the live count
    /// when the file gives none.
    pub max_pts: usize,
    /// Steps 1, 2, 3, ... in order.
    pub steps: Vec<Step>,
}

impl Runbook {
    /// Reads entry `entry` (default: `dataset`) of the runbook file at `path`.
    pub fn load(path: &Path, dataset: &str, entry: Option<&str>) -> Result<Runbook> {
        let text = crate::fsutil::read_text(path, "a runbook")?;
        Runbook::parse(&text, &path.display().to_string(), dataset, entry)
    }

    /// Reads entry `entry` (default: `dataset`) of a runbook text; `source` names it in
    /// messages.
    pub fn parse(text: &str, source: &str, dataset: &str, entry: Option<&str>) -> Result<Runbook> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let doc = yaml::parse(text)
            .map_err(|e| Error::Config(format!("{source}: not a readable YAML runbook: {e}")))?;
        let serde_norway::Value::Mapping(top) = doc else {
            return Err(Error::Config(format!(
                "{source}: a runbook is a mapping from dataset names to steps (big-ann-benchmarks' \
                 format: `name: {{max_pts: N, 1: {{operation: insert, start: 0, end: N}}, ...}}`)"
            )));
        };
        let wanted = entry.unwrap_or(dataset);
        let mut names = Vec::new();
        let mut found = None;
        for (k, v) in &top {
            let name = scalar_text(k);
            if name == wanted {
                found = Some(v);
            }
            names.push(name);
        }
        let Some(body) = found else {
            let how = if entry.is_some() {
                "give one of them with --entry KEY".to_string()
            } else if let Some(derived) =
                names.iter().find(|n| n.starts_with(&format!("{dataset}-")))
            {
                // A runbook written for a derived set (`runbook generate clustered` writes one
                // for `<dataset>-clustered`) runs on that set: its steps mean other rows here.
                format!(
                    "the entry '{derived}' is for the dataset '{derived}' (its rows in another \
                     order): give --dataset {derived}, or --entry KEY to run an entry's steps on \
                     '{dataset}' itself"
                )
            } else {
                format!(
                    "the dataset is '{dataset}': give the entry to run with --entry KEY when the \
                     names differ"
                )
            };
            return Err(Error::Config(format!(
                "{source}: no entry '{wanted}'; the file has {}; {how}",
                list_or_none(&names)
            )));
        };
        let rb = read_entry(body, source, wanted)?;
        Ok(rb)
    }

    /// Checks the whole runbook against a dataset of `train_rows` train rows: every id inside
    /// the train set, and the replay of [`Self::parse`] (tags inserted once, deleted and
    /// replaced only while live, the live count within `max_pts`). Call before anything runs.
    pub fn validate(&self, train_rows: usize) -> Result<()> {
        self.replay(Some(train_rows)).map(drop)
    }

    /// Steps that search.
    pub fn search_steps(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.op == Operation::Search)
            .count()
    }

    /// The live count after each step (the replay of a valid runbook).
    pub fn live_counts(&self) -> Result<Vec<usize>> {
        self.replay(None)
    }

    /// The largest train row id + 1 the runbook uses (the train rows it needs).
    pub fn rows_needed(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match &s.op {
                Operation::Insert { end, .. } => *end,
                Operation::Replace { ids, .. } => ids.end,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// Replays the steps on a [`LiveSet`]: the live count after each, or the first error.
    fn replay(&self, train_rows: Option<usize>) -> Result<Vec<usize>> {
        let mut live = LiveSet::new();
        let mut counts = Vec::with_capacity(self.steps.len());
        for s in &self.steps {
            let at = |what: String| self.step_error(s, what);
            if let Some(n) = train_rows {
                let ids = match &s.op {
                    Operation::Insert { start, end } => Some(*start..*end),
                    Operation::Replace { ids, .. } => Some(ids.clone()),
                    _ => None,
                };
                if let Some(ids) = ids.filter(|r| r.end > n) {
                    return Err(at(format!(
                        "train row ids [{}, {}) go past the dataset's {n} train rows (ids 0 to \
                         {}); use a larger dataset, or generate a runbook for this one with \
                         `annbench runbook generate`",
                        ids.start,
                        ids.end,
                        n.saturating_sub(1)
                    )));
                }
            }
            live.apply(s).map_err(|e| at(e.to_string()))?;
            if live.is_empty() && matches!(s.op, Operation::Search | Operation::Maintenance(_)) {
                // Recall over no rows has no value (0 of 0 neighbours): refused rather than
                // scored, as a filter that matches no row is.
                return Err(at(
                    "no rows are live here, so there is nothing to search for and \
                     recall has no value; insert rows before this step or remove it"
                        .into(),
                ));
            }
            if live.len() > self.max_pts {
                return Err(at(format!(
                    "{} tags are live, more than max_pts {}; raise max_pts to at least the peak \
                     live count ({}), or delete rows before inserting",
                    live.len(),
                    self.max_pts,
                    self.peak_from(&live, s.number)
                )));
            }
            counts.push(live.len());
        }
        Ok(counts)
    }

    /// The peak live count over the remaining steps, for the max_pts message (the replay stops
    /// at the first error; this one goes on as far as the steps allow).
    fn peak_from(&self, live: &LiveSet, after: u32) -> usize {
        let mut live = live.clone();
        let mut peak = live.len();
        for s in self.steps.iter().filter(|s| s.number > after) {
            if live.apply(s).is_err() {
                break;
            }
            peak = peak.max(live.len());
        }
        peak
    }

    /// An error at step `s`: the file, the entry, the step and its operation, then `what`.
    pub fn step_error(&self, s: &Step, what: String) -> Error {
        Error::Config(format!(
            "{}: entry '{}', step {} ({}): {what}",
            self.source,
            self.entry,
            s.number,
            s.op.name()
        ))
    }

    /// The runbook in big-ann-benchmarks' format: the entry, `max_pts`, then the steps under
    /// integer keys in order (annbench's extensions as extra keys). [`Self::parse`] reads it
    /// back to an equal runbook.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}:", yaml_key(&self.entry));
        out.push_str(&self.body_yaml());
        out
    }

    /// `max_pts` and the steps, indented for an entry.
    fn body_yaml(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "  max_pts: {}", self.max_pts);
        for s in &self.steps {
            let _ = writeln!(out, "  {}:", s.number);
            let _ = writeln!(out, "    operation: {}", s.op.name());
            match &s.op {
                Operation::Insert { start, end } | Operation::Delete { start, end } => {
                    let _ = writeln!(out, "    start: {start}\n    end: {end}");
                }
                Operation::Replace { tags, ids } => {
                    let _ = writeln!(
                        out,
                        "    tags_start: {}\n    tags_end: {}\n    ids_start: {}\n    ids_end: {}",
                        tags.start, tags.end, ids.start, ids.end
                    );
                }
                Operation::Maintenance(what) => {
                    let names: Vec<&str> = what.iter().map(|m| m.as_str()).collect();
                    let _ = writeln!(out, "    what: [{}]", names.join(", "));
                }
                Operation::Search => {}
            }
            if let Some(r) = s.rate {
                let _ = writeln!(out, "    rate: {r}");
            }
            if let Some(b) = s.batch {
                let _ = writeln!(out, "    batch: {b}");
            }
            if let Some(d) = s.during {
                let _ = writeln!(out, "    during: {{clients: {}}}", d.clients);
            }
        }
        out
    }

    /// 32 hex digits naming the runbook's content: `max_pts` and every step with its
    /// extensions, in the canonical form [`Self::to_yaml`] writes (not the file's bytes, so
    /// key order, comments and `gt_url` do not count, nor the entry's name).
    pub fn fingerprint(&self) -> String {
        let mut h = twox_hash::XxHash3_128::new();
        h.write(b"annbench runbook v1\0");
        h.write(self.body_yaml().as_bytes());
        format!("{:032x}", h.finish_128())
    }

    /// 32 hex digits naming what the ground truth depends on: the data steps (insert, delete,
    /// replace) and the numbers of the search steps, not rates, batches, concurrency or
    /// maintenance (see [`super::truth`]).
    pub fn data_fingerprint(&self) -> String {
        let mut h = twox_hash::XxHash3_128::new();
        h.write(b"annbench runbook data v1\0");
        for s in &self.steps {
            let (code, a, b, c, d) = match &s.op {
                Operation::Insert { start, end } => (1u8, *start, *end, 0, 0),
                Operation::Delete { start, end } => (2, *start, *end, 0, 0),
                Operation::Replace { tags, ids } => (3, tags.start, tags.end, ids.start, ids.end),
                Operation::Search => (4, s.number as usize, 0, 0, 0),
                Operation::Maintenance(_) => continue,
            };
            h.write(&[code]);
            for v in [a, b, c, d] {
                h.write(&(v as u64).to_le_bytes());
            }
        }
        format!("{:032x}", h.finish_128())
    }
}

/// A YAML key for an entry name: bare when that reads back as the same string.
fn yaml_key(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with(['-', '.'])
        && !name.chars().all(|c| c.is_ascii_digit() || c == '.')
        && !matches!(
            name.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
        );
    if plain {
        name.to_string()
    } else {
        serde_json::Value::from(name).to_string()
    }
}

#[cfg(test)]
#[path = "runbook_tests.rs"]
mod tests;
