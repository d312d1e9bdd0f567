//! The server URL flags, one per registered database (`--mariadb URL`, `--postgres URL`, ...):
//! made from the registry at start-up, so a new database gets its flag without an edit here.

use crate::backend::{BackendOptions, databases};
use crate::connect::ServerKind;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

/// The URLs given on the command line, by database: one plain URL, or `NAME=URL` values.
#[derive(Debug, Clone, Default)]
pub struct ServerUrls(pub Vec<(ServerKind, Vec<String>)>);

impl ServerUrls {
    /// `opts` with these URLs (named servers checked: unique names, not mixed with a plain URL).
    pub fn apply(self, mut opts: BackendOptions) -> crate::Result<BackendOptions> {
        for (kind, values) in self.0 {
            opts.add_urls(kind, &values)?;
        }
        Ok(opts)
    }
}

impl FromArgMatches for ServerUrls {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let urls = databases()
            .into_iter()
            .filter_map(|db| {
                let urls = matches.get_many::<String>(db.kind.key())?;
                Some((db.kind, urls.cloned().collect()))
            })
            .collect();
        Ok(ServerUrls(urls))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for ServerUrls {
    fn augment_args(cmd: Command) -> Command {
        databases().into_iter().fold(cmd, |cmd, db| {
            cmd.arg(
                Arg::new(db.kind.key())
                    .long(db.kind.key())
                    .value_name("[NAME=]URL")
                    .action(ArgAction::Append)
                    .help(help(db.kind)),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

/// `MariaDB URL, e.g. mysql://...; default: $ANNBENCH_MARIADB_URL, then ...`.
fn help(kind: ServerKind) -> String {
    let decl = kind.decl();
    let forks = decl.forks.map_or(String::new(), |f| {
        format!(", then ${} + ${}", f.conn_args, f.db_name)
    });
    format!(
        "{} URL, e.g. {}. Default: ${}{forks}, then the server scripts/databases.sh started. \
         NAME=URL names a server (NAME: letters, digits, '.', '_', '-'): its results get NAME \
         as label. `run` takes several (repeat the flag) and runs them interleaved in one \
         sweep, so that `annbench compare` pairs their passes; `stream` takes one.",
        decl.name, decl.example_url, decl.url_var
    )
}
