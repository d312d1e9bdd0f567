//! Bulk loads over several connections: one thread per connection, the first error wins.

use crate::{Error, Result};

/// How a table was loaded, for the load report and metadata: the method, and the number of
/// connections when there were several (`COPY BINARY x2 connections`).
pub fn method_label(method: &str, connections: usize) -> String {
    if connections > 1 {
        format!("{method} x{connections} connections")
    } else {
        method.to_string()
    }
}

/// Run `work(i, conn)` for each of `conns` on its own thread and wait for all of them.
/// Returns the first error in connection order (a panicking thread is an error too).
pub fn on_each_connection<C: Send>(
    conns: Vec<C>,
    work: impl Fn(usize, C) -> Result<()> + Sync,
) -> Result<()> {
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, c)| s.spawn(move || work(i, c)))
            .collect();
        let mut first = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(Error::Backend("a load thread panicked".into())));
            if first.is_ok() {
                first = r;
            }
        }
        first
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_every_connection_and_keeps_the_first_error() {
        let ran = AtomicUsize::new(0);
        let r = on_each_connection(vec![0u8, 1, 2, 3], |i, c| {
            ran.fetch_add(1, Ordering::Relaxed);
            assert_eq!(i, usize::from(c));
            match i {
                1 | 3 => Err(Error::Backend(format!("conn {i} failed"))),
                _ => Ok(()),
            }
        });
        assert_eq!(ran.load(Ordering::Relaxed), 4);
        assert_eq!(
            r.unwrap_err().to_string(),
            Error::Backend("conn 1 failed".into()).to_string()
        );
    }
}
