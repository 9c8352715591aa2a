//! File series: five or more files of one folder named alike but for their
//! numbers — tiles (`tile_03_12.tif`), dates (`ndvi_2021_07.tif`), one
//! table per station (`obs_017.csv`). The card describes a series' first
//! member in full and the series in a few lines (its name pattern, the glob
//! that lists it, numbers absent from its ranges, and what its members
//! share: [`super::series_members`]); `list_files` shows it as one line.
//! Before, a folder of 2,000 tiles spent the card's budget on 25
//! near-identical entries and counted the rest by extension.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Fewest files that make a series (two or three files named alike, such
/// as the land use of 2001 and of 2016, keep an entry each).
pub const MIN_MEMBERS: usize = 5;

/// Absent members named at most.
const SHOWN_ABSENT: usize = 5;

/// Largest number of name combinations searched for absent members.
const ABSENT_SEARCH: u64 = 100_000;

/// Files of one folder named alike but for the digits in their names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// The members' paths relative to the data folder, in listing order.
    pub members: Vec<String>,
    /// Their total size in bytes.
    pub bytes: u64,
    /// The folder they are in, relative, with its `/` (or empty).
    folder: String,
    /// The name's text around its digit runs (one more than `slots`).
    texts: Vec<String>,
    /// Each digit run's digits, member by member.
    slots: Vec<Vec<String>>,
}

/// The series among `files` (relative paths, sorted, with sizes), ordered
/// by their first member. A file belongs to one series at most.
pub fn find<'a>(files: impl IntoIterator<Item = &'a (String, u64)>) -> Vec<Series> {
    // (folder, texts around the digits) → (path, size, digits) of each file.
    type Key = (String, Vec<String>);
    type Named<'a> = (&'a String, u64, Vec<String>);
    let mut groups: BTreeMap<Key, Vec<Named<'a>>> = BTreeMap::new();
    for (rel, size) in files {
        let (folder, name) = match rel.rsplit_once('/') {
            Some((folder, name)) => (format!("{folder}/"), name),
            None => (String::new(), rel.as_str()),
        };
        let (texts, digits) = split(name);
        if !digits.is_empty() {
            groups
                .entry((folder, texts))
                .or_default()
                .push((rel, *size, digits));
        }
    }
    let mut found: Vec<Series> = groups
        .into_iter()
        .filter(|(_, members)| members.len() >= MIN_MEMBERS)
        .map(|((folder, texts), members)| {
            let mut slots = vec![Vec::with_capacity(members.len()); texts.len() - 1];
            for (_, _, digits) in &members {
                for (slot, d) in slots.iter_mut().zip(digits) {
                    slot.push(d.clone());
                }
            }
            Series {
                bytes: members.iter().map(|m| m.1).sum(),
                members: members.iter().map(|m| m.0.clone()).collect(),
                folder,
                texts,
                slots,
            }
        })
        .collect();
    found.sort_by(|a, b| a.members[0].cmp(&b.members[0]));
    found
}

/// Names alike but for their digits, written once with each varying
/// number as its range: `texts` around the digit runs, `slots` each run's
/// digits name by name (`tile_{00..39}_{00..49}.tif`).
pub(super) fn ranged(texts: &[String], slots: &[Vec<String>]) -> String {
    let mut name = texts[0].clone();
    for (slot, text) in slots.iter().zip(&texts[1..]) {
        let low = slot.iter().min_by(|a, b| numeric(a, b));
        let high = slot.iter().max_by(|a, b| numeric(a, b));
        match (low, high) {
            (Some(low), Some(high)) if low != high => name.push_str(&format!("{{{low}..{high}}}")),
            (Some(one), _) => name.push_str(one),
            _ => {}
        }
        name.push_str(text);
    }
    name
}

/// A file name cut at its digit runs: the texts around them (one more than
/// the runs; empty at an end where a run is) and the runs.
pub(super) fn split(name: &str) -> (Vec<String>, Vec<String>) {
    let mut texts = vec![String::new()];
    let mut digits: Vec<String> = Vec::new();
    let mut in_digits = false;
    for c in name.chars() {
        match (c.is_ascii_digit(), in_digits) {
            (true, false) => {
                digits.push(c.to_string());
                in_digits = true;
            }
            (true, true) => digits.last_mut().into_iter().for_each(|d| d.push(c)),
            (false, true) => {
                texts.push(c.to_string());
                in_digits = false;
            }
            (false, false) => texts.last_mut().into_iter().for_each(|t| t.push(c)),
        }
    }
    if in_digits {
        texts.push(String::new());
    }
    (texts, digits)
}

/// Digit strings in numeric order (`7` < `007`? equal; `9` < `10`).
fn numeric(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    (a.len(), a).cmp(&(b.len(), b))
}

