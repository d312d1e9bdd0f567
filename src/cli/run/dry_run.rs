//! `annbench run --dry-run`: prints the plan of [`crate::runner::dryrun`].

use super::progress::CliProgress;
use crate::Result;
use crate::backend::BackendOptions;
use crate::params::describe;
use crate::runner::SweepOptions;
use crate::runner::dryrun::{DryRun, dry_run};
use crate::runner::estimate::{Estimate, human_seconds};

pub fn run(opts: &SweepOptions, calibrate: Option<usize>) -> Result<()> {
    let backend_opts = BackendOptions {
        build_timeout: opts.timeout,
        ..opts.backend.clone()
    };
    let progress = CliProgress::new();
    let plan = dry_run(opts, calibrate, &progress, &|name| {
        crate::backend::create(name, &backend_opts)
    });
    progress.clear();
    print(&plan?, opts);
    Ok(())
}

fn est(e: &Option<Estimate>) -> String {
    match e {
        Some(e) => format!(
            "~{:>8}  (n^{:.2} {}, from {})",
            human_seconds(e.seconds),
            e.exponent,
            if e.fitted { "fitted" } else { "assumed" },
            e.basis.first().map_or("", String::as_str)
        ),
        None => "   no estimate".into(),
    }
}

fn print(p: &DryRun, opts: &SweepOptions) {
    println!(
        "dry run: {} ({} x {}, {} queries), k={}, {} timed pass(es) after a warm-up, clients {:?}",
        p.dataset, p.rows, p.dimension, p.queries, opts.count, opts.runs, opts.clients
    );
    for a in &p.algorithms {
        println!("\n{}:", a.algorithm);
        println!("  {:<44} {}", format!("load {} rows", p.rows), est(&a.load));
        if let Some(note) = &a.server_note {
            println!("  (no memory plan: {note})");
        }
        for b in &a.builds {
            let label = format!("build {}", describe(&b.build_args));
            if b.skipped {
                println!("  {label:<44} all points stored: skipped");
                continue;
            }
            println!("  {label:<44} {}", est(&b.build));
            if let Some(m) = &b.memory {
                let mark = if m.fits() { "" } else { "WARNING " };
                println!("    {mark}memory: {}", m.describe());
            }
            for q in &b.points {
                let label = format!("{} x{}", describe(&q.query_args), q.clients);
                if q.stored {
                    println!("    {label:<42} stored");
                } else {
                    println!("    {label:<42} {}", est(&q.seconds));
                }
            }
        }
    }
    let (total, unknown) = p.total();
    println!(
        "\ntotal: ~{}{}",
        human_seconds(total),
        if unknown > 0 {
            format!(" plus {unknown} step(s) without an estimate")
        } else {
            String::new()
        }
    );
    for n in &p.notes {
        println!("({n})");
    }
}
