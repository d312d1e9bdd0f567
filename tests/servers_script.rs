//! `scripts/databases.sh` read-only commands against the servers it started: status, masked
//! URLs, the `env` lines, and a private servers.env. (CI runs `up` before the tests.)

use std::path::PathBuf;
use std::process::Command;

fn script(arg: &str) -> (bool, String, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/databases.sh");
    let out = Command::new("bash")
        .arg(path)
        .arg(arg)
        .output()
        .expect("run databases.sh");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn servers_env() -> PathBuf {
    let path = annbench::connect::servers_env_path(&|k| std::env::var(k).ok());
    assert!(
        path.exists(),
        "{} does not exist: run scripts/databases.sh up (CI does)",
        path.display()
    );
    path
}

fn password() -> String {
    let url = annbench::connect::read_servers_env(&servers_env(), "ANNBENCH_MARIADB_URL")
        .unwrap()
        .expect("servers.env has ANNBENCH_MARIADB_URL");
    url::Url::parse(&url)
        .unwrap()
        .password()
        .unwrap()
        .to_string()
}

#[test]
fn status_shows_both_servers_running() {
    let _ = servers_env();
    let (ok, stdout, stderr) = script("status");
    assert!(ok, "{stderr}");
    let running = |name: &str| {
        stdout
            .lines()
            .any(|l| l.starts_with(name) && l.contains(": running"))
    };
    assert!(running("MariaDB 11."), "{stdout}");
    assert!(running("PostgreSQL 1"), "{stdout}");
}

#[test]
fn urls_are_masked_and_env_lines_match_the_file() {
    let pw = password();
    let (ok, stdout, stderr) = script("urls");
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("mysql://annbench:***@127.0.0.1:"),
        "{stdout}"
    );
    assert!(
        !stdout.contains(&pw) && !stderr.contains(&pw),
        "urls printed the password"
    );

    let (ok, stdout, _) = script("env");
    assert!(ok);
    let file = servers_env();
    for key in ["ANNBENCH_MARIADB_URL", "ANNBENCH_POSTGRES_URL"] {
        let value = annbench::connect::read_servers_env(&file, key)
            .unwrap()
            .unwrap();
        assert!(
            stdout.contains(&format!("export {key}={value}\n")),
            "{key} in:\n{stdout}"
        );
    }
}

#[cfg(unix)]
#[test]
fn servers_env_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(servers_env())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o077,
        0,
        "servers.env mode {mode:o} is readable by others"
    );
}
