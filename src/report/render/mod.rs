//! A plain table of typed cells, and its three renderings: Markdown for people, CSV and JSON
//! (records orient) for tools. Reports turn their data into a [`Table`]; the writers here know
//! nothing about reports.
//!
//! JSON carries full precision (shortest round-trip decimal) under the stable column `name`;
//! CSV the same names with floats to 6 significant digits ([`round6`]); Markdown each
//! column's `title` with the rounding of its [`Style`].

mod csv;
mod json;
mod markdown;

pub use self::csv::to_csv;
pub use self::json::{pretty as json_pretty, to_json, to_json_records};
pub use self::markdown::{display_text, to_markdown, truncate4};

use std::fmt;
use std::str::FromStr;

/// One value of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// No value: empty in CSV and Markdown, `null` in JSON.
    Null,
    /// No value, with a reason shown in Markdown only (e.g. `not reached (best recall 0.97)`).
    Missing(String),
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl From<Option<f64>> for Cell {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Cell::Null, Cell::Float)
    }
}

impl From<Option<&str>> for Cell {
    fn from(v: Option<&str>) -> Self {
        v.map_or(Cell::Null, |s| Cell::Text(s.to_string()))
    }
}

/// How Markdown shows a column's numbers (CSV and JSON always carry the exact value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Style {
    /// As stored.
    Plain,
    /// Rounded to this many decimals.
    Fixed(usize),
    /// Truncated (never rounded up) to 4 decimals, so a recall below a threshold never
    /// displays as reaching it (0.98999 shows as 0.9899, not 0.9900).
    Recall,
    /// A ratio, `2.31x`.
    Ratio,
    /// Seconds shown as milliseconds with 3 decimals.
    Millis,
}

/// A column: stable machine `name`, Markdown `title`, Markdown `style`.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub title: String,
    pub style: Style,
    /// Shown in Markdown.
    pub in_markdown: bool,
    /// In CSV and JSON (false for Markdown-only renderings of other columns, such as a
    /// figure with its interval as one text).
    pub in_machine: bool,
}

impl Column {
    /// A column shown everywhere.
    pub fn new(name: &str, title: &str, style: Style) -> Self {
        Column {
            name: name.to_string(),
            title: title.to_string(),
            style,
            in_markdown: true,
            in_machine: true,
        }
    }

    /// The same column, in Markdown only.
    pub fn markdown_only(mut self) -> Self {
        self.in_machine = false;
        self
    }

    /// The same column, hidden in Markdown.
    pub fn machine_only(mut self) -> Self {
        self.in_markdown = false;
        self
    }
}

/// Columns and rows; every row has one cell per column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

/// Output format of `table`, `export` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Markdown,
    Csv,
    Json,
}

impl FromStr for Format {
    type Err = crate::Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "markdown" | "md" => Ok(Format::Markdown),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            other => Err(crate::Error::Config(format!(
                "unknown format '{other}': expected markdown, csv or json"
            ))),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Json => "json",
        })
    }
}

/// `x` rounded to 6 significant digits, in the shortest decimal that reads back as that
/// (`0.9712000000000001` -> `0.9712`, `1234.5678` -> `1234.57`, `3.0` -> `3`): as many digits
/// as any measured figure here carries, without binary floating-point noise.
pub fn round6(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return shortest(x);
    }
    let rounded: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    shortest(rounded)
}

/// The shortest decimal of `x` that parses back exactly, without a trailing `.0` and never
/// in exponent form.
fn shortest(x: f64) -> String {
    let text = x.to_string();
    match text.strip_suffix(".0") {
        Some(int) => int.to_string(),
        None => text,
    }
}

/// Render `table` in `format` (JSON: an array of records, one object per row).
pub fn render(table: &Table, format: Format) -> crate::Result<String> {
    match format {
        Format::Markdown => Ok(to_markdown(table)),
        Format::Csv => to_csv(table),
        Format::Json => to_json(table),
    }
}
