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

/// Whether the command of `out` succeeded, and its stdout followed by its stderr.
fn success_and_output(out: std::process::Output) -> (bool, String) {
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
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
    success_and_output(out)
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
    success_and_output(out)
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

// --- Extra instances (up-instance, down-instance, restart-instance) ---

/// Run `body` in bash with every lib/databases-*.sh sourced (engines loaded) and
/// ANNBENCH_CACHE_DIR=`cache`: the helpers, no server touched.
fn lib_run(body: &str, cache: &std::path::Path) -> (bool, String) {
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/lib");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -euo pipefail\nsource '{0}/databases-common.sh'\nsource '{0}/databases-root.sh'\n\
             source '{0}/databases-instances.sh'\nengines_load\n{body}",
            lib.display()
        ))
        .env("ANNBENCH_CACHE_DIR", cache)
        .env("ANNBENCH_SERVERS_FROM", "root")
        .output()
        .expect("run bash");
    success_and_output(out)
}

/// `databases.sh ARGS...` with a scratch ANNBENCH_CACHE_DIR=`cache` (binaries from the root,
/// whatever the host has), or with None in the servers' own cache dir.
fn script_in(cache: Option<&std::path::Path>, args: &[&str]) -> (bool, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/databases.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(path).args(args);
    if let Some(cache) = cache {
        cmd.env("ANNBENCH_CACHE_DIR", cache)
            .env("ANNBENCH_SERVERS_FROM", "root");
    }
    let out = cmd.output().expect("run databases.sh");
    success_and_output(out)
}

#[test]
fn an_instance_url_variable_is_engine_and_name_upper_cased_dashes_as_underscores() {
    let cache = tempfile::tempdir().unwrap();
    let (ok, out) = lib_run(
        "instance_var postgres pg18; instance_var mariadb small-cache; instance_var redis r2-d2",
        cache.path(),
    );
    assert!(ok, "{out}");
    assert_eq!(
        out,
        "ANNBENCH_POSTGRES_PG18_URL\nANNBENCH_MARIADB_SMALL_CACHE_URL\nANNBENCH_REDIS_R2_D2_URL\n"
    );
}

#[test]
fn up_instance_refuses_bad_names_settings_engines_and_versions_before_touching_anything() {
    let cache = tempfile::tempdir().unwrap();
    let long = "a".repeat(33);
    let cases: &[(&[&str], &str)] = &[
        (
            &["up-instance", "twin"],
            "usage: databases.sh up-instance NAME ENGINE",
        ),
        (&["up-instance", "Twin", "postgres"], "instance name 'Twin'"),
        (
            &["up-instance", "1st", "postgres"],
            "starting with a letter",
        ),
        (
            &["up-instance", "a_b", "postgres"],
            "lower-case letters, digits and '-'",
        ),
        (
            &["up-instance", "twin-", "postgres"],
            "instance name 'twin-'",
        ),
        (
            &["up-instance", &long, "postgres"],
            "longer than 32 characters",
        ),
        (
            &["up-instance", "mariadb", "postgres"],
            "names the main mariadb server",
        ),
        (
            &["up-instance", "socket", "mariadb"],
            "is taken by databases.sh",
        ),
        (&["up-instance", "x", "oracle"], "unknown engine 'oracle'"),
        (
            &["up-instance", "x", "postgres@99"],
            "postgres@99: no such version here (versions: 17, 18",
        ),
        (
            &["up-instance", "x", "mariadb@11.4"],
            "mariadb@11.4: no such version here",
        ),
        (
            &["up-instance", "x", "postgres", "shared_buffers"],
            "write it as NAME=VALUE",
        ),
        (
            &["up-instance", "x", "postgres", "=16MB"],
            "is not a setting name",
        ),
        (
            &["up-instance", "x", "postgres", "a;b=1"],
            "is not a setting name",
        ),
        (
            &["up-instance", "x", "postgres", "work_mem=1MB\nport=1"],
            "control character",
        ),
        (
            &["up-instance", "x", "postgres", "port=5432"],
            "setting 'port' is set by databases.sh",
        ),
        (
            &["up-instance", "x", "mariadb", "bind-address=0.0.0.0"],
            "'bind-address' is set by databases.sh",
        ),
        (
            &["up-instance", "x", "mariadb", "DATADIR=/tmp"],
            "'DATADIR' is set by databases.sh",
        ),
        (
            &["up-instance", "x", "redis", "requirepass=x"],
            "'requirepass' is set by databases.sh",
        ),
        (
            &["down-instance"],
            "usage: databases.sh down-instance ID [--delete]",
        ),
        (
            &["down-instance", "x", "--force"],
            "usage: databases.sh down-instance ID [--delete]",
        ),
        (
            &["restart-instance"],
            "usage: databases.sh restart-instance ID",
        ),
    ];
    for (args, message) in cases {
        let (ok, out) = script_in(Some(cache.path()), args);
        assert!(!ok, "{args:?} was accepted: {out}");
        assert!(
            out.contains(message),
            "{args:?}: expected {message:?} in: {out}"
        );
    }
    assert!(
        !cache.path().join("instances").exists() && !cache.path().join("state.env").exists(),
        "a refused instance left files in the cache dir"
    );
}

