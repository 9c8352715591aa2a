//! Big GeoJSON files described from samples. GDAL's GeoJSON driver reads a
//! whole file to open it (its fields come from every feature) and again to
//! count the features: 2.6 s for 145 MB here, so ~40 s for the building
//! footprints of a city. Past [`BIG`] bytes the card reads the first
//! features itself, takes the fields and the geometry type from them, and
//! estimates the count from the density of features in three 1 MB slices,
//! as it does for a big CSV.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::facts::fmt_num;
use super::{SAMPLE_ROWS, VALUE_CHARS};

/// GeoJSON files larger than this are described from samples.
pub(super) const BIG: u64 = 64 << 20;

/// Bytes read at the start for the sample features (a feature with a
/// detailed polygon can take megabytes).
const HEAD_BYTES: u64 = 8 << 20;

/// Bytes of each of the three slices the count is estimated from.
const SLICE_BYTES: u64 = 1 << 20;

/// Features whose properties give the field list.
const FIELD_FEATURES: usize = 50;

/// Whether `path` is a GeoJSON file big enough to describe from samples.
pub(super) fn is_big(path: &Path) -> bool {
    let json = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("geojson") || e.eq_ignore_ascii_case("json"));
    json && std::fs::metadata(path).is_ok_and(|m| m.len() > BIG)
}

/// The card entry of a big GeoJSON FeatureCollection shown as `name`, or
/// `None` when its start is not one (GDAL then reads it as any file).
pub(super) fn entry(path: &Path, name: &str) -> Option<String> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let sample = first_features(&head)?;
    let (hits, bytes, size) = super::sampled_density(path, SLICE_BYTES, features_in)?;
    let count = size * hits / bytes;
    let layer = path.file_stem()?.to_string_lossy().into_owned();
    let geometry = sample
        .features
        .iter()
        .find_map(|f| f.get("geometry")?.get("type")?.as_str())
        .unwrap_or("Unknown (any)");
    let mut text = format!(
        "- {name} — vector (GeoJSON), 1 layer(s)\n  layer `{layer}`: {geometry}, {}, ≈{count} features (estimated from 1 MB read in 3 places)\n",
        sample.crs
    );
    let fields = fields(&sample.features);
    let columns: Vec<String> = fields.iter().map(|(n, t)| format!("{n} ({t})")).collect();
    text.push_str(&format!(
        "  columns (of the first {} features): {}\n",
        sample.features.len(),
        if columns.is_empty() {
            "none".to_string()
        } else {
            columns.join(", ")
        }
    ));
    for feature in sample.features.iter().take(SAMPLE_ROWS) {
        let values: Vec<String> = fields
            .iter()
            .map(|(n, _)| {
                let value = feature.get("properties").and_then(|p| p.get(n));
                format!("{n}={}", value_text(value))
            })
            .collect();
        text.push_str(&format!("  row: {}\n", values.join(", ")));
    }
    Some(text)
}

