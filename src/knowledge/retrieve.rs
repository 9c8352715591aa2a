//! Retrieval before the first attempt (after GeoAgent §3.2): the library
//! docs for a task or a plan step are looked up from its text, filtered to
//! the libraries it names, and put in the model's brief; `search_docs`
//! finds more.

use super::search::{render_hits, Hit, Library};

/// Hits put in a brief.
pub const BRIEF_HITS: usize = 3;

/// The words that name each indexed library (top package names), matched
/// as whole words, case-insensitively.
const LIBRARY_WORDS: &[(&str, &[&str])] = &[
    (
        "geopandas",
        &["geopandas", "gpd", "geodataframe", "geoseries"],
    ),
    ("rasterio", &["rasterio"]),
    ("rasterstats", &["rasterstats", "zonal_stats"]),
    ("shapely", &["shapely"]),
    ("pyproj", &["pyproj"]),
    ("fiona", &["fiona"]),
    ("xarray", &["xarray", "xr"]),
    ("scipy", &["scipy"]),
    ("sklearn", &["sklearn", "scikit-learn"]),
    ("libpysal", &["libpysal", "pysal"]),
    ("esda", &["esda", "pysal"]),
    ("mgwr", &["mgwr"]),
    ("spreg", &["spreg"]),
    ("networkx", &["networkx", "nx"]),
    ("matplotlib", &["matplotlib", "plt", "pyplot"]),
    ("gisclaw_tools", &["gisclaw_tools"]),
];

/// The libraries `text` names, in [`LIBRARY_WORDS`] order.
pub fn libraries_named(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    LIBRARY_WORDS
        .iter()
        .filter(|(_, names)| names.iter().any(|n| words.contains(n)))
        .map(|(library, _)| *library)
        .collect()
}

/// `text` without the words that name libraries (and the `with`/`using`
/// before them), spaces collapsed.
fn without_library_words(text: &str) -> String {
    let naming = |w: &str| {
        let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'));
        let lower = w.to_lowercase();
        LIBRARY_WORDS.iter().any(|(_, names)| {
            names.contains(&lower.as_str())
                || names.iter().any(|n| lower.starts_with(&format!("{n}.")))
        })
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let next_names = words.get(i + 1).is_some_and(|n| naming(n));
        let joiner = matches!(
            w.to_lowercase().as_str(),
            "with" | "using" | "in" | "via" | "from"
        );
        if naming(w) || (joiner && next_names) {
            continue;
        }
        kept.push(w);
    }
    kept.join(" ")
}

/// What was retrieved for a brief.
#[derive(Debug)]
pub struct Retrieved<'a> {
    /// The query (the task's or step's text).
    pub query: String,
    /// The libraries it names (the filter; empty: all).
    pub libraries: Vec<&'static str>,
    /// The hits, best first.
    pub hits: Vec<Hit<'a>>,
}

impl Library {
    /// The [`BRIEF_HITS`] best entries for `text`, among the libraries it
    /// names when it names any (none for text that names no library when
    /// [`Library::only_when_named`]).
    /// The library names themselves are the filter, not the query: every
    /// entry of a library would match them.
    pub fn retrieve(&self, text: &str) -> Retrieved<'_> {
        let libraries = libraries_named(text);
        let query = without_library_words(text);
        let hits = if self.only_when_named && libraries.is_empty() {
            Vec::new()
        } else {
            self.search_in(&query, BRIEF_HITS, &libraries)
        };
        Retrieved {
            hits,
            query,
            libraries,
        }
    }
}

impl Retrieved<'_> {
    /// The section appended to the brief (`None` without hits).
    pub fn render(&self, for_what: &str) -> Option<String> {
        if self.hits.is_empty() {
            return None;
        }
        let from = if self.libraries.is_empty() {
            String::new()
        } else {
            format!(", from {}", self.libraries.join(", "))
        };
        Some(format!(
            "## Library documentation (retrieved for {for_what}{from}; call `search_docs` for more)\n{}",
            render_hits(&self.query, &self.hits)
        ))
    }

    /// The retrieved names, for the transcript.
    pub fn names(&self) -> Vec<&str> {
        self.hits.iter().map(|h| h.entry.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_are_found_as_whole_words_and_dotted_names() {
        assert_eq!(
            libraries_named("Clip the raster with rasterio.mask and save it with GeoPandas"),
            ["geopandas", "rasterio"]
        );
        assert_eq!(
            libraries_named("Local Moran's I with PySAL; plot with plt"),
            ["libpysal", "esda", "matplotlib"]
        );
        assert_eq!(libraries_named("rasterize the parcels"), Vec::<&str>::new());
        assert_eq!(libraries_named("use scikit-learn"), ["sklearn"]);
        assert_eq!(
            without_library_words(
                "Burn the polygons into a grid with rasterio.features (or GeoPandas)"
            ),
            "Burn the polygons into a grid (or"
        );
    }
}
