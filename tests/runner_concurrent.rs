//! Two sweeps on one server, against the real servers: a second sweep on the same table fails
//! at once instead of dropping the first one's index (which once made the first store
//! full-scan numbers as index points), and a point measured while another session replaced or
//! dropped the index is never stored. The second sweep starts from inside the first one's
//! progress events, so the interleaving is the same on every run.

mod servers_support;

use annbench::backend::table::table_name;
use annbench::dataset::Dataset;
use annbench::runner::{Event, Progress, SweepOptions, SweepSummary, run_sweep_with};
use std::path::Path;
use std::sync::Mutex;

/// 400 rows of the bundled SIFT set (5 queries) under the name `test-<name>`.
fn data(name: &str) -> Dataset {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sift-5k-128-euclidean.hdf5");
    let mut d = annbench::dataset::hdf5_io::open_head(&path, 400, 5).unwrap();
    d.name = format!("test-{name}");
    d
}

fn grid(algorithm: &str) -> &'static str {
    match algorithm {
        "mariadb" => {
            "algorithm: mariadb\ngroups:\n  - build: {M: [4]}\n    query: {ef_search: [10, 40]}\n"
        }
        "pgvector" => {
            "algorithm: pgvector\ngroups:\n  - build: {M: [8], ef_construction: [32]}\n    query: {ef_search: [10, 40]}\n"
        }
        _ => {
            "algorithm: pgvector_halfvec\ngroups:\n  - build: {M: [8], ef_construction: [32]}\n    query: {ef_search: [10, 40]}\n"
        }
    }
}

fn options(dir: &Path, algorithm: &str) -> SweepOptions {
    std::fs::create_dir_all(dir).unwrap();
    let cfg = dir.join("grid.yml");
    std::fs::write(&cfg, grid(algorithm)).unwrap();
    SweepOptions {
        algorithms: vec![algorithm.into()],
        config_files: vec![cfg],
        runs: 1,
        results_dir: dir.join("results"),
        force: true,
        ..SweepOptions::default()
    }
}

fn sweep(
    data: Dataset,
    opts: &SweepOptions,
    progress: &dyn Progress,
) -> annbench::Result<SweepSummary> {
    let backend = annbench::backend::BackendOptions::default();
    run_sweep_with(data, opts, progress, &|name| {
        annbench::backend::create(name, &backend)
    })
}

/// Point files under `dir`.
fn stored(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| {
            if p.is_dir() {
                stored(&p)
            } else {
                usize::from(p.extension().is_some_and(|x| x == "hdf5"))
            }
        })
        .sum()
}

/// Runs `action` once, at the first event `at` matches, on the sweep's own thread.
struct Once<'a> {
    at: fn(&Event<'_>) -> bool,
    action: &'a (dyn Fn() -> String + Sync),
    outcome: Mutex<Option<String>>,
}

impl Progress for Once<'_> {
    fn on_event(&self, e: &Event<'_>) {
        let mut outcome = self.outcome.lock().unwrap();
        if outcome.is_none() && (self.at)(e) {
            *outcome = Some((self.action)());
        }
    }
}

