use super::*;
use crate::Metric;

#[test]
fn algorithm_names_are_unique_and_found_by_name() {
    for (i, a) in ALGORITHMS.iter().enumerate() {
        assert!(
            ALGORITHMS[i + 1..].iter().all(|b| b.name != a.name),
            "{} is declared twice",
            a.name
        );
        assert!(std::ptr::eq(algorithm(a.name).unwrap(), *a), "{}", a.name);
    }
    assert_eq!(algorithms().len(), ALGORITHMS.len());
}

#[test]
fn an_unknown_algorithm_lists_the_known_ones() {
    let e = find_algorithm("hnswlib").unwrap_err().to_string();
    assert!(e.contains("unknown algorithm 'hnswlib'"), "{e}");
    for a in ALGORITHMS {
        assert!(e.contains(a.name), "{e} lacks {}", a.name);
    }
}

#[test]
fn databases_are_the_algorithms_servers_each_once() {
    let dbs = databases();
    for (i, d) in dbs.iter().enumerate() {
        assert!(
            dbs[i + 1..].iter().all(|o| o.key != d.key),
            "{} twice",
            d.key
        );
        assert!(
            ALGORITHMS
                .iter()
                .any(|a| a.database.map(ServerKind::decl) == Some(*d)),
            "{} has no algorithm",
            d.key
        );
    }
    for kind in ALGORITHMS.iter().filter_map(|a| a.database) {
        assert!(dbs.contains(&kind.decl()), "{kind:?} is missing");
    }
}

#[test]
fn parameter_settings_are_those_of_the_servers_algorithms() {
    for d in databases() {
        let kind = ServerKind::of(d);
        let settings = parameter_settings(kind);
        let declared: Vec<&str> = ALGORITHMS
            .iter()
            .filter(|a| a.database == Some(kind))
            .flat_map(|a| a.build.iter().chain(a.query))
            .filter_map(|p| p.setting)
            .collect();
        assert!(settings.iter().all(|s| declared.contains(s)), "{}", d.key);
        assert!(declared.iter().all(|s| settings.contains(s)), "{}", d.key);
        for (i, s) in settings.iter().enumerate() {
            assert!(!settings[i + 1..].contains(s), "{s} twice");
        }
    }
}

#[test]
fn a_dimension_too_wide_names_the_algorithms_on_that_server_that_take_it() {
    for a in ALGORITHMS.iter().filter(|a| a.max_dimension < usize::MAX) {
        assert!(check_dimension(a, a.max_dimension).is_ok(), "{}", a.name);
        let wide = a.max_dimension + 1;
        let e = check_dimension(a, wide).unwrap_err().to_string();
        assert!(e.contains(&format!("at most {}", a.max_dimension)), "{e}");
        for b in ALGORITHMS {
            let named = e.contains(&format!("{} (up to", b.name));
            let takes = b.database == a.database && b.max_dimension >= wide;
            assert_eq!(named, takes, "{}: {e}", b.name);
        }
    }
}

#[test]
fn a_metric_not_taken_names_the_algorithms_that_take_it() {
    for a in ALGORITHMS {
        for metric in [Metric::Euclidean, Metric::Angular] {
            let result = check_metric(a, metric);
            assert_eq!(result.is_ok(), a.metrics.contains(&metric), "{}", a.name);
            let Err(e) = result else { continue };
            let e = e.to_string();
            assert!(
                e.contains(&format!("this dataset is {}", metric.as_str())),
                "{e}"
            );
            let takers = ALGORITHMS
                .iter()
                .filter(|b| b.database.is_some() && b.metrics.contains(&metric));
            for b in takers {
                assert!(e.contains(b.name), "{e} lacks {}", b.name);
            }
        }
    }
}
