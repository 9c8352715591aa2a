//! Charts of the unit and step suites' reports, by label: a heatmap of
//! pass@1 per label value × model for each label key (cf. GeoJSEval
//! Fig. 8), pass@1 with the gains of pass@3 and pass@5 stacked (cf.
//! AutoGEEval Fig. 7) per library or per model, failing attempts'
//! error-type shares as 100 % bars (AutoGEEval Table 10 as a chart) and,
//! for unit comparisons, pass@k against tokens per sample (AutoGEEval
//! Table 8 and Figs. 10–12 in one picture).

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    bar_frame, column_labels, ensure_font, ramp, ChartError, Drawn, ERROR_COLOURS, FAMILY,
    MODEL_COLOURS,
};
use crate::bench::labels::KEYS;
use crate::eval::metrics::breakdown::Breakdown;
use crate::eval::metrics::errors::ErrorType;
use crate::eval::reports::document::Document;

/// Grey for a value a model has no figure for.
const EMPTY: RGBColor = RGBColor(230, 230, 230);

/// A grid of values in [0, 1]: `rows` down, `cols` across, `None` grey.
pub(super) fn heatmap(
    path: &Path,
    caption: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
) -> Drawn {
    let (n_cols, n_rows) = (cols.len().max(1), rows.len().max(1));
    // Room for the longest row label.
    let label_width = 16 + 7 * rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as u32;
    let root = BitMapBackend::new(
        path,
        (
            (200 + label_width + 160 * n_cols as u32).max(560),
            120 + 18 * n_rows as u32,
        ),
    )
    .into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, (FAMILY, 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(label_width)
        .build_cartesian_2d(0f64..n_cols as f64, 0f64..n_rows as f64)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .draw()?;
    let mut boxes = Vec::new();
    for (row, line) in values.iter().enumerate() {
        // The first row at the top.
        let y = (n_rows - 1 - row) as f64;
        for (col, value) in line.iter().enumerate() {
            let colour = match value.filter(|v| v.is_finite()) {
                Some(v) => ramp(v),
                None => EMPTY,
            };
            boxes.push(Rectangle::new(
                [(col as f64, y), (col as f64 + 1.0, y + 1.0)],
                colour.filled(),
            ));
        }
    }
    chart.draw_series(boxes)?;
    // The value in its box when there is room for it.
    if n_cols <= 12 {
        let style =
            TextStyle::from((FAMILY, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
        for (row, line) in values.iter().enumerate() {
            for (col, value) in line.iter().enumerate() {
                if let Some(v) = value.filter(|v| v.is_finite()) {
                    let at =
                        chart.backend_coord(&(col as f64 + 0.5, (n_rows - 1 - row) as f64 + 0.5));
                    let ink = if v > 0.6 { BLACK } else { WHITE };
                    root.draw_text(&format!("{v:.2}"), &style.color(&ink), at)?;
                }
            }
        }
    }
    column_labels(&root, |x| chart.backend_coord(&(x, 0.0)), cols)?;
    let style = TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for (row, label) in rows.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(0.0, (n_rows - 1 - row) as f64 + 0.5));
        root.draw_text(label, &style, (x - 6, y))?;
    }
    root.present()?;
    Ok(())
}

/// Draws one heatmap (`rows` × `cols`, values in [0, 1]) as `dir/name`
/// and returns its file name.
pub fn draw_heatmap(
    dir: &Path,
    name: &str,
    caption: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    venv: &Path,
) -> Result<String, ChartError> {
    ensure_font(venv)?;
    let failed = |path: &Path, e: &dyn std::fmt::Display| ChartError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, &e))?;
    let (path, tmp) = (dir.join(name), dir.join(format!(".tmp-{name}")));
    heatmap(&tmp, caption, rows, cols, values).map_err(|e| failed(&path, &e))?;
    std::fs::rename(&tmp, &path).map_err(|e| failed(&path, &e))?;
    Ok(name.to_string())
}

