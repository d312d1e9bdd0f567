//! File names: sorted keys, injective encoding of labels and dataset names, the names of the
//! first format, the length limit.

use super::*;
use serde_json::json;

fn params(v: serde_json::Value) -> Params {
    serde_json::from_value(v).unwrap()
}

fn key<'a>(b: &'a Params, q: &'a Params, label: Option<&'a str>) -> PointKey<'a> {
    PointKey::new("d", 10, "mariadb", b, q, 2, label)
}

#[test]
fn names_sort_keys_and_keep_plain_text() {
    let b = params(json!({"M": 16, "engine": "MyISAM"}));
    let b2 = params(json!({"engine": "MyISAM", "M": 16}));
    let q = params(json!({"ef_search": 40}));
    let k = key(&b, &q, Some("mariadb_11.8-rc1"));
    let name = point_name(&k);
    assert_eq!(
        name,
        "M_16_engine_MyISAM_ef_search_40_clients_2_label_mariadb_11.8-rc1"
    );
    assert_eq!(point_name(&key(&b2, &q, Some("mariadb_11.8-rc1"))), name);
    assert_eq!(legacy_point_name(&k), None, "plain names did not change");
    let p = point_path(Path::new("r"), &k).unwrap();
    assert_eq!(p, Path::new("r/d/10/mariadb").join(format!("{name}.hdf5")));
}

#[test]
fn distinct_labels_get_distinct_files() {
    let (b, q) = (params(json!({"M": 4})), params(json!({"ef_search": 10})));
    let labels = [
        None,
        Some(""),
        Some("v1 a"),
        Some("v1_a"),
        Some("v1%20a"),
        Some("v1/a"),
        Some("日本"),
        Some("中国"),
        Some("_label_x"),
        Some("x"),
    ];
    let names: Vec<String> = labels
        .iter()
        .map(|l| point_name(&key(&b, &q, *l)))
        .collect();
    for (i, a) in names.iter().enumerate() {
        assert!(!a.contains('/') && !a.contains(' '), "{a}");
        for (j, other) in names.iter().enumerate().skip(i + 1) {
            assert_ne!(a, other, "labels {:?} and {:?}", labels[i], labels[j]);
        }
    }
    // The first format squeezed these together; the old name is still known for lookups.
    let spaced = key(&b, &q, Some("v1 a"));
    assert_eq!(
        legacy_point_name(&spaced).as_deref(),
        Some("M_4_ef_search_10_clients_2_label_v1_a")
    );
}

#[test]
fn parameter_names_never_contain_the_label_marker() {
    // The label is recovered after the first `_label_`: no key may produce one.
    for algo in crate::registry::ALGORITHMS {
        for p in algo.build.iter().chain(algo.query) {
            assert!(!p.name.contains("label"), "{}: {}", algo.name, p.name);
        }
    }
}

#[test]
fn dataset_directories_encode_only_what_cannot_be_a_name() {
    let r = Path::new("r");
    assert_eq!(
        dataset_dir(r, "glove-25-angular").unwrap(),
        r.join("glove-25-angular")
    );
    assert_eq!(dataset_dir(r, "my set").unwrap(), r.join("my set"));
    assert_eq!(dataset_dir(r, "a\\b").unwrap(), r.join("a%5Cb"));
    assert_eq!(dataset_dir(r, "../x").unwrap(), r.join("%2E.%2Fx"));
    assert_eq!(dataset_dir(r, "..").unwrap(), r.join("%2E."));
    assert_eq!(dataset_dir(r, "50%").unwrap(), r.join("50%25"));
    assert!(dataset_dir(r, "").is_err());
    assert_eq!(legacy_dataset_dir(r, "50%"), Some(r.join("50%")));
    assert_eq!(legacy_dataset_dir(r, "plain"), None);
    assert_eq!(legacy_dataset_dir(r, "../x"), None);
}

#[test]
fn an_over_long_label_is_refused_with_the_fix() {
    let (b, q) = (params(json!({"M": 4})), params(json!({"ef_search": 10})));
    let long = "x".repeat(300);
    let err = point_path(Path::new("r"), &key(&b, &q, Some(&long)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("--label") && err.contains("too long"), "{err}");
    let cjk = "日".repeat(30);
    assert!(point_path(Path::new("r"), &key(&b, &q, Some(&cjk))).is_err());
    let ok = "日".repeat(20);
    assert!(point_path(Path::new("r"), &key(&b, &q, Some(&ok))).is_ok());
}
