use super::*;
use crate::dataset::rng::Rng;
use crate::stream::step::Step;
use ndarray::Array2;

fn dataset(metric: Metric, train: Array2<f32>, test: Array2<f32>) -> Dataset {
    Dataset {
        name: "t".into(),
        metric,
        train,
        test,
        ground_truth: None,
    }
}

/// Small integer coordinates: many exact ties and duplicate rows.
fn tied(rng: &mut Rng, n: usize, q: usize) -> (Array2<f32>, Array2<f32>) {
    let mut m = |rows| Array2::from_shape_simple_fn((rows, 4), || rng.below(4) as f32);
    (m(n), m(q))
}

/// Gaussian rows where every odd row is a near-duplicate of the row before it.
fn near_duplicates(rng: &mut Rng, n: usize, q: usize) -> (Array2<f32>, Array2<f32>) {
    let mut train = Array2::from_shape_simple_fn((n, 6), || rng.normal() as f32);
    for i in (1..n).step_by(2) {
        for j in 0..6 {
            train[[i, j]] = train[[i - 1, j]] + 1e-6 * rng.normal() as f32;
        }
    }
    let test = Array2::from_shape_simple_fn((q, 6), || rng.normal() as f32);
    (train, test)
}

fn step(number: u32, op: Operation) -> Step {
    Step::new(number, op)
}

/// A random valid runbook over `n` rows: inserts of free tags, deletes and replaces of live
/// runs (replaces often to the next row, a near-duplicate), searches, and now and then a
/// delete of nearly everything (the live set below D and below k).
fn random_runbook(rng: &mut Rng, n: usize, steps: usize) -> Runbook {
    let mut live = LiveSet::new();
    let mut out: Vec<Step> = Vec::new();
    while out.len() < steps {
        let number = out.len() as u32 + 1;
        let choice = rng.below(10);
        let op = if live.is_empty() || choice < 3 {
            let s = rng.below(n);
            let mut e = s;
            let want = 1 + rng.below(60);
            while e < n && e - s < want && !live.is_live(e) {
                e += 1;
            }
            if e == s {
                continue;
            }
            Operation::Insert { start: s, end: e }
        } else if choice < 5 {
            Operation::Search
        } else {
            let spans: Vec<_> = live.spans().collect();
            let (tags, _) = &spans[rng.below(spans.len())];
            let a = tags.start + rng.below(tags.len());
            let big = rng.below(8) == 0;
            let len = if big {
                tags.end - a
            } else {
                1 + rng.below(tags.end - a)
            };
            let b = a + len;
            if choice < 8 {
                Operation::Delete { start: a, end: b }
            } else {
                let r = if rng.below(2) == 0 {
                    (a + 1).min(n - len)
                } else {
                    rng.below(n - len + 1)
                };
                Operation::Replace {
                    tags: a..b,
                    ids: r..r + len,
                }
            }
        };
        let s = step(number, op);
        live.apply(&s).unwrap();
        // Now and then most of the live set goes.
        out.push(s);
        if rng.below(12) == 0 && live.len() > 3 {
            // One or two rows stay: fewer than k (a search over none is refused).
            let keep = 1 + rng.below(2);
            let doomed: Vec<_> = live.spans().collect();
            let mut left = live.len() - keep;
            for (tags, _) in doomed {
                if left == 0 {
                    break;
                }
                let end = tags.start + tags.len().min(left);
                left -= end - tags.start;
                let d = step(
                    out.len() as u32 + 1,
                    Operation::Delete {
                        start: tags.start,
                        end,
                    },
                );
                live.apply(&d).unwrap();
                out.push(d);
            }
            out.push(step(out.len() as u32 + 1, Operation::Search));
        }
    }
    if !live.is_empty() {
        out.push(step(out.len() as u32 + 1, Operation::Search));
    }
    Runbook {
        entry: "t".into(),
        source: "test".into(),
        max_pts: n,
        steps: out,
    }
}

/// The brute-force truth in f64: every live row's key, sorted by (key, tag).
fn brute_force(ds: &Dataset, rb: &Runbook, k: usize) -> Vec<StepTruth> {
    let mut live = LiveSet::new();
    let mut out = Vec::new();
    for s in &rb.steps {
        live.apply(s).unwrap();
        if s.op != Operation::Search {
            continue;
        }
        let q = ds.test.nrows();
        let mut ids = Array2::from_elem((q, k), -1i64);
        let mut distances = Array2::from_elem((q, k), f32::INFINITY);
        for i in 0..q {
            let query: Vec<f64> = ds.test.row(i).iter().map(|&v| f64::from(v)).collect();
            let mut all: Vec<(f64, usize)> = live
                .entries()
                .map(|(tag, row)| {
                    let x: Vec<f64> = ds.train.row(row).iter().map(|&v| f64::from(v)).collect();
                    let key = match ds.metric {
                        Metric::Euclidean => {
                            query.iter().zip(&x).map(|(a, b)| (a - b) * (a - b)).sum()
                        }
                        Metric::Angular => {
                            let (mut dot, mut na, mut nb) = (0.0, 0.0, 0.0);
                            for (a, b) in query.iter().zip(&x) {
                                dot += a * b;
                                na += a * a;
                                nb += b * b;
                            }
                            if na == 0.0 || nb == 0.0 {
                                1.0
                            } else {
                                1.0 - dot / (f64::sqrt(na) * f64::sqrt(nb))
                            }
                        }
                    };
                    (key, tag)
                })
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (j, &(key, tag)) in all.iter().take(k).enumerate() {
                ids[[i, j]] = tag as i64;
                distances[[i, j]] = match ds.metric {
                    Metric::Euclidean => key.sqrt() as f32,
                    Metric::Angular => key as f32,
                };
            }
        }
        out.push(StepTruth {
            step: s.number,
            ids,
            distances,
        });
    }
    out
}

