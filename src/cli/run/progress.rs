//! indicatif progress for `annbench run`: a spinner with elapsed time for the load, a bar in
//! percent for ground truth and for each build where the server reports its progress (else a
//! spinner), a bar over the passes of each build's points, one line per finished point and
//! memory plan. Ctrl-C, SIGTERM and SIGHUP ask the sweep to stop cleanly (a second one kills
//! the process).

use crate::cli::out::{Verbosity, errln};
use crate::params::describe;
use crate::runner::{Event, PassKind, Progress};
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

const SECOND: Duration = Duration::from_secs(1);

/// How long a stop request may take before the process exits without tidying up.
const STOP_GRACE: Duration = Duration::from_secs(15);

/// The signals that stop a sweep cleanly: Ctrl-C, and SIGTERM and SIGHUP as `timeout`, CI
/// runners, `docker stop` and a closed terminal send them.
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
    // SAFETY: restoring the default handler is async-signal-safe; a second signal then kills.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
    }
}

/// Terminal progress of a sweep.
pub struct CliProgress {
    bar: Mutex<Option<ProgressBar>>,
    /// Set when the sweep has returned: the stop watchdog then has nothing to do.
    finished: Arc<AtomicBool>,
    /// Points of the whole sweep, and how far it is (for `[n/total, eta]`).
    overall: Mutex<Overall>,
}

/// The sweep's point count: total, done (measured or skipped as stored), and the time the
/// measured ones took, from which the rest is estimated.
#[derive(Default)]
struct Overall {
    total: usize,
    done: usize,
    measured: usize,
    started: Option<std::time::Instant>,
}

impl Overall {
    /// `[12/35 points, eta 4m10s]`: the remaining points at the average wall time of the
    /// points measured so far (builds and loads included), none before the first.
    fn text(&self) -> String {
        if self.total == 0 {
            return String::new();
        }
        let eta = match self.started {
            Some(t) if self.measured > 0 && self.done < self.total => {
                let per = t.elapsed().as_secs_f64() / self.measured as f64;
                let left = (per * (self.total - self.done) as f64).round() as u64;
                format!(", eta {}m{:02}s", left / 60, left % 60)
            }
            _ => String::new(),
        };
        format!("[{}/{} points{eta}] ", self.done, self.total)
    }
}

impl Drop for CliProgress {
    fn drop(&mut self) {
        self.finished.store(true, Ordering::SeqCst);
    }
}

