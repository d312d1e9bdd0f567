use super::*;

/// big-ann-benchmarks' layout as Python's yaml.dump writes it: keys sorted inside steps,
/// `max_pts` and `gt_url` after the steps, steps out of order.
const BIG_ANN: &str = "\
random-xs:
  3:
    end: 5000
    operation: delete
    start: 0
  1:
    end: 10000
    operation: insert
    start: 0
  2:
    operation: search
  4:
    operation: search
  5:
    ids_end: 9100
    ids_start: 9000
    operation: replace
    tags_end: 5100
    tags_start: 5000
  6: {operation: search}
  max_pts: 10000
  gt_url: none
other-set:
  max_pts: 5
  1: {operation: insert, start: 0, end: 5}
  2: {operation: search}
";

fn parse(text: &str) -> Result<Runbook> {
    Runbook::parse(text, "rb.yaml", "random-xs", None)
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

/// An entry with `steps` (flow mappings, one a line) under `max_pts: 100`.
fn entry(steps: &[&str]) -> String {
    let mut s = String::from("random-xs:\n  max_pts: 100\n");
    for (i, st) in steps.iter().enumerate() {
        s.push_str(&format!("  {}: {st}\n", i + 1));
    }
    s
}

#[test]
fn reads_big_ann_files_as_they_are() {
    let rb = parse(BIG_ANN).unwrap();
    assert_eq!(rb.entry, "random-xs");
    assert_eq!(rb.max_pts, 10000);
    let numbers: Vec<u32> = rb.steps.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        rb.steps[0].op,
        Operation::Insert {
            start: 0,
            end: 10000
        }
    );
    assert_eq!(
        rb.steps[2].op,
        Operation::Delete {
            start: 0,
            end: 5000
        }
    );
    assert_eq!(
        rb.steps[4].op,
        Operation::Replace {
            tags: 5000..5100,
            ids: 9000..9100
        }
    );
    assert_eq!(rb.search_steps(), 3);
    assert_eq!(
        rb.live_counts().unwrap(),
        [10000, 10000, 5000, 5000, 5000, 5000]
    );
    rb.validate(10000).unwrap();
    let other = Runbook::parse(
        BIG_ANN,
        "rb.yaml",
        "random-xs-20-euclidean",
        Some("other-set"),
    )
    .unwrap();
    assert_eq!(other.steps.len(), 2);
}

