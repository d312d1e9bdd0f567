//! The page itself: head (styles, Content-Security-Policy), header with what the results
//! hold, the sections, footer, then Chart.js, the data and the page's own script, all inline.

use super::escape::{json_script, text};
use super::{Chart, Context, Section, Tips};
use crate::report::names::algorithm_name;
use serde::Serialize;
use std::collections::BTreeSet;

/// Version of the embedded Chart.js (see `vendor/README.md`).
pub const CHART_JS_VERSION: &str = "4.6.1";
const CHART_JS: &str = include_str!("vendor/chart.umd.min.js");
const PAGE_JS: &str = include_str!("assets/page.js");
const PAGE_CSS: &str = include_str!("assets/page.css");

/// Nothing leaves the page: no fetches, frames or remote images; inline code only.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                   img-src data:; base-uri 'none'; form-action 'none'";

#[derive(Serialize)]
struct Data<'a> {
    charts: Vec<&'a Chart>,
    tips: &'a Tips,
}

pub fn render(ctx: &Context<'_>, sections: &[Section], tips: &Tips) -> crate::Result<String> {
    let (dataset, count) = match (ctx.points.first(), ctx.options.streams.first()) {
        (Some(p), _) => (p.dataset.clone(), p.count),
        (None, Some(r)) => (r.identity.dataset.clone(), r.identity.count),
        (None, None) => return Err(crate::Error::Results("no points to report".into())),
    };
    let title = ctx
        .options
        .title
        .clone()
        .unwrap_or_else(|| format!("annbench: {dataset} (k={count})"));
    let data = Data {
        charts: sections.iter().flat_map(|s| &s.charts).collect(),
        tips,
    };
    let mut out = String::with_capacity(CHART_JS.len() + 64 * 1024);
    out.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"annbench {}\">\n<title>{}</title>\n<style>\n{PAGE_CSS}</style>\n\
         </head>\n<body>\n<header>\n<h1>{}</h1>\n{}</header>\n<nav>",
        env!("CARGO_PKG_VERSION"),
        text(&title),
        text(&title),
        summary(ctx)
    ));
    for s in sections {
        out.push_str(&format!(
            "<a href=\"#{}\">{}</a>",
            text(&s.id),
            text(&s.title)
        ));
    }
    out.push_str("</nav>\n<main>\n");
    for s in sections {
        out.push_str(&format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n",
            text(&s.id),
            text(&s.title),
            s.html
        ));
    }
    out.push_str(&format!("</main>\n<footer>{}</footer>\n", footer(ctx)));
    out.push_str("<script>\n");
    out.push_str(chart_js());
    out.push_str("\n</script>\n<script type=\"application/json\" id=\"annbench-data\">");
    out.push_str(&json_script(&data)?);
    out.push_str("</script>\n<script>\n");
    out.push_str(PAGE_JS);
    out.push_str("</script>\n</body>\n</html>\n");
    Ok(out)
}

/// Chart.js without its trailing `//# sourceMappingURL=` line (no map file sits next to a
/// report).
fn chart_js() -> &'static str {
    let body = CHART_JS.trim_end();
    match body.rfind('\n') {
        Some(i) if body[i + 1..].starts_with("//# sourceMappingURL=") => &body[..i],
        _ => body,
    }
}

/// One paragraph: dataset, metric, k, points, algorithms, labels, clients, dates.
fn summary(ctx: &Context<'_>) -> String {
    let Some(p) = ctx.points.first() else {
        let runs = &ctx.options.streams;
        return match runs.first() {
            Some(r) => format!(
                "<p>dataset <b>{}</b>, k = {}, {} streaming run(s)</p>\n",
                text(&r.identity.dataset),
                r.identity.count,
                runs.len()
            ),
            None => String::new(),
        };
    };
    let algorithms: BTreeSet<String> = ctx
        .points
        .iter()
        .map(|p| algorithm_name(&p.algorithm))
        .collect();
    let labels: BTreeSet<&str> = ctx
        .points
        .iter()
        .filter_map(|p| p.label.as_deref())
        .collect();
    let clients: BTreeSet<usize> = ctx.points.iter().map(|p| p.clients).collect();
    let times: BTreeSet<&str> = ctx
        .points
        .iter()
        .map(|p| p.environment.finished_at.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    let join = |v: Vec<String>| v.join(", ");
    let mut facts = vec![
        format!(
            "dataset <b>{}</b> ({})",
            text(&p.dataset),
            p.distance.as_str()
        ),
        format!("k = {}", p.count),
        format!("{} points", ctx.points.len()),
        format!(
            "algorithms: {}",
            text(&join(algorithms.into_iter().collect()))
        ),
    ];
    if !labels.is_empty() {
        let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        facts.push(format!("labels: {}", text(&join(labels))));
    }
    let clients: Vec<String> = clients.iter().map(usize::to_string).collect();
    facts.push(format!("clients: {}", join(clients)));
    if let (Some(a), Some(b)) = (times.first(), times.last()) {
        facts.push(format!("measured {} to {} (UTC)", text(a), text(b)));
    }
    format!("<p class=\"facts\">{}</p>\n", facts.join(" &middot; "))
}

fn footer(ctx: &Context<'_>) -> String {
    let mut out = format!(
        "Written by annbench {} at {}",
        env!("CARGO_PKG_VERSION"),
        crate::results::env::now_rfc3339()
    );
    if let Some(cmd) = &ctx.options.command {
        out.push_str(&format!(
            " with <code>{}</code>",
            text(&crate::connect::mask_secrets(cmd))
        ));
    }
    out.push_str(&format!(
        ". Charts by Chart.js {CHART_JS_VERSION} (MIT licence), embedded: the page loads \
         nothing from the network."
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_chart_js_is_safe_inline_and_mapless() {
        let js = chart_js();
        assert!(js.starts_with("/*!\n * Chart.js v4.6.1"), "{}", &js[..40]);
        assert!(CHART_JS.contains(&format!("Chart.js v{CHART_JS_VERSION}")));
        assert!(!js.contains("sourceMappingURL"));
        assert!(!js.to_ascii_lowercase().contains("</script"));
        assert!(!PAGE_JS.to_ascii_lowercase().contains("</script"));
    }
}