impl CliProgress {
    pub fn new() -> Self {
        // SAFETY: installs a handler that only stores to an atomic and resets itself.
        for signal in STOP_SIGNALS {
            unsafe {
                libc::signal(signal, on_signal as *const () as libc::sighandler_t);
            }
        }
        // A clean stop cancels the server's statement and drops the index; a server that no
        // longer answers (SIGSTOP, a network partition) would keep the stop waiting on a
        // driver call with no bound, so past STOP_GRACE the process leaves on its own.
        let finished = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&finished);
        let _ = std::thread::Builder::new()
            .name("annbench-stop-watchdog".into())
            .spawn(move || {
                let tick = Duration::from_millis(50);
                while !INTERRUPTED.load(Ordering::SeqCst) {
                    if done.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(tick);
                }
                // Connections that still wait (PostgreSQL's) are closed within their
                // database's grace (shorter than this one), so the stop usually ends cleanly.
                crate::backend::request_stop();
                let t0 = std::time::Instant::now();
                while t0.elapsed() < STOP_GRACE {
                    if done.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(tick);
                }
                errln!(
                    "interrupted: the server did not answer within {} s, so the sweep stops \
                     without tidying up (is the server stopped or unreachable?); every point \
                     measured so far is stored",
                    STOP_GRACE.as_secs()
                );
                std::process::exit(130);
            });
        CliProgress {
            bar: Mutex::new(None),
            finished,
            overall: Mutex::new(Overall::default()),
        }
    }

    fn spinner(&self, msg: String) {
        let pb = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
            pb.set_style(style);
        }
        pb.set_message(crate::terminal::for_terminal(&msg));
        pb.enable_steady_tick(Duration::from_millis(120));
        self.replace(Some(pb));
    }

    fn replace(&self, pb: Option<ProgressBar>) {
        let old = match self.bar.lock() {
            Ok(mut slot) => std::mem::replace(&mut *slot, pb),
            Err(_) => None,
        };
        if let Some(old) = old {
            old.finish_and_clear();
        }
    }

    /// The current bar when it is a percentage bar of `len` units, else a new one; `msg`
    /// replaces its message.
    fn bar_of(&self, len: u64, msg: &str) -> ProgressBar {
        if let Some(pb) = self.bar.lock().ok().and_then(|b| b.clone()) {
            if pb.length() == Some(len) {
                pb.set_message(crate::terminal::for_terminal(msg));
                return pb;
            }
        }
        let pb = ProgressBar::new(len);
        let template = "{msg} {bar:30} {percent:>3}% [{elapsed}] eta {eta}";
        if let Ok(style) = ProgressStyle::with_template(template) {
            pb.set_style(style);
        }
        pb.set_message(crate::terminal::for_terminal(msg));
        self.replace(Some(pb.clone()));
        pb
    }

    /// Print a line above the current bar. A hidden bar (standard error is not a terminal: a
    /// log file, CI) prints nothing of its own, so the line goes straight to standard error,
    /// without escape codes.
    fn line(&self, text: String) {
        match self.bar.lock().ok().and_then(|b| b.clone()) {
            Some(pb) if !pb.is_hidden() => pb.println(crate::terminal::for_terminal(&text)),
            _ => errln!("{text}"),
        }
    }

    /// Remove any bar still shown.
    pub fn clear(&self) {
        self.replace(None);
    }
}

