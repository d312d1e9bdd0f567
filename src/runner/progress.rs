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

/// Progress that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn on_event(&self, _event: &Event<'_>) {}
}
