//! Streaming workloads: big-ann-benchmarks runbooks (insert, delete, replace and search steps
//! over a dataset's train rows), the rows live at each step and the exact ground truth of each
//! search step over them. No database here: the executor (`annbench stream`) runs the steps.
//!
//! - [`runbook`]: the model, the reader of big-ann's YAML format (read as is) and its checks;
//! - [`live`]: which tags are live and which train row each holds;
//! - [`truth`]: exact top-k over the live set at every search step, incremental, cached;
//! - [`generate`]: seeded generators of runbooks for any dataset.
//!
//! # The format
//!
//! ```yaml
//! random-xs:                 # keyed by dataset name (pick another with --entry KEY)
//!   max_pts: 10000           # most rows live at once (optional: the peak when absent)
//!   1: {operation: insert, start: 0, end: 10000}   # train rows [start, end), tag = row id
//!   2: {operation: search}
//!   3: {operation: delete, start: 0, end: 5000}    # tags [start, end)
//!   4: {operation: replace, tags_start: 0, tags_end: 100, ids_start: 9000, ids_end: 9100}
//!   5: {operation: search}
//!   gt_url: none             # ignored
//! ```
//!
//! Each train row has an id (its row number) that never changes, and a tag: an insert gives
//! each row the tag equal to its id; a replace makes tag `t` hold row
//! `ids_start + (t - tags_start)` from then on; a delete removes tags; a search returns tags.
//! Steps are numbered 1, 2, 3, ... (YAML integers, in any order in the file, run in numeric
//! order; big-ann-benchmarks stops reading at the first missing number, so a gap is an error).
//!
//! # annbench extensions
//!
//! Keys big-ann-benchmarks' reader ignores, so such a runbook still runs there:
//! - `rate: R` (target rows per second) and `batch: B` (rows per statement) on an insert,
//!   delete or replace step;
//! - `during: {clients: N}` on an insert, delete or replace step: N clients search while the
//!   step writes.
//!
//! And one it does not: `operation: maintenance` with `what: vacuum | reindex | optimize` (one
//! or a list; the executor maps each to its database's statement). big-ann-benchmarks raises
//! on an unknown operation, so a runbook with maintenance steps runs in annbench only;
//! `annbench runbook generate` writes them only when asked (`--maintenance-every N`).

pub mod generate;
mod kmeans;
pub mod live;
pub mod runbook;
pub mod step;
pub mod truth;
pub mod truth_cache;

pub use live::LiveSet;
pub use runbook::Runbook;
pub use step::{During, Maintenance, Operation, Step};
pub use truth::StepTruth;
