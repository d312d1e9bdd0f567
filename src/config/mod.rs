//! `algorithms/<name>/config.yml` grids, with ann-benchmarks' semantics: in each run group the
//! build args expand to a Cartesian product (one index build each) and the query args expand to
//! a list run against every build of the group.
//!
//! ```yaml
//! algorithm: pgvector
//! groups:
//!   - name: efc64            # optional, for messages
//!     build: {ef_construction: [64], M: [8, 16, 32]}
//!     query: {ef_search: [10, 20, 40]}
//! ```
//!
//! A value may be a scalar or a list. Parsing is strict: an unknown key names the file, the key
//! and the allowed keys. Keys, values and rules come from the algorithm's declaration in the
//! registry ([`crate::registry::ALGORITHMS`]), which also holds the shipped default grids.
//! Integer keys that declare `auto` take `auto`, `auto*N` or `auto/N`, resolved against the
//! dataset's train rows when those are known.

use crate::params::Params;
use crate::registry::args::{self, check_value, key_names};
use crate::registry::{self, AlgorithmDecl, Param};
use crate::{Error, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    algorithm: String,
    groups: Vec<GroupFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupFile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    build: Map<String, Value>,
    #[serde(default)]
    query: Map<String, Value>,
}

/// `key -> values` in config order.
type Axes = Vec<(String, Vec<Value>)>;

/// One index build and the query points run against it.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildPoint {
    pub build_args: Params,
    pub query_args: Vec<Params>,
}

/// The expanded, validated grid of one algorithm, in config order.
#[derive(Debug, Clone)]
pub struct Grid {
    pub algorithm: String,
    /// Where the grid came from, e.g. `algorithms/mariadb/config.yml (built in)`.
    pub source: String,
    pub builds: Vec<BuildPoint>,
    /// Points dropped because an override made them invalid.
    pub warnings: Vec<String>,
}

/// `--build KEY=V1,V2` and `--query KEY=V1,V2`: replace that key's values in every group.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub build: Vec<(String, Vec<Value>)>,
    pub query: Vec<(String, Vec<Value>)>,
}

impl Overrides {
    fn is_empty(&self) -> bool {
        self.build.is_empty() && self.query.is_empty()
    }
}

/// The shipped default config of `algorithm`.
pub fn default_config(algorithm: &str) -> Option<&'static str> {
    registry::algorithm(algorithm).map(|a| a.grid)
}

/// Parse `KEY=V1,V2,...`; integers become numbers, anything else a string.
pub fn parse_override(text: &str) -> Result<(String, Vec<Value>)> {
    let bad = || {
        Error::Config(format!(
            "bad override '{text}': expected KEY=VALUE[,VALUE...], e.g. M=8,16 or ef_search=10,20"
        ))
    };
    let (key, values) = text.split_once('=').ok_or_else(bad)?;
    let key = key.trim();
    let values: Vec<Value> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse::<i64>()
                .map_or_else(|_| Value::from(v), Value::from)
        })
        .collect();
    if key.is_empty() || values.is_empty() {
        return Err(bad());
    }
    Ok((key.to_string(), values))
}

/// Read the grid of `algorithm` from `config_file` (or the embedded default), apply
/// `overrides`, expand and validate it; `auto` values resolve against `rows` when given.
pub fn load_grid(
    algorithm: &str,
    config_file: Option<&Path>,
    overrides: &Overrides,
    rows: Option<usize>,
) -> Result<Grid> {
    let (text, source) = match config_file {
        Some(path) => (
            crate::fsutil::read_text(path, "config")?,
            path.display().to_string(),
        ),
        None => (
            registry::find_algorithm(algorithm)?.grid.to_string(),
            format!("algorithms/{algorithm}/config.yml (built in)"),
        ),
    };
    let grid = parse_grid(&text, &source, overrides, rows)?;
    if grid.algorithm != algorithm {
        return Err(Error::Config(format!(
            "{source} is for algorithm '{}', not '{algorithm}': pass it with --algorithm {}",
            grid.algorithm, grid.algorithm
        )));
    }
    Ok(grid)
}

/// The `algorithm:` a config text names (to pick algorithms from `--config` files).
pub fn config_algorithm(text: &str, source: &str) -> Result<String> {
    parse_file(text, source).map(|f| f.algorithm)
}

