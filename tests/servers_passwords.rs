//! No password is ever printed: every way a URL reaches annbench (flag, `ANNBENCH_*_URL`,
//! `*_CONN_ARGS`, `servers.env`), malformed in every way seen in the field or well-formed but
//! refused by the real server, through `servers check` and `run`; the whole output is scanned.

mod servers_support;

use servers_support::*;
use std::path::Path;
use std::process::Command;

/// The secret fed to every path; no part of it may appear in any output.
const PW: &str = "Pw7xQsecret";

/// Every environment variable annbench reads a server from, cleared for each case.
const SERVER_VARS: &[&str] = &[
    "ANNBENCH_MARIADB_URL",
    "ANNBENCH_POSTGRES_URL",
    "ANNBENCH_REDIS_URL",
    "MARIADB_CONN_ARGS",
    "MARIADB_DB_NAME",
    "POSTGRES_CONN_ARGS",
    "POSTGRES_DB_NAME",
];

/// Run annbench with only `env` naming servers (and `cache` as the servers.env directory);
/// returns stdout + stderr and whether it failed.
fn run(args: &[&str], env: &[(&str, &str)], cache: &Path) -> (String, bool) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_annbench"));
    cmd.args(args).env("ANNBENCH_CACHE_DIR", cache);
    for v in SERVER_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("run the annbench binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text, !out.status.success())
}

fn assert_hidden(text: &str, case: &str) {
    for part in [PW, "Pw7x", "Qsecret", "secret"] {
        assert!(!text.contains(part), "{case}: '{part}' printed in:\n{text}");
    }
}

/// Malformed URLs, for either server, each with the password somewhere in it.
fn malformed(scheme: &str, port: u16) -> Vec<String> {
    vec![
        format!("{scheme}//bob:{PW}@127.0.0.1:{port}/db"),
        format!("{scheme}:/bob:{PW}@127.0.0.1:{port}/db"),
        format!("bob:{PW}@127.0.0.1:{port}/db"),
        format!("host=127.0.0.1 port={port} user=bob password={PW} dbname=db"),
        format!("host=127.0.0.1 password='{PW} x' dbname=db"),
        format!("{scheme}://bob:{PW}#x@127.0.0.1:{port}/db"),
        format!("{scheme}://bob:12#{PW}@127.0.0.1:{port}/db"),
        format!("{scheme}://bob:Pw7x/Qsecret@127.0.0.1:{port}/db"),
        format!("{scheme}://bob:{PW}"),
        format!("{scheme}://bob:{PW}@127.0.0.1:notaport/db"),
        format!("http://bob:{PW}@127.0.0.1:{port}/db"),
    ]
}

#[test]
fn malformed_urls_on_every_path_hide_the_password() {
    let cache = tempfile::tempdir().unwrap();
    let data = cache.path().join("data");
    let port = closed_port();
    let mut cases = 0;
    for (kind, scheme, flag, var, algo) in [
        ("m", "mysql", "--mariadb", "ANNBENCH_MARIADB_URL", "mariadb"),
        (
            "p",
            "postgres",
            "--postgres",
            "ANNBENCH_POSTGRES_URL",
            "pgvector",
        ),
    ] {
        for url in malformed(scheme, port) {
            let run_args = |with_flag: bool| {
                let mut a = vec![
                    "run".to_string(),
                    "--dataset".into(),
                    "sift-5k-128-euclidean".into(),
                    "--data-dir".into(),
                    data.display().to_string(),
                    "--algorithm".into(),
                    algo.into(),
                    "--results".into(),
                    cache.path().join("results").display().to_string(),
                ];
                if with_flag {
                    a.extend([flag.to_string(), url.clone()]);
                }
                a
            };
            let check = ["servers", "check", flag, &url];
            let (text, failed) = run(&check, &[], cache.path());
            assert_hidden(&text, &format!("check {flag} {kind}"));
            assert!(failed, "{url}: {text}");
            let args = run_args(true);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (text, failed) = run(&args, &[], cache.path());
            assert_hidden(&text, &format!("run {flag}"));
            assert!(failed, "{text}");
            let args = run_args(false);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (text, _) = run(&args, &[(var, &url)], cache.path());
            assert_hidden(&text, &format!("run ${var}"));
            let (text, _) = run(&["servers", "check"], &[(var, &url)], cache.path());
            assert_hidden(&text, &format!("check ${var}"));
            std::fs::write(cache.path().join("servers.env"), format!("{var}={url}\n")).unwrap();
            let (text, _) = run(&["servers", "check"], &[], cache.path());
            std::fs::remove_file(cache.path().join("servers.env")).unwrap();
            assert_hidden(&text, "servers.env");
            cases += 5;
        }
    }
    for args in [
        format!("bob:{PW}:127.0.0.1:notaport"),
        format!("bob:{PW}"),
        format!("bob:{PW}:127.0.0.1:{port}"),
        format!("bob:%50w7x{}:bad host:{port}", &PW[4..]),
    ] {
        for var in ["MARIADB_CONN_ARGS", "POSTGRES_CONN_ARGS"] {
            let (text, failed) = run(&["servers", "check"], &[(var, &args)], cache.path());
            assert_hidden(&text, var);
            assert!(failed, "{text}");
            cases += 1;
        }
    }
    assert!(cases >= 100, "{cases}");
}

