//! Locating the local server processes behind a connection's [`ProcessHint`] among the
//! servers this process is connected to ([`procs::connected_servers`]), for server cost per
//! pass (`runner::server_cost`) and `servers check`.

use super::procs;

/// Which local processes serve a connection (the runner checks that they belong to a server
/// this process is connected to before it reads them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessHint {
    /// Not a server connection (in-process backends).
    None,
    /// The one process serving this connection, e.g. PostgreSQL's `pg_backend_pid()`; its
    /// server's exited children (parallel workers) count too.
    Backend(i32),
    /// Every thread of the server process with one of these commands (MariaDB: one process,
    /// one thread per connection plus background threads).
    WholeServer(&'static [&'static str]),
}

/// The server processes a pass's cost is read from.
#[derive(Debug, Clone)]
pub enum Procs {
    /// PostgreSQL: the clients' backends, and the top server process whose exited children
    /// count too.
    Backends { pids: Vec<i32>, root: i32 },
    /// Every thread of one process (MariaDB).
    Whole { pid: i32 },
}

/// The processes behind `hints`, with a description for results, or a note why none.
/// `servers`: the commands of the database server processes.
pub fn locate(hints: &[ProcessHint], servers: &[&str]) -> Result<(Procs, String), String> {
    locate_at(hints, servers, None)
}

/// [`locate`] among the servers this process reaches on TCP `port` (when given): the one
/// server of several of a kind that a lane of an interleaved run is connected to.
pub fn locate_at(
    hints: &[ProcessHint],
    servers: &[&str],
    port: Option<u16>,
) -> Result<(Procs, String), String> {
    let (roots, unseen) = procs::connected_servers_at(servers, port);
    let hidden = if unseen {
        " (some server's processes belong to another user: run annbench as that user or root)"
    } else {
        " (a remote server, a container's own pid namespace, or processes of another user)"
    };
    let mut pids = Vec::new();
    let mut root_of_all = None;
    for hint in hints {
        match *hint {
            ProcessHint::None => {}
            ProcessHint::WholeServer(commands) => {
                let pid = only_root(&roots, commands)?;
                let name = procs::command(pid).unwrap_or_default();
                return Ok((
                    Procs::Whole { pid },
                    format!("/proc: {name} pid {pid}, all threads"),
                ));
            }
            ProcessHint::Backend(pid) => {
                let root = roots
                    .iter()
                    .copied()
                    .find(|&r| procs::process_tree(r).contains(&pid))
                    .ok_or_else(|| {
                        format!(
                            "server CPU, context switches and storage I/O unavailable: backend pid {pid} is \
                             not a process of a local server this client is connected to{hidden}"
                        )
                    })?;
                if root_of_all.is_some_and(|r| r != root) {
                    return Err(
                        "server CPU and storage I/O unavailable: the clients' backends belong to \
                                different servers"
                            .into(),
                    );
                }
                root_of_all = Some(root);
                pids.push(pid);
            }
        }
    }
    let root = root_of_all
        .ok_or("server CPU and storage I/O unavailable: no server process".to_string())?;
    let list: Vec<String> = pids.iter().map(i32::to_string).collect();
    let source = format!(
        "/proc: backend pid(s) {} of server pid {root}, plus its children that exited \
         during the pass (parallel workers)",
        list.join(", ")
    );
    Ok((Procs::Backends { pids, root }, source))
}

/// The one connected server whose top process runs one of `commands`.
pub fn only_root(
    roots: &std::collections::BTreeSet<i32>,
    commands: &[&str],
) -> Result<i32, String> {
    let found: Vec<i32> = roots
        .iter()
        .copied()
        .filter(|&r| procs::command(r).is_some_and(|c| commands.contains(&c.as_str())))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!(
            "server CPU, context switches and storage I/O unavailable: no local {} process serves this \
             client's connections (a remote server, a container's own pid namespace, or \
             processes of another user)",
            commands.join("/")
        )),
        _ => Err(format!(
            "server CPU and storage I/O unavailable: this client is connected to {} local {} servers and \
             cannot tell which one serves the queries",
            found.len(),
            commands.join("/")
        )),
    }
}

/// Whether the process behind `hint` is readable, for `servers check`: `available (...)` or
/// `unavailable: why`. `servers`: as for [`locate`].
pub fn describe_local(hint: ProcessHint, servers: &[&str]) -> String {
    match locate(&[hint], servers) {
        Ok((_, source)) => format!(
            "available: server CPU, context switches and storage I/O per query from {}",
            source.trim_start_matches("/proc: ")
        ),
        Err(note) => format!("unavailable: {note}"),
    }
}
