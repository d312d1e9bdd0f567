//! `annbench servers check` through the real binary, against the real servers.

mod servers_support;

use servers_support::*;
use std::process::{Command, Output};

fn annbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(args)
        .output()
        .expect("run the annbench binary")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn password(url: &annbench::connect::ServerUrl) -> String {
    url.expose()
        .password()
        .expect("test URLs have a password")
        .to_string()
}

#[test]
fn check_reports_both_servers_with_no_flags() {
    let (m, p) = (mariadb(), postgres()); // fail clearly when nothing is configured
    let out = annbench(&["servers", "check"]);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    for part in [
        "MariaDB mysql://",
        "VECTOR type and MHNSW index",
        "mhnsw_max_cache_size",
        "PostgreSQL postgres://",
        "pgvector 0.",
        "maintenance_work_mem",
        "max_parallel_maintenance_workers",
        "status: usable",
    ] {
        assert!(stdout.contains(part), "missing '{part}' in:\n{stdout}");
    }
    for pw in [password(&m), password(&p)] {
        assert!(
            !stdout.contains(&pw) && !stderr.contains(&pw),
            "password printed"
        );
    }
}

#[test]
fn check_json_has_one_entry_per_server() {
    let (m, p) = (mariadb(), postgres());
    let (mu, pu) = (m.expose().to_string(), p.expose().to_string());
    let out = annbench(&[
        "servers",
        "check",
        "--format",
        "json",
        "--mariadb",
        &mu,
        "--postgres",
        &pu,
    ]);
    // `--json` stays as a hidden alias for scripts written before `--format`.
    let alias = annbench(&["servers", "check", "--json", "--mariadb", &mu]);
    let (alias_out, _) = text(&alias);
    assert!(
        serde_json::from_str::<serde_json::Value>(&alias_out).is_ok(),
        "{alias_out}"
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let servers: Vec<&str> = v
        .as_array()
        .expect("an array")
        .iter()
        .map(|e| e["server"].as_str().unwrap_or("?"))
        .collect();
    let registered: Vec<&str> = annbench::backend::databases()
        .iter()
        .map(|d| d.kind.name())
        .collect();
    assert_eq!(servers, registered);
    assert!(
        v[0]["error"].is_null() && v[1]["error"].is_null(),
        "{stdout}"
    );
    assert!(!stdout.contains(&password(&m)), "password printed");
}

#[test]
fn check_fails_on_a_too_old_server() {
    let old = old_mariadb();
    let out = annbench(&["servers", "check", "--mariadb", old.expose().as_str()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("has no VECTOR type; annbench needs 11.7 or newer"),
        "{stdout}"
    );
    assert!(
        stderr.contains("unusable for benchmarking: MariaDB"),
        "{stderr}"
    );
    assert!(!stdout.contains(&password(&old)) && !stderr.contains(&password(&old)));
}

#[test]
fn check_fails_on_an_unreachable_server() {
    let url = format!(
        "postgres://annbench:pw-not-shown@127.0.0.1:{}/annbench",
        closed_port()
    );
    let out = annbench(&["servers", "check", "--postgres", &url]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("cannot reach PostgreSQL"), "{stdout}");
    assert!(!stdout.contains("pw-not-shown") && !stderr.contains("pw-not-shown"));
}

/// An instance servers.env lists but that is stopped (after a reboot, or `down`) is reported
/// with the command that starts it, and does not fail the check; named on the command line,
/// the same URL is a failure.
#[test]
fn check_reports_a_stopped_instance_without_failing() {
    let (m, p) = (mariadb(), postgres());
    let dir = tempfile::tempdir().unwrap();
    let gone = format!(
        "mysql://annbench:pw-not-shown@127.0.0.1:{}/annbench",
        closed_port()
    );
    std::fs::write(
        dir.path().join("servers.env"),
        format!("ANNBENCH_MARIADB_GONE_URL={gone}\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_annbench"))
        .args(["servers", "check"])
        .env("ANNBENCH_CACHE_DIR", dir.path())
        .env("ANNBENCH_MARIADB_URL", m.expose().as_str())
        .env("ANNBENCH_POSTGRES_URL", p.expose().as_str())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("MariaDB 'gone' mysql://annbench:***@127.0.0.1:")
            && stdout.contains(
                "not running; start it with scripts/databases.sh restart-instance mariadb:gone"
            ),
        "{stdout}"
    );
    let named = format!("gone={gone}");
    let out = annbench(&["servers", "check", "--mariadb", &named]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("cannot reach MariaDB"), "{stdout}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains("pw-not-shown"), "password printed");
    }
}