/// What a command is checked under: its name, its arguments, its environment.
type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);

/// The secret after an empty user (`redis://:PASSWORD@host`, Redis's usual form) or a user,
/// holding a raw `#`, `?`, `/` or `@`: such a URL fails to parse (or parses with the password
/// cut short) and was printed whole when the user part was empty.
fn url_syntax_in_the_password(scheme: &str, port: u16) -> Vec<String> {
    vec![
        format!("{scheme}://:Pw7x#Qsecret@127.0.0.1:{port}"),
        format!("{scheme}://:Pw7x?Qsecret@127.0.0.1:{port}/db"),
        format!("{scheme}://:Pw7x/Qsecret@127.0.0.1:{port}/db"),
        format!("{scheme}://:Pw7x@Qsecret@127.0.0.1:{port}/db"),
        format!("{scheme}://u:Pw7x#Qsecret@127.0.0.1:{port}/db"),
        format!("{scheme}://u:Pw7x?Qsecret@127.0.0.1:{port}/db"),
        format!("{scheme}:/:Pw7x#Qsecret@127.0.0.1:{port}/db"),
    ]
}

/// Each such URL of each database through every command and output that names a server
/// (`servers check` as text and JSON, `run`, `stream`), given as a flag, as `ANNBENCH_*_URL`
/// and in `servers.env`: no part of the secret in any output or in any file written.
#[test]
fn a_password_with_url_syntax_after_an_empty_user_is_hidden_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path();
    let data = cache.join("data");
    let results = cache.join("results");
    let runbook = cache.join("runbook.yaml");
    std::fs::write(
        &runbook,
        "sift-5k-128-euclidean:\n  max_pts: 100\n  1:\n    operation: insert\n    start: 0\n    \
         end: 100\n  2:\n    operation: search\n",
    )
    .unwrap();
    let (data_s, results_s, runbook_s) = (
        data.display().to_string(),
        results.display().to_string(),
        runbook.display().to_string(),
    );
    let port = closed_port();
    let mut cases = 0;
    // Redis runs no streaming runbooks: its `stream` refuses the algorithm before any URL.
    for (scheme, flag, var, algo, streams) in [
        (
            "mysql",
            "--mariadb",
            "ANNBENCH_MARIADB_URL",
            "mariadb",
            true,
        ),
        (
            "postgres",
            "--postgres",
            "ANNBENCH_POSTGRES_URL",
            "pgvector",
            true,
        ),
        ("redis", "--redis", "ANNBENCH_REDIS_URL", "redis", false),
    ] {
        for url in url_syntax_in_the_password(scheme, port) {
            let common = [
                "--dataset",
                "sift-5k-128-euclidean",
                "--data-dir",
                data_s.as_str(),
                "--algorithm",
                algo,
                "--results",
                results_s.as_str(),
            ];
            let run_cmd: Vec<&str> = [&["run"][..], &common].concat();
            let stream_cmd: Vec<&str> =
                [&["stream", "--runbook", &runbook_s][..], &common].concat();
            let run_flag = [&run_cmd[..], &[flag, url.as_str()]].concat();
            let stream_flag = [&stream_cmd[..], &[flag, url.as_str()]].concat();
            let checks: [Case<'_>; 9] = [
                ("check", vec!["servers", "check", flag, &url], vec![]),
                (
                    "check json",
                    vec!["servers", "check", "--format", "json", flag, &url],
                    vec![],
                ),
                ("run", run_flag, vec![]),
                ("stream", stream_flag, vec![]),
                ("check $var", vec!["servers", "check"], vec![(var, &url)]),
                (
                    "check json $var",
                    vec!["servers", "check", "--format", "json"],
                    vec![(var, &url)],
                ),
                ("run $var", run_cmd.clone(), vec![(var, &url)]),
                ("stream $var", stream_cmd.clone(), vec![(var, &url)]),
                ("check servers.env", vec!["servers", "check"], vec![]),
            ];
            for (what, args, env) in checks {
                if what.starts_with("stream") && !streams {
                    continue;
                }
                let env_file = what.ends_with("servers.env");
                if env_file {
                    std::fs::write(cache.join("servers.env"), format!("{var}={url}\n")).unwrap();
                }
                let (text, failed) = run(&args, &env, cache);
                if env_file {
                    std::fs::remove_file(cache.join("servers.env")).unwrap();
                }
                assert_hidden(&text, &format!("{what} {url}"));
                // The URL is named, its password's place masked.
                assert!(failed && text.contains(":***@"), "{what} {url}: {text}");
                cases += 1;
            }
        }
    }
    for (path, bytes) in all_files(cache) {
        for part in ["Pw7x", "Qsecret"] {
            assert!(!contains(&bytes, part), "'{part}' is in {}", path.display());
        }
    }
    assert!(cases >= 150, "{cases}");
}

