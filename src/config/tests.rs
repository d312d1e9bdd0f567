use super::*;
use serde_json::json;

fn ints(p: &Params, key: &str) -> i64 {
    crate::params::get_int(p, key).unwrap()
}

#[test]
fn shipped_grids_match_the_published_comparisons() {
    let none = Overrides::default();
    let m = load_grid("mariadb", None, &none, None).unwrap();
    let ms: Vec<i64> = m.builds.iter().map(|b| ints(&b.build_args, "M")).collect();
    assert_eq!(ms, [4, 5, 6, 8, 12, 16, 24, 32, 48]);
    let efs: Vec<i64> = m.builds[0]
        .query_args
        .iter()
        .map(|q| ints(q, "ef_search"))
        .collect();
    assert_eq!(efs, [10, 20, 30, 40, 80, 120, 200, 400, 800]);

    for algo in ["pgvector", "pgvector_halfvec", "pgvector_halfvec_column"] {
        let g = load_grid(algo, None, &none, None).unwrap();
        // 2 + 3 + 6 + 7 + 7 builds, in config order (ef_construction outer, M inner).
        assert_eq!(g.builds.len(), 25, "{algo}");
        let first: Vec<(i64, i64)> = g.builds[..3]
            .iter()
            .map(|b| {
                (
                    ints(&b.build_args, "ef_construction"),
                    ints(&b.build_args, "M"),
                )
            })
            .collect();
        assert_eq!(first, [(32, 8), (32, 16), (64, 8)]);
        let last = &g.builds[24].build_args;
        assert_eq!((ints(last, "ef_construction"), ints(last, "M")), (256, 64));
        assert_eq!(g.builds[0].query_args.len(), 8);
    }
    let e = load_grid("exact", None, &none, None).unwrap();
    assert_eq!(e.builds.len(), 1);
    assert_eq!(e.builds[0].query_args, vec![Params::new()]);
}

#[test]
fn build_args_expand_to_a_product_with_the_last_key_fastest() {
    let text = "algorithm: mariadb\ngroups:\n  - build: {M: [4, 8], engine: [InnoDB, myisam]}\n    query: {ef_search: 10}\n";
    let g = parse_grid(text, "t.yml", &Overrides::default(), None).unwrap();
    let got: Vec<Value> = g
        .builds
        .iter()
        .map(|b| Value::Object(b.build_args.clone()))
        .collect();
    assert_eq!(
        got,
        [
            json!({"M": 4, "engine": "InnoDB"}),
            json!({"M": 4, "engine": "MyISAM"}),
            json!({"M": 8, "engine": "InnoDB"}),
            json!({"M": 8, "engine": "MyISAM"}),
        ]
    );
}

#[test]
fn a_bad_key_names_the_file_the_key_and_the_allowed_keys() {
    let text = "algorithm: mariadb\ngroups:\n  - build: {m_max: [4]}\n";
    let err = parse_grid(text, "my.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("my.yml") && err.contains("m_max") && err.contains("M, engine"),
        "{err}"
    );

    let text = "algorithm: mariadb\ngroupz: []\n";
    let err = parse_grid(text, "my.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("my.yml") && err.contains("groupz") && err.contains("groups"),
        "{err}"
    );
}

#[test]
fn an_invalid_point_is_refused_before_anything_runs() {
    let text = "algorithm: pgvector\ngroups:\n  - build: {ef_construction: 32, M: [8, 32]}\n";
    let err = parse_grid(text, "p.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ef_construction=32, m=32") && err.contains("2*M (64)"),
        "{err}"
    );

    let text = "algorithm: mariadb\ngroups:\n  - build: {M: [2]}\n";
    let err = parse_grid(text, "m.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("M: 2 is out of range 3..=200"), "{err}");
    let text = "algorithm: pgvector\ngroups:\n  - query: {ef_search: [1001]}\n";
    assert!(parse_grid(text, "p.yml", &Overrides::default(), None).is_err());
}

