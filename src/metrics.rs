//! Pure metric functions (no I/O): recall (k-nn and epsilon rules of ann-benchmarks), QPS,
//! latency percentiles.
