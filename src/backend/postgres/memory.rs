//! The memory plan of a pgvector HNSW build: the graph pgvector keeps in
//! `maintenance_work_mem` (build argument, else the session default) while it builds.

use super::PgBackend;
use super::errors::pg_err;
use crate::backend::plan::{self, MemoryPlan, setting_for};
use crate::params::Params;
use crate::{Error, Result};

/// `None` for indexes without a plan (see [`super::PgIndex::graph_value_bytes`]).
pub(super) fn plan(
    b: &mut PgBackend,
    rows: usize,
    dimension: usize,
    params: &Params,
) -> Result<Option<MemoryPlan>> {
    let Some(value_bytes) = b.index.graph_value_bytes() else {
        return Ok(None);
    };
    let algo = b.index.algorithm();
    let args = algo.build_args(params, rows)?;
    let m = args.required_int("M")?;
    let need = plan::pgvector_graph_bytes(rows, dimension, value_bytes, m as usize);
    let (text, setting) = match args.text("maintenance_work_mem") {
        Some(m) => (m.to_string(), "maintenance_work_mem (build argument)"),
        None => {
            // What a build session gets after RESET: the server's, role's or database's value.
            let row = b
                .client
                .query_one(
                    "SELECT reset_val || coalesce(unit, '') FROM pg_settings \
                     WHERE name = 'maintenance_work_mem'",
                    &[],
                )
                .map_err(|e| pg_err(e, "reading maintenance_work_mem"))?;
            (row.get::<_, String>(0), "maintenance_work_mem")
        }
    };
    let setting_bytes = plan::parse_pg_memory(&text).ok_or_else(|| {
        Error::Backend(format!(
            "{}: cannot read maintenance_work_mem '{text}' as a size",
            algo.name
        ))
    })?;
    let want = setting_for(need);
    Ok(Some(MemoryPlan {
        algorithm: algo.name.to_string(),
        what: format!("the HNSW graph of {rows} x {dimension} (M={m}) during the build"),
        need_bytes: need,
        setting: setting.to_string(),
        setting_bytes,
        consequence: "pgvector switches to a much slower build on disk once the graph fills it \
                      (NOTICE \"hnsw graph no longer fits into maintenance_work_mem\")"
            .into(),
        fix: format!(
            "Pass --build maintenance_work_mem={want}, or on the server ALTER SYSTEM SET \
             maintenance_work_mem = '{want}'; SELECT pg_reload_conf(); (with that much free RAM)"
        ),
        enforced: false,
    }))
}
