//! The memory plan of a pgvector HNSW build: the graph pgvector keeps in
//! `maintenance_work_mem` (build argument, else the session default) while it builds.

use super::build::parse_build_args;
use super::{PgVector, Variant, pg_err};
use crate::backend::plan::{self, MemoryPlan, setting_for};
use crate::params::Params;
use crate::{Error, Result};

pub(super) fn plan(
    b: &mut PgVector,
    rows: usize,
    dimension: usize,
    args: &Params,
) -> Result<MemoryPlan> {
    let a = parse_build_args(args)?;
    let value_bytes = match b.variant {
        Variant::Vector => 4,
        Variant::HalfvecIndex | Variant::HalfvecColumn => 2,
    };
    let need = plan::pgvector_graph_bytes(rows, dimension, value_bytes, a.m as usize);
    let (text, setting) = match &a.maintenance_work_mem {
        Some(m) => (m.clone(), "maintenance_work_mem (build argument)"),
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
            "pgvector: cannot read maintenance_work_mem '{text}' as a size"
        ))
    })?;
    let want = setting_for(need);
    Ok(MemoryPlan {
        algorithm: b.variant.algorithm().to_string(),
        what: format!(
            "the HNSW graph of {rows} x {dimension} (M={}) during the build",
            a.m
        ),
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
    })
}
