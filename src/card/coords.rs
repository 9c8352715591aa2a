//! Which columns of a table hold coordinates or geometries, and what CRS
//! their values plausibly are. A CSV of points is the first thing many
//! analyses receive, and the first decision about it (which columns, which
//! CRS) is said on the card instead of guessed by the model.
//!
//! Names find the candidates (`lon`/`lat`, `x`/`y`, `easting`/`northing`,
//! `pickup_longitude`/`pickup_latitude` paired by the rest of the name);
//! values decide what they are: both within ±180/±90 → degrees, EPSG:4326
//! the likely CRS; otherwise projected units with the CRS not in the file
//! (a range that fits a UTM zone is said to). A layer whose file states no
//! CRS is judged the same way from its extent ([`missing_crs`]). Text
//! columns whose values are WKT, hex WKB or GeoJSON, and binary columns
//! holding WKB, are geometry.

/// What the card saw of one column: its name, the numeric range of the
/// values scanned, a few text values, and whether its binary values parse
/// as WKB.
#[derive(Debug, Clone, Default)]
pub struct ColumnSample {
    /// The column's name as the file spells it.
    pub name: String,
    /// Smallest and largest numeric value seen, when every value seen was a
    /// number.
    pub range: Option<(f64, f64)>,
    /// A few non-empty text values.
    pub texts: Vec<String>,
    /// Binary values that parse as WKB geometries.
    pub wkb: bool,
    /// `Some(n)` when only the first `n` rows were scanned (the range is
    /// theirs, not the file's).
    pub first_rows: Option<usize>,
}

/// Which axis a column name suggests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    Lon,
    Lat,
    X,
    Y,
}

/// The axis a column's name suggests and the name with that word removed
/// (so `pickup_longitude` pairs with `pickup_latitude`).
fn axis_of(name: &str) -> Option<(Axis, String)> {
    let lower = name.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        let axis = match *token {
            "lon" | "long" | "lng" | "longitude" | "longitud" => Axis::Lon,
            "lat" | "latitude" | "latitud" => Axis::Lat,
            "x" | "xcoord" | "easting" | "east" | "utmx" => Axis::X,
            "y" | "ycoord" | "northing" | "north" | "utmy" => Axis::Y,
            _ => continue,
        };
        let rest: Vec<&str> = tokens
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, t)| *t)
            .collect();
        return Some((axis, rest.join("_")));
    }
    None
}

/// Whether `text` is a WKT (or EWKT) geometry.
fn is_wkt(text: &str) -> bool {
    let upper = text.trim().to_ascii_uppercase();
    let upper = match upper.split_once(';') {
        Some((srid, rest)) if srid.starts_with("SRID=") => rest.trim().to_string(),
        _ => upper,
    };
    [
        "POINT",
        "LINESTRING",
        "POLYGON",
        "MULTIPOINT",
        "MULTILINESTRING",
        "MULTIPOLYGON",
        "GEOMETRYCOLLECTION",
    ]
    .iter()
    .any(|kind| {
        upper.starts_with(kind)
            && upper[kind.len()..]
                .trim_start()
                .starts_with(['(', 'Z', 'M', 'E'])
    })
}

/// The geometry kind word of a WKT value (`POINT`, `POLYGON`…).
fn wkt_kind(text: &str) -> String {
    let upper = text.trim().to_ascii_uppercase();
    let body = upper.split_once(';').map(|(_, b)| b).unwrap_or(&upper);
    body.split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
        .to_string()
}

/// Whether `text` is hex-encoded (E)WKB: byte order 00/01, then a geometry
/// type 1–7 (with or without EWKB flags).
fn is_hex_wkb(text: &str) -> bool {
    let t = text.trim();
    if t.len() < 18 || !t.len().is_multiple_of(2) || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    let code = |s: &str| matches!(s, "01" | "02" | "03" | "04" | "05" | "06" | "07");
    match &t[0..2] {
        "01" => code(&t[2..4]),
        "00" => code(&t[8..10]),
        _ => false,
    }
}

/// Whether `text` is a GeoJSON geometry object.
fn is_geojson(text: &str) -> bool {
    let t = text.trim();
    t.starts_with('{') && t.contains("\"type\"") && t.contains("\"coordinates\"")
}

