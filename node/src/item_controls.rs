//! Controls that mean something only through the item they sit in: the "+" and "-" beside
//! every dish of a menu, the stepper in every row of a cart. Their names tell them apart from
//! nothing; their items ([`Element::record`]) do. Where the goal names items by their words
//! ("Order one of each item: Grilled Pork Tenderloin, Ice cream sundae", "Order 4 items that
//! are vegan", where "vegan" is the alt text of a dish's icon) and an item's name is no control
//! of its own (a dish's title is plain text, where an email's row is a link that carries the
//! sender), the controls of the items that carry those words are the ones to press. A goal
//! that counts ("4 items") may press one of them that many times.
//!
//! The default policy lifts their priors and offers the counted presses; which item and which
//! control is right is still for the page to tell.
//!
//! The candidates are built in `policy/candidates.rs`: the same control of each such item in one
//! `Action::Check` (no more items than [`goal_count`] says), and where the goal counts, one
//! pressed that many times (`Action::Repeat`); their lift is `item_named` in `policy/signals.rs`.

use std::collections::HashMap;

use forager_protocol::observation::Element;

/// Words of a goal that say nothing about which item it wants.
const PLAIN_WORDS: &[&str] = &[
    "the", "and", "for", "from", "with", "that", "this", "are", "each", "one", "two", "three",
    "four", "five", "six", "seven", "eight", "nine", "ten", "item", "items", "all", "any", "some",
    "then", "them", "their", "which", "click", "press", "button", "select", "choose", "order",
    "buy", "add", "remove", "submit", "please", "want", "need", "have", "into", "onto", "not",
];

/// A word as the items' words are compared: lower case, without a plural's "s" ("peanuts"
/// and "peanut" are one).
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    match lower.strip_suffix('s') {
        Some(rest) if rest.len() >= 3 => rest.to_owned(),
        _ => lower,
    }
}

fn stems(text: &str) -> Vec<String> {
    crate::embed::words(text).map(|w| stem(&w)).collect()
}

