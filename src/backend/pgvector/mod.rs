//! pgvector's HNSW index, three ways: on the float32 `vector` column (`pgvector`), on
//! `v::halfvec(d)` over that same column (`pgvector_halfvec`, as in the published
//! comparisons), and on a column stored as `halfvec(d)` in a table of its own
//! (`pgvector_halfvec_column`: half the table size, vectors rounded to float16 on load).

pub use crate::registry::decls::pgvector as decl;
pub use decl::{EF_CONSTRUCTION, EF_CONSTRUCTION_RULE, EF_SEARCH, EF_SEARCH_SETTING, M};

use super::postgres::index::{
    Column, PgIndex, Target, distance_op, iterative_settings, ops, set_or_reset,
};
use super::postgres::{DATABASE, PgBackend};
use super::spec::Algorithm;
use super::{Backend, BackendOptions};
use crate::Result;
use crate::backend::args::Args;
use ndarray::ArrayView2;

pub static VECTOR: Algorithm = Algorithm {
    decl: &decl::VECTOR,
    database: Some(&DATABASE),
    create: |o| connect(o, &Hnsw(Variant::Vector)),
    check_data: crate::backend::table::check_data,
};

pub static HALFVEC: Algorithm = Algorithm {
    decl: &decl::HALFVEC,
    database: Some(&DATABASE),
    create: |o| connect(o, &Hnsw(Variant::HalfvecIndex)),
    // The index and the queries are cast to float16, which refuses values beyond its range.
    check_data: |spec, train, test| {
        check_data_within_float16(spec, train, test, HALFVEC_INDEX_LIMIT)
    },
};

pub static HALFVEC_COLUMN: Algorithm = Algorithm {
    decl: &decl::HALFVEC_COLUMN,
    database: Some(&DATABASE),
    create: |o| connect(o, &Hnsw(Variant::HalfvecColumn)),
    check_data: |spec, train, test| {
        check_data_within_float16(spec, train, test, HALFVEC_COLUMN_LIMIT)
    },
};

pub use super::postgres::index::HALFVEC_COLUMN_LIMIT;

/// The range pgvector_halfvec's values stay within, and the fix.
pub const HALFVEC_INDEX_LIMIT: &str = "the float16 range (+-65504) of pgvector_halfvec's \
    halfvec index and queries; use pgvector (float32 throughout)";

/// The data checks of every algorithm, plus a refusal of values beyond the float16 range,
/// for a variant that casts to float16; `limit` names what refuses them and the fix.
fn check_data_within_float16(
    spec: &super::TableSpec,
    train: ArrayView2<'_, f32>,
    test: ArrayView2<'_, f32>,
    limit: &str,
) -> Result<()> {
    crate::backend::table::check_data_within(spec, train, test, half::f16::MAX.to_f32(), limit)
}

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

    fn float16_limit(&self) -> Option<&'static str> {
        match self.0 {
            Variant::Vector => None,
            Variant::HalfvecIndex => Some(HALFVEC_INDEX_LIMIT),
            Variant::HalfvecColumn => Some(HALFVEC_COLUMN_LIMIT),
        }
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
