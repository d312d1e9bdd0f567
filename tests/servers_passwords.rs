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