fn parse_file(text: &str, source: &str) -> Result<ConfigFile> {
    // Editors on Windows start UTF-8 files with a byte-order mark; YAML allows it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    refuse_duplicate_keys(text, source)?;
    serde_norway::from_str(text).map_err(|e| Error::Config(format!("{source}: {e}")))
}

/// A key given twice in one mapping (`m: [16]` then `m: [32]` in a group) is an error naming
/// the file, the key and its line: read into a map, the second would silently replace the
/// first and a grid would measure other values than the file shows. (Struct fields already
/// say `duplicate field`; a generic YAML value refuses any repeated key.)
fn refuse_duplicate_keys(text: &str, source: &str) -> Result<()> {
    match serde_norway::from_str::<serde_norway::Value>(text) {
        Err(e) if e.to_string().contains("duplicate entry") => {
            let what = e.to_string();
            let what = what.split(" at line ").next().unwrap_or(&what);
            let key = what
                .split_once("with key ")
                .map(|(_, k)| k.trim_matches(['"', '`']).to_string());
            let place = match (e.location(), key) {
                (Some(l), Some(k)) => match second_key_line(text, l.index(), &k) {
                    Some(line) => format!(" (line {line})"),
                    None => format!(" (in the mapping at line {})", l.line()),
                },
                (Some(l), None) => format!(" (in the mapping at line {})", l.line()),
                _ => String::new(),
            };
            Err(Error::Config(format!(
                "{source}: {what}{place}: a key may appear once in a mapping; keep one and \
                 list every value there (e.g. m: [16, 32])"
            )))
        }
        // Other errors are reported by the typed parse, with its own words.
        _ => Ok(()),
    }
}

/// The line of the second `key:` from byte `from` (where the mapping starts), as a key: at a
/// line's start (after indentation or `- `) or after `{` or `,` in a flow mapping.
fn second_key_line(text: &str, from: usize, key: &str) -> Option<usize> {
    let rest = text.get(from..)?;
    let mut seen = 0;
    for (i, _) in rest.match_indices(key) {
        let after = rest[i + key.len()..].trim_start_matches(['"', '\'']);
        let before = rest[..i]
            .trim_end_matches(['"', '\''])
            .trim_end_matches([' ', '\t']);
        let starts_key = before.is_empty() || before.ends_with(['\n', '{', ',', '-']);
        if after.starts_with(':') && starts_key {
            seen += 1;
            if seen == 2 {
                return Some(text[..from + i].matches('\n').count() + 1);
            }
        }
    }
    None
}

/// Parse, override, expand and validate a config text; `auto` values resolve against `rows`
/// when given.
pub fn parse_grid(
    text: &str,
    source: &str,
    overrides: &Overrides,
    rows: Option<usize>,
) -> Result<Grid> {
    let file = parse_file(text, source)?;
    let algo = registry::find_algorithm(&file.algorithm)?;
    let algorithm = file.algorithm;
    let build_over = check_overrides(&overrides.build, algo.build, "--build", &algorithm)?;
    let query_over = check_overrides(&overrides.query, algo.query, "--query", &algorithm)?;
    let mut builds: Vec<BuildPoint> = Vec::new();
    let mut invalid = Vec::new();
    for (i, group) in file.groups.into_iter().enumerate() {
        let label = group.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
        let at = |what: &str| format!("{source}: group {label}, {what}");
        let mut build = axes(group.build, algo.build, &at("build"))?;
        let mut query = axes(group.query, algo.query, &at("query"))?;
        apply(&mut build, &build_over);
        apply(&mut query, &query_over);
        let mut query_points: Vec<Params> = Vec::new();
        for q in valid_points(algo, product(&query), &mut invalid) {
            let q = registry::filter::canonical(q);
            if !query_points.contains(&q) {
                query_points.push(q);
            }
        }
        if query_points.is_empty() {
            continue;
        }
        let build_points = product(&build)
            .into_iter()
            .map(|p| rows.map_or_else(|| p.clone(), |r| args::resolve_auto(algo.build, &p, r)))
            .collect();
        for point in valid_points(algo, build_points, &mut invalid) {
            match builds.iter_mut().find(|b| b.build_args == point) {
                // Same build in two groups (or two `auto` values that resolve alike): one
                // build, the union of their query points.
                Some(b) => {
                    for q in &query_points {
                        if !b.query_args.contains(q) {
                            b.query_args.push(q.clone());
                        }
                    }
                }
                None => builds.push(BuildPoint {
                    build_args: point,
                    query_args: query_points.clone(),
                }),
            }
        }
    }
    let mut warnings = Vec::new();
    if !invalid.is_empty() {
        let list = invalid.join("; ");
        if overrides.is_empty() || builds.is_empty() {
            return Err(Error::Config(format!(
                "{source}: invalid {algorithm} point(s): {list}; fix or remove them"
            )));
        }
        warnings.push(format!(
            "{algorithm}: skipped points the overrides made invalid: {list}"
        ));
    }
    if builds.is_empty() {
        return Err(Error::Config(format!(
            "{source}: the grid has no build points"
        )));
    }
    Ok(Grid {
        algorithm,
        source: source.to_string(),
        builds,
        warnings,
    })
}

