//! Server cost per timed pass: the CPU and context switches of the local server processes
//! serving the pass (from `/proc`), and the server's own statement statistics (any server),
//! each sampled right before the clock starts and right after the last answer.
//!
//! Which processes: each connection's [`ProcessHint`] (PostgreSQL: its backend's pid; MariaDB:
//! the whole `mariadbd`), accepted only when it belongs to a server this process is connected
//! to ([`procs::connected_servers`]), so another server of the same kind, or a pid from
//! another pid namespace (a container), is never read. PostgreSQL's figure adds the CPU of
//! the postmaster's children that exited during the pass (parallel workers end with their
//! query); context switches are those of the live processes and threads. The statement
//! statistics are read on the first client's connection, outside the `/proc` window, so
//! reading them costs the pass nothing.
//!
//! Storage I/O: the same processes' `read_bytes` and `write_bytes` (`/proc/<pid>/io`; for
//! PostgreSQL the postmaster's figure adds the children it reaped during the pass, like its
//! CPU), and the counters of the block device holding the server's data directory
//! (`/proc/diskstats`, the whole device), found once per point ([`storage::device_of`]).

use crate::backend::Searcher;
use crate::backend::cost::{
    DataDirectory, ProcessHint, StatementCounters, Statements, all_server_commands,
};
use crate::connect::ServerKind;
use crate::procfs::procs::{self, Ticks};
use crate::procfs::storage::{self, Device, DeviceCounters};
use crate::procfs::{Procs, locate_at, only_root};
use crate::results::{PassServerCost, ServerCost};

/// How a point's server cost is read, found once its query connections are open.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    procs: Option<Procs>,
    /// The block device of the server's data directory (local servers that have one).
    device: Option<Device>,
    statements: bool,
    cpu_source: Option<String>,
    io_source: Option<String>,
    statements_source: Option<String>,
    notes: Vec<String>,
    tick: f64,
}

/// Counters at one instant.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    cpu: Option<(u64, u64)>,
    switches: Option<(u64, u64)>,
    /// The processes' (read_bytes, write_bytes).
    io: Option<(u64, u64)>,
    device: Option<DeviceCounters>,
    statements: Option<StatementCounters>,
}

impl Probe {
    /// Find the server processes and statistics of `searchers` (the query connections).
    pub fn discover(searchers: &mut [Box<dyn Searcher>]) -> Probe {
        Probe::discover_at(searchers, None)
    }

    /// [`Probe::discover`] for the server on TCP `port` (several servers of a kind in a run).
    pub fn discover_at(searchers: &mut [Box<dyn Searcher>], port: Option<u16>) -> Probe {
        let mut p = Probe {
            tick: procs::ticks_per_second(),
            ..Probe::default()
        };
        let hints: Vec<ProcessHint> = searchers.iter_mut().map(|s| s.process_hint()).collect();
        if hints.iter().all(|h| *h == ProcessHint::None) {
            return p; // in-process: no server
        }
        match locate_at(&hints, &all_server_commands(), port) {
            Ok((procs, source)) => {
                if let Some(first) = searchers.first_mut() {
                    match find_device(&procs, first.data_directory()) {
                        Ok((device, source)) => {
                            p.device = Some(device);
                            p.io_source = Some(source);
                        }
                        Err(note) => p.notes.push(note),
                    }
                }
                p.procs = Some(procs);
                p.cpu_source = Some(source);
            }
            Err(note) => p.notes.push(note),
        }
        if let Some(first) = searchers.first_mut() {
            match first.statements() {
                Statements::Counters { source, .. } => {
                    p.statements = true;
                    p.statements_source = Some(source.to_string());
                }
                Statements::Unavailable(why) => p.notes.push(why),
            }
        }
        p
    }

    /// Sources that are unavailable, and how to enable them.
    pub fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// Whether anything is measured at all.
    pub fn measures(&self) -> bool {
        self.procs.is_some() || self.statements
    }

    /// The statement counters now, read on `searcher` (take it outside the `/proc` window).
    pub fn sample_statements(&self, searcher: &mut dyn Searcher, into: &mut Sample) {
        if self.statements {
            into.statements = match searcher.statements() {
                Statements::Counters { counters, .. } => Some(counters),
                Statements::Unavailable(_) => None,
            };
        }
    }

