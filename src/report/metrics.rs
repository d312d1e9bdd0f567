//! The registry of metrics: every figure of a point, declared once with its column name,
//! what it means, its unit, how Markdown shows it, the group of columns it belongs to and, for
//! the figures a plot axis can show, its axis. The export's fixed columns are [`METRICS`] in
//! order ([`super::export`]); the HTML tooltips ([`super::html`]), the clients table
//! ([`super::clients`]), the difficulty split ([`super::difficulty`]) and Python's
//! `annbench.plot.METRICS` (through [`to_json`]) read it too. Names and units are a stable
//! interface (docs/vocabulary.md).

use super::render::Style;

/// The unit of a metric; a column with a unit ends with its suffix (docs/vocabulary.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Words or ids.
    Text,
    /// A whole number of things.
    Count,
    /// A number without unit: a fraction (recall, a share of the CPU), a ratio, an average.
    Number,
    /// Per second (QPS).
    PerSecond,
    /// Milliseconds (`_ms`): per-query times.
    Ms,
    /// Microseconds (`_us`).
    Us,
    /// Seconds (`_seconds`): loads, builds.
    Seconds,
    /// MiB = 2^20 bytes (`_mib`): sizes.
    Mib,
    /// KiB = 2^10 bytes (`_kib`): storage read or written per query.
    Kib,
}

impl Unit {
    /// The name's ending that says the unit (`_ms`), `None` for units names do not carry.
    pub fn suffix(self) -> Option<&'static str> {
        match self {
            Unit::Ms => Some("_ms"),
            Unit::Us => Some("_us"),
            Unit::Seconds => Some("_seconds"),
            Unit::Mib => Some("_mib"),
            Unit::Kib => Some("_kib"),
            Unit::Text | Unit::Count | Unit::Number | Unit::PerSecond => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Text => "text",
            Unit::Count => "count",
            Unit::Number => "number",
            Unit::PerSecond => "per_second",
            Unit::Ms => "ms",
            Unit::Us => "us",
            Unit::Seconds => "seconds",
            Unit::Mib => "mib",
            Unit::Kib => "kib",
        }
    }
}

/// The columns group a metric belongs to, in the export's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Which point: dataset, k, algorithm, label, clients, name.
    Point,
    /// How good the answers are.
    Recall,
    /// Queries per second and their interval.
    Throughput,
    /// The passes behind the figure and their spread.
    Passes,
    /// What else ran on the machine during the passes.
    Interference,
    /// What a filter changed (filtered points).
    Filter,
    /// Per-query latency of the median pass.
    Latency,
    /// The index: build, load and sizes.
    Index,
    /// The database server's cost (docs/server-cost.md); empty where not measured.
    Server,
}

impl Group {
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Point => "point",
            Group::Recall => "recall",
            Group::Throughput => "throughput",
            Group::Passes => "passes",
            Group::Interference => "interference",
            Group::Filter => "filter",
            Group::Latency => "latency",
            Group::Index => "index",
            Group::Server => "server",
        }
    }
}

/// The default scale of a plot axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

impl Scale {
    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Linear => "linear",
            Scale::Log => "log",
        }
    }
}

/// How a plot axis shows a metric (Python's `annbench.plot.Metric`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plot {
    /// The axis label, with its unit.
    pub label: &'static str,
    /// The name in titles.
    pub short: &'static str,
    pub scale: Scale,
    /// Where the Pareto frontier lies (latency, build time, size).
    pub lower_is_better: bool,
    /// False for properties of the index or of the answers (recall, build time, size), the
    /// same at every client count: their plots draw one line per algorithm and label.
    pub per_client: bool,
    /// Position in the list of plot metrics (`annbench.plot.METRICS` keeps its order).
    pub rank: u8,
}

/// One metric of a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricSpec {
    /// The column name in every output (CSV, JSON, DataFrames).
    pub name: &'static str,
    /// The Markdown heading where a table shows it (`p99 ms`).
    pub title: &'static str,
    /// What it means.
    pub description: &'static str,
    pub unit: Unit,
    /// How Markdown tables of a few columns show it (`table --by-clients`, the difficulty
    /// split); the export shows every figure as stored but recalls (see [`Self::export_style`]).
    pub style: Style,
    pub group: Group,
    /// One of the grouped lines of the HTML tooltip shows it (other columns are listed under
    /// their own names).
    pub tip_line: bool,
    /// A plot axis can show it.
    pub plot: Option<Plot>,
}

