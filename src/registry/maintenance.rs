//! The maintenance operations of a streaming runbook's table (`annbench stream`), which each
//! database declares it runs ([`super::DatabaseDecl::stream_maintenance`]): a runbook's
//! maintenance steps are checked against the declaration before any server work.

/// A maintenance step of a runbook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaintenanceOp {
    /// PostgreSQL's `VACUUM`: dead tuples out of the table and its indexes.
    Vacuum,
    /// Rebuild the vector index from the rows now in the table.
    Reindex,
    /// MariaDB's `OPTIMIZE TABLE` (for InnoDB: recreate the table and its indexes, then
    /// analyze).
    Optimize,
}

impl MaintenanceOp {
    /// Every operation, in the order errors list them.
    pub const ALL: [MaintenanceOp; 3] = [
        MaintenanceOp::Vacuum,
        MaintenanceOp::Reindex,
        MaintenanceOp::Optimize,
    ];

    /// The name runbooks and errors use: `vacuum`, `reindex`, `optimize`.
    pub fn name(self) -> &'static str {
        match self {
            MaintenanceOp::Vacuum => "vacuum",
            MaintenanceOp::Reindex => "reindex",
            MaintenanceOp::Optimize => "optimize",
        }
    }

    /// The operation called `name` (as [`name`](MaintenanceOp::name) spells it, any case).
    pub fn parse(name: &str) -> crate::Result<MaintenanceOp> {
        MaintenanceOp::ALL
            .into_iter()
            .find(|op| op.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                crate::Error::Config(format!(
                    "unknown maintenance operation '{name}': use one of {}",
                    MaintenanceOp::ALL.map(|op| op.name()).join(", ")
                ))
            })
    }
}
