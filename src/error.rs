//! One error type for the library. Each variant is a category (the Python layer maps each to
//! an exception subclass of `annbench.AnnbenchError`); the message names the input and the fix.

use std::path::Path;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors a user can act on. Messages never contain passwords.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A missing, malformed or invalid dataset file, or an unknown dataset name.
    #[error("{0}")]
    Dataset(String),
    /// A bad YAML file, grid point, CLI option or parameter.
    #[error("{0}")]
    Config(String),
    /// Connecting to a server, or the server itself: unreachable, too old, wrong password,
    /// missing extension or privilege, died mid-sweep.
    #[error("{0}")]
    Server(String),
    /// A backend could not load, build or query (e.g. the vector index is not used).
    #[error("{0}")]
    Backend(String),
    /// Reading or writing the result store.
    #[error("{0}")]
    Results(String),
    /// A file-system or network operation, with what was being done.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// The user interrupted the run (Ctrl-C); what was measured is on disk.
    #[error("interrupted")]
    Interrupted,
    /// `annbench history --fail-on regression`: the newest run lies after a regression (exit
    /// status 1, the gate's answer rather than a failure to run).
    #[error("{0}")]
    Regression(String),
}

impl Error {
    /// An I/O error on `path`, e.g. `Error::io(path, "cannot open", err)`.
    pub fn io(path: &Path, what: &str, source: std::io::Error) -> Self {
        Error::Io {
            context: format!("{what} {}", path.display()),
            source,
        }
    }

    /// This error with `what` in front of its message (`server 'pg18': ...`), of the same
    /// category; an interruption stays one.
    pub fn with_context(self, what: &str) -> Self {
        match self {
            Error::Dataset(m) => Error::Dataset(format!("{what}: {m}")),
            Error::Config(m) => Error::Config(format!("{what}: {m}")),
            Error::Server(m) => Error::Server(format!("{what}: {m}")),
            Error::Backend(m) => Error::Backend(format!("{what}: {m}")),
            Error::Results(m) => Error::Results(format!("{what}: {m}")),
            Error::Io { context, source } => Error::Io {
                context: format!("{what}: {context}"),
                source,
            },
            Error::Interrupted => Error::Interrupted,
            Error::Regression(m) => Error::Regression(m),
        }
    }
}