/// For each element, how well its item matches the goal's words, from 0 (not at all, or the
/// element is no control of a named item) to 1 (an item that carries the most of them).
///
/// `candidate` says which elements are controls to press; only those that share their role
/// and name with another (the "+" of every dish) are lifted, and only in items where no
/// element's name carries a goal word: there the goal names the control itself ("Like" on
/// her post), or the item has a control of its own (an email's row), and other rules apply.
pub fn item_shares(elements: &[Element], goal: &str, candidate: &[bool]) -> Vec<f64> {
    let mut shares = vec![0.0; elements.len()];
    let goal_words: Vec<String> = crate::embed::words(goal)
        .filter(|w| w.len() >= 3 && w.chars().all(char::is_alphabetic))
        .filter(|w| !PLAIN_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect();
    if goal_words.is_empty() {
        return shares;
    }
    let mut names: HashMap<(&str, &str), usize> = HashMap::new();
    for element in elements {
        *names
            .entry((element.role.as_str(), element.name.as_str()))
            .or_default() += 1;
    }
    // Elements by item, in page order of the items.
    let mut items: Vec<(&str, Vec<usize>)> = Vec::new();
    for (index, element) in elements.iter().enumerate() {
        if element.record.is_empty() {
            continue;
        }
        match items
            .iter_mut()
            .find(|(record, _)| *record == element.record)
        {
            Some((_, members)) => members.push(index),
            None => items.push((&element.record, vec![index])),
        }
    }
    if items.len() < 2 {
        return shares;
    }
    // The goal's words each item carries in its text (not in its controls' names).
    let carried: Vec<Vec<&String>> = items
        .iter()
        .map(|(record, members)| {
            let own: Vec<String> = members
                .iter()
                .flat_map(|&i| stems(&elements[i].name))
                .collect();
            let text = stems(record);
            goal_words
                .iter()
                .filter(|w| text.contains(w) && !own.contains(w))
                .collect()
        })
        .collect();
    // A word every item carries tells none apart.
    let telling = |word: &String| {
        carried.iter().any(|c| !c.contains(&word)) && carried.iter().any(|c| c.contains(&word))
    };
    let lifts = |i: usize| {
        let element = &elements[i];
        candidate[i]
            && names
                .get(&(element.role.as_str(), element.name.as_str()))
                .is_some_and(|&n| n > 1)
    };
    let control_names: std::collections::HashSet<&str> = elements
        .iter()
        .zip(candidate)
        .filter(|(_, c)| **c)
        .map(|(e, _)| e.name.trim())
        .filter(|name| !name.is_empty())
        .collect();
    let scores: Vec<usize> = items
        .iter()
        .zip(&carried)
        .map(|((record, members), words)| {
            let named_control = members.iter().any(|&i| {
                stems(&elements[i].name)
                    .iter()
                    .any(|w| goal_words.contains(w))
            });
            // The item is a control itself (an email's row, whose record is the whole list
            // while its star's and trash's record is the row): it is opened, not stepped.
            let item_is_control = control_names.contains(record.trim());
            if named_control || item_is_control || !members.iter().any(|&i| lifts(i)) {
                0
            } else {
                words.iter().filter(|w| telling(w)).count()
            }
        })
        .collect();
    let best = scores.iter().copied().max().unwrap_or(0);
    if best == 0 {
        return shares;
    }
    // The goal's pieces between commas and colons ("Caesar Salad", "Spinach and goat cheese
    // dip"): an item that carries one whole is named as fully as any, however few its words.
    let pieces: Vec<String> = goal
        .split([',', ':', ';'])
        .map(|piece| format!(" {} ", stems(piece).join(" ")))
        .filter(|piece| piece.trim().contains(' ') || piece.trim().len() >= 3)
        .collect();
    for ((record, members), score) in items.iter().zip(&scores) {
        if *score == 0 {
            continue;
        }
        let text = format!(" {} ", stems(record).join(" "));
        let whole = pieces.iter().any(|piece| text.contains(piece.as_str()));
        for &i in members.iter().filter(|&&i| lifts(i)) {
            shares[i] = if whole {
                1.0
            } else {
                *score as f64 / best as f64
            };
        }
    }
    shares
}

/// Number words a count may be given in.
const COUNT_WORDS: [&str; 11] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

/// How many of something the goal asks for: the first number (in figures or a word up to ten)
/// that a word follows ("Order 4 items", "three tickets"), when it is 2 or more. Not a time,
/// a date or a price: those are no count of items.
pub fn goal_count(goal: &str) -> Option<u32> {
    let words: Vec<&str> = goal.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        let lower = pair[0].to_lowercase();
        let count = lower.parse::<u32>().ok().or_else(|| {
            COUNT_WORDS
                .iter()
                .position(|w| *w == lower)
                .map(|n| n as u32)
        })?;
        let next = pair[1].trim_matches(|c: char| !c.is_alphanumeric());
        (count >= 2 && !next.is_empty() && next.chars().all(char::is_alphabetic)).then_some(count)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(name: &str, record: &str) -> Element {
        crate::testing::control("clickable", name, record)
    }

    fn menu() -> Vec<Element> {
        let dishes = [
            "Caesar Salad vegan gluten-free",
            "Grilled Pork Tenderloin meat gluten-free",
            "Ice cream sundae dairy peanuts gluten-free",
            "Chicken wings meat",
            "Coconut mango tart vegan",
        ];
        let mut elements = Vec::new();
        for dish in dishes {
            let record = format!("{} - +", dish);
            elements.push(control("-", &record));
            elements.push(control("+", &record));
        }
        let mut order = control("Order!", "Appetizers Caesar Salad - + Grilled Pork");
        order.role = "button".into();
        elements.push(order);
        elements
    }

    fn lifted(elements: &[Element], goal: &str) -> Vec<(String, String, f64)> {
        let candidate = vec![true; elements.len()];
        item_shares(elements, goal, &candidate)
            .into_iter()
            .zip(elements)
            .filter(|(share, _)| *share > 0.0)
            .map(|(share, e)| (e.name.clone(), e.record.clone(), share))
            .collect()
    }

    #[test]
    fn the_controls_of_the_items_the_goal_names_are_lifted() {
        let elements = menu();
        let by_name = lifted(
            &elements,
            "Order one of each item: Grilled Pork Tenderloin, Ice cream sundae",
        );
        let items: Vec<&str> = by_name.iter().map(|(_, r, _)| r.as_str()).collect();
        assert_eq!(by_name.len(), 4, "{by_name:?}");
        assert!(
            items
                .iter()
                .all(|r| r.starts_with("Grilled") || r.starts_with("Ice"))
        );
        assert!(by_name.iter().all(|(_, _, share)| *share == 1.0));

        // A dish named whole is named fully, though another has more of the goal's words.
        let mut wider = menu();
        for e in wider.iter_mut().take(2) {
            e.record = "Spinach and goat cheese dip dairy - +".into();
        }
        let both = lifted(
            &wider,
            "Order one of each item: Ice cream sundae, Spinach and goat cheese dip",
        );
        assert_eq!(both.len(), 4, "{both:?}");
        assert!(both.iter().all(|(_, _, share)| *share == 1.0), "{both:?}");

        // By a word of the items' icons: every vegan dish, none other.
        let vegan = lifted(&elements, "Order 4 items that are vegan");
        assert_eq!(vegan.len(), 4, "{vegan:?}");
        assert!(vegan.iter().all(|(_, r, _)| r.contains("vegan")));
        // "peanuts" on the icon, "peanut" in the goal.
        let peanut = lifted(&elements, "Order 2 items that are peanut");
        assert!(
            peanut.iter().all(|(_, r, _)| r.starts_with("Ice")),
            "{peanut:?}"
        );
        // A word that every item carries tells none apart; a goal that names none lifts none.
        let mut everywhere = menu();
        for e in &mut everywhere {
            e.record = format!("{} dish", e.record);
        }
        assert!(lifted(&everywhere, "Order a dish").is_empty());
        assert!(lifted(&elements, "Order 3 items that are spicy").is_empty());
    }

    #[test]
    fn items_with_a_control_of_their_own_or_a_named_control_are_left_to_other_rules() {
        // An inbox: each row is a link that carries the sender; star and trash are twins.
        let mut inbox = Vec::new();
        for sender in ["Caprice", "Malva", "Ibby"] {
            let record = format!("{sender} Re: lunch star trash");
            let mut row = control(&format!("{sender} Re: lunch"), &record);
            row.role = "link".into();
            inbox.push(row);
            inbox.push(control("star", &record));
            inbox.push(control("trash", &record));
        }
        assert!(lifted(&inbox, "Open the email from Caprice").is_empty());
        // MiniWoB++'s inbox: the row's record is the whole list, its star's and trash's
        // record is the row. Before, "Lucie's email, will you forward that to Katee?"
        // trashed both their emails first.
        let list = "Primary Katee Elementum et. Lucie Ligula in.";
        let mut inbox = Vec::new();
        for row in [
            "Katee Elementum et.",
            "Blythe Ut. Quam.",
            "Lucie Ligula in.",
        ] {
            inbox.push(control(row, list));
            inbox.push(control("trash", row));
            inbox.push(control("star", row));
        }
        let goal = "Lucie's email, will you forward that to Katee?";
        assert!(
            lifted(&inbox, goal).is_empty(),
            "{:?}",
            lifted(&inbox, goal)
        );
        // Posts whose "Like" the goal names: the rule for quoted toggles takes them.
        let mut posts = Vec::new();
        for user in ["@aliquam", "@et"] {
            let record = format!("Ann {user} 3h ago Lorem Reply Like");
            posts.push(control("Reply", &record));
            posts.push(control("Like", &record));
        }
        assert!(lifted(&posts, "Click Like on the post by @aliquam").is_empty());
        // Without the goal naming it, the controls of @aliquam's post are the item's.
        assert_eq!(lifted(&posts, "Answer @aliquam").len(), 2);
    }

    #[test]
    fn a_count_is_a_number_a_word_follows() {
        assert_eq!(goal_count("Order 4 items that are vegan"), Some(4));
        assert_eq!(goal_count("Buy three tickets"), Some(3));
        assert_eq!(goal_count("Order one of each item: A, B"), None);
        assert_eq!(goal_count("Set the time to 10:30 PM"), None);
        assert_eq!(goal_count("Select 12/03/2016 as the date"), None);
        assert_eq!(goal_count("Pay $20 today"), None);
    }
}