/// A cache dir whose state remembers the main servers and which has three instances, as
/// `up` and `up-instance` leave it (no server runs).
fn cache_with_instances() -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        cache.path().join("state.env"),
        "MARIADB_PORT=13306\nPOSTGRES_PORT=15432\nREDIS_PORT=16379\nLEGACY_PORT=\nDB_PASSWORD=Secret123\n",
    )
    .unwrap();
    let dir = cache.path().join("instances");
    std::fs::create_dir(&dir).unwrap();
    for (file, text) in [
        (
            "postgres-pg18",
            "ENGINE=postgres\nNAME=pg18\nVERSION=18\nPORT=15441\n",
        ),
        (
            "postgres-twin",
            "ENGINE=postgres\nNAME=twin\nVERSION=\nPORT=15442\n",
        ),
        (
            "mariadb-twin",
            "ENGINE=mariadb\nNAME=twin\nVERSION=\nPORT=13321\nSETTING=mhnsw_max_cache_size=16M\n",
        ),
        // An engine this checkout lacks (another checkout's): left out.
        ("oracle-x", "ENGINE=oracle\nNAME=x\nVERSION=\nPORT=1521\n"),
    ] {
        std::fs::write(dir.join(format!("{file}.env")), text).unwrap();
    }
    cache
}

