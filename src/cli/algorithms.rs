//! `annbench algorithms`: every registered algorithm with its parameters, ranges and rules.

use crate::backend::describe;
use crate::{Error, Result};
use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct AlgorithmsArgs {
    /// Output format (markdown is docs/algorithms.md).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Markdown,
    Json,
}

pub fn run(args: AlgorithmsArgs) -> Result<()> {
    let text = match args.format {
        Format::Text => describe::text(),
        Format::Markdown => describe::markdown(),
        Format::Json => serde_json::to_string_pretty(&describe::algorithms())
            .map_err(|e| Error::Results(format!("cannot write JSON: {e}")))?,
    };
    print!("{text}");
    if matches!(args.format, Format::Json) {
        println!();
    }
    Ok(())
}
