//! Measurements for the benchmark examples: wall time, the client's CPU (getrusage) and the
//! MariaDB server's CPU (its process in /proc, when it runs on this machine), and summaries
//! as median with the fastest and slowest run.

use mysql::prelude::Queryable;

/// One timed run.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub wall: f64,
    pub client_cpu: Option<f64>,
    pub server_cpu: Option<f64>,
}

/// This process's user + system CPU seconds, all threads, plus waited-for children.
pub fn client_cpu() -> f64 {
    let get = |who| {
        // SAFETY: getrusage only writes the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        s(u.ru_utime) + s(u.ru_stime)
    };
    get(libc::RUSAGE_SELF) + get(libc::RUSAGE_CHILDREN)
}

/// The 1, 5 and 15 minute load averages, as the kernel prints them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The MariaDB server process, found as the owner of the socket listening on its port.
pub struct ServerCpu(Option<u32>);

impl ServerCpu {
    pub fn find(conn: &mut mysql::Conn) -> ServerCpu {
        let port: Option<u16> = conn.query_first("SELECT @@port").ok().flatten();
        ServerCpu(port.and_then(listener_pid))
    }

    /// The server's total CPU seconds so far (all threads).
    pub fn seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0?)).ok()?;
        let f: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        Some(ticks / hz)
    }

    pub fn since(&self, before: Option<f64>) -> Option<f64> {
        Some(self.seconds()? - before?)
    }
}

/// The pid holding the TCP socket that listens on `port` (IPv4 or IPv6).
fn listener_pid(port: u16) -> Option<u32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let p = f.get(1).and_then(|a| a.rsplit_once(':'));
            let p = p.and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if p == Some(port) && f.get(3) == Some(&"0A") {
                inodes.extend(f.get(9).map(|i| format!("socket:[{i}]")));
            }
        }
    }
    for proc in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(fds) = std::fs::read_dir(proc.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            if inodes.iter().any(|i| link.as_os_str() == i.as_str()) {
                return proc.file_name().to_str()?.parse().ok();
            }
        }
    }
    None
}

/// Median, fastest and slowest of a method's runs.
pub struct Summary {
    runs: usize,
    wall: [f64; 3],
    client_cpu: Option<f64>,
    server_cpu: Option<f64>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (n > 0).then(|| {
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    })
}

impl Summary {
    pub fn of(samples: &[Sample]) -> Summary {
        let wall: Vec<f64> = samples.iter().map(|s| s.wall).collect();
        let all = |f: fn(&Sample) -> Option<f64>| -> Option<f64> {
            median(samples.iter().map(f).collect::<Option<Vec<f64>>>()?)
        };
        Summary {
            runs: samples.len(),
            wall: [
                median(wall.clone()).unwrap_or(f64::NAN),
                wall.iter().copied().fold(f64::INFINITY, f64::min),
                wall.iter().copied().fold(0.0, f64::max),
            ],
            client_cpu: all(|s| s.client_cpu),
            server_cpu: all(|s| s.server_cpu),
        }
    }

    pub fn print_header() {
        println!(
            "| method | runs | median s | fastest-slowest s | MB/s (median) | server CPU s | client CPU s |"
        );
        println!("|---|---|---|---|---|---|---|");
    }

    pub fn print(&self, name: &str, mb: f64) {
        let opt = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.2}"));
        println!(
            "| {name} | {} | {:.3} | {:.3}-{:.3} | {:.0} | {} | {} |",
            self.runs,
            self.wall[0],
            self.wall[1],
            self.wall[2],
            mb / self.wall[0],
            opt(self.server_cpu),
            opt(self.client_cpu),
        );
    }
}
