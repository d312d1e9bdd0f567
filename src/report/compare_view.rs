//! Rendering of a [`Comparison`]: one flat table of matched pairs for CSV and JSON, and for
//! Markdown a table per match kind, the summary statistics and the notes.

use super::compare::{Comparison, MatchKind, Matched, RatioSummary, Side, Verdict};
use super::figure_text::{flags_text, interval_text, qps_text};
use super::render::{
    Cell, Column, Format, Style, Table, json_pretty, to_csv, to_json_records, to_markdown,
};
use crate::metrics::interval::Interval;

impl Comparison {
    /// Matched pairs of `kind` (or all, with `None`) as a [`Table`] with columns `match,
    /// algorithm, clients, recall_threshold, base_name, me_name, base_recall, me_recall,
    /// base_qps, base_qps_ci_low, base_qps_ci_high, base_flags, me_qps, me_qps_ci_low,
    /// me_qps_ci_high, me_flags, ratio, ratio_ci_low, ratio_ci_high, ratio_ci_level, verdict`
    /// (ratio = me / base; `qps` is the measure's name).
    pub fn pairs_table(&self, kind: Option<MatchKind>) -> Table {
        let params_only = kind == Some(MatchKind::Params);
        let (b, m) = (&self.base, &self.me);
        let (q, title) = (self.options.measure.name(), self.options.measure.title());
        let num = |name: String, t: String| Column::new(&name, &t, Style::Fixed(1)).machine_only();
        let mut columns = vec![
            Column::new("match", "match", Style::Plain),
            Column::new("algorithm", "algorithm", Style::Plain),
            Column::new("clients", "clients", Style::Plain),
            Column::new("recall_threshold", "recall >=", Style::Plain),
            Column::new("base_name", &format!("{b} parameters"), Style::Plain),
            Column::new("me_name", &format!("{m} parameters"), Style::Plain),
            Column::new("base_recall", &format!("{b} recall"), Style::Recall),
            Column::new("me_recall", &format!("{m} recall"), Style::Recall),
            num(format!("base_{q}"), format!("{b} {title}")),
            num(format!("base_{q}_ci_low"), "low".into()),
            num(format!("base_{q}_ci_high"), "high".into()),
            Column::new("base_flags", "flags", Style::Plain).machine_only(),
            Column::new("base_text", &format!("{b} {title} [95% CI]"), Style::Plain)
                .markdown_only(),
            num(format!("me_{q}"), format!("{m} {title}")),
            num(format!("me_{q}_ci_low"), "low".into()),
            num(format!("me_{q}_ci_high"), "high".into()),
            Column::new("me_flags", "flags", Style::Plain).machine_only(),
            Column::new("me_text", &format!("{m} {title} [95% CI]"), Style::Plain).markdown_only(),
            Column::new("ratio", "ratio", Style::Ratio).machine_only(),
            Column::new("ratio_ci_low", "low", Style::Ratio).machine_only(),
            Column::new("ratio_ci_high", "high", Style::Ratio).machine_only(),
            Column::new("ratio_ci_level", "level", Style::Plain).machine_only(),
            Column::new("ratio_text", &format!("{m} / {b} [95% CI]"), Style::Plain).markdown_only(),
            Column::new("verdict", "verdict", Style::Plain),
            // Which rule rated the pair, and for paired pairs the rounds and the two parts of
            // the half-width (shares): the rounds' own precision and the build spread's.
            Column::new("rule", "rule", Style::Plain),
            Column::new("rounds", "rounds", Style::Plain).machine_only(),
            Column::new("disturbed_rounds", "disturbed rounds", Style::Plain).machine_only(),
            Column::new("paired_half_width", "paired +-", Style::Plain).machine_only(),
            Column::new("build_half_width", "build +-", Style::Plain).machine_only(),
        ];
        let any_paired = self.rows.iter().any(|r| r.paired.is_some());
        if any_paired {
            columns.push(
                Column::new("precision_text", "+- paired (builds)", Style::Plain).markdown_only(),
            );
        }
        // Server CPU per query of the same pairs (empty where a side has none).
        let any_cpu = self.rows.iter().any(|r| r.cpu.is_some());
        let cpu_md = |c: Column| if any_cpu { c } else { c.machine_only() };
        columns.extend([
            Column::new("base_server_cpu_ms", "base CPU ms/q", Style::Plain).machine_only(),
            Column::new("me_server_cpu_ms", "me CPU ms/q", Style::Plain).machine_only(),
            cpu_md(
                Column::new(
                    "server_cpu_text",
                    &format!("server CPU ms/q {m} / {b}"),
                    Style::Plain,
                )
                .markdown_only(),
            ),
            Column::new("cpu_ratio", "CPU ratio", Style::Ratio).machine_only(),
            Column::new("cpu_ratio_ci_low", "low", Style::Ratio).machine_only(),
            Column::new("cpu_ratio_ci_high", "high", Style::Ratio).machine_only(),
            cpu_md(
                Column::new("cpu_ratio_text", "CPU ratio [95% CI]", Style::Plain).markdown_only(),
            ),
            cpu_md(Column::new("cpu_verdict", "CPU verdict", Style::Plain)),
            // The CPU speed probes of the two points (`runner::speed`): a pair whose machine
            // speeds differ beyond the noise threshold is "disturbed".
            Column::new("base_cpu_probe_us", "base probe us", Style::Fixed(1)).machine_only(),
            Column::new("me_cpu_probe_us", "me probe us", Style::Fixed(1)).machine_only(),
            Column::new("speed_change", "speed change", Style::Ratio).machine_only(),
        ]);
        // Server context switches per query (paired pairs whose passes counted them).
        let any_switches = self.rows.iter().any(|r| r.switches.is_some());
        let sw_md = |c: Column| if any_switches { c } else { c.machine_only() };
        columns.extend([
            Column::new("switches_ratio", "switches ratio", Style::Ratio).machine_only(),
            Column::new("switches_ratio_ci_low", "low", Style::Ratio).machine_only(),
            Column::new("switches_ratio_ci_high", "high", Style::Ratio).machine_only(),
            sw_md(
                Column::new(
                    "switches_ratio_text",
                    "switches ratio [95% CI]",
                    Style::Plain,
                )
                .markdown_only(),
            ),
            sw_md(Column::new(
                "switches_verdict",
                "switches verdict",
                Style::Plain,
            )),
        ]);
        // Cached or IO-bound, and the KiB the server read from storage per query
        // (docs/server-cost.md): a ratio where both sides read something.
        let storage = |s: &Option<super::ratio::Side>| s.as_ref().and_then(|s| s.storage);
        let any_storage = self
            .rows
            .iter()
            .any(|r| storage(&r.base).is_some() || storage(&r.me).is_some());
        let st_md = |c: Column| if any_storage { c } else { c.machine_only() };
        let any_reads = self.rows.iter().any(|r| r.reads.is_some());
        let rd_md = |c: Column| if any_reads { c } else { c.machine_only() };
        columns.extend([
            st_md(Column::new("base_storage", "base storage", Style::Plain)),
            st_md(Column::new("me_storage", "me storage", Style::Plain)),
            Column::new("base_server_read_kib", "base read KiB/q", Style::Plain).machine_only(),
            Column::new("me_server_read_kib", "me read KiB/q", Style::Plain).machine_only(),
            Column::new("read_ratio", "read ratio", Style::Ratio).machine_only(),
            Column::new("read_ratio_ci_low", "low", Style::Ratio).machine_only(),
            Column::new("read_ratio_ci_high", "high", Style::Ratio).machine_only(),
            rd_md(
                Column::new(
                    "read_ratio_text",
                    "server KiB read/q ratio [95% CI]",
                    Style::Plain,
                )
                .markdown_only(),
            ),
            rd_md(Column::new("read_verdict", "read verdict", Style::Plain)),
        ]);
        if kind.is_some() {
            columns[0].in_markdown = false;
        }
        if params_only {
            columns[3].in_markdown = false;
            columns[4].title = "parameters".into();
            columns[5].in_markdown = false;
        }
        let rows = self
            .rows
            .iter()
            .filter(|r| kind.is_none_or(|k| r.kind == k))
            .map(|r| self.cells(r))
            .collect();
        Table { columns, rows }
    }

