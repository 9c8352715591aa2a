//! API coverage of a suite's gold code (`gisclaw bench coverage SUITE`):
//! per library, the share of its public functions, classes, methods and
//! properties (the library-docs entries, [`crate::knowledge::build`]) that
//! some gold exercises.
//!
//! A documented object is exercised when a gold names it by its qualified
//! path or one of its aliases (`gpd.read_file` with the session's aliases
//! is `geopandas.read_file`), or, for a method or property reached from a
//! value (`gdf.to_crs(…)`, `.area`), when its name matches, the gold uses
//! its library by a qualified name too (so `.buffer` counts for shapely
//! only in a gold that uses shapely), and either the gold names its class
//! (`RandomForestClassifier(…).fit`) or at most [`AMBIGUOUS`] objects of
//! the library have that name (`.to_crs` of GeoSeries and GeoDataFrame;
//! not `.fit`, which a hundred estimators have).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::knowledge::DocEntry;
use crate::pysource::references::references;
use crate::sandbox::preamble::SESSION_IMPORTS;

/// One library's coverage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LibraryCoverage {
    /// The top-level module (`geopandas`, `sklearn`).
    pub library: String,
    /// Its documented public objects.
    pub public: usize,
    /// The ones some gold exercises, by canonical name.
    pub exercised: Vec<String>,
}

impl LibraryCoverage {
    /// Exercised over public, 0 for an empty library.
    pub fn share(&self) -> f64 {
        if self.public == 0 {
            0.0
        } else {
            self.exercised.len() as f64 / self.public as f64
        }
    }
}

/// What one gold refers to: qualified names, and the names of attributes
/// reached from values with the libraries it names.
#[derive(Debug, Default)]
struct GoldNames {
    qualified: BTreeSet<String>,
    attributes: BTreeSet<String>,
    libraries: BTreeSet<String>,
}

fn names_of(gold: &Gold) -> GoldNames {
    let mut names = GoldNames::default();
    names
        .libraries
        .extend(gold.libraries.iter().map(|l| module_of(l).to_string()));
    for r in references(&format!("{SESSION_IMPORTS}\n{}", gold.code)) {
        match r.name.strip_prefix('.') {
            Some(attribute) => {
                names.attributes.insert(attribute.to_string());
            }
            None => {
                if let Some((top, _)) = r.name.split_once('.') {
                    names.libraries.insert(top.to_string());
                    // `gpd.GeoDataFrame.from_features` names both the
                    // method and its class.
                    let mut prefix = String::new();
                    for part in r.name.split('.') {
                        if !prefix.is_empty() {
                            prefix.push('.');
                        }
                        prefix.push_str(part);
                        names.qualified.insert(prefix.clone());
                    }
                }
            }
        }
    }
    names
}

/// More same-named methods than this in one library, and a method reached
/// from a value counts only where the gold names its class.
pub const AMBIGUOUS: usize = 3;

/// The top-level module of an entry.
fn library_of(entry: &DocEntry) -> &str {
    entry.name.split('.').next().unwrap_or_default()
}

/// One gold: its code and the libraries its labels say it exercises
/// (methods of their objects count even where the code never names the
/// library, as in `cube.groupby("time.season")`).
#[derive(Debug, Clone, Default)]
pub struct Gold {
    /// The code.
    pub code: String,
    /// Library labels (`xarray`, `scikit-learn`).
    pub libraries: Vec<String>,
}

/// The importable module of a library label (`scikit-learn` is `sklearn`).
fn module_of(label: &str) -> &str {
    match label {
        "scikit-learn" => "sklearn",
        other => other,
    }
}

