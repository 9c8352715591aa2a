//! The report's PNG charts, drawn with `plotters`: success rate per cell
//! (SA beside DA), composite with its 95 % CI whiskers, failed runs by
//! error type (here), the per-task heatmaps and C_emb dots
//! ([`per_task`]), the four-score profiles ([`profiles`]) and the paired
//! per-task ablation ([`ablation`]).
//!
//! Text needs a font and gisclaw ships none: it uses DejaVu Sans from the
//! sandbox venv's matplotlib (always installed by `make setup`). Without it
//! the charts are skipped and the report says why. Each PNG is written under
//! a temporary name and renamed, so a chart is whole or absent.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod ablation;
mod cost;
pub mod labels;
mod per_task;
mod profiles;

use super::model::Report;
use crate::eval::metrics::errors::ErrorType;

/// The charts every report has, in the order it shows them, with what
/// each is (the paper figure it follows).
pub const FILES: [(&str, &str); 8] = [
    ("success.png", "success rate per cell (cf. GISclaw Fig. 4)"),
    ("composite.png", "composite with 95 % CI (cf. Fig. 5)"),
    ("api_f1_heatmap.png", "per-task API F1 (cf. Fig. 6)"),
    (
        "c_emb_per_task.png",
        "per-task C_emb, one dot per model and task (cf. Fig. 7)",
    ),
    ("l3_heatmap.png", "per-task L3 output accuracy (cf. Fig. 8)"),
    (
        "profiles.png",
        "four-score profiles per architecture (cf. Fig. 9)",
    ),
    ("error_types.png", "failed runs by error type"),
    (
        "cost_accuracy.png",
        "cost per run against the composite, with the Pareto front",
    ),
];

/// The file of the chart of ablation `i` of the report (cf. Fig. 10).
pub fn ablation_file(report: &Report, i: usize) -> String {
    let a = &report.ablations[i];
    format!("ablation_{}_{}.png", a.flag.replace(' ', "_"), a.arch)
}

/// Every chart of `report`: [`FILES`] then one per ablation, with what each is.
pub fn files(report: &Report) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = FILES
        .iter()
        .map(|(f, what)| (f.to_string(), what.to_string()))
        .collect();
    for (i, a) in report.ablations.iter().enumerate() {
        all.push((
            ablation_file(report, i),
            format!("per-task {} ablation, {} (cf. Fig. 10)", a.flag, a.arch),
        ));
    }
    all
}

/// The font family the charts register and use.
const FAMILY: &str = "sans-serif";

/// Colours for the single, dual and mcts bars and the error types.
const SINGLE: RGBColor = RGBColor(31, 119, 180);
const DUAL: RGBColor = RGBColor(255, 127, 14);
const MCTS: RGBColor = RGBColor(44, 160, 44);
const ALONE: RGBColor = RGBColor(127, 127, 127);
const ERROR_COLOURS: [RGBColor; 9] = [
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(255, 127, 14),
    RGBColor(188, 189, 34),
    RGBColor(31, 119, 180),
    RGBColor(23, 190, 207),
];

/// DejaVu Sans inside the venv's matplotlib.
fn font_path(venv: &Path) -> Option<PathBuf> {
    let lib = venv.join("lib");
    std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| {
            e.path()
                .join("site-packages/matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf")
        })
        .find(|p| p.is_file())
}

