//! Chart specs: what the page's script hands to Chart.js. Every chart is an x/y scatter whose
//! datasets may join their points with a line; a dataset belongs to a group (a series), and
//! a legend click shows or hides the whole group.

use serde::Serialize;

/// Tableau 10: distinct, colour-blind friendly hues; series take them in order.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The colour of series number `group`.
pub fn colour(group: usize) -> &'static str {
    PALETTE[group % PALETTE.len()]
}

/// One chart.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// Unique in the page; the canvas is `chart-<id>`.
    pub id: String,
    pub x: Axis,
    pub y: Axis,
    pub datasets: Vec<Dataset>,
}

/// An axis: its title and whether it is logarithmic.
#[derive(Debug, Clone, Serialize)]
pub struct Axis {
    pub title: String,
    pub log: bool,
}

impl Axis {
    pub fn linear(title: &str) -> Self {
        Axis {
            title: title.into(),
            log: false,
        }
    }

    pub fn log(title: &str) -> Self {
        Axis {
            title: title.into(),
            log: true,
        }
    }
}

/// Points of one series, or of one part of it (its frontier, its other points).
#[derive(Debug, Clone, Serialize)]
pub struct Dataset {
    pub label: String,
    /// Datasets of one group toggle together and share a colour.
    pub group: usize,
    pub colour: String,
    /// Join the points with a line (in the given order).
    pub line: bool,
    /// Draw the line as steps that rise at each point (a "cheapest cost to reach at least
    /// this recall" frontier is a step function).
    pub stepped: bool,
    /// Shown in the legend (one dataset per group is).
    pub legend: bool,
    /// Drawn light: the points behind a frontier.
    pub faded: bool,
    /// Chart.js point style (`circle`, `triangle`...); `none` draws the line alone.
    pub shape: &'static str,
    /// (x, y, tip): tip indexes the page's tooltip texts, -1 for none.
    pub points: Vec<(f64, f64, i64)>,
}

impl Dataset {
    /// A dataset of group `group` in its colour: a line through `points` when `line`.
    pub fn new(label: &str, group: usize, line: bool, points: Vec<(f64, f64, i64)>) -> Self {
        Dataset {
            label: label.into(),
            group,
            colour: colour(group).into(),
            line,
            stepped: false,
            legend: true,
            faded: false,
            shape: "circle",
            points,
        }
    }

    /// The same dataset drawn light and left out of the legend (toggled with its group).
    pub fn faded(mut self) -> Self {
        self.faded = true;
        self.legend = false;
        self
    }
}

/// The points of `xy` that a chart can draw: finite, and positive on a log axis. Returns the
/// kept points and how many were left out.
pub fn drawable(
    xy: impl IntoIterator<Item = (f64, f64, i64)>,
    log_y: bool,
) -> (Vec<(f64, f64, i64)>, usize) {
    let mut dropped = 0;
    let kept = xy
        .into_iter()
        .filter(|&(x, y, _)| {
            let ok = x.is_finite() && y.is_finite() && (!log_y || y > 0.0);
            dropped += usize::from(!ok);
            ok
        })
        .collect();
    (kept, dropped)
}