impl Series {
    /// Each member of `all` (paths relative to the data folder), with its
    /// series.
    pub fn by_member(all: &[Series]) -> std::collections::HashMap<&str, &Series> {
        all.iter()
            .flat_map(|s| s.members.iter().map(move |m| (m.as_str(), s)))
            .collect()
    }

    /// How many files the series holds.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the series holds no file (never, for one [`find`] returns).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether the digit run `k` differs between members.
    fn varies(&self, k: usize) -> bool {
        let slot = &self.slots[k];
        slot.iter().any(|d| d != &slot[0])
    }

    /// The series' name, its varying numbers as ranges:
    /// `data/dem/tile_{00..39}_{00..49}.tif`.
    pub fn name(&self, shown_as: &str) -> String {
        format!(
            "{shown_as}{}{}",
            self.folder,
            ranged(&self.texts, &self.slots)
        )
    }

    /// A line of Python that lists exactly the members among `files`
    /// (every file of the data folder) into `paths`, in the order of their
    /// numbers: a glob with `*` for each varying number, or `[0-9]` per
    /// digit where `*` would also take other files, or else a `*` glob
    /// filtered by a regular expression. `None` where a name holds glob or
    /// quote characters.
    pub fn listing(&self, shown_as: &str, files: &[(String, u64)]) -> Option<String> {
        if self
            .texts
            .iter()
            .any(|t| t.contains(['*', '?', '[', '\'', '\\']))
        {
            return None;
        }
        let neighbours: Vec<&str> = files
            .iter()
            .filter_map(|(rel, _)| rel.strip_prefix(self.folder.as_str()))
            .filter(|name| !name.contains('/'))
            .collect();
        let exact = |tokens: &[Token]| {
            neighbours.iter().filter(|n| matches(tokens, n)).count() == self.len()
        };
        let glob_text = |tokens: &[Token]| {
            let text: String = tokens.iter().map(Token::text).collect();
            format!("{shown_as}{}{text}", self.folder)
        };
        let star = self.pattern(|_| Some(vec![Token::Any]))?;
        let digits = self.pattern(|slot| {
            let width = slot[0].len();
            slot.iter()
                .all(|d| d.len() == width)
                .then(|| vec![Token::Digit; width])
        });
        let (imports, found) = if exact(&star) {
            ("glob", format!("glob.glob('{}')", glob_text(&star)))
        } else if let Some(digits) = digits.filter(|d| exact(d)) {
            ("glob", format!("glob.glob('{}')", glob_text(&digits)))
        } else {
            let regex = self.regex(shown_as);
            (
                "glob, re",
                format!(
                    "(p for p in glob.glob('{}') if re.fullmatch(r'{regex}', p))",
                    glob_text(&star)
                ),
            )
        };
        Some(if self.unpadded() {
            format!(
                "import glob, re; paths = sorted({found}, key=lambda p: [int(n) for n in re.findall(r'\\d+', p)])"
            )
        } else {
            format!("import {imports}; paths = sorted({found})")
        })
    }

    /// A Python regular expression of the members' paths, `\d+` for each
    /// varying number.
    fn regex(&self, shown_as: &str) -> String {
        let mut regex = escape(&format!("{shown_as}{}{}", self.folder, self.texts[0]));
        for (k, slot) in self.slots.iter().enumerate() {
            if self.varies(k) {
                regex.push_str("\\d+");
            } else {
                regex.push_str(&slot[0]);
            }
            regex.push_str(&escape(&self.texts[k + 1]));
        }
        regex
    }

    /// The name as glob tokens, each varying number replaced by what
    /// `number` makes of its digit strings (`None`: no such pattern).
    fn pattern(&self, number: impl Fn(&[String]) -> Option<Vec<Token>>) -> Option<Vec<Token>> {
        let mut tokens: Vec<Token> = self.texts[0].chars().map(Token::Char).collect();
        for (k, slot) in self.slots.iter().enumerate() {
            if self.varies(k) {
                tokens.extend(number(slot)?);
            } else {
                tokens.extend(slot[0].chars().map(Token::Char));
            }
            tokens.extend(self.texts[k + 1].chars().map(Token::Char));
        }
        Some(tokens)
    }

    /// Whether a varying number is written in several widths (`obs_2`,
    /// `obs_10`): `sorted()` then puts 10 before 2.
    pub fn unpadded(&self) -> bool {
        (0..self.slots.len()).any(|k| {
            self.varies(k) && {
                let width = self.slots[k][0].len();
                self.slots[k].iter().any(|d| d.len() != width)
            }
        })
    }

