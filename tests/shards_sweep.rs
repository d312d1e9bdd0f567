//! A sweep split in three shards that run at once against the real MariaDB and PostgreSQL
//! servers (each shard in its own database/schema and results directory), merged: the merged
//! store must hold exactly the points of the unsharded plan, no duplicates, none missing.
//! The shards get their number three ways: `--shard`, Slurm array variables, and Kubernetes
//! Indexed Job variables.

mod servers_support;

use annbench::backend::{
    mariadb::server::connect as connect_mariadb, postgres::server::connect as connect_postgres,
};
use annbench::runner::{self, SweepOptions};
use annbench::shard::ShardInfo;
use mysql::prelude::Queryable;
use ndarray::s;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NAME: &str = "shards-sift-2k-euclidean";

/// The plan: 2 MariaDB builds and 4 + 4 pgvector builds, 2 query points each.
fn plan_args(data: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--dataset"].map(String::from).to_vec();
    args.push(data.to_str().unwrap().into());
    for a in [
        "--algorithm",
        "mariadb",
        "--algorithm",
        "pgvector",
        "--algorithm",
        "pgvector_halfvec",
        "--build",
        "M=4,8",
        "--build",
        "ef_construction=16,32",
        "--query",
        "ef_search=10,40",
        "--runs",
        "1",
        "--count",
        "10",
        "--label",
        "sharded",
    ] {
        args.push(a.into());
    }
    args
}

/// Every (algorithm, build, query, clients) key of the unsharded plan, from the library.
fn planned(data: &Path) -> BTreeSet<String> {
    let opts = SweepOptions {
        dataset: data.to_str().unwrap().into(),
        algorithms: vec![
            "mariadb".into(),
            "pgvector".into(),
            "pgvector_halfvec".into(),
        ],
        build_overrides: vec!["M=4,8".into(), "ef_construction=16,32".into()],
        query_overrides: vec!["ef_search=10,40".into()],
        ..SweepOptions::default()
    };
    let mut keys = BTreeSet::new();
    for g in runner::plan(&opts, None).unwrap() {
        for b in &g.builds {
            for q in &b.query_args {
                let (b, q) = (
                    serde_json::Value::Object(b.build_args.clone()),
                    serde_json::Value::Object(q.clone()),
                );
                keys.insert(format!("{} {b} {q} x1", g.algorithm));
            }
        }
    }
    keys
}

fn key(p: &annbench::results::PointResult) -> String {
    let (b, q) = (
        serde_json::Value::Object(p.build_args.clone()),
        serde_json::Value::Object(p.query_args.clone()),
    );
    format!("{} {b} {q} x{}", p.algorithm, p.clients)
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn annbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_annbench"));
    for v in [
        "ANNBENCH_SHARD",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_MAX",
        "SLURM_ARRAY_TASK_STEP",
        "JOB_COMPLETION_INDEX",
        "JOB_COMPLETIONS",
        "ANNBENCH_SCHEMA",
    ] {
        c.env_remove(v);
    }
    c
}

/// Drops the shards' databases and schemas, also when the test fails.
struct Schemas(Vec<String>);

impl Drop for Schemas {
    fn drop(&mut self) {
        if let Ok(mut m) = connect_mariadb(&servers_support::mariadb()) {
            for s in &self.0 {
                let _ = m.query_drop(format!("DROP DATABASE IF EXISTS `{s}`"));
            }
        }
        if let Ok(mut p) = connect_postgres(&servers_support::postgres()) {
            for s in &self.0 {
                let _ = p.batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"));
            }
        }
    }
}

