//! The sweep: load once per (dataset, backend), build once per build point, run every query
//! point against it; write each point as soon as it is measured.
