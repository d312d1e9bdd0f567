//! `scripts/databases.sh` read-only commands against the servers it started: status, masked
//! URLs, the `env` lines, and a private servers.env; Redis's password and vector sets; the
//! engine registry (a database is one lib/databases-<db>.sh), on a copy of the scripts with no
//! server touched. (CI runs `up` before the tests; ANNBENCH_CACHE_DIR picks the servers.)

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
fn status_shows_redis_8_running() {
    let _ = servers_env();
    let (ok, stdout, stderr) = script("status");
    assert!(ok, "{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("Redis 8.") && l.contains(": running, pid ")),
        "{stdout}"
    );
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
        stdout.contains("ANNBENCH_REDIS_URL=redis://:***@127.0.0.1:"),
        "{stdout}"
    );
    assert!(
        !stdout.contains(&pw) && !stderr.contains(&pw),
        "urls printed the password"
    );

    let (ok, stdout, _) = script("env");
    assert!(ok);
    let file = servers_env();
    for key in [
        "ANNBENCH_MARIADB_URL",
        "ANNBENCH_POSTGRES_URL",
        "ANNBENCH_REDIS_URL",
    ] {
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

/// One RESP reply: simple strings, errors and integers as their line (`+OK`, `-ERR ...`, `:1`),
/// a bulk string as its text, an array as its elements joined by newlines.
fn resp_reply(r: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    r.read_line(&mut line).expect("read a Redis reply");
    let line = line.trim_end_matches("\r\n").to_string();
    match line.as_bytes().first() {
        Some(b'$') => {
            let n: i64 = line[1..].parse().unwrap();
            if n < 0 {
                return "(nil)".into();
            }
            let mut buf = vec![0u8; n as usize + 2];
            r.read_exact(&mut buf).unwrap();
            String::from_utf8_lossy(&buf[..n as usize]).into_owned()
        }
        Some(b'*') => {
            let n: i64 = line[1..].parse().unwrap();
            (0..n.max(0))
                .map(|_| resp_reply(r))
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => line,
    }
}

/// A raw RESP connection (no client crate): send commands, read replies.
struct Resp {
    w: std::net::TcpStream,
    r: std::io::BufReader<std::net::TcpStream>,
}

impl Resp {
    fn connect(host: &str, port: u16) -> Resp {
        let w = std::net::TcpStream::connect((host, port))
            .unwrap_or_else(|e| panic!("connect to Redis at {host}:{port}: {e}"));
        w.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let r = std::io::BufReader::new(w.try_clone().unwrap());
        Resp { w, r }
    }

    fn call(&mut self, args: &[&str]) -> String {
        use std::io::Write;
        let mut req = format!("*{}\r\n", args.len());
        for a in args {
            req += &format!("${}\r\n{a}\r\n", a.len());
        }
        self.w.write_all(req.as_bytes()).unwrap();
        resp_reply(&mut self.r)
    }
}

/// ANNBENCH_REDIS_URL from servers.env: (host, port, password).
fn redis_url() -> (String, u16, String) {
    let url = annbench::connect::read_servers_env(&servers_env(), "ANNBENCH_REDIS_URL")
        .unwrap()
        .expect("servers.env has ANNBENCH_REDIS_URL (run scripts/databases.sh up)");
    let u = url::Url::parse(&url).unwrap();
    assert_eq!(u.scheme(), "redis", "{url}");
    assert_eq!(u.username(), "", "no user name: the default user");
    let host = u.host_str().unwrap().to_string();
    assert_eq!(host, "127.0.0.1", "Redis listens on loopback only");
    (host, u.port().unwrap(), u.password().unwrap().to_string())
}

#[test]
fn redis_answers_with_the_password_and_refuses_without_it() {
    let (host, port, pw) = redis_url();
    assert_eq!(
        pw,
        password(),
        "one password for every server of the cache dir"
    );
    let mut c = Resp::connect(&host, port);
    let noauth = c.call(&["PING"]);
    assert!(noauth.starts_with("-NOAUTH"), "PING without AUTH: {noauth}");
    let wrong = c.call(&["AUTH", "not-the-password"]);
    assert!(wrong.starts_with("-WRONGPASS"), "{wrong}");
    assert!(c.call(&["GET", "x"]).starts_with("-NOAUTH"));
    assert_eq!(c.call(&["AUTH", &pw]), "+OK");
    assert_eq!(c.call(&["PING"]), "+PONG");
    // The same login with the default user's name (Redis 6+ ACLs).
    let mut d = Resp::connect(&host, port);
    assert_eq!(d.call(&["AUTH", "default", &pw]), "+OK");
    // Persistence off, memory bounded (docs/servers.md).
    assert_eq!(d.call(&["CONFIG", "GET", "save"]), "save\n");
    assert_eq!(d.call(&["CONFIG", "GET", "appendonly"]), "appendonly\nno");
    assert_eq!(
        d.call(&["CONFIG", "GET", "maxmemory-policy"]),
        "maxmemory-policy\nnoeviction"
    );
}

#[test]
fn redis_has_vector_sets_vadd_and_vsim() {
    let (host, port, pw) = redis_url();
    let mut c = Resp::connect(&host, port);
    assert_eq!(c.call(&["AUTH", &pw]), "+OK");
    let key = format!("annbench:test:servers_script:{}", std::process::id());
    c.call(&["DEL", &key]);
    for (name, v) in [
        ("a", ["1", "0", "0"]),
        ("b", ["0", "1", "0"]),
        ("c", ["0", "0", "1"]),
    ] {
        let added = c.call(&["VADD", &key, "VALUES", "3", v[0], v[1], v[2], name]);
        assert_eq!(added, ":1", "VADD {name}");
    }
    assert_eq!(c.call(&["VCARD", &key]), ":3");
    assert_eq!(c.call(&["VDIM", &key]), ":3");
    let near = c.call(&["VSIM", &key, "VALUES", "3", "0.1", "0.9", "0", "COUNT", "2"]);
    assert_eq!(
        near.lines().next(),
        Some("b"),
        "nearest to (0.1, 0.9, 0): {near}"
    );
    assert_eq!(near.lines().count(), 2, "{near}");
    let by_element = c.call(&["VSIM", &key, "ELE", "c", "COUNT", "1"]);
    assert_eq!(by_element, "c", "an element is its own nearest");
    assert_eq!(c.call(&["DEL", &key]), ":1");
}

#[test]
fn the_root_has_every_engines_packages() {
    let cache = servers_env().parent().unwrap().to_path_buf();
    if !cache.join("debian-trixie/var/lib/dpkg/status").exists() {
        eprintln!(
            "no Debian root in {} (host binaries): nothing to check",
            cache.display()
        );
        return;
    }
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/lib");
    let run = |extra: &str| {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "set -euo pipefail\nsource '{0}/databases-common.sh'\nsource '{0}/databases-root.sh'\n\
                 is_root || {{ echo 'not root: chroot needs root'; exit 0; }}\n\
                 engines_load\nROOT_PACKAGES=\"$(root_packages){extra}\"\necho \"[$ROOT_PACKAGES]\"\n\
                 echo \"missing [$(root_missing_packages)]\"",
                lib.display()
            ))
            .env("ANNBENCH_CACHE_DIR", &cache)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let text = run("");
    if text.starts_with("not root") {
        eprintln!("{text}");
        return;
    }
    assert!(
        text.contains("[mariadb-server postgresql-17 postgresql-17-pgvector redis-server]"),
        "{text}"
    );
    assert!(
        text.contains("missing []"),
        "up installs every engine's packages: {text}"
    );
    // A package the root lacks (what a root built before an engine existed has) is found.
    let text = run(" annbench-no-such-package");
    assert!(
        text.contains("missing [annbench-no-such-package]"),
        "{text}"
    );
}

/// A copy of scripts/databases.sh and scripts/lib in a temp dir, plus `engines` (file name
/// without `databases-`, contents): the registry seen by a checkout that has them.
fn scripts_copy(engines: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts");
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::copy(src.join("databases.sh"), dir.path().join("databases.sh")).unwrap();
    for f in std::fs::read_dir(src.join("lib")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.path().join("lib").join(f.file_name())).unwrap();
    }
    for (name, text) in engines {
        std::fs::write(dir.path().join(format!("lib/databases-{name}.sh")), text).unwrap();
    }
    dir
}

