//! Where a stream run starts: from the first step, after the last stored step, or not at all
//! (complete). A run stops at any moment (Ctrl-C, a kill, the server dying): in the middle of a
//! write step some of its batches are committed and the rest are not, and the table's
//! progress marker still names the step before (or, stopped between the marker and the file,
//! the step itself). A rerun resumes only on this run's table, brought back to the state the
//! last stored step left:
//!
//! - the marker must be this run's, of the last stored step or of the step after it;
//! - what the step after it wrote is undone: an insert's committed rows are deleted, a
//!   delete's removed rows are inserted again with the vectors they held, a replace's tags
//!   get back the vectors they held before it;
//! - then the table's ids must match the live set exactly ([`IdDigest`]), so rows changed
//!   behind the run's back are found.
//!
//! Otherwise the run starts again from the first step, and says why.

use super::Env;
use crate::backend::TableSpec;
use crate::backend::stream::{IdDigest, StreamTable};
use crate::results::stream::{StreamIdentity, StreamRun};
use crate::stream::live::LiveSet;
use crate::stream::step::{Operation, Step};
use crate::{Error, Result};

/// How a build point's run starts.
pub enum Start {
    /// From the first step on a new table (with the reason, when a stored run is set aside).
    Fresh(Option<String>),
    /// Stored whole: nothing to run.
    Complete(StreamRun),
    /// After step `after` of `run`, on the reopened table that holds `live`; `undone` rows of
    /// the stopped step were undone.
    Resume {
        run: StreamRun,
        after: u32,
        live: LiveSet,
        undone: u64,
    },
}

/// The marker the server's table keeps after each step: which run and step left it so.
pub fn marker(identity: &StreamIdentity, step: u32) -> String {
    format!("{}:{step}", run_key(identity))
}

