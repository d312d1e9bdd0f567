//! The run-metadata view: per algorithm and label, the server version and settings, the host,
//! the annbench version, when the points were measured, the commands that measured them and
//! the notices raised while measuring. Values that differ between the points of a group are all listed.

use super::escape::text;
use super::{Context, Section, Tips, table};
use crate::report::names::algorithm_name;
use crate::report::render::{Cell, Column, Style, Table};
use crate::results::PointResult;
use std::collections::{BTreeMap, BTreeSet};

/// Notices listed before "and N more".
const MAX_NOTICES: usize = 40;

pub fn view(ctx: &Context<'_>, _tips: &mut Tips) -> crate::Result<Option<Section>> {
    let mut groups: BTreeMap<(&str, Option<&str>), Vec<&PointResult>> = BTreeMap::new();
    for p in ctx.points {
        groups
            .entry((p.algorithm.as_str(), p.label.as_deref()))
            .or_default()
            .push(p);
    }
    let columns = [
        ("algorithm", "algorithm"),
        ("label", "label"),
        ("server_version", "server"),
        ("annbench_version", "annbench"),
        ("points", "points"),
        ("first", "first point finished (UTC)"),
        ("last", "last point finished (UTC)"),
        ("host", "client host"),
    ]
    .iter()
    .map(|(n, t)| Column::new(n, t, Style::Plain))
    .collect();
    let mut rows = Vec::new();
    let mut details = String::new();
    for ((algorithm, label), pts) in &groups {
        let env = |f: fn(&PointResult) -> String| distinct(pts.iter().map(|p| f(p)));
        let times: BTreeSet<&str> = pts
            .iter()
            .map(|p| p.environment.finished_at.as_str())
            .filter(|t| !t.is_empty())
            .collect();
        let time = |t: Option<&&str>| Cell::from(t.copied());
        rows.push(vec![
            Cell::Text(algorithm_name(algorithm)),
            Cell::from(*label),
            Cell::Text(env(|p| p.environment.server_version.clone())),
            Cell::Text(env(|p| p.environment.annbench_version.clone())),
            Cell::Int(pts.len() as i64),
            time(times.first()),
            time(times.last()),
            Cell::Text(env(host)),
        ]);
        details.push_str(&settings_html(algorithm, *label, pts));
    }
    let mut html = table::to_html(&Table { columns, rows }, "meta");
    html.push_str(&details);
    html.push_str(&commands_html(ctx.points));
    html.push_str(&notices_html(ctx.points));
    Ok(Some(Section {
        id: "meta".into(),
        title: "Run metadata".into(),
        html,
        charts: Vec::new(),
    }))
}

/// `node-1: AMD EPYC, 2 cores, 23.5 GiB RAM` (the name when it was recorded): a merged store's
/// points may come from several machines, and each distinct one is listed.
fn host(p: &PointResult) -> String {
    let e = &p.environment;
    if e.cpu_model.is_empty() && e.cpu_cores == 0 {
        return e.hostname.clone();
    }
    let name = if e.hostname.is_empty() {
        String::new()
    } else {
        format!("{}: ", e.hostname)
    };
    format!(
        "{name}{}, {} cores, {:.1} GiB RAM",
        e.cpu_model,
        e.cpu_cores,
        e.ram_bytes as f64 / (1u64 << 30) as f64
    )
}

/// The distinct non-empty values, joined with ` | ` (in first-seen order).
fn distinct(values: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values.filter(|v| !v.is_empty()) {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(" | ")
}

fn settings_html(algorithm: &str, label: Option<&str>, pts: &[&PointResult]) -> String {
    let mut values: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in pts {
        for (k, v) in &p.environment.server_settings {
            let slot = values.entry(k).or_default();
            if !slot.contains(&v.as_str()) {
                slot.push(v);
            }
        }
    }
    if values.is_empty() {
        return String::new();
    }
    let who = match label {
        Some(l) => format!("{} [{l}]", algorithm_name(algorithm)),
        None => algorithm_name(algorithm),
    };
    let mut out = format!(
        "<details><summary>Server settings of {} ({} settings)</summary>\n<table class=\"settings\">\n",
        text(&who),
        values.len()
    );
    for (k, vs) in values {
        out.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>\n",
            text(k),
            text(&vs.join(" | "))
        ));
    }
    out.push_str("</table></details>\n");
    out
}

/// The distinct command lines that measured the points, with how many points each measured.
/// Passwords are masked when a command is recorded, and again here: a file written by an
/// earlier annbench, or merged from another machine, may hold one that was not.
fn commands_html(points: &[PointResult]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for p in points.iter().filter(|p| !p.environment.command.is_empty()) {
        let command = crate::connect::mask_secrets(&p.environment.command);
        match counts.iter_mut().find(|(c, _)| *c == command) {
            Some((_, n)) => *n += 1,
            None => counts.push((command, 1)),
        }
    }
    if counts.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("<h3>Commands that measured the points</h3>\n<ul class=\"commands\">\n");
    for (c, n) in &counts {
        out.push_str(&format!(
            "<li><code>{}</code> ({n} point{})</li>\n",
            text(c),
            if *n == 1 { "" } else { "s" }
        ));
    }
    out.push_str("</ul>\n");
    out
}

fn notices_html(points: &[PointResult]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in points {
        for n in &p.environment.notices {
            *counts.entry(n).or_default() += 1;
        }
    }
    if counts.is_empty() {
        return "<p class=\"note\">No notices were raised while measuring.</p>\n".into();
    }
    let mut out = format!(
        "<h3>Notices raised while measuring ({})</h3>\n<ul class=\"notices\">\n",
        counts.len()
    );
    for (n, c) in counts.iter().take(MAX_NOTICES) {
        let times = if *c > 1 {
            format!(" ({c} points)")
        } else {
            String::new()
        };
        out.push_str(&format!("<li>{}{times}</li>\n", text(n)));
    }
    if counts.len() > MAX_NOTICES {
        out.push_str(&format!(
            "<li>and {} more</li>\n",
            counts.len() - MAX_NOTICES
        ));
    }
    out.push_str("</ul>\n");
    out
}
