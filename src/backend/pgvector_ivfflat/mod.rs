//! pgvector's IVFFlat index on the float32 `vector` column: k-means `lists` cells at build
//! time; each query scans the `probes` nearest cells. Shares the `pgvector` table.

pub use crate::registry::decls::pgvector_ivfflat as decl;

use super::postgres::index::{PgIndex, Target, distance_op, ops, set_or_reset};
use super::postgres::{DATABASE, PgBackend};
use super::spec::Algorithm;
use decl::{ITERATIVE_SCAN, PROBES};
use crate::backend::args::Args;
use crate::{Error, Result};

pub static ALGORITHM: Algorithm = Algorithm {
    decl: &decl::ALGORITHM,
    database: Some(&DATABASE),
    create: |o| Ok(Box::new(PgBackend::connect(o, &IvfFlat)?)),
    check_data: crate::backend::table::check_data,
};

/// The IVFFlat index.
#[derive(Debug)]
pub struct IvfFlat;

impl PgIndex for IvfFlat {
    fn algorithm(&self) -> &'static Algorithm {
        &ALGORITHM
    }

    fn using(&self, t: &Target, args: &Args) -> Result<String> {
        Ok(format!(
            "ivfflat (v vector_{}_ops) WITH (lists = {})",
            ops(t.metric),
            args.required_int("lists")?
        ))
    }

    fn settings(&self, t: &Target, args: &Args) -> Result<String> {
        let mut sql = set_or_reset(PROBES, args.int("probes").map(|p| p.to_string()));
        let scan = args.text("iterative_scan");
        if t.pgvector.at_least((0, 8)) {
            sql.push_str("; ");
            sql.push_str(&set_or_reset(ITERATIVE_SCAN, scan.map(str::to_string)));
        } else if scan.is_some_and(|s| s != "off") {
            return Err(Error::Config(format!(
                "pgvector_ivfflat query arg iterative_scan={}: pgvector {} has no \
                 ivfflat.iterative_scan (it came in 0.8.0); drop the argument or upgrade",
                scan.unwrap_or_default(),
                t.pgvector
            )));
        }
        Ok(sql)
    }

    fn query(&self, t: &Target, k: usize, args: &Args) -> String {
        format!(
            "SELECT id FROM {}{} ORDER BY v {} $1 LIMIT {k}",
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
    use crate::backend::Version;
    use crate::params::parse;

    fn target(pgvector: &str) -> Target {
        Target {
            table: "annbench.vec_t".into(),
            metric: Metric::Angular,
            dimension: 3,
            pgvector: Version::parse(pgvector).unwrap(),
            attrs: None,
        }
    }

    #[test]
    fn lists_auto_follows_pgvectors_guidance() {
        let at = |rows, v| {
            let point = parse(&format!("lists={v}")).unwrap();
            ALGORITHM.build_args(&point, rows).unwrap()
        };
        assert_eq!(at(500, "auto").int("lists"), Some(1));
        assert_eq!(at(200_000, "auto").int("lists"), Some(200));
        assert_eq!(at(200_000, "auto*2").int("lists"), Some(400));
        assert_eq!(at(4_000_000, "auto").int("lists"), Some(2000));
        let a = at(10_000, "auto/2");
        assert_eq!(
            IvfFlat.using(&target("0.8.0"), &a).unwrap(),
            "ivfflat (v vector_cosine_ops) WITH (lists = 5)"
        );
    }

    #[test]
    fn settings_reset_what_a_point_leaves_out_and_respect_the_server() {
        let q = ALGORITHM.query_args(&parse("probes=8").unwrap()).unwrap();
        assert_eq!(
            IvfFlat.settings(&target("0.8.0"), &q).unwrap(),
            "SET ivfflat.probes = 8; RESET ivfflat.iterative_scan"
        );
        assert_eq!(
            IvfFlat.settings(&target("0.7.4"), &q).unwrap(),
            "SET ivfflat.probes = 8"
        );
        let scan = parse("probes=8, iterative_scan=Relaxed_Order").unwrap();
        let q = ALGORITHM.query_args(&scan).unwrap();
        assert!(IvfFlat.settings(&target("0.8.0"), &q).unwrap().ends_with("= relaxed_order"));
        let e = IvfFlat.settings(&target("0.7.4"), &q).unwrap_err();
        assert!(e.to_string().contains("came in 0.8.0"), "{e}");
    }
}