    /// The summary statistics, one row per match kind with at least one ratio: `match, n,
    /// faster, slower, within_noise, disturbed`, then `geomean, median, min, max` each with `_ci_low`
    /// and `_ci_high` (bootstrap; empty with `--stat best`).
    pub fn summary_table(&self) -> Table {
        self.summary_table_of(
            self.options.measure.verdict_words(),
            [
                (MatchKind::Params, &self.params_summary),
                (MatchKind::Recall, &self.recall_summary),
            ],
        )
    }

    fn summary_table_of(
        &self,
        (up, down): (&str, &str),
        summaries: [(MatchKind, &Option<RatioSummary>); 2],
    ) -> Table {
        let mut columns = vec![
            Column::new("match", "match", Style::Plain),
            Column::new("n", "n", Style::Plain),
            Column::new(up, up, Style::Plain),
            Column::new(down, down, Style::Plain),
            Column::new("within_noise", "within noise", Style::Plain),
            Column::new("disturbed", "disturbed", Style::Plain),
        ];
        for stat in ["geomean", "median", "min", "max"] {
            columns.push(Column::new(stat, stat, Style::Ratio).machine_only());
            columns
                .push(Column::new(&format!("{stat}_ci_low"), "low", Style::Ratio).machine_only());
            columns
                .push(Column::new(&format!("{stat}_ci_high"), "high", Style::Ratio).machine_only());
            let title = if stat == "geomean" {
                "geometric mean [95% CI]".to_string()
            } else {
                format!("{stat} [95% CI]")
            };
            columns
                .push(Column::new(&format!("{stat}_text"), &title, Style::Plain).markdown_only());
        }
        let rows = summaries
            .into_iter()
            .filter_map(|(k, s)| s.as_ref().map(|s| summary_cells(k, s)))
            .collect();
        Table { columns, rows }
    }

