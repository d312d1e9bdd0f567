//! `exact`: in-process brute-force search over the train vectors. The reference point of a
//! sweep (recall 1.0 by construction) and a server-free backend for smoke tests and demos.
//! All its work is client CPU, so the runner's client-bottleneck notice fires for it: true.

pub use crate::registry::decls::exact as decl;

use super::spec::Algorithm;
use super::{Backend, BuildReport, Cancel, LoadReport, Searcher, ServerInfo, TableSpec};
use crate::params::Params;
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;
use std::time::Instant;

pub static ALGORITHM: Algorithm = Algorithm {
    decl: &decl::ALGORITHM,
    database: None,
    create: |_| Ok(Box::new(Exact::new())),
    check_data: super::table::check_data,
};

struct Table {
    metric: Metric,
    train: Array2<f32>,
}

/// The exact backend: holds the loaded vectors; "builds" nothing.
#[derive(Default)]
pub struct Exact {
    table: Option<Arc<Table>>,
    built: bool,
}

impl Exact {
    /// A new, empty exact backend.
    pub fn new() -> Self {
        Self::default()
    }

    fn table(&self) -> Result<&Arc<Table>> {
        self.table.as_ref().ok_or_else(|| {
            Error::Backend("exact: load the vectors before building or querying".into())
        })
    }
}

impl Backend for Exact {
    fn name(&self) -> &str {
        "exact"
    }

    fn server_info(&mut self) -> Result<ServerInfo> {
        Ok(ServerInfo {
            version: format!(
                "annbench {} exact brute force (in-process)",
                env!("CARGO_PKG_VERSION")
            ),
            settings: Default::default(),
        })
    }

    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        let start = Instant::now();
        if train.ncols() != spec.dimension {
            return Err(Error::Backend(format!(
                "exact: vectors have {} dimensions, the table expects {}",
                train.ncols(),
                spec.dimension
            )));
        }
        // Refused as the servers refuse it: squared distances in float32 range, finite values.
        super::table::check_train(train, spec.dimension, &spec.dataset)?;
        self.table = Some(Arc::new(Table {
            metric: spec.metric,
            train: train.as_standard_layout().into_owned(),
        }));
        self.built = false;
        Ok(LoadReport {
            seconds: start.elapsed().as_secs_f64(),
            rows: train.nrows(),
            reused: false,
            table_size_bytes: Some((train.len() * 4) as u64),
            method: "in-process copy".into(),
        })
    }

    fn build_watched(
        &mut self,
        build_args: &Params,
        _cancel: &Cancel<'_>,
        _watch: &super::BuildWatch,
    ) -> Result<BuildReport> {
        let rows = self.table()?.train.nrows();
        ALGORITHM.build_args(build_args, rows)?;
        self.built = true;
        Ok(BuildReport::default())
    }

    fn verify_index_used(
        &mut self,
        _query: &[f32],
        _k: usize,
        _query_args: &Params,
    ) -> Result<String> {
        // There is no index: every query is the exact full scan this backend exists to be.
        Ok("exact scan in process".into())
    }

    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        if !self.built {
            return Err(Error::Backend("exact: build before querying".into()));
        }
        Ok(Box::new(ExactSearcher {
            table: Arc::clone(self.table()?),
            scored: Vec::new(),
        }))
    }

    fn drop_index(&mut self) -> Result<()> {
        self.built = false;
        Ok(())
    }
}

/// One "connection": a scan buffer reused across queries (no allocation per query).
struct ExactSearcher {
    table: Arc<Table>,
    scored: Vec<(f32, i64)>,
}

impl Searcher for ExactSearcher {
    fn set_query_args(&mut self, query_args: &Params) -> Result<()> {
        ALGORITHM.query_args(query_args).map(drop)
    }

    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()> {
        ids.clear();
        let t = &self.table;
        if query.len() != t.train.ncols() {
            return Err(Error::Backend(format!(
                "exact: query has {} dimensions, the table {}",
                query.len(),
                t.train.ncols()
            )));
        }
        self.scored.clear();
        for (i, row) in t.train.rows().into_iter().enumerate() {
            let d = t.metric.distance(row.as_slice().unwrap_or(&[]), query);
            self.scored.push((d, i as i64));
        }
        let k = k.min(self.scored.len());
        if k == 0 {
            return Ok(());
        }
        let by = |a: &(f32, i64), b: &(f32, i64)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        self.scored.select_nth_unstable_by(k - 1, by);
        self.scored[..k].sort_unstable_by(by);
        ids.extend(self.scored[..k].iter().map(|(_, id)| *id));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn finds_the_nearest_rows_in_order() {
        let mut b = Exact::new();
        let spec = TableSpec {
            dataset: "t".into(),
            metric: Metric::Euclidean,
            dimension: 2,
        };
        let train = array![[0.0f32, 0.0], [10.0, 0.0], [1.0, 0.0], [3.0, 0.0]];
        b.load(&spec, train.view()).unwrap();
        b.build(&Params::new()).unwrap();
        let mut s = b.searcher().unwrap();
        let mut ids = Vec::new();
        s.search(&[2.9, 0.0], 3, &mut ids).unwrap();
        assert_eq!(ids, [3, 2, 0]);
        s.search(&[2.9, 0.0], 10, &mut ids).unwrap();
        assert_eq!(ids, [3, 2, 0, 1]);
    }

    #[test]
    fn refuses_non_finite_vectors_and_parameters() {
        let mut b = Exact::new();
        let spec = TableSpec {
            dataset: "t".into(),
            metric: Metric::Angular,
            dimension: 2,
        };
        let err = b
            .load(&spec, array![[0.0f32, f32::NAN]].view())
            .unwrap_err()
            .to_string();
        assert!(err.contains("row 0") && err.contains("NaN"), "{err}");
        let mut p = Params::new();
        p.insert("M".into(), 4.into());
        b.load(&spec, array![[1.0f32, 0.0]].view()).unwrap();
        assert!(b.build(&p).is_err());
    }
}
