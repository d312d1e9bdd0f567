//! A long statement (an index build) under watch: while it runs on the calling thread, a helper
//! thread polls the cancel request (Ctrl-C) and, once it is set, asks the server to stop the
//! statement from a connection of its own, again on every poll until the statement returns (a
//! request that lands before the server started the statement does nothing). Where the server
//! reports the statement's phase, the helper samples it too.

use crate::backend::{BuildPhase, Cancel};
use crate::params::Params;
use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the helper polls.
pub const POLL: Duration = Duration::from_millis(20);

/// What a server can do about a statement running on another connection.
pub trait Watch: Send {
    /// Ask the server to stop the statement (`KILL QUERY`, `pg_cancel_backend`); true when
    /// the request was delivered.
    fn stop(&mut self) -> bool;

    /// The statement's current phase, where the server reports one.
    fn phase(&mut self) -> Option<String> {
        None
    }
}

/// A watched statement's outcome.
#[derive(Debug)]
pub struct Watched<T> {
    pub result: T,
    /// Wall seconds of the statement alone, on the calling thread.
    pub seconds: f64,
    /// Whether a stop request reached the server.
    pub stopped: bool,
    /// The sampled phases and their durations (empty where the server reports none).
    pub phases: Vec<BuildPhase>,
}

/// Run `statement` under `watch`.
pub fn run<T, W: Watch>(
    mut watch: W,
    cancel: &Cancel<'_>,
    statement: impl FnOnce() -> T,
) -> Watched<T> {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let helper = s.spawn(|| {
            let mut seen: Vec<(Instant, String)> = Vec::new();
            let mut stopped = false;
            while !done.load(Ordering::Relaxed) {
                if cancel() {
                    stopped |= watch.stop();
                }
                if let Some(phase) = watch.phase() {
                    if seen.last().is_none_or(|(_, p)| *p != phase) {
                        seen.push((Instant::now(), phase));
                    }
                }
                std::thread::sleep(POLL);
            }
            (seen, stopped)
        });
        let t0 = Instant::now();
        let result = statement();
        let seconds = t0.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let (seen, stopped) = helper.join().unwrap_or_default();
        Watched {
            result,
            seconds,
            stopped,
            phases: phases(t0, &seen, seconds),
        }
    })
}

impl<T, E> Watched<std::result::Result<T, E>> {
    /// The build's result: [`Error::Interrupted`] when a stop request ended it, the build
    /// timeout when `timeout` did (the server's timeout error, or any error that arrived
    /// after the limit), else the statement's own error mapped by `map`.
    /// Take `seconds` and `phases` out first.
    pub fn build_result(
        self,
        algorithm: &str,
        args: &Params,
        timeout: Option<Duration>,
        is_timeout: impl Fn(&E) -> bool,
        map: impl FnOnce(E) -> Error,
    ) -> Result<T> {
        let e = match self.result {
            Ok(v) => return Ok(v),
            Err(_) if self.stopped => return Err(Error::Interrupted),
            Err(e) => e,
        };
        match timeout {
            Some(t) if is_timeout(&e) || self.seconds >= t.as_secs_f64() => {
                Err(Error::Backend(format!(
                    "{algorithm}: the index build ({}) took longer than the build timeout of \
                     {t:?} and was stopped; raise --timeout or choose smaller parameters",
                    crate::params::describe(args)
                )))
            }
            _ => Err(map(e)),
        }
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

    fn backend(e: &str) -> Error {
        Error::Backend(e.to_string())
    }

    struct Counting<'a>(&'a AtomicUsize);
    impl Watch for Counting<'_> {
        fn stop(&mut self) -> bool {
            self.0.fetch_add(1, Ordering::Relaxed);
            true
        }
    }

    #[test]
    fn a_cancel_request_is_sent_until_the_statement_returns() {
        let stops = AtomicUsize::new(0);
        let w = run(Counting(&stops), &|| true, || {
            // Returns once the helper has asked twice.
            while stops.load(Ordering::Relaxed) < 2 {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err::<(), _>("stopped")
        });
        assert!(w.stopped);
        let r = w.build_result("x", &Params::new(), None, |_| false, backend);
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    }

    #[test]
    fn an_error_after_the_limit_is_the_build_timeout() {
        let none = AtomicUsize::new(0);
        let w = run(Counting(&none), &|| false, || Err::<(), _>("some error"));
        assert!(!w.stopped && none.load(Ordering::Relaxed) == 0);
        let late = Watched { seconds: 2.0, ..w };
        let t = Some(Duration::from_secs(1));
        let e = late
            .build_result("algo", &Params::new(), t, |_| false, backend)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("algo: the index build () took longer than the build timeout"),
            "{e}"
        );
        let early = Watched {
            result: Err::<(), _>("some error"),
            seconds: 0.5,
            stopped: false,
            phases: Vec::new(),
        };
        let e = early
            .build_result("algo", &Params::new(), t, |_| false, backend)
            .unwrap_err();
        assert_eq!(e.to_string(), "some error");
    }
}
