//! [`PointResult`]: the one record type that is the contract between measuring (runner) and
//! reporting (tables, exports, plots, Python).

use super::BuildPhase;
use crate::Metric;
use crate::metrics::LatencySummary;
use crate::params::Params;
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One measured point: (dataset, count, algorithm, build args, query args, clients).
#[derive(Debug, Clone)]
pub struct PointResult {
    // Identity.
    pub dataset: String,
    pub distance: Metric,
    /// k, the number of neighbours asked for.
    pub count: usize,
    /// `mariadb`, `pgvector`, `pgvector_halfvec`, or an ann-benchmarks algorithm name.
    pub algorithm: String,
    pub build_args: Params,
    pub query_args: Params,
    /// Concurrent query connections.
    pub clients: usize,
    /// User label of the run, e.g. `mariadb-11.8`.
    pub label: Option<String>,
    /// Fingerprint of the data the point was measured on (train, test, the ground truth's first
    /// `count` columns and the metric; see [`crate::dataset::fingerprint`]). A stored point is
    /// reused only for data with the same fingerprint. `None` for files of earlier versions
    /// and for ann-benchmarks results.
    pub dataset_fingerprint: Option<String>,

    // Timings of the index this point ran on.
    /// Table load seconds (None for ann-benchmarks results, which do not separate it).
    pub load_seconds: Option<f64>,
    /// Index build seconds alone (isecs).
    pub build_seconds: f64,
    /// Index size in bytes from the server (ann-benchmarks stores kB of client RSS; converted).
    pub index_size_bytes: Option<u64>,
    pub table_size_bytes: Option<u64>,
    pub build_phases: Vec<BuildPhase>,

    // Raw measurements.
    /// Returned ids of the first full pass over the queries (the recall pass), q x count, -1
    /// where fewer than count came back.
    pub neighbors: Array2<i64>,
    /// Distances of returned ids recomputed by the client from the train vectors, q x count.
    pub distances: Array2<f32>,
    /// Per-query latency in seconds, in query order: each query's first run in the first
    /// timed pass (ann-benchmarks' `times`).
    pub latencies: Vec<f64>,
    /// Every timed pass, in run order.
    pub passes: Vec<Pass>,

    /// Metrics derived from the raw data and exact ground truth.
    pub metrics: PointMetrics,
    pub environment: Environment,
}

impl PointResult {
    /// Whether the recall was computed with the absolute `+1e-3` of earlier versions on
    /// distances where that and [`crate::metrics::knn_threshold`] may disagree: the rules
    /// differ only for a true k-th distance below 0.1, where they count different answers at
    /// most 0.1 + 1e-3 away, so a point with no stored distance that small scored the same.
    pub fn old_recall_rule(&self) -> bool {
        let limit = crate::metrics::KNN_RELATIVE_FROM + crate::metrics::KNN_EPSILON;
        self.metrics.recall_rule.is_none() && self.distances.iter().any(|&d| d <= limit)
    }

    /// The CPU speed probe of the point (`runner::speed`): the median over the passes in use
    /// of each pass's probe, in CPU microseconds (higher: a slower CPU). `None` for points
    /// measured before the probe existed and for ann-benchmarks results.
    pub fn cpu_probe_us(&self) -> Option<f64> {
        let probes: Vec<f64> = self
            .passes
            .iter()
            .filter(|p| p.used)
            .filter_map(|p| p.interference.and_then(|i| i.cpu_probe_us))
            .collect();
        crate::metrics::interval::median(&probes)
    }
}

/// One timed pass: every client cycles through its share of the test queries until the pass
/// has lasted `--min-time` (and each query ran at least once). Grows with new per-pass figures
/// (fields added later carry `#[serde(default)]` so older files still read).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pass {
    /// Wall-clock seconds from the first query sent to the last answer received.
    pub wall_seconds: f64,
    /// Queries answered in the pass (all clients).
    pub queries: usize,
    /// Client process CPU seconds during the pass (to show a client bottleneck).
    pub client_cpu_seconds: Option<f64>,
    /// Which build of the point it ran on: 0, or 0..N with `--rebuilds N`.
    #[serde(default)]
    pub build: usize,
    /// Latency of every query of the pass.
    #[serde(default)]
    pub latency: Option<LatencySummary>,
    /// What else used the machine during the pass.
    #[serde(default)]
    pub interference: Option<Interference>,
    /// Far slower than the point's other passes, or one query took far longer than the rest.
    #[serde(default)]
    pub stalled: bool,
    /// Whether the point's figures use this pass (disturbed passes are left out when enough
    /// undisturbed ones were measured).
    #[serde(default = "yes")]
    pub used: bool,
    /// What the database server spent during the pass (see `runner::server_cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<super::PassServerCost>,
    /// The round of its build this pass ran in, when servers ran interleaved
    /// ([`Interleave`]): the passes of one round of every server ran back to back, so their
    /// ratio cancels the machine's drift. `None` for a run of one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
}

