//! Index build table: one row per built index (algorithm, label, build arguments) with its
//! build seconds (isecs, the index build alone), the server's CPU seconds during the build
//! (local servers), index and table sizes and load seconds.

use super::metrics::mebibytes;
use super::names::{build_name, param_name};
use super::params::param_cell;
use super::render::{Cell, Column, Style, Table};
use super::series::{Distinct, cmp_params};
use crate::params::Params;
use crate::results::PointResult;

/// One built index.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildRow {
    pub algorithm: String,
    pub label: Option<String>,
    pub build_args: Params,
    /// e.g. `PGVector(m=16, ef_construction=64)`.
    pub name: String,
    /// The `M` build argument (any case), if set.
    pub m: Option<i64>,
    /// The `ef_construction` (or `efConstruction`) build argument, if set.
    pub ef_construction: Option<i64>,
    pub build_seconds: f64,
    /// Server CPU seconds of the build (local servers; above `build_seconds` when parallel).
    pub build_cpu_seconds: Option<f64>,
    pub index_size_bytes: Option<u64>,
    pub table_size_bytes: Option<u64>,
    pub load_seconds: Option<f64>,
    /// How many stored points (query args x clients) ran on this index.
    pub points: usize,
}

/// The build table of `points`, sorted by algorithm, label and build arguments. Points that
/// share algorithm, label and build arguments but report a different build time or index
/// size come from separate builds (a rerun) and get separate rows.
pub fn build_table(points: &[PointResult]) -> Vec<BuildRow> {
    let mut rows: Vec<BuildRow> = Vec::new();
    for p in points {
        let same = rows.iter_mut().find(|r| {
            r.algorithm == p.algorithm
                && r.label == p.label
                && r.build_args == p.build_args
                && r.build_seconds.to_bits() == p.build_seconds.to_bits()
                && r.index_size_bytes == p.index_size_bytes
        });
        match same {
            Some(row) => row.points += 1,
            None => rows.push(BuildRow {
                algorithm: p.algorithm.clone(),
                label: p.label.clone(),
                build_args: p.build_args.clone(),
                name: build_name(&p.algorithm, &p.build_args),
                m: int_arg(&p.build_args, "m"),
                ef_construction: int_arg(&p.build_args, "ef_construction"),
                build_seconds: p.build_seconds,
                build_cpu_seconds: p.metrics.server.as_ref().and_then(|s| s.build_cpu_seconds),
                index_size_bytes: p.index_size_bytes,
                table_size_bytes: p.table_size_bytes,
                load_seconds: p.load_seconds,
                points: 1,
            }),
        }
    }
    rows.sort_by(|a, b| {
        (&a.algorithm, &a.label)
            .cmp(&(&b.algorithm, &b.label))
            .then_with(|| cmp_params(&a.build_args, &b.build_args))
            .then(a.build_seconds.total_cmp(&b.build_seconds))
    });
    rows
}

/// The integer argument `name`, matched ignoring case and underscores (`efConstruction` is
/// `ef_construction`).
fn int_arg(args: &Params, name: &str) -> Option<i64> {
    let norm = |s: &str| s.replace('_', "").to_lowercase();
    args.iter()
        .find(|(k, _)| norm(k) == norm(name))
        .and_then(|(_, v)| v.as_i64())
}

/// The build rows as a [`Table`]: `algorithm` (the registry id), `label`, `build_name`
/// (`MariaDB(m=16)`: not a point's `name`), one
/// `param_<name>` column per build parameter (Markdown titles them `m`, `ef_construction`),
/// `build_seconds, build_cpu_seconds, index_mib, table_mib` (MiB = 2^20 bytes),
/// `load_seconds, points`. Markdown shows the label column only when `distinct.labels`.
pub fn build_rows_table(rows: &[BuildRow], distinct: Distinct) -> Table {
    let mut label = Column::new("label", "label", Style::Plain);
    label.in_markdown = distinct.labels;
    // Parameter columns in first-seen order (config order: `m` before `ef_construction`).
    let mut params: Vec<String> = Vec::new();
    for r in rows {
        for k in r.build_args.keys() {
            let name = param_name(k);
            if !params.contains(&name) {
                params.push(name);
            }
        }
    }
    let mut columns = vec![
        Column::new("algorithm", "algorithm", Style::Plain),
        label,
        Column::new("build_name", "build", Style::Plain),
    ];
    columns.extend(
        params
            .iter()
            .map(|n| Column::new(&format!("param_{n}"), n, Style::Plain)),
    );
    columns.extend([
        Column::new("build_seconds", "isecs", Style::Fixed(1)),
        Column::new("build_cpu_seconds", "server CPU s", Style::Fixed(1)),
        Column::new("index_mib", "index MiB", Style::Fixed(1)),
        Column::new("table_mib", "table MiB", Style::Fixed(1)),
        Column::new("load_seconds", "load s", Style::Fixed(1)),
        Column::new("points", "points", Style::Plain),
    ]);
    let rows = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                Cell::Text(r.algorithm.clone()),
                Cell::from(r.label.as_deref()),
                Cell::Text(r.name.clone()),
            ];
            cells.extend(params.iter().map(|n| {
                r.build_args
                    .iter()
                    .find(|(k, _)| param_name(k) == *n)
                    .map_or(Cell::Null, |(_, v)| param_cell(v))
            }));
            cells.extend([
                Cell::Float(r.build_seconds),
                Cell::from(r.build_cpu_seconds),
                Cell::from(r.index_size_bytes.map(mebibytes)),
                Cell::from(r.table_size_bytes.map(mebibytes)),
                Cell::from(r.load_seconds),
                Cell::Int(r.points as i64),
            ]);
            cells
        })
        .collect();
    Table { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    #[test]
    fn one_row_per_build_and_reruns_kept_apart() {
        let mut pts = vec![
            point(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", 10)],
                0.9,
                1.0,
            ),
            point(
                "pgvector",
                &[("M", 16), ("ef_construction", 64)],
                &[("ef_search", 20)],
                0.9,
                1.0,
            ),
            point(
                "pgvector",
                &[("M", 8), ("ef_construction", 64)],
                &[("ef_search", 10)],
                0.9,
                1.0,
            ),
            point(
                "pgvector",
                &[("M", 8), ("ef_construction", 64)],
                &[("ef_search", 10)],
                0.9,
                1.0,
            ),
        ];
        pts[3].build_seconds = 11.0;
        let rows = build_table(&pts);
        let got: Vec<(Option<i64>, Option<i64>, f64, usize)> = rows
            .iter()
            .map(|r| (r.m, r.ef_construction, r.build_seconds, r.points))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(8), Some(64), 10.0, 1),
                (Some(8), Some(64), 11.0, 1),
                (Some(16), Some(64), 10.0, 2)
            ]
        );
        assert_eq!(rows[0].name, "PGVector(m=8, ef_construction=64)");
    }
}