#[test]
fn overrides_replace_values_in_every_group_and_unknown_keys_fail() {
    let over = Overrides {
        build: vec![parse_override("m=16,32").unwrap()],
        query: vec![parse_override("ef_search=10,20").unwrap()],
    };
    let g = load_grid("pgvector", None, &over, None).unwrap();
    let pairs: Vec<(i64, i64)> = g
        .builds
        .iter()
        .map(|b| {
            (
                ints(&b.build_args, "ef_construction"),
                ints(&b.build_args, "M"),
            )
        })
        .collect();
    // ef_construction 32 with M=32 became invalid: dropped with a warning, not an error.
    assert_eq!(
        pairs,
        [
            (32, 16),
            (64, 16),
            (64, 32),
            (96, 16),
            (96, 32),
            (192, 16),
            (256, 16),
            (192, 32),
            (256, 32)
        ]
    );
    assert!(
        g.warnings[0].contains("ef_construction=32"),
        "{:?}",
        g.warnings
    );
    assert_eq!(g.builds[0].query_args.len(), 2);

    let bad = Overrides {
        build: vec![parse_override("ef_construction=64").unwrap()],
        ..Default::default()
    };
    let err = load_grid("mariadb", None, &bad, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--build ef_construction") && err.contains("M, engine"),
        "{err}"
    );
    assert!(parse_override("M").is_err() && parse_override("M=").is_err());
}

#[test]
fn duplicate_builds_across_groups_run_once_with_the_union_of_queries() {
    let text = "algorithm: mariadb\ngroups:\n  - {build: {M: 8}, query: {ef_search: [10, 20]}}\n  - {build: {M: 8}, query: {ef_search: [20, 40]}}\n";
    let g = parse_grid(text, "d.yml", &Overrides::default(), None).unwrap();
    assert_eq!(g.builds.len(), 1);
    let efs: Vec<i64> = g.builds[0]
        .query_args
        .iter()
        .map(|q| ints(q, "ef_search"))
        .collect();
    assert_eq!(efs, [10, 20, 40]);
}

#[test]
fn a_config_for_another_algorithm_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.yml");
    std::fs::write(&path, "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n").unwrap();
    let err = load_grid("pgvector", Some(&path), &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("for algorithm 'mariadb'"), "{err}");
    assert_eq!(
        load_grid("mariadb", Some(&path), &Overrides::default(), None)
            .unwrap()
            .builds
            .len(),
        1
    );
}

#[test]
fn every_registered_grid_parses_and_names_its_algorithm() {
    for a in crate::registry::ALGORITHMS {
        for rows in [None, Some(1_000), Some(2_000_000)] {
            let g = load_grid(a.name, None, &Overrides::default(), rows)
                .unwrap_or_else(|e| panic!("{}: {e}", a.name));
            assert_eq!(g.algorithm, a.name);
            assert!(!g.builds.is_empty(), "{}", a.name);
        }
    }
}

