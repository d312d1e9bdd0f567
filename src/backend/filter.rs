//! Filtered queries, for every SQL algorithm: the columns and conditions a loaded table holds
//! ([`Attributes`]), the ` WHERE ...` clause of a point, and what a plan that serves a
//! filtered query may look like. The filter syntax itself (the `selectivity` and `filter`
//! query args, the `filter_index` build arg) is declaration, in [`crate::registry::filter`];
//! it is re-exported here for the backends.
//!
//! A planner that answers a filtered query from a B-tree and sorts the matching rows by exact
//! distance gives a correct, exact answer: a legitimate plan, recorded per point as
//! [`Plan::BtreeSort`]. A plan with no index at all (a scan of the whole table) is refused,
//! filtered or not.

use crate::dataset::filters::{Column, FilterKind, Filters};
use crate::registry::args::Args;
use crate::registry::filter::filter_of_args;
use crate::{Error, Result};
use std::collections::BTreeMap;

pub use crate::registry::filter::{
    FILTER, FILTER_INDEX, FILTER_RULE, SELECTIVITY, canonical, filter_of,
};

/// The plan a query ran with, as EXPLAIN showed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The vector index returns rows in distance order (the filter, if any, is applied to
    /// what it returns).
    VectorIndex,
    /// An attribute's B-tree finds the matching rows; they are sorted by exact distance.
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

/// What a loaded table holds for filters: its attribute columns and the SQL condition of
/// every (kind, selectivity) of the workload.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    pub columns: Vec<Column>,
    pub conditions: BTreeMap<(FilterKind, String), String>,
}

impl Attributes {
    /// The columns and conditions of `f`.
    pub fn of(f: &Filters) -> Self {
        Attributes {
            columns: f.columns.clone(),
            conditions: f
                .levels
                .iter()
                .map(|l| ((l.kind, l.selectivity.clone()), l.condition()))
                .collect(),
        }
    }

    /// Refuse attributes whose columns do not hold one value for each of the `rows` loaded
    /// rows (`backend` names the refusing backend in the message).
    pub fn check_one_value_per_row(&self, backend: &str, rows: usize) -> Result<()> {
        match self.columns.iter().find(|c| c.values.len() != rows) {
            Some(c) => Err(Error::Config(format!(
                "{backend}: {} values in attribute column {} for {rows} loaded rows; \
                 recreate the attributes with `annbench datasets filter NAME --selectivity ...`",
                c.values.len(),
                c.name
            ))),
            None => Ok(()),
        }
    }

    /// The column names, `attr` and `label1`, `label2`, ...
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|c| c.name.as_str())
    }

    /// The condition of the point with `args`, if it is filtered and the workload has it.
    fn condition(&self, args: &Args) -> Option<&str> {
        let (kind, s) = filter_of_args(args)?;
        self.conditions
            .get(&(kind, s.to_string()))
            .map(String::as_str)
    }
}

/// ` WHERE attr < t` or ` WHERE label2 = 3` for a filtered point, else empty. Call
/// [`check_attributes`] first: it refuses a filter the table has no condition for.
pub fn where_clause(args: &Args, attrs: Option<&Attributes>) -> String {
    attrs
        .and_then(|a| a.condition(args))
        .map_or_else(String::new, |c| format!(" WHERE {c}"))
}

/// Whether a build point wants the B-trees (the default).
pub fn wants_btree(args: &Args) -> bool {
    args.text(FILTER_INDEX.name) != Some("none")
}

/// Refuse `filter_index` or a filter when the table has no attribute columns, and a filter
/// whose condition the loaded workload lacks.
pub fn check_attributes(
    algorithm: &str,
    args: &Args,
    attrs: Option<&Attributes>,
    what: &str,
) -> Result<()> {
    let asks = args.text(FILTER_INDEX.name).is_some() || args.text(SELECTIVITY.name).is_some();
    let Some(a) = attrs else {
        if asks {
            return Err(Error::Config(format!(
                "{algorithm} {what} args {args:?}: a filter needs the dataset's attributes, \
                 which were not loaded; create them with `annbench datasets filter NAME \
                 --selectivity ...` and sweep a selectivity query arg"
            )));
        }
        return Ok(());
    };
    match filter_of_args(args) {
        Some((kind, s)) if a.condition(args).is_none() => Err(Error::Config(format!(
            "{algorithm} {what} args {args:?}: the loaded attributes have no {kind} filter at \
             selectivity {s}; add it with `annbench datasets filter NAME --selectivity ... \
             --kind ...` and load them again"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use serde_json::json;

    fn params(v: serde_json::Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn filters_resolve_to_their_conditions() {
        let mut a = Attributes::default();
        a.conditions
            .insert((FilterKind::Range, "0.01".into()), "attr < 11".into());
        a.conditions
            .insert((FilterKind::Label, "0.01".into()), "label2 = 3".into());
        let args = |v| {
            crate::backend::mariadb::ALGORITHM
                .query_args(&params(v))
                .unwrap()
        };
        let range = args(json!({"selectivity": 0.01}));
        let label = args(json!({"selectivity": "1%", "filter": "Label"}));
        assert_eq!(where_clause(&range, Some(&a)), " WHERE attr < 11");
        assert_eq!(where_clause(&label, Some(&a)), " WHERE label2 = 3");
        assert_eq!(where_clause(&args(json!({})), Some(&a)), "");
        check_attributes("m", &label, Some(&a), "query").unwrap();
        let other = args(json!({"selectivity": 0.5, "filter": "label"}));
        let e = check_attributes("m", &other, Some(&a), "query").unwrap_err();
        assert!(e.to_string().contains("no label filter"), "{e}");
        assert!(check_attributes("m", &label, None, "query").is_err());
        let e = crate::backend::mariadb::ALGORITHM
            .query_args(&params(json!({"filter": "label"})))
            .unwrap_err();
        assert!(e.to_string().contains("needs selectivity"), "{e}");
    }

    #[test]
    fn attributes_of_another_row_count_are_refused_naming_the_column() {
        let column = |name: &str, n: usize| Column {
            name: name.into(),
            values: vec![0; n],
        };
        let a = Attributes {
            columns: vec![column("attr", 3), column("label1", 2)],
            ..Attributes::default()
        };
        let e = a.check_one_value_per_row("pgvector", 3).unwrap_err();
        assert!(
            e.to_string()
                .contains("pgvector: 2 values in attribute column label1"),
            "{e}"
        );
        assert!(e.to_string().contains("annbench datasets filter"), "{e}");
        let full = Attributes {
            columns: vec![column("attr", 3)],
            ..Attributes::default()
        };
        full.check_one_value_per_row("mariadb", 3).unwrap();
    }
}
