//! What one algorithm's sweep shares with its builds and stored points ([`Ctx`]), and how they
//! report a failure or a warning: below the sweep loop (`sweep`), the build (`build`) and the
//! stored-point checks (`stored`).

use super::progress::{Event, Progress};
use super::{Failure, SweepOptions, SweepSummary};
use crate::backend::filter::filter_of;
use crate::backend::{LoadReport, ServerInfo};
use crate::dataset::Dataset;
use crate::dataset::filters::{FilterKind, Filters};
use crate::params::Params;
use crate::results::env::Host;
use crate::{Error, Result};
use ndarray::{CowArray, Ix2};
use std::collections::BTreeMap;

/// Shared, read-only state of one algorithm's sweep.
#[derive(Clone)]
pub(super) struct Ctx<'a> {
    pub(super) data: &'a Dataset,
    pub(super) queries: CowArray<'a, f32, Ix2>,
    pub(super) opts: &'a SweepOptions,
    pub(super) progress: &'a dyn Progress,
    pub(super) host: &'a Host,
    pub(super) algorithm: &'a str,
    /// The label of its points: the server's name in an interleaved run, else `--label`.
    pub(super) label: Option<String>,
    /// Its server, when named (`--postgres NAME=URL`); else the database's one server.
    pub(super) named: Option<crate::backend::NamedServer>,
    pub(super) server: ServerInfo,
    pub(super) load: LoadReport,
    /// [`crate::dataset::fingerprint`] of the data, stored with every unfiltered point.
    pub(super) fingerprint: String,
    /// The filter workload, when the sweep has filtered points.
    pub(super) filters: Option<&'a Filters>,
    /// Fingerprint of each filter's points (the data's with the filter's).
    pub(super) filter_prints: BTreeMap<(FilterKind, String), String>,
}

impl Ctx<'_> {
    /// The TCP port of a named server: with several of a kind on the machine, server cost
    /// reads the processes behind this port.
    pub(super) fn port(&self) -> Option<u16> {
        self.named
            .as_ref()
            .and_then(crate::backend::NamedServer::tcp_port)
    }

    /// The URL of its server of `kind`.
    pub(super) fn url(
        &self,
        kind: crate::connect::ServerKind,
    ) -> Result<crate::connect::ServerUrl> {
        match &self.named {
            Some(s) => crate::connect::server_url(kind, Some(&s.url)),
            None => self.opts.backend.url(kind),
        }
    }

    /// `e` as an error of its server: named by [`crate::backend::NamedServer::describe`] when
    /// the server is a named one (a run on several servers must say which one failed); else
    /// as it is.
    pub(super) fn on_server(&self, e: Error) -> Error {
        match &self.named {
            Some(s) => s.error(e),
            None => e,
        }
    }

    /// The fingerprint stored with a point of `query_args`.
    pub(super) fn fingerprint_for(&self, query_args: &Params) -> String {
        filter_of(query_args)
            .and_then(|(kind, s)| self.filter_prints.get(&(kind, s.to_string())))
            .cloned()
            .unwrap_or_else(|| self.fingerprint.clone())
    }
}

impl Ctx<'_> {
    /// A failure of this algorithm's build point (and query point and clients, if one point).
    pub(super) fn failure(
        &self,
        build_args: &Params,
        query_args: Option<&Params>,
        clients: Option<usize>,
    ) -> Failure {
        Failure {
            algorithm: self.algorithm.to_string(),
            build_args: Some(build_args.clone()),
            query_args: query_args.cloned(),
            clients,
            error: String::new(),
        }
    }

    /// Record `failure` and go on (`Ok`) with `--keep-going`; else, or when interrupted, `Err`.
    pub(super) fn fail(
        &self,
        summary: &mut SweepSummary,
        failure: Failure,
        err: Error,
    ) -> Result<()> {
        fail(self.opts, self.progress, summary, failure, err)
    }
}

/// [`Ctx::fail`] for failures before a context exists (connecting, loading).
pub(super) fn fail(
    opts: &SweepOptions,
    progress: &dyn Progress,
    summary: &mut SweepSummary,
    mut failure: Failure,
    err: Error,
) -> Result<()> {
    if !opts.keep_going || matches!(err, Error::Interrupted) {
        return Err(err);
    }
    failure.error = err.to_string();
    progress.on_event(&Event::Warning(&format!(
        "{} failed: {}; going on (--keep-going)",
        failure.what(),
        failure.error
    )));
    summary.failures.push(failure);
    Ok(())
}

pub(super) fn warn(progress: &dyn Progress, summary: &mut SweepSummary, text: String) {
    progress.on_event(&Event::Warning(&text));
    summary.warnings.push(text);
}
