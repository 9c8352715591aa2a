//! GeoJSEval's type-aware judge (its Eq. 7 and Table 4): a type check
//! first (§3.2.2: a result of the wrong type is an output-type error and
//! is not compared), then by the mapped representation — numbers within a
//! tolerance, strings and booleans exactly, arrays element by element (or
//! as sets when a task says so), GeoJSON compared as geometry with a
//! tolerance (rings from any vertex and in either direction, parts of
//! multi-geometries in any order, features by geometry and properties),
//! nested JSON by its key set and values, and maps, layers and sources
//! only through their eval methods' values (Table 1).
//!
//! Pure Rust on plain JSON: the worker's answer is never given to GDAL.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::js::Indirect;

/// Why an answer does not pass.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsMismatch {
    /// A result of the wrong type (the paper's output-type error).
    #[error("output type: {0}")]
    Type(String),
    /// A result of the right type with the wrong value.
    #[error("answer: {0}")]
    Value(String),
}

/// GeoJSEval's 25 output types (Table 3).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum JsOutputType {
    /// An ordered list.
    Array,
    /// True or false.
    Boolean,
    /// Text.
    String,
    /// A number.
    Number,
    /// A GeoJSON geometry.
    Geometry,
    /// A GeoJSON GeometryCollection.
    GeometryCollection,
    /// A GeoJSON Feature.
    Feature,
    /// A GeoJSON FeatureCollection.
    FeatureCollection,
    /// Geolib coordinates.
    #[serde(rename = "geolib.coordinates")]
    GeolibCoordinates,
    /// A coordinate with its distance.
    #[serde(rename = "geolib.distanceCoordinate")]
    GeolibDistanceCoordinate,
    /// A geographic bounding box.
    #[serde(rename = "geolib.bounds")]
    GeolibBounds,
    /// A centre.
    #[serde(rename = "geolib.center")]
    GeolibCenter,
    /// `L.Map`, judged through eval methods.
    #[serde(rename = "leaflet.Map")]
    LeafletMap,
    /// `L.Layer`, judged through eval methods.
    #[serde(rename = "leaflet.Layer")]
    LeafletLayer,
    /// `L.LatLng`.
    #[serde(rename = "leaflet.LatLng")]
    LeafletLatLng,
    /// `L.LatLngBounds`.
    #[serde(rename = "leaflet.LatLngBounds")]
    LeafletLatLngBounds,
    /// `L.Point`.
    #[serde(rename = "leaflet.Point")]
    LeafletPoint,
    /// `L.Bounds`.
    #[serde(rename = "leaflet.Bounds")]
    LeafletBounds,
    /// `ol.Map`, judged through eval methods.
    #[serde(rename = "ol.Map")]
    OlMap,
    /// `ol.View`, judged through eval methods.
    #[serde(rename = "ol.View")]
    OlView,
    /// An OpenLayers layer, judged through eval methods.
    #[serde(rename = "ol.Layer")]
    OlLayer,
    /// An OpenLayers source, judged through eval methods.
    #[serde(rename = "ol.Source")]
    OlSource,
    /// `[x, y]`.
    #[serde(rename = "ol.Coordinate")]
    OlCoordinate,
    /// `[minX, minY, maxX, maxY]`.
    #[serde(rename = "ol.Extent")]
    OlExtent,
    /// `[width, height]`.
    #[serde(rename = "ol.Size")]
    OlSize,
}

impl JsOutputType {
    /// Every type, in Table 3's order.
    pub const ALL: [JsOutputType; 25] = [
        JsOutputType::Array,
        JsOutputType::Boolean,
        JsOutputType::String,
        JsOutputType::Number,
        JsOutputType::Geometry,
        JsOutputType::GeometryCollection,
        JsOutputType::Feature,
        JsOutputType::FeatureCollection,
        JsOutputType::GeolibCoordinates,
        JsOutputType::GeolibDistanceCoordinate,
        JsOutputType::GeolibBounds,
        JsOutputType::GeolibCenter,
        JsOutputType::LeafletMap,
        JsOutputType::LeafletLayer,
        JsOutputType::LeafletLatLng,
        JsOutputType::LeafletLatLngBounds,
        JsOutputType::LeafletPoint,
        JsOutputType::LeafletBounds,
        JsOutputType::OlMap,
        JsOutputType::OlView,
        JsOutputType::OlLayer,
        JsOutputType::OlSource,
        JsOutputType::OlCoordinate,
        JsOutputType::OlExtent,
        JsOutputType::OlSize,
    ];

