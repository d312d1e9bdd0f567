//! How an algorithm declares itself, once: names, default grid, parameters with their types,
//! ranges and cross-rules, the server it needs and how to create it. Config validation, the
//! CLI (`annbench algorithms`, `--help`), display names in tables, Python and
//! `docs/algorithms.md` all read these declarations; the backends validate their arguments
//! against them too (see [`super::args`]), so no rule is written twice.

use super::server::Database;
use super::{Backend, BackendOptions};
use crate::{Metric, Result};
use std::fmt;

/// Both metrics, for the algorithms that take either.
pub const ALL_METRICS: &[Metric] = &[Metric::Euclidean, Metric::Angular];

/// One algorithm: a registry entry (see [`super::ALGORITHMS`]).
pub struct Algorithm {
    /// As on the CLI, in configs and in result paths, e.g. `pgvector_ivfflat`.
    pub name: &'static str,
    /// As in tables and plots, e.g. `PGVector_ivfflat`.
    pub display: &'static str,
    /// One line for `annbench algorithms`, `--help` and the docs.
    pub summary: &'static str,
    /// The database server it runs on; `None` for the in-process `exact`.
    pub database: Option<&'static Database>,
    /// The oldest release of its database's vector support it runs on: MariaDB's server
    /// version, pgvector's extension version.
    pub min_version: (u32, u32),
    /// Build parameters: one index per build point.
    pub build: &'static [Param],
    /// Query parameters: applied to every connection per query point.
    pub query: &'static [Param],
    /// Rules between parameters of one point, e.g. `ef_construction >= 2*M`.
    pub rules: &'static [Rule],
    /// The largest vector dimension its table and index take.
    pub max_dimension: usize,
    /// The metrics its index compares vectors by; a dataset of another metric is refused
    /// before anything is sent to the server ([`super::check_metric`]).
    pub metrics: &'static [Metric],
    /// The default grid, `algorithms/<name>/config.yml` (built into the binary).
    pub grid: &'static str,
    /// Connect a backend for this algorithm.
    pub create: fn(&BackendOptions) -> Result<Box<dyn Backend>>,
    /// The points the contract suite (`tests/contract.rs`) runs this algorithm at.
    pub contract: Contract,
    /// The relative cost of one index build at these build arguments, to balance shards and
    /// plan dry runs ([`crate::shard::cost`] says what the unit is); `None`: no model yet.
    pub build_cost: Option<fn(&crate::params::Params) -> f64>,
}

/// Points the contract suite runs an algorithm at, as `key=value, ...` text.
#[derive(Debug, Clone, Copy)]
pub struct Contract {
    /// A quick build (a second or less on 1500 x 128 rows).
    pub build: &'static str,
    /// Query args at which recall@10 on 1500 rows must reach the suite's bound.
    pub thorough_query: &'static str,
    /// A build that takes well over 0.2 s on 4000 x 128 rows, so that the timeout and cancel
    /// scenarios stop it half-way.
    pub slow_build: &'static str,
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Algorithm({})", self.name)
    }
}

/// One build or query parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The key as configs spell it (matched ignoring case).
    pub name: &'static str,
    pub kind: Kind,
    pub need: Need,
    /// What it does, for help and docs.
    pub help: &'static str,
    /// How `auto` values derive from the number of rows, where the parameter accepts them.
    pub auto: Option<Auto>,
    /// The server setting the parameter sets per session (e.g. `hnsw.ef_search`): the
    /// database records its global value with every result.
    pub setting: Option<&'static str>,
}

/// The values a parameter takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// An integer in `min..=max`.
    Int { min: i64, max: i64 },
    /// One of these words (matched ignoring case, stored as spelled here).
    Choice(&'static [&'static str]),
    /// A PostgreSQL memory size: digits and kB, MB, GB or TB, e.g. `512MB`.
    Memory,
    /// A share of the rows in (0, 1], e.g. `0.01` or `1%` (stored as canonical text).
    Selectivity,
}

/// Whether a point must set a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Required,
    /// Optional; the text says what applies when it is absent, e.g. `the server's setting`.
    Optional(&'static str),
}

/// `auto` for an integer parameter: `auto`, `auto*F` or `auto/F` in a grid resolve against the
/// train rows when the sweep starts, so results record the number.
#[derive(Debug, Clone, Copy)]
pub struct Auto {
    /// The value for `rows` train rows (clamped to the parameter's range when used).
    pub value: fn(usize) -> i64,
    /// The formula in words, for help and docs.
    pub doc: &'static str,
}

/// A rule between two integer parameters of one point (a build point, or a query point).
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// `key >= factor * other` whenever both are set.
    AtLeast {
        key: &'static str,
        factor: i64,
        other: &'static str,
    },
    /// `key` may only be set when `other` is.
    Requires {
        key: &'static str,
        other: &'static str,
    },
}

impl Param {
    /// A required integer parameter in `min..=max`.
    pub const fn int(name: &'static str, min: i64, max: i64, help: &'static str) -> Param {
        Param {
            name,
            kind: Kind::Int { min, max },
            need: Need::Required,
            help,
            auto: None,
            setting: None,
        }
    }

    /// A required parameter taking one of `choices`.
    pub const fn choice(
        name: &'static str,
        choices: &'static [&'static str],
        help: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Choice(choices),
            need: Need::Required,
            help,
            auto: None,
            setting: None,
        }
    }

    /// A required PostgreSQL memory size.
    pub const fn memory(name: &'static str, help: &'static str) -> Param {
        Param {
            name,
            kind: Kind::Memory,
            need: Need::Required,
            help,
            auto: None,
            setting: None,
        }
    }

    /// This parameter, optional; `when_absent` says what applies then.
    pub const fn optional(self, when_absent: &'static str) -> Param {
        Param {
            need: Need::Optional(when_absent),
            ..self
        }
    }

    /// This parameter, applied as the server setting `name`.
    pub const fn sets(self, name: &'static str) -> Param {
        Param {
            setting: Some(name),
            ..self
        }
    }

    /// This parameter, also taking `auto` values.
    pub const fn with_auto(self, auto: Auto) -> Param {
        Param {
            auto: Some(auto),
            ..self
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Int { min, max } => write!(f, "integer {min}..={max}"),
            Kind::Choice(c) => f.write_str(&c.join(" | ")),
            Kind::Memory => f.write_str("memory size, e.g. 512MB or 4GB"),
            Kind::Selectivity => f.write_str("share of rows in (0, 1], e.g. 0.01 or 1%"),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::AtLeast { key, factor, other } if *factor == 1 => write!(f, "{key} >= {other}"),
            Rule::AtLeast { key, factor, other } => write!(f, "{key} >= {factor}*{other}"),
            Rule::Requires { key, other } => write!(f, "{key} needs {other}"),
        }
    }
}
