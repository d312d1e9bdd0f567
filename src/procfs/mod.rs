//! Linux `/proc`, through the `procfs` crate: readers of CPU ticks, memory, storage I/O and
//! processes ([`procs`]), the block device of a server's data directory and its counters
//! ([`storage`]), and locating the database server processes behind a connection
//! ([`locate`]). Below the databases and the
//! runner, and depends on neither: the server process names are passed in by the callers
//! (the backends' `cost::all_server_commands`, from the databases' declarations).

pub mod locate;
pub mod procs;
pub mod storage;

pub use locate::{ProcessHint, Procs, describe_local, locate, locate_at, only_root};
