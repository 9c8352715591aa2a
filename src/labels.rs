//! The four labels every benchmark item carries, so that a report can say
//! *where* a model fails: the `library` it exercises, the `data_type` it
//! works on, the `operation` (a small fixed taxonomy) and the
//! `difficulty`, which is not written by hand but derived from the gold
//! code ([`Difficulty::of`]) or, for a whole task, from its number of
//! steps ([`Difficulty::of_steps`]).

use std::collections::BTreeSet;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kind of data an item works on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    /// Shapely geometries (or their WKT).
    Geometry,
    /// Coordinates: (x, y) pairs, lon/lat.
    Coordinates,
    /// GeoDataFrames and GeoSeries (vector layers).
    Geodataframe,
    /// Raster files and datasets (GeoTIFF through rasterio).
    Raster,
    /// Gridded arrays in memory (numpy).
    Array,
    /// Labelled multi-dimensional data (xarray, netCDF).
    Cube,
    /// Coordinate reference systems.
    Crs,
    /// Graphs and networks.
    Graph,
    /// Plain tables (pandas DataFrames, CSV).
    Table,
    /// Figures (matplotlib).
    Figure,
    /// Web maps and their parts: maps, views, layers, sources (Leaflet,
    /// OpenLayers).
    Map,
}

/// What an item does, in a small fixed taxonomy.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Reading, writing, parsing, georeferencing metadata.
    Io,
    /// CRS definitions, lookups and coordinate transformations.
    Crs,
    /// Spatial predicates and validity tests.
    Predicate,
    /// Constructive geometry: buffers, hulls, set operations, simplification.
    Geometry,
    /// Lengths, areas, distances, bounds, geodesics.
    Measurement,
    /// Layer-level overlay, clip, dissolve and spatial joins.
    OverlayJoin,
    /// Vector ↔ raster conversion (rasterize, polygonize).
    Conversion,
    /// Cell-wise and focal raster algebra.
    RasterAlgebra,
    /// Resampling, reprojection and mosaicking of grids.
    Resampling,
    /// Statistics of raster values per zone.
    ZonalStats,
    /// Slope, aspect, hillshade, flow, curvature.
    Terrain,
    /// Interpolation between samples.
    Interpolation,
    /// Spatial autocorrelation, weights, regression, point patterns.
    SpatialStatistics,
    /// Graphs, shortest paths, routing.
    Network,
    /// Clustering and learning on spatial data.
    MachineLearning,
    /// Attribute (table) work on geodata.
    Tabular,
    /// Maps and charts.
    Visualisation,
}

/// How hard an item is, from the distinct functions its gold code calls
/// (GeoAgent's labels, [`crate::pysource::references::called_functions`]): at most 2
/// easy, 3 to 5 medium, 6 or more hard.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    /// At most 2 distinct calls.
    Easy,
    /// 3 to 5.
    Medium,
    /// 6 or more.
    Hard,
}

impl Difficulty {
    /// The difficulty of gold code that calls `calls` distinct functions.
    pub fn from_calls(calls: usize) -> Difficulty {
        match calls {
            0..=2 => Difficulty::Easy,
            3..=5 => Difficulty::Medium,
            _ => Difficulty::Hard,
        }
    }

    /// The difficulty of this gold code.
    pub fn of(gold: &str) -> Difficulty {
        let calls: BTreeSet<String> = crate::pysource::references::called_functions(gold);
        Difficulty::from_calls(calls.len())
    }

    /// The difficulty of a whole task from its number of analysis steps
    /// (GISclaw's simple, intermediate and complex tasks; GeoAnalystBench
    /// averages 5.8): at most 4 easy, 5 or 6 medium, 7 or more hard.
    pub fn of_steps(steps: usize) -> Difficulty {
        match steps {
            0..=4 => Difficulty::Easy,
            5..=6 => Difficulty::Medium,
            _ => Difficulty::Hard,
        }
    }
}

/// The snake_case name serde gives a label value.
fn name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&name(self))
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&name(self))
    }
}

impl fmt::Display for Difficulty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&name(self))
    }
}

/// The label keys, in report order.
pub const KEYS: [&str; 4] = ["library", "data_type", "operation", "difficulty"];

/// One item's four labels, as recorded with its results.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Labels {
    /// The library the item exercises.
    pub library: String,
    /// What it works on (`geometry`, `raster`…).
    pub data_type: String,
    /// What it does (`overlay_join`, `terrain`…).
    pub operation: String,
    /// `easy`, `medium` or `hard`.
    pub difficulty: String,
}

impl Labels {
    /// The labels of an item.
    pub fn new(
        library: &str,
        data_type: DataType,
        operation: Operation,
        difficulty: Difficulty,
    ) -> Labels {
        Labels {
            library: library.to_string(),
            data_type: data_type.to_string(),
            operation: operation.to_string(),
            difficulty: difficulty.to_string(),
        }
    }

    /// The value under `key` (one of [`KEYS`]).
    pub fn get(&self, key: &str) -> Option<&str> {
        match key {
            "library" => Some(&self.library),
            "data_type" => Some(&self.data_type),
            "operation" => Some(&self.operation),
            "difficulty" => Some(&self.difficulty),
            _ => None,
        }
    }

    /// `(key, value)` pairs, for `--tasks key=value`.
    pub fn pairs(&self) -> [(&str, &str); 4] {
        [
            ("library", self.library.as_str()),
            ("data_type", self.data_type.as_str()),
            ("operation", self.operation.as_str()),
            ("difficulty", self.difficulty.as_str()),
        ]
    }

    /// Whether the item was recorded before labels existed.
    pub fn is_empty(&self) -> bool {
        self.library.is_empty() && self.data_type.is_empty() && self.operation.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_yaml_spellings() {
        assert_eq!(Operation::OverlayJoin.to_string(), "overlay_join");
        assert_eq!(DataType::Geodataframe.to_string(), "geodataframe");
        assert_eq!(Difficulty::Hard.to_string(), "hard");
        let parsed: Operation = serde_json::from_str("\"spatial_statistics\"").unwrap();
        assert_eq!(parsed, Operation::SpatialStatistics);
    }

    #[test]
    fn difficulty_counts_distinct_calls() {
        assert_eq!(
            Difficulty::of("def f(w):\n    import shapely\n    return shapely.from_wkt(w).area\n"),
            Difficulty::Easy
        );
        let many = "import geopandas as gpd\ndef f(p):\n    g = gpd.read_file(p).to_crs(3857)\n    g = g.buffer(1).union_all().convex_hull\n    return g.simplify(1).centroid.distance(g.representative_point())\n";
        assert_eq!(Difficulty::of(many), Difficulty::Hard);
        assert_eq!(Difficulty::from_calls(3), Difficulty::Medium);
        assert_eq!(Difficulty::from_calls(5), Difficulty::Medium);
    }
}
