//! An algorithm's parameters and the rules between them, as it declares them: the values a
//! parameter takes ([`Kind`]), whether a point must set it ([`Need`]), how `auto` resolves
//! ([`Auto`]), and [`Rule`]s such as `ef_construction >= 2*M`. [`super::args`] checks points
//! against them.

use std::fmt;

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