    /// The processes' counters now.
    pub fn sample_procs(&self, into: &mut Sample) {
        let Some(procs) = &self.procs else { return };
        let (pids, root) = match procs {
            Procs::Backends { pids, root } => (pids.as_slice(), Some(*root)),
            Procs::Whole { pid } => (std::slice::from_ref(pid), None),
        };
        let add = |a: Option<(u64, u64)>, b: Option<(u64, u64)>| {
            a.zip(b).map(|(a, b)| (a.0 + b.0, a.1 + b.1))
        };
        let mut cpu = Some((0u64, 0u64));
        let mut switches = Some((0u64, 0u64));
        let mut io = Some((0u64, 0u64));
        for &pid in pids {
            cpu = add(cpu, procs::ticks(pid).map(|t| (t.user, t.system)));
            switches = add(switches, procs::context_switches(pid));
            io = add(io, procs::storage_bytes(pid));
        }
        if let Some(root) = root {
            let children = procs::ticks(root).map(|t: Ticks| (t.children_user, t.children_system));
            cpu = add(cpu, children);
            // The root's own I/O holds that of the children it reaped (parallel workers).
            io = add(io, procs::storage_bytes(root));
        }
        into.cpu = cpu;
        into.switches = switches;
        into.io = io;
        into.device = self.device.as_ref().and_then(storage::counters);
    }

    /// The server's cost between two samples (`a` before `b`).
    pub fn between(&self, a: &Sample, b: &Sample) -> PassServerCost {
        let secs = |t: u64| t as f64 / self.tick;
        let cpu = a.cpu.zip(b.cpu);
        let sw = a.switches.zip(b.switches);
        let io = a.io.zip(b.io);
        let dev = a.device.zip(b.device);
        // Storage counters only grow; one that went back (a wrapped or reset device counter)
        // gives no figure rather than a zero that was never measured.
        let grown = |x: u64, y: u64| y.checked_sub(x);
        // A counter that went backwards (statistics reset, entry evicted) gives no figure.
        let st = a
            .statements
            .zip(b.statements)
            .filter(|(x, y)| y.calls >= x.calls && y.exec_seconds >= x.exec_seconds);
        let delta = |f: fn(&StatementCounters) -> Option<u64>| {
            st.and_then(|(x, y)| Some(f(&y)?.saturating_sub(f(&x)?)))
        };
        PassServerCost {
            cpu_user_seconds: cpu.map(|(x, y)| secs(y.0.saturating_sub(x.0))),
            cpu_system_seconds: cpu.map(|(x, y)| secs(y.1.saturating_sub(x.1))),
            voluntary_switches: sw.map(|(x, y)| y.0.saturating_sub(x.0)),
            involuntary_switches: sw.map(|(x, y)| y.1.saturating_sub(x.1)),
            statements: st.map(|(x, y)| y.calls - x.calls),
            exec_seconds: st.map(|(x, y)| y.exec_seconds - x.exec_seconds),
            buffer_hits: delta(|c| c.buffer_hits),
            buffer_reads: delta(|c| c.buffer_reads),
            process_read_bytes: io.and_then(|(x, y)| grown(x.0, y.0)),
            process_write_bytes: io.and_then(|(x, y)| grown(x.1, y.1)),
            device_reads: dev.and_then(|(x, y)| grown(x.reads, y.reads)),
            device_read_bytes: dev.and_then(|(x, y)| grown(x.read_bytes, y.read_bytes)),
            device_writes: dev.and_then(|(x, y)| grown(x.writes, y.writes)),
            device_write_bytes: dev.and_then(|(x, y)| grown(x.write_bytes, y.write_bytes)),
        }
    }

    /// `cost` with this probe's sources and notes.
    pub fn annotate(&self, mut cost: ServerCost) -> ServerCost {
        cost.cpu_source = self.cpu_source.clone();
        cost.statements_source = self.statements_source.clone();
        cost.io_source = self.io_source.clone();
        cost.notes = self.notes.clone();
        cost
    }
}

