//! The filter of a point (its `selectivity` and `filter` query args) and the plan the server
//! ran it with, in a few words: what series keys, the export and the filtered tables read.

use crate::dataset::filters::FilterKind;
use crate::registry::filter::filter_of;
use crate::results::PointResult;

/// The selectivity of a point (canonical text), `None` for an unfiltered point.
pub fn selectivity(p: &PointResult) -> Option<&str> {
    filter_of(&p.query_args).map(|(_, s)| s)
}

/// The filter kind of a point (`range` unless its `filter` arg says `label`), `None` for an
/// unfiltered point.
pub fn filter_kind(p: &PointResult) -> Option<FilterKind> {
    filter_of(&p.query_args).map(|(k, _)| k)
}

/// The plan in a few words (`vector index`, `B-tree + exact sort`), without EXPLAIN's lines.
pub fn plan_short(plan: &str) -> &str {
    plan.split(" (").next().unwrap_or(plan)
}