impl MetricSpec {
    /// Its Markdown style in the export: recalls truncated (never rounded up to a threshold),
    /// every other figure as stored.
    pub fn export_style(&self) -> Style {
        if self.style == Style::Recall {
            Style::Recall
        } else {
            Style::Plain
        }
    }

    /// A [`Column`](super::render::Column) of it, with its title and style.
    pub fn column(&self) -> super::render::Column {
        super::render::Column::new(self.name, self.title, self.style)
    }

    const fn tip(mut self) -> Self {
        self.tip_line = true;
        self
    }

    #[allow(clippy::too_many_arguments)]
    const fn plot(
        mut self,
        rank: u8,
        label: &'static str,
        short: &'static str,
        scale: Scale,
        lower_is_better: bool,
        per_client: bool,
    ) -> Self {
        self.plot = Some(Plot {
            label,
            short,
            scale,
            lower_is_better,
            per_client,
            rank,
        });
        self
    }
}

const fn m(
    name: &'static str,
    title: &'static str,
    unit: Unit,
    style: Style,
    group: Group,
    description: &'static str,
) -> MetricSpec {
    MetricSpec {
        name,
        title,
        description,
        unit,
        style,
        group,
        tip_line: false,
        plot: None,
    }
}

use Group as G;
use Style::{Fixed, Plain, Recall};
use Unit as U;

