//! `annbench runbook generate` and `annbench runbook check` through the binary, on a runbook
//! in big-ann-benchmarks' exact layout (`tests/data/runbook-random-xs.yaml`) and on generated
//! ones.

mod files_support;
mod serial;

use annbench::Metric;
use annbench::dataset;
use annbench::stream::{Operation, Runbook};
use files_support::{annbench_data as annbench, ok};
use ndarray::Array2;
use serial::serial;
use std::path::{Path, PathBuf};
use std::process::Output;

const BIG_ANN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/runbook-random-xs.yaml"
);

/// Exit status 1 with one error line, never a panic.
fn fails(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );
    err
}

/// A seeded dataset of `n` train rows in three blobs, written as `{dir}/{name}.hdf5`.
fn make_dataset(dir: &Path, name: &str, n: usize) -> PathBuf {
    let mut rng = dataset::rng::Rng::new(3);
    let centre = |i: usize| (i % 3) as f32 * 50.0;
    let train = Array2::from_shape_fn((n, 8), |(i, _)| centre(i) + rng.normal() as f32);
    let test = Array2::from_shape_fn((10, 8), |(i, _)| centre(i) + rng.normal() as f32);
    let ds = dataset::create::from_parts(name, Metric::Euclidean, train, test, 10).unwrap();
    let path = dir.join(format!("{name}.hdf5"));
    dataset::save(&ds, &path).unwrap();
    path
}

#[test]
fn checks_a_big_ann_runbook_as_it_is() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    make_dataset(dir.path(), "blobs-8-euclidean", 1000);
    let args = [
        "runbook",
        "check",
        BIG_ANN,
        "--dataset",
        "blobs-8-euclidean",
        "--entry",
        "random-xs",
    ];
    let text = ok(&annbench(&args, dir.path()));
    println!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("step") && lines[0].contains("live after"),
        "{text}"
    );
    assert_eq!(lines.len(), 1 + 8 + 1, "{text}");
    let cells = |i: usize| lines[i].split_whitespace().collect::<Vec<_>>();
    assert_eq!(cells(1), ["1", "insert", "rows", "[0,", "600)", "600"]);
    assert_eq!(cells(3), ["3", "delete", "tags", "[0,", "300)", "300"]);
    assert_eq!(
        cells(5),
        [
            "5", "replace", "tags", "[300,", "400)", "<-", "rows", "[900,", "1000)", "300"
        ]
    );
    assert_eq!(cells(8), ["8", "search", "600"]);
    assert!(
        lines[9].contains("8 steps, 4 search steps; peak 600 live of max_pts 600")
            && lines[9].contains("up to 1000 of 1000"),
        "{text}"
    );
    assert!(
        lines.iter().all(|l| l.len() == l.trim_end().len()),
        "{text}"
    );
    // --truth computes the exact ground truth once, then reuses it.
    let mut truth = args.to_vec();
    truth.extend(["--truth", "5"]);
    let text = ok(&annbench(&truth, dir.path()));
    println!("{text}");
    assert!(
        text.contains(
            "ground truth k=5 for 4 search steps x 10 queries: computed the ground truth: no \
             cached"
        ),
        "{text}"
    );
    let cached: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".stream-gt"))
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert!(
        cached[0].starts_with("blobs-8-euclidean.random-xs.k5."),
        "{cached:?}"
    );
    let text = ok(&annbench(&truth, dir.path()));
    assert!(text.contains("reused the cached ground truth"), "{text}");
}

