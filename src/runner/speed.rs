//! How fast the CPU and its memory are right now: a fixed piece of work timed in the thread's
//! own CPU time.
//!
//! On a virtual machine the speed of a core changes by tens of percent from minute to minute
//! (noisy neighbours on the host sharing caches and memory bandwidth, a busy sibling
//! hyperthread, frequency changes) without any steal time or other process showing it. A
//! point measured during such a stretch is slower for a reason that has nothing to do with the
//! database, and two runs of the same grid differ by it. Thread CPU time leaves out preemption
//! and waiting, so the probe moves with the speed of the core and memory it used, not with how
//! busy the machine was.
//!
//! The work is a chain of dependent loads through a 16 MiB table (larger than a virtual
//! machine's share of the last-level cache, so most loads go to memory, as an index's pages
//! do) mixed with integer and floating-point arithmetic. Each repetition continues the chain
//! where the last one stopped, so no repetition finds its lines cached by the one before;
//! the fastest of a few repetitions counts, which drops an interrupt landing in one of them.

use std::hint::black_box;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Repetitions per probe; the fastest counts.
const REPEATS: usize = 5;
/// Dependent loads of one repetition: about 1 ms of CPU with most of them from memory.
const STEPS: usize = 10_000;
/// The table the loads walk: 2^22 u32 = 16 MiB.
const TABLE: usize = 1 << 22;

/// Where the chain stopped: the next probe goes on from there.
static AT: AtomicUsize = AtomicUsize::new(0);

/// CPU microseconds the fixed work took (the fastest of [`REPEATS`]), or `None` where the
/// thread's CPU clock cannot be read. The first call also builds the table (tens of ms).
pub fn probe() -> Option<f64> {
    let table = table();
    let mut at = AT.load(Ordering::Relaxed);
    let mut best: Option<f64> = None;
    for _ in 0..REPEATS {
        let start = thread_cpu_ns()?;
        let (next, mix) = work(table, at);
        black_box(mix);
        let end = thread_cpu_ns()?;
        at = next;
        let us = end.saturating_sub(start) as f64 / 1e3;
        best = Some(best.map_or(us, |b| b.min(us)));
    }
    AT.store(at, Ordering::Relaxed);
    best
}

/// A pseudo-random permutation that is one cycle through the table (Sattolo's shuffle), so
/// every load depends on the last and the chain never repeats early.
fn table() -> &'static [u32] {
    static TABLE_CELL: OnceLock<Vec<u32>> = OnceLock::new();
    TABLE_CELL.get_or_init(|| {
        let mut next: Vec<u32> = (0..TABLE as u32).collect();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for i in (1..TABLE).rev() {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let j = (state >> 33) as usize % i;
            next.swap(i, j);
        }
        next
    })
}

/// [`STEPS`] dependent loads from `at`, with arithmetic on each; returns where it stopped.
fn work(table: &[u32], mut at: usize) -> (usize, (u64, f64)) {
    let mut hash = 0u64;
    let mut sum = 0.0f64;
    for step in 0..STEPS {
        at = table[at] as usize;
        hash = (hash ^ at as u64).wrapping_mul(0x100_0000_01B3);
        sum = sum.mul_add(0.999_999, (hash >> 40) as f64 * 1e-9 + step as f64);
    }
    (at, (hash, sum))
}

fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_a_positive_cpu_time() {
        let us = probe().expect("Linux has a thread CPU clock");
        assert!(us > 0.0 && us < 1e6, "{us} us");
    }

    #[test]
    fn the_table_is_one_cycle_through_every_slot() {
        let t = table();
        let mut seen = vec![false; TABLE];
        let mut at = 0usize;
        for _ in 0..TABLE {
            assert!(!seen[at], "slot {at} visited twice");
            seen[at] = true;
            at = t[at] as usize;
        }
        assert_eq!(at, 0);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn each_probe_goes_on_along_the_chain() {
        probe();
        let after_one = AT.load(Ordering::Relaxed);
        probe();
        assert_ne!(AT.load(Ordering::Relaxed), after_one);
    }
}