impl Progress for CliProgress {
    fn on_event(&self, event: &Event<'_>) {
        let verbosity = crate::cli::out::verbosity();
        if verbosity == Verbosity::Quiet {
            // -q: warnings only; the summary and errors are printed by the command.
            if let Event::Warning(text) = event {
                errln!("warning: {text}");
            }
            return;
        }
        if verbosity == Verbosity::Verbose {
            if let Event::PassFinished {
                algorithm,
                query_args,
                clients,
                kind,
                qps,
                heavy,
                ..
            } = event
            {
                self.line(format!(
                    "    {algorithm}({}) x{clients} {} pass: {qps:.1} QPS{}",
                    describe(query_args),
                    kind.as_str(),
                    if *heavy { " (interference)" } else { "" }
                ));
            }
        }
        match event {
            Event::GroundTruth { queries, k } => self.spinner(format!(
                "computing exact ground truth ({queries} queries, k={k})"
            )),
            Event::GroundTruthProgress { done, total } => {
                self.bar_of(*total, "computing exact ground truth")
                    .set_position(*done);
            }
            Event::MemoryPlanned { plan } => self.line(format!("memory plan: {}", plan.describe())),
            Event::BuildProgress {
                algorithm,
                build_args,
                phase,
                percent,
                elapsed_seconds,
            } => {
                let msg = format!(
                    "{algorithm}: building index ({}), {phase}",
                    describe(build_args)
                );
                match percent {
                    Some(p) => {
                        let pb = self.bar_of(1000, &msg);
                        let since_start = Duration::try_from_secs_f64(*elapsed_seconds).ok();
                        if let Some(d) = since_start.filter(|d| pb.elapsed() + SECOND < *d) {
                            // Count from the start of the build, not from the first figure.
                            pb.set_elapsed(d);
                        }
                        pb.set_position((p * 10.0) as u64);
                    }
                    None => self.spinner(msg),
                }
            }
            Event::AlgorithmStarted {
                algorithm,
                builds,
                points,
            } => {
                self.clear();
                self.line(format!("{algorithm}: {builds} build(s), {points} point(s)"));
            }
            Event::LoadStarted { algorithm, rows } => {
                self.spinner(format!("{algorithm}: loading {rows} rows"))
            }
            Event::LoadFinished { algorithm, report } => {
                self.clear();
                let how = if report.reused {
                    "reused table".to_string()
                } else {
                    report.method.clone()
                };
                self.line(format!(
                    "{algorithm}: {} rows in {:.2} s ({how})",
                    report.rows, report.seconds
                ));
            }
            Event::BuildStarted {
                algorithm,
                build_args,
            } => self.spinner(format!(
                "{algorithm}: building index ({})",
                describe(build_args)
            )),
            Event::BuildFinished {
                algorithm,
                build_args,
                report,
            } => {
                self.clear();
                let phases: Vec<String> = report
                    .phases
                    .iter()
                    .map(|p| format!("{} {:.2} s", p.name, p.seconds))
                    .collect();
                self.line(format!(
                    "{algorithm}({}): built in {:.2} s, index {:.1} MiB{}",
                    describe(build_args),
                    report.seconds,
                    report.index_size_bytes as f64 / (1 << 20) as f64,
                    if phases.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", phases.join(", "))
                    }
                ));
            }
            Event::BuildSkipped {
                algorithm,
                build_args,
            } => self.line(format!(
                "{algorithm}({}): all points stored, build skipped",
                describe(build_args)
            )),
            Event::MeasureStarted {
                algorithm,
                build_args,
                points,
                passes,
            } => {
                let pb = ProgressBar::new(*passes as u64);
                if let Ok(style) =
                    ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} passes [{elapsed}]")
                {
                    pb.set_style(style);
                }
                pb.set_message(crate::terminal::for_terminal(&format!(
                    "{algorithm}({}): {points} point(s)",
                    describe(build_args)
                )));
                self.replace(Some(pb));
            }
            Event::PointStarted { .. } => {}
            Event::StreamStep { record, .. } => {
                self.line(crate::report::stream::step_line(record));
            }
            Event::PassFinished {
                algorithm,
                query_args,
                clients,
                kind,
                qps,
                heavy,
                ..
            } => {
                if let Some(pb) = self.bar.lock().ok().and_then(|b| b.clone()) {
                    if *kind == PassKind::Extra {
                        pb.inc_length(1);
                    }
                    pb.inc(1);
                    pb.set_message(crate::terminal::for_terminal(&format!(
                        "{algorithm}: {} x{clients} {} {qps:.0} QPS{}",
                        describe(query_args),
                        kind.as_str(),
                        if *heavy { " (interference)" } else { "" }
                    )));
                }
            }
            Event::SweepStarted {
                algorithms,
                builds,
                points,
            } => {
                if let Ok(mut o) = self.overall.lock() {
                    *o = Overall {
                        total: *points,
                        started: Some(std::time::Instant::now()),
                        ..Overall::default()
                    };
                }
                self.line(format!(
                    "sweep: {algorithms} algorithm(s), {builds} build(s), {points} point(s)"
                ));
            }
            Event::PointFinished { point, .. } => {
                let overall = match self.overall.lock() {
                    Ok(mut o) => {
                        o.done += 1;
                        o.measured += 1;
                        o.text()
                    }
                    Err(_) => String::new(),
                };
                let m = &point.metrics;
                let ci = m
                    .qps_interval()
                    .map(|i| format!(" {}", crate::report::figure_text::interval_text(i, 1)))
                    .unwrap_or_default();
                let flags: Vec<&str> = m.flags.iter().map(|f| f.as_str()).collect();
                self.line(format!(
                    "  {overall}{} x{}: recall {:.4}, {}{:.1} QPS{ci} ({} passes), p50 {:.3} ms, p99 {:.3} ms{}",
                    describe(&point.query_args),
                    point.clients,
                    m.recall,
                    if flags.is_empty() { "" } else { "~" },
                    m.qps,
                    m.passes,
                    m.latency_p50 * 1e3,
                    m.latency_p99 * 1e3,
                    if flags.is_empty() {
                        String::new()
                    } else {
                        format!(" [flagged: {}]", flags.join(", "))
                    }
                ));
            }
            Event::PointSkipped { .. } => {
                if let Ok(mut o) = self.overall.lock() {
                    o.done += 1;
                }
            }
            Event::Warning(text) => self.line(format!("warning: {text}")),
        }
    }

    fn cancelled(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }
}
