use super::*;
use crate::Metric;
use ndarray::Array2;

fn opts(steps: Option<usize>, seed: u64) -> Options {
    Options {
        steps,
        seed,
        ..Options::default()
    }
}

fn count(rb: &Runbook, name: &str) -> usize {
    rb.steps.iter().filter(|s| s.op.name() == name).count()
}

/// Every kind gives a valid runbook that reads back from its YAML, the same for a seed.
#[test]
fn every_kind_is_valid_and_reads_back() {
    for kind in [
        Kind::Simple,
        Kind::SlidingWindow,
        Kind::Expiration,
        Kind::RandomReplace,
    ] {
        for (n, steps) in [(1000, None), (333, Some(7)), (10_000, Some(50))] {
            let steps = if kind == Kind::Simple { None } else { steps };
            for seed in [1, 2] {
                let o = opts(steps, seed);
                let rb = generate(kind, "ds", n, &o).unwrap();
                rb.validate(n).unwrap();
                assert!(rb.search_steps() > 0);
                let back = Runbook::parse(&rb.to_yaml(), "generated", "ds", None).unwrap();
                assert_eq!(back.steps, rb.steps, "{kind:?}");
                assert_eq!(back.max_pts, rb.max_pts);
                let peak = rb.live_counts().unwrap().into_iter().max().unwrap();
                assert_eq!(rb.max_pts, peak, "{kind:?}: max_pts is the true peak");
                assert_eq!(generate(kind, "ds", n, &o).unwrap(), rb, "deterministic");
            }
        }
    }
    let a = generate(Kind::Expiration, "ds", 5000, &opts(None, 1)).unwrap();
    let b = generate(Kind::Expiration, "ds", 5000, &opts(None, 2)).unwrap();
    assert_ne!(a.steps, b.steps, "the seed matters");
}

#[test]
fn simple_is_big_anns_simple_runbook() {
    let rb = generate(Kind::Simple, "random-xs", 10_000, &Options::default()).unwrap();
    let ops: Vec<Operation> = rb.steps.iter().map(|s| s.op.clone()).collect();
    assert_eq!(
        ops,
        [
            Operation::Insert {
                start: 0,
                end: 10_000
            },
            Operation::Search,
            Operation::Delete {
                start: 0,
                end: 5000
            },
            Operation::Search,
            Operation::Insert {
                start: 0,
                end: 5000
            },
            Operation::Search,
        ]
    );
    assert_eq!(rb.max_pts, 10_000);
}

#[test]
fn sliding_window_keeps_the_window() {
    let o = Options {
        steps: Some(10),
        max_pts: Some(300),
        ..Options::default()
    };
    let rb = generate(Kind::SlidingWindow, "ds", 1000, &o).unwrap();
    let counts = rb.live_counts().unwrap();
    assert_eq!(counts.iter().max(), Some(&300));
    assert_eq!(rb.max_pts, 300);
    assert_eq!(count(&rb, "insert"), 10);
    assert_eq!(count(&rb, "delete"), 7);
    assert_eq!(count(&rb, "search"), 10);
    // The oldest chunk goes first.
    assert_eq!(rb.steps[6].op, Operation::Delete { start: 0, end: 100 });
    assert_eq!(
        rb.steps[9].op,
        Operation::Delete {
            start: 100,
            end: 200
        }
    );
}

#[test]
fn expiration_deletes_and_replaces_within_max_pts() {
    let o = Options {
        steps: Some(60),
        max_pts: Some(6000),
        replace: true,
        seed: 9,
        ..Options::default()
    };
    let rb = generate(Kind::Expiration, "ds", 100_000, &o).unwrap();
    assert!(count(&rb, "delete") > 30, "most chunks expire");
    assert!(count(&rb, "replace") > 30);
    assert_eq!(count(&rb, "insert"), 60);
    assert!(rb.rows_needed() <= 6000, "the --max-pts prefix");
    let peak = rb.live_counts().unwrap().into_iter().max().unwrap();
    assert!(peak <= 6000 && rb.max_pts == 6000, "{peak}");
}

#[test]
fn random_replace_replaces_each_chunk_once_with_unused_rows() {
    let rb = generate(Kind::RandomReplace, "ds", 3200, &opts(Some(16), 3)).unwrap();
    assert_eq!(count(&rb, "replace"), 16);
    let mut inserted = std::collections::BTreeSet::new();
    for s in &rb.steps {
        match &s.op {
            Operation::Insert { start, end } => inserted.extend(*start..*end),
            Operation::Replace { ids, .. } => {
                assert!(
                    ids.clone().all(|r| !inserted.contains(&r)),
                    "rows unused before"
                );
                inserted.extend(ids.clone());
            }
            _ => {}
        }
    }
}

#[test]
fn maintenance_every_n_writes() {
    let o = Options {
        steps: Some(10),
        maintenance_every: Some(3),
        maintenance: vec![Maintenance::Vacuum, Maintenance::Optimize],
        ..Options::default()
    };
    let rb = generate(Kind::SlidingWindow, "ds", 1000, &o).unwrap();
    let writes = rb.steps.iter().filter(|s| s.op.writes()).count();
    assert_eq!(count(&rb, "maintenance"), writes / 3);
    let m = rb
        .steps
        .iter()
        .position(|s| s.op.name() == "maintenance")
        .unwrap();
    assert_eq!(
        rb.steps[m].op,
        Operation::Maintenance(vec![Maintenance::Vacuum, Maintenance::Optimize])
    );
    assert_eq!(
        Runbook::parse(&rb.to_yaml(), "g", "ds", None)
            .unwrap()
            .steps,
        rb.steps
    );
    assert_eq!(
        count(
            &generate(Kind::SlidingWindow, "ds", 1000, &opts(Some(10), 1)).unwrap(),
            "maintenance"
        ),
        0
    );
}