#[test]
fn servers_env_has_each_instances_url_the_script_and_the_managed_ports() {
    let cache = cache_with_instances();
    let (ok, out) = lib_run("load_state\nwrite_env_file", cache.path());
    assert!(ok, "{out}");
    let file = cache.path().join("servers.env");
    let read = |key: &str| annbench::connect::read_servers_env(&file, key).unwrap();
    assert_eq!(
        read("ANNBENCH_POSTGRES_PG18_URL").as_deref(),
        Some("postgres://annbench:Secret123@127.0.0.1:15441/annbench")
    );
    assert_eq!(
        read("ANNBENCH_MARIADB_TWIN_URL").as_deref(),
        Some("mysql://annbench:Secret123@127.0.0.1:13321/annbench")
    );
    // The main URLs read as before the extra lines.
    assert_eq!(
        read("ANNBENCH_POSTGRES_URL").as_deref(),
        Some("postgres://annbench:Secret123@127.0.0.1:15432/annbench")
    );
    let script = std::fs::canonicalize(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/databases.sh"),
    )
    .unwrap();
    assert_eq!(
        read("ANNBENCH_DATABASES_SH").map(PathBuf::from),
        Some(script)
    );
    for (port, id) in [
        ("13306", "mariadb"),
        ("15432", "postgres"),
        ("16379", "redis"),
        ("15441", "postgres:pg18"),
        ("15442", "postgres:twin"),
        ("13321", "mariadb:twin"),
    ] {
        assert_eq!(
            read(&format!("ANNBENCH_MANAGED_{port}")).as_deref(),
            Some(id),
            "port {port}"
        );
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("ANNBENCH_MANAGED_1521=") && !text.contains("ORACLE"),
        "{text}"
    );
    assert_eq!(text.matches("ANNBENCH_MANAGED_").count(), 6, "{text}");

    // `env` exports every line (names with digits too); `urls` shows the URLs only, masked.
    let (ok, env) = script_in(Some(cache.path()), &["env"]);
    assert!(ok, "{env}");
    for key in [
        "ANNBENCH_POSTGRES_PG18_URL",
        "ANNBENCH_MANAGED_15441",
        "ANNBENCH_DATABASES_SH",
    ] {
        let value = read(key).unwrap();
        assert!(
            env.contains(&format!("export {key}={value}\n")),
            "{key} in:\n{env}"
        );
    }
    let (ok, urls) = script_in(Some(cache.path()), &["urls"]);
    assert!(ok, "{urls}");
    assert!(!urls.contains("Secret123"), "{urls}");
    assert!(
        urls.contains(
            "ANNBENCH_POSTGRES_TWIN_URL=postgres://annbench:***@127.0.0.1:15442/annbench\n"
        ),
        "{urls}"
    );
    assert!(!urls.contains("ANNBENCH_MANAGED_"), "{urls}");
}

#[test]
fn instance_ids_are_an_engine_a_qualified_name_or_a_name_one_engine_has() {
    let cache = cache_with_instances();
    let resolve = |id: &str| {
        lib_run(
            &format!("instance_resolve {id}; echo \"$ID_ENGINE $ID_KIND ${{INST_NAME:-}}\""),
            cache.path(),
        )
    };
    for (id, want) in [
        ("postgres", "postgres main"),
        ("pg18", "postgres extra pg18"),
        ("mariadb:twin", "mariadb extra twin"),
        ("postgres:twin", "postgres extra twin"),
        ("mariadb:legacy", "mariadb legacy"),
    ] {
        let (ok, out) = resolve(id);
        assert!(ok && out.trim_end() == want, "{id}: {out}");
    }
    for (id, message) in [
        (
            "twin",
            "'twin' names an instance of several engines: say which (mariadb:twin postgres:twin)",
        ),
        ("nosuch", "no instance 'nosuch'"),
        ("redis:twin", "no instance 'redis:twin'"),
        ("oracle:x", "unknown engine 'oracle'"),
    ] {
        let (ok, out) = resolve(id);
        assert!(!ok && out.contains(message), "{id}: {out}");
    }
    // Main servers stop with `down` only.
    let (ok, out) = script_in(Some(cache.path()), &["down-instance", "postgres"]);
    assert!(
        !ok && out.contains("'postgres' is not an extra instance"),
        "{out}"
    );
    // A new instance's port: above the engine's base, past every remembered one.
    let (ok, out) = lib_run("load_state\ninstance_new_port postgres", cache.path());
    assert!(ok, "{out}");
    let port: u16 = out.trim().parse().unwrap_or_else(|_| panic!("{out}"));
    assert!(port >= 15440 && port != 15441 && port != 15442, "{port}");
}

/// The servers.env of the shared servers: ANNBENCH_MANAGED_<port> of `url`.
fn managed_id(url: &str) -> Option<String> {
    let port = url::Url::parse(url).ok()?.port()?;
    annbench::connect::read_servers_env(&servers_env(), &format!("ANNBENCH_MANAGED_{port}"))
        .unwrap()
}