/// One 100 % bar per label: the shares of its failing attempts by error
/// type; a bar with no failure is left empty and said so.
fn share_bars(path: &Path, caption: &str, bars: &[(String, BTreeMap<String, usize>)]) -> Drawn {
    let n = bars.len().max(1);
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let root = BitMapBackend::new(path, ((340 + 110 * n as u32).max(600), 480)).into_drawing_area();
    let mut chart = bar_frame(&root, caption, "share of failing attempts", n, 1.45)?;
    let totals: Vec<usize> = bars.iter().map(|(_, e)| e.values().sum()).collect();
    let mut base = vec![0.0; n];
    for (kind, colour) in ErrorType::ALL.iter().zip(ERROR_COLOURS) {
        let mut rects = Vec::new();
        for (i, (_, errors)) in bars.iter().enumerate() {
            let count = errors.get(kind.name()).copied().unwrap_or(0);
            if count > 0 && totals[i] > 0 {
                let share = count as f64 / totals[i] as f64;
                rects.push(Rectangle::new(
                    [(i as f64 + 0.2, base[i]), (i as f64 + 0.8, base[i] + share)],
                    colour.filled(),
                ));
                base[i] += share;
            }
        }
        if rects.is_empty() {
            continue;
        }
        chart
            .draw_series(rects)?
            .label(kind.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    if totals.iter().all(|t| *t == 0) {
        let (x, y) = chart.backend_coord(&(0.1, 0.6));
        root.draw_text(
            "no failing attempts",
            &TextStyle::from((FAMILY, 20).into_font()),
            (x, y),
        )?;
    } else {
        super::legend(&mut chart, SeriesLabelPosition::UpperRight, 12)?;
    }
    column_labels(&root, |x| chart.backend_coord(&(x, 0.0)), &labels)?;
    root.present()?;
    Ok(())
}

/// Colours of pass@1 and the gains of pass@3 and pass@5.
const PASS_COLOURS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];

/// One bar per label: pass@1, then the gain of pass@3, then of pass@5.
fn stacked_pass(path: &Path, caption: &str, bars: &[(String, BTreeMap<usize, f64>)]) -> Drawn {
    let n = bars.len().max(1);
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let root = BitMapBackend::new(path, ((300 + 90 * n as u32).max(600), 480)).into_drawing_area();
    let mut chart = bar_frame(&root, caption, "pass@k", n, 1.3)?;
    for (j, (k, colour)) in [1usize, 3, 5].into_iter().zip(PASS_COLOURS).enumerate() {
        let rects: Vec<_> = bars
            .iter()
            .enumerate()
            .filter_map(|(i, (_, pass))| {
                let top = pass.get(&k)?.clamp(0.0, 1.0);
                let below = [1usize, 3, 5][..j]
                    .iter()
                    .filter_map(|k| pass.get(k))
                    .fold(0.0f64, |a, b| a.max(*b))
                    .clamp(0.0, 1.0);
                (top > below || j == 0).then(|| {
                    Rectangle::new(
                        [(i as f64 + 0.2, below), (i as f64 + 0.8, top)],
                        colour.filled(),
                    )
                })
            })
            .collect();
        if rects.is_empty() {
            continue;
        }
        let name = if j == 0 {
            "pass@1".to_string()
        } else {
            format!("gain of pass@{k}")
        };
        chart
            .draw_series(rects)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    super::legend(&mut chart, SeriesLabelPosition::UpperRight, 12)?;
    column_labels(&root, |x| chart.backend_coord(&(x, 0.0)), &labels)?;
    root.present()?;
    Ok(())
}

/// One dot per model: `x` against `y` (pass@k in [0, 1]).
fn scatter(path: &Path, caption: &str, x_desc: &str, points: &[(String, f64, f64)]) -> Drawn {
    let x_max = points
        .iter()
        .map(|p| p.1)
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.15;
    let root = BitMapBackend::new(path, (720, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, (FAMILY, 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..x_max, 0f64..1.05f64)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("pass@k (largest k)")
        .label_style((FAMILY, 13))
        .draw()?;
    for (i, (label, x, y)) in points.iter().enumerate() {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        let colour = MODEL_COLOURS[i % MODEL_COLOURS.len()];
        chart
            .draw_series(std::iter::once(Circle::new((*x, *y), 6, colour.filled())))?
            .label(label.as_str())
            .legend(move |(x, y)| Circle::new((x + 6, y), 5, colour.filled()));
    }
    super::legend(&mut chart, SeriesLabelPosition::LowerRight, 12)?;
    root.present()?;
    Ok(())
}

/// What a unit or step report draws: each model's figures by label, and
/// for unit comparisons each model's (tokens per sample, pass@k_max).
pub struct LabelCharts<'a> {
    /// The models (one for a single folder) with their breakdowns.
    pub models: Vec<(&'a str, &'a Breakdown)>,
    /// Each model's failing attempts by error type (the share bars of a
    /// comparison; a single folder's bars are per library instead).
    pub errors: Vec<(&'a str, &'a BTreeMap<String, usize>)>,
    /// Each model's overall pass@k (the stacked bars of a comparison).
    pub pass_at: Vec<(&'a str, &'a BTreeMap<usize, f64>)>,
    /// (model, tokens per sample, pass@k_max), for the efficiency scatter.
    pub efficiency: Vec<(String, f64, f64)>,
}

/// Draws the charts into `dir` and adds them to `doc` under a section
/// titled `title` (or says there why they are missing).
pub fn draw(charts: &LabelCharts, dir: &Path, venv: &Path, title: &str, doc: &mut Document) {
    doc.heading(title);
    match draw_files(charts, dir, venv) {
        Ok(files) => {
            for (name, what) in files {
                doc.chart(format!("charts/{name}"), what);
            }
        }
        Err(why) => {
            tracing::warn!("charts not drawn: {why}");
            doc.text(format!("Charts not drawn: {why}."));
        }
    }
}

fn draw_files(
    charts: &LabelCharts,
    dir: &Path,
    venv: &Path,
) -> Result<Vec<(String, String)>, ChartError> {
    ensure_font(venv)?;
    let failed = |path: &Path, e: &dyn std::fmt::Display| ChartError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, &e))?;
    let mut files = Vec::new();
    let mut write = |name: String, what: String, drawing: &dyn Fn(&Path) -> Drawn| {
        let path = dir.join(&name);
        let tmp = dir.join(format!(".tmp-{name}"));
        drawing(&tmp).map_err(|e| failed(&path, &e))?;
        std::fs::rename(&tmp, &path).map_err(|e| failed(&path, &e))?;
        files.push((name, what));
        Ok::<(), ChartError>(())
    };
    let cols: Vec<String> = charts.models.iter().map(|(m, _)| m.to_string()).collect();
    for key in KEYS {
        let mut rows: Vec<String> = charts
            .models
            .iter()
            .filter_map(|(_, b)| b.get(key))
            .flat_map(|c| c.keys().cloned())
            .collect();
        crate::eval::metrics::breakdown::order_values(key, &mut rows);
        if rows.is_empty() {
            continue;
        }
        let values: Vec<Vec<Option<f64>>> = rows
            .iter()
            .map(|row| {
                charts
                    .models
                    .iter()
                    .map(|(_, b)| b.get(key).and_then(|c| c.get(row)).map(|c| c.pass_at_1()))
                    .collect()
            })
            .collect();
        let caption = format!("pass@1 by {key} (0 purple → 1 yellow, grey: none)");
        write(
            format!("pass_at_1_by_{key}.png"),
            format!("pass@1 by {key} and model (cf. GeoJSEval Fig. 8)"),
            &|p| heatmap(p, &caption, &rows, &cols, &values),
        )?;
    }
    if let [(_, only)] = charts.models.as_slice() {
        let pass: Vec<(String, BTreeMap<usize, f64>)> = only
            .get("library")
            .map(|c| {
                c.iter()
                    .map(|(v, c)| (v.clone(), c.pass_at.clone()))
                    .collect()
            })
            .unwrap_or_default();
        write(
            "pass_at_k_by_library.png".into(),
            "pass@1 and the gains of pass@3 and pass@5 per library (cf. AutoGEEval Fig. 7)".into(),
            &|p| stacked_pass(p, "pass@k by library", &pass),
        )?;
        let bars: Vec<(String, BTreeMap<String, usize>)> = only
            .get("library")
            .map(|c| {
                c.iter()
                    .map(|(v, c)| (v.clone(), c.errors.clone()))
                    .collect()
            })
            .unwrap_or_default();
        write(
            "error_shares_by_library.png".into(),
            "error-type shares of the failing attempts per library (AutoGEEval Table 10 by library)".into(),
            &|p| share_bars(p, "Error types by library (shares)", &bars),
        )?;
    } else {
        let pass: Vec<(String, BTreeMap<usize, f64>)> = charts
            .pass_at
            .iter()
            .map(|(m, p)| (m.to_string(), (*p).clone()))
            .collect();
        write(
            "pass_at_k.png".into(),
            "pass@1 and the gains of pass@3 and pass@5 per model (cf. AutoGEEval Fig. 7)".into(),
            &|p| stacked_pass(p, "pass@k by model", &pass),
        )?;
        let bars: Vec<(String, BTreeMap<String, usize>)> = charts
            .errors
            .iter()
            .map(|(m, e)| (m.to_string(), (*e).clone()))
            .collect();
        write(
            "error_shares.png".into(),
            "error-type shares of each model's failing attempts (AutoGEEval Table 10 as a chart)"
                .into(),
            &|p| share_bars(p, "Error types by model (shares)", &bars),
        )?;
    }
    if !charts.efficiency.is_empty() {
        write(
            "efficiency.png".into(),
            "pass@k against tokens per sample (AutoGEEval Table 8 and Figs. 10–12 in one picture)"
                .into(),
            &|p| {
                scatter(
                    p,
                    "Accuracy against tokens per sample",
                    "tokens per sample",
                    &charts.efficiency,
                )
            },
        )?;
    }
    Ok(files)
}
