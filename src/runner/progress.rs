//! What a sweep reports while it runs. The CLI draws indicatif bars from these events; the
//! Python layer forwards them to a callback (tqdm in notebooks). Events are sent from the
//! thread that called `run_sweep`, never from client threads.

use crate::backend::{BuildReport, LoadReport, MemoryPlan};
use crate::params::Params;
use crate::results::PointResult;
use std::path::Path;

/// One thing that happened during a sweep.
#[derive(Debug)]
pub enum Event<'a> {
    /// Exact ground truth is being computed (missing, or narrower than k).
    GroundTruth {
        queries: usize,
        k: usize,
    },
    /// Ground-truth work done so far: query x train-row pairs out of `total`.
    GroundTruthProgress {
        done: u64,
        total: u64,
    },
    /// The sweep starts (after ground truth): every algorithm's builds and points of this
    /// sweep (or shard), so progress knows the total up front; stored points are included.
    SweepStarted {
        algorithms: usize,
        builds: usize,
        points: usize,
    },
    /// An algorithm's sweep starts: `builds` indexes, `points` measured points at most.
    AlgorithmStarted {
        algorithm: &'a str,
        builds: usize,
        points: usize,
    },
    LoadStarted {
        algorithm: &'a str,
        rows: usize,
    },
    LoadFinished {
        algorithm: &'a str,
        report: &'a LoadReport,
    },
    BuildStarted {
        algorithm: &'a str,
        build_args: &'a Params,
    },
    /// How far a running build is, as the server reports it (sent when it changes, at most
    /// a few times a second). `percent` is `None` where the server gives no figure.
    BuildProgress {
        algorithm: &'a str,
        build_args: &'a Params,
        phase: &'a str,
        percent: Option<f64>,
        elapsed_seconds: f64,
    },
    /// The server memory the build needs against the setting that bounds it (always sent
    /// before a build where the backend knows; a shortfall also comes as a warning).
    MemoryPlanned {
        plan: &'a MemoryPlan,
    },
    BuildFinished {
        algorithm: &'a str,
        build_args: &'a Params,
        report: &'a BuildReport,
    },
    /// Every point of this build is already stored: the index is not built.
    BuildSkipped {
        algorithm: &'a str,
        build_args: &'a Params,
    },
    /// The points of a build are about to be measured: `points` points, `passes` passes
    /// planned (a recall pass and `--runs` timed passes each; extra passes may follow).
    MeasureStarted {
        algorithm: &'a str,
        build_args: &'a Params,
        points: usize,
        passes: usize,
    },
    /// A point starts on this build: its recall pass over `queries` queries, then at least
    /// `runs` timed passes (in rounds with the build's other points, by default).
    PointStarted {
        algorithm: &'a str,
        build_args: &'a Params,
        query_args: &'a Params,
        clients: usize,
        queries: usize,
        runs: usize,
    },
    /// One pass of a point ended.
    PassFinished {
        algorithm: &'a str,
        query_args: &'a Params,
        clients: usize,
        kind: PassKind,
        /// Queries / wall seconds of the pass.
        qps: f64,
        /// Seconds the pass took, sampling included.
        seconds: f64,
        /// Measured under heavy interference.
        heavy: bool,
    },
    PointFinished {
        point: &'a PointResult,
        path: &'a Path,
    },
    /// Already stored (and not `force`): not measured again.
    PointSkipped {
        point: &'a PointResult,
        path: &'a Path,
    },
    /// A streaming run's step ended and is stored (`annbench stream`).
    StreamStep {
        record: &'a crate::results::stream::StepRecord,
        path: &'a Path,
    },
    /// Something the user should see (build notices, client bottleneck, dropped points).
    Warning(&'a str),
}

/// Which pass of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassKind {
    /// The first full pass over the queries: recall, and the warm-up of the caches.
    Recall,
    /// One of the `--runs` timed passes.
    Timed,
    /// A timed pass beyond `--runs` (`--target-ci`, or re-measuring a flagged point).
    Extra,
}

impl PassKind {
    /// `recall`, `timed` or `extra`.
    pub fn as_str(self) -> &'static str {
        match self {
            PassKind::Recall => "recall",
            PassKind::Timed => "timed",
            PassKind::Extra => "extra",
        }
    }
}

/// Receives sweep events; may ask the sweep to stop (Ctrl-C, KeyboardInterrupt). `Sync` so a
/// caller can run the sweep on another thread (e.g. Python releasing the GIL) while events are
/// still delivered from the sweep's own thread.
pub trait Progress: Sync {
    /// Called for every event, in order.
    fn on_event(&self, event: &Event<'_>);

    /// Polled between passes, and about every 50 ms during a pass; `true` stops the
    /// sweep with [`crate::Error::Interrupted`] after dropping the index. Stored points stay.
    fn cancelled(&self) -> bool {
        false
    }
}

/// How often a wait of annbench's own ([`wait_until`]) looks for a stop.
pub const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Whether the run is to stop: `progress` is cancelled (Ctrl-C, Python's KeyboardInterrupt) or
/// a stop was requested of the backends ([`crate::backend::request_stop`]).
pub fn stopping(progress: &dyn Progress) -> bool {
    progress.cancelled() || crate::backend::stop_requested()
}

/// Wait until `deadline`, or [`crate::Error::Interrupted`] within [`STOP_POLL`] of a stop
/// ([`stopping`]). Every wait on annbench's own schedule (a paced write's next batch, ...)
/// goes through here: a bare sleep would hold a Ctrl-C for as long as it lasts.
pub fn wait_until(progress: &dyn Progress, deadline: std::time::Instant) -> crate::Result<()> {
    loop {
        if stopping(progress) {
            return Err(crate::Error::Interrupted);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(STOP_POLL));
    }
}

/// Progress that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn on_event(&self, _event: &Event<'_>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Cancelled from `at` on.
    struct CancelAt(Instant);

    impl Progress for CancelAt {
        fn on_event(&self, _event: &Event<'_>) {}
        fn cancelled(&self) -> bool {
            Instant::now() >= self.0
        }
    }

    #[test]
    fn a_wait_of_annbench_s_own_ends_at_once_on_a_stop() {
        let t0 = Instant::now();
        let progress = CancelAt(t0 + Duration::from_millis(100));
        let waited = wait_until(&progress, t0 + Duration::from_secs(60));
        assert!(
            matches!(waited, Err(crate::Error::Interrupted)),
            "{waited:?}"
        );
        // A minute's wait ends with the stop, not with the minute (the bound is generous: the
        // promise is "at once", within a poll of 20 ms).
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        // Without a stop it lasts until its deadline.
        let t1 = Instant::now();
        wait_until(&NoProgress, t1 + Duration::from_millis(50)).unwrap();
        assert!(t1.elapsed() >= Duration::from_millis(50));
    }
}