#[test]
fn an_unknown_entry_lists_the_entries() {
    let e = Runbook::parse(BIG_ANN, "rb.yaml", "glove-25-angular", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no entry 'glove-25-angular'")
            && e.contains("'random-xs', 'other-set'")
            && e.contains("--entry KEY"),
        "{e}"
    );
    let e = Runbook::parse(BIG_ANN, "rb.yaml", "x", Some("nope"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no entry 'nope'"), "{e}");
}

#[test]
fn yaml_round_trips_and_fingerprints_ignore_the_layout() {
    let mut rb = parse(BIG_ANN).unwrap();
    rb.steps[0].rate = Some(2500.5);
    rb.steps[0].batch = Some(100);
    rb.steps[2].during = Some(During { clients: 4 });
    rb.steps.push(Step::new(
        7,
        Operation::Maintenance(vec![Maintenance::Vacuum, Maintenance::Reindex]),
    ));
    let text = rb.to_yaml();
    let back = Runbook::parse(&text, "rb.yaml", "random-xs", None).unwrap();
    assert_eq!(back, rb, "{text}");
    assert_eq!(back.fingerprint(), rb.fingerprint());
    // The file's layout does not count; the content does.
    let plain = parse(BIG_ANN).unwrap();
    let reordered = parse(&plain.to_yaml()).unwrap();
    assert_eq!(plain.fingerprint(), reordered.fingerprint());
    assert_ne!(plain.fingerprint(), rb.fingerprint());
    // The ground truth's fingerprint ignores rates, concurrency and maintenance.
    assert_eq!(plain.data_fingerprint(), rb.data_fingerprint());
    let mut moved = plain.clone();
    moved.steps[2].op = Operation::Delete {
        start: 0,
        end: 4000,
    };
    assert_ne!(moved.data_fingerprint(), plain.data_fingerprint());
    // Entry names that need quotes are quoted.
    let mut odd = plain;
    odd.entry = "random-plus(40000,4000,20): x".into();
    let back = Runbook::parse(&odd.to_yaml(), "rb.yaml", &odd.entry, None).unwrap();
    assert_eq!(back.entry, odd.entry);
}

#[test]
fn max_pts_defaults_to_the_peak() {
    let rb = parse(
        "random-xs:\n  1: {operation: insert, start: 0, end: 30}\n  2: {operation: delete, start: 0, \
         end: 10}\n  3: {operation: insert, start: 30, end: 35}\n  4: {operation: search}\n",
    )
    .unwrap();
    assert_eq!(rb.max_pts, 30);
}

#[test]
fn steps_as_lists_of_one_key_mappings_are_read() {
    let rb = parse(
        "random-xs:\n  1: [{operation: insert}, {start: 0}, {end: 326}]\n  2: [{operation: \
         search}]\n",
    )
    .unwrap();
    assert_eq!(rb.steps[0].op, Operation::Insert { start: 0, end: 326 });
}

#[test]
fn extensions_are_read_and_checked() {
    let rb = parse(&entry(&[
        "{operation: insert, start: 0, end: 10, rate: 500, batch: 20, during: {clients: 2}}",
        "{operation: maintenance, what: vacuum}",
        "{operation: maintenance, what: [reindex, optimize]}",
        "{operation: search}",
    ]))
    .unwrap();
    assert_eq!(rb.steps[0].rate, Some(500.0));
    assert_eq!(rb.steps[0].batch, Some(20));
    assert_eq!(rb.steps[0].during, Some(During { clients: 2 }));
    assert_eq!(
        rb.steps[1].op,
        Operation::Maintenance(vec![Maintenance::Vacuum])
    );
    assert_eq!(
        rb.steps[2].op,
        Operation::Maintenance(vec![Maintenance::Reindex, Maintenance::Optimize])
    );
    for (step, want) in [
        (
            "{operation: insert, start: 0, end: 10, rate: 0}",
            "rate 0 is out of range: give rows per second from 0.001 to 1000000000",
        ),
        (
            "{operation: insert, start: 0, end: 10, rate: -5}",
            "rate -5 is out of range",
        ),
        (
            "{operation: insert, start: 0, end: 10, rate: fast}",
            "rate 'fast' is not a number",
        ),
        (
            "{operation: insert, start: 0, end: 10, batch: 0}",
            "batch 0 is out of range: give an integer from 1 to 1000000 rows per statement",
        ),
        (
            "{operation: insert, start: 0, end: 10, batch: -1}",
            "batch -1 is out of range",
        ),
        (
            "{operation: insert, start: 0, end: 10, batch: 2.5}",
            "batch 2.5 is not a whole",
        ),
        (
            "{operation: insert, start: 0, end: 10, during: {clients: 0}}",
            "during clients 0: give 1 to 1024 concurrent clients",
        ),
        (
            "{operation: insert, start: 0, end: 10, during: {threads: 2}}",
            "unknown key 'threads' in during",
        ),
        (
            "{operation: insert, start: 0, end: 10, during: 4}",
            "during 4 is not a mapping",
        ),
        (
            "{operation: search, rate: 10}",
            "unknown key 'rate' for operation search",
        ),
        (
            "{operation: maintenance, what: defrag}",
            "unknown maintenance 'defrag'; known: vacuum, reindex, optimize",
        ),
        ("{operation: maintenance, what: []}", "empty list"),
        ("{operation: maintenance}", "maintenance needs 'what'"),
        (
            "{operation: maintenance, what: vacuum, start: 0}",
            "unknown key 'start' for operation maintenance; its keys: what",
        ),
    ] {
        let e = err(&entry(&[
            "{operation: insert, start: 50, end: 60}",
            step,
            "{operation: search}",
        ]));
        assert!(
            e.starts_with("rb.yaml: entry 'random-xs': step 2: ") && e.contains(want),
            "{step}: {e}"
        );
    }
}

/// Every number is bounded where it is read, so what `runbook check` accepts `stream` runs:
/// a number out of range (however large: beyond 64 bits YAML integers once failed the whole
/// file with serde's `invalid type: integer ... as u128`) names the file, the entry, the step,
/// the key and the range.
#[test]
fn numbers_are_bounded_where_they_are_read() {
    let huge = "99999999999999999999999";
    for (step, want) in [
        (
            "{operation: insert, start: 0, end: 10, rate: 1e-300}".to_string(),
            "rate 1e-300 is out of range: give rows per second from 0.001 to 1000000000"
                .to_string(),
        ),
        (
            "{operation: insert, start: 0, end: 10, rate: 1e300}".into(),
            "rate 1e300 is out of range".into(),
        ),
        (
            "{operation: insert, start: 0, end: 10, rate: .nan}".into(),
            "rate .nan is out of range".into(),
        ),
        (
            "{operation: insert, start: 0, end: 10, rate: .inf}".into(),
            "rate .inf is out of range".into(),
        ),
        (
            format!("{{operation: insert, start: 0, end: 10, rate: {huge}}}"),
            format!("rate {huge} is out of range"),
        ),
        (
            format!("{{operation: insert, start: 0, end: 10, batch: {huge}}}"),
            format!("batch {huge} is out of range: give an integer from 1 to 1000000 rows"),
        ),
        (
            "{operation: insert, start: 0, end: 10, batch: 1e40}".into(),
            "batch 1e40 is not a whole number: give an integer from 1 to 1000000".into(),
        ),
        (
            "{operation: insert, start: 0, end: 10, batch: 1000001}".into(),
            "batch 1000001 is out of range".into(),
        ),
        (
            "{operation: insert, start: 0, end: 10, during: {clients: 100000}}".into(),
            "during clients 100000: give 1 to 1024 concurrent clients (each is a connection \
             and a thread of this process)"
                .into(),
        ),
        (
            format!("{{operation: insert, start: 0, end: 10, during: {{clients: {huge}}}}}"),
            format!("during clients {huge}: give 1 to 1024"),
        ),
        (
            format!("{{operation: insert, start: 0, end: {huge}}}"),
            format!("end {huge} is out of range: give an integer from 0 to 2147483648"),
        ),
        (
            "{operation: delete, start: 0, end: 2147483649}".into(),
            "end 2147483649 is out of range: give an integer from 0 to 2147483648 (tags and \
             train row ids are the stream tables' 32-bit ids)"
                .into(),
        ),
        (
            format!("{{operation: delete, start: -{huge}, end: 5}}"),
            format!("start -{huge} is negative"),
        ),
    ] {
        let e = err(&entry(&[
            "{operation: insert, start: 50, end: 60}",
            &step,
            "{operation: search}",
        ]));
        assert!(
            e.starts_with("rb.yaml: entry 'random-xs': step 2: ") && e.contains(&want),
            "{step}: {e}"
        );
        assert!(!e.contains("invalid type"), "{e}");
    }
    for key in [
        "340282366920938463463374607431768211456",
        huge,
        "100001",
        "-3",
        "1.5",
    ] {
        let e = err(&format!(
            "random-xs:\n  1: {{operation: search}}\n  {key}: {{operation: search}}\n"
        ));
        let shown = if key.len() > 30 {
            "3.402823669209385e38"
        } else {
            key
        };
        assert!(
            e.starts_with(&format!(
                "rb.yaml: entry 'random-xs': step key {shown} is not a step number: steps are \
                 numbered 1, 2, 3, ... up to 100000"
            )),
            "{key}: {e}"
        );
    }
    for (max_pts, want) in [
        (
            "1e40",
            "max_pts 1e40 is not a whole number: give an integer from 0 to 2147483648",
        ),
        (
            huge,
            "is out of range: give an integer from 0 to 2147483648",
        ),
    ] {
        let e = err(&format!(
            "random-xs:\n  max_pts: {max_pts}\n  1: {{operation: search}}\n"
        ));
        assert!(e.contains(want) && e.contains("entry 'random-xs'"), "{e}");
    }
    // The edges are accepted, and every accepted rate paces any step without overflow.
    let rb = parse(&entry(&[
        "{operation: insert, start: 0, end: 10, rate: 0.001, batch: 1000000, during: {clients: \
         1024}}",
        "{operation: insert, start: 10, end: 20, rate: 1000000000}",
        "{operation: search}",
    ]))
    .unwrap();
    assert_eq!(rb.steps[0].rate, Some(0.001));
    assert_eq!(rb.steps[1].rate, Some(1e9));
    let slowest = MAX_TAGS as f64 / RATES.start();
    assert!(std::time::Duration::try_from_secs_f64(slowest).is_ok());
    assert_eq!(MAX_TAGS - 1, i32::MAX as usize, "the stream tables' ids");
}

/// Every structural error names the file, the entry, the step and what to write instead.
#[test]
fn structural_errors_name_the_place_and_the_fix() {
    for (steps, want) in [
        (
            &["{operation: upsert, start: 0, end: 5}"][..],
            "step 1: unknown operation 'upsert'; known: insert, delete, replace, search, maintenance",
        ),
        (&["{start: 0, end: 5}"], "step 1: has no operation"),
        (
            &["{operation: insert, start: 0, end: 5, stop: 3}"],
            "unknown key 'stop' for operation insert; its keys: start, end, rate, batch, during",
        ),
        (
            &["{operation: insert, start: 0}"],
            "step 1: insert needs 'end'",
        ),
        (
            &["{operation: insert, start: -3, end: 5}"],
            "start -3 is negative",
        ),
        (
            &["{operation: insert, start: 9, end: 5}"],
            "reversed range: start 9 is after end 5",
        ),
        (
            &["{operation: insert, start: 5, end: 5}"],
            "empty range [5, 5)",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: replace, tags_start: 0, tags_end: 5, ids_start: 20, ids_end: 22}",
            ],
            "step 2: replace ranges differ in length",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: replace, tags_start: 0, tags_end: 5, ids_start: 20}",
            ],
            "replace needs 'ids_end'",
        ),
        (&["search"], "step 1: is 'search', not a mapping"),
        (
            &["{operation: insert, start: 0, end: 10}"],
            "has no search step",
        ),
    ] {
        let e = err(&entry(steps));
        assert!(
            e.starts_with("rb.yaml: entry 'random-xs': ") && e.contains(want),
            "{steps:?}: {e}"
        );
    }
    for (text, want) in [
        (
            "random-xs:\n  1: {operation: search}\n  3: {operation: search}\n",
            "step 2 is missing (the next step is 3)",
        ),
        (
            "random-xs:\n  2: {operation: search}\n",
            "step 1 is missing",
        ),
        (
            "random-xs:\n  0: {operation: search}\n",
            "step key 0 is not a step number: steps are numbered 1, 2, 3, ... up to 100000",
        ),
        (
            "random-xs:\n  '1': {operation: search}\n",
            "step key '1' is a string",
        ),
        (
            "random-xs:\n  max_pts: 10\n  steps: []\n",
            "unknown key 'steps'; an entry holds max_pts, gt_url",
        ),
        (
            "random-xs:\n  max_pts: -1\n  1: {operation: search}\n",
            "max_pts -1 is negative: give an integer from 0 to 2147483648",
        ),
        ("random-xs:\n  max_pts: 10\n", "has no steps"),
        ("random-xs: 3\n", "is not a mapping of steps"),
        ("[1, 2]\n", "a runbook is a mapping from dataset names"),
        (
            "random-xs:\n  1: {operation: search}\n  1: {operation: search}\n",
            "not a readable YAML runbook: random-xs: the key '1' is given twice in one mapping \
             (keep one) at line 2",
        ),
    ] {
        let e = err(text);
        assert!(e.starts_with("rb.yaml") && e.contains(want), "{text}: {e}");
    }
}

