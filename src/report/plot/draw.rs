//! Drawing a [`Chart`] spec with plotters, as PNG or SVG by the file extension. Text uses the
//! embedded DejaVu Sans, so a machine without fonts draws the same picture.

use crate::report::html::Chart;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::path::Path;
use std::sync::Once;

const FONT: &[u8] = include_bytes!("DejaVuSans.ttf");

/// Where the legend goes (the corner the chart's lines leave free).
pub use plotters::chart::SeriesLabelPosition as LegendAt;

/// Draw `chart` into `path` (`.png` or `.svg`), `size` pixels. The image is drawn in memory
/// and written atomically, so a failed write leaves no partial image and an old file intact.
pub fn save(
    chart: &Chart,
    title: &str,
    legend: LegendAt,
    path: &Path,
    size: (u32, u32),
) -> crate::Result<()> {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        // The bytes are a valid TrueType font, checked by the tests.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let failed = |e: String| {
        crate::Error::Config(format!("cannot draw the plot for {}: {e}", path.display()))
    };
    let bytes = match ext.as_deref() {
        Some("svg") => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                draw(&root, chart, title, legend).map_err(|e| failed(e.to_string()))?;
                root.present().map_err(|e| failed(e.to_string()))?;
            }
            svg.into_bytes()
        }
        Some("png") => {
            let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
                draw(&root, chart, title, legend).map_err(|e| failed(e.to_string()))?;
                root.present().map_err(|e| failed(e.to_string()))?;
            }
            encode_png(&rgb, size).map_err(|e| failed(e.to_string()))?
        }
        _ => {
            return Err(crate::Error::Config(format!(
                "cannot save a plot as '{}': use a .png or .svg file name",
                path.display()
            )));
        }
    };
    crate::fsutil::check_report_output(path, "the plot")?;
    crate::fsutil::write_atomic(path, &bytes, "the plot")
}

/// 8-bit RGB pixels as a PNG file.
fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // Adaptive filtering, as plotters' own encoder (the image crate) does: a quarter the size.
    enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = enc.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(out)
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    title: &str,
    legend: LegendAt,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let all = || chart.datasets.iter().flat_map(|d| d.points.iter());
    let (x0, x1) = span(all().map(|p| p.x), chart.x.log);
    let ys = all().flat_map(|p| [Some(p.y), p.bar.map(|b| b.0), p.bar.map(|b| b.1)]);
    let (y0, y1) = span(ys.flatten(), chart.y.log);
    let log = |lo: f64, hi: f64| (lo..hi).log_scale().with_key_points(log_ticks(lo, hi));
    // Half the width of a bar's caps, in x units (x is recall or clients: linear).
    let cap = (x1 - x0) * 0.003;
    match (chart.x.log, chart.y.log) {
        (false, false) => body(root, chart, title, legend, cap, x0..x1, y0..y1),
        (false, true) => body(root, chart, title, legend, cap, x0..x1, log(y0, y1)),
        (true, false) => body(root, chart, title, legend, cap, log(x0, x1), y0..y1),
        (true, true) => body(root, chart, title, legend, cap, log(x0, x1), log(y0, y1)),
    }
}