/// A number for the card: short, without float noise.
fn short(x: f64) -> String {
    if x.abs() >= 1e7 {
        format!("{x:.3e}")
    } else if x.fract() == 0.0 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The card's lines about coordinate and geometry columns (empty when
/// none is found). `frame` is the variable name used in the read hints.
pub fn describe(columns: &[ColumnSample], frame: &str) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(coordinate_pairs(columns, frame));
    for column in columns {
        let texts: Vec<&String> = column.texts.iter().filter(|t| !t.is_empty()).collect();
        let name = &column.name;
        if column.wkb {
            lines.push(format!(
                "geometry: `{name}` holds WKB; CRS not in the file: gpd.GeoSeries.from_wkb({frame}['{name}'])"
            ));
        } else if !texts.is_empty() && texts.iter().all(|t| is_wkt(t)) {
            let mut kinds: Vec<String> = texts.iter().map(|t| wkt_kind(t)).collect();
            kinds.dedup();
            lines.push(format!(
                "geometry: `{name}` holds WKT ({}); CRS not in the file: gpd.GeoSeries.from_wkt({frame}['{name}'])",
                kinds.join(", ")
            ));
        } else if !texts.is_empty() && texts.iter().all(|t| is_hex_wkb(t)) {
            lines.push(format!(
                "geometry: `{name}` holds hex WKB; CRS not in the file: gpd.GeoSeries.from_wkb({frame}['{name}'])"
            ));
        } else if !texts.is_empty() && texts.iter().all(|t| is_geojson(t)) {
            lines.push(format!(
                "geometry: `{name}` holds GeoJSON geometries (EPSG:4326 by the GeoJSON standard): shapely.from_geojson({frame}['{name}'])"
            ));
        }
    }
    lines
}

/// Lines for the (x, y) column pairs found by name and judged by value.
fn coordinate_pairs(columns: &[ColumnSample], frame: &str) -> Vec<String> {
    let named: Vec<(Axis, String, &ColumnSample)> = columns
        .iter()
        .filter_map(|c| axis_of(&c.name).map(|(axis, rest)| (axis, rest, c)))
        .collect();
    let mut lines = Vec::new();
    let mut used: Vec<&str> = Vec::new();
    for (first, second) in [(Axis::Lon, Axis::Lat), (Axis::X, Axis::Y)] {
        let xs: Vec<&(Axis, String, &ColumnSample)> =
            named.iter().filter(|(a, ..)| *a == first).collect();
        let ys: Vec<&(Axis, String, &ColumnSample)> =
            named.iter().filter(|(a, ..)| *a == second).collect();
        for x in &xs {
            // Same rest of the name first; else the only candidate.
            let y = ys
                .iter()
                .find(|y| y.1 == x.1)
                .or_else(|| (xs.len() == 1 && ys.len() == 1).then(|| &ys[0]));
            let Some(y) = y else { continue };
            if used.contains(&x.2.name.as_str()) || used.contains(&y.2.name.as_str()) {
                continue;
            }
            if let Some(line) = judge_pair(x.2, y.2, first == Axis::Lon, frame) {
                used.push(&x.2.name);
                used.push(&y.2.name);
                lines.push(line);
            }
        }
    }
    lines
}

/// What the values of an (x, y) pair say about their CRS.
fn judge_pair(
    x: &ColumnSample,
    y: &ColumnSample,
    named_lonlat: bool,
    frame: &str,
) -> Option<String> {
    let ((x0, x1), (y0, y1)) = (x.range?, y.range?);
    let (xn, yn) = (&x.name, &y.name);
    let mut span = span_text(xn, yn, (x0, x1), (y0, y1));
    if let Some(n) = x.first_rows.or(y.first_rows) {
        span.push_str(&format!(" in the first {n} rows"));
    }
    let points = |crs: &str| format!("gpd.points_from_xy({frame}['{xn}'], {frame}['{yn}']{crs})");
    let unit = unit_of((x0, x1), (y0, y1));
    if unit == Unit::Degrees {
        let how = if named_lonlat {
            "longitude/latitude in degrees"
        } else {
            "values that fit longitude/latitude in degrees"
        };
        return Some(format!(
            "coordinates: `{xn}`, `{yn}` — {how} ({span}): EPSG:4326 is the likely CRS; points: {}",
            points(", crs='EPSG:4326'")
        ));
    }
    if named_lonlat && fits((x0, x1), 90.0) && fits((y0, y1), 180.0) {
        return Some(format!(
            "coordinates: `{xn}`, `{yn}` — degrees, but `{yn}` exceeds ±90: the two columns look swapped ({span}); points: gpd.points_from_xy({frame}['{yn}'], {frame}['{xn}'], crs='EPSG:4326')"
        ));
    }
    Some(format!(
        "coordinates: `{xn}`, `{yn}` — projected units, not degrees ({span}); the CRS is not in the file{}: take it from the task or metadata, then {}",
        unit.zone_hint(),
        points(", crs=…")
    ))
}