#[test]
fn a_wrong_password_refused_by_the_real_servers_is_hidden() {
    let cache = tempfile::tempdir().unwrap();
    for url in [mariadb(), postgres()] {
        let wrong = with(&url, None, Some(PW), None);
        let flag = url.kind().flag();
        let (text, failed) = run(
            &["servers", "check", flag, wrong.expose().as_str()],
            &[],
            cache.path(),
        );
        assert_hidden(&text, flag);
        assert!(failed && text.contains("wrong password"), "{text}");
        // The real password of the test server stays hidden in a refusal too.
        let real = url.expose().password().unwrap().to_string();
        let bad_db = with(&url, None, None, Some("no_such_db_annbench"));
        let (text, _) = run(
            &["servers", "check", flag, bad_db.expose().as_str()],
            &[],
            cache.path(),
        );
        assert!(!text.contains(&real), "{text}");
    }
}

/// Every file under `dir`, read whole (HDF5 point files, JSON, the HTML report).
fn all_files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes));
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The URL of `url` with its password moved to a `?password=` parameter (libpq's and the
/// MariaDB driver's URL form), plus the password.
fn in_query(url: &annbench::connect::ServerUrl) -> (String, String) {
    let mut u = url.expose().clone();
    let pw = url.expose().password().unwrap().to_string();
    u.set_password(None).unwrap();
    u.query_pairs_mut().append_pair("password", &pw);
    let decoded = percent_encoding::percent_decode_str(&pw)
        .decode_utf8_lossy()
        .into_owned();
    (u.to_string(), decoded)
}

/// A point measured on both real servers with the password given as `?password=` (as
/// `--mariadb=URL` and `--postgres URL`): the password is in no file under the results
/// directory, not in the HTML report nor in any output; so for `--dry-run` and key=value
/// settings.
#[test]
fn a_password_in_a_query_parameter_is_stored_and_printed_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let (maria, maria_pw) = in_query(&mariadb());
    let (pg, pg_pw) = in_query(&postgres());
    let name = format!("pwquery{}-128-euclidean", std::process::id());
    let src =
        annbench::dataset::resolve("sift-5k-128-euclidean", &dir.path().join("data")).unwrap();
    let ds = annbench::dataset::subset::subset(&src, 300, Some(5), 10, &name).unwrap();
    let file = dir.path().join(format!("{name}.hdf5"));
    annbench::dataset::save(&ds, &file).unwrap();
    let results = dir.path().join("results");
    let report = dir.path().join("report.html");
    let (file_s, results_s, report_s) = (
        file.display().to_string(),
        results.display().to_string(),
        report.display().to_string(),
    );
    let maria_flag = format!("--mariadb={maria}");
    let run_args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "run",
            "--dataset",
            &file_s,
            "--algorithm",
            "mariadb",
            "--algorithm",
            "pgvector",
            "--build",
            "M=4",
            "--query",
            "ef_search=10",
            "--runs",
            "1",
            "--min-time",
            "0",
            "--count",
            "10",
            "--results",
            &results_s,
            &maria_flag,
            "--postgres",
            &pg,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let mut outputs = Vec::new();
    for args in [run_args(&["--dry-run"]), run_args(&[])] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (text, failed) = run(&args, &[], dir.path());
        assert!(!failed, "{text}");
        outputs.push(text);
    }
    let (text, failed) = run(
        &[
            "report",
            "--dataset",
            &name,
            "--count",
            "10",
            "--results",
            &results_s,
            "--output",
            &report_s,
        ],
        &[],
        dir.path(),
    );
    assert!(!failed, "{text}");
    outputs.push(text);
    let pg_settings =
        format!("host=127.0.0.1 user=annbench password='{pg_pw}' dbname=annbench sslmode=disable");
    for args in [
        vec!["servers", "check", maria_flag.as_str(), "--postgres", &pg],
        vec!["servers", "check", "--postgres", &pg_settings],
    ] {
        outputs.push(run(&args, &[], dir.path()).0);
    }
    let _ = run(
        &[
            "servers",
            "drop-tables",
            "--dataset",
            &name,
            &maria_flag,
            "--postgres",
            &pg,
        ],
        &[],
        dir.path(),
    );
    let files = all_files(dir.path());
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("password=***"),
        "the report shows the masked command"
    );
    let points = annbench::results::load_points(&results, &name, 10, dir.path()).unwrap();
    for algorithm in ["mariadb", "pgvector"] {
        assert!(
            points.iter().any(|p| p.algorithm == algorithm),
            "no {algorithm} point stored"
        );
    }
    for p in &points {
        assert!(
            p.environment.command.contains("password=***"),
            "{}",
            p.environment.command
        );
    }
    for pw in [&maria_pw, &pg_pw] {
        for (path, bytes) in &files {
            assert!(
                !contains(bytes, pw),
                "the password is in {}",
                path.display()
            );
        }
        for text in &outputs {
            assert!(
                !text.contains(pw.as_str()),
                "the password is printed:\n{text}"
            );
        }
    }
}

/// A password that is also the user's name: the server's `user 'NAME'@'%'` is shown as it is,
/// and only the URL's password field is masked (it was `user '***'@'%'`).
#[test]
fn a_password_equal_to_the_user_name_masks_only_its_place() {
    use mysql::prelude::Queryable;
    let admin_url = mariadb();
    let mut admin = annbench::backend::mariadb::server::connect(&admin_url).unwrap();
    let user = unique("ann");
    admin
        .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
        .unwrap();
    admin
        .query_drop(format!("CREATE USER '{user}'@'%' IDENTIFIED BY '{user}'"))
        .unwrap();
    let url = with(&admin_url, Some(&user), Some(&user), None);
    let cache = tempfile::tempdir().unwrap();
    let (text, failed) = run(
        &["servers", "check", "--mariadb", url.expose().as_str()],
        &[],
        cache.path(),
    );
    admin
        .query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"))
        .unwrap();
    assert!(failed, "{text}");
    assert!(
        text.contains(&format!("mysql://{user}:***@")),
        "the URL's password is masked:\n{text}"
    );
    assert!(
        text.contains(&format!("Access denied for user '{user}'@'%'")),
        "the server's message is shown whole:\n{text}"
    );
    assert!(!text.contains("'***'"), "{text}");
}
