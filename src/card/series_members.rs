//! What the members of a file series share and where they differ, read
//! from each file's header alone: a raster's size, bands, data type, CRS,
//! pixel size and nodata (and the extent they cover together); a layer's
//! geometry type, CRS and fields; a table's columns. Tiles in two UTM
//! zones, a month written with another nodata or a station file with an
//! extra column are the traps a model meets only after merging the series.

use std::collections::BTreeMap;
use std::path::Path;

use gdal::vector::LayerAccess;
use gdal::{Dataset, GdalOpenFlags};

use super::facts::fmt_num;
use super::{csv_text, parquet, Kind};
use crate::gdal_io::{crs_text, gdal_reason, open_beside};

/// Most members opened with GDAL (evenly spread, the first and last among
/// them): ~0.3 ms each for a small GeoTIFF here.
const COMPARED: usize = 200;

/// Most members compared by their header line or Parquet footer alone.
const HEADERS_COMPARED: usize = 2_000;

/// Longest value shown, in characters.
const VALUE_CHARS: usize = 100;

/// Values of one property shown at most where members differ.
const SHOWN_VALUES: usize = 3;

/// One member as read: its properties in a fixed order, and a raster's
/// bounds (`[min x, min y, max x, max y]`).
struct Member {
    facts: Vec<(&'static str, String)>,
    bounds: Option<[f64; 4]>,
}

/// The members at which a series of `count` files is compared: all of
/// them up to `cap`, else that many spread evenly from the first to the
/// last.
fn chosen(count: usize, cap: usize) -> Vec<usize> {
    if count <= cap {
        return (0..count).collect();
    }
    let mut picks: Vec<usize> = (0..cap).map(|i| i * (count - 1) / (cap - 1)).collect();
    picks.dedup();
    picks
}

/// The card's lines on what the `members` (paths relative to `dir`, shown
/// under `shown_as`) of kind `kind` share and where they differ; their
/// sidecars by member, passed to GDAL so that it does not list the folder
/// on every open. Empty for kinds not compared.
pub(super) fn lines(
    dir: &Path,
    shown_as: &str,
    members: &[String],
    kind: Kind,
    sidecars: &BTreeMap<String, Vec<String>>,
) -> String {
    if !matches!(
        kind,
        Kind::Raster | Kind::Vector | Kind::Table | Kind::Parquet
    ) {
        return String::new();
    }
    let headers_only =
        kind == Kind::Parquet || (kind == Kind::Table && is_delimited(&dir.join(&members[0])));
    let picks = chosen(
        members.len(),
        if headers_only {
            HEADERS_COMPARED
        } else {
            COMPARED
        },
    );
    let mut read: Vec<(&String, Member)> = Vec::new();
    let mut unreadable: Vec<(&String, String)> = Vec::new();
    for &i in &picks {
        let rel = &members[i];
        let siblings: Vec<&str> = sidecars
            .get(rel)
            .map(|parts| parts.iter().map(|p| super::file_name(p)).collect())
            .unwrap_or_default();
        match member(&dir.join(rel), kind, &siblings) {
            Ok(m) => read.push((rel, m)),
            Err(reason) => unreadable.push((rel, reason)),
        }
    }
    let mut text = String::new();
    let whom = match (read.len() == members.len(), picks.len() == members.len()) {
        (true, _) => format!("all {}", members.len()),
        (false, true) => format!("the {} read of the {}", read.len(), members.len()),
        (false, false) => format!(
            "the {} read of {} opened (spread evenly over the {})",
            read.len(),
            picks.len(),
            members.len()
        ),
    };
    let Some((_, first)) = read.first() else {
        return unreadable_line(shown_as, &unreadable, picks.len());
    };
    let mut alike = Vec::new();
    let mut differs = Vec::new();
    for (label, _) in &first.facts {
        // Each value, the members holding it, the first of them.
        let mut values: Vec<(&str, usize, &String)> = Vec::new();
        for (rel, m) in &read {
            let value = m
                .facts
                .iter()
                .find(|f| f.0 == *label)
                .map_or("none", |f| f.1.as_str());
            match values.iter_mut().find(|v| v.0 == value) {
                Some(v) => v.1 += 1,
                None => values.push((value, 1, rel)),
            }
        }
        if values.len() == 1 {
            alike.push(values[0].0.to_string());
            continue;
        }
        values.sort_by_key(|v| std::cmp::Reverse(v.1));
        let mut shown: Vec<String> = values
            .iter()
            .take(SHOWN_VALUES)
            .map(|(value, n, rel)| {
                let bare = value.strip_prefix(label).map_or(*value, str::trim_start);
                format!("{bare} in {n} (first {shown_as}{rel})")
            })
            .collect();
        if values.len() > SHOWN_VALUES {
            shown.push(format!("{} other values", values.len() - SHOWN_VALUES));
        }
        differs.push(format!("  differs in {label}: {}\n", shown.join("; ")));
    }
    if !alike.is_empty() {
        text.push_str(&format!("  alike in {whom}: {}", alike.join(", ")));
        let same_crs = !differs.iter().any(|d| d.starts_with("  differs in CRS"));
        let bounds: Option<Vec<[f64; 4]>> = read.iter().map(|(_, m)| m.bounds).collect();
        if let (true, Some(bounds)) = (same_crs, bounds) {
            let union = bounds.iter().fold(
                [
                    f64::INFINITY,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NEG_INFINITY,
                ],
                |u, b| {
                    [
                        u[0].min(b[0]),
                        u[1].min(b[1]),
                        u[2].max(b[2]),
                        u[3].max(b[3]),
                    ]
                },
            );
            text.push_str(&format!(
                "; together x {}…{}, y {}…{}",
                fmt_num(union[0]),
                fmt_num(union[2]),
                fmt_num(union[1]),
                fmt_num(union[3])
            ));
        }
        text.push('\n');
    }
    for line in differs {
        text.push_str(&line);
    }
    text.push_str(&unreadable_line(shown_as, &unreadable, picks.len()));
    text
}

/// The line on members that could not be read, if any.
fn unreadable_line(shown_as: &str, unreadable: &[(&String, String)], opened: usize) -> String {
    match unreadable.first() {
        None => String::new(),
        Some((rel, reason)) => format!(
            "  unreadable: {} of the {opened} opened (first {shown_as}{rel}: {reason})\n",
            unreadable.len()
        ),
    }
}

/// One member's properties, read from its header.
fn member(path: &Path, kind: Kind, siblings: &[&str]) -> Result<Member, String> {
    match kind {
        Kind::Raster => raster(&open(path, GdalOpenFlags::GDAL_OF_RASTER, siblings)?),
        Kind::Parquet => Ok(Member {
            facts: vec![(
                "columns",
                columns_text(parquet::column_names(path).map_err(|e| e.to_string())?),
            )],
            bounds: None,
        }),
        Kind::Table if is_delimited(path) => Ok(Member {
            facts: vec![("columns", columns_text(header(path)?))],
            bounds: None,
        }),
        _ => vector(&open(path, GdalOpenFlags::GDAL_OF_VECTOR, siblings)?),
    }
}

/// Opens `path` read-only with the names of its sidecars (GDAL's reason
/// on failure).
fn open(path: &Path, flags: GdalOpenFlags, siblings: &[&str]) -> Result<Dataset, String> {
    open_beside(path, flags, siblings).map_err(|e| gdal_reason(&e))
}

fn raster(ds: &Dataset) -> Result<Member, String> {
    let (w, h) = ds.raster_size();
    let bands = ds.raster_count();
    let types: Vec<String> = (1..=bands)
        .filter_map(|i| ds.rasterband(i).ok())
        .map(|b| b.band_type().name())
        .fold(Vec::new(), |mut types, t| {
            if !types.contains(&t) {
                types.push(t);
            }
            types
        });
    let nodata = ds
        .rasterband(1)
        .ok()
        .and_then(|b| b.no_data_value())
        .map_or("no nodata".to_string(), |nd| {
            format!("nodata {}", fmt_num(nd))
        });
    let transform = ds.geo_transform().ok();
    let pixel = transform.map_or("no geotransform".to_string(), |gt| {
        format!("pixel {}×{}", fmt_num(gt[1]), fmt_num(gt[5].abs()))
    });
    let bounds = transform.map(|gt| {
        let xs = [
            gt[0],
            gt[0] + w as f64 * gt[1],
            gt[0] + h as f64 * gt[2],
            gt[0] + w as f64 * gt[1] + h as f64 * gt[2],
        ];
        let ys = [
            gt[3],
            gt[3] + w as f64 * gt[4],
            gt[3] + h as f64 * gt[5],
            gt[3] + w as f64 * gt[4] + h as f64 * gt[5],
        ];
        let low = |v: [f64; 4]| v.into_iter().fold(f64::INFINITY, f64::min);
        let high = |v: [f64; 4]| v.into_iter().fold(f64::NEG_INFINITY, f64::max);
        [low(xs), low(ys), high(xs), high(ys)]
    });
    Ok(Member {
        facts: vec![
            ("size", format!("{w}×{h} px")),
            ("bands", format!("{bands} band(s)")),
            ("data type", types.join("/")),
            ("CRS", crs_text(ds.spatial_ref().ok())),
            ("pixel", pixel),
            ("nodata", nodata),
        ],
        bounds,
    })
}

fn vector(ds: &Dataset) -> Result<Member, String> {
    let mut layer = ds.layers().next().ok_or("no layer")?;
    let declared = layer.defn().geom_fields().next().map(|g| g.field_type());
    let geometry = declared.map_or("no geometry".to_string(), |ty| {
        super::geometry_names::layer_geometry(&mut layer, ty).text
    });
    layer.reset_feature_reading();
    let fields: Vec<String> = layer.defn().fields().map(|f| f.name()).collect();
    let mut facts = vec![
        ("layers", format!("{} layer(s)", ds.layer_count())),
        ("geometry", geometry),
        ("CRS", crs_text(layer.spatial_ref())),
        ("columns", columns_text(fields)),
    ];
    if facts[1].1 == "no geometry" {
        // A table read through GDAL (a workbook): its columns are the point.
        facts.drain(1..3);
    }
    Ok(Member {
        facts,
        bounds: None,
    })
}

/// Whether `path` is a delimited text table (its header read directly).
fn is_delimited(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv") || e.eq_ignore_ascii_case("tsv"))
}

/// The column names of a delimited text file's header line (below any
/// preamble).
fn header(path: &Path) -> Result<Vec<String>, String> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64 << 10);
    std::fs::File::open(path)
        .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
        .map_err(|e| e.to_string())?;
    let skip = super::preamble::of(&head).map_or(0, |p| p.bytes);
    let text = String::from_utf8_lossy(&head[skip..]);
    let text = text.trim_start_matches('\u{feff}');
    let line = text.lines().next().unwrap_or("");
    let delimiter = csv_text::delimiter(line).unwrap_or(',');
    Ok(csv_text::records(line, delimiter)
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// `columns a, b, c`, clipped.
fn columns_text(names: Vec<String>) -> String {
    crate::util::clip(&format!("columns {}", names.join(", ")), VALUE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_series_is_compared_at_evenly_spread_members_including_its_ends() {
        assert_eq!(chosen(3, COMPARED), vec![0, 1, 2]);
        let picks = chosen(2000, COMPARED);
        assert_eq!(picks.len(), COMPARED);
        assert_eq!((picks[0], picks[COMPARED - 1]), (0, 1999));
        assert!(picks.windows(2).all(|w| w[0] < w[1]));
    }
}