/// `x 1…2, y 3…4`: a pair's ranges as a note writes them.
fn span_text(xn: &str, yn: &str, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> String {
    format!(
        "{xn} {}…{}, {yn} {}…{}",
        short(x0),
        short(x1),
        short(y0),
        short(y1)
    )
}

/// A coordinates `note` on `xn`, `yn` with its ranges replaced by `x` and
/// `y`, read over every row (the note's own may be the first rows').
pub(super) fn with_span(note: &str, xn: &str, yn: &str, x: (f64, f64), y: (f64, f64)) -> String {
    let open = format!("({xn} ");
    let Some(start) = note.find(&open) else {
        return note.to_string();
    };
    // The span ends at the first `)` after the y column's name (a name
    // may hold a parenthesis itself).
    let Some(y_at) = note[start..].find(&format!(", {yn} ")) else {
        return note.to_string();
    };
    let after_y = start + y_at + yn.len() + 3;
    let Some(close) = note[after_y..].find(')') else {
        return note.to_string();
    };
    let len = after_y + close - start;
    format!(
        "{}({}){}",
        &note[..start],
        span_text(xn, yn, x, y),
        &note[start + len + 1..]
    )
}

/// Whether a range lies within ±`limit`.
fn fits((lo, hi): (f64, f64), limit: f64) -> bool {
    lo >= -limit && hi <= limit
}

/// What the ranges of x and y say about their unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// Both within ±180/±90.
    Degrees,
    /// Anything else; `utm` when the range fits a UTM zone's eastings and
    /// northings.
    Projected { utm: bool },
}

impl Unit {
    /// The words that say a UTM zone fits, or nothing.
    fn zone_hint(self) -> &'static str {
        match self {
            Unit::Projected { utm: true } => {
                "; the range fits a UTM zone (EPSG:326xx/327xx) but the zone is not in the file"
            }
            _ => "",
        }
    }
}

fn unit_of(x: (f64, f64), y: (f64, f64)) -> Unit {
    if fits(x, 180.0) && fits(y, 90.0) {
        return Unit::Degrees;
    }
    Unit::Projected {
        utm: x.0 >= 100_000.0 && x.1 <= 900_000.0 && y.0 >= 0.0 && y.1 <= 10_000_000.0,
    }
}

/// What a file without a CRS holds: how the CRS is then set differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A vector layer (`gdf.set_crs`).
    Layer,
    /// A raster (the CRS goes where it is warped or written).
    Raster,
}

impl Holder {
    /// The call that gives the data the CRS `crs` (a Python literal or `…`).
    fn set(self, crs: &str) -> String {
        match self {
            Holder::Layer => format!("gdf = gdf.set_crs({crs})"),
            Holder::Raster => format!(
                "pass crs={crs} as the source CRS where it is warped, and in the profile where it is written"
            ),
        }
    }
}

/// The card's line for a layer or raster whose file states no CRS, from
/// its extent (`x` and `y` ranges): projected units when they cannot be
/// degrees, else units unknown (small numbers are not evidence of
/// degrees); either way the CRS to take from the task, with the call that
/// sets it.
pub fn missing_crs(x: (f64, f64), y: (f64, f64), holder: Holder) -> String {
    let span = format!(
        "x {}…{}, y {}…{}",
        short(x.0),
        short(x.1),
        short(y.0),
        short(y.1)
    );
    match unit_of(x, y) {
        // Numbers within ±180/±90 are not evidence of degrees by
        // themselves (columbus.shp: x 5.9…11.3, y 10.8…14.7, in no unit
        // known); with nothing else in the file to say so, the unit is
        // unknown.
        Unit::Degrees => format!(
            "CRS: none in the file, units unknown; the coordinates ({span}) are small enough to be degrees, but nothing in the file says they are: take the CRS from the task or metadata and set it ({}) before any reprojection, distance or area",
            holder.set("…")
        ),
        unit => format!(
            "CRS: none in the file; the coordinates ({span}) are projected units, not degrees{}: take the CRS from the task or metadata and set it ({}) before any reprojection, distance or area",
            unit.zone_hint(),
            holder.set("…")
        ),
    }
}

#[cfg(test)]
mod span_tests {
    use super::with_span;

