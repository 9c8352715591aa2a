//! `--tasks 1-10,18,heat-island`: which tasks of a suite to run.
//!
//! An item is a number (`18`), an inclusive range (`1-10`), an exact id,
//! or a label (`library=shapely`). Numbers match a task id's trailing
//! digits, so `3` selects `T03`; in a unit suite they are the cases'
//! positions ([`Selection::matches_case`]).

use std::ops::RangeInclusive;

use super::labels::Labels;

/// A `--tasks` range that runs backwards (`5-2`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{item}`: the range runs backwards ({from} > {to})")]
pub struct BackwardsRange {
    /// The item as written.
    pub item: String,
    /// Its first number.
    pub from: u32,
    /// Its last number.
    pub to: u32,
}

/// A parsed `--tasks` value; the empty selection selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    ranges: Vec<RangeInclusive<u32>>,
    ids: Vec<String>,
    labels: Vec<(String, String)>,
}

impl Selection {
    /// Parses `1-10,18,heat-island`.
    pub fn parse(text: &str) -> Result<Selection, BackwardsRange> {
        let mut selection = Selection::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Ok(n) = item.parse::<u32>() {
                selection.ranges.push(n..=n);
                continue;
            }
            match item
                .split_once('-')
                .map(|(a, b)| (a.trim().parse::<u32>(), b.trim().parse::<u32>()))
            {
                Some((Ok(a), Ok(b))) if a <= b => selection.ranges.push(a..=b),
                Some((Ok(from), Ok(to))) => {
                    return Err(BackwardsRange {
                        item: item.to_string(),
                        from,
                        to,
                    })
                }
                _ => match item.split_once('=') {
                    Some((key, value)) => selection
                        .labels
                        .push((key.trim().to_string(), value.trim().to_string())),
                    None => selection.ids.push(item.to_string()),
                },
            }
        }
        Ok(selection)
    }

    /// Whether nothing was asked for (everything is selected).
    fn is_empty(&self) -> bool {
        self.ranges.is_empty() && self.ids.is_empty() && self.labels.is_empty()
    }

    /// Whether the case at `number` (1-based, over the whole suite) with
    /// this `id` and these labels (`("library", "shapely")`, possibly
    /// several libraries) is selected: by its number, its id (`buffer_area`
    /// or `shapely/buffer_area`), a label (`library=shapely`,
    /// `operation=terrain`) or a bare library name (`shapely`).
    pub fn matches_case(&self, number: u32, id: &str, labels: &[(&str, &str)]) -> bool {
        if self.is_empty() {
            return true;
        }
        let libraries: Vec<&str> = labels
            .iter()
            .filter(|(k, _)| *k == "library")
            .map(|(_, v)| *v)
            .collect();
        self.ranges.iter().any(|r| r.contains(&number))
            || self.ids.iter().any(|i| {
                i == id
                    || libraries.contains(&i.as_str())
                    || libraries.iter().any(|l| *i == format!("{l}/{id}"))
            })
            || self
                .labels
                .iter()
                .any(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v))
    }

    /// Whether the task with this id and labels is selected: by its id or
    /// number, or by a label (`operation=terrain`) when it has labels.
    pub fn matches_task(&self, id: &str, labels: &Labels) -> bool {
        self.matches(id)
            || (!labels.is_empty()
                && self
                    .labels
                    .iter()
                    .any(|(k, v)| labels.get(k) == Some(v.as_str())))
    }

    /// Whether the task with this id is selected.
    pub fn matches(&self, id: &str) -> bool {
        if self.is_empty() {
            return true;
        }
        if self.ids.iter().any(|i| i == id) {
            return true;
        }
        let digits = &id[id.trim_end_matches(|c: char| c.is_ascii_digit()).len()..];
        match digits.parse::<u32>() {
            Ok(n) => self.ranges.iter().any(|r| r.contains(&n)),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_selected_by_a_label_only_when_they_have_labels() {
        let labels = Labels {
            library: "rasterio".into(),
            data_type: "raster".into(),
            operation: "terrain".into(),
            difficulty: "easy".into(),
        };
        let s = Selection::parse("operation=terrain").unwrap();
        assert!(s.matches_task("T11", &labels));
        assert!(!s.matches_task("T11", &Labels::default()));
        let s = Selection::parse("difficulty=hard, 3").unwrap();
        assert!(!s.matches_task("T11", &labels));
        assert!(s.matches_task("T03", &labels));
        assert!(Selection::parse("")
            .unwrap()
            .matches_task("T11", &Labels::default()));
    }

    #[test]
    fn numbers_ranges_and_ids_select() {
        let s = Selection::parse("1-3, 18,heat-island").unwrap();
        for id in ["T01", "T03", "T18", "heat-island", "2"] {
            assert!(s.matches(id), "{id}");
        }
        for id in ["T04", "T180", "island", "heat"] {
            assert!(!s.matches(id), "{id}");
        }
        assert!(Selection::parse("").unwrap().matches("anything"));
        assert!(Selection::parse("5-2")
            .unwrap_err()
            .to_string()
            .contains("backwards"));
    }

    #[test]
    fn unit_cases_are_selected_by_position_id_or_library() {
        let lib = [("library", "shapely")];
        let by_number = Selection::parse("2-3").unwrap();
        assert!(by_number.matches_case(2, "a", &lib) && !by_number.matches_case(4, "a", &lib));
        for text in [
            "shapely",
            "library=shapely",
            "shapely/buffer_area",
            "buffer_area",
        ] {
            let s = Selection::parse(text).unwrap();
            assert!(s.matches_case(40, "buffer_area", &lib), "{text}");
            assert!(
                !s.matches_case(40, "reproject", &[("library", "pyproj")]),
                "{text}"
            );
        }
    }
}
