//! How far a running index build is, as the server reports it: written by the backend's
//! watcher thread, read by the sweep's coordinating thread, which turns it into progress events.

use std::sync::Mutex;

/// One observation of a running build.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildStatus {
    /// The server's name for what the build is doing (`copy to tmp table`, `loading tuples`).
    pub phase: String,
    /// Percent done, when the server says (0 to 100).
    pub percent: Option<f64>,
}

/// The latest [`BuildStatus`], shared between threads, and each phase seen with the highest
/// percentage reported in it.
#[derive(Debug, Default)]
pub struct BuildWatch(Mutex<(Option<BuildStatus>, Vec<BuildStatus>)>);

impl BuildWatch {
    /// Records what the server reports now.
    pub fn set(&self, phase: &str, percent: Option<f64>) {
        let status = BuildStatus {
            phase: phase.to_owned(),
            percent: percent.map(|p| p.clamp(0.0, 100.0)),
        };
        if let Ok(mut slot) = self.0.lock() {
            let seen = &mut slot.1;
            match seen.iter_mut().find(|s| s.phase == status.phase) {
                Some(s) => {
                    s.percent = match (s.percent, status.percent) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    }
                }
                None => seen.push(status.clone()),
            }
            slot.0 = Some(status);
        }
    }

    /// The latest observation, if any.
    pub fn get(&self) -> Option<BuildStatus> {
        self.0.lock().ok().and_then(|s| s.0.clone())
    }

    /// Every phase seen, in order, with the highest percentage reported in it.
    pub fn phases(&self) -> Vec<BuildStatus> {
        self.0.lock().map(|s| s.1.clone()).unwrap_or_default()
    }
}

/// Percent of `done` out of `total` (`None` when the total is unknown or zero).
pub fn percent(done: i64, total: i64) -> Option<f64> {
    (total > 0).then(|| 100.0 * done.max(0) as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_clamped() {
        let w = BuildWatch::default();
        assert_eq!(w.get(), None);
        w.set("loading tuples", Some(140.0));
        w.set("loading tuples", Some(40.0));
        assert_eq!(w.get().unwrap().percent, Some(40.0));
        w.set("x", Some(-3.0));
        assert_eq!(w.get().unwrap().percent, Some(0.0));
        let phases = w.phases();
        assert_eq!(phases.len(), 2);
        assert_eq!(
            (phases[0].phase.as_str(), phases[0].percent),
            ("loading tuples", Some(100.0))
        );
        assert_eq!(percent(5, 0), None);
        assert_eq!(percent(1, 4), Some(25.0));
    }
}
