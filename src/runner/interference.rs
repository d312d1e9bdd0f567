//! What else used the machine during a pass, sampled from `/proc` right before and right
//! after each timed pass (outside its timed window):
//!
//! - other CPU = the busy time of all cores (`/proc/stat`) minus annbench's own CPU (all its
//!   threads) minus the CPU of the database server processes annbench is connected to (see
//!   [`procs`]). Taking the machine's total, rather than adding up the other processes, also
//!   counts processes that start and end within the pass (compilers, test runners);
//! - steal: time the hypervisor ran other guests on this machine's virtual cores;
//! - the 1-minute load average at the end of the pass (recorded, not judged: it counts
//!   annbench's and the servers' own threads too);
//! - the CPU's speed: [`super::speed::probe`], taken by the caller outside the window of
//!   these samples (`runner::measure`), recorded per pass; a point whose passes ran on a
//!   slower machine than another point's is not compared with it (see `report::compare`).
//!
//! A pass is under heavy interference when other processes used more than
//! [`OTHER_SHARE_LIMIT`] of the machine or [`OTHER_CORES_LIMIT`] cores (whichever is less), or
//! steal exceeded [`STEAL_SHARE_LIMIT`]. When a local server's processes cannot be seen (an
//! unprivileged user and a server of another user over TCP), other CPU is unknown and only
//! steal can make a pass heavy.

use crate::procfs::procs;
use crate::results::Interference;
use std::collections::HashMap;
use std::time::Instant;

/// Other processes used more than this share of all cores...
pub const OTHER_SHARE_LIMIT: f64 = 0.10;
/// ...or this many cores (what counts on a machine with many cores).
pub const OTHER_CORES_LIMIT: f64 = 0.5;
/// Steal above this share of all cores.
pub const STEAL_SHARE_LIMIT: f64 = 0.05;

/// Knows which processes are annbench's servers; takes samples.
#[derive(Debug, Clone)]
pub struct Watcher {
    /// Top process of each connected local server.
    servers: Vec<i32>,
    /// False when a local server's processes could not be identified.
    visible: bool,
    tick: f64,
}

/// CPU counters at one instant.
#[derive(Debug, Clone)]
pub struct Sample {
    at: Instant,
    busy: u64,
    steal: u64,
    cores: usize,
    own: u64,
    servers: HashMap<i32, u64>,
}

impl Watcher {
    /// Find the local database servers this process is connected to. Call it once the query
    /// connections are open.
    pub fn discover() -> Watcher {
        let (roots, unseen) =
            procs::connected_servers(&crate::backend::cost::all_server_commands());
        Watcher {
            servers: roots.into_iter().collect(),
            visible: !unseen,
            tick: procs::ticks_per_second(),
        }
    }

    /// A watcher that attributes nothing to servers (no connections: in-process backends).
    pub fn without_servers() -> Watcher {
        Watcher {
            servers: Vec::new(),
            visible: true,
            tick: procs::ticks_per_second(),
        }
    }

    /// Top process ids of the connected local servers.
    pub fn servers(&self) -> &[i32] {
        &self.servers
    }

    /// The counters now; `None` without a readable `/proc`.
    pub fn sample(&self) -> Option<Sample> {
        let machine = procs::machine_ticks()?;
        let own = procs::own_ticks()?.own();
        let mut servers = HashMap::new();
        for &root in &self.servers {
            for pid in procs::process_tree(root) {
                if let Some(t) = procs::ticks(pid) {
                    servers.insert(pid, t.own());
                }
            }
        }
        Some(Sample {
            at: Instant::now(),
            busy: machine.busy,
            steal: machine.steal,
            cores: machine.cores,
            own,
            servers,
        })
    }

    /// CPU seconds of the connected servers' processes between two samples; a process that
    /// appeared in between counts with all its CPU.
    pub fn server_seconds(&self, a: &Sample, b: &Sample) -> f64 {
        self.server_ticks(a, b) as f64 / self.tick
    }