fn check(ds: &Dataset, rb: &Runbook, k: usize, depth: usize) -> usize {
    rb.validate(ds.train.nrows()).unwrap();
    let got = compute(ds, rb, k, depth).unwrap();
    let want = brute_force(ds, rb, k);
    assert_eq!(got.steps.len(), want.len());
    for (g, w) in got.steps.iter().zip(&want) {
        assert_eq!(g.step, w.step);
        for i in 0..ds.test.nrows() {
            assert_eq!(
                g.ids.row(i),
                w.ids.row(i),
                "step {}, query {i} (k {k}, depth {depth})",
                g.step
            );
            assert_eq!(g.distances.row(i), w.distances.row(i), "step {}", g.step);
        }
    }
    got.rescans
}

/// Incremental truth equals a full f64 recompute over the live set, on tied and
/// near-duplicate data, for depths at k, a little above and the default.
#[test]
fn incremental_truth_equals_brute_force() {
    let mut rng = Rng::new(42);
    let mut rescans = 0;
    for round in 0..12 {
        let metric = if round % 2 == 0 {
            Metric::Euclidean
        } else {
            Metric::Angular
        };
        let (train, test) = if round % 3 == 0 {
            tied(&mut rng, 300, 12)
        } else {
            near_duplicates(&mut rng, 300, 12)
        };
        let ds = dataset(metric, train, test);
        let rb = random_runbook(&mut rng, 300, 40);
        for (k, depth) in [(5, 5), (5, 8), (10, default_depth(10)), (1, 3)] {
            rescans += check(&ds, &rb, k, depth);
        }
    }
    assert!(rescans > 0, "the runbooks shrink lists below k");
}

/// Inserts larger than the depth cut the new rows' lists; the merge stays exact.
#[test]
fn large_inserts_and_deletes_stay_exact() {
    let mut rng = Rng::new(7);
    let (train, test) = tied(&mut rng, 2000, 16);
    let ds = dataset(Metric::Euclidean, train, test);
    let ops = [
        Operation::Insert { start: 0, end: 800 },
        Operation::Search,
        Operation::Insert {
            start: 800,
            end: 2000,
        },
        Operation::Search,
        Operation::Delete {
            start: 0,
            end: 1500,
        },
        Operation::Search,
        Operation::Replace {
            tags: 1500..1600,
            ids: 0..100,
        },
        Operation::Search,
        Operation::Delete {
            start: 1600,
            end: 1997,
        },
        Operation::Search,
    ];
    let rb = Runbook {
        entry: "t".into(),
        source: "test".into(),
        max_pts: 2000,
        steps: ops
            .into_iter()
            .enumerate()
            .map(|(i, op)| step(i as u32 + 1, op))
            .collect(),
    };
    let rescans = check(&ds, &rb, 10, 20);
    assert!(rescans > 0);
    // The last search has 103 live tags and every query a full row.
    let got = compute(&ds, &rb, 10, 20).unwrap();
    assert!(got.steps[4].ids.iter().all(|&t| t >= 0));
}

#[test]
fn bad_depth_and_k_are_refused() {
    let mut rng = Rng::new(1);
    let (train, test) = tied(&mut rng, 50, 2);
    let ds = dataset(Metric::Euclidean, train, test);
    let rb = random_runbook(&mut rng, 50, 5);
    let e = compute(&ds, &rb, 10, 5).unwrap_err().to_string();
    assert!(e.contains("depth 5 is below k = 10"), "{e}");
    assert!(compute(&ds, &rb, 0, 5).is_err());
    let small = dataset(
        Metric::Euclidean,
        ds.train.slice(s![..10, ..]).to_owned(),
        ds.test,
    );
    let mut big = rb.clone();
    big.steps
        .insert(0, step(0, Operation::Insert { start: 40, end: 50 }));
    for (i, s) in big.steps.iter_mut().enumerate() {
        s.number = i as u32 + 1;
    }
    assert!(
        compute(&small, &big, 1, 5).is_err(),
        "ids past the train rows"
    );
}

mod cache {
    use super::*;
    use crate::stream::truth_cache::{CacheStatus, load_or_compute};

