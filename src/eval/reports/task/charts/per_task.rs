//! Per-task charts: a heatmap of one score (tasks × cells: L3 as GISclaw
//! Fig. 8, API F1 as Fig. 6; grey where a cell has no run) and the C_emb dots of every (model, task), one
//! panel per architecture (Fig. 7).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{arch_title, archs, models, Drawn, FAMILY};
use crate::eval::reports::task::model::{Report, TaskCell};

/// The per-task L3 heatmap (cf. Fig. 8).
pub(super) fn l3_heatmap(report: &Report, path: &Path) -> Drawn {
    heatmap(
        report,
        path,
        "Mean L3 score per task (0 purple → 1 yellow, grey: no run)",
        |c| Some(c.q_out),
    )
}

/// The per-task API F1 heatmap (cf. Fig. 6).
pub(super) fn api_heatmap(report: &Report, path: &Path) -> Drawn {
    heatmap(
        report,
        path,
        "Mean API-operation F1 per task (0 purple → 1 yellow, grey: no run)",
        |c| Some(c.f_api),
    )
}

/// Tasks down, cells across, coloured by `value` of each task in each cell.
fn heatmap(
    report: &Report,
    path: &Path,
    caption: &str,
    value: impl Fn(&TaskCell) -> Option<f64>,
) -> Drawn {
    let cols: Vec<String> = report.cells.iter().map(|c| c.label.clone()).collect();
    let rows: Vec<String> = report.tasks.iter().map(|t| t.task.clone()).collect();
    let values: Vec<Vec<Option<f64>>> = report
        .tasks
        .iter()
        .map(|line| {
            line.cells
                .iter()
                .map(|cell| value(cell).filter(|_| cell.runs > 0))
                .collect()
        })
        .collect();
    super::labels::heatmap(path, caption, &rows, &cols, &values)
}

/// C_emb per task (mean over runs): one dot per (model, task), one panel
/// per architecture, models by colour (cf. Fig. 7).
pub(super) fn c_emb_dots(report: &Report, path: &Path) -> Drawn {
    let archs = archs(report);
    let models = models(report);
    let tasks = report.tasks.len().max(1);
    let width = (160 + 22 * tasks as u32).clamp(520, 1400);
    let root =
        BitMapBackend::new(path, (width * archs.len().max(1) as u32, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, archs.len().max(1)));
    for (panel, arch) in panels.iter().zip(&archs) {
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("C_emb per task — {}", arch_title(arch)),
                (FAMILY, 20),
            )
            .margin(16)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(0f64..tasks as f64, 0f64..1f64)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("C_emb")
            .label_style((FAMILY, 13))
            .draw()?;
        for (m, (model, colour)) in models.iter().enumerate() {
            // Side by side within a task's column, so equal values stay visible.
            let shift = (m as f64 - (models.len() as f64 - 1.0) / 2.0) * 0.5 / models.len() as f64;
            let Some(col) = report
                .cells
                .iter()
                .position(|c| &c.backend == model && &c.arch == arch)
            else {
                continue;
            };
            let colour = *colour;
            let dots: Vec<(f64, f64)> = report
                .tasks
                .iter()
                .enumerate()
                .filter_map(|(t, line)| {
                    line.cells[col]
                        .c_emb
                        .map(|v| (t as f64 + 0.5 + shift, v.clamp(0.0, 1.0)))
                })
                .collect();
            chart
                .draw_series(
                    dots.into_iter()
                        .map(move |p| Circle::new(p, 4, colour.filled())),
                )?
                .label(model.as_str())
                .legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
        }
        super::legend(&mut chart, SeriesLabelPosition::LowerRight, 12)?;
        let labels: Vec<String> = report.tasks.iter().map(|t| t.task.clone()).collect();
        let style =
            TextStyle::from((FAMILY, 10).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for (i, label) in labels.iter().enumerate() {
            // Backend coordinates: drawn on the root, not the panel.
            let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            root.draw_text(label, &style, (x, y + 6))?;
        }
    }
    root.present()?;
    Ok(())
}
