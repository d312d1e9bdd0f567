//! The server settings that differ between the labels of a comparison: each point records
//! its server's version and settings (`environment.server_version`, `server_settings`), and
//! a ratio means little without knowing what else changed between the servers (checksums on
//! against off, another `shared_buffers`).

use super::render::{Cell, Column, Style, Table};
use crate::results::PointResult;
use std::collections::{BTreeMap, BTreeSet};

/// The key under which the server version is listed with the settings.
pub const SERVER_VERSION: &str = "server_version";

/// What a label's points hold when none of them has the setting.
pub const NOT_SET: &str = "(not recorded)";

/// One setting whose values differ between labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingDiff {
    /// `server_version` or the setting's name.
    pub setting: String,
    /// Each label's value, in the order the labels were given: the distinct values of its
    /// points joined by ` | `, or [`NOT_SET`].
    pub values: Vec<String>,
}

/// The settings (and the server version) whose values differ between `labels`, version
/// first, then settings by name. Points of other labels are ignored. Settings belong to a
/// database: only those of the databases every label ran are compared (a label that ran
/// only MariaDB has no PostgreSQL settings to differ in, and once listed all of them as
/// "(not recorded)"); with two or more such databases, each setting names its database
/// (`shared_buffers (PostgreSQL)`).
pub fn settings_differ(points: &[PointResult], labels: &[&str]) -> Vec<SettingDiff> {
    // database -> label -> setting -> distinct values. In-process algorithms (no database)
    // and ones this annbench does not know form a group of their own, named "".
    type Seen<'p> = Vec<BTreeMap<&'p str, BTreeSet<&'p str>>>;
    let mut by_db: BTreeMap<&str, (Seen<'_>, Vec<bool>)> = BTreeMap::new();
    for p in points {
        let Some(i) = labels.iter().position(|l| p.label.as_deref() == Some(l)) else {
            continue;
        };
        let db = crate::registry::algorithm(&p.algorithm)
            .and_then(|a| a.database)
            .map_or("", |k| k.name());
        let (seen, ran) = by_db.entry(db).or_insert_with(|| {
            (
                vec![BTreeMap::new(); labels.len()],
                vec![false; labels.len()],
            )
        });
        ran[i] = true;
        let env = &p.environment;
        if !env.server_version.is_empty() {
            seen[i]
                .entry(SERVER_VERSION)
                .or_default()
                .insert(&env.server_version);
        }
        for (k, v) in &env.server_settings {
            seen[i].entry(k).or_default().insert(v);
        }
    }
    by_db.retain(|_, (_, ran)| ran.iter().all(|r| *r));
    let qualify = by_db.len() > 1;
    by_db
        .iter()
        .flat_map(|(db, (seen, _))| {
            differing(seen).into_iter().map(move |mut d| {
                if qualify && !db.is_empty() {
                    d.setting = format!("{} ({db})", d.setting);
                }
                d
            })
        })
        .collect()
}

/// The keys of `seen` (one map per label) whose values differ between the labels.
fn differing(seen: &[BTreeMap<&str, BTreeSet<&str>>]) -> Vec<SettingDiff> {
    let keys: BTreeSet<&str> = seen.iter().flat_map(|s| s.keys().copied()).collect();
    std::iter::once(SERVER_VERSION)
        .chain(keys.into_iter().filter(|k| *k != SERVER_VERSION))
        .filter_map(|key| {
            let values: Vec<String> = seen
                .iter()
                .map(|s| match s.get(key) {
                    Some(v) => v.iter().copied().collect::<Vec<_>>().join(" | "),
                    None => NOT_SET.to_string(),
                })
                .collect();
            let differ = values.iter().any(|v| *v != values[0]);
            (differ && values.iter().any(|v| v != NOT_SET)).then(|| SettingDiff {
                setting: key.to_string(),
                values,
            })
        })
        .collect()
}

/// The differences as a table: `setting`, then one column per label.
pub fn settings_table(diffs: &[SettingDiff], labels: &[&str]) -> Table {
    let mut columns = vec![Column::new("setting", "setting", Style::Plain)];
    columns.extend(labels.iter().map(|l| Column::new(l, l, Style::Plain)));
    let rows = diffs
        .iter()
        .map(|d| {
            std::iter::once(Cell::Text(d.setting.clone()))
                .chain(d.values.iter().map(|v| Cell::Text(v.clone())))
                .collect()
        })
        .collect();
    Table { columns, rows }
}

/// The differences as JSON: `[{"setting": ..., "values": {label: value, ...}}, ...]`.
pub fn to_json(diffs: &[SettingDiff], labels: &[&str]) -> serde_json::Value {
    diffs
        .iter()
        .map(|d| {
            let values: serde_json::Map<String, serde_json::Value> = labels
                .iter()
                .zip(&d.values)
                .map(|(l, v)| (l.to_string(), v.clone().into()))
                .collect();
            serde_json::json!({"setting": d.setting, "values": values})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    fn server(label: &str, version: &str, settings: &[(&str, &str)]) -> PointResult {
        let mut p = point("pgvector", &[], &[], 0.9, 100.0);
        p.label = Some(label.into());
        p.environment.server_version = version.into();
        p.environment.server_settings = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        p
    }

    #[test]
    fn lists_the_keys_whose_values_differ() {
        let pts = [
            server(
                "on",
                "17.5",
                &[
                    ("data_checksums", "on"),
                    ("shared_buffers", "128MB"),
                    ("jit", "off"),
                ],
            ),
            server(
                "off",
                "17.5",
                &[
                    ("data_checksums", "off"),
                    ("shared_buffers", "128MB"),
                    ("jit", "off"),
                ],
            ),
            server("big", "17.6", &[("shared_buffers", "4GB"), ("jit", "off")]),
            server("other", "9", &[("data_checksums", "x")]),
        ];
        let d = settings_differ(&pts, &["on", "off"]);
        assert_eq!(
            d,
            [SettingDiff {
                setting: "data_checksums".into(),
                values: vec!["on".into(), "off".into()],
            }]
        );
        let d = settings_differ(&pts, &["on", "off", "big"]);
        let names: Vec<&str> = d.iter().map(|s| s.setting.as_str()).collect();
        assert_eq!(
            names,
            ["server_version", "data_checksums", "shared_buffers"]
        );
        assert_eq!(d[0].values, ["17.5", "17.5", "17.6"]);
        assert_eq!(d[1].values, ["on", "off", NOT_SET]);
        let same = [
            server("x", "17.5", &[("jit", "off")]),
            server("y", "17.5", &[("jit", "off")]),
        ];
        assert!(settings_differ(&same, &["x", "y"]).is_empty());
    }

    #[test]
    fn only_the_databases_every_label_ran_are_compared() {
        let on = |algorithm: &str, label: &str, version: &str, settings: &[(&str, &str)]| {
            let mut p = server(label, version, settings);
            p.algorithm = algorithm.into();
            p
        };
        let pts = [
            on("mariadb", "a", "11.8", &[("innodb_buffer_pool_size", "1G")]),
            on(
                "pgvector",
                "a",
                "17.5",
                &[("shared_buffers", "1GB"), ("jit", "on")],
            ),
            on("mariadb", "b", "11.8", &[("innodb_buffer_pool_size", "2G")]),
        ];
        let d = settings_differ(&pts, &["a", "b"]);
        assert_eq!(
            d,
            [SettingDiff {
                setting: "innodb_buffer_pool_size".into(),
                values: vec!["1G".into(), "2G".into()],
            }]
        );
        // Both databases on both labels: each setting names its database.
        let mut both = pts.to_vec();
        both.push(on(
            "pgvector",
            "b",
            "17.6",
            &[("shared_buffers", "1GB"), ("jit", "off")],
        ));
        let names: Vec<String> = settings_differ(&both, &["a", "b"])
            .into_iter()
            .map(|d| d.setting)
            .collect();
        assert_eq!(
            names,
            [
                "innodb_buffer_pool_size (MariaDB)",
                "server_version (PostgreSQL)",
                "jit (PostgreSQL)"
            ]
        );
    }

    #[test]
    fn a_label_with_two_values_shows_both() {
        let pts = [
            server("a", "1", &[("k", "x")]),
            server("a", "1", &[("k", "y")]),
            server("b", "1", &[("k", "x")]),
        ];
        let d = settings_differ(&pts, &["a", "b"]);
        assert_eq!(d[0].values, ["x | y", "x"]);
    }
}