/// Tick values of a log axis over [lo, hi]: 1, 2, 5 times powers of ten, or every integer
/// multiple when the range is too narrow for three of those.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = lo.log10().floor() as i32..=hi.log10().ceil() as i32;
    let pick = |mults: &[f64]| -> Vec<f64> {
        decades
            .clone()
            .flat_map(|d| mults.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let coarse = pick(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 3 {
        coarse
    } else {
        pick(&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

/// The range of `values` with a margin (a factor on a log axis); (0, 1) when empty.
fn span(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        (lo / 1.15, hi * 1.15)
    } else {
        let pad = if hi > lo {
            (hi - lo) * 0.04
        } else {
            lo.abs().max(1.0) * 0.05
        };
        (lo - pad, hi + pad)
    }
}

fn body<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    title: &str,
    legend: LegendAt,
    cap: f64,
    x: X,
    y: Y,
) -> DrawResult<DB>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    // Counts on the x axis (run numbers of a history) get whole ticks only.
    let whole_x = chart
        .datasets
        .iter()
        .flat_map(|d| &d.points)
        .all(|p| p.x.fract() == 0.0);
    let x_tick = |v: &f64| match whole_x && v.fract().abs() > 1e-9 {
        true => String::new(),
        false => tick(*v),
    };
    let mut cc = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)?;
    cc.configure_mesh()
        .x_desc(chart.x.title.as_str())
        .y_desc(chart.y.title.as_str())
        .label_style(("sans-serif", 13))
        .x_labels(12)
        .y_labels(16)
        .x_label_formatter(&x_tick)
        .y_label_formatter(&|v: &f64| tick(*v))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(BLACK.mix(0.04))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;
    for d in &chart.datasets {
        let c = hex(&d.colour);
        let colour = if d.faded { c.mix(0.35) } else { c.mix(1.0) };
        let pts: Vec<(f64, f64)> = d.points.iter().map(|p| (p.x, p.y)).collect();
        // A band (an interval along a series): the area between the lows and the highs.
        if d.band {
            let lows = d.points.iter().filter_map(|p| p.bar.map(|b| (p.x, b.0)));
            let highs: Vec<(f64, f64)> = d
                .points
                .iter()
                .filter_map(|p| p.bar.map(|b| (p.x, b.1)))
                .collect();
            let outline: Vec<(f64, f64)> = lows.chain(highs.into_iter().rev()).collect();
            if outline.len() > 2 {
                cc.draw_series([Polygon::new(outline, c.mix(0.18).filled())])?;
            }
        }
        // Bars (the figure's spread): a vertical line with short caps.
        let bars = d
            .points
            .iter()
            .filter(|_| !d.band)
            .filter_map(|p| p.bar.map(|b| (p.x, b)));
        for (x, (lo, hi)) in bars {
            let style = colour.stroke_width(1);
            cc.draw_series([
                PathElement::new(vec![(x, lo), (x, hi)], style),
                PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
                PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
            ])?;
        }
        let radius = if d.faded { 3 } else { 4 };
        let mut labelled = None;
        if d.line {
            let path = if d.stepped { steps(&pts) } else { pts.clone() };
            labelled = Some(cc.draw_series(LineSeries::new(path, colour.stroke_width(2)))?);
        }
        if d.shape != "none" {
            let anno = if d.shape == "triangle" {
                // Marks without a line (change points) sit on a line's own points: larger.
                let size = if d.line { radius + 1 } else { radius + 5 };
                cc.draw_series(
                    pts.iter()
                        .map(|&p| TriangleMarker::new(p, size, colour.filled())),
                )?
            } else {
                cc.draw_series(pts.iter().map(|&p| Circle::new(p, radius, colour.filled())))?
            };
            labelled = Some(anno);
        }
        if let (true, Some(anno)) = (d.legend, labelled) {
            let shape = d.shape;
            anno.label(d.label.as_str()).legend(move |(x, y)| {
                let mark: DynElement<'static, DB, (i32, i32)> = match shape {
                    "triangle" => TriangleMarker::new((x, y), 5, colour.filled()).into_dyn(),
                    "none" => PathElement::new([(x - 8, y), (x + 8, y)], colour.stroke_width(2))
                        .into_dyn(),
                    _ => Circle::new((x, y), 4, colour.filled()).into_dyn(),
                };
                mark
            });
        }
    }
    cc.configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

/// The step path through `pts` (ascending x) that rises at each point: the cost to reach at
/// least recall x is the next point's.
fn steps(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2);
    for (i, &(x, y)) in pts.iter().enumerate() {
        if i > 0 {
            out.push((pts[i - 1].0, y));
        }
        out.push((x, y));
    }
    out
}

/// A tick label: whole numbers from 100 up, else at most 3 decimals without trailing zeros.
fn tick(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{}", (v * 1e3).round() / 1e3)
    }
}

/// `#rrggbb` as a colour (grey when malformed).
fn hex(s: &str) -> RGBColor {
    let v = u32::from_str_radix(s.trim_start_matches('#'), 16).unwrap_or(0x777777);
    RGBColor((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_rise_at_each_point() {
        let s = steps(&[(0.9, 3.0), (0.99, 6.0), (1.0, 18.0)]);
        assert_eq!(
            s,
            [
                (0.9, 3.0),
                (0.9, 6.0),
                (0.99, 6.0),
                (0.99, 18.0),
                (1.0, 18.0)
            ]
        );
    }

    #[test]
    fn log_ticks_are_round() {
        assert_eq!(log_ticks(300.0, 4500.0), [500.0, 1000.0, 2000.0]);
        assert_eq!(log_ticks(2.6, 21.0), [5.0, 10.0, 20.0]);
        assert_eq!(log_ticks(2.6, 9.5), [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }

    #[test]
    fn spans_have_margins_and_survive_no_data() {
        assert_eq!(span([].into_iter(), true), (1.0, 10.0));
        let (lo, hi) = span([2.0, 4.0].into_iter(), false);
        assert!(lo < 2.0 && hi > 4.0);
        let (lo, hi) = span([100.0, 0.0, 1000.0].into_iter(), true);
        assert!(lo > 0.0 && lo < 100.0 && hi > 1000.0);
        assert_eq!(hex("#4e79a7"), RGBColor(0x4e, 0x79, 0xa7));
        assert_eq!(
            (tick(4000.0), tick(0.91), tick(2.5)),
            ("4000".into(), "0.91".into(), "2.5".into())
        );
    }
}
