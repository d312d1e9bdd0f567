//! `cli_main`: the Rust command line run in-process, for the `annbench` console script.

use pyo3::prelude::*;
use std::process::ExitCode;

/// Runs `annbench` with `argv` (program name first, like `sys.argv`) and returns the exit
/// status. Output and errors go to the process's stdout/stderr exactly as the binary's do.
/// The GIL is released while the command runs.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    let code = py.detach(move || crate::cli::main(argv));
    exit_status(code)
}

/// `ExitCode` hides its value but compares equal to `ExitCode::from(n)` on Unix.
fn exit_status(code: ExitCode) -> i32 {
    if code == ExitCode::SUCCESS {
        return 0;
    }
    (1..=u8::MAX)
        .find(|n| code == ExitCode::from(*n))
        .map_or(1, i32::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_round_trip() {
        assert_eq!(exit_status(ExitCode::SUCCESS), 0);
        assert_eq!(exit_status(ExitCode::FAILURE), 1);
        assert_eq!(exit_status(ExitCode::from(2)), 2);
        assert_eq!(exit_status(ExitCode::from(130)), 130);
    }
}
