//! Chart specs: what the page's script hands to Chart.js. Every chart is an x/y scatter whose
//! datasets may join their points with a line; a dataset belongs to a group (a series), and
//! a legend click shows or hides the whole group.

use serde::ser::{Serialize, SerializeSeq, Serializer};

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
#[derive(Debug, Clone, serde::Serialize)]
pub struct Chart {
    /// Unique in the page; the canvas is `chart-<id>`.
    pub id: String,
    pub x: Axis,
    pub y: Axis,
    pub datasets: Vec<Dataset>,
}

/// An axis: its title and whether it is logarithmic.
#[derive(Debug, Clone, serde::Serialize)]
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
#[derive(Debug, Clone, serde::Serialize)]
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
    /// The points' bars drawn as a band around the line (an interval over a series) rather
    /// than as error bars.
    pub band: bool,
    /// Chart.js point style (`circle`, `triangle`...); `none` draws the line alone.
    pub shape: &'static str,
    pub points: Vec<Point>,
}

/// One point of a dataset; in the page's JSON `[x, y, tip]` or, with a bar, `[x, y, tip, low,
/// high]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// Index of the point's tooltip text, -1 for none.
    pub tip: i64,
    /// A vertical bar from low to high y through the point (the figure's spread).
    pub bar: Option<(f64, f64)>,
}

impl Point {
    pub fn new(x: f64, y: f64, tip: i64) -> Self {
        Point {
            x,
            y,
            tip,
            bar: None,
        }
    }
}

impl Serialize for Point {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(if self.bar.is_some() { 5 } else { 3 }))?;
        seq.serialize_element(&self.x)?;
        seq.serialize_element(&self.y)?;
        seq.serialize_element(&self.tip)?;
        if let Some((low, high)) = self.bar {
            seq.serialize_element(&low)?;
            seq.serialize_element(&high)?;
        }
        seq.end()
    }
}

impl Dataset {
    /// A dataset of group `group` in its colour: a line through `points` when `line`.
    pub fn new(label: &str, group: usize, line: bool, points: Vec<Point>) -> Self {
        Dataset {
            label: label.into(),
            group,
            colour: colour(group).into(),
            line,
            stepped: false,
            legend: true,
            faded: false,
            band: false,
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

/// The points that a chart can draw: finite, and positive on a log axis (a bar that is not,
/// or that has no length, is dropped). Returns the kept points and how many were left out.
pub fn drawable(points: impl IntoIterator<Item = Point>, log_y: bool) -> (Vec<Point>, usize) {
    let ok = |v: f64| v.is_finite() && (!log_y || v > 0.0);
    let mut dropped = 0;
    let kept = points
        .into_iter()
        .filter_map(|mut p| {
            if !(p.x.is_finite() && ok(p.y)) {
                dropped += 1;
                return None;
            }
            p.bar = p.bar.filter(|&(lo, hi)| ok(lo) && ok(hi) && lo < hi);
            Some(p)
        })
        .collect();
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_serialise_as_short_arrays_and_bad_bars_go() {
        let mut p = Point::new(0.5, 10.0, 3);
        assert_eq!(serde_json::to_string(&p).unwrap(), "[0.5,10.0,3]");
        p.bar = Some((8.0, 12.5));
        assert_eq!(serde_json::to_string(&p).unwrap(), "[0.5,10.0,3,8.0,12.5]");
        let flat = Point {
            bar: Some((10.0, 10.0)),
            ..p
        };
        let negative = Point {
            bar: Some((-1.0, 12.0)),
            ..p
        };
        let gone = Point::new(0.5, 0.0, 4);
        let (kept, dropped) = drawable([p, flat, negative, gone], true);
        assert_eq!(dropped, 1);
        let bars: Vec<_> = kept.iter().map(|k| k.bar).collect();
        assert_eq!(bars, [Some((8.0, 12.5)), None, None]);
    }
}
