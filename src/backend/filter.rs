//! Filtered queries, for every SQL algorithm: the `selectivity` query arg (a point's filter,
//! `WHERE attr < t`, see [`crate::dataset::filters`]), the `filter_index` build arg (a B-tree
//! on the attribute, or none), and what a plan that serves a filtered query may look like.
//!
//! A planner that answers a filtered query from the B-tree and sorts the matching rows by
//! exact distance gives a correct, exact answer: a legitimate plan, recorded per point as
//! [`Plan::BtreeSort`]. A plan with no index at all (a scan of the whole table) is refused,
//! filtered or not.

use super::args::Args;
use super::spec::{Kind, Need, Param};
use crate::{Error, Result};

/// The query arg that filters a point.
pub const SELECTIVITY: Param = Param {
    name: "selectivity",
    kind: Kind::Selectivity,
    need: Need::Optional("no filter"),
    help: "share of rows the filter attr < t keeps (WHERE ... ORDER BY distance LIMIT k); the \
           dataset needs `annbench datasets filter` first",
    auto: None,
    setting: None,
};

/// The build arg choosing whether the attribute has a B-tree.
pub const FILTER_INDEX: Param = Param::choice(
    "filter_index",
    &["btree", "none"],
    "a B-tree on the filter attribute, built before the vector index (filtered sweeps only)",
)
.optional("btree when the sweep has filtered points");

/// The plan a query ran with, as EXPLAIN showed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The vector index returns rows in distance order (the filter, if any, is applied to
    /// what it returns).
    VectorIndex,
    /// The attribute's B-tree finds the matching rows; they are sorted by exact distance.
    BtreeSort,
}

impl Plan {
    /// As recorded with a point and shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::VectorIndex => "vector index",
            Plan::BtreeSort => "B-tree + exact sort",
        }
    }
}

/// The point's selectivity (validated canonical text), if it is filtered.
pub fn selectivity(args: &Args) -> Option<f64> {
    args.text(SELECTIVITY.name).and_then(|t| t.parse().ok())
}

/// ` WHERE attr < t` for a filtered point on a table of `rows` rows, else empty.
pub fn where_clause(args: &Args, rows: usize) -> String {
    match selectivity(args) {
        Some(s) => format!(
            " WHERE {} < {}",
            crate::dataset::filters::COLUMN,
            crate::dataset::filters::threshold(s, rows)
        ),
        None => String::new(),
    }
}

/// Whether a build point wants the B-tree (the default).
pub fn wants_btree(args: &Args) -> bool {
    args.text(FILTER_INDEX.name) != Some("none")
}

/// Refuse `filter_index` or `selectivity` when the table has no attribute column.
pub fn check_attributes(algorithm: &str, args: &Args, loaded: bool, what: &str) -> Result<()> {
    let asks = args.text(FILTER_INDEX.name).is_some() || args.text(SELECTIVITY.name).is_some();
    if asks && !loaded {
        return Err(Error::Config(format!(
            "{algorithm} {what} args {args:?}: a filter needs the dataset's attributes, which \
             were not loaded; create them with `annbench datasets filter NAME --selectivity \
             ...` and sweep a selectivity query arg"
        )));
    }
    Ok(())
}
