//! Whether a point is already stored for exactly this run: a stored file is reused only when
//! its recorded identity (dataset name, k, algorithm, parameters, clients, label) and its
//! dataset fingerprint both match. Anything else is measured again: a point of earlier data
//! under the same dataset name, a file of an earlier annbench (no fingerprint, perhaps under
//! its old name), or an unreadable file. A point of a newer annbench's format stops the
//! sweep, naming it: it is never measured again over.

use super::SweepSummary;
use super::ctx::{Ctx, warn};
use crate::results::{self, PointKey, PointResult};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What to do with one point.
pub(super) enum Stored {
    /// Stored for this data: report it, do not measure.
    Reuse(Box<PointResult>),
    /// Measure it; after writing, remove `supersedes` (the same point under its old file name).
    Measure {
        supersedes: Option<PathBuf>,
        why: Option<Why>,
    },
}

/// Why a stored point is measured again (counted per build for one warning each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
    /// Stored for data with another fingerprint.
    OtherData,
    /// Written by an earlier annbench, which recorded no fingerprint.
    NoFingerprint,
    /// Its recall was scored with the absolute tolerance of earlier versions on distances
    /// where that may count answers the current rule does not.
    OldRecallRule,
}

/// Decide for the point `key`, stored (if at all) at `path`.
pub(super) fn lookup(
    ctx: &Ctx<'_>,
    summary: &mut SweepSummary,
    key: &PointKey<'_>,
    path: &Path,
) -> Result<Stored> {
    let legacy = results::legacy_point_path(&ctx.opts.results_dir, key)
        .filter(|p| p.is_file())
        .and_then(|p| match results::read_point(&p) {
            Ok(old) if old.key().same_point(key) => Some((p, old)),
            // Another label's point under the old squeezed name: not ours, left alone.
            _ => None,
        });
    let current = if path.exists() {
        // A newer annbench's point is neither measured again nor written over.
        results::refuse_newer(path)?;
        match results::read_point(path) {
            Ok(p) if p.key().same_point(key) => Some(p),
            // Another point's file under this name: earlier versions squeezed `v1 a` to this
            // point's `v1_a`. Move it to its own name, if free, so both points keep a file.
            Ok(other) => {
                let own = results::point_path(&ctx.opts.results_dir, &other.key())?;
                if own.as_path() == path || own.exists() {
                    return Err(Error::Results(format!(
                        "{} holds the point of label {:?}, clients {}, not this one (label \
                         {:?}); move it out of the result store (is the file system \
                         case-insensitive?)",
                        path.display(),
                        other.label,
                        other.clients,
                        key.label
                    )));
                }
                std::fs::rename(path, &own)
                    .map_err(|e| Error::io(path, "cannot move to its own name", e))?;
                warn(
                    ctx.progress,
                    summary,
                    format!(
                        "moved {} (label {:?}, named by an earlier annbench) to {}",
                        path.display(),
                        other.label,
                        own.display()
                    ),
                );
                None
            }
            Err(e) => {
                warn(
                    ctx.progress,
                    summary,
                    format!("{e}; measuring this point again"),
                );
                None
            }
        }
    } else {
        None
    };
    let supersedes = legacy.as_ref().map(|(p, _)| p.clone());
    if ctx.opts.force {
        return Ok(Stored::Measure {
            supersedes,
            why: None,
        });
    }
    let Some(point) = current.or(legacy.map(|(_, old)| old)) else {
        return Ok(Stored::Measure {
            supersedes,
            why: None,
        });
    };
    Ok(match point.dataset_fingerprint.as_deref() {
        Some(f) if f == ctx.fingerprint_for(key.query_args) && point.old_recall_rule() => {
            Stored::Measure {
                supersedes,
                why: Some(Why::OldRecallRule),
            }
        }
        Some(f) if f == ctx.fingerprint_for(key.query_args) => Stored::Reuse(Box::new(point)),
        Some(_) => Stored::Measure {
            supersedes,
            why: Some(Why::OtherData),
        },
        None => Stored::Measure {
            supersedes,
            why: Some(Why::NoFingerprint),
        },
    })
}

/// One warning for the points of a build measured again, by reason.
pub(super) fn explain(ctx: &Ctx<'_>, summary: &mut SweepSummary, build: &str, whys: &[Why]) {
    let n = |w: Why| whys.iter().filter(|&&x| x == w).count();
    let (other, old, rule) = (
        n(Why::OtherData),
        n(Why::NoFingerprint),
        n(Why::OldRecallRule),
    );
    if rule > 0 {
        warn(
            ctx.progress,
            summary,
            format!(
                "{}({build}): {rule} stored point(s) were scored by an earlier annbench with an \
                 absolute recall tolerance of 1e-3, which can count answers that are not \
                 neighbours where distances are below 0.1; measuring them again (recall now \
                 counts distances up to {})",
                ctx.algorithm,
                crate::metrics::KNN_RULE
            ),
        );
    }
    if other > 0 {
        warn(
            ctx.progress,
            summary,
            format!(
                "{}({build}): {other} stored point(s) were measured on different data under the \
             name '{}' (the dataset fingerprint differs); measuring them again",
                ctx.algorithm, ctx.data.name
            ),
        );
    }
    if old > 0 {
        warn(
            ctx.progress,
            summary,
            format!(
                "{}({build}): {old} stored point(s) were written by an earlier annbench that \
             recorded no dataset fingerprint, so they cannot be matched to this data; measuring \
             them again",
                ctx.algorithm
            ),
        );
    }
}
