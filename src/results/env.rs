//! The environment recorded with every point: annbench version, server version and settings,
//! client host name, CPU model, cores and RAM, the finish time and the shard.

use super::Environment;
use super::ServerInfo;
use std::time::{SystemTime, UNIX_EPOCH};
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// Client machine facts, read once per sweep.
#[derive(Debug, Clone, Default)]
pub struct Host {
    pub cpu_model: String,
    pub cpu_cores: usize,
    pub ram_bytes: u64,
    /// This process's command line, passwords in URLs masked.
    pub command: String,
    pub hostname: String,
    /// The shard this sweep runs, recorded with every point.
    pub shard: Option<crate::shard::ShardInfo>,
    /// RFC 3339 UTC time the run started (when this was detected), recorded with every point:
    /// what orders a series of runs (`annbench history`).
    pub started_at: String,
}

impl Host {
    /// Read the CPU model, logical core count and RAM of this machine.
    pub fn detect() -> Host {
        let sys = System::new_with_specifics(
            RefreshKind::nothing()
                .with_cpu(CpuRefreshKind::nothing())
                .with_memory(MemoryRefreshKind::nothing().with_ram()),
        );
        Host {
            cpu_model: sys
                .cpus()
                .first()
                .map(|c| c.brand().trim().to_string())
                .unwrap_or_default(),
            cpu_cores: sys.cpus().len(),
            ram_bytes: sys.total_memory(),
            command: masked_command(std::env::args()),
            hostname: System::host_name().unwrap_or_default(),
            shard: None,
            started_at: now_rfc3339(),
        }
    }

    /// The environment of a point finishing now.
    pub fn environment(&self, server: &ServerInfo, notices: Vec<String>) -> Environment {
        Environment {
            annbench_version: env!("CARGO_PKG_VERSION").to_string(),
            server_version: server.version.clone(),
            server_settings: server.settings.clone(),
            cpu_model: self.cpu_model.clone(),
            cpu_cores: self.cpu_cores,
            ram_bytes: self.ram_bytes,
            finished_at: now_rfc3339(),
            started_at: Some(self.started_at.clone()),
            notices,
            command: self.command.clone(),
            hostname: self.hostname.clone(),
            shard: self.shard.clone(),
        }
    }
}

/// Whether `arg` is a flag whose value is a server URL (`--mariadb URL`, `--postgres=URL`):
/// each database's own flag.
fn is_url_flag(arg: &str) -> bool {
    crate::registry::databases().iter().any(|d| d.flag == arg)
}

/// `args` as one line with every password masked: a server URL after `--mariadb` /
/// `--postgres` however malformed (`postgres//u:pw@h`, `u:pw@h/db`, `host=h password=pw`), and
/// in any argument a URL's password field, a `password=` (`passfile=`, ...) value, quoted or not,
/// and a `*_CONN_ARGS=user:password:host:port` password (see
/// [`crate::connect::mask_secrets`]). Arguments with spaces are quoted.
pub fn masked_command(args: impl IntoIterator<Item = String>) -> String {
    use crate::connect::{mask_secrets, redact_text};
    let mut url_next = false;
    let mask = |arg: String, url_value: bool| -> String {
        if url_value {
            return mask_secrets(&redact_text(&arg));
        }
        if let Some((flag, value)) = arg.split_once('=') {
            if is_url_flag(flag) {
                return format!("{flag}={}", mask_secrets(&redact_text(value)));
            }
        }
        let Some(i) = arg.find("://") else {
            return mask_secrets(&arg);
        };
        let (head, value) = match arg[..i].find('=') {
            Some(eq) => arg.split_at(eq + 1),
            None => ("", arg.as_str()),
        };
        match url::Url::parse(value) {
            Ok(_) => mask_secrets(&arg),
            // Not a URL we can read: keep nothing after the scheme rather than risk a secret.
            Err(_) => format!("{head}{}://***", &value[..value.find("://").unwrap_or(0)]),
        }
    };
    args.into_iter()
        .map(|arg| {
            let url_value = std::mem::replace(&mut url_next, is_url_flag(&arg));
            mask(arg, url_value)
        })
        .map(|a| {
            if a.contains(char::is_whitespace) {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Format Unix seconds as RFC 3339 UTC (civil-from-days, proleptic Gregorian).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn passwords_in_the_command_are_masked() {
        let args = [
            "annbench",
            "run",
            "--mariadb",
            "mysql://bench:s3cret@127.0.0.1:3306/annbench",
            "--postgres=postgres://u:p%40ss@localhost/db",
            "--label",
            "two words",
            "--x=weird://[bad",
        ]
        .map(String::from);
        let line = masked_command(args);
        assert_eq!(
            line,
            "annbench run --mariadb mysql://bench:***@127.0.0.1:3306/annbench \
             --postgres=postgres://u:***@localhost/db --label 'two words' --x=weird://***"
        );
        assert!(!line.contains("s3cret") && !line.contains("p%40ss"));
    }

    #[test]
    fn passwords_in_parameters_and_settings_are_masked() {
        let args = [
            "annbench",
            "--mariadb=mysql://u@h/annbench?password=Zq9pw",
            "--postgres",
            "postgres://u@h:5432/annbench?sslmode=disable&PassWord=Zq9pw",
            "--postgres",
            "host=h password='Zq9 pw' dbname=ann",
            "--mariadb",
            "u:Zq9pw@h/db",
            "--postgres=postgres//u:Zq9pw@h/db",
            "MARIADB_CONN_ARGS=u:Zq9pw:h:3306",
            "--label",
            "ann",
        ]
        .map(String::from);
        let line = masked_command(args);
        assert!(!line.contains("Zq9"), "{line}");
        assert!(
            line.ends_with("MARIADB_CONN_ARGS=u:***:h:3306 --label ann"),
            "{line}"
        );
        assert!(
            line.contains("--mariadb=mysql://u@h/annbench?password=***"),
            "{line}"
        );
    }

    #[test]
    fn host_is_detected() {
        let h = Host::detect();
        assert!(h.cpu_cores >= 1 && h.ram_bytes > 0, "{h:?}");
        assert!(!h.hostname.is_empty(), "{h:?}");
    }
}
