//! The one rule for every file annbench stores with a format version (sweep points, stream
//! results, filter sidecars, the live-set truth cache): a file of a newer format is refused
//! (this annbench cannot know what it holds), one of an older format is read when the code
//! still reads it (migrated in memory) and refused otherwise. Either way the file is named and
//! never replaced behind the user's back: moving it aside is the user's choice.

use crate::{Error, Result};
use std::path::Path;

/// A kind of versioned file: its name in messages, the format this annbench writes and the
/// oldest it still reads, and what moving a refused file aside lets the user do.
#[derive(Debug, Clone, Copy)]
pub struct Versioned {
    /// `a stream result`, `a result file`.
    pub kind: &'static str,
    pub current: u64,
    pub oldest: u64,
    /// What a rerun does once the file is moved aside, e.g. `to measure the run again`.
    pub aside: &'static str,
}

impl Versioned {
    /// Ok when this annbench reads format `found` of the file at `path` (an error of the
    /// result store; see [`Versioned::refusal`] for other categories).
    pub fn check(&self, path: &Path, found: u64) -> Result<()> {
        self.refusal(path, found)
            .map_or(Ok(()), |m| Err(Error::Results(m)))
    }

    /// Why this annbench does not read format `found` of the file at `path`, if it does not.
    pub fn refusal(&self, path: &Path, found: u64) -> Option<String> {
        let path = path.display();
        let kind = self.kind;
        if found > self.current {
            return Some(format!(
                "{path} is {kind} written by a newer annbench (format {found}; this one reads \
                 up to format {}): upgrade annbench to use it, or move it aside {}",
                self.current, self.aside
            ));
        }
        (found < self.oldest).then(|| {
            format!(
                "{path} is {kind} of format {found}, written by an older annbench, which this \
                 one no longer reads (it reads formats {} to {}): move it aside {}",
                self.oldest, self.current, self.aside
            )
        })
    }

    /// True when format `found` is newer than this annbench's.
    pub fn is_newer(&self, found: u64) -> bool {
        found > self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_and_unreadable_older_formats_are_refused_by_name() {
        let v = Versioned {
            kind: "a stream result",
            current: 3,
            oldest: 2,
            aside: "to measure the run again",
        };
        let p = Path::new("r/x.json");
        v.check(p, 2).unwrap();
        v.check(p, 3).unwrap();
        let e = v.check(p, 4).unwrap_err().to_string();
        assert!(
            e.starts_with("r/x.json is a stream result written by a newer annbench (format 4")
                && e.contains("upgrade annbench"),
            "{e}"
        );
        let e = v.check(p, 1).unwrap_err().to_string();
        assert!(
            e.contains("of format 1, written by an older annbench")
                && e.contains("move it aside to measure the run again"),
            "{e}"
        );
    }
}