    /// The members absent from the ranges the numbers span, as their
    /// count and the first few names: only where the series fills at least
    /// half of those ranges (a gap in a sequence, not sparse identifiers).
    pub fn absent(&self, shown_as: &str) -> Option<(u64, Vec<String>)> {
        let varying: Vec<usize> = (0..self.slots.len()).filter(|&k| self.varies(k)).collect();
        let mut ranges = Vec::new();
        let mut expected: u64 = 1;
        for &k in &varying {
            let values: Vec<u64> = self.slots[k]
                .iter()
                .map(|d| d.parse().ok())
                .collect::<Option<_>>()?;
            let (low, high) = (*values.iter().min()?, *values.iter().max()?);
            let width = self.slots[k][0].len();
            let fixed = self.slots[k].iter().all(|d| d.len() == width);
            ranges.push((low, high, fixed.then_some(width)));
            expected = expected.checked_mul(high - low + 1)?;
        }
        let present: BTreeSet<Vec<u64>> = (0..self.len())
            .map(|m| {
                varying
                    .iter()
                    .map(|&k| self.slots[k][m].parse().unwrap_or(u64::MAX))
                    .collect()
            })
            .collect();
        let missing = expected.checked_sub(present.len() as u64)?;
        if missing == 0 || expected > ABSENT_SEARCH || present.len() as u64 * 2 < expected {
            return None;
        }
        let mut names = Vec::new();
        let mut combination: Vec<u64> = ranges.iter().map(|r| r.0).collect();
        'search: while names.len() < SHOWN_ABSENT {
            if !present.contains(&combination) {
                names.push(self.named(shown_as, &varying, &combination, &ranges));
            }
            // The next combination, the last number counting fastest.
            for i in (0..combination.len()).rev() {
                if combination[i] < ranges[i].1 {
                    combination[i] += 1;
                    continue 'search;
                }
                combination[i] = ranges[i].0;
            }
            break;
        }
        Some((missing, names))
    }

    /// The name a member with these varying numbers would have.
    fn named(
        &self,
        shown_as: &str,
        varying: &[usize],
        numbers: &[u64],
        ranges: &[(u64, u64, Option<usize>)],
    ) -> String {
        let mut name = format!("{shown_as}{}{}", self.folder, self.texts[0]);
        for (k, slot) in self.slots.iter().enumerate() {
            match varying.iter().position(|&v| v == k) {
                Some(i) => match ranges[i].2 {
                    Some(width) => name.push_str(&format!("{:0width$}", numbers[i])),
                    None => name.push_str(&numbers[i].to_string()),
                },
                None => name.push_str(&slot[0]),
            }
            name.push_str(&self.texts[k + 1]);
        }
        name
    }
}

/// `text` with the characters special to Python's `re` escaped.
fn escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = ".^$*+?{}[]|()\\".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// One piece of a glob pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `*`: any run of characters.
    Any,
    /// `[0-9]`: one digit.
    Digit,
}

impl Token {
    fn text(&self) -> String {
        match self {
            Token::Char(c) => c.to_string(),
            Token::Any => "*".into(),
            Token::Digit => "[0-9]".into(),
        }
    }
}