#[test]
fn check_refuses_what_would_not_run() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    make_dataset(dir.path(), "blobs-8-euclidean", 1000);
    make_dataset(dir.path(), "small-8-euclidean", 500);
    // The entry is picked by the dataset's name; another name lists the entries.
    let err = fails(&annbench(
        &[
            "runbook",
            "check",
            BIG_ANN,
            "--dataset",
            "blobs-8-euclidean",
        ],
        dir.path(),
    ));
    assert!(
        err.contains("no entry 'blobs-8-euclidean'")
            && err.contains("'random-xs', 'other-entry'")
            && err.contains("--entry KEY"),
        "{err}"
    );
    // Ids past the train rows are refused before anything runs.
    let err = fails(&annbench(
        &[
            "runbook",
            "check",
            BIG_ANN,
            "--dataset",
            "small-8-euclidean",
            "--entry",
            "random-xs",
        ],
        dir.path(),
    ));
    assert!(
        err.contains(
            "entry 'random-xs', step 1 (insert): train row ids [0, 600) go past the \
                      dataset's 500 train rows"
        ),
        "{err}"
    );
    // A runbook error names the file, the entry, the step and the known operations.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "blobs-8-euclidean:\n  1: {operation: insert, start: 0, end: 10}\n  2: {operation: \
         upsert}\n  3: {operation: search}\n",
    )
    .unwrap();
    let bad_arg = bad.to_str().unwrap();
    let err = fails(&annbench(
        &[
            "runbook",
            "check",
            bad_arg,
            "--dataset",
            "blobs-8-euclidean",
        ],
        dir.path(),
    ));
    assert!(
        err.contains(
            "bad.yaml: entry 'blobs-8-euclidean': step 2: unknown operation 'upsert'; \
                      known: insert, delete, replace, search, maintenance"
        ),
        "{err}"
    );
    let err = fails(&annbench(
        &[
            "runbook",
            "check",
            "no-such.yaml",
            "--dataset",
            "blobs-8-euclidean",
        ],
        dir.path(),
    ));
    assert!(err.contains("no-such.yaml"), "{err}");
}

#[test]
fn generated_runbooks_check_and_are_not_overwritten() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    make_dataset(dir.path(), "blobs-8-euclidean", 1000);
    let out = dir.path().join("sliding.yaml");
    let out_arg = out.to_str().unwrap();
    let generate = [
        "runbook",
        "generate",
        "sliding-window",
        "--dataset",
        "blobs-8-euclidean",
        "--steps",
        "10",
        "--max-pts",
        "300",
        "--maintenance-every",
        "4",
        "--maintenance",
        "vacuum,reindex",
        "--output",
        out_arg,
    ];
    let text = ok(&annbench(&generate, dir.path()));
    assert!(
        text.contains("sliding-window runbook for blobs-8-euclidean")
            && text.contains("max_pts 300"),
        "{text}"
    );
    let rb = Runbook::load(&out, "blobs-8-euclidean", None).unwrap();
    rb.validate(1000).unwrap();
    assert_eq!(rb.search_steps(), 10);
    assert!(
        rb.steps
            .iter()
            .any(|s| matches!(s.op, Operation::Maintenance(_)))
    );
    let err = fails(&annbench(&generate, dir.path()));
    assert!(err.contains("exists: give --force"), "{err}");
    let mut forced = generate.to_vec();
    forced.push("--force");
    ok(&annbench(&forced, dir.path()));
    // A runbook is text: a new name ending .hdf5 is refused, and --force does not write over
    // the dataset.
    let data = dir.path().join("blobs-8-euclidean.hdf5");
    for (path, says) in [
        (dir.path().join("new.hdf5"), "names an HDF5 data file"),
        (data.clone(), "it is an HDF5 file"),
    ] {
        let mut args = forced.clone();
        let i = args.iter().position(|a| *a == out_arg).unwrap();
        args[i] = path.to_str().unwrap();
        let err = fails(&annbench(&args, dir.path()));
        assert!(err.contains(says), "{err}");
    }
    assert!(!dir.path().join("new.hdf5").exists());
    let text = ok(&annbench(
        &[
            "runbook",
            "check",
            out_arg,
            "--dataset",
            "blobs-8-euclidean",
        ],
        dir.path(),
    ));
    assert!(
        text.contains("vacuum, reindex") && text.contains("annbench extension"),
        "{text}"
    );
    // To standard output: big-ann's format, read back by the library.
    let yaml = ok(&annbench(
        &[
            "runbook",
            "generate",
            "expiration",
            "--dataset",
            "blobs-8-euclidean",
            "--steps",
            "20",
            "--replace",
            "--seed",
            "5",
        ],
        dir.path(),
    ));
    let rb = Runbook::parse(&yaml, "stdout", "blobs-8-euclidean", None).unwrap();
    rb.validate(1000).unwrap();
    assert!(
        rb.steps
            .iter()
            .any(|s| matches!(s.op, Operation::Replace { .. }))
    );
    let err = fails(&annbench(
        &[
            "runbook",
            "generate",
            "simple",
            "--dataset",
            "blobs-8-euclidean",
            "--steps",
            "3",
        ],
        dir.path(),
    ));
    assert!(err.contains("--steps does not apply"), "{err}");
}

