//! One step of a runbook: its operation and annbench's extensions (rate, batch, searches
//! during, maintenance). Plain data, read by the runbook's reader and checks, the live set,
//! the truth and the executor.

use std::ops::Range;

/// One step of a runbook.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The step key in the file (1-based, consecutive).
    pub number: u32,
    /// What the step does.
    pub op: Operation,
    /// Target rows per second of a write step (annbench extension).
    pub rate: Option<f64>,
    /// Rows per statement of a write step (annbench extension).
    pub batch: Option<usize>,
    /// Searches run while a write step runs (annbench extension).
    pub during: Option<During>,
}

/// The operation of a step. Ranges are half-open, `[start, end)`.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// Insert train rows `[start, end)`, each under the tag equal to its row id.
    Insert { start: usize, end: usize },
    /// Delete tags `[start, end)`.
    Delete { start: usize, end: usize },
    /// Tag `tags.start + i` holds train row `ids.start + i` from now on (equal lengths).
    Replace {
        tags: Range<usize>,
        ids: Range<usize>,
    },
    /// Run the test queries; recall is measured against the live set.
    Search,
    /// Database maintenance (annbench extension), in the order given.
    Maintenance(Vec<Maintenance>),
}

/// A maintenance action; the executor maps each to its database's statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Maintenance {
    Vacuum,
    Reindex,
    Optimize,
}

/// Concurrent searches during a write step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct During {
    /// Search clients running while the step writes (>= 1).
    pub clients: usize,
}

impl Maintenance {
    /// Every action, in the order of the file format's documentation.
    pub const ALL: [Maintenance; 3] = [
        Maintenance::Vacuum,
        Maintenance::Reindex,
        Maintenance::Optimize,
    ];

    /// The name in a runbook file.
    pub fn as_str(self) -> &'static str {
        match self {
            Maintenance::Vacuum => "vacuum",
            Maintenance::Reindex => "reindex",
            Maintenance::Optimize => "optimize",
        }
    }

    /// The action named `name`, if any.
    pub fn parse(name: &str) -> Option<Maintenance> {
        Maintenance::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// The database operation a runbook's action names (each database declares the ones it runs:
/// [`crate::registry::DatabaseDecl::stream_maintenance`]).
impl From<Maintenance> for crate::registry::MaintenanceOp {
    fn from(m: Maintenance) -> Self {
        match m {
            Maintenance::Vacuum => Self::Vacuum,
            Maintenance::Reindex => Self::Reindex,
            Maintenance::Optimize => Self::Optimize,
        }
    }
}

impl Step {
    /// Step `number` doing `op`, without annbench's extensions (rate, batch, searches during).
    pub fn new(number: u32, op: Operation) -> Self {
        Step {
            number,
            op,
            rate: None,
            batch: None,
            during: None,
        }
    }
}

impl Operation {
    /// The `operation:` name.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Insert { .. } => "insert",
            Operation::Delete { .. } => "delete",
            Operation::Replace { .. } => "replace",
            Operation::Search => "search",
            Operation::Maintenance(_) => "maintenance",
        }
    }

    /// Whether the step writes rows (insert, delete, replace).
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Operation::Insert { .. } | Operation::Delete { .. } | Operation::Replace { .. }
        )
    }

    /// Rows the step writes (0 for search and maintenance).
    pub fn rows(&self) -> usize {
        match self {
            Operation::Insert { start, end } | Operation::Delete { start, end } => end - start,
            Operation::Replace { tags, .. } => tags.len(),
            Operation::Search | Operation::Maintenance(_) => 0,
        }
    }
}