fn yes() -> bool {
    true
}

impl Default for Pass {
    fn default() -> Self {
        Pass {
            wall_seconds: 0.0,
            queries: 0,
            client_cpu_seconds: None,
            build: 0,
            latency: None,
            interference: None,
            stalled: false,
            used: true,
            server: None,
            round: None,
        }
    }
}

impl Pass {
    /// Queries / wall seconds of this pass.
    pub fn qps(&self) -> f64 {
        crate::metrics::qps(self.queries, self.wall_seconds)
    }

    /// Under heavy interference or stalled: re-measured, and left out when possible.
    pub fn disturbed(&self) -> bool {
        self.stalled || self.interference.is_some_and(|i| i.heavy)
    }
}

/// What else used the machine during one pass, from `/proc/stat`, `/proc/<pid>/stat` and
/// `/proc/loadavg` (see `runner::interference`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Interference {
    /// Seconds the sample spans (the pass, give or take a millisecond).
    pub seconds: f64,
    /// Logical cores of the machine: the capacity is `seconds x cores`.
    pub cores: usize,
    /// CPU seconds (all cores) used by everything except annbench and the database server
    /// processes it is connected to; `None` when a local server's processes cannot be seen.
    pub other_cpu_seconds: Option<f64>,
    /// CPU seconds (all cores) the hypervisor ran other guests instead of this machine.
    pub steal_seconds: f64,
    /// 1-minute load average at the end of the pass.
    pub load_average: f64,
    /// CPU microseconds of a fixed piece of work, the mean of probes right before and right
    /// after the pass (`runner::speed`): higher is a slower CPU. `None` in files written
    /// before the probe existed.
    #[serde(default)]
    pub cpu_probe_us: Option<f64>,
    /// Other CPU or steal above the thresholds of `runner::interference`.
    pub heavy: bool,
}

impl Interference {
    /// Other processes' CPU as a share of the machine's capacity during the pass.
    pub fn other_share(&self) -> Option<f64> {
        let cap = self.seconds * self.cores.max(1) as f64;
        self.other_cpu_seconds
            .filter(|_| cap > 0.0)
            .map(|c| c / cap)
    }

    /// Steal as a share of the machine's capacity during the pass.
    pub fn steal_share(&self) -> f64 {
        let cap = self.seconds * self.cores.max(1) as f64;
        if cap > 0.0 {
            self.steal_seconds / cap
        } else {
            0.0
        }
    }
}

/// Why a point's figure deserves caution; tables show `~` before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// The figure uses passes measured under heavy interference (not enough clean ones).
    Interference,
    /// The confidence interval is wide (see `runner::assess::SPREAD_LIMIT`).
    Spread,
    /// The figure uses a stalled pass (not enough others).
    Stalled,
    /// The recall was computed by an earlier annbench with ann-benchmarks' absolute `+1e-3`
    /// tolerance on distances so small that it may have counted answers the rule of
    /// [`crate::metrics::knn_threshold`] does not (see [`PointResult::old_recall_rule`]);
    /// `annbench run` measures such a point again.
    Tolerance,
}

impl Flag {
    /// `interference`, `spread` or `stalled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Flag::Interference => "interference",
            Flag::Spread => "spread",
            Flag::Stalled => "stalled",
            Flag::Tolerance => "tolerance",
        }
    }
}

/// One index build of a point measured with `--rebuilds N`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BuildRun {
    pub build_seconds: f64,
    pub index_size_bytes: Option<u64>,
    pub recall: f64,
    pub epsilon_recall: f64,
    /// Median QPS of this build's passes.
    pub qps: f64,
}

