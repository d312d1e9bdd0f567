//! What annbench prints is fit for a terminal and makes sense for every input: escape
//! sequences in dataset names and server messages are shown, not obeyed; a server's
//! 5,000-character message is cut; duplicate YAML keys, empty ranges and a malformed MariaDB
//! URL in `servers check` get messages that name the file, the key, the source and the fix.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output};

fn annbench(args: &[&str], cache: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
    cmd.args(args).env("ANNBENCH_CACHE_DIR", cache);
    for v in [
        "ANNBENCH_MARIADB_URL",
        "ANNBENCH_POSTGRES_URL",
        "MARIADB_CONN_ARGS",
        "POSTGRES_CONN_ARGS",
    ] {
        cmd.env_remove(v);
    }
    cmd.output().expect("run the annbench binary")
}

fn all_output(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// No raw control character but line breaks.
fn assert_no_controls(text: &str, what: &str) {
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\n') {
        panic!("{what}: raw control character {c:?} printed in:\n{text:?}");
    }
}

/// A PostgreSQL "server" on loopback that answers every startup with a FATAL error whose
/// message is `message` (an escape sequence and 5,000 characters), then closes.
fn fake_postgres(message: String) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            let mut len = [0u8; 4];
            if s.read_exact(&mut len).is_err() {
                continue;
            }
            let mut rest = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
            let _ = s.read_exact(&mut rest);
            let mut body = Vec::new();
            for (field, value) in [(b'S', "FATAL"), (b'V', "FATAL"), (b'C', "28000")] {
                body.push(field);
                body.extend_from_slice(value.as_bytes());
                body.push(0);
            }
            body.push(b'M');
            body.extend_from_slice(message.as_bytes());
            body.push(0);
            body.push(0);
            let mut packet = vec![b'E'];
            packet.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
            packet.extend_from_slice(&body);
            let _ = s.write_all(&packet);
        }
    });
    port
}

#[test]
fn a_long_server_message_with_escapes_is_shown_escaped_and_cut() {
    let cache = tempfile::tempdir().unwrap();
    let message = format!("\x1b[2J\x1b]0;owned\x07bad{}", "x".repeat(5000));
    let port = fake_postgres(message);
    let url = format!("postgres://u:pw@127.0.0.1:{port}/db?sslmode=disable");
    for args in [
        vec!["servers", "check", "--postgres", url.as_str()],
        vec![
            "run",
            "--dataset",
            "sift-5k-128-euclidean",
            "--algorithm",
            "pgvector",
            "--postgres",
            url.as_str(),
            "--results",
            &cache.path().join("results").display().to_string(),
            "--data-dir",
            &cache.path().join("data").display().to_string(),
        ],
    ] {
        let out = annbench(&args, cache.path());
        let text = all_output(&out);
        assert!(!out.status.success(), "{text}");
        assert_no_controls(&text, args[0]);
        assert!(text.contains("\\x1b[2J"), "{text}");
        assert!(text.contains("more characters)"), "{text}");
        // The server's part of the output (servers check also lists the other databases).
        let part = text
            .split("\n\n")
            .find(|s| s.contains("more characters)"))
            .unwrap_or(&text);
        assert!(part.len() < 1500, "{} characters:\n{text}", part.len());
    }
}

#[test]
fn escape_sequences_in_a_dataset_name_are_shown_not_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    // A file whose name holds escapes (copied from elsewhere, or merged from another machine).
    let src =
        annbench::dataset::resolve("sift-5k-128-euclidean", &dir.path().join("data")).unwrap();
    let evil = dir
        .path()
        .join("\x1b[31mred\x1b]0;title\x07-128-euclidean.hdf5");
    std::fs::copy(&src, &evil).unwrap();
    let evil_s = evil.display().to_string();
    let missing = dir.path().join("gone\x1b[2J.hdf5").display().to_string();
    for (args, ok) in [
        (vec!["datasets", "info", evil_s.as_str()], true),
        (vec!["datasets", "info", missing.as_str()], false),
        (
            vec![
                "run",
                "--dataset",
                evil_s.as_str(),
                "--algorithm",
                "exact",
                "--count",
                "5",
                "--runs",
                "1",
                "--min-time",
                "0",
                "--results",
                &dir.path().join("results").display().to_string(),
            ],
            true,
        ),
    ] {
        let out = annbench(&args, dir.path());
        let text = all_output(&out);
        assert_eq!(out.status.success(), ok, "{args:?}: {text}");
        assert_no_controls(&text, &format!("{args:?}"));
        if args[0] == "datasets" {
            assert!(text.contains("\\x1b["), "{args:?}: {text}");
        }
    }
    let out = annbench(
        &[
            "table",
            "--dataset",
            &evil_s,
            "--count",
            "5",
            "--format",
            "markdown",
            "--results",
            &dir.path().join("results").display().to_string(),
        ],
        dir.path(),
    );
    let text = all_output(&out);
    assert_no_controls(&text, "table");
}

