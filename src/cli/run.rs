//! `annbench run ...`

use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Dataset name or HDF5 file.
    #[arg(long)]
    pub dataset: String,
}

pub fn run(_args: RunArgs) -> crate::Result<()> {
    Err(crate::Error::Config("not implemented yet".into()))
}
