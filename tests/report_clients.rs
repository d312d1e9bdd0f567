//! QPS-vs-clients tables at fixed parameters.

mod report_common;

use annbench::report::clients::clients_rows_table;
use annbench::report::clients_table;
use annbench::report::render::{Format, render};
use report_common::{assert_golden, pt, with_clients};

#[test]
fn groups_by_parameters_sorted_by_clients() {
    let m = |ef, n, q| {
        with_clients(
            pt("mariadb", &[("M", 16)], &[("ef_search", ef)], 0.98, q),
            n,
        )
    };
    let pts = vec![
        m(40, 4, 3200.0),
        m(40, 1, 1000.0),
        m(40, 2, 1900.0),
        m(80, 1, 500.0), // one client count only: no group
        with_clients(
            pt(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", 40)],
                0.99,
                800.0,
            ),
            8,
        ),
        pt(
            "pgvector",
            &[("M", 16), ("ef_construction", 64)],
            &[("ef_search", 40)],
            0.99,
            200.0,
        ),
    ];
    let groups = clients_table(&pts);
    let shape: Vec<(String, Vec<usize>, Vec<f64>)> = groups
        .iter()
        .map(|g| {
            (
                g.name.clone(),
                g.rows.iter().map(|r| r.clients).collect(),
                g.rows.iter().map(|r| r.scaling).collect(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (
                "MariaDB(m=16, ef_search=40)".to_string(),
                vec![1, 2, 4],
                vec![1.0, 1.9, 3.2]
            ),
            (
                "PGVector(m=16, ef_construction=64, ef_search=40)".to_string(),
                vec![1, 8],
                vec![1.0, 4.0]
            ),
        ]
    );
    // The fixture's passes used 0.25 CPU seconds per wall second, shared by the clients.
    let cpu = groups[0].rows[2].client_cpu_per_connection.unwrap();
    assert!((cpu - 0.25 / 4.0).abs() < 1e-12, "{cpu}");
    assert_golden(
        "clients.md",
        &render(&clients_rows_table(&groups, false), Format::Markdown).unwrap(),
    );
}

#[test]
fn no_group_without_several_client_counts() {
    let pts = vec![pt("mariadb", &[("M", 16)], &[("ef_search", 40)], 0.98, 1.0)];
    assert!(clients_table(&pts).is_empty());
}
