//! Checking parameters against an algorithm's declaration ([`super::AlgorithmDecl`]): one
//! implementation for config validation (before anything runs) and for the backends (on every
//! build and query point), so the two cannot disagree.

use super::algorithm::AlgorithmDecl;
use super::param::{Kind, Need, Param, Rule};
use crate::params::Params;
use crate::{Error, Result};
use serde_json::Value;

/// Validated arguments of one point, keys spelled as declared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args(Params);

impl Args {
    /// An integer argument, if set.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.0.get(name).and_then(Value::as_i64)
    }

    /// A text argument (choice or memory size), if set.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// A required integer argument (validation guarantees it; an error names it otherwise).
    pub fn required_int(&self, name: &str) -> Result<i64> {
        self.int(name).ok_or_else(|| {
            Error::Config(format!("the arguments {self:?} lack the required {name}"))
        })
    }
}

/// The parameter `key` names (ignoring case).
pub fn find<'a>(params: &'a [Param], key: &str) -> Option<&'a Param> {
    params.iter().find(|p| p.name.eq_ignore_ascii_case(key))
}

/// `M, ef_construction` (or `(none)`), for messages.
pub fn key_names(params: &[Param]) -> String {
    if params.is_empty() {
        return "(none)".into();
    }
    params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// Check one value; returns it normalised (a choice as declared, `auto` forms as `auto`,
/// `auto*2`, `auto/4`) or why it is invalid.
pub fn check_value(p: &Param, value: &Value) -> Result<Value, String> {
    match p.kind {
        Kind::Int { min, max } => match (value.as_i64(), value.as_str()) {
            (Some(v), _) if (min..=max).contains(&v) => Ok(value.clone()),
            (Some(v), _) => Err(format!("{v} is out of range {min}..={max}")),
            (None, Some(text)) if p.auto.is_some() => parse_auto(text)
                .map(|(op, f)| Value::String(auto_text(op, f)))
                .ok_or_else(|| format!("'{text}' is neither an integer nor auto, auto*N, auto/N")),
            _ => Err(format!("{value} is not an integer")),
        },
        Kind::Choice(choices) => {
            let text = value.as_str().unwrap_or_default();
            choices
                .iter()
                .find(|c| c.eq_ignore_ascii_case(text))
                .map(|c| Value::String((*c).to_string()))
                .ok_or_else(|| format!("{value} is not one of {}", choices.join(", ")))
        }
        Kind::Selectivity => {
            crate::dataset::filters::parse_selectivity(value).map(|(_, text)| Value::String(text))
        }
        Kind::Memory => {
            let s = value.as_str().unwrap_or_default();
            let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let ok = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && matches!(&s[digits.len()..], "kB" | "MB" | "GB" | "TB");
            if ok {
                Ok(value.clone())
            } else {
                Err(format!(
                    "{value} is not a memory size like \"512MB\" or \"4GB\""
                ))
            }
        }
    }
}

/// `auto`, `auto*F`, `auto/F` (F a positive integer) as (operator, factor).
fn parse_auto(text: &str) -> Option<(char, i64)> {
    let t: String = text.split_whitespace().collect::<String>().to_lowercase();
    let rest = t.strip_prefix("auto")?;
    if rest.is_empty() {
        return Some(('*', 1));
    }
    let op = rest.chars().next()?;
    let f: i64 = rest[1..].parse().ok()?;
    (matches!(op, '*' | '/') && f > 0).then_some((op, f))
}

fn auto_text(op: char, f: i64) -> String {
    if f == 1 {
        "auto".into()
    } else {
        format!("auto{op}{f}")
    }
}

/// Replace the `auto` values of `point` by numbers for `rows` train rows.
pub fn resolve_auto(params: &[Param], point: &Params, rows: usize) -> Params {
    point
        .iter()
        .map(|(k, v)| {
            let resolved = find(params, k).and_then(|p| {
                let (Kind::Int { min, max }, Some(auto)) = (p.kind, p.auto) else {
                    return None;
                };
                let (op, f) = parse_auto(v.as_str()?)?;
                let base = (auto.value)(rows);
                let n = if op == '*' {
                    base * f
                } else {
                    (base + f / 2) / f
                };
                Some(Value::from(n.clamp(min, max)))
            });
            (k.clone(), resolved.unwrap_or_else(|| v.clone()))
        })
        .collect()
}

impl Rule {
    /// Whether `point` obeys the rule (an `AtLeast` rule whose keys are not both set holds).
    pub fn check(&self, point: &Params) -> Result<(), String> {
        let get = |name: &str| {
            point
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        };
        match *self {
            Rule::AtLeast { key, factor, other } => {
                match (
                    get(key).and_then(Value::as_i64),
                    get(other).and_then(Value::as_i64),
                ) {
                    (Some(a), Some(b)) if a < factor * b => Err(format!(
                        "{key} ({a}) must be at least {} ({})",
                        if factor == 1 {
                            other.to_string()
                        } else {
                            format!("{factor}*{other}")
                        },
                        factor * b
                    )),
                    _ => Ok(()),
                }
            }
            Rule::Requires { key, other } => match (get(key), get(other)) {
                (Some(v), None) => Err(format!("{key} ({v}) needs {other}: give {other} too")),
                _ => Ok(()),
            },
        }
    }
}

impl AlgorithmDecl {
    /// Check a build point: known keys, valid values, required keys present, rules obeyed;
    /// `auto` values resolve against `rows`.
    pub fn build_args(&self, given: &Params, rows: usize) -> Result<Args> {
        let point = resolve_auto(self.build, given, rows);
        self.check_point(&point, self.build, "build")
    }

    /// Check a query point like [`AlgorithmDecl::build_args`].
    pub fn query_args(&self, given: &Params) -> Result<Args> {
        self.check_point(given, self.query, "query")
    }

    /// The rules of this algorithm that `point` breaks, as one message (`None`: all hold).
    pub fn broken_rules(&self, point: &Params) -> Option<String> {
        let broken: Vec<String> = self
            .rules
            .iter()
            .filter_map(|r| r.check(point).err())
            .collect();
        (!broken.is_empty()).then(|| broken.join("; "))
    }

    fn check_point(&self, given: &Params, params: &[Param], what: &str) -> Result<Args> {
        let name = self.name;
        let mut out = Params::new();
        for (key, value) in given {
            let p = find(params, key).ok_or_else(|| {
                Error::Config(format!(
                    "{name} has no {what} arg '{key}': its {what} args are {} \
                     (annbench algorithms lists them)",
                    key_names(params)
                ))
            })?;
            let v = check_value(p, value).map_err(|why| {
                Error::Config(format!("{name} {what} arg {}={value}: {why}", p.name))
            })?;
            if v.is_string() && p.auto.is_some() {
                return Err(Error::Config(format!(
                    "{name} {what} arg {}={value}: auto values resolve against the loaded rows; \
                     give a number here",
                    p.name
                )));
            }
            out.insert(p.name.to_string(), v);
        }
        for p in params {
            if p.need == Need::Required && !out.contains_key(p.name) {
                return Err(Error::Config(format!(
                    "{name} {what} args need {} ({})",
                    p.name, p.kind
                )));
            }
        }
        if let Some(why) = self.broken_rules(&out) {
            return Err(Error::Config(format!(
                "{name} {what} point {}: {why}",
                crate::params::describe(&out)
            )));
        }
        Ok(Args(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::param::Auto;
    use serde_json::json;

    const AUTO: Auto = Auto {
        value: |rows| (rows / 1000).max(1) as i64,
        doc: "rows/1000",
    };
    const PARAMS: &[Param] = &[
        Param::int("M", 2, 100, "m"),
        Param::int("lists", 1, 50, "l").with_auto(AUTO),
        Param::choice("engine", &["InnoDB", "MyISAM"], "e").optional("InnoDB"),
        Param::memory("maintenance_work_mem", "mem").optional("server"),
    ];

    fn p(v: Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn values_are_checked_and_normalised() {
        let [m, lists, engine, mem] = PARAMS else {
            unreachable!()
        };
        assert_eq!(check_value(m, &json!(16)), Ok(json!(16)));
        assert!(check_value(m, &json!(1)).unwrap_err().contains("2..=100"));
        assert!(check_value(m, &json!("auto")).is_err());
        assert_eq!(check_value(lists, &json!("Auto * 2")), Ok(json!("auto*2")));
        assert_eq!(check_value(lists, &json!("auto/1")), Ok(json!("auto")));
        assert!(check_value(lists, &json!("auto-2")).is_err());
        assert_eq!(check_value(engine, &json!("myisam")), Ok(json!("MyISAM")));
        assert!(check_value(mem, &json!("64MB")).is_ok());
        assert!(check_value(mem, &json!("1 GB; DROP")).is_err());
    }

    #[test]
    fn auto_resolves_against_rows_and_clamps_to_the_range() {
        let point = p(json!({"M": 8, "lists": "auto*2"}));
        assert_eq!(
            resolve_auto(PARAMS, &point, 4000),
            p(json!({"M": 8, "lists": 8}))
        );
        let point = p(json!({"lists": "auto/4"}));
        assert_eq!(resolve_auto(PARAMS, &point, 1000), p(json!({"lists": 1})));
        let point = p(json!({"lists": "auto"}));
        assert_eq!(
            resolve_auto(PARAMS, &point, 10_000_000),
            p(json!({"lists": 50}))
        );
    }

    #[test]
    fn rules_name_both_values() {
        let r = Rule::AtLeast {
            key: "ef_construction",
            factor: 2,
            other: "M",
        };
        assert_eq!(r.to_string(), "ef_construction >= 2*M");
        let e = r
            .check(&p(json!({"m": 16, "ef_construction": 31})))
            .unwrap_err();
        assert_eq!(e, "ef_construction (31) must be at least 2*M (32)");
        assert!(r.check(&p(json!({"M": 16}))).is_ok());
    }
}
