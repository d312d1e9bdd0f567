//! `annbench datasets ...`

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DatasetsCommand {
    /// Known dataset names, and which are present locally.
    List,
}

pub fn run(cmd: DatasetsCommand) -> crate::Result<()> {
    match cmd {
        DatasetsCommand::List => Err(crate::Error::Config("not implemented yet".into())),
    }
}
