//! Reading one runbook entry from its YAML value: keys, types, ranges, step numbering and
//! annbench's extensions, with errors that say what to write instead.

use super::yaml::{Num, number, scalar_text};
use super::{During, Maintenance, Operation, Runbook, Step};
use crate::{Error, Result};
use serde_norway::{Mapping, Value};
use std::ops::{Range, RangeInclusive};

/// Operations a step may name.
const OPERATIONS: &str = "insert, delete, replace, search, maintenance";
/// Keys of an entry besides the step numbers.
const ENTRY_KEYS: &str = "max_pts, gt_url and the step numbers 1, 2, 3, ...";

/// The most steps an entry holds (big-ann-benchmarks' longest runbooks have a few thousand).
pub const MAX_STEPS: u32 = 100_000;
/// Range ends (tags and train row ids) and `max_pts` at most: the stream tables' ids are
/// 32-bit integers, so tags run from 0 to 2^31 - 1.
pub const MAX_TAGS: usize = 1 << 31;
/// Rows per write statement at most (`batch`, `--batch`): a batch is gathered in memory
/// and sent as one statement or transaction.
pub const MAX_BATCH: usize = 1_000_000;
/// Target rows per second of a write step, least and most: the last batch of the largest
/// step ([`MAX_TAGS`] rows) at the least rate is due 2.1e12 s after the step's start, which a
/// `Duration` holds, and no database keeps pace with the most anyway.
pub const RATES: RangeInclusive<f64> = 0.001..=1e9;

pub(super) fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "no entries".into()
    } else {
        let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
        format!("entries {}", quoted.join(", "))
    }
}

/// Reads one entry: `max_pts`, `gt_url` and the numbered steps.
pub(super) fn read_entry(body: &Value, source: &str, entry: &str) -> Result<Runbook> {
    let at = |what: String| Error::Config(format!("{source}: entry '{entry}': {what}"));
    let Value::Mapping(map) = body else {
        return Err(at(
            "is not a mapping of steps; write `max_pts: N` and numbered steps under it".into(),
        ));
    };
    let mut max_pts = None;
    let mut raw_steps: Vec<(u32, &Value)> = Vec::new();
    for (k, v) in map {
        match k {
            k if number(k).is_some() => {
                let step = match number(k) {
                    Some(Num::Int(n)) if (1..=i128::from(MAX_STEPS)).contains(&n) => n as u32,
                    _ => {
                        return Err(at(format!(
                            "step key {} is not a step number: steps are numbered 1, 2, 3, ... \
                             up to {MAX_STEPS}",
                            scalar_text(k)
                        )));
                    }
                };
                raw_steps.push((step, v));
            }
            Value::String(s) if s == "max_pts" => {
                let most = whole("max_pts", v, 0..=MAX_TAGS).map_err(|e| {
                    at(format!(
                        "{e}, the most rows live at once (tags are the stream tables' 32-bit \
                         ids)"
                    ))
                })?;
                max_pts = Some(most);
            }
            Value::String(s) if s == "gt_url" => {}
            Value::String(s) if s.parse::<u64>().is_ok() => {
                return Err(at(format!(
                    "step key '{s}' is a string: write step numbers unquoted (big-ann-benchmarks \
                     looks steps up by integer)"
                )));
            }
            other => {
                return Err(at(format!(
                    "unknown key '{}'; an entry holds {ENTRY_KEYS}",
                    scalar_text(other)
                )));
            }
        }
    }
    raw_steps.sort_by_key(|&(n, _)| n);
    if raw_steps.is_empty() {
        return Err(at(
            "has no steps; add numbered steps (1: {operation: insert, start: 0, end: N}, 2: \
             {operation: search}, ...)"
                .into(),
        ));
    }
    for (i, &(n, _)) in raw_steps.iter().enumerate() {
        let want = i as u32 + 1;
        if n != want {
            return Err(at(format!(
                "step {want} is missing (the next step is {n}): number steps 1, 2, 3, ... without \
                 gaps (big-ann-benchmarks stops reading at the first missing number)"
            )));
        }
    }
    let steps = raw_steps
        .into_iter()
        .map(|(n, v)| read_step(n, v).map_err(|e| at(format!("step {n}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    if !steps.iter().any(|s| s.op == Operation::Search) {
        return Err(at(
            "has no search step, so nothing would be measured; add {operation: search} after \
             the steps to measure"
                .into(),
        ));
    }
    let mut rb = Runbook {
        entry: entry.to_string(),
        source: source.to_string(),
        max_pts: max_pts.unwrap_or(usize::MAX),
        steps,
    };
    let counts = rb.replay(None)?;
    if max_pts.is_none() {
        rb.max_pts = counts.iter().copied().max().unwrap_or(0);
    }
    Ok(rb)
}

/// A value as the message shows it.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Sequence(_) => "(a list)".into(),
        Value::Mapping(_) => "(a mapping)".into(),
        other => scalar_text(other),
    }
}

/// Keys a step may hold, per operation, besides `operation`.
fn keys_of(op: &str) -> &'static [&'static str] {
    match op {
        "insert" | "delete" => &["start", "end", "rate", "batch", "during"],
        "replace" => &[
            "tags_start",
            "tags_end",
            "ids_start",
            "ids_end",
            "rate",
            "batch",
            "during",
        ],
        "maintenance" => &["what"],
        _ => &[],
    }
}