/// Why the charts were not drawn (the report says so in place of them).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ChartError {
    /// The venv has no matplotlib font to borrow.
    #[error("no DejaVuSans.ttf under {}/lib/*/site-packages/matplotlib (run `make setup`)", .0.display())]
    NoFont(PathBuf),
    /// The font file cannot be read or used.
    #[error("{}: {message}", path.display())]
    Font {
        /// The font file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A chart or its folder cannot be written.
    #[error("{}: {message}", path.display())]
    Write {
        /// The chart or folder.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// Registers the font once per process.
fn ensure_font(venv: &Path) -> Result<(), ChartError> {
    static REGISTERED: OnceLock<Result<(), ChartError>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let path = font_path(venv).ok_or_else(|| ChartError::NoFont(venv.to_path_buf()))?;
            let bytes = std::fs::read(&path).map_err(|e| ChartError::Font {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font(FAMILY, FontStyle::Normal, bytes).map_err(|_| {
                ChartError::Font {
                    path: path.clone(),
                    message: "not a usable font".into(),
                }
            })
        })
        .clone()
}

/// Draws every chart of [`files`] into `dir` (the venv provides the font).
pub fn draw(report: &Report, dir: &Path, venv: &Path) -> Result<(), ChartError> {
    ensure_font(venv)?;
    let failed = |path: &Path, e: &dyn std::fmt::Display| ChartError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, &e))?;
    for (i, (name, _)) in files(report).iter().enumerate() {
        let path = dir.join(name);
        let tmp = dir.join(format!(".tmp-{name}"));
        let drawn = match name.as_str() {
            "success.png" => success(report, &tmp),
            "composite.png" => composite(report, &tmp),
            "api_f1_heatmap.png" => per_task::api_heatmap(report, &tmp),
            "c_emb_per_task.png" => per_task::c_emb_dots(report, &tmp),
            "l3_heatmap.png" => per_task::l3_heatmap(report, &tmp),
            "profiles.png" => profiles::profiles(report, &tmp),
            "error_types.png" => error_types(report, &tmp),
            "cost_accuracy.png" => cost::cost_accuracy(report, &tmp),
            _ => ablation::ablation(&report.ablations[i - FILES.len()], &tmp),
        };
        drawn.map_err(|e| failed(&path, &e))?;
        std::fs::rename(&tmp, &path).map_err(|e| failed(&path, &e))?;
    }
    Ok(())
}

type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Colours for models (backends), in order of first appearance.
const MODEL_COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// The models (backends with flags) of `report`'s cells, in order, each
/// with its colour.
fn models(report: &Report) -> Vec<(String, RGBColor)> {
    let mut out: Vec<(String, RGBColor)> = Vec::new();
    for c in &report.cells {
        if !out.iter().any(|(m, _)| m == &c.backend) {
            let colour = MODEL_COLOURS[out.len() % MODEL_COLOURS.len()];
            out.push((c.backend.clone(), colour));
        }
    }
    out
}

/// The architectures of `report`'s cells, in report order (single, dual, mcts).
fn archs(report: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in ["single", "dual", "mcts", "none"] {
        if report.cells.iter().any(|c| c.arch == a) {
            out.push(a.to_string());
        }
    }
    out
}

/// A caption's name for an architecture.
fn arch_title(arch: &str) -> &'static str {
    match arch {
        "single" => "Single Agent",
        "dual" => "Dual Agent",
        "mcts" => "Tree search",
        "none" => "LLM alone",
        _ => "other",
    }
}

fn arch_colour(arch: &str) -> RGBColor {
    match arch {
        "dual" => DUAL,
        "mcts" => MCTS,
        "none" => ALONE,
        _ => SINGLE,
    }
}

/// Draws a chart's legend: framed, on a near-white ground, at `position`
/// in `size`-point type.
fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    size: u32,
) -> Drawn
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FAMILY, size))
        .draw()?;
    Ok(())
}

/// Writes `labels[i]` under the middle of column `i` of a chart whose x
/// axis runs over 0..labels.len() (plotters' own tick labels land between
/// bars).
fn column_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    at: impl Fn(f64) -> (i32, i32),
    labels: &[String],
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let style = TextStyle::from((FAMILY, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, label) in labels.iter().enumerate() {
        let (x, y) = at(i as f64 + 0.5);
        root.draw_text(label, &style, (x, y + 6))?;
    }
    Ok(())
}

/// A bar chart's plot area: one column per cell over x in 0..n, y in
/// 0..y_max, horizontal grid lines only (column labels: [`column_labels`]).
type BarChart<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn bar_frame<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    caption: &str,
    y_desc: &str,
    n: usize,
    y_max: f64,
) -> Result<BarChart<'a, 'b>, Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(caption, (FAMILY, 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..n as f64, 0f64..y_max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_desc)
        .label_style((FAMILY, 14))
        .draw()?;
    Ok(chart)
}

/// One bar: the cell's label, its architecture, the value and its whiskers.
type Bar = (String, String, f64, Option<(f64, f64)>);