#[test]
fn auto_values_resolve_against_the_rows_and_merge_when_equal() {
    let g = load_grid(
        "pgvector_ivfflat",
        None,
        &Overrides::default(),
        Some(200_000),
    )
    .unwrap();
    let lists: Vec<i64> = g
        .builds
        .iter()
        .map(|b| ints(&b.build_args, "lists"))
        .collect();
    assert_eq!(lists, [100, 200, 400]);
    // 1500 rows: auto/2 and auto are both 1 list, one build.
    let g = load_grid("pgvector_ivfflat", None, &Overrides::default(), Some(1500)).unwrap();
    let lists: Vec<i64> = g
        .builds
        .iter()
        .map(|b| ints(&b.build_args, "lists"))
        .collect();
    assert_eq!(lists, [1, 2]);
    let g = load_grid("pgvector_ivfflat", None, &Overrides::default(), None).unwrap();
    assert_eq!(g.builds[0].build_args["lists"], json!("auto/2"));
    let text = "algorithm: pgvector_ivfflat\ngroups:\n  - build: {lists: [auto-1]}\n";
    let err = parse_grid(text, "i.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("auto*N"), "{err}");
}

#[test]
fn query_rules_drop_points_an_override_makes_invalid() {
    let over = Overrides {
        query: vec![parse_override("ef_search=100").unwrap()],
        ..Default::default()
    };
    let g = load_grid("pgvector_binary", None, &over, None).unwrap();
    let cands: Vec<i64> = g.builds[0]
        .query_args
        .iter()
        .map(|q| ints(q, "candidates"))
        .collect();
    assert_eq!(cands, [10, 20, 40, 80]);
    assert!(
        g.warnings[0].contains("ef_search (100) must be at least candidates (160)"),
        "{:?}",
        g.warnings
    );
    let text = "algorithm: pgvector_binary\ngroups:\n  - build: {M: 8, ef_construction: 32}\n    query: {candidates: 50, ef_search: 40}\n";
    let err = parse_grid(text, "b.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("candidates=50, ef_search=40"), "{err}");
}

#[test]
fn a_grid_takes_every_key_the_backend_takes() {
    // Config validation and the backends read one declaration: a key the backend accepts is
    // never refused by the config (maintenance_work_mem once was).
    let text = "algorithm: pgvector\ngroups:\n  - build: {M: 8, ef_construction: 32, maintenance_work_mem: 64MB}\n";
    let g = parse_grid(text, "m.yml", &Overrides::default(), None).unwrap();
    let point = &g.builds[0].build_args;
    let algo = crate::registry::algorithm("pgvector").unwrap();
    assert!(algo.build_args(point, 100).is_ok(), "{point:?}");
    let text = "algorithm: pgvector\ngroups:\n  - build: {M: 8, ef_construction: 32, maintenance_work_mem: lots}\n";
    let err = parse_grid(text, "m.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory size"), "{err}");
}

#[test]
fn repeated_values_are_one_point() {
    let text = "algorithm: mariadb\ngroups:\n  - {build: {M: [8, 8, 16], engine: [innodb, InnoDB]}, query: {ef_search: [10, 10, 20]}}\n";
    let g = parse_grid(text, "d.yml", &Overrides::default(), None).unwrap();
    assert_eq!(g.builds.len(), 2);
    assert_eq!(g.builds[0].query_args.len(), 2);
    let over = Overrides {
        query: vec![parse_override("ef_search=40,40,10,40").unwrap()],
        ..Default::default()
    };
    let g = parse_grid(text, "d.yml", &over, None).unwrap();
    let efs: Vec<i64> = g.builds[0]
        .query_args
        .iter()
        .map(|q| ints(q, "ef_search"))
        .collect();
    assert_eq!(efs, [40, 10]);
}

#[test]
fn a_byte_order_mark_is_allowed() {
    let text = "\u{feff}algorithm: mariadb\ngroups:\n  - build: {M: 8}\n";
    let g = parse_grid(text, "bom.yml", &Overrides::default(), None).unwrap();
    assert_eq!(g.builds.len(), 1);
    assert_eq!(config_algorithm(text, "bom.yml").unwrap(), "mariadb");
}

#[test]
fn filter_kinds_expand_and_the_default_kind_is_not_stored() {
    let text = "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n    query: {selectivity: [0.01, 1%], filter: [range, Label]}\n";
    let g = parse_grid(text, "t.yml", &Overrides::default(), None).unwrap();
    let got: Vec<Value> = g.builds[0]
        .query_args
        .iter()
        .map(|q| Value::Object(q.clone()))
        .collect();
    assert_eq!(
        got,
        [
            json!({"selectivity": "0.01"}),
            json!({"selectivity": "0.01", "filter": "label"}),
        ]
    );
    let alone = "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n    query: {ef_search: 10, filter: label}\n";
    let e = parse_grid(alone, "t.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("filter (\"label\") needs selectivity"), "{e}");
    let bad = "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n    query: {selectivity: 0.1, filter: tag}\n";
    let e = parse_grid(bad, "t.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not one of range, label"), "{e}");
}

#[test]
fn duplicate_keys_are_refused_with_the_file_key_and_line() {
    let text = "algorithm: pgvector\ngroups:\n  - name: a\n    build: {M: [8], ef_construction: [32]}\n    query:\n      ef_search: [10]\n      ef_search: [20]\n";
    let err = parse_grid(text, "my.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("my.yml: groups[0].query: duplicate entry with key \"ef_search\" (line 7)"),
        "{err}"
    );
    let text = "algorithm: pgvector\ngroups:\n  - name: a\n    build: {M: [8], M: [16], ef_construction: [32]}\n    query: {ef_search: [10]}\n";
    let err = parse_grid(text, "g.yml", &Overrides::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"M\"") && err.contains("line 4"), "{err}");
    let text = "algorithm: pgvector\nalgorithm: mariadb\ngroups: []\n";
    let err = config_algorithm(text, "t.yml").unwrap_err().to_string();
    assert!(
        err.contains("\"algorithm\"") && err.contains("line 2"),
        "{err}"
    );
    // Anchors and aliases are one key each.
    let text = "algorithm: pgvector\ngroups:\n  - name: a\n    build: {M: [8], ef_construction: [32]}\n    query: &q {ef_search: [10]}\n  - name: b\n    build: {M: [16], ef_construction: [32]}\n    query: *q\n";
    parse_grid(text, "t.yml", &Overrides::default(), None).unwrap();
}
