//! pgvector's HNSW index, three ways: on the float32 `vector` column (`pgvector`), on
//! `v::halfvec(d)` over that same column (`pgvector_halfvec`, as in the published
//! comparisons), and on a column stored as `halfvec(d)` in a table of its own
//! (`pgvector_halfvec_column`: half the table size, vectors rounded to float16 on load).

use super::postgres::index::{
    Column, ITERATIVE_SCAN_PARAM, MAX_SCAN_TUPLES_PARAM, PgIndex, Target, distance_op,
    iterative_settings, ops, set_or_reset,
};
use super::postgres::{DATABASE, MAINTENANCE_WORK_MEM, PgBackend};
use super::spec::{Algorithm, Contract, Param, Rule};
use super::filter::{FILTER, FILTER_INDEX, FILTER_RULE, SELECTIVITY};
use super::{Backend, BackendOptions};
use crate::Result;
use crate::backend::args::Args;

/// HNSW's graph degree (pgvector: 2..=100).
pub const M: Param = Param::int("M", 2, 100, "neighbours per node and layer of the graph");
/// HNSW's candidate list while building (pgvector: 4..=1000).
pub const EF_CONSTRUCTION: Param = Param::int(
    "ef_construction",
    4,
    1000,
    "candidate list size while building the graph",
);
/// HNSW's candidate list per query, `hnsw.ef_search` (pgvector: 1..=1000).
pub const EF_SEARCH: Param = Param::int(
    "ef_search",
    1,
    1000,
    "candidate list size per query (hnsw.ef_search)",
)
.optional("the server's hnsw.ef_search")
.sets(EF_SEARCH_SETTING);
/// The session setting of [`EF_SEARCH`].
pub const EF_SEARCH_SETTING: &str = "hnsw.ef_search";
/// pgvector refuses a build with `ef_construction < 2 * m`.
pub const EF_CONSTRUCTION_RULE: Rule = Rule::AtLeast {
    key: "ef_construction",
    factor: 2,
    other: "M",
};

const BUILD: &[Param] = &[M, EF_CONSTRUCTION, MAINTENANCE_WORK_MEM, FILTER_INDEX];
const QUERY: &[Param] = &[
    EF_SEARCH,
    ITERATIVE_SCAN_PARAM,
    MAX_SCAN_TUPLES_PARAM,
    SELECTIVITY,
    FILTER,
];
const CONTRACT: Contract = Contract {
    build: "M=8, ef_construction=32",
    thorough_query: "ef_search=1000",
    slow_build: "M=48, ef_construction=400",
};

/// One HNSW variant's declaration: all three take the same parameters and rules.
const fn hnsw(
    name: &'static str,
    display: &'static str,
    summary: &'static str,
    min_version: (u32, u32),
    max_dimension: usize,
    grid: &'static str,
    create: fn(&BackendOptions) -> Result<Box<dyn Backend>>,
) -> Algorithm {
    Algorithm {
        name,
        display,
        summary,
        database: Some(&DATABASE),
        min_version,
        build: BUILD,
        query: QUERY,
        rules: &[EF_CONSTRUCTION_RULE, FILTER_RULE],
        max_dimension,
        metrics: super::spec::ALL_METRICS,
        grid,
        create,
        check_data: crate::backend::table::check_data,
        contract: CONTRACT,
        build_cost: Some(build_cost),
    }
}

/// Relative build cost ([`crate::shard::cost`]), `fixed + a * ef * M + b * M^2` with `ef =
/// ef_construction` (default 64) and `M` default 16, fitted to build seconds on
/// sift-5k-128-euclidean; `vector` and `halfvec` alike.
fn build_cost(build_args: &crate::params::Params) -> f64 {
    let m = crate::params::positive(build_args, "M").unwrap_or(16.0);
    let ef = crate::params::positive(build_args, "ef_construction").unwrap_or(64.0);
    0.74 + 0.000_51 * ef * m + 0.003_5 * m * m
}

pub static VECTOR: Algorithm = hnsw(
    "pgvector",
    "PGVector",
    "pgvector HNSW index on a float32 vector column",
    (0, 5),
    2000,
    include_str!("../../../algorithms/pgvector/config.yml"),
    |o| connect(o, &Hnsw(Variant::Vector)),
);