    /// Its name as the paper writes it (`leaflet.LatLng`).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// Whether it is judged only through eval methods (Table 1's complex
    /// objects).
    pub fn indirect(self) -> bool {
        matches!(
            self,
            JsOutputType::LeafletMap
                | JsOutputType::LeafletLayer
                | JsOutputType::OlMap
                | JsOutputType::OlView
                | JsOutputType::OlLayer
                | JsOutputType::OlSource
        )
    }
}

/// Tolerances of a task's comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct JsTolerance {
    /// Relative tolerance of numbers and coordinates.
    pub rel: f64,
    /// Absolute tolerance of numbers and coordinates.
    pub abs: f64,
    /// The top-level array compares as a set (the paper's EqualSet), not
    /// in order.
    pub unordered: bool,
    /// Lines and rings compare in their direction (a task about winding
    /// or line direction); otherwise either direction is the same
    /// geometry.
    pub oriented: bool,
}

impl Default for JsTolerance {
    fn default() -> Self {
        JsTolerance {
            rel: 1e-9,
            abs: 1e-9,
            unordered: false,
            oriented: false,
        }
    }
}

/// An answer as recorded (`expected_answer`) or as a solution gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The result's type tag.
    pub kind: String,
    /// The result as JSON.
    pub value: Value,
    /// The eval methods' values, for indirect evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indirect: Option<Vec<Indirect>>,
}

const GEOMETRY_TYPES: [&str; 7] = [
    "Point",
    "MultiPoint",
    "LineString",
    "MultiLineString",
    "Polygon",
    "MultiPolygon",
    "GeometryCollection",
];

fn geojson_type(value: &Value) -> Option<&str> {
    value.get("type").and_then(Value::as_str)
}

fn numbers(value: &Value, n: Option<usize>) -> bool {
    value
        .as_array()
        .is_some_and(|a| n.is_none_or(|n| a.len() == n) && a.iter().all(|x| x.is_number()))
}

/// Whether a result fits `output_type` (its tag and shape).
pub fn fits(output_type: JsOutputType, got: &Recorded) -> Result<(), JsMismatch> {
    use JsOutputType as T;
    let kind = got.kind.as_str();
    let value = &got.value;
    let object = matches!(
        kind,
        "Object" | "jsts.Geometry" | "ol.Geometry" | "ol.Feature"
    );
    let ok = match output_type {
        T::Number => kind == "Number",
        T::Boolean => kind == "Boolean",
        T::String => kind == "String",
        T::Array => kind == "Array",
        T::Geometry => object && geojson_type(value).is_some_and(|t| GEOMETRY_TYPES.contains(&t)),
        T::GeometryCollection => object && geojson_type(value) == Some("GeometryCollection"),
        T::Feature => object && geojson_type(value) == Some("Feature"),
        T::FeatureCollection => object && geojson_type(value) == Some("FeatureCollection"),
        T::GeolibCoordinates | T::GeolibDistanceCoordinate | T::GeolibBounds => {
            matches!(kind, "Object" | "Array")
        }
        T::GeolibCenter => kind == "Object",
        T::OlCoordinate => kind == "Array" && (numbers(value, Some(2)) || numbers(value, Some(3))),
        T::OlExtent => kind == "Array" && numbers(value, Some(4)),
        T::OlSize => kind == "Array" && numbers(value, Some(2)),
        indirect_or_class => kind == indirect_or_class.name(),
    };
    if ok {
        Ok(())
    } else {
        Err(JsMismatch::Type(format!(
            "{} expected, {} returned",
            output_type.name(),
            describe(got)
        )))
    }
}

fn describe(got: &Recorded) -> String {
    match geojson_type(&got.value) {
        Some(t) if got.kind == "Object" => format!("an object of type {t}"),
        _ => got.kind.clone(),
    }
}

/// Judges `got` against the recorded answer `want` of `task`.
pub fn judge(
    output: JsOutputType,
    tol: &JsTolerance,
    want: &Recorded,
    got: &Recorded,
) -> Result<(), JsMismatch> {
    judge_as(output, tol, want, got, true)
}

