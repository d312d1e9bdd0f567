//! Server memory planned before an index build, from rows, dimension and M: whether the
//! server's setting can hold what the build (pgvector) or the queries (MariaDB) need, and the
//! setting to change when it cannot. The per-row sizes follow the servers' own data structures
//! and were checked against the servers (see `docs/scaling.md`).

/// Bytes of one pgvector HNSW graph element held in `maintenance_work_mem` during an in-memory
/// build: the vector datum (8-byte header + `value_bytes` per dimension), 2*M neighbour
/// candidates of 16 bytes on layer 0 plus the expected upper layers (32 * M in all, measured),
/// and about 190 bytes of element, heap TID and allocator overhead. pgvector 0.8 reports the
/// fill point itself ("hnsw graph no longer fits into maintenance_work_mem after N tuples"):
/// at d=128 and 1536 with M = 8, 16, 32 this model is within 2% of 1 MiB / N.
pub fn pgvector_graph_bytes(rows: usize, dimension: usize, value_bytes: usize, m: usize) -> u64 {
    let per_row = 190 + 8 + value_bytes * dimension + 32 * m;
    rows as u64 * per_row as u64
}

/// Bytes of a MariaDB MHNSW index on disk (the hidden `#i#01` InnoDB table annbench compares
/// with `mhnsw_max_cache_size`): one row per node holding the vector as int16 values plus a
/// scale, the layer-0 neighbour list (2*M six-byte row references) and InnoDB's record
/// overhead, whole rows per 16 KiB page, plus its two secondary indexes and extent slack.
/// The in-memory graph is smaller (about 0.8 of this at d=1536, M=16); annbench requires the
/// cache to hold the on-disk size, so that is what is planned.
pub fn mariadb_index_bytes(rows: usize, dimension: usize, m: usize) -> u64 {
    let record = 1 + 5 + (4 + 2 * dimension + 2) + (1 + 6 * 2 * m + 2) + 24;
    let per_page = (16_252 / record).max(1);
    let per_row = 16_384.0 / per_page as f64 * 1.04 + 40.0;
    (rows as f64 * per_row) as u64
}

/// What a build needs against what a server setting allows.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPlan {
    /// Algorithm, e.g. `pgvector`.
    pub algorithm: String,
    /// What needs the memory, e.g. "the HNSW graph of 1000000 x 1536 (M=16) during the build".
    pub what: String,
    /// Estimated bytes.
    pub need_bytes: u64,
    /// The setting that bounds it and its current value in bytes.
    pub setting: String,
    pub setting_bytes: u64,
    /// What happens when it does not fit.
    pub consequence: String,
    /// How to change the setting (SQL, server option or build argument).
    pub fix: String,
    /// True when annbench refuses the built index if it does not fit (MariaDB's cache), so a
    /// clear shortfall is refused before the build instead of after it.
    pub enforced: bool,
}

impl MemoryPlan {
    /// True when the setting holds the estimate.
    pub fn fits(&self) -> bool {
        self.need_bytes <= self.setting_bytes
    }

    /// True when the estimate exceeds the setting by more than the models' error (5%): an
    /// enforced plan this far off is refused before building.
    pub fn clearly_short(&self) -> bool {
        self.need_bytes as f64 > self.setting_bytes as f64 * 1.05
    }

    /// One line: estimate, setting, and when it does not fit, the consequence and the fix.
    pub fn describe(&self) -> String {
        let base = format!(
            "{}: {} needs about {}; {} is {}",
            self.algorithm,
            self.what,
            human_bytes(self.need_bytes),
            self.setting,
            human_bytes(self.setting_bytes)
        );
        if self.fits() {
            format!("{base}: fits")
        } else {
            format!("{base}: {}. {}", self.consequence, self.fix)
        }
    }
}

/// A value for the setting with headroom: the estimate plus 10%, in whole MB (`7066MB`), a
/// notation both servers accept.
pub fn setting_for(need_bytes: u64) -> String {
    let mb = (need_bytes as f64 * 1.1 / (1 << 20) as f64).ceil() as u64;
    format!("{}MB", mb.max(1))
}

/// `6.4 GiB`, `412.0 MiB`, `978.6 KiB`, `900 B` (one writer of sizes for plans and servers).
pub use super::server::human_bytes;

/// Parses a PostgreSQL memory setting as `SHOW` prints it (`64MB`, `6026MB`, `1GB`, `512kB`,
/// `8192` = kB) into bytes.
pub fn parse_pg_memory(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n: u64 = digits.trim().parse().ok()?;
    let unit: u64 = match &t[digits.len()..] {
        "" | "kB" => 1 << 10,
        "B" => 1,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgvector_model_matches_the_servers_fill_points() {
        // pgvector 0.8.0 with maintenance_work_mem = 1MB said "no longer fits ... after N".
        for (d, m, n) in [
            (128, 8, 1080),
            (128, 16, 853),
            (128, 32, 603),
            (1536, 8, 159),
            (1536, 16, 153),
            (1536, 32, 143),
        ] {
            let per_row = pgvector_graph_bytes(1, d, 4, m) as f64;
            let measured = (1 << 20) as f64 / n as f64;
            assert!(
                (per_row - measured).abs() / measured < 0.03,
                "d={d} m={m}: model {per_row} measured {measured}"
            );
        }
    }

    #[test]
    fn mariadb_model_matches_a_measured_index() {
        // clustered-1536-100k-angular, M=16, MariaDB 11.8: 412.0 MiB.
        let est = mariadb_index_bytes(100_000, 1536, 16) as f64 / (1 << 20) as f64;
        assert!((est - 412.0).abs() / 412.0 < 0.05, "{est}");
    }

    #[test]
    fn plans_describe_the_fix_only_when_needed() {
        let mut p = MemoryPlan {
            algorithm: "pgvector".into(),
            what: "the graph".into(),
            need_bytes: 3 << 30,
            setting: "maintenance_work_mem".into(),
            setting_bytes: 2 << 30,
            consequence: "the build spills to disk".into(),
            fix: "SET maintenance_work_mem = '3380MB'".into(),
            enforced: false,
        };
        let text = p.describe();
        assert!(
            !p.fits() && text.contains("3.0 GiB") && text.contains("SET"),
            "{text}"
        );
        p.setting_bytes = 4 << 30;
        assert!(
            p.fits() && p.describe().ends_with("fits"),
            "{}",
            p.describe()
        );
        assert_eq!(setting_for(1 << 30), "1127MB");
    }

    #[test]
    fn postgres_memory_settings_parse() {
        assert_eq!(parse_pg_memory("6026MB"), Some(6026 << 20));
        assert_eq!(parse_pg_memory("1GB"), Some(1 << 30));
        assert_eq!(parse_pg_memory("512kB"), Some(512 << 10));
        assert_eq!(parse_pg_memory("8192"), Some(8192 << 10));
        assert_eq!(parse_pg_memory("lots"), None);
    }
}
