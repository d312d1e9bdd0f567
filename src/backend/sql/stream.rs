//! What both SQL databases' stream tables ([`crate::backend::stream`]) share: the table's name
//! and metadata row, and one write or maintenance statement run bounded and stoppable.
//!
//! A stream table is `stream_<algorithm>_<dataset>_<hash>`: no sweep table starts with
//! `stream_`, and one algorithm's stream never touches another's. Its metadata row (for the
//! build id of [`super::guard`]) carries [`FINGERPRINT`], which no train matrix's fingerprint
//! (16 hex digits) equals, so a sweep never reuses it; it is always created afresh.
//!
//! Statements run as the sweep's builds do ([`super::watch`]): a helper thread polls for a stop
//! ([`crate::backend::request_stop`]) and the statement timeout, and once either asks has the
//! server stop the statement from a connection of its own ([`Watch::stop`]). Unlike a build's
//! helper it wakes the moment the statement returns, so a small batch does not wait for a poll.

use super::meta::{self, Meta};
use super::watch::{POLL, Stop, Watch};
use super::{Arg, Cell, SqlConn, TableName};
use crate::backend::TableSpec;
use crate::backend::stream::{DIGEST_PRIMES, IdDigest};
use crate::backend::table::table_name;
use crate::{Error, Result};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The fingerprint recorded for every stream table: not hex, so never a train matrix's.
pub const FINGERPRINT: &str = "(stream table)";

/// The stream table of `algorithm` for `dataset` in `schema`. The `/` makes the name lossy, so
/// it always ends in a hash of `algorithm/dataset`: `pgvector` on `halfvec-x` and
/// `pgvector_halfvec` on `x` get different tables.
pub fn table(schema: &str, algorithm: &str, dataset: &str) -> Result<TableName> {
    Ok(TableName {
        schema: schema.to_string(),
        name: table_name("stream", &format!("{algorithm}/{dataset}"))?,
    })
}

/// Drop `t` and create it empty with `create` (one or more statements), with its metadata row.
pub fn recreate(c: &mut dyn SqlConn, t: &TableName, create: &str, spec: &TableSpec) -> Result<()> {
    let qt = t.qualified(c.dialect());
    meta::delete(c, t)?;
    c.run(
        &format!("DROP TABLE IF EXISTS {qt}"),
        "dropping the old stream table",
    )?;
    c.run(create, "creating the stream table")?;
    let m = Meta {
        dataset: spec.dataset.clone(),
        rows: 0,
        dimension: spec.dimension as u32,
        fingerprint: FINGERPRINT.into(),
        load_seconds: 0.0,
        method: "created empty for a streaming runbook".into(),
    };
    meta::put(c, t, &m)
}

/// How the metadata row's `method` records a stream's progress.
const PROGRESS: &str = "stream progress ";

/// The progress marker the stream table `t` records ([`set_progress`]); `None` for a table
/// that has none (just created, or not a stream table) or is gone.
pub fn progress(c: &mut dyn SqlConn, t: &TableName) -> Result<Option<String>> {
    Ok(meta::get(c, t)?.and_then(|m| {
        (m.fingerprint == FINGERPRINT)
            .then(|| m.method.strip_prefix(PROGRESS).map(str::to_string))
            .flatten()
    }))
}

/// Record `marker` as the stream table's progress (the executor's run and last step), with
/// its `rows`, in the metadata row: written after the step's writes are committed, so a marker
/// never claims a step the table has not seen.
pub fn set_progress(c: &mut dyn SqlConn, t: &TableName, marker: &str, rows: u64) -> Result<()> {
    if marker.len() + PROGRESS.len() > 128 {
        return Err(Error::Backend(format!(
            "internal: stream progress marker '{marker}' is too long"
        )));
    }
    meta::set_method(c, t, &format!("{PROGRESS}{marker}"), rows)
}