#[test]
fn bad_options_are_refused_with_the_fix() {
    let e = |kind, n, o: Options| generate(kind, "ds", n, &o).unwrap_err().to_string();
    let s = e(Kind::SlidingWindow, 10, opts(Some(20), 1));
    assert!(
        s.contains("--steps 20") && s.contains("give --steps 10 or less"),
        "{s}"
    );
    let s = e(Kind::Simple, 10, opts(Some(3), 1));
    assert!(s.contains("--steps does not apply"), "{s}");
    let s = e(
        Kind::Expiration,
        1000,
        Options {
            max_pts: Some(0),
            ..Options::default()
        },
    );
    assert!(s.contains("--max-pts 0"), "{s}");
    // Too few rows blame what makes them few, and give the values that work: --max-pts when
    // it caps them (not the dataset's size, which is ample), ...
    let s = e(
        Kind::Expiration,
        1000,
        Options {
            max_pts: Some(1),
            ..Options::default()
        },
    );
    assert_eq!(
        s,
        "--max-pts 1 is too few for expiration, which uses at least 100 rows: 100 time steps \
         (the default --steps 100) of at least 1 row each; give --max-pts 100 or more"
    );
    let s = e(
        Kind::RandomReplace,
        1000,
        Options {
            max_pts: Some(40),
            ..Options::default()
        },
    );
    assert!(
        s.starts_with("--max-pts 40 is too few for random-replace")
            && s.contains("give --max-pts 128 or more, or --steps 10 or less"),
        "{s}"
    );
    // ... the dataset when it is the short one ...
    let s = e(Kind::Expiration, 50, Options::default());
    assert!(
        s.starts_with("the dataset's 50 train rows are too few for expiration")
            && s.contains("give --steps 50 or less, or a dataset with more train rows"),
        "{s}"
    );
    let s = e(Kind::Simple, 1, Options::default());
    assert!(
        s.contains("the dataset's 1 train rows are too few for simple, which uses at least 2 rows"),
        "{s}"
    );
    // ... and the smallest valid --max-pts works.
    generate(
        Kind::Expiration,
        "ds",
        1000,
        &Options {
            max_pts: Some(100),
            ..Options::default()
        },
    )
    .unwrap();
    let s = e(
        Kind::Simple,
        1000,
        Options {
            replace: true,
            ..Options::default()
        },
    );
    assert!(
        s.contains("--replace applies to the expiration kind"),
        "{s}"
    );
    let s = e(
        Kind::SlidingWindow,
        1000,
        Options {
            steps: Some(10),
            max_pts: Some(50),
            ..Options::default()
        },
    );
    assert!(s.contains("smaller than one chunk"), "{s}");
    let s = e(
        Kind::Simple,
        1000,
        Options {
            maintenance_every: Some(0),
            ..Options::default()
        },
    );
    assert!(s.contains("--maintenance-every 0"), "{s}");
    let s = Kind::parse("zigzag").unwrap_err().to_string();
    assert!(
        s.contains("simple, sliding-window, expiration, clustered, random-replace"),
        "{s}"
    );
}

/// Three separated blobs, shuffled: three clusters, each inserted whole, and the copy's ground
/// truth still names the same vectors.
#[test]
fn clustered_groups_rows_and_remaps_ground_truth() {
    let mut rng = Rng::new(4);
    let centres = [[0.0f32, 0.0], [100.0, 0.0], [0.0, 100.0]];
    let n = 600;
    let blob: Vec<usize> = (0..n).map(|_| rng.below(3)).collect();
    let train = Array2::from_shape_fn((n, 2), |(i, j)| centres[blob[i]][j] + rng.normal() as f32);
    let test = Array2::from_shape_fn((20, 2), |(i, j)| centres[i % 3][j] + rng.normal() as f32);
    let ds =
        crate::dataset::create::from_parts("blobs-2-euclidean", Metric::Euclidean, train, test, 10)
            .unwrap();
    let o = opts(Some(3), 7);
    let (copy, rb) = clustered(&ds, &o).unwrap();
    assert_eq!(copy.name, "blobs-2-euclidean-clustered");
    assert_eq!(rb.entry, copy.name);
    assert_eq!(count(&rb, "insert"), 3);
    assert_eq!(count(&rb, "search"), 3);
    rb.validate(n).unwrap();
    for s in &rb.steps {
        if let Operation::Insert { start, end } = s.op {
            let first = copy.train.row(start);
            let centre = centres
                .iter()
                .position(|c| (c[0] - first[0]).abs() < 10.0 && (c[1] - first[1]).abs() < 10.0)
                .unwrap();
            for r in start..end {
                let row = copy.train.row(r);
                assert!(
                    (row[0] - centres[centre][0]).abs() < 10.0,
                    "one blob per cluster"
                );
                assert!((row[1] - centres[centre][1]).abs() < 10.0);
            }
        }
    }
    crate::dataset::gtcheck::verify(&copy).unwrap();
    crate::dataset::validate::check(&copy).unwrap();
    let (gt, new) = (
        ds.ground_truth.as_ref().unwrap(),
        copy.ground_truth.as_ref().unwrap(),
    );
    assert_eq!(gt.distances, new.distances);
    for (a, b) in gt.neighbors.iter().zip(new.neighbors.iter()) {
        assert_eq!(ds.train.row(*a as usize), copy.train.row(*b as usize));
    }
    assert_eq!(clustered(&ds, &o).unwrap().1, rb, "seeded");
    let e = clustered(
        &ds,
        &Options {
            max_pts: Some(10),
            ..o
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("datasets subset"), "{e}");
}