#[test]
fn clustered_writes_the_permuted_dataset_and_its_runbook() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    make_dataset(dir.path(), "blobs-8-euclidean", 900);
    let out = dir.path().join("clustered.yaml");
    let out_arg = out.to_str().unwrap();
    let args = [
        "runbook",
        "generate",
        "clustered",
        "--dataset",
        "blobs-8-euclidean",
        "--steps",
        "3",
        "--output",
        out_arg,
    ];
    let text = ok(&annbench(&args, dir.path()));
    assert!(
        text.contains("blobs-8-euclidean-clustered: 900 train rows"),
        "{text}"
    );
    let copy = dataset::open(&dir.path().join("blobs-8-euclidean-clustered.hdf5")).unwrap();
    assert_eq!(copy.train.nrows(), 900);
    let rb = Runbook::load(&out, "blobs-8-euclidean-clustered", None).unwrap();
    let inserts = rb
        .steps
        .iter()
        .filter(|s| matches!(s.op, Operation::Insert { .. }))
        .count();
    assert_eq!(inserts, 3, "three blobs, three clusters");
    let text = ok(&annbench(
        &[
            "runbook",
            "check",
            out_arg,
            "--dataset",
            "blobs-8-euclidean-clustered",
        ],
        dir.path(),
    ));
    assert!(text.contains("6 steps, 3 search steps; peak 900"), "{text}");
    // The dataset file is not replaced without --force either.
    std::fs::remove_file(&out).unwrap();
    let err = fails(&annbench(&args, dir.path()));
    assert!(
        err.contains("blobs-8-euclidean-clustered.hdf5 exists"),
        "{err}"
    );
}

/// Every number of a runbook is bounded where it is read, in words naming the file, the entry,
/// the step, the key and the range (a huge one once failed the whole file with serde's
/// `invalid type: integer ... as u128`; `rate: 1e-300` passed the check and then panicked
/// `stream`); with --algorithm, a maintenance step the database has not is refused too.
#[test]
fn check_bounds_every_number_and_the_maintenance_of_the_algorithm() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    make_dataset(dir.path(), "blobs-8-euclidean", 1000);
    let file = dir.path().join("rb.yaml");
    let check = |steps: &str, extra: &[&str]| {
        std::fs::write(
            &file,
            format!("blobs-8-euclidean:\n  1: {{operation: insert, start: 0, end: 100}}\n{steps}"),
        )
        .unwrap();
        let mut args = vec![
            "runbook",
            "check",
            file.to_str().unwrap(),
            "--dataset",
            "blobs-8-euclidean",
        ];
        args.extend_from_slice(extra);
        annbench(&args, dir.path())
    };
    for (steps, want) in [
        (
            "  2: {operation: insert, start: 100, end: 200, rate: 1e-300}\n  3: {operation: \
             search}\n",
            "rb.yaml: entry 'blobs-8-euclidean': step 2: rate 1e-300 is out of range: give rows \
             per second from 0.001 to 1000000000",
        ),
        (
            "  2: {operation: insert, start: 100, end: 200, batch: 99999999999999999999999}\n  \
             3: {operation: search}\n",
            "rb.yaml: entry 'blobs-8-euclidean': step 2: batch 99999999999999999999999 is out \
             of range: give an integer from 1 to 1000000",
        ),
        (
            "  2: {operation: insert, start: 100, end: 200, batch: 1e40}\n  3: {operation: \
             search}\n",
            "step 2: batch 1e40 is not a whole number: give an integer from 1 to 1000000",
        ),
        (
            "  340282366920938463463374607431768211455: {operation: search}\n",
            "rb.yaml: entry 'blobs-8-euclidean': step key \
             340282366920938463463374607431768211455 is not a step number: steps are numbered \
             1, 2, 3, ... up to 100000",
        ),
        (
            "  2: {operation: insert, start: 100, end: 200, during: {clients: 100000}}\n  3: \
             {operation: search}\n",
            "step 2: during clients 100000: give 1 to 1024 concurrent clients",
        ),
    ] {
        let err = fails(&check(steps, &[]));
        assert!(
            err.contains(want) && !err.contains("invalid type"),
            "{steps}: {err}"
        );
    }
    // The algorithm's database runs the maintenance step, or the check says which it runs.
    let maintenance = "  2: {operation: maintenance, what: vacuum}\n  3: {operation: search}\n";
    let err = fails(&check(maintenance, &["--algorithm", "mariadb"]));
    assert!(
        err.contains(
            "rb.yaml: entry 'blobs-8-euclidean', step 2 (maintenance): mariadb has no 'vacuum' \
             maintenance operation: it runs optimize, reindex"
        ),
        "{err}"
    );
    let text = ok(&check(maintenance, &["--algorithm", "pgvector"]));
    assert!(text.contains("pgvector runs every one of them"), "{text}");
    let text = ok(&check(maintenance, &[]));
    assert!(
        text.contains("give --algorithm NAME to check them"),
        "{text}"
    );
    let optimize = "  2: {operation: maintenance, what: [reindex, optimize]}\n  3: {operation: \
                    search}\n";
    let err = fails(&check(optimize, &["--algorithm", "pgvector_halfvec"]));
    assert!(
        err.contains("step 2 (maintenance): pgvector_halfvec has no 'optimize'"),
        "{err}"
    );
}