/// Judges a second route's answer: a map, layer or source may be stood
/// for by a plain object with the same eval methods, so only their values
/// are compared.
pub fn judge_route(
    output: JsOutputType,
    tol: &JsTolerance,
    want: &Recorded,
    got: &Recorded,
) -> Result<(), JsMismatch> {
    judge_as(output, tol, want, got, !output.indirect())
}

fn judge_as(
    output: JsOutputType,
    tol: &JsTolerance,
    want: &Recorded,
    got: &Recorded,
    typed: bool,
) -> Result<(), JsMismatch> {
    // The type first: when the reference's own answer has the declared
    // type, so must the solution's; an edge test whose documented answer
    // is of another type (null, false) needs that very type.
    if typed {
        if fits(output, want).is_ok() {
            fits(output, got)?;
        } else if want.kind != got.kind {
            return Err(JsMismatch::Type(format!(
                "{} expected (the documented answer for this input), {} returned",
                want.kind,
                describe(got)
            )));
        }
    }
    if output.indirect() && fits(output, want).is_ok() {
        let (Some(want_all), Some(got_all)) = (&want.indirect, &got.indirect) else {
            return Err(JsMismatch::Value("no eval-method values to compare".into()));
        };
        for (w, g) in want_all.iter().zip(got_all) {
            same(&w.value, &g.value, tol, output)
                .map_err(|why| JsMismatch::Value(format!("{}: {why}", w.method)))?;
        }
        if want_all.len() != got_all.len() {
            return Err(JsMismatch::Value(
                "a different number of eval methods answered".into(),
            ));
        }
        return Ok(());
    }
    same(&want.value, &got.value, tol, output).map_err(JsMismatch::Value)
}

/// Compares by the mapped representation.
fn same(want: &Value, got: &Value, tol: &JsTolerance, output: JsOutputType) -> Result<(), String> {
    let geojson = matches!(
        output,
        JsOutputType::Geometry
            | JsOutputType::GeometryCollection
            | JsOutputType::Feature
            | JsOutputType::FeatureCollection
    );
    if geojson && geojson_type(want).is_some() {
        return geojson_match(want, got, tol);
    }
    structure(want, got, tol, "")
}

fn close(a: f64, b: f64, tol: &JsTolerance) -> bool {
    a == b || (a - b).abs() <= tol.abs.max(tol.rel * a.abs().max(b.abs()))
}

/// Nested JSON: same keys, values equal (numbers within the tolerance;
/// GeoJSON inside compared as geometry).
fn structure(want: &Value, got: &Value, tol: &JsTolerance, at: &str) -> Result<(), String> {
    let here = if at.is_empty() { "the value" } else { at };
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            if close(a, b, tol) {
                Ok(())
            } else {
                Err(format!("{here}: {b} where {a} was expected"))
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "{here}: {} items where {} were expected",
                    b.len(),
                    a.len()
                ));
            }
            if tol.unordered && at.is_empty() {
                // A set of items (the paper's EqualSet), each item itself
                // compared in order: a [lng, lat] pair is not a set.
                let inner = JsTolerance {
                    unordered: false,
                    ..*tol
                };
                let mut left: Vec<&Value> = b.iter().collect();
                for (i, w) in a.iter().enumerate() {
                    let Some(pos) = left
                        .iter()
                        .position(|g| structure(w, g, &inner, "[]").is_ok())
                    else {
                        return Err(format!("{here}[{i}]: no item matches {}", clip(w)));
                    };
                    left.remove(pos);
                }
                return Ok(());
            }
            a.iter()
                .zip(b)
                .enumerate()
                .try_for_each(|(i, (w, g))| structure(w, g, tol, &format!("{at}[{i}]")))
        }
        (Value::Object(a), Value::Object(b)) => {
            if geojson_type(want).is_some_and(|t| {
                t == "Feature" || t == "FeatureCollection" || GEOMETRY_TYPES.contains(&t)
            }) && (want.get("coordinates").is_some()
                || want.get("geometry").is_some()
                || want.get("features").is_some()
                || want.get("geometries").is_some())
            {
                return geojson_match(want, got, tol).map_err(|why| format!("{here}: {why}"));
            }
            keys_match(a, b, here)?;
            a.iter()
                .try_for_each(|(k, w)| structure(w, &b[k], tol, &format!("{at}.{k}")))
        }
        _ if want == got => Ok(()),
        _ => Err(format!(
            "{here}: {} where {} was expected",
            clip(got),
            clip(want)
        )),
    }
}

