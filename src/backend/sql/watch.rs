//! A long statement (an index build) under watch: while it runs on the calling thread, a helper
//! thread polls the cancel request (Ctrl-C) and the build timeout's deadline; once either asks,
//! it has the server stop the statement from a connection of its own, again on every poll until
//! the statement returns (a request that lands before the server started the statement does
//! nothing). The client enforces the limit for every database: a server-side timeout would
//! also bound the statements after the build, and is not safe on every server. Where the server reports the statement's
//! phase, the helper samples it too. [`Watched::finish`] then decides, the same way for every
//! database, whether the build counts.

use crate::backend::{BuildPhase, BuildWatch, Cancel};
use crate::params::Params;
use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the helper polls.
pub const POLL: Duration = Duration::from_millis(20);

/// Why a statement was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The user asked (Ctrl-C): the build is abandoned.
    Cancelled,
    /// It ran past the deadline the client enforces.
    TimedOut,
}

/// What a server can do about a statement running on another connection.
pub trait Watch: Send {
    /// Ask the server to stop the statement (`KILL QUERY`, `pg_cancel_backend`); called on
    /// every poll once a stop is wanted. Errors are the next poll's to retry.
    fn stop(&mut self);

    /// The statement's current phase, where the server reports one.
    fn phase(&mut self) -> Option<String> {
        None
    }

    /// The statement's phase and how far it is in percent, where the server reports them
    /// (by default the [`phase`](Watch::phase) without a percentage).
    fn progress(&mut self) -> Option<(String, Option<f64>)> {
        self.phase().map(|p| (p, None))
    }
}

/// A watched statement's outcome.
#[derive(Debug)]
pub struct Watched<T> {
    pub result: T,
    /// Wall seconds of the statement alone, on the calling thread.
    pub seconds: f64,
    /// The first reason a stop was wanted, if any.
    pub stop: Option<Stop>,
    /// The sampled phases and their durations (empty where the server reports none).
    pub phases: Vec<BuildPhase>,
}

/// Run `statement` under `watch`; `deadline` (from the statement's start) is the build timeout,
/// `None` for none.
pub fn run<T, W: Watch>(
    watch: W,
    cancel: &Cancel<'_>,
    deadline: Option<Duration>,
    statement: impl FnOnce() -> T,
) -> Watched<T> {
    run_reporting(watch, cancel, deadline, &BuildWatch::default(), statement)
}

/// [`run`], also reporting each sampled phase and percentage to `report` (build progress).
pub fn run_reporting<T, W: Watch>(
    mut watch: W,
    cancel: &Cancel<'_>,
    deadline: Option<Duration>,
    report: &BuildWatch,
    statement: impl FnOnce() -> T,
) -> Watched<T> {
    let done = AtomicBool::new(false);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        let helper = s.spawn(|| {
            let mut seen: Vec<(Instant, String)> = Vec::new();
            let mut stop = None;
            while !done.load(Ordering::Relaxed) {
                if stop.is_none() {
                    if cancel() {
                        stop = Some(Stop::Cancelled);
                    } else if deadline.is_some_and(|d| t0.elapsed() >= d) {
                        stop = Some(Stop::TimedOut);
                    }
                }
                if stop.is_some() {
                    watch.stop();
                }
                if let Some((phase, percent)) = watch.progress() {
                    report.set(&phase, percent);
                    if seen.last().is_none_or(|(_, p)| *p != phase) {
                        seen.push((Instant::now(), phase));
                    }
                }
                std::thread::sleep(POLL);
            }
            (seen, stop)
        });
        let result = statement();
        let seconds = t0.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let (seen, stop) = helper.join().unwrap_or_default();
        Watched {
            result,
            seconds,
            stop,
            phases: phases(t0, &seen, seconds),
        }
    })
}

impl<T, E> Watched<std::result::Result<T, E>> {
    /// Whether the build counts, the same rule for every database:
    ///
    /// - a build that was cancelled, or ran past `timeout` (stopped at the deadline, or any
    ///   outcome once the limit has passed), is never measured: `recover` removes what it left, then the result is
    ///   [`Error::Interrupted`] or the build timeout with its fix. A lost connection is
    ///   reported instead: there is nothing to recover through it.
    /// - otherwise the statement's own result, its error mapped by `map`.
    ///
    /// Take `seconds` and `phases` out first.
    pub fn finish(
        self,
        algorithm: &str,
        args: &Params,
        timeout: Option<Duration>,
        map: impl Fn(E) -> Error,
        recover: impl FnOnce() -> Result<()>,
    ) -> Result<T> {
        let cancelled = self.stop == Some(Stop::Cancelled);
        let timed_out = self.stop == Some(Stop::TimedOut)
            || timeout.is_some_and(|t| self.seconds >= t.as_secs_f64());
        if !cancelled && !timed_out {
            return self.result.map_err(map);
        }
        if let Err(e) = self.result {
            if let lost @ Error::Server(_) = map(e) {
                return Err(lost);
            }
        }
        recover()?;
        if cancelled {
            return Err(Error::Interrupted);
        }
        Err(Error::Backend(format!(
            "{algorithm}: the index build ({}) was stopped after {:.2} s because it exceeded \
             the build timeout of {:?} (--timeout); raise --timeout or choose smaller parameters",
            crate::params::describe(args),
            self.seconds,
            timeout.unwrap_or_default()
        )))
    }
}

