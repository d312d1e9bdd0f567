//! PostgreSQL's declaration: what the CLI, Python, URL parsing and server cost read about it.

use crate::registry::{DatabaseDecl, ForksVars, ServerKind, SocketRule};

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
};

#[allow(non_upper_case_globals)]
impl ServerKind {
    /// PostgreSQL (named like the enum variant it replaced, which callers still spell).
    pub const Postgres: ServerKind = ServerKind::of(&DECL);
}