/// A generator's error blames the option that is wrong and gives the value that works:
/// `--max-pts 1` once blamed the dataset's size; the clustered copy's file once suggested
/// "another --output", the runbook's path, which does not move it.
#[test]
fn generators_blame_the_input_that_is_wrong() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    make_dataset(dir.path(), "blobs-8-euclidean", 1000);
    let generate = |args: &[&str]| {
        let mut all = vec!["runbook", "generate"];
        all.extend_from_slice(args);
        annbench(&all, dir.path())
    };
    let err = fails(&generate(&[
        "expiration",
        "--dataset",
        "blobs-8-euclidean",
        "--max-pts",
        "1",
    ]));
    assert!(
        err.contains("--max-pts 1 is too few for expiration")
            && err.contains("give --max-pts 100 or more")
            && !err.contains("the dataset"),
        "{err}"
    );
    ok(&generate(&[
        "expiration",
        "--dataset",
        "blobs-8-euclidean",
        "--max-pts",
        "100",
    ]));
    let clustered = [
        "clustered",
        "--dataset",
        "blobs-8-euclidean",
        "--steps",
        "3",
    ];
    ok(&generate(&clustered));
    let err = fails(&generate(&clustered));
    assert!(
        err.contains("blobs-8-euclidean-clustered.hdf5 exists: give --force to replace it")
            && err.contains("--data-dir")
            && !err.contains("--output"),
        "{err}"
    );
}

/// `stream` times its passes with `run`'s flags, `--max-time` included (it once refused it),
/// bounded as `run` bounds them, before anything else.
#[test]
fn stream_takes_run_s_pass_flags() {
    let dir = tempfile::tempdir().unwrap();
    let args = |max_time: &'static str| {
        [
            "stream",
            "--dataset",
            "none",
            "--runbook",
            "none.yaml",
            "--algorithm",
            "pgvector",
            "--max-time",
            max_time,
        ]
    };
    for cmd in ["run", "stream"] {
        let help = ok(&annbench(&[cmd, "--help"], dir.path()));
        assert!(help.contains("--max-time <DURATION>"), "{cmd}: {help}");
    }
    let err = fails(&annbench(&args("25h"), dir.path()));
    assert!(err.contains("--max-time must be at most 24h"), "{err}");
    let err = fails(&annbench(&args("10s"), dir.path()));
    assert!(!err.contains("--max-time"), "{err}");
}