const SPECS: [MetricSpec; 59] = [
    m(
        "dataset",
        "dataset",
        U::Text,
        Plain,
        G::Point,
        "The dataset's name.",
    )
    .tip(),
    m(
        "count",
        "k",
        U::Count,
        Plain,
        G::Point,
        "k: the neighbours asked for per query.",
    )
    .tip(),
    m(
        "algorithm",
        "algorithm",
        U::Text,
        Plain,
        G::Point,
        "The algorithm's registry id (`mariadb`, `pgvector_halfvec`).",
    )
    .tip(),
    m(
        "label",
        "label",
        U::Text,
        Plain,
        G::Point,
        "The run label; empty without one.",
    )
    .tip(),
    m(
        "clients",
        "clients",
        U::Count,
        Plain,
        G::Point,
        "Concurrent client connections.",
    )
    .tip(),
    m(
        "name",
        "parameters",
        U::Text,
        Plain,
        G::Point,
        "The point's display name with its parameters (`MariaDB(m=16, ef_search=40)`).",
    )
    .tip(),
    m(
        "recall",
        "recall",
        U::Number,
        Recall,
        G::Recall,
        "k-NN recall: the share of the k ids returned within the true k-th distance (plus a \
         small tolerance).",
    )
    .tip()
    .plot(0, "Recall", "Recall", Scale::Linear, false, false),
    m(
        "epsilon_recall",
        "epsilon recall",
        U::Number,
        Recall,
        G::Recall,
        "Epsilon recall: the share of the k ids returned within 1.01 x the true k-th distance.",
    )
    .tip()
    .plot(
        1,
        "Epsilon recall (distance <= 1.01 x the true k-th)",
        "Epsilon recall",
        Scale::Linear,
        false,
        false,
    ),
    m(
        "qps",
        "QPS",
        U::PerSecond,
        Fixed(1),
        G::Throughput,
        "Queries per second, all clients together: the median of the passes in use.",
    )
    .tip()
    .plot(
        2,
        "Queries per second (1/s)",
        "QPS",
        Scale::Log,
        false,
        true,
    ),
    m(
        "qps_ci_low",
        "low",
        U::PerSecond,
        Fixed(1),
        G::Throughput,
        "Low end of the QPS confidence interval.",
    )
    .tip(),
    m(
        "qps_ci_high",
        "high",
        U::PerSecond,
        Fixed(1),
        G::Throughput,
        "High end of the QPS confidence interval.",
    )
    .tip(),
    m(
        "qps_ci_level",
        "level",
        U::Number,
        Plain,
        G::Throughput,
        "Coverage of the QPS interval (0.95, less with fewer than 6 passes).",
    )
    .tip(),
    m(
        "qps_best",
        "best QPS",
        U::PerSecond,
        Fixed(1),
        G::Throughput,
        "QPS of the best pass.",
    )
    .tip()
    .plot(
        3,
        "Queries per second, best pass (1/s)",
        "Best-pass QPS",
        Scale::Log,
        false,
        true,
    ),
    m(
        "qps_min",
        "min QPS",
        U::PerSecond,
        Fixed(1),
        G::Passes,
        "Lowest QPS of the passes in use.",
    )
    .tip(),
    m(
        "qps_max",
        "max QPS",
        U::PerSecond,
        Fixed(1),
        G::Passes,
        "Highest QPS of the passes in use.",
    )
    .tip(),
    m(
        "qps_cv",
        "QPS CV",
        U::Number,
        Fixed(3),
        G::Passes,
        "Coefficient of variation of the QPS of the passes in use.",
    )
    .tip(),
    m(
        "passes",
        "passes",
        U::Count,
        Plain,
        G::Passes,
        "Passes in use.",
    )
    .tip(),
    m(
        "passes_total",
        "passes run",
        U::Count,
        Plain,
        G::Passes,
        "Passes run, counting those left out.",
    )
    .tip(),
    m(
        "flags",
        "flags",
        U::Text,
        Plain,
        G::Passes,
        "The reasons for caution, comma-separated (`interference,spread,stalled`).",
    )
    .tip(),
    m(
        "other_cpu_share",
        "other CPU",
        U::Number,
        Fixed(2),
        G::Interference,
        "The worst share of the machine's CPU other processes took during a pass in use.",
    )
    .tip(),
    m(
        "steal_share",
        "steal",
        U::Number,
        Fixed(2),
        G::Interference,
        "The worst share of the machine's CPU stolen by the hypervisor during a pass in use.",
    )
    .tip(),
    m(
        "load_average",
        "load",
        U::Number,
        Fixed(1),
        G::Interference,
        "The worst load average during a pass in use.",
    )
    .tip(),
    m(
        "cpu_probe_us",
        "CPU probe us",
        U::Us,
        Fixed(1),
        G::Interference,
        "The CPU speed probe: median over the passes in use of the CPU microseconds a fixed \
         piece of work took around each pass; higher is a slower CPU.",
    ),
    m(
        "filter",
        "filter",
        U::Text,
        Plain,
        G::Filter,
        "The filter kind of filtered points (`range`, `label`); empty for unfiltered points.",
    ),
    m(
        "short_results",
        "short",
        U::Count,
        Plain,
        G::Filter,
        "Queries answered with fewer than k ids (filtered points: fewer than min(k, \
         matching rows)).",
    )
    .tip(),
    m(
        "mean_rows",
        "rows",
        U::Number,
        Fixed(1),
        G::Filter,
        "Ids returned per query.",
    ),
    m(
        "plan",
        "plan",
        U::Text,
        Plain,
        G::Filter,
        "The plan EXPLAIN showed, in a few words (`vector index`, `B-tree + exact sort`).",
    ),
    m(
        "latency_mean_ms",
        "mean ms",
        U::Ms,
        Fixed(3),
        G::Latency,
        "Mean query latency of the median pass.",
    )
    .tip()
    .plot(
        4,
        "Mean latency (ms)",
        "Mean latency",
        Scale::Log,
        true,
        true,
    ),
    m(
        "latency_p50_ms",
        "p50 ms",
        U::Ms,
        Fixed(3),
        G::Latency,
        "Median query latency of the median pass.",
    )
    .tip()
    .plot(5, "p50 latency (ms)", "p50 latency", Scale::Log, true, true),
    m(
        "latency_p95_ms",
        "p95 ms",
        U::Ms,
        Fixed(3),
        G::Latency,
        "95th percentile query latency of the median pass.",
    )
    .tip()
    .plot(6, "p95 latency (ms)", "p95 latency", Scale::Log, true, true),
    m(
        "latency_p99_ms",
        "p99 ms",
        U::Ms,
        Fixed(3),
        G::Latency,
        "99th percentile query latency of the median pass.",
    )
    .tip()
    .plot(7, "p99 latency (ms)", "p99 latency", Scale::Log, true, true),
    m(
        "latency_p999_ms",
        "p99.9 ms",
        U::Ms,
        Fixed(3),
        G::Latency,
        "99.9th percentile query latency of the median pass.",
    )
    .tip()
    .plot(
        8,
        "p99.9 latency (ms)",
        "p99.9 latency",
        Scale::Log,
        true,
        true,
    ),
    m(
        "build_seconds",
        "isecs",
        U::Seconds,
        Fixed(1),
        G::Index,
        "Index build time alone.",
    )
    .tip()
    .plot(
        11,
        "Index build time (s)",
        "Build time",
        Scale::Log,
        true,
        false,
    ),
    m(
        "load_seconds",
        "load s",
        U::Seconds,
        Fixed(1),
        G::Index,
        "Table load time; empty for ann-benchmarks results, which do not separate it.",
    )
    .tip()
    .plot(13, "Load time (s)", "Load time", Scale::Log, true, false),
    m(
        "index_mib",
        "index MiB",
        U::Mib,
        Fixed(1),
        G::Index,
        "Size of the index.",
    )
    .tip()
    .plot(
        14,
        "Index size (MiB)",
        "Index size",
        Scale::Log,
        true,
        false,
    ),
    m(
        "table_mib",
        "table MiB",
        U::Mib,
        Fixed(1),
        G::Index,
        "Size of the table, without the index.",
    )
    .tip()
    .plot(
        15,
        "Table size (MiB)",
        "Table size",
        Scale::Log,
        true,
        false,
    ),
    m(
        "server_cpu_ms",
        "server CPU ms/q",
        U::Ms,
        Fixed(3),
        G::Server,
        "The server's CPU time (user + system) per query (local servers).",
    )
    .plot(
        9,
        "Server CPU per query (ms)",
        "Server CPU",
        Scale::Log,
        true,
        true,
    ),
    m(
        "server_cpu_user_ms",
        "server user ms/q",
        U::Ms,
        Fixed(3),
        G::Server,
        "The server's user CPU time per query (local servers).",
    ),
    m(
        "server_cpu_system_ms",
        "server system ms/q",
        U::Ms,
        Fixed(3),
        G::Server,
        "The server's system CPU time per query (local servers).",
    ),
    m(
        "server_cpu_cv",
        "server CPU CV",
        U::Number,
        Fixed(3),
        G::Server,
        "Coefficient of variation of the server's CPU per query over the passes.",
    ),
    m(
        "server_voluntary_switches",
        "voluntary sw/q",
        U::Number,
        Fixed(2),
        G::Server,
        "The server's voluntary context switches per query (local servers).",
    ),
    m(
        "server_involuntary_switches",
        "involuntary sw/q",
        U::Number,
        Fixed(2),
        G::Server,
        "The server's involuntary context switches per query (local servers).",
    ),
    m(
        "server_exec_ms",
        "server exec ms/q",
        U::Ms,
        Fixed(3),
        G::Server,
        "Execution time per query, from the server's statistics.",
    )
    .plot(
        10,
        "Server execution per query (ms)",
        "Server execution",
        Scale::Log,
        true,
        true,
    ),
    m(
        "client_network_ms",
        "client+net ms/q",
        U::Ms,
        Fixed(3),
        G::Server,
        "What the client and the network add per query: mean latency - server execution time.",
    ),
    m(
        "server_buffer_hits",
        "buffer hits/q",
        U::Number,
        Fixed(1),
        G::Server,
        "Buffer hits per query, from the server's statistics.",
    ),
    m(
        "server_buffer_reads",
        "buffer reads/q",
        U::Number,
        Fixed(1),
        G::Server,
        "Buffer reads per query, from the server's statistics.",
    ),
    m(
        "storage",
        "storage",
        U::Text,
        Plain,
        G::Server,
        "cached or io-bound: whether the server read more than 1 KiB per query from storage \
         (server_read_kib; local servers).",
    ),
    m(
        "io_reads",
        "reads/q",
        U::Number,
        Fixed(3),
        G::Server,
        "Reads of the block device holding the data directory per query (iostat r/s / QPS; \
         the whole device).",
    )
    .plot(
        16,
        "Storage reads per query",
        "Storage reads",
        Scale::Linear,
        true,
        true,
    ),
    m(
        "io_read_kib",
        "rKB/q",
        U::Kib,
        Fixed(2),
        G::Server,
        "KiB read from the block device holding the data directory per query (rkB/s / QPS; \
         the whole device).",
    ),
    m(
        "io_writes",
        "writes/q",
        U::Number,
        Fixed(3),
        G::Server,
        "Writes of the block device holding the data directory per query (w/s / QPS; the \
         whole device).",
    ),
    m(
        "io_write_kib",
        "wKB/q",
        U::Kib,
        Fixed(2),
        G::Server,
        "KiB written to the block device holding the data directory per query (wkB/s / QPS; \
         the whole device).",
    ),
    m(
        "server_read_kib",
        "server read KiB/q",
        U::Kib,
        Fixed(2),
        G::Server,
        "KiB the server processes read from storage per query (/proc/<pid>/io read_bytes; \
         local servers).",
    ),
    m(
        "server_write_kib",
        "server write KiB/q",
        U::Kib,
        Fixed(2),
        G::Server,
        "KiB the server processes wrote to storage per query (/proc/<pid>/io write_bytes; \
         local servers).",
    ),
    m(
        "build_cpu_seconds",
        "build CPU s",
        U::Seconds,
        Fixed(1),
        G::Server,
        "The server's CPU time of the index build (next to `build_seconds`).",
    )
    .plot(
        12,
        "Index build CPU time (s)",
        "Build CPU time",
        Scale::Log,
        true,
        false,
    ),
    m(
        "server_memory_after_build_mib",
        "memory after build MiB",
        U::Mib,
        Fixed(1),
        G::Server,
        "The server's resident memory after the build.",
    ),
    m(
        "server_memory_after_passes_mib",
        "memory after passes MiB",
        U::Mib,
        Fixed(1),
        G::Server,
        "The server's resident memory after the query passes.",
    ),
    m(
        "server_cpu_source",
        "CPU source",
        U::Text,
        Plain,
        G::Server,
        "Where the server's CPU time was read.",
    ),
    m(
        "server_statements_source",
        "statements source",
        U::Text,
        Plain,
        G::Server,
        "Where the server's statement statistics were read.",
    ),
    m(
        "io_source",
        "I/O source",
        U::Text,
        Plain,
        G::Server,
        "The block device of the io_* figures, and how its data directory was found.",
    ),
];

