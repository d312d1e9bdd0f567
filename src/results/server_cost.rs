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
    /// Bytes the same processes caused to be read from storage (`/proc/<pid>/io`
    /// `read_bytes`: page-cache hits are not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_read_bytes: Option<u64>,
    /// Bytes they caused to be written to storage (`write_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_write_bytes: Option<u64>,
    /// Completed reads of the block device holding the server's data directory
    /// (`/proc/diskstats`: the whole device, every process's reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads: Option<u64>,
    /// Bytes those reads read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<u64>,
    /// Completed writes of the same device, and their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_writes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
}

impl PassServerCost {
    /// User + system CPU seconds.
    pub fn cpu_seconds(&self) -> Option<f64> {
        Some(self.cpu_user_seconds? + self.cpu_system_seconds?)
    }
}

/// A point is IO-bound when its server processes read more than this many KiB from storage
/// per query (the median of its passes, `/proc/<pid>/io` `read_bytes`), cached otherwise:
/// one 8 KiB PostgreSQL page every 8 queries, one 16 KiB InnoDB page every 16. The
/// processes' own figure decides, not the device's: the device counts every process on the
/// machine, and a build or a compiler next to the benchmark would make a cached point look
/// IO-bound. A cached server reads nothing (docs/server-cost.md).
pub const IO_BOUND_KIB_PER_QUERY: f64 = 1.0;

impl std::str::FromStr for Storage {
    type Err = crate::Error;

    /// `cached` or `io-bound` (`io_bound` too), any case (`--expect`).
    fn from_str(s: &str) -> crate::Result<Storage> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "cached" => Ok(Storage::Cached),
            "io-bound" => Ok(Storage::IoBound),
            _ => Err(crate::Error::Config(format!(
                "--expect {s}: give cached or io-bound"
            ))),
        }
    }
}

/// Whether a point's queries were answered from memory or from storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Cached,
    IoBound,
}

