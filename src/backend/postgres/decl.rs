//! PostgreSQL's declaration: what the CLI, Python, URL parsing and server cost read about it,
//! and the parameters its pgvector algorithms share. Compiled as `registry::decls::postgres`
//! (see `src/registry/decls.rs`): it reads only the registry.

use crate::registry::{DatabaseDecl, ForksVars, MaintenanceOp, Param, ServerKind, SocketRule};

pub static DECL: DatabaseDecl = DatabaseDecl {
    key: "postgres",
    name: "PostgreSQL",
    flag: "--postgres",
    url_var: "ANNBENCH_POSTGRES_URL",
    schemes: &["postgres", "postgresql"],
    example_url: "postgres://user:password@127.0.0.1:5432/annbench",
    forks: Some(ForksVars {
        conn_args: "POSTGRES_CONN_ARGS",
        db_name: "POSTGRES_DB_NAME",
    }),
    server_commands: &["postgres", "postmaster"],
    // libpq's URL form names a socket directory as a percent-encoded host (`%2Frun%2Fpostgresql`).
    unix_socket: SocketRule::HostIsDirectory,
    no_restart: None,
    // Its stream table's `maintenance` (stream.rs) runs these.
    stream_maintenance: &[MaintenanceOp::Vacuum, MaintenanceOp::Reindex],
};

#[allow(non_upper_case_globals)]
impl ServerKind {
    /// PostgreSQL (named like the enum variant it replaced, which callers still spell).
    pub const Postgres: ServerKind = ServerKind::of(&DECL);
}

/// The build parameter every pgvector algorithm takes, applied to the build session only.
pub const MAINTENANCE_WORK_MEM: Param = Param::memory(
    "maintenance_work_mem",
    "memory for the index build, applied to the build session only",
)
.optional("the server's setting");

/// `hnsw.iterative_scan`: with a filter, scan more of the graph until enough rows match.
pub const ITERATIVE_SCAN: &str = "hnsw.iterative_scan";
/// `hnsw.max_scan_tuples`: the most tuples an iterative scan visits.
pub const MAX_SCAN_TUPLES: &str = "hnsw.max_scan_tuples";

/// The HNSW query arg `iterative_scan` (pgvector 0.8).
pub const ITERATIVE_SCAN_PARAM: Param = Param::choice(
    "iterative_scan",
    &["off", "relaxed_order", "strict_order"],
    "scan more of the graph while a filter leaves fewer than k rows (hnsw.iterative_scan, \
     pgvector 0.8)",
)
.optional("off")
.sets(ITERATIVE_SCAN);

/// The HNSW query arg `max_scan_tuples` (pgvector 0.8).
pub const MAX_SCAN_TUPLES_PARAM: Param = Param::int(
    "max_scan_tuples",
    1,
    i32::MAX as i64,
    "most tuples an iterative scan visits (hnsw.max_scan_tuples, pgvector 0.8)",
)
.optional("the server's hnsw.max_scan_tuples (20000)")
.sets(MAX_SCAN_TUPLES);
