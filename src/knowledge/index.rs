//! BM25 over the entries with tantivy, held in memory: built from
//! `docs.jsonl` when the library opens (a few thousand entries index in a
//! fraction of a second), so only the docs and vectors are kept on disk.
//! Three fields, split at non-letters (dots, underscores), lower-cased and
//! stemmed (English): the names (canonical and aliases), the summary (the
//! docstring's first paragraph, what the object is for) and the body
//! (signature and whole docstring). The name and the summary weigh more
//! than the body, so that a class whose long docstring mentions the query
//! once is not outranked by every short docstring that does.

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, INDEXED, STORED,
};
use tantivy::{doc, Index, IndexReader, TantivyDocument};

use super::DocEntry;

/// The in-memory BM25 index.
pub struct Bm25 {
    index: Index,
    reader: IndexReader,
    id: Field,
    name: Field,
    summary: Field,
    body: Field,
}

/// Boost of the name field over the body.
const NAME_BOOST: f32 = 2.0;
/// Boost of the summary over the body.
const SUMMARY_BOOST: f32 = 1.5;
/// The writer's memory budget (tantivy's floor is 15 MB per thread).
const WRITER_BYTES: usize = 30_000_000;

impl Bm25 {
    /// Indexes `entries` (their position is their id).
    pub fn build(entries: &[DocEntry]) -> tantivy::Result<Bm25> {
        let mut schema = Schema::builder();
        let id = schema.add_u64_field("id", STORED | INDEXED);
        // English stemming: "burn" finds "burned", "raster" finds "rasterize".
        let stemmed = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("en_stem")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let name = schema.add_text_field("name", stemmed.clone());
        let summary = schema.add_text_field("summary", stemmed.clone());
        let body = schema.add_text_field("body", stemmed);
        let index = Index::create_in_ram(schema.build());
        let mut writer = index.writer_with_num_threads(1, WRITER_BYTES)?;
        for (i, e) in entries.iter().enumerate() {
            let mut names: Vec<&str> = Vec::new();
            for n in std::iter::once(&e.name).chain(&e.aliases) {
                for word in n.split(|c: char| !c.is_alphanumeric()) {
                    if !word.is_empty() && !names.contains(&word) {
                        names.push(word);
                    }
                }
            }
            let first = e.doc.split("\n\n").next().unwrap_or("");
            // A recipe is about what its prose says; its snippet mentions
            // rasters and polygons in passing and would match every query.
            let text = if e.kind == "recipe" {
                without_code(&e.doc)
            } else {
                e.doc.clone()
            };
            writer.add_document(doc!(
                id => i as u64,
                name => names.join(" "),
                summary => first,
                body => format!("{} {}", e.signature, text)
            ))?;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(Bm25 {
            index,
            reader,
            id,
            name,
            summary,
            body,
        })
    }

    /// The ids of the best `k` entries for `query`, best first (any text:
    /// query syntax the parser cannot read is taken as words).
    pub fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let mut parser =
            QueryParser::for_index(&self.index, vec![self.name, self.summary, self.body]);
        parser.set_field_boost(self.name, NAME_BOOST);
        parser.set_field_boost(self.summary, SUMMARY_BOOST);
        // Words only: punctuation is query syntax (`:`, `(`, `"`…), and a
        // dotted or snake_case name would become a phrase query.
        let words: String = query
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { ' ' })
            .collect();
        let (parsed, _) = parser.parse_query_lenient(&words);
        let searcher = self.reader.searcher();
        let Ok(top) = searcher.search(&parsed, &TopDocs::with_limit(k.max(1)).order_by_score())
        else {
            return Vec::new();
        };
        top.into_iter()
            .filter_map(|(_, address)| {
                let stored: TantivyDocument = searcher.doc(address).ok()?;
                stored
                    .get_first(self.id)
                    .and_then(|v| v.as_u64())
                    .map(|v| v as usize)
            })
            .collect()
    }
}

/// Markdown without its fenced code blocks.
fn without_code(text: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, doc: &str) -> DocEntry {
        DocEntry {
            name: name.into(),
            aliases: Vec::new(),
            kind: "function".into(),
            signature: "(x)".into(),
            doc: doc.into(),
            module: String::new(),
        }
    }

    #[test]
    fn names_and_docstrings_are_found_and_syntax_is_harmless() {
        let entries = [
            entry(
                "rasterio.features.rasterize",
                "Return an image array with input geometries burned in.",
            ),
            entry(
                "geopandas.GeoDataFrame.to_crs",
                "Transform geometries to a new coordinate reference system.",
            ),
            entry(
                "scipy.ndimage.distance_transform_edt",
                "Exact Euclidean distance transform.",
            ),
        ];
        let bm25 = Bm25::build(&entries).unwrap();
        assert_eq!(bm25.search("rasterize", 3).first(), Some(&0));
        assert_eq!(
            bm25.search("coordinate reference system", 3).first(),
            Some(&1)
        );
        assert_eq!(bm25.search("to_crs", 3).first(), Some(&1));
        assert_eq!(bm25.search("euclidean distance", 3).first(), Some(&2));
        // Query syntax in a user's text does not fail the search.
        assert_eq!(
            bm25.search("geometries: \"burned (in\"", 3).first(),
            Some(&0)
        );
        assert!(bm25.search("zzzz", 3).is_empty());
    }
}