fn keys_match(a: &Map<String, Value>, b: &Map<String, Value>, here: &str) -> Result<(), String> {
    let missing: Vec<&String> = a.keys().filter(|k| !b.contains_key(*k)).collect();
    let extra: Vec<&String> = b.keys().filter(|k| !a.contains_key(*k)).collect();
    if missing.is_empty() && extra.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{here}: keys missing {missing:?}, unexpected {extra:?}"
        ))
    }
}

fn clip(v: &Value) -> String {
    crate::util::clip(&v.to_string(), 120)
}

/// GeoJSON as geometry: the same type; features by geometry, properties
/// and id; collections item by item; geometries by their coordinates up
/// to ring start, direction and part order.
fn geojson_match(want: &Value, got: &Value, tol: &JsTolerance) -> Result<(), String> {
    let (wt, gt) = (geojson_type(want), geojson_type(got));
    if wt != gt {
        return Err(format!(
            "a {} where a {} was expected",
            gt.unwrap_or("non-GeoJSON value"),
            wt.unwrap_or("?")
        ));
    }
    match wt.unwrap_or("") {
        "Feature" => {
            geometry_or_null(&want["geometry"], &got["geometry"], tol)
                .map_err(|w| format!("geometry: {w}"))?;
            let props = |v: &Value| match v.get("properties") {
                Some(Value::Object(o)) => Value::Object(o.clone()),
                _ => Value::Object(Map::new()),
            };
            structure(&props(want), &props(got), tol, "properties")?;
            match want.get("id") {
                Some(id) if got.get("id") != Some(id) => {
                    Err(format!("id {:?} where {id} was expected", got.get("id")))
                }
                _ => Ok(()),
            }
        }
        "FeatureCollection" => items(want, got, "features", tol),
        "GeometryCollection" => items(want, got, "geometries", tol),
        _ => geometry(want, got, tol),
    }
}

fn items(want: &Value, got: &Value, key: &str, tol: &JsTolerance) -> Result<(), String> {
    let empty = Vec::new();
    let a = want[key].as_array().unwrap_or(&empty);
    let b = got[key].as_array().unwrap_or(&empty);
    if a.len() != b.len() {
        return Err(format!("{} {key} where {} were expected", b.len(), a.len()));
    }
    a.iter().zip(b).enumerate().try_for_each(|(i, (w, g))| {
        geojson_match(w, g, tol).map_err(|why| format!("{key}[{i}]: {why}"))
    })
}

fn geometry_or_null(want: &Value, got: &Value, tol: &JsTolerance) -> Result<(), String> {
    match (want, got) {
        (Value::Null, Value::Null) => Ok(()),
        (Value::Null, _) | (_, Value::Null) => {
            Err(format!("{} where {} was expected", clip(got), clip(want)))
        }
        _ => geojson_match(want, got, tol),
    }
}

type Ring = Vec<Vec<f64>>;

fn positions(v: &Value) -> Option<Ring> {
    v.as_array()?
        .iter()
        .map(|p| {
            p.as_array()?
                .iter()
                .map(Value::as_f64)
                .collect::<Option<Vec<f64>>>()
        })
        .collect()
}

fn same_position(a: &[f64], b: &[f64], tol: &JsTolerance) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(*x, *y, tol))
}

fn same_sequence(a: &Ring, b: &Ring, tol: &JsTolerance) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_position(x, y, tol))
}

/// A line: the same positions, in either direction (in the same one when
/// the task says direction matters).
fn same_line(a: &Ring, b: &Ring, tol: &JsTolerance) -> bool {
    let reversed: Ring = b.iter().rev().cloned().collect();
    same_sequence(a, b, tol) || (!tol.oriented && same_sequence(a, &reversed, tol))
}

/// A closed ring: the same positions from any start, in either direction
/// (in the same one when the task says winding matters). The answer's
/// ring must be closed as the expected one is.
fn same_ring(a: &Ring, b: &Ring, tol: &JsTolerance) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() < 4 || !same_position(&a[0], &a[a.len() - 1], tol) {
        return same_line(a, b, tol);
    }
    if !same_position(&b[0], &b[b.len() - 1], tol) {
        return false;
    }
    let open_a = &a[..a.len() - 1];
    let open_b: Ring = b[..b.len() - 1].to_vec();
    let n = open_a.len();
    let reversed: Ring = open_b.iter().rev().cloned().collect();
    let directions: &[&Ring] = if tol.oriented {
        &[&open_b]
    } else {
        &[&open_b, &reversed]
    };
    (0..n).any(|shift| {
        directions
            .iter()
            .any(|seq| (0..n).all(|i| same_position(&open_a[i], &seq[(i + shift) % n], tol)))
    })
}

