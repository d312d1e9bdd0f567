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

/// Run `body` in bash with the script's helpers sourced (no server is touched).
fn helpers(body: &str, env: &[(&str, &str)]) -> (bool, String) {
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/lib");
    let script = format!(
        "set -euo pipefail\nsource '{0}/databases-common.sh'\nsource '{0}/databases-postgres.sh'\n{body}",
        lib.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .envs(env.iter().copied())
        .output()
        .expect("run bash");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A child that has exited but is not reaped (what `kill -9` leaves where PID 1 never reaps):
/// returns the parent (kill it to clean up) and the zombie's pid.
fn zombie() -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut parent = Command::new("python3")
        .args([
            "-c",
            "import os,sys,time\npid=os.fork()\nif pid==0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(30)",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    std::io::BufReader::new(parent.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = line.trim().to_string();
    // Wait until the child has exited (state Z).
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (parent, pid)
}

#[test]
fn a_server_killed_with_kill_9_is_not_running_and_its_stale_lock_goes() {
    let (mut parent, pid) = zombie();
    let (alive, out) = helpers(&format!("pid_is {pid} python3"), &[]);
    assert!(!alive, "a zombie counted as a running server: {out}");
    let (alive, out) = helpers(&format!("pid_is {} python3", parent.id()), &[]);
    assert!(alive, "{out}");

    // PostgreSQL's lock files naming the dead server are removed; a live server's are kept.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("postmaster.pid"),
        format!("{pid}\n{}\n", d.display()),
    )
    .unwrap();
    std::fs::write(d.join(".s.PGSQL.5999.lock"), format!("{pid}\n")).unwrap();
    std::fs::write(d.join(".s.PGSQL.5999"), "").unwrap();
    let hdir = d.display().to_string();
    let (ok, out) = helpers("postgres_clear_stale_lock", &[("P_HDIR", &hdir)]);
    assert!(ok && out.contains("stale lock"), "{out}");
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "{out}");

    let (ok, _) = helpers("postgres_clear_stale_lock", &[("P_HDIR", &hdir)]);
    assert!(ok, "no lock file: nothing to do");
    let _ = parent.kill();
    let _ = parent.wait();
}
