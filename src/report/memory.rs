//! `table --by-memory`: QPS, recall and storage reads per query against the share of the index
//! in memory, from the series of `run --memory` (labels `mem<P>` and `mem<P>-cold`, the share
//! in the server setting `annbench.memory_share`): one row per algorithm, parameter set and
//! share, largest share first, cold and warm side by side.

use super::html::{Axis, Chart, Dataset, Point, colour};
use super::metrics::spec;
use super::names::point_name;
use super::render::{Cell, Column, Style, Table};
use super::series::params_identity;
use crate::results::PointResult;
use std::collections::BTreeMap;

/// The share of the index asked for a point's server (a `run --memory` series), and whether it
/// is the cold series.
pub fn memory_share(p: &PointResult) -> Option<(f64, bool)> {
    let share = setting(p, "annbench.memory_share")?;
    let cold = p.label.as_deref().is_some_and(|l| l.ends_with("-cold"));
    Some((share, cold))
}

/// The share of the index the server's caches really held: the page cache's size as the
/// server reported it (PostgreSQL's `shared_buffers`, MariaDB's `innodb_buffer_pool_size`,
/// which it rounds up to whole MiB) over the index size. It is above the asked share where
/// the server rounded or its smallest cache raised it (MariaDB's 6 MiB buffer pool under a
/// small index), and may pass 100%. The asked share when the index size is unknown.
pub fn share_held(p: &PointResult) -> Option<f64> {
    let asked = setting(p, "annbench.memory_share")?;
    let held = held_bytes(p)
        .zip(p.index_size_bytes.filter(|&b| b > 0))
        .map(|(bytes, index)| bytes / index as f64);
    Some(held.unwrap_or(asked))
}

/// The bytes of the server's page cache at a memory share: as the server reported it when
/// the share was set through its settings, else (a cgroup limit) the bytes given.
pub fn held_bytes(p: &PointResult) -> Option<f64> {
    let set = &p.environment.server_settings;
    let reported = match set.get("annbench.memory_via").map(String::as_str) {
        Some("settings") | None => set
            .get("innodb_buffer_pool_size")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .or_else(|| {
                set.get("shared_buffers")
                    .and_then(|v| crate::backend::plan::parse_pg_memory(v))
            }),
        Some(_) => None,
    };
    reported
        .map(|b| b as f64)
        .or_else(|| setting(p, "annbench.memory_bytes"))
}

fn setting(p: &PointResult, name: &str) -> Option<f64> {
    p.environment.server_settings.get(name)?.parse::<f64>().ok()
}

/// The label of the run a memory-series point belongs to (`x` for `x-mem50-cold`); `None`
/// for a run without a label and for points of no memory series.
pub fn run_label(p: &PointResult) -> Option<String> {
    memory_share(p)?;
    base_label(p.label.as_deref())
}

/// The run's own label of a series label (`x-mem50-cold` -> `x`; `mem50` -> none).
fn base_label(label: Option<&str>) -> Option<String> {
    let l = label?.trim_end_matches("-cold");
    let base = match l.rfind("mem") {
        Some(0) => return None,
        Some(i) => &l[..i],
        None => l,
    };
    Some(base.trim_end_matches('-').to_string()).filter(|b| !b.is_empty())
}

#[derive(Default)]
struct Pair<'a> {
    cold: Option<&'a PointResult>,
    warm: Option<&'a PointResult>,
}

