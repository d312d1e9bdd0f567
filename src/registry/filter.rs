//! The filter syntax of a point, for every algorithm that runs filtered queries: the
//! `selectivity` and `filter` query args (a point's filter, `WHERE attr < t` or
//! `WHERE labelN = v`, see [`crate::dataset::filters`]) and the `filter_index` build arg (a
//! B-tree on each attribute column, or none). Reports and result files read a stored point's
//! filter with [`filter_of`]; how a backend turns it into a condition is its own.

use super::args::Args;
use super::param::{Kind, Need, Param, Rule};
use crate::dataset::filters::FilterKind;
use crate::params::Params;

/// The query arg that filters a point.
pub const SELECTIVITY: Param = Param {
    name: "selectivity",
    kind: Kind::Selectivity,
    need: Need::Optional("no filter"),
    help: "share of rows the filter keeps (WHERE ... ORDER BY distance LIMIT k), of the kind \
           `filter` names; the dataset needs `annbench datasets filter` first",
    auto: None,
    setting: None,
};

/// The query arg choosing the filter of a selectivity.
pub const FILTER: Param = Param::choice(
    "filter",
    &["range", "label"],
    "the filter of a selectivity: range (attr < t on a permutation column) or label \
     (labelN = v on a category column); needs selectivity",
)
.optional("range when a selectivity is given");

/// `filter` means nothing without a selectivity.
pub const FILTER_RULE: Rule = Rule::Requires {
    key: "filter",
    other: "selectivity",
};

/// The build arg choosing whether the attribute columns have B-trees.
pub const FILTER_INDEX: Param = Param::choice(
    "filter_index",
    &["btree", "none"],
    "a B-tree on each filter attribute column, built before the vector index (filtered \
     sweeps only)",
)
.optional("btree when the sweep has filtered points");

/// The filter (kind, canonical selectivity) of a point whose query args read `get`.
fn key_from<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<(FilterKind, &'a str)> {
    let selectivity = get(SELECTIVITY.name)?;
    let kind = get(FILTER.name)
        .and_then(|k| FilterKind::parse(k).ok())
        .unwrap_or(FilterKind::Range);
    Some((kind, selectivity))
}

/// The filter of a point's (validated) query args, `None` when it is not filtered.
pub fn filter_of(query_args: &Params) -> Option<(FilterKind, &str)> {
    key_from(|name| query_args.get(name).and_then(|v| v.as_str()))
}

/// [`filter_of`] for checked arguments, as the backends hold them.
pub fn filter_of_args(args: &Args) -> Option<(FilterKind, &str)> {
    key_from(|name| args.text(name))
}

/// `query_args` in canonical form: `filter=range` (the default) is dropped, so a point stores
/// and resumes the same whether the grid spelled it or not.
pub fn canonical(mut query_args: Params) -> Params {
    let range = query_args
        .get(FILTER.name)
        .and_then(|v| v.as_str())
        .is_some_and(|k| k == FilterKind::Range.as_str());
    if range {
        query_args.remove(FILTER.name);
    }
    query_args
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: serde_json::Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_default_filter_is_not_stored() {
        let p = params(json!({"selectivity": "0.1", "filter": "range"}));
        assert_eq!(canonical(p), params(json!({"selectivity": "0.1"})));
        let p = params(json!({"selectivity": "0.1", "filter": "label"}));
        assert_eq!(canonical(p.clone()), p);
        assert_eq!(filter_of(&p), Some((FilterKind::Label, "0.1")));
        assert_eq!(
            filter_of(&params(json!({"selectivity": "0.1"}))),
            Some((FilterKind::Range, "0.1"))
        );
    }
}