/// Every metric of a point, in the export's column order.
pub static METRICS: &[MetricSpec] = &SPECS;

/// The names of [`METRICS`], in order: the export's fixed columns.
pub const NAMES: [&str; SPECS.len()] = names();

const fn names() -> [&'static str; SPECS.len()] {
    let mut out = [""; SPECS.len()];
    let mut i = 0;
    while i < SPECS.len() {
        out[i] = SPECS[i].name;
        i += 1;
    }
    out
}

/// The metric named `name`, if the registry has it.
pub fn metric(name: &str) -> Option<&'static MetricSpec> {
    METRICS.iter().find(|m| m.name == name)
}

/// The metric named `name`; a name the registry lacks is a bug of the caller.
pub fn spec(name: &str) -> &'static MetricSpec {
    metric(name).unwrap_or_else(|| panic!("metric {name} is not in the registry"))
}

/// The metrics of one group, in order.
pub fn in_group(group: Group) -> impl Iterator<Item = &'static MetricSpec> {
    METRICS.iter().filter(move |m| m.group == group)
}

/// Bytes as MiB (2^20 bytes), the unit of every size column (`*_mib`), plot and log line.
pub fn mebibytes(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn style_text(style: Style) -> String {
    match style {
        Style::Plain => "plain".into(),
        Style::Fixed(d) => format!("fixed({d})"),
        Style::Recall => "recall".into(),
        Style::Ratio => "ratio".into(),
        Style::Millis => "millis".into(),
    }
}

/// The registry as JSON records (`annbench._annbench.metrics_json`): `name`, `title`,
/// `description`, `unit`, `format` (the Markdown style: `plain`, `fixed(3)`, `recall`),
/// `group`, `tip_line` and `plot` (`label`, `short`, `scale`, `lower_is_better`,
/// `per_client`, `rank`; `null` for metrics no axis shows).
pub fn to_json() -> serde_json::Value {
    use serde_json::json;
    METRICS
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "title": m.title,
                "description": m.description,
                "unit": m.unit.as_str(),
                "format": style_text(m.style),
                "group": m.group.as_str(),
                "tip_line": m.tip_line,
                "plot": m.plot.map(|p| json!({
                    "label": p.label,
                    "short": p.short,
                    "scale": p.scale.as_str(),
                    "lower_is_better": p.lower_is_better,
                    "per_client": p.per_client,
                    "rank": p.rank,
                })),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_say_their_unit() {
        for (i, m) in METRICS.iter().enumerate() {
            assert!(
                METRICS[..i].iter().all(|o| o.name != m.name),
                "{} twice",
                m.name
            );
            if let Some(suffix) = m.unit.suffix() {
                assert!(m.name.ends_with(suffix), "{} is in {:?}", m.name, m.unit);
            }
            assert!(
                !m.description.is_empty() && !m.title.is_empty(),
                "{}",
                m.name
            );
        }
        assert_eq!(NAMES.len(), METRICS.len());
        assert_eq!(NAMES[0], "dataset");
    }

    #[test]
    fn plot_ranks_are_a_permutation() {
        let mut ranks: Vec<u8> = METRICS
            .iter()
            .filter_map(|m| m.plot.map(|p| p.rank))
            .collect();
        ranks.sort();
        assert_eq!(ranks, (0..ranks.len() as u8).collect::<Vec<_>>());
    }

    #[test]
    fn groups_are_contiguous() {
        let mut seen: Vec<Group> = Vec::new();
        for m in METRICS {
            if seen.last() != Some(&m.group) {
                assert!(!seen.contains(&m.group), "{} splits {:?}", m.name, m.group);
                seen.push(m.group);
            }
        }
    }
}
