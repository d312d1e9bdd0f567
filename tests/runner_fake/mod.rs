//! A test-only fake backend: answers from a precomputed exact top-k (so recall is known),
//! can return wrong ids for chosen queries, fail mid-pass at a chosen point, sleep per query,
//! and logs every call.

#![allow(dead_code)]

use annbench::backend::{
    Backend, BuildReport, BuildWatch, Cancel, LoadReport, MemoryPlan, Searcher, ServerInfo,
    TableSpec,
};
use annbench::dataset::Dataset;
use annbench::params::{Params, describe};
use annbench::runner::{Event, Progress};
use annbench::{Error, Metric, Result};
use ndarray::{Array2, ArrayView2};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Train row i = [i, i % 5, 0, 1]; test row j = [4j + 0.3, 1, 0, 1]. No ground truth (the
/// runner computes it).
pub fn dataset(train: usize, test: usize) -> Dataset {
    let tr = Array2::from_shape_fn((train, 4), |(i, c)| match c {
        0 => i as f32,
        1 => (i % 5) as f32,
        2 => 0.0,
        _ => 1.0,
    });
    let te = Array2::from_shape_fn((test, 4), |(j, c)| match c {
        0 => 4.0 * j as f32 + 0.3,
        1 => 1.0,
        2 => 0.0,
        _ => 1.0,
    });
    Dataset {
        name: "fake-euclidean".into(),
        metric: Metric::Euclidean,
        train: tr,
        test: te,
        ground_truth: None,
    }
}

/// Which test row a query is (from its first component).
fn query_index(q: &[f32]) -> usize {
    ((q[0] - 0.3) / 4.0).round() as usize
}

/// Shared call log.
#[derive(Debug, Default)]
pub struct Log {
    pub calls: Vec<String>,
    /// Points started (set_query_args on searcher 0).
    pub points: usize,
    /// Searches answered, per searcher id.
    pub searches: Vec<usize>,
    /// Id of the first searcher opened after the latest build.
    pub first_searcher: usize,
}

/// Behaviour knobs.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// 1-based point number whose 5th search fails (a server dying mid-pass).
    pub fail_at_point: Option<usize>,
    /// Queries answered with the farthest rows instead of the nearest.
    pub wrong_queries: Vec<usize>,
    /// Return this id for query 0 (e.g. out of range).
    pub bad_id: Option<i64>,
    /// Sleep per search.
    pub latency: Option<Duration>,
    /// How long a build takes; it polls the cancel request meanwhile, like a real backend.
    pub build_time: Option<Duration>,
    /// A memory plan before each build: (bytes needed, the setting's bytes, enforced).
    pub memory: Option<(u64, u64, bool)>,
    /// Report build progress (phase "fake build", percent rising to 100) while building.
    pub progress: bool,
    /// Searcher 0's n-th search (1-based, counted over the whole sweep) sleeps this long: a
    /// stalled server.
    pub stall: Option<(usize, Duration)>,
    /// Answer with this many ids fewer than k (pgvector with ef_search < k).
    pub short_by: usize,
    /// Builds with these build args (`describe` text, e.g. `m=4`) fail.
    pub fail_builds: Vec<String>,
}

pub struct Fake {
    log: Arc<Mutex<Log>>,
    script: Script,
    answers: Arc<Vec<Vec<i64>>>,
    test: Array2<f32>,
}

impl Fake {
    pub fn new(log: Arc<Mutex<Log>>, script: Script, data: &Dataset) -> Self {
        Fake {
            log,
            script,
            answers: Arc::new(Vec::new()),
            test: data.test.clone(),
        }
    }
    fn note(&self, s: String) {
        self.log.lock().unwrap().calls.push(s);
    }
}