impl Storage {
    /// `cached` or `io-bound`: the `storage` column and `--expect`'s values.
    pub fn as_str(self) -> &'static str {
        match self {
            Storage::Cached => "cached",
            Storage::IoBound => "io-bound",
        }
    }

    /// The other judgement.
    pub fn other(self) -> Storage {
        match self {
            Storage::Cached => Storage::IoBound,
            Storage::IoBound => Storage::Cached,
        }
    }

    /// The judgement of a server read figure (KiB per query).
    pub fn of_read_kib(kib_per_query: f64) -> Storage {
        if kib_per_query > IO_BOUND_KIB_PER_QUERY {
            Storage::IoBound
        } else {
            Storage::Cached
        }
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
    /// Reads of the block device holding the data directory per query (the whole device:
    /// iostat's r/s divided by QPS), and KiB read per query (rkB/s / QPS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_reads_per_query: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_read_kib_per_query: Option<f64>,
    /// Writes of that device per query, and KiB written per query (w/s, wkB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_writes_per_query: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_write_kib_per_query: Option<f64>,
    /// KiB the server processes (those of `cpu_source`) read from and wrote to storage per
    /// query (`/proc/<pid>/io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_read_kib_per_query: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_write_kib_per_query: Option<f64>,
    /// `server_read_kib_per_query` above [`IO_BOUND_KIB_PER_QUERY`]: the point is IO-bound;
    /// below: cached. Absent without the figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_bound: Option<bool>,
    /// Server CPU seconds of the first index build (local servers), next to its wall time.
    pub build_cpu_seconds: Option<f64>,
    /// Resident memory (PSS) of the server's processes after the build and after the passes.
    pub memory_after_build_bytes: Option<u64>,
    pub memory_after_passes_bytes: Option<u64>,
    /// Where CPU and context switches came from (e.g. `/proc: mariadbd pid 123, all threads`).
    pub cpu_source: Option<String>,
    /// Where execution time and reads came from (e.g. `pg_stat_statements`).
    pub statements_source: Option<String>,
    /// The block device of the device figures, e.g. `/proc/diskstats: vda (254:0), holding
    /// /var/lib/postgresql (the whole device)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_source: Option<String>,
    /// Sources that were unavailable, and how to enable them.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl ServerCost {
    /// Cached or IO-bound, when the server's storage reads were measured.
    pub fn storage(&self) -> Option<Storage> {
        self.io_bound
            .map(|b| if b { Storage::IoBound } else { Storage::Cached })
    }

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
        let count = |f: fn(&PassServerCost) -> Option<u64>| {
            median(&per(&|s| f(s).map(|x| x as f64), false))
        };
        let kib = |f: fn(&PassServerCost) -> Option<u64>| {
            median(&per(&|s| f(s).map(|x| x as f64 / 1024.0), false))
        };
        let server_read_kib_per_query = kib(|s| s.process_read_bytes);
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
            io_reads_per_query: count(|s| s.device_reads),
            io_read_kib_per_query: kib(|s| s.device_read_bytes),
            io_writes_per_query: count(|s| s.device_writes),
            io_write_kib_per_query: kib(|s| s.device_write_bytes),
            server_read_kib_per_query,
            server_write_kib_per_query: kib(|s| s.process_write_bytes),
            io_bound: server_read_kib_per_query
                .map(|k| Storage::of_read_kib(k) == Storage::IoBound),
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
                ..PassServerCost::default()
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

    /// A pass of `queries` whose server read `read_kib` KiB per query from storage, and whose
    /// device saw 2 reads (of 8 KiB each) per KiB.
    fn io_pass(queries: usize, read_kib: f64) -> Pass {
        let bytes = (read_kib * 1024.0 * queries as f64) as u64;
        Pass {
            queries,
            wall_seconds: 1.0,
            used: true,
            server: Some(PassServerCost {
                process_read_bytes: Some(bytes),
                process_write_bytes: Some(0),
                device_reads: Some(bytes / 8192),
                device_read_bytes: Some(bytes),
                device_writes: Some(queries as u64),
                device_write_bytes: Some(queries as u64 * 4096),
                ..PassServerCost::default()
            }),
            ..Pass::default()
        }
    }

    #[test]
    fn storage_figures_are_medians_per_query_and_decide_cached_or_io_bound() {
        let c = ServerCost::from_passes(
            &[io_pass(100, 16.0), io_pass(200, 8.0), io_pass(100, 32.0)],
            0.001,
        );
        assert_eq!(c.server_read_kib_per_query, Some(16.0));
        assert_eq!(c.io_read_kib_per_query, Some(16.0));
        assert_eq!(c.io_reads_per_query, Some(2.0));
        assert_eq!(c.io_writes_per_query, Some(1.0));
        assert_eq!(c.io_write_kib_per_query, Some(4.0));
        assert_eq!(c.server_write_kib_per_query, Some(0.0));
        assert_eq!(c.storage(), Some(Storage::IoBound));
        // Nothing read: cached, with the figures present (zero as measured).
        let c = ServerCost::from_passes(&[io_pass(100, 0.0)], 0.001);
        assert_eq!(
            (c.io_reads_per_query, c.storage()),
            (Some(0.0), Some(Storage::Cached))
        );
        // At the threshold: still cached; just above: IO-bound.
        assert_eq!(
            Storage::of_read_kib(IO_BOUND_KIB_PER_QUERY),
            Storage::Cached
        );
        assert_eq!(Storage::of_read_kib(1.01), Storage::IoBound);
    }

    #[test]
    fn old_records_without_storage_figures_load_with_them_absent() {
        let pass: PassServerCost = serde_json::from_str(
            r#"{"cpu_user_seconds":0.1,"cpu_system_seconds":0.0,"voluntary_switches":3,
               "involuntary_switches":0,"statements":null,"exec_seconds":null,
               "buffer_hits":null,"buffer_reads":null}"#,
        )
        .unwrap();
        assert_eq!(pass.process_read_bytes, None);
        let cost: ServerCost = serde_json::from_str(r#"{"cpu_per_query":0.001}"#).unwrap();
        assert_eq!((cost.io_reads_per_query, cost.storage()), (None, None));
        // Absent figures are not written: a point without them reads as before.
        let text = serde_json::to_string(&ServerCost::default()).unwrap();
        assert!(
            !text.contains("io_") && !text.contains("read_kib"),
            "{text}"
        );
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