    /// The summary statistics of the server CPU ratios, as [`Self::summary_table`] with
    /// `costlier` and `cheaper` counts.
    pub fn cpu_summary_table(&self) -> Table {
        let mut t = self.summary_table_of(
            ("costlier", "cheaper"),
            [
                (MatchKind::Params, &self.cpu_params_summary),
                (MatchKind::Recall, &self.cpu_recall_summary),
            ],
        );
        t.columns[0].title = "match (server CPU per query)".into();
        t
    }

    /// The summary statistics of the storage read ratios (KiB the server read per query), as
    /// [`Self::summary_table`] with `more` and `fewer` counts.
    pub fn read_summary_table(&self) -> Table {
        let mut t = self.summary_table_of(
            ("more", "fewer"),
            [
                (MatchKind::Params, &self.read_params_summary),
                (MatchKind::Recall, &self.read_recall_summary),
            ],
        );
        t.columns[0].title = "match (server KiB read per query)".into();
        t
    }

    /// The comparison in `format`: Markdown with headed sections; CSV as the flat pairs table
    /// (the statistics follow from it); JSON as `{base, me, measure, noise, paired_noise,
    /// stat, notes, pairs: [...], summary: [...], server_cpu_summary: [...], pairing: {...},
    /// settings_differ: [...]}`.
    pub fn render(&self, format: Format) -> crate::Result<String> {
        match format {
            Format::Markdown => Ok(self.markdown()),
            Format::Csv => to_csv(&self.pairs_table(None)),
            Format::Json => json_pretty(&self.to_json()),
        }
    }

    /// The JSON document of [`Self::render`].
    pub fn to_json(&self) -> serde_json::Value {
        let (b, m) = (self.base.as_str(), self.me.as_str());
        serde_json::json!({
            "base": self.base,
            "me": self.me,
            "measure": self.options.measure.name(),
            "noise": self.options.noise,
            "stat": match self.options.stat {
                super::stats::Stat::Median => "median",
                super::stats::Stat::Best => "best",
            },
            "notes": self.notes,
            "pairs": to_json_records(&self.pairs_table(None)),
            "summary": to_json_records(&self.summary_table()),
            "server_cpu_summary": to_json_records(&self.cpu_summary_table()),
            "server_read_summary": to_json_records(&self.read_summary_table()),
            "paired_noise": self.options.paired_noise,
            "pairing": pairing_json(&self.pairing),
            "settings_differ": super::settings::to_json(&self.settings, &[b, m]),
        })
    }

