//! Binary quantization with re-ranking: an HNSW index on `binary_quantize(v)::bit(d)` (one
//! bit per dimension, `bit_hamming_ops`) over the float32 `vector` column shared with
//! `pgvector`. A query takes the `candidates` nearest rows by Hamming distance through the
//! index, then re-ranks them by the exact distance in SQL and keeps the `k` nearest.

pub use crate::registry::decls::pgvector_binary as decl;

use super::pgvector::EF_SEARCH_SETTING;
use super::postgres::index::{PgIndex, Target, distance_op, iterative_settings, set_or_reset};
use super::postgres::{DATABASE, PgBackend};
use super::spec::Algorithm;
use crate::Result;
use crate::backend::args::Args;

pub static ALGORITHM: Algorithm = Algorithm {
    decl: &decl::ALGORITHM,
    database: Some(&DATABASE),
    create: |o| Ok(Box::new(PgBackend::connect(o, &Binary)?)),
    check_data: crate::backend::table::check_data,
};

/// The bit HNSW index with re-ranking.
#[derive(Debug)]
pub struct Binary;

impl PgIndex for Binary {
    fn algorithm(&self) -> &'static Algorithm {
        &ALGORITHM
    }

    fn using(&self, t: &Target, args: &Args) -> Result<String> {
        Ok(format!(
            "hnsw ((binary_quantize(v)::bit({})) bit_hamming_ops) WITH (m = {}, \
             ef_construction = {})",
            t.dimension,
            args.required_int("M")?,
            args.required_int("ef_construction")?
        ))
    }

    fn settings(&self, t: &Target, args: &Args) -> Result<String> {
        let ef = args.int("ef_search").or(args.int("candidates"));
        let scan = iterative_settings(ALGORITHM.name, t, args)?;
        Ok(format!(
            "{}{scan}",
            set_or_reset(EF_SEARCH_SETTING, ef.map(|v| v.to_string()))
        ))
    }

    fn query(&self, t: &Target, k: usize, args: &Args) -> String {
        let d = t.dimension;
        let candidates = args.int("candidates").unwrap_or(k as i64);
        format!(
            "SELECT id FROM (SELECT id, v FROM {}{} ORDER BY binary_quantize(v)::bit({d}) <~> \
             binary_quantize($1::vector({d}))::bit({d}) LIMIT {candidates}) AS c \
             ORDER BY v {} $1::vector({d}) LIMIT {k}",
            t.table,
            t.filter(args),
            distance_op(t.metric)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;
    use crate::params::parse;

    #[test]
    fn candidates_are_reranked_by_the_exact_distance() {
        let t = Target {
            table: "annbench.vec_t".into(),
            metric: Metric::Euclidean,
            dimension: 4,
            pgvector: crate::backend::Version::parse("0.8.0").unwrap(),
            attrs: None,
        };
        let q = ALGORITHM.query_args(&parse("candidates=40").unwrap()).unwrap();
        assert_eq!(
            Binary.query(&t, 10, &q),
            "SELECT id FROM (SELECT id, v FROM annbench.vec_t ORDER BY binary_quantize(v)::bit(4) \
             <~> binary_quantize($1::vector(4))::bit(4) LIMIT 40) AS c ORDER BY v <-> \
             $1::vector(4) LIMIT 10"
        );
        assert_eq!(
            Binary.settings(&t, &q).unwrap(),
            "SET hnsw.ef_search = 40; RESET hnsw.iterative_scan; RESET hnsw.max_scan_tuples"
        );
        let e = ALGORITHM
            .query_args(&parse("candidates=80, ef_search=40").unwrap())
            .unwrap_err();
        assert!(e.to_string().contains("ef_search (40) must be at least candidates (80)"), "{e}");
        assert!(ALGORITHM.query_args(&parse("ef_search=40").unwrap()).is_err());
    }
}