/// The CRS a big GeoJSON states before its features (an old-style `crs`
/// member, else EPSG:4326 by RFC 7946), read from its first megabyte;
/// `None` for a file that is not a big GeoJSON FeatureCollection.
pub fn stated_crs(path: &Path) -> Option<String> {
    if !is_big(path) {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(SLICE_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    collection_start(&String::from_utf8_lossy(&head)).map(|(_, crs)| crs)
}

/// Where the `"features"` member of the FeatureCollection that `text`
/// starts is, and the CRS stated before it (an old-style `crs` member,
/// else EPSG:4326 by RFC 7946); `None` when `text` does not start one.
fn collection_start(text: &str) -> Option<(usize, String)> {
    let at = text.find("\"features\"")?;
    let before = &text[..at];
    if !before.contains("FeatureCollection") && !text[at..].contains("\"Feature\"") {
        return None;
    }
    Some((
        at,
        old_style_crs(before).unwrap_or_else(|| "EPSG:4326".into()),
    ))
}

/// What the start of a FeatureCollection gave.
struct Sample {
    /// Its first features (as many as are whole in the head, at most
    /// [`FIELD_FEATURES`]).
    features: Vec<Value>,
    /// `EPSG:4326` (RFC 7946), or the EPSG code of an old-style `crs` member.
    crs: String,
}

/// The first features of the FeatureCollection that `head` starts,
/// `None` when it is not one or no feature is whole in it.
fn first_features(head: &[u8]) -> Option<Sample> {
    let text = String::from_utf8_lossy(head);
    let (at, crs) = collection_start(&text)?;
    let bytes = text.as_bytes();
    let mut pos = at + "\"features\"".len();
    pos += bytes[pos..].iter().position(|&b| b == b'[')? + 1;
    let mut features = Vec::new();
    while features.len() < FIELD_FEATURES {
        pos += bytes[pos..]
            .iter()
            .position(|b| !b.is_ascii_whitespace() && *b != b',')?;
        if bytes[pos] == b']' {
            break;
        }
        let mut values = serde_json::Deserializer::from_slice(&bytes[pos..]).into_iter::<Value>();
        let Some(Ok(feature)) = values.next() else {
            break; // cut by the end of the head
        };
        pos += values.byte_offset();
        features.push(feature);
    }
    (!features.is_empty()).then_some(Sample { features, crs })
}

/// The EPSG code of a GeoJSON 2008 `crs` member in the text before the
/// features (`urn:ogc:def:crs:EPSG::32617`, `EPSG:32617`); CRS84 is 4326.
fn old_style_crs(before: &str) -> Option<String> {
    let at = before.find("\"crs\"")?;
    let name = &before[at..];
    if name.contains("CRS84") {
        return Some("EPSG:4326".into());
    }
    let code_at = name.find("EPSG")? + "EPSG".len();
    let code: String = name[code_at..]
        .trim_start_matches(':')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!code.is_empty()).then(|| format!("EPSG:{code}"))
}

/// How many `"type": "Feature"` members `buf` holds (not
/// `FeatureCollection`; whitespace around the colon allowed).
fn features_in(buf: &[u8]) -> u64 {
    const WORD: &[u8] = b"\"Feature\"";
    let mut count = 0;
    let mut i = 0;
    while let Some(found) = buf[i..].windows(WORD.len()).position(|w| w == WORD) {
        let at = i + found;
        let before = buf[..at]
            .iter()
            .rev()
            .skip_while(|b| b.is_ascii_whitespace())
            .copied()
            .next();
        count += u64::from(before == Some(b':'));
        i = at + WORD.len();
    }
    count
}

/// Field types in the order numbers widen (GDAL's names).
const NUMERIC: [&str; 3] = ["Integer", "Integer64", "Real"];

/// The properties' names in order of first appearance, with the type of
/// their non-null values (GDAL's names; integers widen to Integer64 and
/// Real as GDAL's do, `unknown` while every value seen is null).
fn fields(features: &[Value]) -> Vec<(String, &'static str)> {
    let mut fields: Vec<(String, &'static str)> = Vec::new();
    for properties in features
        .iter()
        .filter_map(|f| f.get("properties")?.as_object())
    {
        for (name, value) in properties {
            let kind = match value {
                Value::Null => "unknown",
                Value::Bool(_) => "Integer(Boolean)",
                Value::Number(n) => match n.as_i64() {
                    Some(i) if i32::try_from(i).is_ok() => "Integer",
                    Some(_) => "Integer64",
                    None => "Real",
                },
                Value::String(_) => "String",
                Value::Array(_) | Value::Object(_) => "String(JSON)",
            };
            let rank = |k: &str| NUMERIC.iter().position(|n| *n == k);
            match fields.iter_mut().find(|(n, _)| n == name) {
                Some(field) if field.1 == "unknown" => field.1 = kind,
                Some(field) => {
                    if let (Some(seen), Some(now)) = (rank(field.1), rank(kind)) {
                        field.1 = NUMERIC[seen.max(now)];
                    }
                }
                None => fields.push((name.clone(), kind)),
            }
        }
    }
    fields
}

/// A property value as the card shows it.
fn value_text(value: Option<&Value>) -> String {
    let text = match value {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(|i| i.to_string())
            .or_else(|| n.as_f64().map(fmt_num))
            .unwrap_or_else(|| n.to_string()),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(other) => other.to_string(),
    };
    crate::util::clip(&text, VALUE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_features_give_fields_rows_and_geometry() {
        let head = br#"{"type": "FeatureCollection", "name": "x",
 "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32617"}},
 "features": [
 {"type": "Feature", "properties": {"id": 1, "h": null, "name": "a"}, "geometry": {"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,0]]]}},
 {"type": "Feature", "properties": {"id": 2, "h": 3.5, "name": "b", "tags": ["x"]}, "geometry": null},
 {"type": "Feature", "properties": {"id": 3, "h": 4, "na"#;
        let sample = first_features(head).unwrap();
        assert_eq!(sample.features.len(), 2, "the cut feature is left out");
        assert_eq!(sample.crs, "EPSG:32617");
        assert_eq!(
            fields(&sample.features),
            [
                ("id".to_string(), "Integer"),
                ("h".to_string(), "Real"),
                ("name".to_string(), "String"),
                ("tags".to_string(), "String(JSON)")
            ]
        );
        assert!(first_features(br#"{"stations": [1, 2]}"#).is_none());
        assert_eq!(
            old_style_crs(r#"{"crs": {"properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}}, "#)
                .as_deref(),
            Some("EPSG:4326")
        );
        assert_eq!(
            old_style_crs(r#"{"crs": {"properties": {"name": "EPSG:2263"}}, "#).as_deref(),
            Some("EPSG:2263")
        );
        assert_eq!(old_style_crs(r#"{"type": "FeatureCollection", "#), None);
    }

    #[test]
    fn features_are_counted_by_their_type_member_not_the_collection() {
        let buf = br#"{"type":"FeatureCollection","features":[{"type":"Feature"},{"type" : "Feature","properties":{"note":"a \"Feature\" word"}}]}"#;
        assert_eq!(features_in(buf), 2);
    }
}
