//! Two sweeps on one server must never measure each other's vector set. As the SQL backends'
//! table lock ([`crate::backend::sql::guard`]), the admin side takes a lock per dataset before
//! it loads or reuses the rows and holds it while it lives: a key `<prefix>:<table>:lock`
//! set with `NX` to this run's token and a short expiry that a helper thread renews. Redis
//! has no session locks, so a run that died frees the dataset when the key expires
//! ([`TTL`]); a run that ends frees it at once (the key is deleted if it still holds this
//! run's token). The build id checked after every point stays the last line of defence.

use super::conn::{self, READ_LIMIT, query};
use crate::connect::ServerUrl;
use crate::{Error, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the lock outlives its last renewal.
pub const TTL: Duration = Duration::from_secs(20);

/// How often the helper renews it.
const RENEW: Duration = Duration::from_secs(2);

/// How long a busy lock is retried before the run gives up.
const GRACE: Duration = Duration::from_secs(3);

/// Deletes `KEYS[1]` if it holds `ARGV[1]`.
const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                       return redis.call('DEL', KEYS[1]) else return 0 end";

/// Renews `KEYS[1]` for `ARGV[2]` ms if it holds `ARGV[1]`.
const RENEW_SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                            return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";

/// A held lock; released on drop.
pub struct Lock {
    key: String,
    token: String,
    url: ServerUrl,
    stop: Arc<AtomicBool>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

fn token() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("annbench pid={} host={host} t={nanos}", std::process::id())
}

impl Lock {
    /// Take `key` for this run, retrying a busy lock for [`GRACE`]; an error names the run
    /// that holds it.
    pub fn take(conn: &mut redis::Connection, url: &ServerUrl, key: &str) -> Result<Lock> {
        let token = token();
        let start = Instant::now();
        loop {
            let got: Option<String> = query(
                conn,
                url,
                redis::cmd("SET")
                    .arg(key)
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(TTL.as_millis() as u64),
                "taking the dataset's lock",
            )?;
            if got.is_some() {
                break;
            }
            if start.elapsed() >= GRACE {
                let holder: Option<String> =
                    query(conn, url, redis::cmd("GET").arg(key), "reading the lock")?;
                return Err(Error::Backend(format!(
                    "the Redis keys of this dataset ({key}) are in use by another annbench run \
                     ({}): two sweeps on one vector set would measure each other's index. Wait \
                     for it to finish, or stop it; a run that died frees them within {} s",
                    holder.unwrap_or_else(|| "just released".into()),
                    TTL.as_secs()
                )));
            }
            // The retries are annbench's own schedule: a stop (Ctrl-C) ends them at once.
            if crate::backend::stop_requested() {
                return Err(Error::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (stop, url, key, token) =
                (stop.clone(), url.clone(), key.to_string(), token.clone());
            std::thread::Builder::new()
                .name("annbench-redis-lock".into())
                .spawn(move || renew(&stop, &url, &key, &token))
                .ok()
        };
        Ok(Lock {
            key: key.to_string(),
            token,
            url: url.clone(),
            stop,
            renewer,
        })
    }

    /// Release the lock on `conn` (if it still holds this run's token).
    pub fn release(mut self, conn: &mut redis::Connection) {
        self.stop_renewer();
        let _: redis::RedisResult<i64> = redis::cmd("EVAL")
            .arg(RELEASE)
            .arg(1)
            .arg(&self.key)
            .arg(&self.token)
            .query(conn);
        self.token.clear();
    }

    fn stop_renewer(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.renewer.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.stop_renewer();
        if !self.token.is_empty() {
            if let Ok(mut c) = conn::connect(&self.url, Duration::from_secs(5)) {
                let _: redis::RedisResult<i64> = redis::cmd("EVAL")
                    .arg(RELEASE)
                    .arg(1)
                    .arg(&self.key)
                    .arg(&self.token)
                    .query(&mut c);
            }
        }
    }
}

/// Renew the lock every [`RENEW`] until `stop`, on a connection of its own.
fn renew(stop: &AtomicBool, url: &ServerUrl, key: &str, token: &str) {
    let mut c = None;
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if last.elapsed() < RENEW {
            continue;
        }
        last = Instant::now();
        if c.is_none() {
            c = conn::connect(url, READ_LIMIT).ok();
        }
        if let Some(conn) = c.as_mut() {
            let r: redis::RedisResult<i64> = redis::cmd("EVAL")
                .arg(RENEW_SCRIPT)
                .arg(1)
                .arg(key)
                .arg(token)
                .arg(TTL.as_millis() as u64)
                .query(conn);
            if r.is_err() {
                c = None;
            }
        }
    }
}