#[test]
fn duplicate_yaml_keys_are_refused_with_file_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.yml");
    std::fs::write(
        &grid,
        "algorithm: mariadb\ngroups:\n  - name: a\n    build: {M: [8]}\n    query:\n      ef_search: [10, 20]\n      ef_search: [40]\n",
    )
    .unwrap();
    let out = annbench(
        &[
            "run",
            "--dataset",
            "sift-5k-128-euclidean",
            "--data-dir",
            &dir.path().join("data").display().to_string(),
            "--config",
            &grid.display().to_string(),
            "--results",
            &dir.path().join("results").display().to_string(),
            "--dry-run",
        ],
        dir.path(),
    );
    let text = all_output(&out);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "{}: groups[0].query: duplicate entry with key \"ef_search\" (line 7)",
            grid.display()
        )),
        "{text}"
    );
}

#[test]
fn range_messages_hold_for_empty_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.npy");
    // A .npy file of one float32 vector of dimension 2.
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }";
    let mut h = header.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(&1.0f32.to_le_bytes());
    bytes.extend_from_slice(&2.0f32.to_le_bytes());
    std::fs::write(&one, bytes).unwrap();
    let out = annbench(
        &[
            "datasets",
            "create",
            &one.display().to_string(),
            "--metric",
            "euclidean",
            "--data-dir",
            &dir.path().display().to_string(),
        ],
        dir.path(),
    );
    let text = all_output(&out);
    assert!(!out.status.success(), "{text}");
    assert!(!text.contains("between 1 and 0"), "{text}");
    assert!(
        text.contains(
            "--test needs at least 1 row and train at least 1, but the file has 1 vector"
        ),
        "{text}"
    );
    let out = annbench(
        &[
            "datasets",
            "subset",
            "sift-5k-128-euclidean",
            "--train",
            "10",
            "--test",
            "0",
            "--data-dir",
            &dir.path().display().to_string(),
        ],
        dir.path(),
    );
    let text = all_output(&out);
    assert!(
        text.contains("--test 0: give at least 1 row (the file has"),
        "{text}"
    );
}

#[test]
fn a_malformed_mariadb_url_names_its_source_in_servers_check() {
    let dir = tempfile::tempdir().unwrap();
    let bad = "mysql:/bob:Pw7xQsecret@127.0.0.1:3306/db";
    /// The arguments, a variable to set, and the source the header must name.
    type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 3] = [
        (
            &["servers", "check", "--mariadb", bad],
            None,
            "(from command line)",
        ),
        (
            &["servers", "check"],
            Some(("ANNBENCH_MARIADB_URL", bad)),
            "(from $ANNBENCH_MARIADB_URL)",
        ),
        (
            &["servers", "check"],
            Some(("MARIADB_CONN_ARGS", "bob:Pw7xQsecret")),
            "(from $MARIADB_CONN_ARGS)",
        ),
    ];
    for (args, env, source) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
        cmd.args(args).env("ANNBENCH_CACHE_DIR", dir.path());
        for v in [
            "ANNBENCH_MARIADB_URL",
            "ANNBENCH_POSTGRES_URL",
            "MARIADB_CONN_ARGS",
            "POSTGRES_CONN_ARGS",
        ] {
            cmd.env_remove(v);
        }
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let text = all_output(&cmd.output().unwrap());
        let header = text
            .lines()
            .find(|l| l.starts_with("MariaDB"))
            .unwrap_or_else(|| panic!("no MariaDB header:\n{text}"));
        assert!(
            header.ends_with(source) && !header.contains("  ") && !header.contains("()"),
            "{header}"
        );
        assert!(!text.contains("Qsecret"), "{text}");
        assert!(text.contains("status: UNUSABLE: "), "{text}");
    }
    // What is malformed is said.
    let out = annbench(&["servers", "check", "--mariadb", bad], dir.path());
    let text = all_output(&out);
    assert!(
        text.contains("bad MariaDB URL 'mysql:/bob:***@127.0.0.1:3306/db': no host"),
        "{text}"
    );
}