/// Whether `name` matches the glob `tokens` (as `fnmatch` does for `*` and
/// `[0-9]`).
fn matches(tokens: &[Token], name: &str) -> bool {
    let chars: Vec<char> = name.chars().collect();
    // reachable[j]: the tokens so far can match the first j characters.
    let mut reachable = vec![false; chars.len() + 1];
    reachable[0] = true;
    for token in tokens {
        let mut next = vec![false; chars.len() + 1];
        for j in 0..=chars.len() {
            if !reachable[j] {
                continue;
            }
            match token {
                Token::Any => next[j..].iter_mut().for_each(|r| *r = true),
                Token::Digit if chars.get(j).is_some_and(|c| c.is_ascii_digit()) => {
                    next[j + 1] = true
                }
                Token::Char(c) if chars.get(j) == Some(c) => next[j + 1] = true,
                _ => {}
            }
        }
        reachable = next;
    }
    reachable[chars.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> Vec<(String, u64)> {
        let mut files: Vec<(String, u64)> = names.iter().map(|n| (n.to_string(), 10)).collect();
        files.sort();
        files
    }

    #[test]
    fn names_alike_but_for_their_numbers_make_a_series_of_five_or_more() {
        let mut names: Vec<String> = (0..3)
            .flat_map(|i| (0..4).map(move |j| format!("dem/tile_{i:02}_{j:02}.tif")))
            .collect();
        names.extend(
            [
                "landuse_2001.tif",
                "landuse_2016.tif",
                "roads.shp",
                "dem/readme.txt",
            ]
            .map(String::from),
        );
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let all = files(&refs);
        let series = find(&all);
        assert_eq!(series.len(), 1, "{series:?}");
        let tiles = &series[0];
        assert_eq!(tiles.len(), 12);
        assert_eq!(tiles.bytes, 120);
        assert_eq!(tiles.members[0], "dem/tile_00_00.tif");
        assert_eq!(tiles.name("data/"), "data/dem/tile_{00..02}_{00..03}.tif");
        assert_eq!(
            tiles.listing("data/", &all).as_deref(),
            Some("import glob; paths = sorted(glob.glob('data/dem/tile_*_*.tif'))")
        );
        assert!(!tiles.unpadded());
        assert_eq!(tiles.absent("data/"), None);
    }

    #[test]
    fn a_constant_number_stays_in_the_name_and_unpadded_numbers_are_flagged() {
        let names: Vec<String> = (1..=12).map(|m| format!("ndvi_2021_{m}.tif")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let all = files(&refs);
        let series = &find(&all)[0];
        assert_eq!(series.name("data/"), "data/ndvi_2021_{1..12}.tif");
        assert_eq!(series.members[0], "ndvi_2021_1.tif");
        assert!(series.unpadded());
    }

    #[test]
    fn absent_members_of_a_sequence_are_named_but_sparse_identifiers_are_not() {
        let months: Vec<String> = (1..=12)
            .filter(|m| *m != 4 && *m != 9)
            .map(|m| format!("rain_{m:02}.csv"))
            .collect();
        let refs: Vec<&str> = months.iter().map(String::as_str).collect();
        let series = &find(&files(&refs))[0];
        assert_eq!(
            series.absent("data/"),
            Some((
                2,
                vec![
                    "data/rain_04.csv".to_string(),
                    "data/rain_09.csv".to_string()
                ]
            ))
        );
        let stations = files(&[
            "st_10234.csv",
            "st_58811.csv",
            "st_60001.csv",
            "st_71230.csv",
            "st_99999.csv",
        ]);
        assert_eq!(find(&stations)[0].absent("data/"), None);
        // Two numbers: the missing tile of a 3 × 3 grid.
        let grid: Vec<String> = (0..3)
            .flat_map(|i| (0..3).map(move |j| format!("t{i}_{j}.tif")))
            .filter(|n| n != "t1_2.tif")
            .collect();
        let refs: Vec<&str> = grid.iter().map(String::as_str).collect();
        let series = &find(&files(&refs))[0];
        assert_eq!(series.absent(""), Some((1, vec!["t1_2.tif".to_string()])));
    }

    #[test]
    fn the_listing_narrows_to_digits_or_a_regex_where_a_star_would_take_other_files() {
        let mut names: Vec<String> = (0..6).map(|i| format!("b{i}.tif")).collect();
        names.push("b_mask.tif".into());
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let all = files(&refs);
        assert_eq!(
            find(&all)[0].listing("data/", &all).as_deref(),
            Some("import glob; paths = sorted(glob.glob('data/b[0-9].tif'))")
        );
        // Widths that vary and a star that over-takes: a regex, and the
        // numbers' order.
        let mut names: Vec<String> = (8..14).map(|i| format!("b{i}.tif")).collect();
        names.push("b_mask.tif".into());
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let all = files(&refs);
        assert_eq!(
            find(&all)[0].listing("data/", &all).as_deref(),
            Some(
                "import glob, re; paths = sorted((p for p in glob.glob('data/b*.tif') if re.fullmatch(r'data/b\\d+\\.tif', p)), key=lambda p: [int(n) for n in re.findall(r'\\d+', p)])"
            )
        );
        let quoted = files(&[
            "it's_1.csv",
            "it's_2.csv",
            "it's_3.csv",
            "it's_4.csv",
            "it's_5.csv",
        ]);
        assert_eq!(find(&quoted)[0].listing("data/", &quoted), None);
    }

    #[test]
    fn the_matcher_follows_fnmatch_for_stars_and_digit_classes() {
        use Token::*;
        let tokens = [Char('a'), Any, Char('.'), Char('t')];
        assert!(matches(&tokens, "a.t"));
        assert!(matches(&tokens, "a_1_2.t"));
        assert!(!matches(&tokens, "a.tx"));
        assert!(matches(&[Char('b'), Digit, Digit], "b07"));
        assert!(!matches(&[Char('b'), Digit, Digit], "b7"));
        assert_eq!(
            split("t12_3.tif"),
            (
                vec!["t".into(), "_".into(), ".tif".into()],
                vec!["12".into(), "3".into()]
            )
        );
        assert_eq!(
            split("2021"),
            (vec!["".into(), "".into()], vec!["2021".into()])
        );
    }
}