    fn markdown(&self) -> String {
        let (b, m) = (&self.base, &self.me);
        let title = self.options.measure.title();
        let mut out = format!("# {title} of {m} relative to {b} ({m} / {b})\n");
        out.push_str(&format!(
            "\nVerdicts: faster or slower when the whole 95% interval of the ratio lies beyond \
             +-{:.0}% (--noise); within noise otherwise; disturbed when a side was measured under \
             heavy interference or with a stalled pass (no difference claimed).\n",
            self.options.noise * 100.0
        ));
        if self.pairing.paired > 0 {
            out.push_str(&format!(
                "Paired pairs (rule paired: the two servers ran interleaved, round by round): \
                 beyond +-{:.0}% (--paired-noise).\n",
                self.options.paired_noise * 100.0
            ));
        }
        for (kind, heading) in [
            (MatchKind::Params, "At matched parameters"),
            (
                MatchKind::Recall,
                "At matched recall targets (best point of each)",
            ),
        ] {
            out.push_str(&format!("\n## {heading}\n\n"));
            let t = self.pairs_table(Some(kind));
            if t.rows.is_empty() {
                out.push_str("No matching points.\n");
            } else {
                out.push_str(&to_markdown(&t));
            }
        }
        out.push_str("\n## Summary of the ratios\n\n");
        let s = self.summary_table();
        if s.rows.is_empty() {
            out.push_str("No ratios to summarise.\n");
        } else {
            out.push_str(&to_markdown(&s));
        }
        let c = self.cpu_summary_table();
        if !c.rows.is_empty() {
            out.push_str(&format!(
                "\n## Server CPU per query: summary of the ratios ({m} / {b}; below 1 costs \
                 the server less)\n\n"
            ));
            out.push_str(&to_markdown(&c));
        }
        let r = self.read_summary_table();
        if !r.rows.is_empty() {
            out.push_str(&format!(
                "\n## Storage reads per query: summary of the ratios ({m} / {b}; KiB the server \
                 read from storage; below 1 reads less)\n\n"
            ));
            out.push_str(&to_markdown(&r));
        }
        if !self.settings.is_empty() {
            out.push_str("\n## Settings that differ\n\n");
            out.push_str(&to_markdown(&super::settings::settings_table(
                &self.settings,
                &[b, m],
            )));
        }
        out.push_str("\n## Notes\n\n");
        for n in &self.notes {
            out.push_str(&format!("- {n}\n"));
        }
        out
    }

    fn cells(&self, r: &Matched) -> Vec<Cell> {
        let name = |s: &Option<Side>| match s {
            Some(s) => Cell::Text(s.name.clone()),
            None => Cell::Missing("not reached".into()),
        };
        let mut cells = vec![
            Cell::Text(r.kind.as_str().into()),
            Cell::Text(r.algorithm.clone()),
            Cell::Int(r.clients as i64),
            Cell::from(r.threshold),
            name(&r.base),
            name(&r.me),
            Cell::from(r.base.as_ref().map(|s| s.recall)),
            Cell::from(r.me.as_ref().map(|s| s.recall)),
        ];
        for s in [&r.base, &r.me] {
            let i = s.as_ref().and_then(|s| s.interval);
            cells.extend([
                Cell::from(s.as_ref().map(|s| s.value)),
                Cell::from(i.map(|i| i.low)),
                Cell::from(i.map(|i| i.high)),
                Cell::from(s.as_ref().map(|s| flags_text(&s.flags)).as_deref()),
                Cell::from(
                    s.as_ref()
                        .map(|s| qps_text(s.value, s.interval, !s.flags.is_empty()))
                        .as_deref(),
                ),
            ]);
        }
        let ri = r.ratio_interval;
        cells.extend([
            Cell::from(r.ratio),
            Cell::from(ri.map(|i| i.low)),
            Cell::from(ri.map(|i| i.high)),
            Cell::from(ri.map(|i| i.level)),
            Cell::from(r.ratio.map(|x| ratio_text(x, ri)).as_deref()),
            Cell::from(r.verdict.map(|v| self.verdict_text(v)).as_deref()),
        ]);
        let p = r.paired.as_ref();
        cells.extend([
            Cell::from(r.ratio.map(|_| r.rule.as_str())),
            p.map_or(Cell::Null, |p| Cell::Int(p.rounds as i64)),
            p.map_or(Cell::Null, |p| Cell::Int(p.disturbed_rounds as i64)),
            Cell::from(p.map(|p| p.paired_half_width)),
            Cell::from(p.and_then(|p| p.build_half_width)),
        ]);
        if self.rows.iter().any(|r| r.paired.is_some()) {
            cells.push(Cell::from(p.map(precision_text).as_deref()));
        }
        let c = r.cpu.as_ref();
        let ci = c.and_then(|c| c.ratio_interval);
        cells.extend([
            Cell::from(c.map(|c| c.base.value * 1e3)),
            Cell::from(c.map(|c| c.me.value * 1e3)),
            Cell::from(
                c.map(|c| format!("{:.3} / {:.3}", c.me.value * 1e3, c.base.value * 1e3))
                    .as_deref(),
            ),
            Cell::from(c.map(|c| c.ratio)),
            Cell::from(ci.map(|i| i.low)),
            Cell::from(ci.map(|i| i.high)),
            Cell::from(c.map(|c| ratio_text(c.ratio, ci)).as_deref()),
            Cell::from(c.map(|c| cpu_verdict(c.verdict))),
            Cell::from(r.base.as_ref().and_then(|s| s.cpu_probe_us)),
            Cell::from(r.me.as_ref().and_then(|s| s.cpu_probe_us)),
            Cell::from(
                r.base
                    .as_ref()
                    .zip(r.me.as_ref())
                    .and_then(|(b, m)| super::ratio::speed_change(b, m)),
            ),
        ]);
        let sw = r.switches.as_ref();
        cells.extend([
            Cell::from(sw.map(|s| s.ratio)),
            Cell::from(sw.map(|s| s.interval.low)),
            Cell::from(sw.map(|s| s.interval.high)),
            Cell::from(sw.map(|s| ratio_text(s.ratio, Some(s.interval))).as_deref()),
            Cell::from(sw.map(|s| count_verdict(s.verdict))),
        ]);
        let storage = |s: &Option<super::ratio::Side>| {
            Cell::from(s.as_ref().and_then(|s| s.storage).map(|x| x.as_str()))
        };
        let kib =
            |s: &Option<super::ratio::Side>| Cell::from(s.as_ref().and_then(|s| s.server_read_kib));
        let rd = r.reads.as_ref();
        let ri = rd.and_then(|c| c.ratio_interval);
        cells.extend([
            storage(&r.base),
            storage(&r.me),
            kib(&r.base),
            kib(&r.me),
            Cell::from(rd.map(|c| c.ratio)),
            Cell::from(ri.map(|i| i.low)),
            Cell::from(ri.map(|i| i.high)),
            Cell::from(rd.map(|c| ratio_text(c.ratio, ri)).as_deref()),
            Cell::from(rd.map(|c| count_verdict(c.verdict))),
        ]);
        cells
    }

