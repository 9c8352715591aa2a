//! A wide table's columns written compactly. Census and survey tables
//! carry hundreds of columns named alike but for their numbers
//! (`B01001_001E` … `B01001_049E`); listed one by one with their types,
//! one such table's entry outgrew the card's whole budget and the card
//! then showed no entry at all. Past [`LISTED`] columns, columns of one
//! type named alike are written once with their numbers' ranges
//! (`B01001_{001..049}E (Integer, 49 columns)`), and the list stops after
//! [`SHOWN_ITEMS`] items.

use super::series::{ranged, split};

/// Columns listed one by one up to this many.
pub(super) const LISTED: usize = 30;

/// Fewest columns written as one range.
const GROUP_MIN: usize = 3;

/// Items (columns or ranges) shown at most.
const SHOWN_ITEMS: usize = 40;

/// `fields` (name, type) as the card's columns line shows them, without
/// the `columns: ` label.
pub(super) fn text(fields: &[(String, String)]) -> String {
    if fields.is_empty() {
        return "none".into();
    }
    if fields.len() <= LISTED {
        let cols: Vec<String> = fields.iter().map(|(n, t)| format!("{n} ({t})")).collect();
        return cols.join(", ");
    }
    // Groups by the text around the digits and the type, in the order of
    // their first column.
    struct Group<'a> {
        texts: Vec<String>,
        kind: &'a str,
        names: Vec<&'a str>,
        slots: Vec<Vec<String>>,
    }
    let mut groups: Vec<Group> = Vec::new();
    for (name, kind) in fields {
        let (texts, digits) = split(name);
        let found = groups
            .iter_mut()
            .find(|g| !digits.is_empty() && g.kind == kind && g.texts == texts);
        match found {
            Some(group) => {
                group.names.push(name);
                for (slot, d) in group.slots.iter_mut().zip(digits) {
                    slot.push(d);
                }
            }
            None => groups.push(Group {
                slots: digits.into_iter().map(|d| vec![d]).collect(),
                texts,
                kind,
                names: vec![name],
            }),
        }
    }
    let mut items: Vec<String> = Vec::new();
    for group in &groups {
        if group.names.len() >= GROUP_MIN {
            items.push(format!(
                "{} ({}, {} columns)",
                ranged(&group.texts, &group.slots),
                group.kind,
                group.names.len()
            ));
        } else {
            items.extend(group.names.iter().map(|n| format!("{n} ({})", group.kind)));
        }
    }
    let more = items.len().saturating_sub(SHOWN_ITEMS);
    items.truncate(SHOWN_ITEMS);
    let mut text = format!("{} in all: {}", fields.len(), items.join(", "));
    if more > 0 {
        text.push_str(&format!(", … and {more} more"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(names: &[(&str, &str)]) -> Vec<(String, String)> {
        names
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn a_narrow_table_lists_every_column() {
        assert_eq!(
            text(&fields(&[("a", "String"), ("b2", "Real")])),
            "a (String), b2 (Real)"
        );
        assert_eq!(text(&[]), "none");
    }

    #[test]
    fn a_census_table_writes_columns_named_alike_once_with_their_ranges() {
        let mut wide = vec![
            ("GEOID".to_string(), "String".to_string()),
            ("NAME".into(), "String".into()),
        ];
        for i in 1..=49 {
            wide.push((format!("B01001_{i:03}E"), "Integer".into()));
            wide.push((format!("B01001_{i:03}M"), "Real".into()));
        }
        wide.push(("pop2020".into(), "Integer".into()));
        assert_eq!(
            text(&wide),
            "101 in all: GEOID (String), NAME (String), B01001_{001..049}E (Integer, 49 columns), \
             B01001_{001..049}M (Real, 49 columns), pop2020 (Integer)"
        );
    }

    #[test]
    fn a_wide_table_of_unlike_names_stops_after_forty_items() {
        let wide: Vec<(String, String)> = (0..60)
            .map(|i| {
                (
                    format!("{}x", char::from(b'a' + (i % 26) as u8)).repeat(1 + i / 26),
                    "Real".into(),
                )
            })
            .collect();
        let shown = text(&wide);
        assert!(
            shown.starts_with("60 in all: ax (Real), bx (Real)"),
            "{shown}"
        );
        assert!(shown.ends_with(", … and 20 more"), "{shown}");
    }
}
