//! The `annbench` command: parses arguments, runs, prints one error chain.
fn main() -> std::process::ExitCode {
    annbench::cli::main(std::env::args_os())
}
