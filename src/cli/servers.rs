//! `annbench servers ...`

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum ServersCommand {
    /// Connect to each server and report version, vector support and settings.
    Check,
}

pub fn run(cmd: ServersCommand) -> crate::Result<()> {
    match cmd {
        ServersCommand::Check => Err(crate::Error::Config("not implemented yet".into())),
    }
}
