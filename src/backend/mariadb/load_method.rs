//! The ways rows can be sent to MariaDB ([`LoadMethod`]): chosen by the loader (`load`), carried
//! out chunk by chunk by `load_send`.

/// How rows are sent to MariaDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadMethod {
    /// A prepared `INSERT ... VALUES (?, ?)` executed with an array of rows per round trip:
    /// MariaDB's bulk binary protocol (`COM_STMT_BULK_EXECUTE`), as Connector/C and
    /// mariadb-connector-python's `executemany` use it. Vectors travel as raw bytes, so the
    /// server neither parses nor converts them: the least server CPU per row of all methods,
    /// and the default.
    #[default]
    Bulk,
    /// A prepared multi-row `INSERT ... VALUES (?, ?), (?, ?), ...` with binary parameters,
    /// [`PREPARED_ROWS`] rows per execution (COM_STMT_EXECUTE).
    PreparedMultiRow,
    /// Multi-row `INSERT ... VALUES (id, X'..'), ...` text statements: the server parses
    /// twice the vector bytes as hex.
    InsertHex,
    /// `LOAD DATA LOCAL INFILE` of raw little-endian f32 bytes, backslash-escaped.
    LoadDataBinary,
    /// One prepared `INSERT ... VALUES (?, ?)` per row, autocommit: the naive baseline.
    InsertRowByRow,
}

/// Rows per statement of [`LoadMethod::PreparedMultiRow`].
pub const PREPARED_ROWS: usize = 200;

impl LoadMethod {
    /// Every method, default first (benchmarks and tests run them all).
    pub const ALL: [LoadMethod; 5] = [
        LoadMethod::Bulk,
        LoadMethod::PreparedMultiRow,
        LoadMethod::InsertHex,
        LoadMethod::LoadDataBinary,
        LoadMethod::InsertRowByRow,
    ];

    /// The method's name, recorded with the results as the load method.
    pub fn label(self) -> &'static str {
        match self {
            LoadMethod::Bulk => "bulk binary INSERT (COM_STMT_BULK_EXECUTE)",
            LoadMethod::PreparedMultiRow => "prepared multi-row INSERT (binary parameters)",
            LoadMethod::InsertHex => "multi-row INSERT (hex literals)",
            LoadMethod::LoadDataBinary => "LOAD DATA LOCAL INFILE (binary)",
            LoadMethod::InsertRowByRow => "row-by-row prepared INSERT",
        }
    }
}