pub static HALFVEC: Algorithm = Algorithm {
    // The index and the queries are cast to float16, which refuses values beyond its range.
    check_data: |spec, train, test| {
        crate::backend::table::check_data_within(
            spec,
            train,
            test,
            half::f16::MAX.to_f32(),
            "the float16 range (+-65504) of pgvector_halfvec's halfvec index and queries; use \
             pgvector (float32 throughout)",
        )
    },
    ..hnsw(
        "pgvector_halfvec",
        "PGVector_halfvec",
        "pgvector HNSW index on v::halfvec(d) over the float32 column (a float16 index)",
        (0, 7),
        4000,
        include_str!("../../../algorithms/pgvector_halfvec/config.yml"),
        |o| connect(o, &Hnsw(Variant::HalfvecIndex)),
    )
};

pub static HALFVEC_COLUMN: Algorithm = Algorithm {
    check_data: |spec, train, test| {
        crate::backend::table::check_data_within(
            spec,
            train,
            test,
            half::f16::MAX.to_f32(),
            HALFVEC_COLUMN_LIMIT,
        )
    },
    ..hnsw(
        "pgvector_halfvec_column",
        "PGVector_halfvec_column",
        "pgvector HNSW index on a halfvec(d) column: half the table size, vectors and queries \
         rounded to float16, values beyond +-65504 refused",
        (0, 7),
        4000,
        include_str!("../../../algorithms/pgvector_halfvec_column/config.yml"),
        |o| connect(o, &Hnsw(Variant::HalfvecColumn)),
    )
};

pub use super::postgres::index::HALFVEC_COLUMN_LIMIT;

fn connect(opts: &BackendOptions, index: &'static Hnsw) -> Result<Box<dyn Backend>> {
    Ok(Box::new(PgBackend::connect(opts, index)?))
}

/// Where the float16 conversion happens, if anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// float32 `vector` column and index.
    Vector,
    /// float32 column, HNSW index on `v::halfvec(d)`.
    HalfvecIndex,
    /// `halfvec(d)` column (rounded to float16 on load) and index.
    HalfvecColumn,
}

/// The HNSW index of one variant.
#[derive(Debug)]
pub struct Hnsw(pub Variant);

impl Hnsw {
    /// The indexed expression for a `d`-dim column, as in the index and ORDER BY.
    fn expression(&self, d: usize) -> String {
        match self.0 {
            Variant::HalfvecIndex => format!("v::halfvec({d})"),
            Variant::Vector | Variant::HalfvecColumn => "v".into(),
        }
    }
}