    fn server_ticks(&self, a: &Sample, b: &Sample) -> u64 {
        b.servers
            .iter()
            .map(|(pid, &t)| t.saturating_sub(a.servers.get(pid).copied().unwrap_or(0)))
            .sum()
    }

    /// Interference between two samples (`a` before `b`), with the CPU speed the caller
    /// probed around them.
    pub fn between(&self, a: &Sample, b: &Sample, cpu_probe_us: Option<f64>) -> Interference {
        let secs = |ticks: u64| ticks as f64 / self.tick;
        let servers = self.server_ticks(a, b);
        let busy = b.busy.saturating_sub(a.busy);
        let ours = b.own.saturating_sub(a.own) + servers;
        let other = self.visible.then(|| secs(busy.saturating_sub(ours)));
        judge(Interference {
            seconds: b.at.duration_since(a.at).as_secs_f64(),
            cores: b.cores,
            other_cpu_seconds: other,
            steal_seconds: secs(b.steal.saturating_sub(a.steal)),
            load_average: load_average().unwrap_or(0.0),
            cpu_probe_us,
            heavy: false,
        })
    }
}

/// Sets `heavy` from the thresholds of the module docs.
pub fn judge(mut i: Interference) -> Interference {
    let other_cores = i
        .other_cpu_seconds
        .filter(|_| i.seconds > 0.0)
        .map_or(0.0, |c| c / i.seconds);
    let limit = (OTHER_SHARE_LIMIT * i.cores.max(1) as f64).min(OTHER_CORES_LIMIT);
    i.heavy = other_cores > limit || i.steal_share() > STEAL_SHARE_LIMIT;
    i
}

/// The 1-minute load average.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One line for logs: `other processes 48% of 2 cores, steal 0%, load 3.2`.
pub fn describe(i: &Interference) -> String {
    let other = match i.other_share() {
        Some(s) => format!("other processes {:.0}% of {} cores", s * 100.0, i.cores),
        None => "other processes unknown".to_string(),
    };
    format!(
        "{other}, steal {:.0}%, load average {:.1}",
        i.steal_share() * 100.0,
        i.load_average
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(cores: usize, other: Option<f64>, steal: f64) -> Interference {
        judge(Interference {
            seconds: 1.0,
            cores,
            other_cpu_seconds: other,
            steal_seconds: steal,
            load_average: 1.0,
            cpu_probe_us: None,
            heavy: false,
        })
    }

    #[test]
    fn thresholds() {
        // 2 cores: the limit is 10% of 2 = 0.2 cores.
        assert!(!with(2, Some(0.15), 0.0).heavy);
        assert!(with(2, Some(0.25), 0.0).heavy);
        // 64 cores: half a core (a hog on one core) is heavy, though it is < 10%.
        assert!(with(64, Some(0.9), 0.0).heavy);
        assert!(!with(64, Some(0.4), 0.0).heavy);
        // Steal above 5% of the machine; unknown other CPU is not heavy by itself.
        assert!(with(2, None, 0.12).heavy);
        assert!(!with(2, None, 0.05).heavy);
    }

    #[test]
    fn a_busy_thread_of_our_own_is_not_interference_but_a_child_process_is() {
        let w = Watcher::without_servers();
        let a = w.sample().unwrap();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 200 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let b = w.sample().unwrap();
        let i = w.between(&a, &b, None);
        assert!(x > 0 && i.seconds >= 0.2 && i.cores >= 1);
        // Our own 0.2 s of CPU is not "other"; whatever else ran may be (the machine is
        // shared), but never more than the whole machine.
        let other = i.other_cpu_seconds.unwrap();
        assert!(other <= i.seconds * i.cores as f64 + 0.05, "{i:?}");
        // A child process burning CPU is someone else.
        let mut child = std::process::Command::new("timeout")
            .args(["0.5", "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let a = w.sample().unwrap();
        child.wait().unwrap();
        let b = w.sample().unwrap();
        let i = w.between(&a, &b, None);
        assert!(i.other_cpu_seconds.unwrap() > 0.3 * i.seconds, "{i:?}");
        assert!(!describe(&i).is_empty());
    }
}
