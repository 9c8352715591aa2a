//! The per-task chart of an ablation (cf. GISclaw Fig. 10): on top each
//! task's composite with and without the flag, below the signed difference
//! with the mean as a dashed line.

use std::path::Path;

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Drawn, FAMILY};
use crate::eval::reports::task::model::Ablation;

/// The with-flag colour (slate) and the without-flag colour (warm).
const WITH: RGBColor = RGBColor(70, 90, 120);
const WITHOUT: RGBColor = RGBColor(230, 120, 60);

pub(super) fn ablation(a: &Ablation, path: &Path) -> Drawn {
    let n = a.per_task.len().max(1);
    let width = (160 + 24 * n as u32).clamp(680, 1600);
    let root = BitMapBackend::new(path, (width, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(380);
    let mut chart = ChartBuilder::on(&top)
        .caption(
            format!(
                "{} ablation ({}): composite per task, with vs without",
                a.flag, a.arch
            ),
            (FAMILY, 20),
        )
        .margin(16)
        .x_label_area_size(20)
        .y_label_area_size(52)
        // Headroom above 1 for the legend.
        .build_cartesian_2d(0f64..n as f64, 0f64..1.2f64)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("S_comp")
        .label_style((FAMILY, 13))
        .draw()?;
    chart.draw_series(a.per_task.iter().enumerate().map(|(i, (_, w, wo))| {
        PathElement::new(
            vec![(i as f64 + 0.5, *w), (i as f64 + 0.5, *wo)],
            RGBColor(190, 190, 190),
        )
    }))?;
    for (colour, label, with) in [(WITH, "with", true), (WITHOUT, "without", false)] {
        chart
            .draw_series(a.per_task.iter().enumerate().map(move |(i, (_, w, wo))| {
                let y = if with { *w } else { *wo };
                Circle::new((i as f64 + 0.5, y.clamp(0.0, 1.0)), 4, colour.filled())
            }))?
            .label(format!("{label} {}", a.flag))
            .legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
    }
    super::legend(&mut chart, SeriesLabelPosition::UpperRight, 12)?;

    let diffs: Vec<f64> = a.per_task.iter().map(|(_, w, wo)| w - wo).collect();
    let reach = diffs.iter().fold(0.05f64, |m, d| m.max(d.abs())).min(1.0) * 1.15;
    let mut delta = ChartBuilder::on(&bottom)
        .caption(
            format!(
                "Δ = with − without (slate: with wins, warm: without wins; dashed: mean {:+.3})",
                a.mean_difference
            ),
            (FAMILY, 16),
        )
        .margin(16)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..n as f64, -reach..reach)?;
    delta
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("Δ S_comp")
        .label_style((FAMILY, 13))
        .draw()?;
    delta.draw_series(diffs.iter().enumerate().map(|(i, d)| {
        let colour = if *d >= 0.0 { WITH } else { WITHOUT };
        Rectangle::new(
            [(i as f64 + 0.2, 0.0), (i as f64 + 0.8, *d)],
            colour.filled(),
        )
    }))?;
    if a.mean_difference.is_finite() {
        delta.draw_series(std::iter::once(DashedPathElement::new(
            vec![(0.0, a.mean_difference), (n as f64, a.mean_difference)],
            6,
            4,
            BLACK.stroke_width(1),
        )))?;
    }
    let style = TextStyle::from((FAMILY, 10).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, (task, _, _)) in a.per_task.iter().enumerate() {
        let (x, _) = delta.backend_coord(&(i as f64 + 0.5, 0.0));
        let (_, y) = delta.backend_coord(&(0.0, -reach));
        // Backend coordinates: drawn on the root, not the lower half.
        root.draw_text(task, &style, (x, y + 6))?;
    }
    root.present()?;
    Ok(())
}
