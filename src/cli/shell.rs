//! `annbench completions SHELL` and `annbench man`: shell completion scripts and a roff man
//! page generated from the same clap definition as `--help` (clap_complete, clap_mangen), so
//! they never drift from the flags.

use super::Cli;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The completion script for `shell` on standard output, e.g.
/// `annbench completions bash > ~/.local/share/bash-completion/completions/annbench`.
pub fn completions(args: CompletionsArgs) -> crate::Result<()> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "annbench", &mut buf);
    write_stdout(&buf)
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command into this directory (annbench.1, annbench-run.1, ...)
    /// instead of annbench.1 on standard output.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The man page (roff): `annbench man > annbench.1; man ./annbench.1`, or with `--dir` one
/// page per command (`man annbench-run`).
pub fn man(args: ManArgs) -> crate::Result<()> {
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| crate::Error::io(&dir, "cannot write man pages to", e))?;
            let mut cmd = Cli::command().disable_help_subcommand(true);
            cmd.build();
            write_pages(cmd, &dir)?;
            super::out::outln!("wrote the man pages to {}", dir.display());
            Ok(())
        }
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut buf)
                .map_err(|e| crate::Error::io(Path::new("<man page>"), "cannot render", e))?;
            write_stdout(&buf)
        }
    }
}

/// One page per command and visible subcommand, as `clap_mangen::generate_to` names them,
/// each written atomically (an old page stays whole when a write fails).
fn write_pages(cmd: clap::Command, dir: &Path) -> crate::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub.clone(), dir)?;
    }
    let man = clap_mangen::Man::new(cmd);
    let path = dir.join(man.get_filename());
    let mut buf = Vec::new();
    man.render(&mut buf)
        .map_err(|e| crate::Error::io(&path, "cannot render", e))?;
    crate::fsutil::write_atomic(&path, &buf, "a man page")
}

fn write_stdout(bytes: &[u8]) -> crate::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(crate::Error::io(Path::new("<stdout>"), "cannot write", e))
        }
        _ => Ok(()),
    }
}
