//! Every MariaDB load method against the real server: the vectors read back bit-identical.
//! These tests fail, never skip, when no server is configured.

use annbench::Metric;
use annbench::backend::mariadb::MariaDb;
use annbench::backend::mariadb::load::{CHUNK_BYTES, LoadMethod, load_rows};
use annbench::backend::mariadb::server::connect as connect_mariadb;
use annbench::backend::{Backend, BackendOptions, TableSpec};
use annbench::connect::{ServerKind, ServerUrl, server_url};
use annbench::dataset::rng::Rng;
use mysql::prelude::Queryable;
use ndarray::Array2;

const DIM: usize = 1024;

fn url() -> ServerUrl {
    server_url(ServerKind::MariaDb, None)
        .unwrap_or_else(|e| panic!("MariaDB tests need a server: {e}"))
}

/// Vectors whose bytes include everything a loader could mangle: NUL, tab, newline, CR,
/// backslash, quotes, Ctrl-Z, `%` and `_`, 0x80 and 0xFF, so -0.0, subnormals and large
/// values, all within MariaDB's range. Rows span three chunks, so two connections share the work.
fn tricky(rows: usize) -> Array2<f32> {
    const BYTES: [u8; 14] = [
        0x00, 0x09, 0x0A, 0x0D, 0x5C, 0x27, 0x22, 0x1A, 0x25, 0x5F, 0x80, 0xFF, 0x7F, 0x30,
    ];
    let mut rng = Rng::new(5);
    Array2::from_shape_fn((rows, DIM), |_| {
        let mut b = [0u8; 4];
        for x in &mut b {
            *x = if rng.uniform() < 0.7 {
                BYTES[rng.below(BYTES.len())]
            } else {
                rng.below(256) as u8
            };
        }
        let v = f32::from_le_bytes(b);
        // Below 2^32 in magnitude (MariaDB refuses vectors whose squared length overflows a
        // float): clear the exponent's top bits where needed.
        if v.abs() < 4.3e9 {
            v
        } else {
            f32::from_le_bytes([b[0], b[1], b[2], b[3] & 0xCF])
        }
    })
}

fn fresh_table(conn: &mut mysql::Conn, table: &str) {
    conn.query_drop(format!("DROP TABLE IF EXISTS {table}"))
        .unwrap();
    conn.query_drop(format!(
        "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, v VECTOR({DIM}) NOT NULL) ENGINE=InnoDB"
    ))
    .unwrap();
}

#[test]
fn every_method_loads_the_vectors_bit_identical() {
    let rows = 2 * (CHUNK_BYTES / (DIM * 4)) + 57;
    let train = tricky(rows);
    let url = url();
    let mut conn = connect_mariadb(&url).unwrap();
    for method in LoadMethod::ALL {
        let table = "test_load_methods";
        fresh_table(&mut conn, table);
        let done = load_rows(&url, table, train.view(), method, 2)
            .unwrap_or_else(|e| panic!("{method:?}: {e}"));
        // The label is what the results record: it must be the method that ran.
        assert_eq!(
            done.method,
            format!("{} x2 connections", method.label()),
            "{method:?}"
        );
        assert!(done.seconds > 0.0);
        let back: Vec<(u32, Vec<u8>)> = conn
            .query(format!("SELECT id, v FROM {table} ORDER BY id"))
            .unwrap();
        assert_eq!(back.len(), rows, "{method:?}: row count");
        for (i, (id, bytes)) in back.iter().enumerate() {
            assert_eq!(*id as usize, i, "{method:?}: ids");
            let want: Vec<u8> = train.row(i).iter().flat_map(|x| x.to_le_bytes()).collect();
            assert!(
                *bytes == want,
                "{method:?}: row {i} differs from what was sent (first byte {} of {})",
                bytes
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(bytes.len()),
                want.len()
            );
        }
    }
    conn.query_drop("DROP TABLE test_load_methods").unwrap();
}

#[test]
fn the_backend_loads_with_the_bulk_protocol_by_default_and_records_it() {
    assert_eq!(LoadMethod::default(), LoadMethod::Bulk);
    let train = tricky(300);
    let opts = BackendOptions::default().with_url(ServerKind::MariaDb, url().expose().as_str());
    let mut b = MariaDb::connect(&opts).unwrap();
    let spec = TableSpec {
        dataset: "test-load-default".into(),
        metric: Metric::Euclidean,
        dimension: DIM,
    };
    b.drop_tables(&spec.dataset).unwrap();
    let r = b.load(&spec, train.view()).unwrap();
    assert_eq!(r.rows, 300);
    assert_eq!(r.method, "bulk binary INSERT (COM_STMT_BULK_EXECUTE)");
    b.drop_tables(&spec.dataset).unwrap();
}

#[test]
fn a_rejected_row_fails_the_load_with_the_server_error() {
    let url = url();
    let mut conn = connect_mariadb(&url).unwrap();
    let table = "test_load_rejected";
    fresh_table(&mut conn, table);
    // A row that is already there: the duplicate key must surface, not be skipped (LOAD DATA
    // LOCAL skips duplicates with a warning, which the loader turns into the error).
    conn.query_drop(format!(
        "INSERT INTO {table} VALUES (3, VEC_FromText('[{}]'))",
        vec!["1"; DIM].join(",")
    ))
    .unwrap();
    let train = tricky(10);
    for method in [LoadMethod::Bulk, LoadMethod::LoadDataBinary] {
        let e = load_rows(&url, table, train.view(), method, 1).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("loading rows") && text.contains("Duplicate"),
            "{method:?}: {text}"
        );
    }
    conn.query_drop(format!("DROP TABLE {table}")).unwrap();
}

#[test]
fn a_vector_beyond_mariadbs_range_is_named_before_loading() {
    let opts = BackendOptions::default().with_url(ServerKind::MariaDb, url().expose().as_str());
    let mut b = MariaDb::connect(&opts).unwrap();
    let spec = TableSpec {
        dataset: "test-load-range".into(),
        metric: Metric::Euclidean,
        dimension: DIM,
    };
    // One value of 2^64 makes the squared length overflow a float: refused before loading
    // (as is any squared length whose distances could overflow float32, beyond 8.5e37).
    let mut train = tricky(20);
    train[(7, 9)] = -18_446_744_073_709_551_616.0;
    let e = b.load(&spec, train.view()).unwrap_err().to_string();
    assert!(
        e.contains("row 7") && e.contains("scale all vectors down"),
        "{e}"
    );
    // Just below the float32-safe bound (9.2e18 squared), the server takes the vector.
    train.row_mut(7).fill(0.0);
    train[(7, 9)] = 9.0e18;
    b.load(&spec, train.view()).unwrap();
    b.drop_tables(&spec.dataset).unwrap();
}
