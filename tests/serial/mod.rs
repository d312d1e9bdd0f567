//! One test at a time, for test files that open HDF5 files in the test process while other
//! tests start `annbench` processes.
//!
//! A child process started while another test holds an HDF5 file open inherits the
//! descriptor (the HDF5 library does not open files close-on-exec), and with it the file's
//! lock: until the child exits, an `annbench` that writes that file fails with "unable to lock
//! file" (errno 11). Files whose tests take this guard run one test at a time.

use std::sync::{Mutex, MutexGuard};

/// Held for the whole test.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