/// A polygon: the same exterior ring and the same holes in any order.
fn same_polygon(a: &Value, b: &Value, tol: &JsTolerance) -> bool {
    let rings = |v: &Value| -> Option<Vec<Ring>> { v.as_array()?.iter().map(positions).collect() };
    let (Some(a), Some(b)) = (rings(a), rings(b)) else {
        return false;
    };
    if a.len() != b.len() || a.is_empty() != b.is_empty() {
        return false;
    }
    if a.is_empty() {
        return true;
    }
    same_ring(&a[0], &b[0], tol) && matched(&a[1..], &b[1..], |x, y| same_ring(x, y, tol))
}

/// Every item of `a` matched by a distinct item of `b`.
fn matched<T>(a: &[T], b: &[T], eq: impl Fn(&T, &T) -> bool) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut used = vec![false; b.len()];
    a.iter()
        .all(|x| match (0..b.len()).find(|&j| !used[j] && eq(x, &b[j])) {
            Some(j) => {
                used[j] = true;
                true
            }
            None => false,
        })
}

fn geometry(want: &Value, got: &Value, tol: &JsTolerance) -> Result<(), String> {
    let kind = geojson_type(want).unwrap_or("");
    let (a, b) = (&want["coordinates"], &got["coordinates"]);
    let equal = match kind {
        "Point" => match (a.as_array(), b.as_array()) {
            (Some(x), Some(y)) if x.is_empty() && y.is_empty() => true,
            _ => positions(&Value::Array(vec![a.clone()]))
                .zip(positions(&Value::Array(vec![b.clone()])))
                .is_some_and(|(x, y)| same_sequence(&x, &y, tol)),
        },
        "MultiPoint" => positions(a)
            .zip(positions(b))
            .is_some_and(|(x, y)| matched(&x, &y, |p, q| same_position(p, q, tol))),
        "LineString" => positions(a)
            .zip(positions(b))
            .is_some_and(|(x, y)| same_line(&x, &y, tol)),
        "MultiLineString" => {
            let lines =
                |v: &Value| -> Option<Vec<Ring>> { v.as_array()?.iter().map(positions).collect() };
            lines(a)
                .zip(lines(b))
                .is_some_and(|(x, y)| matched(&x, &y, |p, q| same_line(p, q, tol)))
        }
        "Polygon" => same_polygon(a, b, tol),
        "MultiPolygon" => match (a.as_array(), b.as_array()) {
            (Some(x), Some(y)) => matched(x, y, |p, q| same_polygon(p, q, tol)),
            _ => false,
        },
        _ => return structure(want, got, tol, ""),
    };
    if equal {
        Ok(())
    } else {
        Err(format!("{kind} {} where {} was expected", clip(b), clip(a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(kind: &str, value: Value) -> Recorded {
        Recorded {
            kind: kind.into(),
            value,
            indirect: None,
        }
    }

    fn tol() -> JsTolerance {
        JsTolerance::default()
    }

    #[test]
    fn a_ring_matches_from_any_vertex_in_either_direction_but_not_another_ring() {
        let a = json!({"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,1],[0,0]]]});
        let rotated = json!({"type": "Polygon", "coordinates": [[[1,1],[0,1],[0,0],[1,0],[1,1]]]});
        let reversed = json!({"type": "Polygon", "coordinates": [[[0,0],[0,1],[1,1],[1,0],[0,0]]]});
        let other = json!({"type": "Polygon", "coordinates": [[[0,0],[2,0],[1,1],[0,1],[0,0]]]});
        assert!(geojson_match(&a, &rotated, &tol()).is_ok());
        assert!(geojson_match(&a, &reversed, &tol()).is_ok());
        assert!(geojson_match(&a, &other, &tol()).is_err());
        let nudged =
            json!({"type": "Polygon", "coordinates": [[[0,0],[1.0000000001,0],[1,1],[0,1],[0,0]]]});
        assert!(geojson_match(&a, &nudged, &tol()).is_ok());
        // The answer's ring must be closed too.
        let open = json!({"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,1],[99,99]]]});
        assert!(geojson_match(&a, &open, &tol()).is_err());
        // Where winding matters, the reversed ring is another answer.
        let oriented = JsTolerance {
            oriented: true,
            ..tol()
        };
        assert!(geojson_match(&a, &rotated, &oriented).is_ok());
        assert!(geojson_match(&a, &reversed, &oriented).is_err());
    }

    #[test]
    fn features_compare_geometry_and_properties_and_collections_in_order() {
        let f = |x: f64, name: &str| json!({"type": "Feature", "properties": {"name": name}, "geometry": {"type": "Point", "coordinates": [x, 1.0]}});
        assert!(geojson_match(&f(1.0, "a"), &f(1.0, "a"), &tol()).is_ok());
        assert!(geojson_match(&f(1.0, "a"), &f(1.0, "b"), &tol()).is_err());
        assert!(geojson_match(&f(1.0, "a"), &f(2.0, "a"), &tol()).is_err());
        let fc = |a, b| json!({"type": "FeatureCollection", "features": [a, b]});
        assert!(geojson_match(
            &fc(f(1.0, "a"), f(2.0, "b")),
            &fc(f(1.0, "a"), f(2.0, "b")),
            &tol()
        )
        .is_ok());
        assert!(geojson_match(
            &fc(f(1.0, "a"), f(2.0, "b")),
            &fc(f(2.0, "b"), f(1.0, "a")),
            &tol()
        )
        .is_err());
        let multi = |parts: Value| json!({"type": "MultiPoint", "coordinates": parts});
        assert!(geojson_match(
            &multi(json!([[0, 0], [1, 1]])),
            &multi(json!([[1, 1], [0, 0]])),
            &tol()
        )
        .is_ok());
    }

    #[test]
    fn the_type_is_checked_before_the_value() {
        assert!(fits(JsOutputType::Number, &rec("Number", json!(3))).is_ok());
        assert!(matches!(
            fits(JsOutputType::Number, &rec("String", json!("3"))),
            Err(JsMismatch::Type(_))
        ));
        assert!(fits(
            JsOutputType::Feature,
            &rec("Object", json!({"type": "Feature"}))
        )
        .is_ok());
        assert!(fits(
            JsOutputType::Feature,
            &rec("Object", json!({"type": "Point", "coordinates": [0, 0]}))
        )
        .is_err());
        assert!(fits(JsOutputType::OlExtent, &rec("Array", json!([0, 0, 1, 1]))).is_ok());
        assert!(fits(JsOutputType::OlExtent, &rec("Array", json!([0, 0]))).is_err());
        assert!(fits(
            JsOutputType::LeafletMap,
            &rec("leaflet.Map", json!({"$object": "leaflet.Map"}))
        )
        .is_ok());
        assert!(fits(JsOutputType::LeafletMap, &rec("Object", json!({}))).is_err());
    }

    #[test]
    fn nested_json_needs_the_same_keys_and_close_numbers() {
        let t = tol();
        assert!(structure(
            &json!({"latitude": 1.0, "longitude": 2.0}),
            &json!({"longitude": 2.0, "latitude": 1.0}),
            &t,
            ""
        )
        .is_ok());
        assert!(structure(
            &json!({"latitude": 1.0}),
            &json!({"latitude": 1.0, "extra": 0}),
            &t,
            ""
        )
        .is_err());
        assert!(structure(&json!([1.0, 2.0]), &json!([2.0, 1.0]), &t, "").is_err());
        let sets = JsTolerance {
            unordered: true,
            ..t
        };
        assert!(structure(&json!([1.0, 2.0]), &json!([2.0, 1.0]), &sets, "").is_ok());
        // A set of pairs, not of numbers: swapped coordinates stay wrong.
        let pairs = |v: Value| v;
        assert!(structure(
            &pairs(json!([[1.0, 2.0], [3.0, 4.0]])),
            &json!([[3.0, 4.0], [1.0, 2.0]]),
            &sets,
            ""
        )
        .is_ok());
        assert!(structure(&pairs(json!([[1.0, 2.0]])), &json!([[2.0, 1.0]]), &sets, "").is_err());
        assert!(structure(
            &json!({"$nonfinite": "NaN"}),
            &json!({"$nonfinite": "NaN"}),
            &t,
            ""
        )
        .is_ok());
    }
}