    fn setup() -> (tempfile::TempDir, std::path::PathBuf, Dataset, Runbook) {
        let mut rng = Rng::new(5);
        let (train, test) = near_duplicates(&mut rng, 200, 8);
        let ds = dataset(Metric::Euclidean, train, test);
        let rb = random_runbook(&mut rng, 200, 20);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.hdf5");
        (dir, path, ds, rb)
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    use std::path::Path;

    #[test]
    fn reused_when_the_key_matches() {
        let (dir, path, ds, rb) = setup();
        let first = load_or_compute(&ds, &path, &rb, 5, 8, &|_| true).unwrap();
        assert!(
            matches!(&first.status, CacheStatus::Computed { why } if why.contains("no cached")),
            "{:?}",
            first.status
        );
        let name = files(dir.path());
        assert_eq!(name.len(), 1);
        assert!(
            name[0].starts_with("t.t.k5.") && name[0].ends_with(".stream-gt"),
            "{name:?}"
        );
        let again = load_or_compute(&ds, &path, &rb, 5, 8, &|_| true).unwrap();
        assert_eq!(again.status, CacheStatus::Reused);
        assert_eq!(again.steps, first.steps);
        assert_eq!(again.rescans, first.rescans);
        // Rates and concurrency do not change the truth: still reused.
        let mut paced = rb.clone();
        for s in paced.steps.iter_mut().filter(|s| s.op.writes()) {
            s.rate = Some(100.0);
            s.during = Some(crate::stream::During { clients: 2 });
        }
        assert_eq!(
            load_or_compute(&ds, &path, &paced, 5, 8, &|_| true)
                .unwrap()
                .status,
            CacheStatus::Reused
        );
        // Another k is another file; both stay.
        load_or_compute(&ds, &path, &rb, 3, 8, &|_| true).unwrap();
        assert_eq!(files(dir.path()).len(), 2);
    }

    #[test]
    fn recomputed_when_data_runbook_or_file_change() {
        let (dir, path, ds, rb) = setup();
        load_or_compute(&ds, &path, &rb, 5, 8, &|_| true).unwrap();
        let old = files(dir.path());
        // Another runbook: recomputed, the old file replaced.
        let mut other = rb.clone();
        let next = other.steps.len() as u32 + 1;
        other.steps.push(step(next, Operation::Search));
        let t = load_or_compute(&ds, &path, &other, 5, 8, &|_| true).unwrap();
        match &t.status {
            CacheStatus::Computed { why } => {
                assert!(why.contains(&old[0]) && why.contains("other data"), "{why}")
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(t.steps, compute(&ds, &other, 5, 8).unwrap().steps);
        let now = files(dir.path());
        assert_eq!(now.len(), 1);
        assert_ne!(now, old);
        // Other vectors: recomputed.
        let mut moved = ds.clone();
        moved.train[[3, 1]] += 0.5;
        assert!(matches!(
            load_or_compute(&moved, &path, &other, 5, 8, &|_| true)
                .unwrap()
                .status,
            CacheStatus::Computed { .. }
        ));
        // A damaged file: recomputed, not trusted.
        let file = dir.path().join(&files(dir.path())[0]);
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() - 40;
        bytes[at] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        match load_or_compute(&moved, &path, &other, 5, 8, &|_| true)
            .unwrap()
            .status
        {
            CacheStatus::Computed { why } => assert!(why.contains("checksum"), "{why}"),
            s => panic!("{s:?}"),
        }
        std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        match load_or_compute(&moved, &path, &other, 5, 8, &|_| true)
            .unwrap()
            .status
        {
            CacheStatus::Computed { why } => assert!(why.contains("bytes where"), "{why}"),
            s => panic!("{s:?}"),
        }
        assert_eq!(
            load_or_compute(&moved, &path, &other, 5, 8, &|_| true)
                .unwrap()
                .status,
            CacheStatus::Reused
        );
    }

    #[test]
    fn a_stop_ends_the_computation_and_caches_nothing() {
        let (dir, path, ds, rb) = setup();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let e = load_or_compute(&ds, &path, &rb, 5, 8, &|_| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            false
        })
        .err()
        .map(|e| e.to_string());
        assert!(calls.into_inner() >= 1, "the computation reported");
        assert_eq!(e, Some(crate::Error::Interrupted.to_string()));
        assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    }

    #[test]
    fn the_reported_work_covers_the_inserted_rows() {
        let (_dir, _path, ds, rb) = setup();
        let done = std::sync::atomic::AtomicU64::new(0);
        let t = crate::stream::truth::compute_observed(&ds, &rb, 5, 8, &|n| {
            done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            true
        })
        .unwrap();
        let total = crate::stream::truth::work_units(&rb, ds.test.nrows());
        // Rescans of short lists come on top of the inserts' pairs.
        assert!(done.into_inner() >= total, "{total}");
        assert!(total > 0 && !t.steps.is_empty());
    }
}