/// The points that obey the algorithm's rules; the others are described in `invalid`.
fn valid_points(
    algo: &AlgorithmDecl,
    points: Vec<Params>,
    invalid: &mut Vec<String>,
) -> Vec<Params> {
    points
        .into_iter()
        .filter(|p| match algo.broken_rules(p) {
            None => true,
            Some(why) => {
                invalid.push(format!("{} ({why})", crate::params::describe(p)));
                false
            }
        })
        .collect()
}

/// Check and normalise a group's `key: value | [values]` map against the allowed keys.
fn axes(map: Map<String, Value>, allowed: &[Param], at: &str) -> Result<Axes> {
    let mut out = Vec::new();
    for (key, value) in map {
        let param = allowed.iter().find(|p| p.name == key).ok_or_else(|| {
            Error::Config(format!(
                "{at}: unknown key '{key}'; allowed keys: {}",
                key_names(allowed)
            ))
        })?;
        let values = match value {
            Value::Array(v) => v,
            scalar => vec![scalar],
        };
        if values.is_empty() {
            return Err(Error::Config(format!("{at}: key '{key}' has no values")));
        }
        let values = values
            .iter()
            .map(|v| check_value(param, v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|why| Error::Config(format!("{at}: {key}: {why}")))?;
        out.push((key, dedup(values)));
    }
    Ok(out)
}

/// Match override keys to the algorithm's keys (case-insensitively) and check the values.
fn check_overrides(
    over: &[(String, Vec<Value>)],
    allowed: &[Param],
    flag: &str,
    algorithm: &str,
) -> Result<Axes> {
    over.iter()
        .map(|(key, values)| {
            let param = args::find(allowed, key).ok_or_else(|| {
                Error::Config(format!(
                    "{flag} {key}: unknown key for {algorithm}; allowed keys: {}",
                    key_names(allowed)
                ))
            })?;
            let values = values
                .iter()
                .map(|v| check_value(param, v))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| Error::Config(format!("{flag} {}: {why}", param.name)))?;
            Ok((param.name.to_string(), dedup(values)))
        })
        .collect()
}

/// Values in first-seen order without repeats (after normalising, so `myisam` and `MyISAM`
/// are one): a value listed twice is one point, measured once.
fn dedup(values: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(values.len());
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Replace (or add) the overridden keys.
fn apply(axes: &mut Axes, over: &Axes) {
    for (key, values) in over {
        match axes.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = values.clone(),
            None => axes.push((key.clone(), values.clone())),
        }
    }
}

/// Cartesian product in config order (the last key varies fastest); one empty point for no keys.
fn product(axes: &Axes) -> Vec<Params> {
    let mut points = vec![Params::new()];
    for (key, values) in axes {
        points = points
            .iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut p = p.clone();
                    p.insert(key.clone(), v.clone());
                    p
                })
            })
            .collect();
    }
    points
}

/// Whether `algorithm` declares the build (or query) key `key` (ignoring case).
pub fn knows_key(algorithm: &str, key: &str, query: bool) -> bool {
    registry::algorithm(algorithm)
        .is_some_and(|a| args::find(if query { a.query } else { a.build }, key).is_some())
}

#[cfg(test)]
mod tests;