/// Reads one step's mapping. Errors say what is wrong and the fix, without the step context.
fn read_step(number: u32, v: &Value) -> std::result::Result<Step, String> {
    let map = step_mapping(v)?;
    let get = |key: &str| map.get(Value::String(key.into()));
    let op = match get("operation") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "operation {} is not a name; give one of {OPERATIONS}",
                show(other)
            ));
        }
        None => return Err(format!("has no operation; give one of {OPERATIONS}")),
    };
    if !OPERATIONS.split(", ").any(|o| o == op) {
        return Err(format!("unknown operation '{op}'; known: {OPERATIONS}"));
    }
    let allowed = keys_of(&op);
    for k in map.keys() {
        let k = scalar_text(k);
        if k != "operation" && !allowed.contains(&k.as_str()) {
            let known = if allowed.is_empty() {
                "none besides operation".to_string()
            } else {
                allowed.join(", ")
            };
            return Err(format!(
                "unknown key '{k}' for operation {op}; its keys: {known}"
            ));
        }
    }
    let index = |key: &str| -> std::result::Result<usize, String> {
        let v = get(key).ok_or_else(|| format!("{op} needs '{key}'"))?;
        whole(key, v, 0..=MAX_TAGS)
            .map_err(|e| format!("{e} (tags and train row ids are the stream tables' 32-bit ids)"))
    };
    let range = |a: &str, b: &str| -> std::result::Result<Range<usize>, String> {
        let (s, e) = (index(a)?, index(b)?);
        if s > e {
            return Err(format!(
                "reversed range: {a} {s} is after {b} {e}; ranges are [{a}, {b}) with {a} < {b}"
            ));
        }
        if s == e {
            return Err(format!(
                "empty range [{s}, {e}): give {b} > {a}, or remove the step"
            ));
        }
        Ok(s..e)
    };
    let op = match op.as_str() {
        "insert" => {
            let r = range("start", "end")?;
            Operation::Insert {
                start: r.start,
                end: r.end,
            }
        }
        "delete" => {
            let r = range("start", "end")?;
            Operation::Delete {
                start: r.start,
                end: r.end,
            }
        }
        "replace" => {
            let tags = range("tags_start", "tags_end")?;
            let ids = range("ids_start", "ids_end")?;
            if tags.len() != ids.len() {
                return Err(format!(
                    "replace ranges differ in length: tags [{}, {}) hold {} but ids [{}, {}) hold \
                     {}; give ranges of equal length",
                    tags.start,
                    tags.end,
                    tags.len(),
                    ids.start,
                    ids.end,
                    ids.len()
                ));
            }
            Operation::Replace { tags, ids }
        }
        "maintenance" => Operation::Maintenance(read_what(get("what"))?),
        _ => Operation::Search,
    };
    let rate = get("rate").map(read_rate).transpose()?;
    let batch = get("batch")
        .map(|v| {
            whole("batch", v, 1..=MAX_BATCH)
                .map_err(|e| format!("{e} rows per statement, e.g. batch: 100"))
        })
        .transpose()?;
    let during = match get("during") {
        None => None,
        Some(v) => Some(read_during(v)?),
    };
    Ok(Step {
        number,
        op,
        rate,
        batch,
        during,
    })
}