/// The URL of the PostgreSQL test server, as the tests' environment names it.
fn postgres_url() -> String {
    annbench::connect::server_url(annbench::connect::ServerKind::Postgres, None)
        .unwrap_or_else(|e| panic!("no PostgreSQL test server: {e}"))
        .expose()
        .to_string()
}

/// A server name (`--postgres NAME=URL`) that is not one is said as such, with the flag, the
/// name and the rule: a slash in it once read as a second plain URL ("--postgres is given 2
/// times") or a bad URL, a 300-character one as "--label ... is too long" with no --label given.
#[test]
fn a_bad_server_name_is_named_with_its_flag_and_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let pg = postgres_url();
    let long = "x".repeat(300);
    let slash = format!("a/b={pg}");
    let colon = format!("pg:18={pg}");
    let too_long = format!("{long}={pg}");
    let other = format!("c={pg}");
    for (values, expected) in [
        (
            vec![&slash],
            "--postgres a/b=URL: the server name 'a/b' holds '/'",
        ),
        (
            vec![&slash, &other],
            "--postgres a/b=URL: the server name 'a/b' holds '/'",
        ),
        (
            vec![&colon],
            "--postgres NAME=URL: the server name (the text before the first '=') holds ':'",
        ),
        (vec![&too_long], "the server name is 300 characters long"),
    ] {
        for command in ["run", "stream"] {
            let mut args = vec![
                command,
                "--dataset",
                "sift-5k-128-euclidean",
                "--algorithm",
                "pgvector",
                "--data-dir",
                &d,
                "--results",
                &d,
                "--runbook",
                &d,
            ];
            if command == "run" {
                args.truncate(args.len() - 2);
            }
            for v in &values {
                args.extend(["--postgres", v.as_str()]);
            }
            let out = annbench(&args, dir.path());
            let text = all_output(&out);
            assert!(!out.status.success(), "{text}");
            assert!(
                text.contains(expected)
                    && text.contains("letters, digits, '.', '_' and '-', at most 64"),
                "{command} {expected}: {text}"
            );
            for wrong in [
                "--label",
                "given 2 times",
                "bad PostgreSQL URL",
                "no PostgreSQL server",
            ] {
                assert!(!text.contains(wrong), "{command}: {text}");
            }
        }
    }
}

/// `stream --postgres NAME=URL`, as its help documents: the run is on that server (no other
/// is configured here) under the label NAME, as `run` would label it; two names, or a name
/// beside `--label`, are refused with the reason (it said "no PostgreSQL server given").
#[test]
fn stream_runs_on_one_named_server_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let runbook = dir.path().join("runbook.yaml");
    std::fs::write(
        &runbook,
        "sift-5k-128-euclidean:\n  max_pts: 200\n  1:\n    operation: insert\n    start: 0\n    \
         end: 200\n  2:\n    operation: search\n",
    )
    .unwrap();
    let runbook = runbook.display().to_string();
    let named = format!("solo={}", postgres_url());
    let other = format!("other={}", postgres_url());
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "stream",
            "--dataset",
            "sift-5k-128-euclidean",
            "--algorithm",
            "pgvector",
            "--runbook",
            &runbook,
            "--data-dir",
            &d,
            "--results",
            &d,
            "--schema",
            "annbench_cli_named_stream",
            "--runs",
            "1",
            "--min-time",
            "0",
            "--postgres",
            &named,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        annbench(&a, dir.path())
    };
    let out = run(args(&["--postgres", &other]));
    let text = all_output(&out);
    assert!(
        !out.status.success()
            && text.contains("stream runs on one server, and --postgres names 2 (solo, other)"),
        "{text}"
    );
    let out = run(args(&["--label", "x"]));
    let text = all_output(&out);
    assert!(
        !out.status.success() && text.contains("--label and a named server (--postgres solo=URL)"),
        "{text}"
    );
    let out = run(args(&[]));
    let text = all_output(&out);
    assert!(out.status.success(), "{text}");
    let stored: Vec<String> = walk(dir.path())
        .into_iter()
        .filter(|p| p.contains("/streams/") && p.ends_with(".json"))
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0].ends_with("_label_solo.json"), "{stored:?}");
    let help = all_output(&annbench(&["stream", "--help"], dir.path()));
    assert!(help.contains("`stream` takes one"), "{help}");
}

/// Every file path below `dir`.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}