/// The memory series of `points` as one table; `None` when there are none.
pub fn memory_table(points: &[PointResult]) -> Option<Table> {
    type Key = (String, Option<String>, String, usize, i64);
    let mut rows: BTreeMap<Key, Pair<'_>> = BTreeMap::new();
    for p in points {
        let Some((share, cold)) = memory_share(p) else {
            continue;
        };
        // Largest share first: the key orders by the negated share in millionths.
        let key = (
            p.algorithm.clone(),
            base_label(p.label.as_deref()),
            params_identity(p),
            p.clients,
            -(share * 1e6).round() as i64,
        );
        let pair = rows.entry(key).or_default();
        if cold {
            pair.cold = Some(p);
        } else {
            pair.warm = Some(p);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let metric = |name: &str| spec(name).column();
    let f = |name: &str, title: &str, d: usize| Column::new(name, title, Style::Fixed(d));
    let columns = vec![
        metric("algorithm"),
        metric("label"),
        metric("name"),
        f("memory_share_percent", "memory %", 1),
        f("asked_share_percent", "asked %", 1),
        f("memory_mib", "memory MiB", 1),
        f("qps_cold", "QPS cold", 1),
        f("qps_warm", "QPS warm", 1),
        Column::new("recall_cold", "recall cold", Style::Recall),
        Column::new("recall_warm", "recall warm", Style::Recall),
        f("reads_per_query_cold", "reads/q cold", 1),
        f("reads_per_query_warm", "reads/q warm", 1),
        f("read_kib_per_query_cold", "KiB read/q cold", 1),
        f("read_kib_per_query_warm", "KiB read/q warm", 1),
        Column::new("storage_warm", "storage warm", Style::Plain),
    ];
    let server = |p: Option<&PointResult>, get: fn(&crate::results::ServerCost) -> Option<f64>| {
        Cell::from(p.and_then(|p| p.metrics.server.as_ref()).and_then(get))
    };
    let table_rows = rows
        .into_iter()
        .map(|((algorithm, label, _, _, share), pair)| {
            let any = pair.warm.or(pair.cold).expect("a row has a point");
            let bytes = held_bytes(any);
            vec![
                Cell::Text(algorithm),
                Cell::from(label.as_deref()),
                Cell::Text(point_name(any)),
                Cell::from(share_held(any).map(|h| h * 100.0)),
                Cell::Float(-share as f64 / 1e4),
                Cell::from(bytes.map(|b| b / (1 << 20) as f64)),
                Cell::from(pair.cold.map(|p| p.metrics.qps)),
                Cell::from(pair.warm.map(|p| p.metrics.qps)),
                Cell::from(pair.cold.map(|p| p.metrics.recall)),
                Cell::from(pair.warm.map(|p| p.metrics.recall)),
                Cell::from(pair.cold.and_then(reads)),
                Cell::from(pair.warm.and_then(reads)),
                server(pair.cold, |s| s.server_read_kib_per_query),
                server(pair.warm, |s| s.server_read_kib_per_query),
                Cell::from(
                    pair.warm
                        .and_then(|p| p.metrics.server.as_ref())
                        .and_then(|s| s.storage())
                        .map(|s| s.as_str()),
                ),
            ]
        })
        .collect();
    Some(Table {
        columns,
        rows: table_rows,
    })
}

/// A figure of a point to plot against its share.
pub type Figure = fn(&PointResult) -> Option<f64>;

/// QPS of a point.
pub fn qps(p: &PointResult) -> Option<f64> {
    Some(p.metrics.qps)
}

/// Storage reads per query of a point: the server's own count of pages it read
/// (`buffer_reads_per_query`: PostgreSQL's `shared_blks_read`, MariaDB's
/// `Innodb_buffer_pool_reads`), else its processes' KiB read in 8 KiB pages. Never the
/// device's count, which holds every other process's reads too.
pub fn reads(p: &PointResult) -> Option<f64> {
    let s = p.metrics.server.as_ref()?;
    s.buffer_reads_per_query
        .or(s.server_read_kib_per_query.map(|k| k / 8.0))
}

/// `figure` against the share of the index in memory (percent), one line per algorithm (and
/// run label), warm solid and cold as triangles in the same colour; `None` without memory
/// series.
pub fn memory_chart(points: &[PointResult], id: &str, y: Axis, figure: Figure) -> Option<Chart> {
    // (algorithm, run label, parameters, cold) -> (share %, figure).
    type Line = (String, Option<String>, String, bool);
    let mut lines: BTreeMap<Line, Vec<(f64, f64)>> = BTreeMap::new();
    for p in points {
        let (Some((_, cold)), Some(share), Some(v)) = (memory_share(p), share_held(p), figure(p))
        else {
            continue;
        };
        let key = (
            p.algorithm.clone(),
            base_label(p.label.as_deref()),
            point_name(p),
            cold,
        );
        lines.entry(key).or_default().push((share * 100.0, v));
    }
    if lines.is_empty() {
        return None;
    }
    let mut groups: Vec<(String, Option<String>, String)> = Vec::new();
    let datasets = lines
        .into_iter()
        .map(|((algorithm, label, name, cold), mut xy)| {
            xy.sort_by(|a, b| a.0.total_cmp(&b.0));
            let g = (algorithm, label, name);
            let group = groups.iter().position(|x| *x == g).unwrap_or_else(|| {
                groups.push(g.clone());
                groups.len() - 1
            });
            let name = match &g.1 {
                Some(l) => format!("{} {l}", g.2),
                None => g.2.clone(),
            };
            Dataset {
                label: if cold { format!("{name}, cold") } else { name },
                group,
                colour: colour(group).to_string(),
                line: true,
                stepped: false,
                legend: true,
                faded: false,
                band: false,
                shape: if cold { "triangle" } else { "circle" },
                points: xy.into_iter().map(|(x, y)| Point::new(x, y, -1)).collect(),
            }
        })
        .collect();
    Some(Chart {
        id: id.to_string(),
        x: Axis::linear("Share of the index in memory (%)"),
        y,
        datasets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_the_servers_own_never_the_devices() {
        let mut p = crate::report::testutil::point("mariadb", &[], &[], 0.9, 100.0);
        p.metrics.server = Some(crate::results::ServerCost {
            // Other processes read from the device; the server read nothing.
            io_reads_per_query: Some(1.8),
            buffer_reads_per_query: Some(0.0),
            server_read_kib_per_query: Some(0.0),
            ..Default::default()
        });
        assert_eq!(reads(&p), Some(0.0));
        p.metrics.server.as_mut().unwrap().buffer_reads_per_query = None;
        p.metrics.server.as_mut().unwrap().server_read_kib_per_query = Some(80.0);
        assert_eq!(reads(&p), Some(10.0));
    }

    #[test]
    fn the_share_shown_is_the_one_the_server_held() {
        let mut p = crate::report::testutil::point("mariadb", &[], &[], 0.9, 100.0);
        let set = &mut p.environment.server_settings;
        set.insert("annbench.memory_share".into(), "0.1".into());
        set.insert("annbench.memory_bytes".into(), (6u64 << 20).to_string());
        // A 2 MiB index: MariaDB's 6 MiB floor held 300% of it, not the 10% asked.
        p.index_size_bytes = Some(2 << 20);
        assert_eq!(share_held(&p), Some(3.0));
        let table = memory_table(std::slice::from_ref(&p)).unwrap();
        let col = |n: &str| table.columns.iter().position(|c| c.name == n).unwrap();
        assert!(matches!(table.rows[0][col("memory_share_percent")], Cell::Float(v) if v == 300.0));
        assert!(
            matches!(table.rows[0][col("asked_share_percent")], Cell::Float(v) if (v - 10.0).abs() < 1e-9)
        );
        // 73% of 10 MiB asked: the buffer pool rounds up to 8 MiB, 80% of the index.
        let set = &mut p.environment.server_settings;
        set.insert("annbench.memory_share".into(), "0.73".into());
        set.insert("annbench.memory_bytes".into(), "7654605".into());
        set.insert("annbench.memory_via".into(), "settings".into());
        set.insert("innodb_buffer_pool_size".into(), (8u64 << 20).to_string());
        p.index_size_bytes = Some(10 << 20);
        assert_eq!(share_held(&p), Some(0.8));
        // PostgreSQL reports shared_buffers in its own units.
        let set = &mut p.environment.server_settings;
        set.remove("innodb_buffer_pool_size");
        set.insert("shared_buffers".into(), "824kB".into());
        p.index_size_bytes = Some(3_366_912);
        assert!((share_held(&p).unwrap() - 843_776.0 / 3_366_912.0).abs() < 1e-12);
        // A cgroup limit: the bytes given (shared_buffers is the server's usual one).
        let set = &mut p.environment.server_settings;
        set.insert("annbench.memory_via".into(), "cgroup".into());
        set.insert("annbench.memory_bytes".into(), "841728".into());
        assert!((share_held(&p).unwrap() - 841_728.0 / 3_366_912.0).abs() < 1e-12);
        p.index_size_bytes = None;
        assert_eq!(share_held(&p), Some(0.73));
    }

    #[test]
    fn series_labels_give_back_the_runs_label() {
        assert_eq!(base_label(Some("mem50")), None);
        assert_eq!(base_label(Some("mem50-cold")), None);
        assert_eq!(base_label(Some("x-mem12_5-cold")).as_deref(), Some("x"));
        assert_eq!(base_label(Some("a-b-mem100")).as_deref(), Some("a-b"));
    }
}
