//! Precedence and parsing of the connection settings, with an injected environment.

use super::*;
use std::collections::HashMap;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn cache_with_env_file(lines: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("servers.env"), lines).unwrap();
    dir
}

#[test]
fn flag_beats_env_beats_conn_args_beats_file() {
    let dir = cache_with_env_file("ANNBENCH_MARIADB_URL=mysql://f:pw@127.0.0.1:4/file\n");
    let cache = dir.path().to_str().unwrap();
    let all = [
        ("ANNBENCH_CACHE_DIR", cache),
        ("ANNBENCH_MARIADB_URL", "mysql://e:pw@127.0.0.1:2/env"),
        ("MARIADB_CONN_ARGS", "c:pw:127.0.0.1:3"),
    ];
    let kind = ServerKind::MariaDb;
    let flag = Some("mysql://x:pw@127.0.0.1:1/flag");
    let (u, s) = resolve_from(kind, flag, &env_of(&all)).unwrap();
    assert_eq!((u.database(), s), ("flag".to_string(), UrlSource::Flag));
    let (u, s) = resolve_from(kind, None, &env_of(&all)).unwrap();
    assert_eq!(u.database(), "env");
    assert_eq!(s, UrlSource::EnvUrl("ANNBENCH_MARIADB_URL"));
    let (u, s) = resolve_from(kind, None, &env_of(&[all[0], all[2]])).unwrap();
    assert_eq!(u.database(), FORKS_DEFAULT_DB);
    assert_eq!(s, UrlSource::ConnArgs("MARIADB_CONN_ARGS"));
    let (u, s) = resolve_from(kind, None, &env_of(&[all[0]])).unwrap();
    assert_eq!(u.database(), "file");
    assert_eq!(s, UrlSource::ServersEnv(dir.path().join("servers.env")));
}

#[test]
fn conn_args_build_a_url_with_db_name() {
    let env = env_of(&[
        ("POSTGRES_CONN_ARGS", "root:p:w@d:127.0.0.1:5432"),
        ("POSTGRES_DB_NAME", "ib"),
        ("ANNBENCH_CACHE_DIR", "/nonexistent"),
    ]);
    let (u, _) = resolve_from(ServerKind::Postgres, None, &env).unwrap();
    let url = u.expose();
    assert_eq!(
        (url.username(), url.host_str()),
        ("root", Some("127.0.0.1"))
    );
    assert_eq!(url.port(), Some(5432));
    assert_eq!(u.password().as_deref(), Some("p:w@d"));
    assert_eq!(u.database(), "ib");
    assert!(!u.to_string().contains("p:w@d"), "{u}");
}

#[test]
fn bad_conn_args_name_the_variable_and_hide_nothing_secret() {
    for bad in ["justuser", "u:pw:127.0.0.1:notaport", "u:127.0.0.1"] {
        let env = env_of(&[("MARIADB_CONN_ARGS", bad)]);
        let err = resolve_from(ServerKind::MariaDb, None, &env).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("MARIADB_CONN_ARGS must be user:password:host:port"),
            "{msg}"
        );
    }
}

#[test]
fn nothing_configured_says_how_to_fix_it() {
    let env = env_of(&[("ANNBENCH_CACHE_DIR", "/nonexistent/cache")]);
    let msg = resolve_from(ServerKind::Postgres, None, &env)
        .unwrap_err()
        .to_string();
    for part in [
        "--postgres URL",
        "ANNBENCH_POSTGRES_URL",
        "scripts/databases.sh up",
    ] {
        assert!(msg.contains(part), "{msg}");
    }
}

#[test]
fn env_file_syntax() {
    let dir = cache_with_env_file("# c\nexport A='x'\nB = \"y\"\nC=z=1\n");
    let p = dir.path().join("servers.env");
    assert_eq!(read_servers_env(&p, "A").unwrap().as_deref(), Some("x"));
    assert_eq!(read_servers_env(&p, "B").unwrap().as_deref(), Some("y"));
    assert_eq!(read_servers_env(&p, "C").unwrap().as_deref(), Some("z=1"));
    assert_eq!(read_servers_env(&p, "D").unwrap(), None);
}

#[test]
fn conn_args_take_the_password_as_written() {
    let env = env_of(&[
        ("MARIADB_CONN_ARGS", "u_1:p%41ss@#/?:x:127.0.0.1:3306"),
        ("ANNBENCH_CACHE_DIR", "/nonexistent"),
    ]);
    let (u, _) = resolve_from(ServerKind::MariaDb, None, &env).unwrap();
    assert_eq!(u.password().as_deref(), Some("p%41ss@#/?:x"));
    assert_eq!(u.user(), "u_1");
    assert!(!u.to_string().contains("p%41ss"), "{u}");
}