impl PgIndex for Hnsw {
    fn algorithm(&self) -> &'static Algorithm {
        match self.0 {
            Variant::Vector => &VECTOR,
            Variant::HalfvecIndex => &HALFVEC,
            Variant::HalfvecColumn => &HALFVEC_COLUMN,
        }
    }

    fn column(&self) -> Column {
        match self.0 {
            Variant::HalfvecColumn => Column::Halfvec,
            Variant::Vector | Variant::HalfvecIndex => Column::Vector,
        }
    }

    fn using(&self, t: &Target, args: &Args) -> Result<String> {
        let (d, m) = (t.dimension, ops(t.metric));
        let opclass = match self.0 {
            Variant::Vector => format!("v vector_{m}_ops"),
            Variant::HalfvecIndex => format!("({}) halfvec_{m}_ops", self.expression(d)),
            Variant::HalfvecColumn => format!("v halfvec_{m}_ops"),
        };
        Ok(format!(
            "hnsw ({opclass}) WITH (m = {}, ef_construction = {})",
            args.required_int("M")?,
            args.required_int("ef_construction")?
        ))
    }

    fn settings(&self, t: &Target, args: &Args) -> Result<String> {
        let ef = args.int("ef_search").map(|v| v.to_string());
        let scan = iterative_settings(self.algorithm().name, t, args)?;
        Ok(format!("{}{scan}", set_or_reset(EF_SEARCH_SETTING, ef)))
    }

    fn graph_value_bytes(&self) -> Option<usize> {
        Some(match self.0 {
            Variant::Vector => 4,
            Variant::HalfvecIndex | Variant::HalfvecColumn => 2,
        })
    }

    fn query(&self, t: &Target, k: usize, args: &Args) -> String {
        let (d, op) = (t.dimension, distance_op(t.metric));
        let param = match self.0 {
            Variant::HalfvecIndex => format!("$1::halfvec({d})"),
            // A vector column takes $1 as vector; a halfvec column infers halfvec for it, so
            // the query goes as float16.
            Variant::Vector | Variant::HalfvecColumn => "$1".into(),
        };
        format!(
            "SELECT id FROM {}{} ORDER BY {} {op} {param} LIMIT {k}",
            t.table,
            t.filter(args),
            self.expression(d)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;

    fn target(metric: Metric) -> Target {
        Target {
            table: "annbench.t".into(),
            metric,
            dimension: 3,
            pgvector: crate::backend::Version::parse("0.8.0").unwrap(),
            attrs: None,
        }
    }

    #[test]
    fn query_text_per_variant() {
        let none = Args::default();
        let q = Hnsw(Variant::Vector).query(&target(Metric::Angular), 10, &none);
        assert_eq!(q, "SELECT id FROM annbench.t ORDER BY v <=> $1 LIMIT 10");
        let q = Hnsw(Variant::HalfvecIndex).query(&target(Metric::Euclidean), 5, &none);
        assert!(q.contains("v::halfvec(3) <-> $1::halfvec(3) LIMIT 5"), "{q}");
    }

    #[test]
    fn build_args_follow_the_declaration() {
        let p = |text| crate::params::parse(text).unwrap();
        let a = VECTOR.build_args(&p("m=16, ef_construction=64"), 1000).unwrap();
        let using = Hnsw(Variant::HalfvecIndex)
            .using(&target(Metric::Euclidean), &a)
            .unwrap();
        assert_eq!(
            using,
            "hnsw ((v::halfvec(3)) halfvec_l2_ops) WITH (m = 16, ef_construction = 64)"
        );
        let e = VECTOR
            .build_args(&p("M=16, ef_construction=31"), 1000)
            .unwrap_err();
        assert!(e.to_string().contains("at least 2*M (32)"), "{e}");
        let a = VECTOR
            .build_args(&p("M=8, ef_construction=32, maintenance_work_mem=64MB"), 1)
            .unwrap();
        assert_eq!(a.text("maintenance_work_mem"), Some("64MB"));
        let q = VECTOR.query_args(&p("ef_search=40")).unwrap();
        assert_eq!(
            Hnsw(Variant::Vector).settings(&target(Metric::Euclidean), &q).unwrap(),
            "SET hnsw.ef_search = 40; RESET hnsw.iterative_scan; RESET hnsw.max_scan_tuples"
        );
        let q = VECTOR
            .query_args(&p("ef_search=40, iterative_scan=Relaxed_Order, max_scan_tuples=5000, \
                            selectivity=1%, filter=label"))
            .unwrap();
        let mut attrs = crate::backend::filter::Attributes::default();
        let label = crate::dataset::filters::FilterKind::Label;
        attrs
            .conditions
            .insert((label, "0.01".into()), "label2 = 3".into());
        let t = Target {
            attrs: Some(std::sync::Arc::new(attrs)),
            ..target(Metric::Euclidean)
        };
        assert_eq!(
            Hnsw(Variant::Vector).settings(&t, &q).unwrap(),
            "SET hnsw.ef_search = 40; SET hnsw.iterative_scan = relaxed_order; SET \
             hnsw.max_scan_tuples = 5000"
        );
        assert_eq!(
            Hnsw(Variant::Vector).query(&t, 10, &q),
            "SELECT id FROM annbench.t WHERE label2 = 3 ORDER BY v <-> $1 LIMIT 10"
        );
        let old = Target {
            pgvector: crate::backend::Version::parse("0.7.4").unwrap(),
            ..t
        };
        let e = Hnsw(Variant::Vector).settings(&old, &q).unwrap_err();
        assert!(e.to_string().contains("came in 0.8.0"), "{e}");
        for bad in ["selectivity=0", "selectivity=2", "iterative_scan=on"] {
            assert!(VECTOR.query_args(&p(bad)).is_err(), "{bad}");
        }
        assert!(VECTOR.query_args(&p("ef_search=1001")).is_err());
    }
}