#[test]
fn three_shards_at_once_merge_into_exactly_the_plan() {
    // Fail early, with the fix, when no servers are configured.
    servers_support::mariadb();
    servers_support::postgres();
    let dir = tempfile::tempdir().unwrap();
    let full = annbench::dataset::open(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/sift-5k-128-euclidean.hdf5"),
    )
    .unwrap();
    let data = dir.path().join(format!("{NAME}.hdf5"));
    let small = annbench::dataset::Dataset {
        name: NAME.into(),
        metric: full.metric,
        train: full.train.slice(s![..2000, ..]).to_owned(),
        test: full.test.slice(s![..50, ..]).to_owned(),
        ground_truth: None,
    };
    annbench::dataset::save(&small, &data).unwrap();
    let args = plan_args(&data);
    let schemas = Schemas(
        (1..=3)
            .map(|i| format!("annbench_shards_{}_{i}", std::process::id()))
            .collect(),
    );
    let results = |i: usize| dir.path().join(format!("results-{i}"));

    // What each shard will run, without a server.
    let dry = annbench()
        .args(&args)
        .args(["--dry-run", "--shard", "2/3", "--results"])
        .arg(results(2))
        .output()
        .unwrap();
    let dry = ok(&dry, "--dry-run");
    assert!(
        dry.contains("10 build(s), 20 point(s) of mariadb, pgvector, pgvector_halfvec")
            && dry.contains("this is shard 2/3 (from --shard)")
            && dry.contains("<- this shard"),
        "{dry}"
    );

    let mut children = Vec::new();
    for i in 1..=3 {
        let mut c = annbench();
        c.args(&args)
            .args(["--schema", &schemas.0[i - 1], "--results"])
            .arg(results(i));
        match i {
            1 => {
                c.args(["--shard", "1/3"]);
            }
            // Slurm: --array=1-3, this is the task with id 2.
            2 => {
                c.envs([
                    ("SLURM_ARRAY_TASK_ID", "2"),
                    ("SLURM_ARRAY_TASK_MIN", "1"),
                    ("SLURM_ARRAY_TASK_MAX", "3"),
                    ("SLURM_ARRAY_TASK_COUNT", "3"),
                ]);
            }
            _ => {
                c.envs([("JOB_COMPLETION_INDEX", "2"), ("JOB_COMPLETIONS", "3")]);
            }
        }
        children.push(c.spawn().unwrap());
    }
    // Waited for after all three started: they run at once.
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for (i, out) in outputs.iter().enumerate() {
        ok(out, &format!("shard {}", i + 1));
    }

    // Each shard ran a disjoint share and recorded it.
    let plan = planned(&data);
    assert_eq!(plan.len(), 20);
    let mut seen = BTreeSet::new();
    let mut digests = BTreeSet::new();
    for i in 1..=3 {
        let pts = annbench::results::load_points(&results(i), NAME, 10, dir.path()).unwrap();
        assert!(!pts.is_empty(), "shard {i} measured nothing");
        for p in &pts {
            assert!(seen.insert(key(p)), "{} measured twice", key(p));
            let info: &ShardInfo = p.environment.shard.as_ref().expect("shard recorded");
            assert_eq!((info.index, info.count, info.plan_points), (i, 3, 20));
            assert!(!p.environment.hostname.is_empty());
            assert_eq!(p.label.as_deref(), Some("sharded"));
            digests.insert(info.plan.clone());
        }
        let src = &pts[0].environment.shard.as_ref().unwrap().source;
        let expected = ["--shard", "SLURM_ARRAY_TASK_ID=2", "JOB_COMPLETION_INDEX=2"][i - 1];
        assert!(src.starts_with(expected), "{src}");
    }
    assert_eq!(
        digests.len(),
        1,
        "the shards computed different plans: {digests:?}"
    );
    assert_eq!(seen, plan);

    // Merge: the union is the plan, and the merge knows it is complete.
    let merged = dir.path().join("merged");
    let out = annbench()
        .arg("merge")
        .args((1..=3).map(results))
        .arg("--results")
        .arg(&merged)
        .arg("--complete")
        .output()
        .unwrap();
    let text = ok(&out, "merge");
    assert!(
        text.contains("20 point file(s) copied")
            && text.contains("3 of 3 shard(s), 20 of 20 point(s)"),
        "{text}"
    );
    let pts = annbench::results::load_points(&merged, NAME, 10, dir.path()).unwrap();
    let keys: BTreeSet<String> = pts.iter().map(key).collect();
    assert_eq!(pts.len(), keys.len(), "duplicates in the merged store");
    assert_eq!(keys, plan, "the merged store is not the plan");
    let dry = annbench()
        .args(&args)
        .args(["--dry-run", "--results"])
        .arg(&merged)
        .output()
        .unwrap();
    let dry = ok(&dry, "--dry-run on the merged store");
    assert!(dry.contains("0 to measure, 20 stored"), "{dry}");

    // Tables and exports read the merged store.
    let data_dir = dir.path().to_str().unwrap();
    let table = annbench()
        .args([
            "table",
            "--dataset",
            NAME,
            "--recall",
            "0.5",
            "--data-dir",
            data_dir,
            "--results",
        ])
        .arg(&merged)
        .output()
        .unwrap();
    let table = ok(&table, "table");
    assert!(
        table.contains("MariaDB") && table.contains("PGVector"),
        "{table}"
    );
    let export = annbench()
        .args([
            "export",
            "--dataset",
            NAME,
            "--format",
            "json",
            "--data-dir",
            data_dir,
            "--results",
        ])
        .arg(&merged)
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_str(&ok(&export, "export")).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(20));
    drop(schemas);
}

/// The dry run plans what a run will: `auto` grid values resolved against the dataset's rows
/// (read from the file's shape) and repeated client counts dropped; no server is needed.
#[test]
fn the_dry_run_resolves_auto_values_like_a_run() {
    let data =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/sift-5k-128-euclidean.hdf5");
    let dir = tempfile::tempdir().unwrap();
    let dry = annbench()
        .args(["run", "--dataset"])
        .arg(&data)
        .args([
            "--algorithm",
            "pgvector_ivfflat",
            "--build",
            "lists=auto,auto*2",
        ])
        .args(["--query", "probes=1", "--clients", "1,1", "--shard", "1/2"])
        .args(["--dry-run", "--results"])
        .arg(dir.path())
        .output()
        .unwrap();
    let dry = ok(&dry, "--dry-run");
    assert!(
        dry.contains("clients 1: 2 build(s), 2 point(s) of pgvector_ivfflat")
            && !dry.contains("auto")
            && !dry.contains("not found here"),
        "{dry}"
    );
    assert!(files(dir.path()).is_empty());
}

fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}
