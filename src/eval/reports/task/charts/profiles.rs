//! Four-score profiles (cf. GISclaw Fig. 9): per architecture, a radar of
//! R_succ, Q_out, F_api and C_emb with one polygon per model.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{arch_title, archs, models, Drawn, FAMILY};
use crate::eval::reports::task::model::{CellSummary, Report};

/// The axes, clockwise from the top, with how to read each from a cell
/// (Q_out is NaN without a successful run: drawn as 0).
type Axis = (&'static str, fn(&CellSummary) -> f64);

const AXES: [Axis; 4] = [
    ("R_succ", |c| c.success_rate),
    ("Q_out", |c| c.q_out),
    ("F_api", |c| c.f_api),
    ("C_emb", |c| c.c_emb.unwrap_or(f64::NAN)),
];

/// The point at `value` (0..1) on axis `i`.
fn point(i: usize, value: f64) -> (f64, f64) {
    let v = if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let angle = std::f64::consts::FRAC_PI_2 - i as f64 * std::f64::consts::TAU / AXES.len() as f64;
    (v * angle.cos(), v * angle.sin())
}

pub(super) fn profiles(report: &Report, path: &Path) -> Drawn {
    let archs = archs(report);
    let models = models(report);
    let root = BitMapBackend::new(path, (520 * archs.len().max(1) as u32, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, archs.len().max(1)));
    let grid = RGBColor(200, 200, 200);
    for (panel, arch) in panels.iter().zip(&archs) {
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("Score profiles — {}", arch_title(arch)),
                (FAMILY, 20),
            )
            .margin(20)
            .build_cartesian_2d(-1.7f64..1.7f64, -1.35f64..1.35f64)?;
        // Rings at 0.25 … 1 and the four axes.
        for ring in [0.25, 0.5, 0.75, 1.0] {
            let mut ring_points: Vec<(f64, f64)> =
                (0..AXES.len()).map(|i| point(i, ring)).collect();
            ring_points.push(ring_points[0]);
            chart.draw_series(std::iter::once(PathElement::new(ring_points, grid)))?;
        }
        for (i, (name, _)) in AXES.iter().enumerate() {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), point(i, 1.0)],
                grid,
            )))?;
            // Outside the ring, anchored away from it.
            let (x, y) = point(i, 1.06);
            let anchor = match i {
                0 => Pos::new(HPos::Center, VPos::Bottom),
                1 => Pos::new(HPos::Left, VPos::Center),
                2 => Pos::new(HPos::Center, VPos::Top),
                _ => Pos::new(HPos::Right, VPos::Center),
            };
            let style = TextStyle::from((FAMILY, 15).into_font()).pos(anchor);
            chart.draw_series(std::iter::once(Text::new(name.to_string(), (x, y), style)))?;
        }
        for (model, colour) in &models {
            let Some(cell) = report
                .cells
                .iter()
                .find(|c| &c.backend == model && &c.arch == arch)
            else {
                continue;
            };
            let colour = *colour;
            let mut shape: Vec<(f64, f64)> = AXES
                .iter()
                .enumerate()
                .map(|(i, (_, value))| point(i, value(cell)))
                .collect();
            shape.push(shape[0]);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    shape.clone(),
                    colour.stroke_width(2),
                )))?
                .label(model.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                shape
                    .into_iter()
                    .map(move |p| Circle::new(p, 3, colour.filled())),
            )?;
        }
        super::legend(&mut chart, SeriesLabelPosition::UpperRight, 12)?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::point;

    #[test]
    fn the_axes_run_clockwise_from_the_top() {
        let close =
            |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12;
        assert!(close(point(0, 1.0), (0.0, 1.0)));
        assert!(close(point(1, 0.5), (0.5, 0.0)));
        assert!(close(point(2, 1.0), (0.0, -1.0)));
        assert!(close(point(3, f64::NAN), (0.0, 0.0)));
    }
}
