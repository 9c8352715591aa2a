//! How-to recipes (`knowledge/recipes/*.md`): short entries written for
//! gisclaw's installed stack for questions no single API answers (IDW,
//! slope from a DEM, hot spots…). Each has a title, a `keywords:` line, a
//! few sentences and one runnable Python snippet; they are indexed beside
//! the API entries as `recipe.<file stem>` and shown labelled as recipes.
//! A test runs every snippet in the real sandbox, so none can rot.

use super::DocEntry;

/// The recipes, by file stem (the list the build embeds; a unit test
/// checks it against the folder).
pub const RECIPES: &[(&str, &str)] = &[
    (
        "choropleth_map",
        include_str!("../../knowledge/recipes/choropleth_map.md"),
    ),
    (
        "clip_raster_by_polygons",
        include_str!("../../knowledge/recipes/clip_raster_by_polygons.md"),
    ),
    (
        "distance_raster",
        include_str!("../../knowledge/recipes/distance_raster.md"),
    ),
    ("gwr", include_str!("../../knowledge/recipes/gwr.md")),
    (
        "hot_spots_gi_star",
        include_str!("../../knowledge/recipes/hot_spots_gi_star.md"),
    ),
    (
        "idw_interpolation",
        include_str!("../../knowledge/recipes/idw_interpolation.md"),
    ),
    (
        "kernel_density",
        include_str!("../../knowledge/recipes/kernel_density.md"),
    ),
    (
        "local_moran",
        include_str!("../../knowledge/recipes/local_moran.md"),
    ),
    ("ndvi", include_str!("../../knowledge/recipes/ndvi.md")),
    (
        "nearest_join",
        include_str!("../../knowledge/recipes/nearest_join.md"),
    ),
    (
        "netcdf_time_slice",
        include_str!("../../knowledge/recipes/netcdf_time_slice.md"),
    ),
    (
        "raster_to_polygons",
        include_str!("../../knowledge/recipes/raster_to_polygons.md"),
    ),
    (
        "rasterize_polygons",
        include_str!("../../knowledge/recipes/rasterize_polygons.md"),
    ),
    (
        "reclassify_raster",
        include_str!("../../knowledge/recipes/reclassify_raster.md"),
    ),
    (
        "reproject_raster",
        include_str!("../../knowledge/recipes/reproject_raster.md"),
    ),
    (
        "reprojection_pitfalls",
        include_str!("../../knowledge/recipes/reprojection_pitfalls.md"),
    ),
    (
        "slope_aspect",
        include_str!("../../knowledge/recipes/slope_aspect.md"),
    ),
    (
        "write_geotiff",
        include_str!("../../knowledge/recipes/write_geotiff.md"),
    ),
    (
        "zonal_statistics",
        include_str!("../../knowledge/recipes/zonal_statistics.md"),
    ),
];

/// A recipe, read from its markdown.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// `recipe.<file stem>`.
    pub name: String,
    /// The `# ` heading.
    pub title: String,
    /// The `keywords:` line (other words for what it does).
    pub keywords: String,
    /// Everything after the keywords line: prose and the snippet.
    pub body: String,
    /// The Python snippet (the first ```` ```python ```` block).
    pub code: String,
}

/// Why a recipe file does not read.
#[derive(Debug, thiserror::Error)]
#[error("knowledge/recipes/{file}.md line {line}: {message}")]
pub struct RecipeError {
    /// The file stem.
    pub file: String,
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads a recipe's markdown (`stem` names it).
pub fn parse(stem: &str, text: &str) -> Result<Recipe, RecipeError> {
    let error = |line: usize, message: &str| RecipeError {
        file: stem.to_string(),
        line,
        message: message.to_string(),
    };
    let mut lines = text.lines().enumerate();
    let title = match lines.next() {
        Some((_, l)) if l.starts_with("# ") => l[2..].trim().to_string(),
        _ => return Err(error(1, "the first line must be a `# ` title")),
    };
    let (keywords_at, keywords) = lines
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| error(2, "no `keywords:` line"))?;
    let keywords = keywords
        .strip_prefix("keywords:")
        .ok_or_else(|| error(keywords_at + 1, "expected `keywords: …` after the title"))?
        .trim()
        .to_string();
    let body: String = text
        .lines()
        .skip(keywords_at + 1)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string();
    let start = body
        .find("```python\n")
        .ok_or_else(|| error(keywords_at + 2, "no ```python snippet"))?
        + "```python\n".len();
    let end = body[start..]
        .find("```")
        .ok_or_else(|| error(keywords_at + 2, "the ```python snippet is not closed"))?;
    Ok(Recipe {
        name: format!("recipe.{stem}"),
        title,
        keywords,
        code: body[start..start + end].to_string(),
        body,
    })
}

/// How a recipe entry's line of keywords starts (the search reads the API
/// names on it).
pub const USE_FOR: &str = "Use it for: ";

/// Every recipe, read.
pub fn all() -> Result<Vec<Recipe>, RecipeError> {
    RECIPES
        .iter()
        .map(|(stem, text)| parse(stem, text))
        .collect()
}

impl Recipe {
    /// The recipe as an index entry (kind `recipe`): its title and keywords
    /// first, so that they are embedded and searched with the body.
    pub fn entry(&self) -> DocEntry {
        DocEntry {
            name: self.name.clone(),
            aliases: Vec::new(),
            kind: "recipe".into(),
            signature: String::new(),
            doc: format!(
                "{}.\n\n{USE_FOR}{}.\n\n{}",
                self.title, self.keywords, self.body
            ),
            module: "recipe".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recipe_file_is_listed_and_reads() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge/recipes");
        let mut files: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
            .collect();
        files.sort();
        let listed: Vec<&str> = RECIPES.iter().map(|(s, _)| *s).collect();
        assert_eq!(files, listed, "knowledge/recipes/*.md and RECIPES differ");
        for recipe in all().unwrap() {
            assert!(!recipe.title.is_empty() && !recipe.keywords.is_empty());
            assert!(
                recipe.code.contains("assert"),
                "{} checks its result",
                recipe.name
            );
            assert!(recipe.entry().doc.starts_with(&recipe.title));
        }
    }

    #[test]
    fn a_bad_recipe_names_its_file_and_line() {
        let err = parse("x", "no title").unwrap_err().to_string();
        assert_eq!(
            err,
            "knowledge/recipes/x.md line 1: the first line must be a `# ` title"
        );
        let err = parse("x", "# T\n\nwords\n").unwrap_err().to_string();
        assert!(
            err.starts_with("knowledge/recipes/x.md line 3: expected `keywords:"),
            "{err}"
        );
        let err = parse("x", "# T\nkeywords: a\n\ntext\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no ```python snippet"), "{err}");
    }
}