/// Bars of one value in [0, 1] per cell, coloured by architecture, with
/// optional (low, high) whiskers.
fn cell_bars(path: &Path, caption: &str, y_desc: &str, values: &[Bar]) -> Drawn {
    let n = values.len().max(1);
    let labels: Vec<String> = values.iter().map(|v| v.0.clone()).collect();
    let root = BitMapBackend::new(path, ((220 + 150 * n as u32).max(480), 480)).into_drawing_area();
    let mut chart = bar_frame(&root, caption, y_desc, n, 1.0)?;
    chart.draw_series(values.iter().enumerate().map(|(i, (_, arch, value, _))| {
        Rectangle::new(
            [
                (i as f64 + 0.2, 0.0),
                (i as f64 + 0.8, value.clamp(0.0, 1.0)),
            ],
            arch_colour(arch).filled(),
        )
    }))?;
    chart.draw_series(values.iter().enumerate().filter_map(|(i, v)| {
        v.3.map(|(lo, hi)| {
            PathElement::new(
                vec![(i as f64 + 0.5, lo), (i as f64 + 0.5, hi)],
                BLACK.stroke_width(2),
            )
        })
    }))?;
    column_labels(&root, |x| chart.backend_coord(&(x, 0.0)), &labels)?;
    root.present()?;
    Ok(())
}

fn success(report: &Report, path: &Path) -> Drawn {
    let values: Vec<_> = report
        .cells
        .iter()
        .map(|c| (c.label.clone(), c.arch.clone(), c.success_rate, None))
        .collect();
    cell_bars(
        path,
        "Success rate (R_succ) per architecture",
        "R_succ",
        &values,
    )
}

fn composite(report: &Report, path: &Path) -> Drawn {
    let values: Vec<_> = report
        .cells
        .iter()
        .map(|c| {
            (
                c.label.clone(),
                c.arch.clone(),
                c.composite,
                Some(c.composite_ci),
            )
        })
        .collect();
    cell_bars(path, "Composite S with 95 % bootstrap CI", "S", &values)
}

/// A colour for a score in [0, 1]: dark purple through teal to yellow.
fn ramp(x: f64) -> RGBColor {
    let stops = [
        (68.0, 1.0, 84.0),
        (33.0, 145.0, 140.0),
        (253.0, 231.0, 37.0),
    ];
    let x = if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    } * 2.0;
    let (i, t) = if x >= 2.0 {
        (1, 1.0)
    } else {
        (x.floor() as usize, x.fract())
    };
    let (a, b) = (stops[i], stops[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn error_types(report: &Report, path: &Path) -> Drawn {
    let n = report.cells.len().max(1);
    let labels: Vec<String> = report.cells.iter().map(|c| c.label.clone()).collect();
    let totals: Vec<usize> = report
        .cells
        .iter()
        .map(|c| c.run_errors.values().sum())
        .collect();
    let top = totals.iter().copied().max().unwrap_or(0).max(1) as f64;
    let root = BitMapBackend::new(path, ((340 + 150 * n as u32).max(560), 480)).into_drawing_area();
    if totals.iter().all(|t| *t == 0) {
        // Nothing failed: said, not an empty frame with made-up ticks.
        root.fill(&WHITE)?;
        root.titled("Failed runs by error type", (FAMILY, 22))?
            .draw(&Text::new(
                "no failed runs",
                (40, 200),
                (FAMILY, 20).into_font(),
            ))?;
        root.present()?;
        return Ok(());
    }
    let mut chart = bar_frame(
        &root,
        "Failed runs by error type",
        "failed runs",
        n,
        top * 1.6,
    )?;
    let mut base = vec![0.0; n];
    for (kind, colour) in ErrorType::ALL.iter().zip(ERROR_COLOURS) {
        let mut bars = Vec::new();
        for (i, cell) in report.cells.iter().enumerate() {
            let count = cell.run_errors.get(kind.name()).copied().unwrap_or(0) as f64;
            if count > 0.0 {
                bars.push(Rectangle::new(
                    [(i as f64 + 0.2, base[i]), (i as f64 + 0.8, base[i] + count)],
                    colour.filled(),
                ));
                base[i] += count;
            }
        }
        chart
            .draw_series(bars)?
            .label(kind.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight, 13)?;
    column_labels(&root, |x| chart.backend_coord(&(x, 0.0)), &labels)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ramp;

    #[test]
    fn the_ramp_runs_from_purple_to_yellow() {
        assert_eq!(ramp(0.0), super::RGBColor(68, 1, 84));
        assert_eq!(ramp(0.5), super::RGBColor(33, 145, 140));
        assert_eq!(ramp(1.0), super::RGBColor(253, 231, 37));
        assert_eq!(ramp(f64::NAN), ramp(0.0));
    }
}
