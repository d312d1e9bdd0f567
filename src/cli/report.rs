//! `annbench table | export | compare`

use clap::Args;

#[derive(Debug, Args)]
pub struct TableArgs {
    /// Dataset name.
    #[arg(long)]
    pub dataset: String,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Dataset name.
    #[arg(long)]
    pub dataset: String,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Label of the base run.
    #[arg(long)]
    pub base: String,
    /// Label of the run compared with the base.
    #[arg(long)]
    pub me: String,
}

pub fn table(_args: TableArgs) -> crate::Result<()> {
    Err(crate::Error::Config("not implemented yet".into()))
}

pub fn export(_args: ExportArgs) -> crate::Result<()> {
    Err(crate::Error::Config("not implemented yet".into()))
}

pub fn compare(_args: CompareArgs) -> crate::Result<()> {
    Err(crate::Error::Config("not implemented yet".into()))
}
