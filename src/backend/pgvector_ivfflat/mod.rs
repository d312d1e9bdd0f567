//! pgvector's IVFFlat index on the float32 `vector` column: k-means `lists` cells at build
//! time; each query scans the `probes` nearest cells. Shares the `pgvector` table.

use super::postgres::index::{PgIndex, Target, distance_op, ops, set_or_reset};
use super::postgres::{DATABASE, MAINTENANCE_WORK_MEM, PgBackend};
use super::spec::{Algorithm, Auto, Contract, Param};
use crate::backend::args::Args;
use crate::{Error, Result};

/// The session settings of the query args.
const PROBES: &str = "ivfflat.probes";
const ITERATIVE_SCAN: &str = "ivfflat.iterative_scan";

/// pgvector's guidance: rows/1000 lists up to 1M rows, sqrt(rows) beyond.
const LISTS_AUTO: Auto = Auto {
    value: |rows| {
        if rows <= 1_000_000 {
            (rows / 1000).max(1) as i64
        } else {
            (rows as f64).sqrt().round() as i64
        }
    },
    doc: "rows/1000 up to 1M rows, sqrt(rows) beyond (pgvector's guidance)",
};

pub static ALGORITHM: Algorithm = Algorithm {
    name: "pgvector_ivfflat",
    display: "PGVector_ivfflat",
    summary: "pgvector IVFFlat index on a float32 vector column (k-means lists, probes per query)",
    database: Some(&DATABASE),
    min_version: (0, 5),
    build: &[
        Param::int("lists", 1, 32768, "k-means cells the rows are split into").with_auto(LISTS_AUTO),
        MAINTENANCE_WORK_MEM,
        super::filter::FILTER_INDEX,
    ],
    query: &[
        Param::int(
            "probes",
            1,
            32768,
            "cells scanned per query (ivfflat.probes)",
        )
        .optional("the server's ivfflat.probes")
        .sets(PROBES),
        Param::choice(
            "iterative_scan",
            &["off", "relaxed_order"],
            "scan more cells when too few rows are found (ivfflat.iterative_scan, pgvector 0.8)",
        )
        .optional("off")
        .sets(ITERATIVE_SCAN),
        super::filter::SELECTIVITY,
        super::filter::FILTER,
    ],
    rules: &[super::filter::FILTER_RULE],
    max_dimension: 2000,
    metrics: super::spec::ALL_METRICS,
    grid: include_str!("../../../algorithms/pgvector_ivfflat/config.yml"),
    create: |o| Ok(Box::new(PgBackend::connect(o, &IvfFlat)?)),
    contract: Contract {
        build: "lists=10",
        thorough_query: "probes=10",
        slow_build: "lists=1000",
    },
    build_cost: None,
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
