//! Printing that never panics. `println!` panics when standard output is a closed pipe
//! (`annbench datasets list | head -1`); these write until the reader goes away, then stay
//! quiet, and the command still finishes its work. Any other write error (a full disk behind
//! `> file`) is kept and reported once the command is done.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static VERBOSITY: AtomicU8 = AtomicU8::new(1);

/// `-q` / `-v`: how much progress a command prints (results, warnings and errors always).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet = 0,
    Normal = 1,
    Verbose = 2,
}

/// Set once by the command line.
pub fn set_verbosity(v: Verbosity) {
    VERBOSITY.store(v as u8, Ordering::Relaxed);
}

pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}
static STDOUT_ERROR: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Print a line to standard output (the `outln!` macro).
pub fn line(args: fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    // Control characters (a dataset name's escape sequence) shown, not obeyed; line breaks
    // kept, lines whole (JSON and listings are never cut).
    let text: String = args
        .to_string()
        .split('\n')
        .map(crate::terminal::escape)
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = std::io::stdout().lock();
    if let Err(e) = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
    {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            if let Ok(mut slot) = STDOUT_ERROR.lock() {
                slot.get_or_insert(e);
            }
        }
    }
}

/// Print a line to standard error (the `errln!` macro): errors, their causes, warnings and
/// progress lines, through [`crate::terminal::for_terminal`] (control characters escaped,
/// long lines cut). Write errors are ignored (nowhere to say).
pub fn err_line(args: fmt::Arguments<'_>) {
    let text = crate::terminal::for_terminal(&args.to_string());
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(text.as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

/// Flush standard output; the first write error other than a closed pipe, if any.
pub fn finish() -> Option<std::io::Error> {
    if !STDOUT_CLOSED.load(Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Some(e);
            }
        }
    }
    STDOUT_ERROR.lock().ok().and_then(|mut e| e.take())
}

/// `println!` that stops quietly at a closed pipe.
macro_rules! outln {
    () => { $crate::cli::out::line(format_args!("")) };
    ($($t:tt)*) => { $crate::cli::out::line(format_args!($($t)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($t:tt)*) => { $crate::cli::out::err_line(format_args!($($t)*)) };
}

pub(crate) use {errln, outln};