/// A database that is only its engine file: the hooks print what they are called for.
fn fake_engine(db: &str) -> String {
    let up = db.to_uppercase();
    format!(
        "{db}_packages() {{ echo {db}-server mariadb-server; }}\n\
         {db}_state() {{ echo {up}_PORT; }}\n\
         {db}_detect() {{ {up}_MODE=host; }}\n\
         {db}_up() {{ say \"{db} up\"; }}\n\
         {db}_down() {{ say \"{db} down\"; }}\n\
         {db}_status() {{ say \"{db}: stopped\"; }}\n\
         {db}_env_lines() {{ [ -z \"${up}_PORT\" ] || echo \"ANNBENCH_{up}_URL={db}://:$1@127.0.0.1:${up}_PORT\"; }}\n\
         {db}_cmd_say_hello() {{ say \"hello from {db}\"; }}\n"
    )
}

fn run_copy(dir: &std::path::Path, cache: &std::path::Path, args: &str) -> (bool, String) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -euo pipefail\ncd '{}'\n{args}", dir.display()))
        .env("ANNBENCH_CACHE_DIR", cache)
        .env("ANNBENCH_SERVERS_FROM", "root")
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_database_is_one_engine_file() {
    let dir = scripts_copy(&[("zzz", &fake_engine("zzz")), ("aaa", &fake_engine("aaa"))]);
    let cache = tempfile::tempdir().unwrap();
    let lib = "source lib/databases-common.sh; source lib/databases-root.sh; engines_load";

    // Order: mariadb, postgres, then the rest alphabetically; packages: the union, in order.
    let (ok, out) = run_copy(
        dir.path(),
        cache.path(),
        &format!("{lib}; echo \"$ENGINES\"; root_packages"),
    );
    assert!(ok, "{out}");
    assert_eq!(
        out,
        "mariadb postgres aaa redis zzz\n\
         mariadb-server postgresql-17 postgresql-17-pgvector aaa-server redis-server zzz-server\n"
    );

    // No server started yet.
    let (ok, out) = run_copy(dir.path(), cache.path(), "bash databases.sh urls");
    assert!(ok && out.starts_with("no servers started yet"), "{out}");

    // Remembered ports (as `up` leaves them): every engine's URL lines, masked, grouped as
    // before engines existed (main URLs, socket URLs, the rest), each group in engine order.
    let state = cache.path().join("state.env");
    std::fs::write(
        &state,
        "MARIADB_PORT=1\nPOSTGRES_PORT=2\nLEGACY_PORT=3\nREDIS_PORT=4\nZZZ_PORT=5\n\
         FUTURE_PORT=6\nDB_PASSWORD=Secret123\n",
    )
    .unwrap();
    let (ok, out) = run_copy(dir.path(), cache.path(), "bash databases.sh urls");
    assert!(ok, "{out}");
    assert!(!out.contains("Secret123"), "{out}");
    let keys: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .filter(|k| k.starts_with("ANNBENCH_"))
        .collect();
    assert_eq!(
        keys,
        [
            "ANNBENCH_MARIADB_URL",
            "ANNBENCH_POSTGRES_URL",
            "ANNBENCH_REDIS_URL",
            "ANNBENCH_ZZZ_URL",
            "ANNBENCH_MARIADB_SOCKET_URL",
            "ANNBENCH_POSTGRES_SOCKET_URL",
            "ANNBENCH_TEST_OLD_MARIADB_URL",
        ],
        "{out}"
    );
    assert!(
        out.contains("ANNBENCH_ZZZ_URL=zzz://:***@127.0.0.1:5\n"),
        "{out}"
    );
    assert!(
        out.contains("ANNBENCH_REDIS_URL=redis://:***@127.0.0.1:4\n"),
        "{out}"
    );

    // An engine's subcommand (the first engine, in order, that defines it); an unknown one is
    // a usage error.
    let (ok, out) = run_copy(dir.path(), cache.path(), "bash databases.sh say-hello");
    assert!(
        ok && out == "hello from aaa\n",
        "the first engine defining it: {out}"
    );
    let (ok, out) = run_copy(
        dir.path(),
        cache.path(),
        "bash databases.sh no-such-command",
    );
    assert!(!ok && out.contains("databases.sh up"), "{out}");

    // The state file keeps what this checkout has no engine for (another checkout's server).
    let (ok, out) = run_copy(
        dir.path(),
        cache.path(),
        &format!("{lib}; load_state; ZZZ_PORT=7; save_state"),
    );
    assert!(ok, "{out}");
    let saved = std::fs::read_to_string(&state).unwrap();
    for line in [
        "MARIADB_PORT=1\n",
        "REDIS_PORT=4\n",
        "ZZZ_PORT=7\n",
        "FUTURE_PORT=6\n",
        "DB_PASSWORD=Secret123\n",
    ] {
        assert!(saved.contains(line), "{line} in:\n{saved}");
    }
    assert_eq!(saved.matches("ZZZ_PORT=").count(), 1, "{saved}");

    // An engine file lacking a hook is refused, by name.
    std::fs::write(
        dir.path().join("lib/databases-bad.sh"),
        "bad_packages() { :; }\n",
    )
    .unwrap();
    let (ok, out) = run_copy(dir.path(), cache.path(), "bash databases.sh urls");
    assert!(!ok && out.contains("does not define bad_state"), "{out}");
}