/// The replay's errors: live tags inserted, dead tags deleted or replaced, max_pts, and
/// (against a dataset) ids past the train rows.
#[test]
fn replay_errors_name_the_step_and_the_tags() {
    for (steps, want) in [
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: insert, start: 5, end: 15}",
                "{operation: search}",
            ][..],
            "step 2 (insert): inserts tags [5, 15) but tags [5, 10) are already live",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: delete, start: 8, end: 12}",
                "{operation: search}",
            ],
            "step 2 (delete): tags [8, 12) must all be live but tags [10, 12) are not",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: delete, start: 0, end: 10}",
                "{operation: delete, start: 0, end: 1}",
                "{operation: search}",
            ],
            "step 3 (delete): tags [0, 1) must all be live",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: replace, tags_start: 20, tags_end: 22, ids_start: 0, ids_end: 2}",
                "{operation: search}",
            ],
            "step 2 (replace): tags [20, 22) must all be live",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 60}",
                "{operation: insert, start: 60, end: 120}",
                "{operation: delete, start: 0, end: 60}",
                "{operation: insert, start: 200, end: 250}",
                "{operation: search}",
            ],
            "step 2 (insert): 120 tags are live, more than max_pts 100; raise max_pts to at least the peak live count (120)",
        ),
    ] {
        let e = err(&entry(steps));
        assert!(
            e.starts_with("rb.yaml: entry 'random-xs', ") && e.contains(want),
            "{steps:?}: {e}"
        );
    }
    let rb = parse(&entry(&[
        "{operation: insert, start: 0, end: 50}",
        "{operation: replace, tags_start: 0, tags_end: 10, ids_start: 90, ids_end: 100}",
        "{operation: search}",
    ]))
    .unwrap();
    rb.validate(100).unwrap();
    let e = rb.validate(95).unwrap_err().to_string();
    assert!(
        e.contains("step 2 (replace): train row ids [90, 100) go past the dataset's 95 train rows"),
        "{e}"
    );
    let e = rb.validate(40).unwrap_err().to_string();
    assert!(e.contains("step 1 (insert): train row ids [0, 50)"), "{e}");
    assert_eq!(rb.rows_needed(), 100);
}

