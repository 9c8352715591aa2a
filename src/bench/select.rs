//! `--tasks 1-10,18,heat-island`: which tasks of a suite to run.
//!
//! An item is a number (`18`), an inclusive range (`1-10`) or an exact id.
//! Numbers match a task id's trailing digits, so `3` selects `T03`.

use std::ops::RangeInclusive;

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
                _ => selection.ids.push(item.to_string()),
            }
        }
        Ok(selection)
    }

    /// Whether the task with this id is selected.
    pub fn matches(&self, id: &str) -> bool {
        if self.ranges.is_empty() && self.ids.is_empty() {
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
}
