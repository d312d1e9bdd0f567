//! MariaDB's declaration: what the CLI, Python, URL parsing and server cost read about it.

use crate::registry::{DatabaseDecl, ForksVars, ServerKind, SocketRule};

pub static DECL: DatabaseDecl = DatabaseDecl {
    key: "mariadb",
    name: "MariaDB",
    flag: "--mariadb",
    url_var: "ANNBENCH_MARIADB_URL",
    schemes: &["mysql", "mariadb"],
    example_url: "mysql://user:password@127.0.0.1:3306/annbench",
    forks: Some(ForksVars {
        conn_args: "MARIADB_CONN_ARGS",
        db_name: "MARIADB_DB_NAME",
    }),
    server_commands: &["mariadbd", "mysqld"],
    unix_socket: SocketRule::QueryParameter("socket"),
};

#[allow(non_upper_case_globals)]
impl ServerKind {
    /// MariaDB (named like the enum variant it replaced, which callers still spell).
    pub const MariaDb: ServerKind = ServerKind::of(&DECL);
}