/// Durations of the sampled phases: each lasts until the next one is first seen, the last
/// until the statement ended (`total` seconds after `start`). Time before the first sample
/// is added to the first phase. Phases shorter than the sampling period may be missed.
fn phases(start: Instant, seen: &[(Instant, String)], total: f64) -> Vec<BuildPhase> {
    let mut out = Vec::new();
    for (i, (at, name)) in seen.iter().enumerate() {
        let from = if i == 0 {
            0.0
        } else {
            at.duration_since(start).as_secs_f64()
        };
        let to = seen
            .get(i + 1)
            .map_or(total, |(next, _)| next.duration_since(start).as_secs_f64());
        out.push(BuildPhase {
            name: name.clone(),
            seconds: (to - from).max(0.0),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn phase_durations_cover_the_build() {
        let t0 = Instant::now();
        let seen = vec![
            (t0 + Duration::from_millis(10), "a".to_string()),
            (t0 + Duration::from_millis(50), "b".to_string()),
        ];
        let ph = phases(t0, &seen, 0.2);
        assert_eq!(ph.len(), 2);
        assert!((ph[0].seconds - 0.05).abs() < 1e-9 && (ph[1].seconds - 0.15).abs() < 1e-9);
    }

    struct Counting<'a>(&'a AtomicUsize);
    impl Watch for Counting<'_> {
        fn stop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn backend(e: &str) -> Error {
        Error::Backend(e.to_string())
    }

    fn lost(_: &str) -> Error {
        Error::Server("connection lost".into())
    }

    /// Returns once the helper has asked `stops` twice.
    fn until_stopped(stops: &AtomicUsize) -> std::result::Result<(), &'static str> {
        while stops.load(Ordering::Relaxed) < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        Err("stopped")
    }

    #[test]
    fn a_cancel_request_is_sent_until_the_statement_returns_and_interrupts() {
        let stops = AtomicUsize::new(0);
        let w = run(Counting(&stops), &|| true, None, || until_stopped(&stops));
        assert_eq!(w.stop, Some(Stop::Cancelled));
        let recovered = AtomicUsize::new(0);
        let r = w.finish("x", &Params::new(), None, backend, || {
            recovered.fetch_add(1, Ordering::Relaxed);
            Ok(())
        });
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        assert_eq!(recovered.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn the_deadline_stops_the_statement_as_a_timeout() {
        let stops = AtomicUsize::new(0);
        let limit = Duration::from_millis(1);
        let w = run(Counting(&stops), &|| false, Some(limit), || {
            until_stopped(&stops)
        });
        assert_eq!(w.stop, Some(Stop::TimedOut));
        let e = w
            .finish("algo", &Params::new(), Some(limit), backend, || Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("algo: the index build () was stopped after"),
            "{e}"
        );
        assert!(
            e.contains("build timeout of 1ms") && e.contains("raise --timeout"),
            "{e}"
        );
    }

    #[test]
    fn past_the_limit_nothing_counts_but_a_lost_connection_is_reported() {
        let done = |result, seconds| Watched {
            result,
            seconds,
            stop: None,
            phases: Vec::new(),
        };
        let t = Some(Duration::from_secs(1));
        let p = Params::new();
        // A success after the limit is refused too.
        let late = done(Ok(()), 2.0).finish("a", &p, t, backend, || Ok(()));
        assert!(late.unwrap_err().to_string().contains("build timeout"));
        let e = done(Err("gone"), 2.0).finish("a", &p, t, lost, || Ok(()));
        assert!(matches!(e, Err(Error::Server(_))), "{e:?}");
        // Before the limit, the statement's own error.
        let e = done(Err::<(), _>("some error"), 0.5)
            .finish("a", &p, t, backend, || Ok(()))
            .unwrap_err();
        assert_eq!(e.to_string(), "some error");
    }
}