    #[test]
    fn a_span_is_replaced_whole_even_with_parentheses_in_the_names() {
        let note = "coordinates: `Lon (deg)`, `Lat (deg)` — longitude/latitude in degrees (Lon (deg) 1…2, Lat (deg) 3…4 in the first 10 rows): EPSG:4326";
        assert_eq!(
            with_span(note, "Lon (deg)", "Lat (deg)", (0.5, 2.5), (3.0, 4.5)),
            "coordinates: `Lon (deg)`, `Lat (deg)` — longitude/latitude in degrees (Lon (deg) 0.5…2.5, Lat (deg) 3…4.5): EPSG:4326"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(name: &str, lo: f64, hi: f64) -> ColumnSample {
        ColumnSample {
            name: name.into(),
            range: Some((lo, hi)),
            ..Default::default()
        }
    }

    fn text(name: &str, values: &[&str]) -> ColumnSample {
        ColumnSample {
            name: name.into(),
            texts: values.iter().map(|v| v.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn degrees_projected_swapped_and_paired_columns() {
        let lines = describe(
            &[numeric("Lon", -9.1, 23.7), numeric("Lat", 36.0, 59.9)],
            "df",
        );
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("`Lon`, `Lat` — longitude/latitude in degrees"),
            "{lines:?}"
        );
        assert!(
            lines[0].contains("EPSG:4326 is the likely CRS"),
            "{lines:?}"
        );

        let utm = describe(
            &[
                numeric("easting", 401_234.0, 612_345.0),
                numeric("northing", 5.6e6, 5.9e6),
            ],
            "df",
        );
        assert!(
            utm[0].contains("projected units") && utm[0].contains("UTM zone"),
            "{utm:?}"
        );

        let swapped = describe(
            &[numeric("lon", 36.0, 59.9), numeric("lat", -9.1, 123.7)],
            "df",
        );
        assert!(swapped[0].contains("look swapped"), "{swapped:?}");

        let trips = describe(
            &[
                numeric("pickup_longitude", -74.1, -73.7),
                numeric("pickup_latitude", 40.5, 40.9),
                numeric("dropoff_longitude", -74.2, -73.6),
                numeric("dropoff_latitude", 40.4, 41.0),
                numeric("fare", 2.5, 80.0),
            ],
            "df",
        );
        assert_eq!(trips.len(), 2, "{trips:?}");
        assert!(
            trips[1].contains("`dropoff_longitude`, `dropoff_latitude`"),
            "{trips:?}"
        );
    }

    #[test]
    fn a_layer_without_a_crs_is_judged_from_its_extent() {
        // Small numbers alone are no evidence of degrees: no CRS is guessed.
        let degrees = missing_crs((-9.1, 23.7), (36.0, 59.9), Holder::Layer);
        assert!(
            degrees.contains("units unknown; the coordinates (x -9.1…23.7, y 36…59.9) are small enough to be degrees, but nothing in the file says they are"),
            "{degrees}"
        );
        assert!(!degrees.contains("EPSG:4326"), "{degrees}");
        let utm = missing_crs(
            (401_234.5, 455_000.0),
            (5_600_100.0, 5_650_000.5),
            Holder::Raster,
        );
        assert!(
            utm.contains("projected units, not degrees; the range fits a UTM zone"),
            "{utm}"
        );
        // State-plane feet: projected, and no UTM zone claimed.
        let feet = missing_crs(
            (1_950_000.0, 2_010_000.0),
            (560_000.0, 610_000.0),
            Holder::Layer,
        );
        assert!(
            feet.contains("projected units, not degrees: take the CRS"),
            "{feet}"
        );
    }

    #[test]
    fn geometry_text_columns_are_recognised_and_plain_ones_are_not() {
        let lines = describe(
            &[
                text("wkt", &["POINT (1 2)", "POLYGON ((0 0, 1 0, 1 1, 0 0))"]),
                text("geom", &["0101000000000000000000F03F0000000000000040"]),
                text("shape", &[r#"{"type": "Point", "coordinates": [1, 2]}"#]),
                text("name", &["Point Reyes", "Polygon Park"]),
                text("code", &["0101", "ABCD"]),
            ],
            "df",
        );
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[0].contains("`wkt` holds WKT (POINT, POLYGON)"),
            "{lines:?}"
        );
        assert!(lines[1].contains("`geom` holds hex WKB"), "{lines:?}");
        assert!(lines[2].contains("`shape` holds GeoJSON"), "{lines:?}");
    }

    #[test]
    fn unrelated_numbers_and_lone_axes_say_nothing() {
        assert!(describe(&[numeric("pop", 1.0, 9.0), numeric("rate", 0.0, 1.0)], "df").is_empty());
        assert!(describe(&[numeric("x", 1.0, 9.0)], "df").is_empty());
        // A name without numbers (text) is not judged.
        assert!(describe(&[text("lon", &["east"]), text("lat", &["north"])], "df").is_empty());
    }
}