#[test]
fn the_twin_instances_run_beside_the_main_servers() {
    // scripts/test.sh starts them after `up`: the interleaved-run tests connect to them.
    let file = servers_env();
    let (ok, status, stderr) = script("status");
    assert!(ok, "{stderr}");
    for (engine, name) in [("mariadb", "MariaDB"), ("postgres", "PostgreSQL")] {
        let key = format!("ANNBENCH_{}_TWIN_URL", engine.to_uppercase());
        let twin = annbench::connect::read_servers_env(&file, &key)
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "no {key} in {}: run scripts/databases.sh up-instance twin {engine}",
                    file.display()
                )
            });
        let main_key = format!("ANNBENCH_{}_URL", engine.to_uppercase());
        let main = annbench::connect::read_servers_env(&file, &main_key)
            .unwrap()
            .unwrap();
        let port = |u: &str| url::Url::parse(u).unwrap().port().unwrap();
        assert_ne!(port(&twin), port(&main), "{key} and {main_key}");
        assert_eq!(
            managed_id(&twin).as_deref(),
            Some(format!("{engine}:twin").as_str())
        );
        assert_eq!(managed_id(&main).as_deref(), Some(engine));
        assert!(
            status
                .lines()
                .any(|l| l.starts_with(&format!("{name} instance twin "))
                    && l.contains(": running, pid ")
                    && l.contains(&format!("127.0.0.1:{}", port(&twin)))),
            "{status}"
        );
    }
}

/// A PostgreSQL instance of its own: a row written before restart-instance is there after it,
/// on the same port, from a new postmaster; then it is deleted again.
#[test]
fn restart_instance_stops_and_starts_one_server_on_its_port_with_its_data() {
    let file = servers_env();
    let name = "script-test-restart";
    let id = format!("postgres:{name}");
    let run = |args: &[&str]| script_in(None, args);
    let (ok, out) = run(&["up-instance", name, "postgres", "work_mem=8MB"]);
    assert!(ok, "{out}");
    let url =
        annbench::connect::read_servers_env(&file, "ANNBENCH_POSTGRES_SCRIPT_TEST_RESTART_URL")
            .unwrap()
            .unwrap_or_else(|| panic!("no URL line for {id} in {}", file.display()));
    assert_eq!(managed_id(&url).as_deref(), Some(id.as_str()));
    let pid = |c: &mut postgres::Client| -> i32 {
        c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0)
    };
    let postmaster = || {
        let (ok, out) = run(&["status"]);
        assert!(ok, "{out}");
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("PostgreSQL instance {name} ")))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string();
        assert!(
            line.contains(": running, pid ") && line.contains("settings: work_mem=8MB"),
            "{line}"
        );
        line
    };
    let before = postmaster();
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute("DROP TABLE IF EXISTS restart_probe; CREATE TABLE restart_probe (x int); INSERT INTO restart_probe VALUES (42)")
        .unwrap();
    let old_backend = pid(&mut c);
    let (ok, out) = run(&["restart-instance", &id]);
    assert!(ok, "{out}");
    assert!(
        out.contains("stopped") && out.contains("started on 127.0.0.1:"),
        "{out}"
    );
    // The old connection is gone; a new one on the same URL sees the row.
    assert!(
        c.query_one("SELECT 1", &[]).is_err(),
        "a connection survived the restart"
    );
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let x: i32 = c
        .query_one("SELECT x FROM restart_probe", &[])
        .unwrap()
        .get(0);
    assert_eq!(x, 42);
    assert_ne!(pid(&mut c), old_backend);
    let work_mem: String = c.query_one("SHOW work_mem", &[]).unwrap().get(0);
    assert_eq!(work_mem, "8MB", "the instance's own setting");
    let after = postmaster();
    assert_ne!(before, after, "the same postmaster pid after a restart");
    drop(c);
    let (ok, out) = run(&["down-instance", &id, "--delete"]);
    assert!(ok && out.contains(&format!("deleted {id}")), "{out}");
    assert!(
        annbench::connect::read_servers_env(&file, "ANNBENCH_POSTGRES_SCRIPT_TEST_RESTART_URL")
            .unwrap()
            .is_none()
    );
}
