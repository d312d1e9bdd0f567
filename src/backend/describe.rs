//! The registry as data and as text: what `annbench algorithms` prints, what Python's
//! `annbench.algorithms()` returns, and `docs/algorithms.md` (generated, checked by a test).

use super::ALGORITHMS;
use super::spec::{Algorithm, Need, Param};
use serde::Serialize;
use std::fmt::Write;

/// One algorithm, described.
#[derive(Debug, Clone, Serialize)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub display: &'static str,
    pub summary: &'static str,
    /// `MariaDB >= 11.7`, `PostgreSQL, pgvector >= 0.7`, or `in-process`.
    pub server: String,
    pub max_dimension: usize,
    pub build: Vec<ParamInfo>,
    pub query: Vec<ParamInfo>,
    /// e.g. `ef_construction >= 2*M`.
    pub rules: Vec<String>,
}

/// One parameter, described.
#[derive(Debug, Clone, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    /// e.g. `integer 2..=100`, `InnoDB | MyISAM`.
    pub values: String,
    pub required: bool,
    /// What applies when an optional parameter is absent.
    pub default: Option<&'static str>,
    /// How `auto` derives from the train rows, where it is accepted.
    pub auto: Option<&'static str>,
    pub help: &'static str,
}

/// Every registered algorithm, in registry order.
pub fn algorithms() -> Vec<AlgorithmInfo> {
    ALGORITHMS.iter().map(|a| describe(a)).collect()
}

/// One algorithm.
pub fn describe(a: &Algorithm) -> AlgorithmInfo {
    let server = match a.database {
        None => "in-process".to_string(),
        Some(db) => {
            let (major, minor) = a.min_version;
            let name = db.kind.name();
            if db.versioned == name {
                format!("{name} >= {major}.{minor}")
            } else {
                format!("{name}, {} >= {major}.{minor}", db.versioned)
            }
        }
    };
    AlgorithmInfo {
        name: a.name,
        display: a.display,
        summary: a.summary,
        server,
        max_dimension: a.max_dimension,
        build: a.build.iter().map(param).collect(),
        query: a.query.iter().map(param).collect(),
        rules: a.rules.iter().map(|r| r.to_string()).collect(),
    }
}

fn param(p: &Param) -> ParamInfo {
    ParamInfo {
        name: p.name,
        values: p.kind.to_string(),
        required: p.need == Need::Required,
        default: match p.need {
            Need::Required => None,
            Need::Optional(d) => Some(d),
        },
        auto: p.auto.map(|a| a.doc),
        help: p.help,
    }
}

impl ParamInfo {
    /// `integer 1..=32768 or auto (rows/1000 ...); required` as one phrase.
    pub fn values_text(&self) -> String {
        let mut s = self.values.clone();
        if let Some(auto) = self.auto {
            s.push_str(&format!(", or auto, auto*N, auto/N with auto = {auto}"));
        }
        match self.default {
            None => s.push_str("; required"),
            Some(d) => s.push_str(&format!("; default: {d}")),
        }
        s
    }
}

/// `annbench algorithms` as plain text.
pub fn text() -> String {
    let mut out = String::new();
    for a in algorithms() {
        let dims = if a.max_dimension == usize::MAX {
            String::new()
        } else {
            format!(", up to {} dimensions", a.max_dimension)
        };
        let _ = writeln!(out, "{} ({}; {}{dims})", a.name, a.display, a.server);
        let _ = writeln!(out, "  {}", a.summary);
        for (what, params) in [("build", &a.build), ("query", &a.query)] {
            for p in params.iter() {
                let _ = writeln!(out, "  {what} {:<22} {}", p.name, p.values_text());
                let _ = writeln!(out, "  {:<28} {}", "", p.help);
            }
        }
        for r in &a.rules {
            let _ = writeln!(out, "  rule  {r}");
        }
        out.push('\n');
    }
    out
}

/// `docs/algorithms.md`.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Algorithms\n\n\
         Generated from the declarations (`src/registry/`, each algorithm's `decl.rs`) by \
         `annbench algorithms --format markdown`; a test keeps this file in step with the code. \
         Each algorithm's default grid is `algorithms/<name>/config.yml`. Keys match ignoring \
         case; a grid point that breaks a range or a rule is refused before anything runs.\n",
    );
    databases_markdown(&mut out);
    for a in algorithms() {
        let _ = write!(
            out,
            "\n## `{}` ({})\n\n{}.\n\n",
            a.name, a.display, a.summary
        );
        let _ = write!(out, "Server: {}", a.server);
        if a.max_dimension != usize::MAX {
            let _ = write!(out, "; at most {} dimensions", a.max_dimension);
        }
        out.push_str(".\n");
        if !a.build.is_empty() || !a.query.is_empty() {
            out.push_str("\n| parameter | kind | values | what it does |\n|---|---|---|---|\n");
            for (what, params) in [("build", &a.build), ("query", &a.query)] {
                for p in params.iter() {
                    // A `|` inside a cell would end it.
                    let cell = |t: &str| t.replace('|', "\\|");
                    let _ = writeln!(
                        out,
                        "| `{}` | {what} | {} | {} |",
                        p.name,
                        cell(&p.values_text()),
                        cell(p.help)
                    );
                }
            }
        }
        if !a.rules.is_empty() {
            let _ = writeln!(
                out,
                "\nRules: {}.",
                a.rules
                    .iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    out
}

/// The databases' section of `docs/algorithms.md`: how each is named on the command line, in
/// Python and in the environment, from each one's declaration.
fn databases_markdown(out: &mut String) {
    out.push_str(
        "\n## Databases\n\n\
         Each database declares these names once (`src/backend/<database>/decl.rs`); a server's URL \
         comes from, in this order: the flag (or Python keyword), the variable, \
         the ann-benchmarks forks' variables, then the `servers.env` of \
         `scripts/databases.sh`.\n\n\
         | database | flag | Python | variable | forks' variables | URL | server processes |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for db in crate::backend::databases() {
        let d = db.kind.decl();
        let forks = d.forks.map_or("-".to_string(), |f| {
            format!("`{}` + `{}`", f.conn_args, f.db_name)
        });
        let _ = writeln!(
            out,
            "| {} | `{} URL` | `{}=` | `{}` | {forks} | `{}` | {} |",
            d.name,
            d.flag,
            d.key,
            d.url_var,
            d.example_url,
            d.server_commands
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_algorithms_md_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/algorithms.md");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == super::markdown(),
            "docs/algorithms.md is stale: run `annbench algorithms --format markdown > \
             docs/algorithms.md`"
        );
    }
}