    fn verdict_text(&self, v: Verdict) -> String {
        let (up, down) = self.options.measure.verdict_words();
        match v {
            Verdict::Above => up.into(),
            Verdict::Below => down.into(),
            Verdict::WithinNoise => "within noise".into(),
            Verdict::Disturbed => "disturbed".into(),
        }
    }
}

/// `+-0.8% (+-3.1%)`: the paired half-width, and with the build spread when measured.
fn precision_text(p: &super::paired::PairedRatio) -> String {
    let pct = |x: f64| format!("+-{:.1}%", x * 100.0);
    let total = (p.interval.high / p.interval.low).sqrt() - 1.0;
    match p.build_half_width {
        Some(_) => format!("{} ({} with builds)", pct(p.paired_half_width), pct(total)),
        None => format!("{} (builds not measured)", pct(p.paired_half_width)),
    }
}

/// The verdict on a ratio of counts per query (context switches, storage reads).
pub(super) fn count_verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Above => "more",
        Verdict::Below => "fewer",
        Verdict::WithinNoise => "within noise",
        Verdict::Disturbed => "disturbed",
    }
}

fn cpu_verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Above => "costlier",
        Verdict::Below => "cheaper",
        Verdict::WithinNoise => "within noise",
        Verdict::Disturbed => "disturbed",
    }
}

/// `1.10x [1.05, 1.16]` (with the coverage when below 95%).
pub(super) fn ratio_text(x: f64, i: Option<Interval>) -> String {
    match i {
        Some(i) => format!("{x:.2}x {}", interval_text(i, 2)),
        None => format!("{x:.2}x"),
    }
}

/// The pairing summary as JSON: pairs, paired, the median paired half-width, the disturbed
/// rounds left out, and each run's build spread (`null` where not measured).
pub(super) fn pairing_json(p: &super::compare::Pairing) -> serde_json::Value {
    let spread = |s: Option<super::paired::BuildSpread>| {
        s.map(|s| serde_json::json!({"share": s.share(), "points": s.points, "df": s.df}))
    };
    serde_json::json!({
        "pairs": p.pairs,
        "paired": p.paired,
        "median_paired_half_width": p.median_half_width,
        "disturbed_rounds": p.disturbed_rounds,
        "build_spread": p.spreads.iter().map(|s| serde_json::json!({
            "run": s.run,
            "base": spread(s.base),
            "me": spread(s.me),
        })).collect::<Vec<_>>(),
    })
}

fn summary_cells(kind: MatchKind, s: &RatioSummary) -> Vec<Cell> {
    let mut cells = vec![
        Cell::Text(kind.as_str().into()),
        Cell::Int(s.n as i64),
        Cell::Int(s.above as i64),
        Cell::Int(s.below as i64),
        Cell::Int(s.within_noise as i64),
        Cell::Int(s.disturbed as i64),
    ];
    for (x, i) in [s.stats.geomean, s.stats.median, s.stats.min, s.stats.max] {
        cells.extend([
            Cell::Float(x),
            Cell::from(i.map(|i| i.low)),
            Cell::from(i.map(|i| i.high)),
            Cell::Text(ratio_text(x, i)),
        ]);
    }
    cells
}
