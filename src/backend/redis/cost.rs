//! Redis' sources of server cost: the `redis-server` process (every thread: the command
//! thread, I/O threads and the threads `VSIM` searches on; read from `/proc` by the runner)
//! and `INFO commandstats` (calls and microseconds of `VSIM`, any server). Redis keeps no
//! per-connection statistics, so the counters are the whole server's: a sweep alone on the
//! server measures its own queries.

use super::decl;
use crate::backend::cost::{CostSources, ProcessHint, StatementCounters, Statements};
use redis::Connection;

/// The whole server process: `VSIM` runs each search on a thread of its own, so no single
/// thread or pid serves one connection (a per-connection pid would count the server once per
/// client).
pub const PROCESS: ProcessHint = ProcessHint::WholeServer(decl::PROCESS_NAMES);

/// Name of the source, recorded with results.
pub const SOURCE: &str = "INFO commandstats (cmdstat_vsim, server-wide)";

/// `calls` and `usec` of `cmdstat_vsim` in an INFO commandstats reply (zero before the
/// first VSIM).
pub fn parse_vsim(text: &str) -> StatementCounters {
    let line = text
        .lines()
        .find_map(|l| {
            let l = l.trim();
            // Module commands are listed upper-case (`cmdstat_VSIM`).
            l.get(..13)
                .filter(|head| head.eq_ignore_ascii_case("cmdstat_vsim:"))
                .map(|_| &l[13..])
        })
        .unwrap_or_default();
    let field = |name: &str| {
        line.split(',')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    StatementCounters {
        calls: field("calls") as u64,
        exec_seconds: field("usec") / 1e6,
        buffer_hits: None,
        buffer_reads: None,
    }
}

/// The server's VSIM counters, read on `conn`.
pub fn statements(conn: &mut Connection) -> Statements {
    match redis::cmd("INFO").arg("commandstats").query::<String>(conn) {
        Ok(text) => Statements::Counters {
            counters: parse_vsim(&text),
            source: SOURCE,
        },
        Err(e) => Statements::unavailable(format!(
            "INFO commandstats could not be read: {} (the user needs +info)",
            e.detail().unwrap_or("error")
        )),
    }
}

/// What `servers check` shows about the server-cost sources.
pub fn sources() -> CostSources {
    vec![
        (
            SOURCE.to_string(),
            "available (server execution time per query, all clients of the server)".to_string(),
        ),
        (
            "/proc".to_string(),
            crate::backend::cost::describe_local(PROCESS),
        ),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn vsim_counters_are_parsed() {
        let text = "# Commandstats\r\ncmdstat_vadd:calls=3,usec=30,usec_per_call=10.00\r\n\
                    cmdstat_VSIM:calls=12,usec=2400,usec_per_call=200.00,rejected_calls=0\r\n";
        let c = super::parse_vsim(text);
        assert_eq!(c.calls, 12);
        assert!((c.exec_seconds - 0.0024).abs() < 1e-12);
        assert_eq!(super::parse_vsim("# Commandstats\r\n").calls, 0);
    }
}