impl Backend for Fake {
    fn name(&self) -> &str {
        "mariadb"
    }
    fn server_info(&mut self) -> Result<ServerInfo> {
        self.note("server_info".into());
        Ok(ServerInfo {
            version: "Fake 1.0".into(),
            settings: Default::default(),
        })
    }
    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        self.note("load".into());
        // Exact top-100 of every test row, sorted: the fake's "index".
        let answers = self
            .test
            .rows()
            .into_iter()
            .map(|q| {
                let mut d: Vec<(f32, i64)> = train
                    .rows()
                    .into_iter()
                    .enumerate()
                    .map(|(i, r)| (spec.metric.distance(&r.to_vec(), &q.to_vec()), i as i64))
                    .collect();
                d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                d.into_iter().map(|x| x.1).collect()
            })
            .collect();
        self.answers = Arc::new(answers);
        Ok(LoadReport {
            seconds: 0.5,
            rows: train.nrows(),
            reused: false,
            table_size_bytes: Some(1),
            method: "fake".into(),
        })
    }
    fn build_watched(
        &mut self,
        build_args: &Params,
        cancel: &Cancel<'_>,
        watch: &BuildWatch,
    ) -> Result<BuildReport> {
        // A real backend stops the server's statement when asked; this one stops its wait.
        let start = std::time::Instant::now();
        let total = self.script.build_time.unwrap_or_default();
        let end = start + total;
        loop {
            if self.script.progress {
                let f = start.elapsed().as_secs_f64() / total.as_secs_f64().max(1e-9);
                watch.set("fake build", Some(100.0 * f.min(1.0)));
            }
            if cancel() {
                let mut log = self.log.lock().unwrap();
                log.calls
                    .push(format!("build {} cancelled", describe(build_args)));
                return Err(Error::Interrupted);
            }
            if std::time::Instant::now() >= end {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut log = self.log.lock().unwrap();
        if self.script.fail_builds.contains(&describe(build_args)) {
            log.calls
                .push(format!("build {} failed", describe(build_args)));
            return Err(Error::Backend("fake build failed".into()));
        }
        log.calls.push(format!("build {}", describe(build_args)));
        log.first_searcher = log.searches.len();
        Ok(BuildReport {
            seconds: 2.0,
            index_size_bytes: 4096,
            phases: vec![],
            notices: vec![],
        })
    }
    fn memory_plan(
        &mut self,
        rows: usize,
        dimension: usize,
        _build_args: &Params,
    ) -> Result<Option<MemoryPlan>> {
        Ok(self
            .script
            .memory
            .map(|(need, setting, enforced)| MemoryPlan {
                algorithm: "mariadb".into(),
                what: format!("the fake index of {rows} x {dimension}"),
                need_bytes: need,
                setting: "fake_cache_size".into(),
                setting_bytes: setting,
                consequence: "the fake would churn".into(),
                fix: "SET GLOBAL fake_cache_size = 1G".into(),
                enforced,
            }))
    }
    fn verify_index_used(&mut self, _q: &[f32], _k: usize, _qa: &Params) -> Result<String> {
        self.note("verify".into());
        Ok("fake index".into())
    }
    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        let mut log = self.log.lock().unwrap();
        let id = log.searches.len();
        log.searches.push(0);
        Ok(Box::new(FakeSearcher {
            id,
            log: Arc::clone(&self.log),
            script: self.script.clone(),
            answers: Arc::clone(&self.answers),
            point: 0,
            in_point: 0,
            total: 0,
        }))
    }
    fn drop_index(&mut self) -> Result<()> {
        self.note("drop_index".into());
        Ok(())
    }
}

struct FakeSearcher {
    id: usize,
    log: Arc<Mutex<Log>>,
    script: Script,
    answers: Arc<Vec<Vec<i64>>>,
    point: usize,
    in_point: usize,
    total: usize,
}

impl Searcher for FakeSearcher {
    fn set_query_args(&mut self, query_args: &Params) -> Result<()> {
        let mut log = self.log.lock().unwrap();
        // The runner sets args on searchers 0..clients in order: searcher 0 opens a point.
        if self.id == log.first_searcher {
            log.points += 1;
            log.calls.push(format!("point {}", describe(query_args)));
        }
        self.point = log.points;
        self.in_point = 0;
        Ok(())
    }
    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()> {
        if let Some(d) = self.script.latency {
            std::thread::sleep(d);
        }
        self.in_point += 1;
        self.total += 1;
        if let Some((n, d)) = self.script.stall {
            if self.id == 0 && self.total == n {
                std::thread::sleep(d);
            }
        }
        if self.script.fail_at_point == Some(self.point) && self.in_point == 5 {
            return Err(Error::Server("fake server went away".into()));
        }
        let qi = query_index(query);
        let all = &self.answers[qi];
        ids.clear();
        let n = k.saturating_sub(self.script.short_by);
        if self.script.wrong_queries.contains(&qi) {
            ids.extend(all.iter().rev().take(n));
        } else {
            ids.extend(all.iter().take(n));
        }
        if qi == 0
            && let Some(bad) = self.script.bad_id
        {
            ids[0] = bad;
        }
        self.log.lock().unwrap().searches[self.id] += 1;
        Ok(())
    }
}

/// Records events as short strings; can cancel after n finished points.
#[derive(Default)]
pub struct Recorder {
    pub events: Mutex<Vec<String>>,
    pub cancel_after: Option<usize>,
    /// Cancel once the n-th build has started (a Ctrl-C during that build).
    pub cancel_in_build: Option<usize>,
}

impl Progress for Recorder {
    fn on_event(&self, e: &Event<'_>) {
        let s = match e {
            Event::LoadStarted { .. } => "load".to_string(),
            Event::BuildStarted { build_args, .. } => format!("build {}", describe(build_args)),
            Event::BuildSkipped { build_args, .. } => {
                format!("skip-build {}", describe(build_args))
            }
            Event::PointFinished { point, .. } => {
                format!("point {} x{}", describe(&point.query_args), point.clients)
            }
            Event::PointSkipped { point, .. } => {
                format!("stored {} x{}", describe(&point.query_args), point.clients)
            }
            Event::Warning(w) => format!("warning {w}"),
            Event::MemoryPlanned { plan } => format!("memory fits={}", plan.fits()),
            Event::BuildProgress { phase, percent, .. } => {
                format!("progress {phase} {:.0}", percent.unwrap_or(-1.0))
            }
            Event::GroundTruthProgress { done, total } => format!("ground truth {done}/{total}"),
            _ => return,
        };
        self.events.lock().unwrap().push(s);
    }
    fn cancelled(&self) -> bool {
        let count = |prefix: &str| {
            self.events
                .lock()
                .unwrap()
                .iter()
                .filter(|e| e.starts_with(prefix))
                .count()
        };
        self.cancel_after.is_some_and(|n| count("point") >= n)
            || self.cancel_in_build.is_some_and(|n| count("build ") >= n)
    }
}