/// The block device holding the data directory of the server of `procs`, with the source
/// recorded in results; `Err`: why there is none, for the notes. The server's own word for
/// its data directory comes first; where it has none or refuses, the top server process's
/// working directory stands for it (PostgreSQL and MariaDB run in their data directory).
fn find_device(procs: &Procs, dir: DataDirectory) -> Result<(Device, String), String> {
    let root = match procs {
        Procs::Backends { root, .. } => *root,
        Procs::Whole { pid } => *pid,
    };
    let (path, how) = match &dir {
        DataDirectory::Path(p) => (Some(std::path::Path::new(p.as_str())), p.clone()),
        DataDirectory::Refused(why) => (None, format!("the server's working directory: {why}")),
        DataDirectory::NotSaid => (None, "the server's working directory".to_string()),
    };
    let device = storage::device_of(root, path)
        .map_err(|why| format!("storage reads and writes of the device unavailable: {why}"))?;
    let source = format!(
        "/proc/diskstats: {} ({}:{}), the device holding the data directory ({how}); the \
         whole device, every process's I/O",
        device.name, device.major, device.minor
    );
    Ok((device, source))
}

/// Process commands of a server kind's top process.
pub fn server_commands(kind: ServerKind) -> &'static [&'static str] {
    kind.decl().server_commands
}

/// CPU and memory of a whole local server (every process, and children that exited), for
/// the index build.
#[derive(Debug, Clone)]
pub struct WholeServer {
    root: i32,
    tick: f64,
}

/// CPU ticks of every process of a server at one instant.
#[derive(Debug, Clone)]
pub struct TreeSample(std::collections::HashMap<i32, u64>, u64);

impl WholeServer {
    /// The one connected local server of `kind`, if visible.
    pub fn find(kind: ServerKind) -> Option<WholeServer> {
        WholeServer::find_at(kind, None)
    }

    /// [`WholeServer::find`] among the servers reached on TCP `port`, when given.
    pub fn find_at(kind: ServerKind, port: Option<u16>) -> Option<WholeServer> {
        let (roots, _) = procs::connected_servers_at(&all_server_commands(), port);
        only_root(&roots, server_commands(kind))
            .ok()
            .map(|root| WholeServer {
                root,
                tick: procs::ticks_per_second(),
            })
    }

    pub fn sample(&self) -> TreeSample {
        let mut m = std::collections::HashMap::new();
        for pid in procs::process_tree(self.root) {
            if let Some(t) = procs::ticks(pid) {
                m.insert(pid, t.user + t.system);
            }
        }
        let children = procs::ticks(self.root).map_or(0, |t| t.children_user + t.children_system);
        TreeSample(m, children)
    }

    /// CPU seconds between two samples: every process's growth (a new one counts whole) plus
    /// the children that exited in between.
    pub fn cpu_seconds(&self, a: &TreeSample, b: &TreeSample) -> f64 {
        let grown: u64 =
            b.0.iter()
                .map(|(pid, &t)| t.saturating_sub(a.0.get(pid).copied().unwrap_or(0)))
                .sum();
        (grown + b.1.saturating_sub(a.1)) as f64 / self.tick
    }

    /// Resident memory of all the server's processes (PSS: shared pages counted once).
    pub fn resident_bytes(&self) -> Option<u64> {
        let v: Vec<u64> = procs::process_tree(self.root)
            .into_iter()
            .filter_map(procs::resident_bytes)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(io: (u64, u64), reads: u64) -> Sample {
        Sample {
            io: Some(io),
            device: Some(DeviceCounters {
                reads,
                read_bytes: reads * 8192,
                writes: 1,
                write_bytes: 4096,
            }),
            ..Sample::default()
        }
    }

    #[test]
    fn storage_counters_are_deltas_and_one_that_went_back_gives_no_figure() {
        let probe = Probe {
            tick: 100.0,
            ..Probe::default()
        };
        let c = probe.between(&sample((1000, 10), 5), &sample((9192, 10), 7));
        assert_eq!(
            (c.process_read_bytes, c.process_write_bytes),
            (Some(8192), Some(0))
        );
        assert_eq!(
            (c.device_reads, c.device_read_bytes),
            (Some(2), Some(16384))
        );
        assert_eq!((c.device_writes, c.device_write_bytes), (Some(0), Some(0)));
        // A device counter that wrapped or was reset: absent, not zero.
        let c = probe.between(&sample((1000, 10), 7), &sample((1000, 10), 5));
        assert_eq!((c.device_reads, c.device_read_bytes), (None, None));
        assert_eq!(c.process_read_bytes, Some(0));
        // Not sampled (a remote server): nothing.
        let c = probe.between(&Sample::default(), &Sample::default());
        assert_eq!((c.process_read_bytes, c.device_reads), (None, None));
    }
}
