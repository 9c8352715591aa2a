//! Geometry types as the sandbox's libraries name them: shapely's names
//! (`MultiPolygon`, not GDAL's `Multi Polygon`), curves as pyogrio reads
//! them (linearised: a `CurvePolygon` arrives as a `Polygon`), ` Z` for 3D
//! (pyogrio's `LineString Z`; M values are dropped when read), and what the
//! features hold rather than what the layer declares: a shapefile's
//! `Polygon` layer reads as `Polygon` and `MultiPolygon` rows.

use std::collections::BTreeMap;

use gdal::vector::{Layer, LayerAccess, OGRwkbGeometryType};

use super::facts::{Geometry, GeometryCount};

/// Features looked at to say which geometry types a layer holds.
pub const SCANNED_FEATURES: usize = 2000;

/// Shapely's name of a geometry type once read (linear, without Z or M);
/// `None` for an unknown or absent type, and for the surfaces shapely has
/// no type for (TIN, Triangle, PolyhedralSurface: see [`unreadable_name`]).
pub fn shapely_name(ty: OGRwkbGeometryType::Type) -> Option<&'static str> {
    use OGRwkbGeometryType as T;
    if unreadable_name(ty).is_some() {
        return None;
    }
    // SAFETY: pure functions of the type code.
    let linear = unsafe { gdal_sys::OGR_GT_Flatten(gdal_sys::OGR_GT_GetLinear(ty)) };
    Some(match linear {
        T::wkbPoint => "Point",
        T::wkbLineString => "LineString",
        T::wkbPolygon => "Polygon",
        T::wkbMultiPoint => "MultiPoint",
        T::wkbMultiLineString => "MultiLineString",
        T::wkbMultiPolygon => "MultiPolygon",
        T::wkbGeometryCollection => "GeometryCollection",
        _ => return None,
    })
}

/// GDAL's name of a surface type geopandas cannot read (shapely raises
/// `Unknown WKB type`), if `ty` is one.
pub fn unreadable_name(ty: OGRwkbGeometryType::Type) -> Option<&'static str> {
    use OGRwkbGeometryType as T;
    // SAFETY: a pure function of the type code.
    match unsafe { gdal_sys::OGR_GT_Flatten(ty) } {
        T::wkbTIN => Some("TIN"),
        T::wkbTriangle => Some("Triangle"),
        T::wkbPolyhedralSurface => Some("PolyhedralSurface"),
        _ => None,
    }
}

/// Whether a type has Z.
fn has_z(ty: OGRwkbGeometryType::Type) -> bool {
    gdal::vector::geometry_type_has_z(ty)
}

/// The layer's geometry as the card states it: the types its first
/// [`SCANNED_FEATURES`] features hold (`Polygon/MultiPolygon (31 Polygon, 17
/// MultiPolygon)`), else the declared type. Leaves the layer's reading at
/// its end (callers reset it).
pub fn layer_geometry(layer: &mut Layer, declared: OGRwkbGeometryType::Type) -> Geometry {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut z = has_z(declared);
    let mut more = false;
    let mut unreadable = None;
    layer.reset_feature_reading();
    for (scanned, feature) in layer.features().enumerate() {
        if scanned == SCANNED_FEATURES {
            more = true;
            break;
        }
        let Some(geometry) = feature.geometry() else {
            continue;
        };
        let ty = geometry.geometry_type();
        z |= has_z(ty);
        if let Some(name) = unreadable_name(ty) {
            unreadable.get_or_insert(name);
        }
        if let Some(name) = shapely_name(ty) {
            *counts.entry(name).or_default() += 1;
        }
    }
    let mut found: Vec<(&str, usize)> = counts.into_iter().collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut geometry = Geometry {
        text: String::new(),
        types: found
            .iter()
            .map(|(name, n)| GeometryCount {
                name: name.to_string(),
                features: *n as u64,
            })
            .collect(),
        has_z: z,
        scanned_part: more,
        unreadable: false,
    };
    let unreadable = unreadable.or_else(|| unreadable_name(declared));
    if let Some(name) = unreadable {
        geometry.unreadable = true;
        geometry.text = format!(
            "{name} geometries, which geopandas cannot read (shapely has no {name}: `Unknown WKB type`); read its fields with pyogrio.read_dataframe(…, read_geometry=False)"
        );
        return geometry;
    }
    let suffix = if z { " Z" } else { "" };
    geometry.text = match found.as_slice() {
        [] => match shapely_name(declared) {
            Some(name) => format!("{name}{suffix}"),
            None => "geometry of no declared type".into(),
        },
        [(name, _)] => format!("{name}{suffix}"),
        several => {
            let names: Vec<String> = several
                .iter()
                .map(|(n, _)| format!("{n}{suffix}"))
                .collect();
            let counts: Vec<String> = several.iter().map(|(n, c)| format!("{c} {n}")).collect();
            let of = if more {
                format!(" in the first {SCANNED_FEATURES} features")
            } else {
                String::new()
            };
            format!("{} ({}{of})", names.join("/"), counts.join(", "))
        }
    };
    geometry
}

#[cfg(test)]
mod tests {
    use super::*;
    use gdal::vector::OGRwkbGeometryType as T;

    #[test]
    fn gdal_types_get_the_names_shapely_and_pyogrio_give_them() {
        assert_eq!(shapely_name(T::wkbMultiPolygon), Some("MultiPolygon"));
        assert_eq!(shapely_name(T::wkbPoint25D), Some("Point"));
        assert!(has_z(T::wkbPoint25D));
        assert_eq!(shapely_name(T::wkbCurvePolygon), Some("Polygon"));
        assert_eq!(shapely_name(T::wkbMultiSurface), Some("MultiPolygon"));
        assert_eq!(shapely_name(T::wkbMultiCurve), Some("MultiLineString"));
        assert_eq!(shapely_name(T::wkbLineStringZM), Some("LineString"));
        assert_eq!(shapely_name(T::wkbUnknown), None);
        assert_eq!(shapely_name(T::wkbTIN), None);
        assert_eq!(unreadable_name(T::wkbTINZ), Some("TIN"));
    }
}
