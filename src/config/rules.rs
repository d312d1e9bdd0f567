//! Which build and query keys each algorithm accepts, and which values are valid. Checked
//! before anything runs so a bad grid point fails in seconds, not after an hour of builds.

use crate::params::Params;
use serde_json::Value;

/// One allowed parameter.
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// An integer in `min..=max`.
    Int { min: i64, max: i64 },
    /// One of these strings (matched case-insensitively, stored as spelled here).
    Choice(&'static [&'static str]),
}

/// Keys and rules of one algorithm.
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmRules {
    pub build: &'static [(&'static str, Rule)],
    pub query: &'static [(&'static str, Rule)],
}

const MARIADB: AlgorithmRules = AlgorithmRules {
    build: &[
        ("M", Rule::Int { min: 3, max: 200 }),
        ("engine", Rule::Choice(&["InnoDB", "MyISAM"])),
    ],
    query: &[("ef_search", Rule::Int { min: 1, max: 10000 })],
};

const PGVECTOR: AlgorithmRules = AlgorithmRules {
    build: &[
        ("M", Rule::Int { min: 2, max: 100 }),
        ("ef_construction", Rule::Int { min: 4, max: 1000 }),
    ],
    query: &[("ef_search", Rule::Int { min: 1, max: 1000 })],
};

const EXACT: AlgorithmRules = AlgorithmRules {
    build: &[],
    query: &[],
};

/// Rules for `algorithm`, or `None` when annbench does not know it.
pub fn rules_for(algorithm: &str) -> Option<AlgorithmRules> {
    match algorithm {
        "mariadb" => Some(MARIADB),
        "pgvector" | "pgvector_halfvec" | "pgvector_halfvec_column" => Some(PGVECTOR),
        "exact" => Some(EXACT),
        _ => None,
    }
}

/// Names of the keys in a rule list, for error messages.
pub fn key_names(rules: &[(&str, Rule)]) -> String {
    if rules.is_empty() {
        "(none)".to_string()
    } else {
        rules.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
    }
}

/// Check one value against its rule; returns the normalised value or why it is invalid.
pub fn check_value(rule: Rule, value: &Value) -> Result<Value, String> {
    match rule {
        Rule::Int { min, max } => match value.as_i64() {
            Some(v) if (min..=max).contains(&v) => Ok(value.clone()),
            Some(v) => Err(format!("{v} is out of range {min}..={max}")),
            None => Err(format!("{value} is not an integer")),
        },
        Rule::Choice(choices) => {
            let text = value.as_str().unwrap_or_default();
            choices
                .iter()
                .find(|c| c.eq_ignore_ascii_case(text))
                .map(|c| Value::String((*c).to_string()))
                .ok_or_else(|| format!("{value} is not one of {}", choices.join(", ")))
        }
    }
}

/// Cross-key checks of one build point (e.g. pgvector's `ef_construction >= 2 * M`).
pub fn check_build_point(algorithm: &str, point: &Params) -> Result<(), String> {
    if matches!(
        algorithm,
        "pgvector" | "pgvector_halfvec" | "pgvector_halfvec_column"
    ) {
        let m = crate::params::get_int(point, "M");
        let efc = crate::params::get_int(point, "ef_construction");
        if let (Some(m), Some(efc)) = (m, efc)
            && efc < 2 * m
        {
            return Err(format!(
                "ef_construction ({efc}) must be at least 2 * M ({})",
                2 * m
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_checked_and_normalised() {
        let m = rules_for("mariadb").unwrap();
        assert_eq!(check_value(m.build[0].1, &json!(16)), Ok(json!(16)));
        assert!(
            check_value(m.build[0].1, &json!(2))
                .unwrap_err()
                .contains("3..=200")
        );
        assert!(check_value(m.build[0].1, &json!("x")).is_err());
        assert_eq!(
            check_value(m.build[1].1, &json!("myisam")),
            Ok(json!("MyISAM"))
        );
    }

    #[test]
    fn pgvector_ef_construction_must_cover_two_m() {
        let p: Params = serde_json::from_value(json!({"M": 32, "ef_construction": 32})).unwrap();
        assert!(
            check_build_point("pgvector", &p)
                .unwrap_err()
                .contains("2 * M (64)")
        );
        let ok: Params = serde_json::from_value(json!({"M": 16, "ef_construction": 32})).unwrap();
        assert!(check_build_point("pgvector_halfvec", &ok).is_ok());
    }
}
