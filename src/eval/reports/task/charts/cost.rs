//! The cost–accuracy chart: one dot per cell (cost per run against its
//! composite), coloured by architecture and labelled, with the Pareto
//! front drawn through the cells no other beats on both.

use std::path::Path;

use plotters::prelude::*;

use super::{arch_colour, Drawn, FAMILY};
use crate::eval::reports::task::cost::CostAccuracy;
use crate::eval::reports::task::model::Report;

/// Draws `cost_accuracy.png`.
pub fn cost_accuracy(report: &Report, path: &Path) -> Drawn {
    let cost: &CostAccuracy = &report.cost;
    let xs: Vec<f64> = cost.points.iter().map(|p| p.cost(cost.axis)).collect();
    let x_max = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let x_max = if x_max > 0.0 { x_max * 1.15 } else { 1.0 };
    let root = BitMapBackend::new(path, (760, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Cost and accuracy per cell (Pareto front)", (FAMILY, 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..x_max, 0f64..1.05)?;
    chart
        .configure_mesh()
        .x_desc(cost.axis.describe())
        .y_desc("S_comp")
        .label_style((FAMILY, 14))
        .draw()?;
    let mut front: Vec<(f64, f64)> = cost
        .points
        .iter()
        .zip(&xs)
        .filter(|(p, x)| p.front_composite && x.is_finite())
        .map(|(p, x)| (*x, p.composite))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart.draw_series(std::iter::once(PathElement::new(
        front,
        RGBColor(90, 90, 90).stroke_width(2),
    )))?;
    for (p, x) in cost.points.iter().zip(&xs).filter(|(_, x)| x.is_finite()) {
        let y = if p.composite.is_nan() {
            0.0
        } else {
            p.composite
        };
        let colour = arch_colour(&p.arch);
        chart.draw_series(std::iter::once(Circle::new((*x, y), 7, colour.filled())))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{}{}", if p.front_composite { "◆ " } else { "" }, p.label),
            (*x, y),
            (FAMILY, 13).into_font(),
        )))?;
    }
    root.present()?;
    Ok(())
}
