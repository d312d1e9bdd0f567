//! Filtered vector search against the real servers, on 3,000 rows of the bundled SIFT set
//! with a seeded attribute (`annbench::dataset::filters`): what the plans are, that every
//! returned row matches the filter (the runner refuses any that does not), recall against
//! the filtered ground truth, and pgvector's short answers without iterative scans. Every
//! test uses a table of its own. They fail, never skip, without the servers.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::dataset::Dataset;
use annbench::dataset::filters::{self, Filters};
use annbench::params::{Params, parse};
use annbench::results::PointResult;
use annbench::runner::{NoProgress, SweepOptions, SweepSummary, run_sweep_filtered};
use backend_util::{data, name};
use std::time::Duration;

const QUERIES: usize = 40;

fn dataset(test: &str) -> (Dataset, Filters) {
    let (train, test_rows) = data(3000, QUERIES);
    let ds = Dataset {
        name: name(&format!("filtered-{test}")),
        metric: Metric::Euclidean,
        train,
        test: test_rows,
        ground_truth: None,
    };
    let f = filters::generate(&ds, &["0.01".into(), "0.2".into()], 42).unwrap();
    (ds, f)
}

/// Sweep `algorithm` over the grid `yaml` (its `groups:` list) with one quick pass per point.
fn sweep(
    algorithm: &str,
    yaml: &str,
    ds: Dataset,
    f: Option<&Filters>,
) -> annbench::Result<SweepSummary> {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.yml");
    std::fs::write(&grid, format!("algorithm: {algorithm}\ngroups:\n{yaml}")).unwrap();
    let opts = SweepOptions {
        dataset: ds.name.clone(),
        algorithms: vec![algorithm.into()],
        config_files: vec![grid],
        count: 10,
        runs: 1,
        min_time: Duration::ZERO,
        watch_interference: false,
        results_dir: dir.path().join("results"),
        ..SweepOptions::default()
    };
    let backend = BackendOptions::default();
    run_sweep_filtered(ds, f, &opts, &NoProgress, &|a| create(a, &backend))
}

fn point<'a>(s: &'a SweepSummary, query: &str) -> &'a PointResult {
    let want = parse(query).unwrap();
    s.points
        .iter()
        .map(|p| &p.result)
        .find(|p| want.iter().all(|(k, v)| p.query_args.get(k) == Some(v)))
        .unwrap_or_else(|| panic!("no point with {query}"))
}

fn plan(p: &PointResult) -> &str {
    p.metrics.plan.as_deref().unwrap_or_default()
}

/// pgvector's documentation: without iterative scans an HNSW query returns at most
/// ef_search candidates before the filter, so with 1% of rows matching and ef_search = 40
/// it finds about 0.4 matching rows per query; iterative scans go on searching the graph
/// (here up to 20,000 tuples, more than the table) until k rows match.
#[test]
fn pgvector_iterative_scans_recover_what_the_filter_loses() {
    let (ds, f) = dataset("pg-iterative");
    let yaml = "  - build: {M: 16, ef_construction: 64, filter_index: none}\n    query: {ef_search: 40, selectivity: 0.01, iterative_scan: [off, relaxed_order, strict_order]}\n";
    let s = sweep("pgvector", yaml, ds, Some(&f)).unwrap();
    let off = point(&s, "iterative_scan=off");
    assert!(plan(off).starts_with("vector index"), "{}", plan(off));
    assert!(
        off.metrics.short_results >= QUERIES / 2,
        "short {} of {QUERIES}",
        off.metrics.short_results
    );
    assert!(
        off.metrics.mean_rows.unwrap() < 5.0,
        "{:?}",
        off.metrics.mean_rows
    );
    assert!(off.metrics.recall < 0.5, "{}", off.metrics.recall);
    for scan in ["relaxed_order", "strict_order"] {
        let p = point(&s, &format!("iterative_scan={scan}"));
        assert!(plan(p).starts_with("vector index"), "{}", plan(p));
        assert!(
            p.metrics.recall >= 0.8,
            "{scan}: recall {}",
            p.metrics.recall
        );
        assert!(
            p.metrics.short_results <= QUERIES / 10,
            "{scan}: {:?}",
            p.metrics
        );
        assert!(
            p.metrics.mean_rows.unwrap() >= 9.0,
            "{scan}: {:?}",
            p.metrics.mean_rows
        );
    }
}