/// The reproduction: `second` starts on the same dataset once `first` reached `at`
/// (pgvector: "built in"; MariaDB: right after the load). It must fail at once naming the
/// lock, store nothing, and the first must store all its points.
fn second_sweep_is_refused(first: &str, second: &str, at: fn(&Event<'_>) -> bool) {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("concurrent-{first}");
    let (o1, o2) = (
        options(&dir.path().join("r1"), first),
        options(&dir.path().join("r2"), second),
    );
    let second_run = || match sweep(data(&name), &o2, &annbench::runner::NoProgress) {
        Ok(s) => format!("second sweep succeeded: {} points", s.measured()),
        Err(e) => e.to_string(),
    };
    let p = Once {
        at,
        action: &second_run,
        outcome: Mutex::new(None),
    };
    let summary = sweep(data(&name), &o1, &p).unwrap();
    let err = p
        .outcome
        .lock()
        .unwrap()
        .take()
        .expect("the second sweep ran");
    assert!(
        err.contains("is in use by another annbench run") && err.contains("session"),
        "{first} then {second}: {err}"
    );
    assert_eq!(summary.measured(), 2, "{first}");
    assert_eq!(stored(&dir.path().join("r1")), 2);
    assert_eq!(stored(&dir.path().join("r2")), 0);
}

#[test]
fn a_second_pgvector_sweep_started_after_the_build_is_refused() {
    second_sweep_is_refused("pgvector", "pgvector", |e| {
        matches!(e, Event::BuildFinished { .. })
    });
}

#[test]
fn a_halfvec_sweep_on_the_shared_float32_table_is_refused_too() {
    second_sweep_is_refused("pgvector_halfvec", "pgvector", |e| {
        matches!(e, Event::BuildFinished { .. })
    });
}

#[test]
fn a_second_mariadb_sweep_started_during_the_first_is_refused() {
    second_sweep_is_refused("mariadb", "mariadb", |e| {
        matches!(e, Event::LoadFinished { .. })
    });
}

/// Another session (no lock: an older annbench, or by hand) replaces or drops the index while
/// the first point is measured: the point is refused, not stored.
fn a_replaced_index_is_never_measured(algorithm: &str, what: &str, sql: &dyn Fn(&str) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("replaced-{algorithm}-{what}");
    let opts = options(dir.path(), algorithm);
    let dataset = data(&name);
    let statement = sql(&dataset.name);
    let foreign = || -> String {
        match algorithm {
            "mariadb" => {
                use mysql::prelude::Queryable;
                let mut c =
                    annbench::backend::mariadb::server::connect(&servers_support::mariadb())
                        .unwrap();
                for s in statement.split(';').filter(|s| !s.trim().is_empty()) {
                    c.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
                }
            }
            _ => {
                let mut c =
                    annbench::backend::postgres::server::connect(&servers_support::postgres())
                        .unwrap();
                c.batch_execute(&statement)
                    .unwrap_or_else(|e| panic!("{statement}: {e}"));
            }
        }
        "done".into()
    };
    let p = Once {
        at: |e| matches!(e, Event::PointStarted { .. }),
        action: &foreign,
        outcome: Mutex::new(None),
    };
    let err = sweep(dataset, &opts, &p).unwrap_err().to_string();
    assert_eq!(p.outcome.lock().unwrap().as_deref(), Some("done"));
    assert!(
        err.contains("changed while this point was measured") && err.contains("not stored"),
        "{algorithm}, {what}: {err}"
    );
    assert_eq!(stored(dir.path()), 0, "{algorithm}, {what}");
}

#[test]
fn a_pgvector_index_rebuilt_or_dropped_by_another_session_is_never_measured() {
    let pg = |dataset: &str, rebuild: bool| {
        let t = table_name("vec", dataset).unwrap();
        let mut sql = format!("DROP INDEX annbench.{t}_vidx;");
        if rebuild {
            sql.push_str(&format!(
                "CREATE INDEX {t}_vidx ON annbench.{t} USING hnsw (v vector_l2_ops) \
                 WITH (m = 4, ef_construction = 8);"
            ));
        }
        sql
    };
    a_replaced_index_is_never_measured("pgvector", "rebuilt", &|d| pg(d, true));
    a_replaced_index_is_never_measured("pgvector", "dropped", &|d| pg(d, false));
}

#[test]
fn a_mariadb_index_rebuilt_or_dropped_by_another_session_is_never_measured() {
    let maria = |dataset: &str, rebuild: bool| {
        let t = table_name("innodb", dataset).unwrap();
        let mut sql = format!("DROP INDEX annbench_vidx ON annbench.{t};");
        if rebuild {
            sql.push_str(&format!(
                "ALTER TABLE annbench.{t} ADD VECTOR INDEX annbench_vidx (v) M=3 \
                 DISTANCE=euclidean;"
            ));
        }
        sql
    };
    a_replaced_index_is_never_measured("mariadb", "rebuilt", &|d| maria(d, true));
    a_replaced_index_is_never_measured("mariadb", "dropped", &|d| maria(d, false));
}
