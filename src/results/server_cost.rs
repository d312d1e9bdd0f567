//! Server cost records: what the database server spent per timed pass ([`PassServerCost`],
//! deltas over the pass) and per query at a point ([`ServerCost`], from the passes in use).
//! Measured by `runner::server_cost`; docs/server-cost.md says what each figure includes.

use super::Pass;
use crate::metrics::interval::{cv, median};
use serde::{Deserialize, Serialize};

/// What the server spent during one timed pass; `None` where the source was unavailable.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct PassServerCost {
    /// User CPU seconds of the server processes serving the pass (local servers, `/proc`).
    pub cpu_user_seconds: Option<f64>,
    /// System CPU seconds of the same processes.
    pub cpu_system_seconds: Option<f64>,
    /// Voluntary context switches (waits: I/O, locks, the network) of the same processes.
    pub voluntary_switches: Option<u64>,
    /// Involuntary context switches (preemption: the machine's cores were wanted elsewhere).
    pub involuntary_switches: Option<u64>,
    /// Executions of the search statement the server's statistics counted.
    pub statements: Option<u64>,
    /// Server execution time of those executions, seconds.
    pub exec_seconds: Option<f64>,
    /// Buffer (page) reads served from memory.
    pub buffer_hits: Option<u64>,
    /// Buffer (page) reads that went to storage.
    pub buffer_reads: Option<u64>,
}

impl PassServerCost {
    /// User + system CPU seconds.
    pub fn cpu_seconds(&self) -> Option<f64> {
        Some(self.cpu_user_seconds? + self.cpu_system_seconds?)
    }
}

/// A point's server cost per query: the median over its passes in use of each pass's figure
/// divided by that pass's queries (statement statistics: by the executions they counted).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerCost {
    /// Server CPU seconds (user + system) per query.
    pub cpu_per_query: Option<f64>,
    pub cpu_user_per_query: Option<f64>,
    pub cpu_system_per_query: Option<f64>,
    /// Pass-to-pass coefficient of variation of `cpu_per_query`.
    pub cpu_cv: Option<f64>,
    pub voluntary_switches_per_query: Option<f64>,
    pub involuntary_switches_per_query: Option<f64>,
    /// Server execution time per query (mean within each pass; the server keeps sums).
    pub exec_per_query: Option<f64>,
    /// Mean latency (of the median pass) minus `exec_per_query`: what the client, the
    /// driver and the network add per query.
    pub client_network_per_query: Option<f64>,
    pub buffer_hits_per_query: Option<f64>,
    pub buffer_reads_per_query: Option<f64>,
    /// Server CPU seconds of the first index build (local servers), next to its wall time.
    pub build_cpu_seconds: Option<f64>,
    /// Resident memory (PSS) of the server's processes after the build and after the passes.
    pub memory_after_build_bytes: Option<u64>,
    pub memory_after_passes_bytes: Option<u64>,
    /// Where CPU and context switches came from (e.g. `/proc: mariadbd pid 123, all threads`).
    pub cpu_source: Option<String>,
    /// Where execution time and reads came from (e.g. `pg_stat_statements`).
    pub statements_source: Option<String>,
    /// Sources that were unavailable, and how to enable them.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl ServerCost {
    /// The per-query figures of the passes in use (all passes when none is marked used);
    /// sources, build and memory are the runner's to fill.
    pub fn from_passes(passes: &[Pass], latency_mean: f64) -> ServerCost {
        let used: Vec<&Pass> = if passes.iter().any(|p| p.used) {
            passes.iter().filter(|p| p.used).collect()
        } else {
            passes.iter().collect()
        };
        let per = |f: &dyn Fn(&PassServerCost) -> Option<f64>, by_statements: bool| {
            let v: Vec<f64> = used
                .iter()
                .filter_map(|p| {
                    let s = p.server.as_ref()?;
                    let n = if by_statements {
                        s.statements? as f64
                    } else {
                        p.queries as f64
                    };
                    (n > 0.0).then_some(f(s)? / n)
                })
                .collect();
            v
        };
        let cpu = per(&|s| s.cpu_seconds(), false);
        let exec_per_query = median(&per(&|s| s.exec_seconds, true));
        ServerCost {
            cpu_per_query: median(&cpu),
            cpu_user_per_query: median(&per(&|s| s.cpu_user_seconds, false)),
            cpu_system_per_query: median(&per(&|s| s.cpu_system_seconds, false)),
            cpu_cv: cv(&cpu),
            voluntary_switches_per_query: median(&per(
                &|s| s.voluntary_switches.map(|x| x as f64),
                false,
            )),
            involuntary_switches_per_query: median(&per(
                &|s| s.involuntary_switches.map(|x| x as f64),
                false,
            )),
            exec_per_query,
            client_network_per_query: exec_per_query
                .filter(|_| latency_mean > 0.0)
                .map(|e| latency_mean - e),
            buffer_hits_per_query: median(&per(&|s| s.buffer_hits.map(|x| x as f64), true)),
            buffer_reads_per_query: median(&per(&|s| s.buffer_reads.map(|x| x as f64), true)),
            ..ServerCost::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(queries: usize, cpu: f64, exec: f64, used: bool) -> Pass {
        Pass {
            queries,
            wall_seconds: 1.0,
            used,
            server: Some(PassServerCost {
                cpu_user_seconds: Some(cpu * 0.75),
                cpu_system_seconds: Some(cpu * 0.25),
                voluntary_switches: Some(queries as u64 * 2),
                involuntary_switches: Some(0),
                statements: Some(queries as u64),
                exec_seconds: Some(exec),
                buffer_hits: Some(queries as u64 * 10),
                buffer_reads: None,
            }),
            ..Pass::default()
        }
    }

    #[test]
    fn per_query_figures_are_medians_of_the_passes_in_use() {
        let passes = [
            pass(100, 0.1, 0.05, true),
            pass(200, 0.4, 0.1, true),
            pass(100, 0.3, 0.05, true),
            // Left out: a disturbed pass.
            pass(100, 9.0, 5.0, false),
        ];
        let c = ServerCost::from_passes(&passes, 0.002);
        assert!((c.cpu_per_query.unwrap() - 0.002).abs() < 1e-12, "{c:?}");
        assert!((c.cpu_user_per_query.unwrap() - 0.0015).abs() < 1e-12);
        assert!((c.exec_per_query.unwrap() - 0.0005).abs() < 1e-12);
        assert!((c.client_network_per_query.unwrap() - 0.0015).abs() < 1e-12);
        assert_eq!(c.voluntary_switches_per_query, Some(2.0));
        assert_eq!(c.buffer_hits_per_query, Some(10.0));
        assert_eq!(c.buffer_reads_per_query, None);
        assert!(c.cpu_cv.unwrap() > 0.0);
    }

    #[test]
    fn no_source_no_figure() {
        let p = Pass {
            queries: 10,
            wall_seconds: 1.0,
            ..Pass::default()
        };
        let c = ServerCost::from_passes(&[p], 0.001);
        assert_eq!(c, ServerCost::default());
    }
}