/// A step's mapping; also a list of one-key mappings, as big-ann-benchmarks'
/// clustered_data_gen.py writes steps (`[{operation: insert}, {start: 0}, {end: 326}]`).
fn step_mapping(v: &Value) -> std::result::Result<Mapping, String> {
    match v {
        Value::Mapping(m) => Ok(m.clone()),
        Value::Sequence(items) => {
            let mut m = Mapping::new();
            for item in items {
                let Value::Mapping(one) = item else {
                    return Err(
                        "is a list whose items are not mappings; write the step as a mapping \
                         {operation: ..., ...}"
                            .into(),
                    );
                };
                for (k, v) in one {
                    if m.insert(k.clone(), v.clone()).is_some() {
                        return Err(format!("key '{}' is given twice", scalar_text(k)));
                    }
                }
            }
            Ok(m)
        }
        other => Err(format!(
            "is {}, not a mapping; write {{operation: search}} or {{operation: insert, start: \
             S, end: E}}",
            show(other)
        )),
    }
}

/// An integer within `range`, or what is wrong with `v` and the range to give.
fn whole(key: &str, v: &Value, range: RangeInclusive<usize>) -> std::result::Result<usize, String> {
    let (lo, hi) = (*range.start(), *range.end());
    match number(v) {
        Some(Num::Int(n)) if n >= lo as i128 && n <= hi as i128 => Ok(n as usize),
        Some(Num::Int(n)) if n < 0 && lo == 0 => Err(format!(
            "{key} {} is negative: give an integer from {lo} to {hi}",
            show(v)
        )),
        Some(Num::Int(_)) => Err(format!(
            "{key} {} is out of range: give an integer from {lo} to {hi}",
            show(v)
        )),
        Some(Num::Float(_)) | None => Err(format!(
            "{key} {} is not a whole number: give an integer from {lo} to {hi}",
            show(v)
        )),
    }
}

/// A step's `rate`: rows per second within [`RATES`].
fn read_rate(v: &Value) -> std::result::Result<f64, String> {
    let (lo, hi) = (*RATES.start(), *RATES.end());
    let fix = format!("give rows per second from {lo} to {hi:.0}, e.g. rate: 1000");
    match number(v) {
        Some(Num::Float(r)) if RATES.contains(&r) => Ok(r),
        Some(Num::Int(n)) if RATES.contains(&(n as f64)) => Ok(n as f64),
        Some(_) => Err(format!("rate {} is out of range: {fix}", show(v))),
        None => Err(format!("rate {} is not a number: {fix}", show(v))),
    }
}

fn read_what(v: Option<&Value>) -> std::result::Result<Vec<Maintenance>, String> {
    let known = || {
        Maintenance::ALL
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let names: Vec<&Value> = match v {
        None => {
            return Err(format!(
                "maintenance needs 'what': one or a list of {}",
                known()
            ));
        }
        Some(Value::Sequence(items)) => items.iter().collect(),
        Some(one) => vec![one],
    };
    if names.is_empty() {
        return Err(format!(
            "'what' is an empty list; give one or more of {}",
            known()
        ));
    }
    names
        .into_iter()
        .map(|n| {
            let name = match n {
                Value::String(s) => s.as_str(),
                other => {
                    return Err(format!(
                        "what {} is not a name; known: {}",
                        show(other),
                        known()
                    ));
                }
            };
            Maintenance::parse(name)
                .ok_or_else(|| format!("unknown maintenance '{name}'; known: {}", known()))
        })
        .collect()
}

fn read_during(v: &Value) -> std::result::Result<During, String> {
    let fix = "write during: {clients: N} with N >= 1";
    let Value::Mapping(m) = v else {
        return Err(format!("during {} is not a mapping; {fix}", show(v)));
    };
    for k in m.keys() {
        let k = scalar_text(k);
        if k != "clients" {
            return Err(format!("unknown key '{k}' in during; its keys: clients"));
        }
    }
    let most = crate::runner::MAX_CLIENTS;
    let clients = match m.get(Value::String("clients".into())) {
        None => return Err(format!("during needs 'clients'; {fix}")),
        // As `--clients` is bounded, before anything runs.
        Some(c) => whole("clients", c, 1..=most).map_err(|_| {
            format!(
                "during clients {}: give 1 to {most} concurrent clients (each is a connection \
                 and a thread of this process)",
                show(c)
            )
        })?,
    };
    Ok(During { clients })
}