/// The [`IdDigest`] of table `t`'s `id` column, computed by the server.
pub fn id_digest(c: &mut dyn SqlConn, t: &TableName) -> Result<IdDigest> {
    let (p, q) = DIGEST_PRIMES;
    let sql = format!(
        "SELECT COUNT(*), MIN(id), MAX(id), SUM(id), SUM((id % {p}) * (id % {q})) FROM {}",
        t.qualified(c.dialect())
    );
    let row = c
        .first_row(&sql, &[], "reading the stream table's ids")?
        .unwrap_or_default();
    // PostgreSQL sums integers as int8, MariaDB as DECIMAL (text): both read as integers.
    let int = |i: usize| -> Option<i128> {
        match row.get(i)? {
            Cell::Int(n) => Some(i128::from(*n)),
            Cell::Text(s) => s.trim().parse().ok(),
            Cell::Float(x) => Some(*x as i128),
            Cell::Null => None,
        }
    };
    Ok(IdDigest {
        count: int(0).unwrap_or(0) as u64,
        min: int(1).map(|n| n as i64),
        max: int(2).map(|n| n as i64),
        sum: int(3).unwrap_or(0),
        mix: int(4).unwrap_or(0),
    })
}

/// The ids of table `t` in `[start, end)`, ascending.
pub fn ids_in(c: &mut dyn SqlConn, t: &TableName, start: i64, end: i64) -> Result<Vec<i64>> {
    let (lo, hi) = int4_range(start, end)?;
    let d = c.dialect();
    let sql = format!(
        "SELECT id FROM {} WHERE id >= {} AND id < {} ORDER BY id",
        t.qualified(d),
        d.placeholder(1),
        d.placeholder(2)
    );
    c.int_column(
        &sql,
        &[Arg::Int(i64::from(lo)), Arg::Int(i64::from(hi))],
        "reading the stream table's ids",
    )
}

/// A statement run by [`run`]: its result (`None` when a stop was requested before it
/// started, so it never ran), its wall seconds and why it was asked to stop, if it was.
#[derive(Debug)]
pub struct Ran<T> {
    pub result: Option<T>,
    pub seconds: f64,
    pub stop: Option<Stop>,
}

/// Run `statement` under `watch`: stopped when [`crate::backend::stop_requested`] or when it
/// runs past `timeout`.
pub fn run<T, W: Watch>(
    mut watch: W,
    timeout: Option<Duration>,
    statement: impl FnOnce() -> T,
) -> Ran<T> {
    if crate::backend::stop_requested() {
        return Ran {
            result: None,
            seconds: 0.0,
            stop: Some(Stop::Cancelled),
        };
    }
    let (done, wait) = mpsc::channel::<()>();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        let helper = s.spawn(move || {
            let mut stop = None;
            while let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(POLL) {
                if stop.is_none() {
                    if crate::backend::stop_requested() {
                        stop = Some(Stop::Cancelled);
                    } else if timeout.is_some_and(|t| t0.elapsed() >= t) {
                        stop = Some(Stop::TimedOut);
                    }
                }
                if stop.is_some() {
                    watch.stop();
                }
            }
            stop
        });
        let result = statement();
        let seconds = t0.elapsed().as_secs_f64();
        let _ = done.send(());
        let stop = helper.join().unwrap_or(Some(Stop::Cancelled));
        Ran {
            result: Some(result),
            seconds,
            stop,
        }
    })
}

impl<T, E> Ran<std::result::Result<T, E>> {
    /// The statement's value and seconds, or why it has none:
    ///
    /// - a statement that completed counts, even if a stop came as it ended (its rows are
    ///   committed: the caller sees the stop on its next call);
    /// - a failed one is undone by `recover` (e.g. `ROLLBACK`), unless the connection is lost
    ///   (`map` gives [`Error::Server`]: reported as it is);
    /// - then a stopped one is [`Error::Interrupted`], or for the timeout an error naming
    ///   `what` (the statement) and the limit; any other failure is `map`'s error.
    pub fn finish(
        self,
        what: &str,
        timeout: Option<Duration>,
        map: impl Fn(E) -> Error,
        recover: impl FnOnce() -> Result<()>,
    ) -> Result<(T, f64)> {
        let seconds = self.seconds;
        let err = match self.result {
            None => return Err(Error::Interrupted),
            Some(Ok(v)) => return Ok((v, seconds)),
            Some(Err(e)) => map(e),
        };
        if matches!(err, Error::Server(_)) {
            return Err(err);
        }
        recover()?;
        let timed_out = self.stop == Some(Stop::TimedOut)
            || timeout.is_some_and(|t| seconds >= t.as_secs_f64());
        match self.stop {
            Some(Stop::Cancelled) => Err(Error::Interrupted),
            _ if timed_out => Err(Error::Backend(format!(
                "`{what}` was stopped after {seconds:.2} s: it ran past the statement timeout \
                 of {:?} (--timeout); raise --timeout or write smaller batches",
                timeout.unwrap_or_default()
            ))),
            _ => Err(err),
        }
    }
}

