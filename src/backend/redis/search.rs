//! One query connection: `VSIM key FP32 <blob> COUNT k [EF ef] [FILTER expr [FILTER-EF n]]`,
//! element names parsed back to train row ids.

use super::ALGORITHM;
use super::conn::redis_error;
use crate::backend::Searcher;
use crate::backend::cost::{ProcessHint, Statements};
use crate::backend::table::check_query;
use crate::connect::ServerUrl;
use crate::params::Params;
use crate::{Error, Result};
use redis::Connection;

pub struct RedisSearcher {
    pub(super) conn: Connection,
    pub(super) url: ServerUrl,
    /// The vector set.
    pub(super) key: String,
    pub(super) dimension: usize,
    /// Train rows: every id answered must be below.
    pub(super) rows: usize,
    /// The filter attributes loaded, for filtered points.
    pub(super) attrs: Option<std::sync::Arc<crate::backend::filter::Attributes>>,
    pub(super) args: QueryArgs,
    pub(super) blob: Vec<u8>,
}

/// A point's query args as VSIM options.
#[derive(Debug, Clone, Default)]
pub struct QueryArgs {
    /// `EF`, `None` for Redis' default.
    pub ef: Option<i64>,
    /// The `FILTER` expression of a filtered point.
    pub filter: Option<String>,
    /// `FILTER-EF`, `None` for Redis' default.
    pub filter_ef: Option<i64>,
}

impl QueryArgs {
    /// Validate `query_args` and turn a filter into its expression over `attrs`.
    pub fn of(
        query_args: &Params,
        attrs: Option<&crate::backend::filter::Attributes>,
    ) -> Result<QueryArgs> {
        let args = ALGORITHM.query_args(query_args)?;
        Ok(QueryArgs {
            ef: args.int("ef_search"),
            filter: super::filter::expression(&args, attrs)?,
            filter_ef: args.int(super::filter::FILTER_EF.name),
        })
    }
}

/// The VSIM command for `query` (as FP32 bytes in `blob`).
pub(super) fn vsim(key: &str, blob: &[u8], k: usize, q: &QueryArgs) -> redis::Cmd {
    let mut cmd = redis::cmd("VSIM");
    cmd.arg(key).arg("FP32").arg(blob).arg("COUNT").arg(k);
    if let Some(ef) = q.ef {
        cmd.arg("EF").arg(ef);
    }
    if let Some(f) = &q.filter {
        cmd.arg("FILTER").arg(f);
        if let Some(n) = q.filter_ef {
            cmd.arg("FILTER-EF").arg(n);
        }
    }
    cmd
}

/// Element names as train row ids; a name that is not a row id of this table is an error.
pub(super) fn parse_ids(
    names: &[Vec<u8>],
    rows: usize,
    key: &str,
    ids: &mut Vec<i64>,
) -> Result<()> {
    for name in names {
        let id = std::str::from_utf8(name)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .filter(|&id| id >= 0 && (id as u64) < rows as u64)
            .ok_or_else(|| {
                Error::Backend(format!(
                    "redis: VSIM on {key} answered the element '{}', which is not a train row id \
                     (0..{rows}): the vector set holds elements annbench did not add",
                    String::from_utf8_lossy(name)
                ))
            })?;
        ids.push(id);
    }
    Ok(())
}

/// `query` as little-endian FP32 bytes in `blob`.
pub(super) fn fp32(query: &[f32], blob: &mut Vec<u8>) {
    blob.clear();
    blob.extend(query.iter().flat_map(|x| x.to_le_bytes()));
}

impl Searcher for RedisSearcher {
    fn set_query_args(&mut self, query_args: &Params) -> Result<()> {
        self.args = QueryArgs::of(query_args, self.attrs.as_deref())?;
        Ok(())
    }

    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()> {
        ids.clear();
        check_query(query, self.dimension)?;
        fp32(query, &mut self.blob);
        let names: Vec<Vec<u8>> = vsim(&self.key, &self.blob, k.max(1), &self.args)
            .query(&mut self.conn)
            .map_err(|e| redis_error(&self.url, "querying the vector set (VSIM)", e))?;
        parse_ids(&names, self.rows, &self.key, ids)
    }

    fn process_hint(&mut self) -> ProcessHint {
        super::cost::PROCESS
    }

    fn statements(&mut self) -> Statements {
        super::cost::statements(&mut self.conn)
    }
}