/// A key of the run's identity (stable within one annbench build; another build's key only
/// makes a run start again).
fn run_key(identity: &StreamIdentity) -> String {
    use std::hash::{Hash, Hasher};
    let text = serde_json::to_string(identity).unwrap_or_default();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Decide where the run of `identity` starts, given its stored run; when it resumes, the table
/// is reopened (adopting its index when the run had built it) and brought to the state the
/// last stored step left.
pub fn start(
    env: &Env<'_>,
    table: &mut dyn StreamTable,
    spec: &TableSpec,
    stored: Option<StreamRun>,
    identity: &StreamIdentity,
    build_args: &crate::params::Params,
    path: &std::path::Path,
) -> Result<Start> {
    let Some(run) = stored else {
        return Ok(Start::Fresh(None));
    };
    if env.opts.force {
        return Ok(Start::Fresh(Some(
            "--force: running every step again".into(),
        )));
    }
    if run.identity != *identity || run.format != crate::results::stream::STREAM_FORMAT {
        return Ok(Start::Fresh(Some(format!(
            "the stored run in {} was measured on {}: running every step again, and it is \
             replaced (as a sweep replaces a point of other data; copy it aside first to \
             keep it)",
            path.display(),
            differences(&run.identity, identity)
        ))));
    }
    let Some(last) = run.steps.last().map(|s| s.step) else {
        return Ok(Start::Fresh(None));
    };
    if run.complete {
        return Ok(Start::Complete(run));
    }
    let again = |why: String| {
        Ok(Start::Fresh(Some(format!(
            "{why}: starting again from the first step"
        ))))
    };
    let next = env.runbook.steps.iter().find(|s| s.number > last);
    let key = run_key(identity);
    let at = match table.progress(spec)? {
        None => {
            return again(format!(
                "the server has no stream table in the state step {last} left"
            ));
        }
        Some(m) => m
            .split_once(':')
            .filter(|(k, _)| *k == key)
            .and_then(|(_, s)| s.parse::<u32>().ok()),
    };
    if at.is_none_or(|s| s != last && Some(s) != next.map(|n| n.number)) {
        return again(format!(
            "the server's stream table is not in the state step {last} left (another run or \
             step changed it since)"
        ));
    }
    let mut live = LiveSet::new();
    for step in env.runbook.steps.iter().take_while(|s| s.number <= last) {
        live.apply(step)?;
    }
    table.reopen(spec, run.build_seconds.map(|_| build_args))?;
    let undone = match next {
        Some(step) => undo(table, step, &live, env.opts.batch, env.data)?,
        None => 0,
    };
    let found = table.id_digest()?;
    let want = IdDigest::of(live.live_tags().map(|t| t as i64));
    if found != want {
        return again(format!(
            "the server's stream table holds {} where step {last} left {}; it was changed \
             outside this run",
            found.describe(),
            want.describe()
        ));
    }
    if undone > 0 || at != Some(last) {
        table.set_progress(&marker(identity, last))?;
    }
    Ok(Start::Resume {
        run,
        after: last,
        live,
        undone,
    })
}

/// What differs between a stored run's identity and this run's, in words.
fn differences(stored: &StreamIdentity, now: &StreamIdentity) -> String {
    let mut out = Vec::new();
    if stored.dataset_fingerprint != now.dataset_fingerprint {
        out.push(format!(
            "other data (dataset fingerprint {}, now {})",
            stored.dataset_fingerprint, now.dataset_fingerprint
        ));
    }
    if stored.runbook_fingerprint != now.runbook_fingerprint || stored.entry != now.entry {
        out.push("another runbook's steps".to_string());
    }
    if stored.build_args != now.build_args || stored.query_args != now.query_args {
        out.push("other parameters".to_string());
    }
    if stored.count != now.count || stored.clients != now.clients {
        out.push(format!(
            "k={} with {} client(s) (now k={}, {})",
            stored.count, stored.clients, now.count, now.clients
        ));
    }
    if out.is_empty() {
        out.push("another annbench's format".to_string());
    }
    out.join(", ")
}

/// Undo what `step` (stopped) wrote, so that the table holds `live` again; the rows undone.
/// Each part is idempotent: a stop during the undo is undone again by the next rerun.
fn undo(
    table: &mut dyn StreamTable,
    step: &Step,
    live: &LiveSet,
    batch: usize,
    data: &crate::dataset::Dataset,
) -> Result<u64> {
    match &step.op {
        Operation::Insert { start, end } => {
            let (start, end) = (*start as i64, *end as i64);
            let written = table.ids_in(start, end)?;
            if !written.is_empty() {
                table.delete(start, end)?;
            }
            Ok(written.len() as u64)
        }
        Operation::Delete { start, end } => {
            let present = table.ids_in(*start as i64, *end as i64)?;
            let missing: Vec<(i64, usize)> = (*start..*end)
                .filter_map(|tag| live.row_of(tag).map(|row| (tag as i64, row)))
                .filter(|(tag, _)| present.binary_search(tag).is_err())
                .collect();
            write_back(table, &missing, batch, data, Write::Insert)?;
            Ok(missing.len() as u64)
        }
        // Which tags a stopped replace had written cannot be told from their ids: every tag
        // of the step gets back the vector it held before, so that the step runs again on
        // the same rows and counts the same changes. MariaDB reports the rows that changed
        // (those the stopped run had written), PostgreSQL every row written back.
        Operation::Replace { tags, .. } => {
            let back: Vec<(i64, usize)> = tags
                .clone()
                .filter_map(|tag| live.row_of(tag).map(|row| (tag as i64, row)))
                .collect();
            write_back(table, &back, batch, data, Write::Replace)
        }
        // Search and maintenance steps change no rows.
        Operation::Search | Operation::Maintenance(_) => Ok(0),
    }
}

enum Write {
    Insert,
    Replace,
}

/// Write `(tag, train row)` pairs in batches of `batch`; the rows the server reports changed.
fn write_back(
    table: &mut dyn StreamTable,
    pairs: &[(i64, usize)],
    batch: usize,
    data: &crate::dataset::Dataset,
    how: Write,
) -> Result<u64> {
    let mut changed = 0;
    for chunk in pairs.chunks(batch.max(1)) {
        let ids: Vec<i64> = chunk.iter().map(|&(t, _)| t).collect();
        let rows: Vec<usize> = chunk.iter().map(|&(_, r)| r).collect();
        let vectors = data.train.select(ndarray::Axis(0), &rows);
        changed += match how {
            Write::Insert => table.insert(&ids, vectors.view())?,
            Write::Replace => table.replace(&ids, vectors.view())?,
        }
        .rows;
    }
    Ok(changed)
}

/// After a write or maintenance step: the table must hold as many rows as the live set, or
/// something other than this run changed it (and later steps would be scored against the
/// wrong rows).
pub fn check_count(step: &Step, table_rows: u64, live: &LiveSet) -> Result<()> {
    if table_rows == live.len() as u64 {
        return Ok(());
    }
    Err(Error::Backend(format!(
        "after step {} ({}) the stream table holds {table_rows} rows where the runbook's live \
         set has {}: another session changed the table; the steps so far are stored, and the \
         rerun starts again from the first step",
        step.number,
        step.op.name(),
        live.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> StreamIdentity {
        StreamIdentity {
            dataset: "d".into(),
            dataset_fingerprint: "aaaa".into(),
            entry: "d".into(),
            runbook_fingerprint: "r1".into(),
            algorithm: "pgvector".into(),
            build_args: Default::default(),
            query_args: Vec::new(),
            clients: 1,
            count: 10,
            label: None,
        }
    }

    #[test]
    fn a_stored_run_of_other_data_says_what_differs() {
        // Once only "the stored run is of other data, runbook or parameters", for a complete
        // run that was then replaced.
        let stored = identity();
        let mut now = identity();
        now.dataset_fingerprint = "bbbb".into();
        now.count = 5;
        let d = differences(&stored, &now);
        assert_eq!(
            d,
            "other data (dataset fingerprint aaaa, now bbbb), k=10 with 1 client(s) (now k=5, 1)"
        );
        now = identity();
        now.runbook_fingerprint = "r2".into();
        assert_eq!(differences(&stored, &now), "another runbook's steps");
    }

    #[test]
    fn the_digest_counts_and_sums_the_ids() {
        let d = IdDigest::of([3, 1, 2]);
        assert_eq!((d.count, d.min, d.max, d.sum), (3, Some(1), Some(3), 6));
        assert_ne!(d, IdDigest::of([0, 2, 4]), "same count and sum, other ids");
        assert_eq!(IdDigest::of([]).describe(), "no rows");
        assert_eq!(d.describe(), "3 rows (ids 1 to 3)");
    }
}
