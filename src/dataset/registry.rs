//! Known dataset names: the ann-benchmarks downloads, the synthetic sets generated locally and
//! the small sets bundled in the binary. Sizes are those of the published files.

use crate::{Error, Metric, Result};
use std::sync::OnceLock;

/// Default download address prefix; `{base}/{name}.hdf5` is fetched.
pub const DEFAULT_BASE_URL: &str = "https://ann-benchmarks.com";

/// Where a known dataset comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Downloaded from `{base}/{name}.hdf5` (`annbench datasets get NAME`).
    Download,
    /// Generated locally, seeded (`annbench datasets generate NAME`; `get` generates it too).
    Synthetic,
    /// Embedded in the binary; written into the data dir on first use.
    Bundled,
}

impl Source {
    /// The word `datasets list` and Python's `list_datasets` show: the `annbench datasets`
    /// subcommand that fetches it (`download`, `generate`) or `bundled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Download => "download",
            Source::Synthetic => "generate",
            Source::Bundled => "bundled",
        }
    }
}

/// One known dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Name, also the file stem in the data dir.
    pub name: String,
    /// Vector dimension.
    pub dimension: usize,
    /// Distance.
    pub metric: Metric,
    /// Train rows of the published file.
    pub train: usize,
    /// Test rows of the published file.
    pub test: usize,
    /// Where it comes from.
    pub source: Source,
}

impl Entry {
    /// Download address for `Source::Download` entries under `base` (no trailing slash needed).
    pub fn url(&self, base: &str) -> String {
        format!("{}/{}.hdf5", base.trim_end_matches('/'), self.name)
    }

    /// File name in the data dir.
    pub fn file_name(&self) -> String {
        format!("{}.hdf5", self.name)
    }
}

/// Every known dataset, in display order.
pub fn all() -> &'static [Entry] {
    static ALL: OnceLock<Vec<Entry>> = OnceLock::new();
    ALL.get_or_init(build)
}

fn build() -> Vec<Entry> {
    use Metric::{Angular as A, Euclidean as E};
    use Source::{Bundled, Download, Synthetic};
    let e = |name: &str, dimension, metric, train, test, source| Entry {
        name: name.to_owned(),
        dimension,
        metric,
        train,
        test,
        source,
    };
    let mut v = vec![
        e("glove-twitter-25-angular", 25, A, 10_925, 1_000, Bundled),
        e("sift-5k-128-euclidean", 128, E, 4_500, 500, Bundled),
        e("random-xs-20-euclidean", 20, E, 9_000, 1_000, Synthetic),
        e("random-xs-20-angular", 20, A, 9_000, 1_000, Synthetic),
        e("random-s-100-euclidean", 100, E, 90_000, 10_000, Synthetic),
        e("random-s-100-angular", 100, A, 90_000, 10_000, Synthetic),
        e(
            "fashion-mnist-784-euclidean",
            784,
            E,
            60_000,
            10_000,
            Download,
        ),
        e("mnist-784-euclidean", 784, E, 60_000, 10_000, Download),
        e("sift-128-euclidean", 128, E, 1_000_000, 10_000, Download),
        e("gist-960-euclidean", 960, E, 1_000_000, 1_000, Download),
        e("glove-25-angular", 25, A, 1_183_514, 10_000, Download),
        e("glove-50-angular", 50, A, 1_183_514, 10_000, Download),
        e("glove-100-angular", 100, A, 1_183_514, 10_000, Download),
        e("glove-200-angular", 200, A, 1_183_514, 10_000, Download),
        e("nytimes-256-angular", 256, A, 290_000, 10_000, Download),
        e("deep-image-96-angular", 96, A, 9_990_000, 10_000, Download),
    ];
    // Text-embedding-like synthetic stand-ins for dbpedia-openai (see `embeddings`).
    for n in [10, 100, 250, 500, 1000] {
        let name = format!("clustered-1536-{n}k-angular");
        v.push(e(&name, 1536, A, n * 1000, 10_000.min(n * 100), Synthetic));
    }
    for n in (100..=1000).step_by(100) {
        let name = format!("dbpedia-openai-{n}k-angular");
        v.push(e(&name, 1536, A, n * 1000 - 10_000, 10_000, Download));
    }
    v
}

/// The entry for `name`, or an error suggesting the closest known names.
pub fn lookup(name: &str) -> Result<&'static Entry> {
    all().iter().find(|e| e.name == name).ok_or_else(|| {
        let close = closest(name, 3);
        let hint = if close.is_empty() {
            "run `annbench datasets list` for the known names".to_owned()
        } else {
            format!(
                "did you mean {}? (`annbench datasets list` shows all)",
                close.join(", ")
            )
        };
        Error::Dataset(format!("unknown dataset '{name}'; {hint}"))
    })
}

/// Up to `n` known names closest to `name` (Jaro-Winkler, also matching name prefixes).
pub fn closest(name: &str, n: usize) -> Vec<&'static str> {
    let mut scored: Vec<(f64, &str)> = all()
        .iter()
        .map(|e| {
            let mut s = strsim::jaro_winkler(name, &e.name);
            if !name.is_empty() && e.name.starts_with(name) {
                s = s.max(0.95);
            }
            (s, e.name.as_str())
        })
        .filter(|(s, _)| *s >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(n).map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_issue_names() {
        for name in [
            "mnist-784-euclidean",
            "glove-200-angular",
            "dbpedia-openai-500k-angular",
            "random-s-100-angular",
        ] {
            assert_eq!(lookup(name).unwrap().name, name);
        }
        let d = lookup("dbpedia-openai-1000k-angular").unwrap();
        assert_eq!(
            (d.dimension, d.train, d.metric),
            (1536, 990_000, Metric::Angular)
        );
        assert_eq!(
            lookup("sift-128-euclidean").unwrap().url(DEFAULT_BASE_URL),
            "https://ann-benchmarks.com/sift-128-euclidean.hdf5"
        );
    }

    #[test]
    fn unknown_name_suggests_close_ones() {
        let err = lookup("glove-100-angualr").unwrap_err().to_string();
        assert!(err.contains("unknown dataset 'glove-100-angualr'"), "{err}");
        assert!(err.contains("glove-100-angular"), "{err}");
        let err = lookup("zzzz").unwrap_err().to_string();
        assert!(err.contains("annbench datasets list"), "{err}");
    }

    #[test]
    fn names_are_unique_and_carry_their_metric() {
        let mut names: Vec<&str> = all().iter().map(|e| e.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
        for e in all() {
            assert!(e.name.ends_with(e.metric.as_str()), "{}", e.name);
        }
    }
}