/// Metrics of one point.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PointMetrics {
    /// k-nn recall (ann-benchmarks' rule: +1e-3 tolerance, 1% of the k-th distance below
    /// 0.1), from the first full pass over the queries (the mean over builds with
    /// `--rebuilds`).
    pub recall: f64,
    /// epsilon recall (ann-benchmarks rule, 1% tolerance).
    pub epsilon_recall: f64,
    /// The figure: median QPS of the passes in use (see [`Pass::used`]); with rebuilds, the
    /// median of the builds' medians.
    pub qps: f64,
    /// 95% confidence interval of that median (order statistics; see `metrics::interval`);
    /// `None` with a single pass.
    #[serde(default)]
    pub qps_ci_low: Option<f64>,
    #[serde(default)]
    pub qps_ci_high: Option<f64>,
    /// The interval's actual coverage (below 0.95 with fewer than 6 passes).
    #[serde(default)]
    pub qps_ci_level: Option<f64>,
    /// The best pass (ann-benchmarks' statistic, `--stat best`).
    #[serde(default)]
    pub qps_best: f64,
    /// Coefficient of variation of the passes in use.
    #[serde(default)]
    pub qps_cv: Option<f64>,
    /// Passes the figure is based on.
    #[serde(default)]
    pub passes: usize,
    /// QPS of every pass, in run order (used or not).
    pub qps_passes: Vec<f64>,
    /// Latency of the median pass (of the best pass in files written before format 3).
    pub latency_mean: f64,
    pub latency_p50: f64,
    pub latency_p95: f64,
    pub latency_p99: f64,
    pub latency_p999: f64,
    /// Queries answered with fewer than k ids in the recall pass (filtered points: fewer
    /// than min(k, rows matching the filter)).
    #[serde(default)]
    pub short_results: usize,
    /// Mean ids returned per query in the recall pass (`None` in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rows: Option<f64>,
    /// The query plan EXPLAIN showed before the point was measured, in a few words
    /// (`vector index`, `B-tree + exact sort`) with EXPLAIN's lines in brackets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Reasons for caution, empty for a clean figure.
    #[serde(default)]
    pub flags: Vec<Flag>,
    /// Every build of the point with `--rebuilds N` (empty for a single build).
    #[serde(default)]
    pub builds: Vec<BuildRun>,
    /// The database server's cost per query (`None` for in-process backends and files
    /// written before annbench measured it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<super::ServerCost>,
    /// The k-nn rule the recall was computed with ([`crate::metrics::KNN_RULE`]); `None` in
    /// files of earlier versions, which added an absolute 1e-3 whatever the scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall_rule: Option<String>,
    /// Set when this point's passes alternated with the same point on other servers of one
    /// run (`--postgres NAME=URL` repeated): `compare` then pairs passes round by round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<Interleave>,
}

/// The interleaved run a point belongs to: several servers of one database measured in one
/// run, their passes alternating in a seeded order that changes from round to round.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Interleave {
    /// Shared by the points of every server of the run (the run's start time and a random
    /// suffix): two labels are paired only when their points carry the same id.
    pub run: String,
    /// The labels of the servers of the run, in the order given on the command line.
    pub servers: Vec<String>,
    /// Seed of the pass order within the rounds.
    pub seed: u64,
}

impl PointMetrics {
    /// The confidence interval of `qps`, when there is one.
    pub fn qps_interval(&self) -> Option<crate::metrics::interval::Interval> {
        Some(crate::metrics::interval::Interval {
            low: self.qps_ci_low?,
            high: self.qps_ci_high?,
            level: self.qps_ci_level.unwrap_or(crate::metrics::interval::LEVEL),
        })
    }
}

/// Where and with what the point was measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub annbench_version: String,
    pub server_version: String,
    pub server_settings: BTreeMap<String, String>,
    pub cpu_model: String,
    pub cpu_cores: usize,
    pub ram_bytes: u64,
    /// RFC 3339 UTC time the point finished.
    pub finished_at: String,
    /// RFC 3339 UTC time the run that measured the point started (`None` in files written
    /// before annbench recorded it): the order of a series of runs (`annbench history`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Warnings raised while measuring (client bottleneck, build notices...).
    pub notices: Vec<String>,
    /// The command line of the process that measured the point, passwords masked (empty in
    /// files written before annbench recorded it).
    #[serde(default)]
    pub command: String,
    /// Host name of the client machine (empty in files written before annbench recorded it):
    /// with the label, what tells measurements of one point on two nodes apart.
    #[serde(default)]
    pub hostname: String,
    /// The shard of a sharded sweep (`annbench run --shard`) that measured the point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardInfo>,
}
