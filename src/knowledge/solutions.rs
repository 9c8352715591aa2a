//! GeoAgent's third retrieval corpus, *solutions* (§3.2): the gold
//! solutions of a suite's other tasks. A task is briefed with the solved
//! task most like it — never its own gold. Searched by BM25 over each
//! task's text and code (the same stemmed index as the library docs;
//! GeoAgent embeds with its own model, which is not public).

use super::index::Bm25;
use super::DocEntry;

/// One solved task of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// The task's id (`T03`, `G07`).
    pub task: String,
    /// Its title.
    pub title: String,
    /// What the task asks (instruction, or context and steps).
    pub text: String,
    /// Its gold code.
    pub code: String,
}

/// A suite's solutions, indexed for search.
pub struct Solutions {
    items: Vec<Solution>,
    bm25: Bm25,
}

impl std::fmt::Debug for Solutions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solutions")
            .field("tasks", &self.items.len())
            .finish_non_exhaustive()
    }
}

/// Solutions put in a brief.
pub const BRIEF_SOLUTIONS: usize = 1;

impl Solutions {
    /// Indexes `items` (their task text and code).
    pub fn new(items: Vec<Solution>) -> Result<Solutions, String> {
        let entries: Vec<DocEntry> = items
            .iter()
            .map(|s| DocEntry {
                name: format!("solution.{}", s.task),
                kind: "solution".into(),
                doc: format!("{}\n\n{}\n\n{}", s.title, s.text, s.code),
                ..DocEntry::default()
            })
            .collect();
        let bm25 = Bm25::build(&entries).map_err(|e| format!("indexing the solutions: {e}"))?;
        Ok(Solutions { items, bm25 })
    }

    /// Tasks in the corpus.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the corpus is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The `k` solutions most like `query`, best first, never task `own`'s.
    pub fn retrieve(&self, query: &str, own: &str, k: usize) -> Vec<&Solution> {
        self.bm25
            .search(query, k + 1)
            .into_iter()
            .filter_map(|i| self.items.get(i))
            .filter(|s| s.task != own)
            .take(k)
            .collect()
    }

    /// `brief` with the solved tasks most like `query` appended (task
    /// `own`'s never), and their ids for the transcript.
    pub fn brief(&self, brief: String, query: &str, own: &str) -> (String, Vec<String>) {
        let found = self.retrieve(query, own, BRIEF_SOLUTIONS);
        if found.is_empty() {
            return (brief, Vec::new());
        }
        let mut text = format!("{brief}\n\n## A solved task like this one (another task of this suite, with its solution; its data and names are not this task's)\n");
        for s in &found {
            text.push_str(&format!(
                "\n### {} — {}\n{}\n\n```python\n{}\n```\n",
                s.task,
                s.title,
                s.text.trim(),
                s.code.trim()
            ));
        }
        let ids = found
            .iter()
            .map(|s| format!("solution.{}", s.task))
            .collect();
        (text, ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solution(task: &str, text: &str, code: &str) -> Solution {
        Solution {
            task: task.into(),
            title: format!("task {task}"),
            text: text.into(),
            code: code.into(),
        }
    }

    fn corpus() -> Solutions {
        Solutions::new(vec![
            solution(
                "A",
                "Buffer the parks by 400 m and count the homes inside",
                "parks.buffer(400)",
            ),
            solution(
                "B",
                "Compute NDVI from the red and near-infrared bands",
                "(nir - red) / (nir + red)",
            ),
            solution(
                "C",
                "Buffer the schools by 300 m and count the pupils",
                "schools.buffer(300)",
            ),
        ])
        .unwrap()
    }

    #[test]
    fn the_most_similar_other_task_is_found_and_never_the_own() {
        let c = corpus();
        let query = "Buffer the parks by 400 m and count the homes inside";
        // Its own text matches A best; A is left out, C follows.
        let found: Vec<&str> = c
            .retrieve(query, "A", 2)
            .iter()
            .map(|s| s.task.as_str())
            .collect();
        assert_eq!(found[0], "C", "{found:?}");
        assert!(!found.contains(&"A"), "{found:?}");
        let ndvi: Vec<&str> = c
            .retrieve("NDVI of the bands", "X", 1)
            .iter()
            .map(|s| s.task.as_str())
            .collect();
        assert_eq!(ndvi, ["B"]);
    }

    #[test]
    fn the_brief_carries_the_solution_and_says_whose_it_is() {
        let (text, ids) = corpus().brief("Step 1".into(), "buffer the schools", "C");
        assert_eq!(ids, ["solution.A"]);
        assert!(
            text.starts_with("Step 1\n\n## A solved task like this one"),
            "{text}"
        );
        assert!(
            text.contains("### A — task A") && text.contains("parks.buffer(400)"),
            "{text}"
        );
        assert!(!text.contains("schools.buffer(300)"), "{text}");
        // Nothing like it: the brief is unchanged.
        let lone = Solutions::new(vec![solution("A", "x", "y")]).unwrap();
        assert_eq!(
            lone.brief("b".into(), "x", "A"),
            ("b".to_string(), Vec::new())
        );
    }
}
