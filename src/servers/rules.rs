//! Which server settings distort a benchmark, and what to set instead. Pure functions.

use super::human_bytes;
use crate::connect::Version;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// The MariaDB settings the rules look at (bytes for sizes).
#[derive(Debug, Clone, Default)]
pub struct MariaDbSettings {
    pub mhnsw_max_cache_size: u64,
    pub innodb_buffer_pool_size: u64,
    pub local_infile: bool,
}

/// The PostgreSQL + pgvector settings the rules look at (bytes for sizes).
#[derive(Debug, Clone)]
pub struct PostgresSettings {
    pub shared_buffers: u64,
    pub maintenance_work_mem: u64,
    pub max_parallel_maintenance_workers: u64,
    pub pgvector: Version,
}

/// A quarter of RAM, in 256 MiB steps, at least 256 MiB: the size suggested for each cache.
pub fn recommended(ram: u64) -> u64 {
    ((ram / 4) / (256 * MIB)).max(1) * 256 * MIB
}

/// Below this a setting is reported: 1 GiB, or the recommendation on small machines.
fn floor(ram: u64) -> u64 {
    recommended(ram).min(GIB)
}

/// `4294967296` -> `4G`, `805306368` -> `768M` (my.cnf / PostgreSQL style without the B).
fn short(bytes: u64) -> String {
    if bytes % GIB == 0 {
        format!("{}G", bytes / GIB)
    } else {
        format!("{}M", bytes / MIB)
    }
}

/// Warnings for a MariaDB server on a machine with `ram` bytes.
pub fn mariadb_warnings(s: &MariaDbSettings, ram: u64) -> Vec<String> {
    let rec = recommended(ram);
    let mut w = Vec::new();
    if s.mhnsw_max_cache_size < floor(ram) {
        let default = if s.mhnsw_max_cache_size == 16 * MIB {
            " (the default)"
        } else {
            ""
        };
        w.push(format!(
            "mhnsw_max_cache_size is {}{default}: a vector index larger than this is evicted and \
             reloaded during queries, which distorts QPS. Set it above the largest index, e.g. \
             SET GLOBAL mhnsw_max_cache_size = {rec}; (mhnsw_max_cache_size={} in my.cnf)",
            human_bytes(s.mhnsw_max_cache_size),
            short(rec)
        ));
    }
    if s.innodb_buffer_pool_size < floor(ram) {
        w.push(format!(
            "innodb_buffer_pool_size is {}: table reads hit the disk. Set it to about a quarter \
             of RAM, e.g. SET GLOBAL innodb_buffer_pool_size = {rec}; (innodb_buffer_pool_size={} \
             in my.cnf)",
            human_bytes(s.innodb_buffer_pool_size),
            short(rec)
        ));
    }
    if !s.local_infile {
        w.push(
            "local_infile is OFF: the fast bulk load (LOAD DATA LOCAL INFILE) is refused. \
             Set it: SET GLOBAL local_infile = ON; (local_infile=ON in my.cnf)"
                .to_string(),
        );
    }
    w
}

/// Warnings for a PostgreSQL + pgvector server on a machine with `ram` bytes.
pub fn postgres_warnings(s: &PostgresSettings, ram: u64) -> Vec<String> {
    let rec = short(recommended(ram));
    let mut w = Vec::new();
    if s.maintenance_work_mem < floor(ram) {
        w.push(format!(
            "maintenance_work_mem is {}: an HNSW graph that does not fit is built much more \
             slowly, which inflates the build time. Set ALTER SYSTEM SET maintenance_work_mem = \
             '{rec}B'; SELECT pg_reload_conf();",
            human_bytes(s.maintenance_work_mem)
        ));
    }
    if s.shared_buffers < floor(ram) {
        w.push(format!(
            "shared_buffers is {}: index and table pages are read through the OS cache. Set \
             ALTER SYSTEM SET shared_buffers = '{rec}B'; and restart PostgreSQL",
            human_bytes(s.shared_buffers)
        ));
    }
    let v = &s.pgvector;
    let affected = v.at_least((0, 6)) && (v.major, v.minor, v.patch) <= (0, 8, 1);
    if affected && s.max_parallel_maintenance_workers > 0 {
        w.push(format!(
            "max_parallel_maintenance_workers is {} with pgvector {v}: parallel HNSW builds in \
             pgvector 0.6.0-0.8.1 have a memory-safety bug (CVE-2026-3172). Set ALTER SYSTEM SET \
             max_parallel_maintenance_workers = 0; SELECT pg_reload_conf(); or upgrade pgvector",
            s.max_parallel_maintenance_workers
        ));
    }
    if !v.at_least(crate::connect::MIN_PGVECTOR_HALFVEC) {
        w.push(format!(
            "pgvector {v} has no halfvec: pgvector_halfvec and pgvector_halfvec_column need pgvector 0.7 or \
             newer (ALTER EXTENSION vector UPDATE after upgrading the package)"
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn recommends_a_quarter_of_ram() {
        assert_eq!(recommended(16 * GIB), 4 * GIB);
        assert_eq!(recommended(GIB / 2), 256 * MIB);
        assert_eq!(short(recommended(3 * GIB)), "768M");
    }

    #[test]
    fn mariadb_defaults_are_flagged_with_values_to_set() {
        let s = MariaDbSettings {
            mhnsw_max_cache_size: 16 * MIB,
            innodb_buffer_pool_size: 128 * MIB,
            local_infile: false,
        };
        let w = mariadb_warnings(&s, 16 * GIB);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("16.0 MiB (the default)") && w[0].contains("= 4294967296"));
        assert!(w[1].contains("innodb_buffer_pool_size=4G"));
        let good = MariaDbSettings {
            mhnsw_max_cache_size: 4 * GIB,
            innodb_buffer_pool_size: 4 * GIB,
            local_infile: true,
        };
        assert!(mariadb_warnings(&good, 16 * GIB).is_empty());
    }

    #[test]
    fn pgvector_parallel_build_bug_range() {
        let mut s = PostgresSettings {
            shared_buffers: 4 * GIB,
            maintenance_work_mem: 4 * GIB,
            max_parallel_maintenance_workers: 2,
            pgvector: v("0.8.1"),
        };
        let cve = |s: &PostgresSettings| {
            postgres_warnings(s, 16 * GIB)
                .iter()
                .any(|w| w.contains("CVE-2026-3172"))
        };
        assert!(cve(&s));
        s.pgvector = v("0.8.2");
        assert!(!cve(&s));
        s.pgvector = v("0.5.1");
        assert!(!cve(&s));
        s.pgvector = v("0.6.0");
        assert!(cve(&s));
        s.max_parallel_maintenance_workers = 0;
        assert!(!cve(&s));
        s.pgvector = v("0.8.0");
        assert!(postgres_warnings(&s, 16 * GIB).is_empty());
    }

    #[test]
    fn small_memory_and_old_pgvector() {
        let s = PostgresSettings {
            shared_buffers: 128 * MIB,
            maintenance_work_mem: 64 * MIB,
            max_parallel_maintenance_workers: 0,
            pgvector: v("0.6.2"),
        };
        let w = postgres_warnings(&s, 16 * GIB);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("maintenance_work_mem = '4GB'"), "{}", w[0]);
        assert!(w[2].contains("no halfvec"));
    }
}