#[test]
fn a_search_or_maintenance_step_over_no_live_rows_is_refused() {
    for (steps, want) in [
        (
            &["{operation: search}"][..],
            "step 1 (search): no rows are live",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: delete, start: 0, end: 10}",
                "{operation: search}",
            ],
            "step 3 (search): no rows are live",
        ),
        (
            &[
                "{operation: insert, start: 0, end: 10}",
                "{operation: search}",
                "{operation: delete, start: 0, end: 10}",
                "{operation: maintenance, what: [vacuum]}",
                "{operation: insert, start: 0, end: 10}",
                "{operation: search}",
            ],
            "step 4 (maintenance): no rows are live",
        ),
    ] {
        let e = err(&entry(steps));
        assert!(
            e.contains(want) && e.contains("insert rows before this step or remove it"),
            "{steps:?}: {e}"
        );
    }
    // One live row is enough to search.
    parse(&entry(&[
        "{operation: insert, start: 0, end: 10}",
        "{operation: delete, start: 0, end: 9}",
        "{operation: search}",
    ]))
    .unwrap();
}

#[test]
fn an_entry_for_a_derived_set_points_at_that_set() {
    // A clustered runbook checked against the set it came from once advised --entry, which
    // runs the clustered order on the unclustered rows.
    let text = "random-xs-clustered:\n  max_pts: 5\n  1: {operation: insert, start: 0, end: 5}\n  2: {operation: search}\n";
    let e = parse(text).unwrap_err().to_string();
    assert!(
        e.contains("give --dataset random-xs-clustered, or --entry KEY"),
        "{e}"
    );
}