/// `sql` cut to its first `max` characters (a batch's statement names its table, not its
/// thousands of placeholders).
pub fn head(sql: &str, max: usize) -> String {
    match sql.char_indices().nth(max) {
        Some((i, _)) => format!("{} ...", &sql[..i]),
        None => sql.to_string(),
    }
}

/// The ids as the stream table's 32-bit INT / int4, or an error naming the first that does not fit.
pub fn int4_ids(what: &str, ids: &[i64]) -> Result<Vec<i32>> {
    ids.iter()
        .enumerate()
        .map(|(i, &id)| {
            i32::try_from(id).map_err(|_| {
                Error::Config(format!(
                    "{what} batch row {i}: id {id} does not fit the stream table's 32-bit id \
                     column ({}..={}); number the rows within it",
                    i32::MIN,
                    i32::MAX
                ))
            })
        })
        .collect()
}

/// `[start, end)` as a 32-bit range (ids beyond it cannot be in the table).
pub fn int4_range(start: i64, end: i64) -> Result<(i32, i32)> {
    if start > end {
        return Err(Error::Config(format!(
            "delete: the range [{start}, {end}) ends before it starts; give start <= end"
        )));
    }
    let clamp = |x: i64| x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    Ok((clamp(start), clamp(end)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting<'a>(&'a AtomicUsize);
    impl Watch for Counting<'_> {
        fn stop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn ids_and_ranges_must_fit_32_bits() {
        assert_eq!(int4_ids("insert", &[0, 7]).unwrap(), vec![0, 7]);
        let e = int4_ids("insert", &[1, 1 << 40]).unwrap_err().to_string();
        assert!(
            e.contains("insert batch row 1") && e.contains("32-bit"),
            "{e}"
        );
        assert_eq!(int4_range(-5, 1 << 40).unwrap(), (-5, i32::MAX));
        let e = int4_range(9, 3).unwrap_err().to_string();
        assert!(e.contains("[9, 3)"), "{e}");
    }

    #[test]
    fn stream_tables_are_never_sweep_tables_and_differ_per_algorithm() {
        let a = table("s", "pgvector", "halfvec-x").unwrap().name;
        let b = table("s", "pgvector_halfvec", "x").unwrap().name;
        assert_ne!(a, b);
        for n in [&a, &b] {
            assert!(n.starts_with("stream_") && n.len() <= 63, "{n}");
        }
        let long = table("s", "pgvector_halfvec_column", &"d".repeat(300)).unwrap();
        assert!(long.name.len() <= 63, "{}", long.name);
        assert!(!FINGERPRINT.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(FINGERPRINT.len() <= 16, "fits annbench_tables.fingerprint");
    }

    #[test]
    fn the_timeout_stops_a_statement_and_names_it() {
        let stops = AtomicUsize::new(0);
        let limit = Some(Duration::from_millis(1));
        let ran = run(Counting(&stops), limit, || {
            while stops.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err::<(), _>("killed")
        });
        assert_eq!(ran.stop, Some(Stop::TimedOut));
        let undone = AtomicUsize::new(0);
        let e = ran
            .finish(
                "DELETE FROM t",
                limit,
                |e| Error::Backend(e.into()),
                || {
                    undone.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                },
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`DELETE FROM t` was stopped") && e.contains("1ms"),
            "{e}"
        );
        assert_eq!(undone.load(Ordering::Relaxed), 1, "rolled back");
    }

    #[test]
    fn a_completed_statement_counts_and_a_failed_one_keeps_its_error() {
        let stops = AtomicUsize::new(0);
        let ran = run(Counting(&stops), None, || Ok::<_, &str>(7));
        let (v, _) = ran
            .finish("x", None, |e| Error::Backend(e.into()), || Ok(()))
            .unwrap();
        assert_eq!(v, 7);
        let lost = run(Counting(&stops), None, || Err::<(), _>("gone"));
        let e = lost.finish(
            "x",
            None,
            |e| Error::Server(e.into()),
            || panic!("no recovery through a lost connection"),
        );
        assert!(matches!(e, Err(Error::Server(_))), "{e:?}");
        assert_eq!(stops.load(Ordering::Relaxed), 0);
        assert_eq!(head("SELECT 1, 2", 6), "SELECT ...");
        assert_eq!(head("SELECT", 6), "SELECT");
    }
}