/// Coverage of `entries` (recipes left out) by `golds`, one row per
/// library, in name order.
pub fn coverage(entries: &[DocEntry], golds: &[Gold]) -> Vec<LibraryCoverage> {
    let golds: Vec<GoldNames> = golds.iter().map(names_of).collect();
    let entries: Vec<&DocEntry> = entries.iter().filter(|e| e.kind != "recipe").collect();
    let last = |e: &DocEntry| e.name.rsplit('.').next().unwrap_or_default().to_string();
    let from_value = |e: &DocEntry| matches!(e.kind.as_str(), "method" | "property");
    // How many methods and properties of each library share a name.
    let mut same_named: BTreeMap<(String, String), usize> = BTreeMap::new();
    for e in entries.iter().filter(|e| from_value(e)) {
        *same_named
            .entry((library_of(e).to_string(), last(e)))
            .or_default() += 1;
    }
    let mut libraries: BTreeMap<String, LibraryCoverage> = BTreeMap::new();
    for entry in entries {
        let library = library_of(entry).to_string();
        let row = libraries
            .entry(library.clone())
            .or_insert_with(|| LibraryCoverage {
                library: library.clone(),
                public: 0,
                exercised: Vec::new(),
            });
        row.public += 1;
        let name = last(entry);
        let paths = || std::iter::once(&entry.name).chain(&entry.aliases);
        let class_named = |g: &GoldNames| {
            paths().any(|p| {
                p.rsplit_once('.')
                    .is_some_and(|(class, _)| g.qualified.contains(class))
            })
        };
        let unambiguous = same_named
            .get(&(library.clone(), name.clone()))
            .copied()
            .unwrap_or(0)
            <= AMBIGUOUS;
        let exercised = golds.iter().any(|g| {
            paths().any(|n| g.qualified.contains(n))
                || (from_value(entry)
                    && g.attributes.contains(&name)
                    && g.libraries.contains(&library)
                    && (unambiguous || class_named(g)))
        });
        if exercised {
            row.exercised.push(entry.name.clone());
        }
    }
    libraries.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, kind: &str, aliases: &[&str]) -> DocEntry {
        DocEntry {
            name: name.into(),
            kind: kind.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            ..DocEntry::default()
        }
    }

    #[test]
    fn qualified_names_aliases_and_methods_of_used_libraries_count() {
        let entries = [
            entry(
                "geopandas.io.file.read_file",
                "function",
                &["geopandas.read_file"],
            ),
            entry("geopandas.geodataframe.GeoDataFrame.to_crs", "method", &[]),
            entry(
                "geopandas.geodataframe.GeoDataFrame.dissolve",
                "method",
                &[],
            ),
            entry("shapely.geometry.base.BaseGeometry.buffer", "method", &[]),
            entry("geopandas.geoseries.GeoSeries.buffer", "method", &[]),
            entry(
                "pyproj.transformer.Transformer",
                "class",
                &["pyproj.Transformer"],
            ),
            entry(
                "pyproj.transformer.Transformer.from_crs",
                "method",
                &["pyproj.Transformer.from_crs"],
            ),
            entry("recipe.slope", "recipe", &[]),
            entry("sklearn.ensemble.RandomForestClassifier", "class", &[]),
            entry("sklearn.ensemble.RandomForestClassifier.fit", "method", &[]),
            entry("sklearn.cluster.KMeans.fit", "method", &[]),
            entry("sklearn.cluster.DBSCAN.fit", "method", &[]),
            entry("sklearn.linear_model.Ridge.fit", "method", &[]),
        ];
        let gold = |code: &str| Gold {
            code: code.to_string(),
            libraries: Vec::new(),
        };
        let golds = [
            gold("roads = gpd.read_file('r.shp').to_crs(3857)\nzone = roads.buffer(10)\n"),
            gold("def f():\n    from pyproj import Transformer\n    return Transformer.from_crs(4326, 3857)\n"),
            gold("from sklearn.ensemble import RandomForestClassifier\nm = RandomForestClassifier().fit(x, y)\n"),
        ];
        let rows = coverage(&entries, &golds);
        let row = |lib: &str| rows.iter().find(|r| r.library == lib).unwrap();
        assert_eq!(
            row("geopandas").exercised,
            [
                "geopandas.io.file.read_file",
                "geopandas.geodataframe.GeoDataFrame.to_crs",
                "geopandas.geoseries.GeoSeries.buffer"
            ]
        );
        assert_eq!(row("geopandas").public, 4);
        // `.buffer` in a gold that names no shapely function is not shapely's.
        assert!(row("shapely").exercised.is_empty());
        assert_eq!(row("pyproj").exercised.len(), 2);
        assert!(!rows.iter().any(|r| r.library == "recipe"));
        assert!((row("pyproj").share() - 1.0).abs() < 1e-12);
        // A gold labelled shapely credits `.buffer` to shapely too.
        let labelled = Gold {
            code: "zone = roads.buffer(10)\n".into(),
            libraries: vec!["shapely".into()],
        };
        let rows = coverage(&entries, &[labelled]);
        assert_eq!(
            rows.iter()
                .find(|r| r.library == "shapely")
                .unwrap()
                .exercised,
            ["shapely.geometry.base.BaseGeometry.buffer"]
        );
        // Four `fit`s: only the one whose class the gold names.
        assert_eq!(
            row("sklearn").exercised,
            [
                "sklearn.ensemble.RandomForestClassifier",
                "sklearn.ensemble.RandomForestClassifier.fit"
            ]
        );
    }
}