/// Each plan where it is the only one the server can choose: the vector index alone, the
/// B-tree alone (an exact answer: recall 1), and no index at all (refused).
fn plans_follow_the_indexes(algorithm: &str, build: &str, query: &str) {
    let (ds, f) = dataset(&format!("{algorithm}-plans"));
    let spec = TableSpec {
        dataset: ds.name.clone(),
        metric: ds.metric,
        dimension: 128,
    };
    let mut b: Box<dyn Backend> = create(algorithm, &BackendOptions::default()).unwrap();
    b.load(&spec, ds.train.view()).unwrap();
    b.load_attributes(&f.attr).unwrap();
    assert_eq!(
        b.load_attributes(&f.attr).unwrap(),
        0.0,
        "a filled column is kept"
    );
    let q = ds.test.row(0).to_vec();
    let at = |sel: &str| -> Params { parse(&format!("{query}, selectivity={sel}")).unwrap() };
    let level = f.level("0.01", &ds.name).unwrap();

    b.build(&parse(&format!("{build}, filter_index=none")).unwrap())
        .unwrap();
    let p = b.verify_index_used(&q, 10, &at("0.01")).unwrap();
    assert!(p.starts_with("vector index"), "{algorithm}: {p}");

    b.build(&parse(&format!("{build}, filter_index=btree")).unwrap())
        .unwrap();
    b.drop_index().unwrap();
    let p = b.verify_index_used(&q, 10, &at("0.01")).unwrap();
    assert!(p.starts_with("B-tree + exact sort"), "{algorithm}: {p}");
    // Exact: every query gets exactly the filtered ground truth's ids.
    let mut s = b.searcher().unwrap();
    s.set_query_args(&at("0.01")).unwrap();
    let mut ids = Vec::new();
    for (i, row) in ds.test.outer_iter().enumerate() {
        s.search(row.as_slice().unwrap(), 10, &mut ids).unwrap();
        assert_eq!(ids.len(), 10, "{algorithm}: query {i}");
        for &id in &ids {
            assert!(
                i64::from(f.attr[id as usize]) < level.threshold,
                "{algorithm}: row {id}"
            );
        }
        let truth: Vec<i64> = level
            .truth
            .neighbors
            .row(i)
            .iter()
            .take(10)
            .map(|&j| i64::from(j))
            .collect();
        let d = |id: i64| {
            ds.metric
                .distance(&q_of(&ds, i), ds.train.row(id as usize).as_slice().unwrap())
        };
        let (mine, exact): (Vec<f32>, Vec<f32>) = (
            ids.iter().map(|&x| d(x)).collect(),
            truth.iter().map(|&x| d(x)).collect(),
        );
        for (a, e) in mine.iter().zip(&exact) {
            assert!(
                (a - e).abs() <= 1e-3,
                "{algorithm}: query {i}: {mine:?} vs {exact:?}"
            );
        }
    }
    drop(s);

    b.build(&parse(&format!("{build}, filter_index=none")).unwrap())
        .unwrap();
    b.drop_index().unwrap();
    let e = b
        .verify_index_used(&q, 10, &at("0.2"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not use") || e.contains("neither"),
        "{algorithm}: {e}"
    );
}

fn q_of(ds: &Dataset, i: usize) -> Vec<f32> {
    ds.test.row(i).to_vec()
}

#[test]
fn pgvector_plans_follow_the_indexes() {
    plans_follow_the_indexes("pgvector", "M=8, ef_construction=32", "ef_search=40");
}

#[test]
fn mariadb_plans_follow_the_indexes() {
    plans_follow_the_indexes("mariadb", "M=8", "ef_search=40");
}

/// MariaDB filters the rows its vector index returns and reads on until k match (the index
/// read goes on past ef_search), so it answers in full where pgvector without iterative scans
/// does not.
#[test]
fn mariadb_filtered_sweep_answers_in_full() {
    let (ds, f) = dataset("mariadb-sweep");
    let yaml = "  - build: {M: 16, filter_index: [none, btree]}\n    query: {ef_search: 40, selectivity: [0.01, 0.2]}\n";
    let s = sweep("mariadb", yaml, ds, Some(&f)).unwrap();
    assert_eq!(s.points.len(), 4);
    for sp in &s.points {
        let p = &sp.result;
        let none = p.build_args.get("filter_index").and_then(|v| v.as_str()) == Some("none");
        if none {
            assert!(plan(p).starts_with("vector index"), "{}", plan(p));
        }
        if plan(p).starts_with("B-tree") {
            assert!(p.metrics.recall >= 1.0 - 1e-9, "{:?}", p.metrics);
        }
        assert!(p.metrics.mean_rows.is_some());
    }
}

#[test]
fn filters_need_attributes_and_valid_selectivities() {
    let (ds, f) = dataset("errors");
    let yaml =
        "  - build: {M: 8, ef_construction: 32}\n    query: {ef_search: 40, selectivity: 0.01}\n";
    let e = sweep("pgvector", yaml, ds.clone(), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("annbench datasets filter") && e.contains("0.01"),
        "{e}"
    );
    let other =
        "  - build: {M: 8, ef_construction: 32}\n    query: {ef_search: 40, selectivity: 0.05}\n";
    let e = sweep("pgvector", other, ds.clone(), Some(&f))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no filtered ground truth for selectivity 0.05"),
        "{e}"
    );
    for bad in ["0", "1.5", "-0.1"] {
        let yaml = format!(
            "  - build: {{M: 8, ef_construction: 32}}\n    query: {{selectivity: {bad}}}\n"
        );
        let e = sweep("pgvector", &yaml, ds.clone(), Some(&f))
            .unwrap_err()
            .to_string();
        assert!(e.contains("(0, 1]"), "{bad}: {e}");
    }
    let e = sweep("exact", "  - query: {selectivity: 0.01}\n", ds, Some(&f))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown key 'selectivity'"), "{e}");
}
