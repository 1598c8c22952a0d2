//! Comparisons a goal asks for, read mechanically: "cities with more than 5 million
//! inhabitants", "names that start with "San"", "whose description mentions a harbour". Each
//! is a comparator, the words that say what is compared (the subject) and the value. A data
//! browser's filter row (a column list, an operator list, a value field) is filled from them;
//! the same reading says which option of an operator list a comparator is. Nothing here
//! decides success.
//!
//! A name the goal places things in ("the countries of South America", "cities in Peru") is an
//! equality with no comparator said, whose column only likeness tells. Re-exported by `node`
//! (`forager_node::comparison`), where the eyes fill filter rows with it.

use crate::amount::{MAGNITUDES, magnitude, number, written};

/// What a comparison asks of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparator {
    /// Strictly more ("more than", "over", "above").
    Greater,
    /// At least ("at least", "or more").
    AtLeast,
    /// Strictly less ("less than", "under", "below").
    Less,
    /// At most ("at most", "or less", "no more than").
    AtMost,
    /// Begins with.
    StartsWith,
    /// Ends with.
    EndsWith,
    /// Contains ("mentions", "includes").
    Contains,
    /// Equals ("equal to", "is exactly").
    Equals,
}

/// One comparison of the goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// What it asks.
    pub comparator: Comparator,
    /// The lower-case words that say what is compared ("description", "inhabitants").
    pub subject: Vec<String>,
    /// The value compared with, as it is to be typed: a quoted string as quoted, a number
    /// with its magnitude written out ("5 million" is `5000000`).
    pub value: String,
    /// Whether no comparator was said: a name the goal places things in ("the countries of
    /// South America") is an equality with some column, which only its likeness tells.
    pub placed: bool,
}

/// The goal's phrases for each comparator, longest first so that "no more than" is not read
/// as "more than". `numeric`: the phrase compares numbers only, so it counts only before a
/// number ("over 5 million", not "over the weekend").
const PHRASES: &[(&str, Comparator, bool)] = &[
    ("no more than", Comparator::AtMost, true),
    ("no less than", Comparator::AtLeast, true),
    ("not more than", Comparator::AtMost, true),
    ("not less than", Comparator::AtLeast, true),
    ("more expensive than", Comparator::Greater, true),
    ("less expensive than", Comparator::Less, true),
    ("more than", Comparator::Greater, true),
    ("greater than", Comparator::Greater, true),
    ("larger than", Comparator::Greater, true),
    ("bigger than", Comparator::Greater, true),
    ("higher than", Comparator::Greater, true),
    ("at least", Comparator::AtLeast, true),
    ("less than", Comparator::Less, true),
    ("fewer than", Comparator::Less, true),
    ("smaller than", Comparator::Less, true),
    ("lower than", Comparator::Less, true),
    ("at most", Comparator::AtMost, true),
    ("cheaper than", Comparator::Less, true),
    ("dearer than", Comparator::Greater, true),
    ("over", Comparator::Greater, true),
    ("above", Comparator::Greater, true),
    ("exceeding", Comparator::Greater, true),
    ("under", Comparator::Less, true),
    ("below", Comparator::Less, true),
    ("earlier than", Comparator::Less, true),
    ("later than", Comparator::Greater, true),
    ("prior to", Comparator::Less, true),
    ("before", Comparator::Less, true),
    ("after", Comparator::Greater, true),
    ("since", Comparator::AtLeast, true),
    ("starts with", Comparator::StartsWith, false),
    ("start with", Comparator::StartsWith, false),
    ("starting with", Comparator::StartsWith, false),
    ("begins with", Comparator::StartsWith, false),
    ("begin with", Comparator::StartsWith, false),
    ("beginning with", Comparator::StartsWith, false),
    ("ends with", Comparator::EndsWith, false),
    ("end with", Comparator::EndsWith, false),
    ("ending with", Comparator::EndsWith, false),
    ("equal to", Comparator::Equals, false),
    ("equals", Comparator::Equals, false),
    ("is exactly", Comparator::Equals, false),
    ("contains", Comparator::Contains, false),
    ("contain", Comparator::Contains, false),
    ("containing", Comparator::Contains, false),
    ("mentions", Comparator::Contains, false),
    ("mention", Comparator::Contains, false),
    ("mentioning", Comparator::Contains, false),
    ("includes", Comparator::Contains, false),
    ("include", Comparator::Contains, false),
    ("including", Comparator::Contains, false),
];

/// Words that say nothing of what is compared.
const FILLER: &[&str] = &[
    "a", "an", "the", "whose", "which", "that", "with", "who", "where", "are", "is", "have", "has",
    "of", "all", "show", "me", "list", "find", "only", "and", "or", "their", "its", "to", "in",
    "by", "for",
];

/// Phrases that compare prices: their comparison's subject is the price, whatever stands
/// before them ("books cheaper than 15 euros").
const PRICE_PHRASES: &[&str] = &[
    "more expensive than",
    "less expensive than",
    "cheaper than",
    "dearer than",
];

/// Words after a number that make it an amount of money ("15 euros", "20 USD").
const CURRENCIES: &[&str] = &[
    "dollar", "dollars", "usd", "euro", "euros", "eur", "pound", "pounds", "gbp", "yen", "francs",
    "chf",
];

/// Words that follow a value and finish the comparison ("5 million or more").
const TRAILING: &[(&str, Comparator)] = &[
    ("or more", Comparator::AtLeast),
    ("or above", Comparator::AtLeast),
    ("or less", Comparator::AtMost),
    ("or fewer", Comparator::AtMost),
    ("or below", Comparator::AtMost),
];

/// Every comparison the goal asks for, in its order.
pub fn comparisons(goal: &str) -> Vec<Comparison> {
    let tokens = tokens(goal);
    let lower: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let Some((length, mut comparator, numeric)) = phrase_at(&lower, i) else {
            i += 1;
            continue;
        };
        let mut at = i + length;
        while lower
            .get(at)
            .is_some_and(|w| ["a", "an", "the"].contains(&w.as_str()))
        {
            at += 1;
        }
        let Some((value, used, is_number)) = value_at(&tokens, &lower, at) else {
            i += 1;
            continue;
        };
        if numeric && !is_number {
            i += 1;
            continue;
        }
        let mut end = at + used;
        for (words, trailing) in TRAILING {
            let words: Vec<&str> = words.split(' ').collect();
            if lower
                .get(end..end + words.len())
                .is_some_and(|w| w == words)
            {
                comparator = *trailing;
                end += words.len();
            }
        }
        let mut subject: Vec<String> = lower[..i]
            .iter()
            .rev()
            .take_while(|w| !w.is_empty())
            .filter(|w| !FILLER.contains(&w.as_str()))
            .take(2)
            .cloned()
            .collect();
        subject.reverse();
        // An amount of money ("under $20", "15 euros") or a price phrase ("cheaper than")
        // compares the price, whatever the words before it name (the listing: "books").
        let currency = is_number
            && lower
                .get(end)
                .is_some_and(|w| CURRENCIES.contains(&w.as_str()));
        let price = PRICE_PHRASES.contains(&lower[i..i + length].join(" ").as_str());
        let money = tokens.get(at).is_some_and(|t| t.money);
        if is_number && (money || currency || price) {
            subject = vec!["price".to_owned()];
            if currency {
                end += 1;
            }
        } else if is_number
            && let Some(next) = lower.get(end).filter(|w| !FILLER.contains(&w.as_str()))
        {
            // "more than 5 million inhabitants": the word after a number says what it counts.
            subject.push(next.clone());
        }
        out.push(Comparison {
            comparator,
            subject,
            value,
            placed: false,
        });
        i = end.max(i + 1);
    }
    out.extend(placed_names(&tokens));
    out
}

/// "The countries of South America", "cities in Peru": a run of capitalised words after
/// "of", "in" or "from" (not a sentence's first word), as an equality whose subject is the
/// name's own words.
fn placed_names(tokens: &[Token]) -> Vec<Comparison> {
    let capitalised = |t: &Token| {
        !t.quoted
            && t.text.chars().next().is_some_and(char::is_uppercase)
            && t.text
                .chars()
                .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
    };
    let mut out = Vec::new();
    for i in 1..tokens.len() {
        let place = tokens[i - 1].text.to_lowercase();
        if !["of", "in", "from"].contains(&place.as_str()) || !capitalised(&tokens[i]) {
            continue;
        }
        let run: Vec<&str> = tokens[i..]
            .iter()
            .take_while(|t| capitalised(t))
            .map(|t| t.text.as_str())
            .collect();
        let value = run.join(" ");
        out.push(Comparison {
            comparator: Comparator::Equals,
            subject: run.iter().map(|w| w.to_lowercase()).collect(),
            value,
            placed: true,
        });
    }
    out
}

/// A word of the goal, or a quoted string as one token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The word without its punctuation, or the quoted string's body; empty at a clause's end.
    pub text: String,
    /// Whether it was quoted.
    pub quoted: bool,
    /// Whether a currency sign stood on it: an amount of money ("$20", "€5", "20€").
    pub money: bool,
}

/// The goal's words without their punctuation, quoted strings whole; a clause's end (a comma,
/// a full stop) is an empty token, so a subject never reaches across it.
pub fn tokens(goal: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = goal;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        let first = rest.chars().next().unwrap_or(' ');
        if matches!(first, '"' | '\u{201c}') {
            let close = if first == '"' { '"' } else { '\u{201d}' };
            let body = &rest[first.len_utf8()..];
            if let Some(end) = body.find(close) {
                // An empty quotation ("") names nothing; it is no token.
                let text = &body[..end];
                if !text.trim().is_empty() {
                    out.push(Token {
                        text: text.to_owned(),
                        quoted: true,
                        money: false,
                    });
                }
                rest = &body[end + close.len_utf8()..];
                continue;
            }
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        let trimmed = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '.' && c != ',');
        let trimmed = trimmed.trim_end_matches(['.', ',']);
        if !trimmed.is_empty() {
            out.push(Token {
                text: trimmed.to_owned(),
                quoted: false,
                money: word.contains(['$', '\u{20ac}', '\u{a3}']),
            });
        }
        if word.ends_with([',', '.', ';', '?', '!', ':']) {
            out.push(Token {
                text: String::new(),
                quoted: false,
                money: false,
            });
        }
        rest = &rest[end..];
    }
    out
}

/// The comparator phrase starting at word `i`: its length in words, comparator, and whether it
/// compares numbers only.
fn phrase_at(lower: &[String], i: usize) -> Option<(usize, Comparator, bool)> {
    PHRASES.iter().find_map(|(phrase, comparator, numeric)| {
        let words: Vec<&str> = phrase.split(' ').collect();
        lower
            .get(i..i + words.len())
            .is_some_and(|w| w == words)
            .then_some((words.len(), *comparator, *numeric))
    })
}

/// The value starting at token `at`: a quoted string, a number with its magnitude, or one
/// word; with the tokens it took and whether it is a number.
fn value_at(tokens: &[Token], lower: &[String], at: usize) -> Option<(String, usize, bool)> {
    let token = tokens.get(at).filter(|t| !t.text.is_empty())?;
    if token.quoted {
        return Some((token.text.clone(), 1, false));
    }
    if let Some(number) = number(&token.text) {
        let magnitude = lower.get(at + 1).and_then(|w| magnitude(w));
        return Some(match magnitude {
            Some(factor) => (written(number * factor), 2, true),
            None => (token.text.replace(',', ""), 1, true),
        });
    }
    // "5m", "2.5k": a magnitude written onto the number.
    for (suffix, factor) in MAGNITUDES.iter().filter(|(m, _)| m.len() <= 2) {
        if let Some(n) = lower[at].strip_suffix(suffix).and_then(number) {
            return Some((written(n * factor), 1, true));
        }
    }
    Some((token.text.clone(), 1, false))
}

/// What an operator list's option says it compares by (its label `>`, `starts with`, or its
/// value `gt`, `startswith`), if it is one.
pub fn option_comparator(label: &str, value: &str) -> Option<Comparator> {
    let label = label.trim().to_lowercase();
    let value = value.trim().to_lowercase();
    let by_label = match label.as_str() {
        ">" | "greater than" | "more than" | "is greater than" => Some(Comparator::Greater),
        "≥" | ">=" | "at least" | "greater than or equal to" => Some(Comparator::AtLeast),
        "<" | "less than" | "is less than" => Some(Comparator::Less),
        "≤" | "<=" | "at most" | "less than or equal to" => Some(Comparator::AtMost),
        "starts with" | "begins with" | "start with" => Some(Comparator::StartsWith),
        "ends with" | "end with" => Some(Comparator::EndsWith),
        "contains" | "includes" | "has" => Some(Comparator::Contains),
        "=" | "==" | "is" | "equals" | "exact" | "is equal to" | "equal to" => {
            Some(Comparator::Equals)
        }
        _ => None,
    };
    by_label.or(match value.as_str() {
        "gt" | "greater" => Some(Comparator::Greater),
        "gte" | "ge" => Some(Comparator::AtLeast),
        "lt" | "less" => Some(Comparator::Less),
        "lte" | "le" => Some(Comparator::AtMost),
        "startswith" | "istartswith" | "starts_with" | "prefix" => Some(Comparator::StartsWith),
        "endswith" | "iendswith" | "ends_with" | "suffix" => Some(Comparator::EndsWith),
        "contains" | "icontains" => Some(Comparator::Contains),
        "exact" | "iexact" | "eq" | "equals" => Some(Comparator::Equals),
        _ => None,
    })
}

/// Whether a list's options are comparison operators: three of them at least say so.
pub fn is_operator_list(options: &[(String, String)]) -> bool {
    options
        .iter()
        .filter(|(label, value)| option_comparator(label, value).is_some())
        .count()
        >= 3
}

/// A word without a plural's "s" ("names" is "name"), for matching a subject to a column.
pub fn stem(word: &str) -> String {
    if word.len() > 3
        && let Some(base) = word.strip_suffix("ies")
    {
        format!("{base}y")
    } else if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word[..word.len() - 1].to_owned()
    } else {
        word.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_number_with_any_phrase_and_magnitude_is_read_back(
            n in 1u32..100_000,
            phrase in 0usize..6,
            magnitude in 0usize..3,
        ) {
            let (said, comparator) = [
                ("more than", Comparator::Greater),
                ("over", Comparator::Greater),
                ("at least", Comparator::AtLeast),
                ("fewer than", Comparator::Less),
                ("below", Comparator::Less),
                ("at most", Comparator::AtMost),
            ][phrase];
            let (word, factor) = [("", 1u64), (" thousand", 1_000), (" million", 1_000_000)][magnitude];
            let goal = format!("Show the towns with {said} {n}{word} inhabitants, please");
            let found = comparisons(&goal);
            prop_assert_eq!(found.len(), 1);
            prop_assert_eq!(found[0].comparator, comparator);
            prop_assert_eq!(&found[0].value, &(u64::from(n) * factor).to_string());
            prop_assert_eq!(found[0].subject.last().map(String::as_str), Some("inhabitants"));
        }

        #[test]
        fn any_goal_is_read_without_panicking(goal in "\\PC{0,120}") {
            for found in comparisons(&goal) {
                prop_assert!(!found.value.is_empty());
            }
        }
    }

    fn one(goal: &str) -> Comparison {
        let found = comparisons(goal);
        assert_eq!(found.len(), 1, "{goal}: {found:?}");
        found.into_iter().next().unwrap_or_else(|| unreachable!())
    }

    #[test]
    fn numbers_take_their_magnitude_and_the_word_after_them() {
        let c = one("Show the cities with more than 5 million inhabitants");
        assert_eq!(c.comparator, Comparator::Greater);
        assert_eq!(c.value, "5000000");
        assert_eq!(c.subject, vec!["cities", "inhabitants"]);
        assert_eq!(one("books under 2.5k pages").value, "2500");
        let c = one("orders of at least 10,000 dollars");
        assert_eq!(
            (c.value.as_str(), c.subject.clone()),
            ("10000", vec!["price".to_owned()])
        );
        assert_eq!(
            one("stars over 1.5 billion years old").comparator,
            Comparator::Greater
        );
    }

    #[test]
    fn amounts_of_money_compare_the_price() {
        for (goal, comparator, value) in [
            ("Find the books under $20", Comparator::Less, "20"),
            (
                "Show the products cheaper than 15 euros",
                Comparator::Less,
                "15",
            ),
            (
                "Which products cost more than $100?",
                Comparator::Greater,
                "100",
            ),
            ("games more expensive than 30", Comparator::Greater, "30"),
            ("lamps over 49.99€", Comparator::Greater, "49.99"),
            ("gifts below £10", Comparator::Less, "10"),
        ] {
            let c = one(goal);
            assert_eq!(
                (c.comparator, c.value.as_str()),
                (comparator, value),
                "{goal}"
            );
            assert_eq!(c.subject, vec!["price"], "{goal}");
        }
        // A number that is no amount keeps the word after it.
        assert_eq!(one("books under 300 pages").subject, vec!["books", "pages"]);
    }

    #[test]
    fn quoted_and_plain_values() {
        let c = one("List the cities whose names start with \"San\"");
        assert_eq!(c.comparator, Comparator::StartsWith);
        assert_eq!(c.value, "San");
        assert_eq!(c.subject, vec!["cities", "names"]);
        let c = one("Find the cities whose description mentions a harbour");
        assert_eq!(c.comparator, Comparator::Contains);
        assert_eq!(c.value, "harbour");
        assert_eq!(c.subject, vec!["cities", "description"]);
        let c = one("titles ending with \"guide\"");
        assert_eq!(c.comparator, Comparator::EndsWith);
        assert_eq!(c.value, "guide");
        // An empty quotation is no value.
        assert!(tokens("\"\" and \" \"").iter().all(|t| !t.quoted));
    }

    #[test]
    fn number_phrases_need_a_number() {
        assert!(comparisons("Take me over the bridge").is_empty());
        assert!(
            comparisons("Open the page of the city of Cusco")
                .iter()
                .all(|c| c.placed)
        );
        assert!(comparisons("Log in as alice and show me the issues assigned to me").is_empty());
        assert_eq!(
            one("no more than 3 items").comparator,
            Comparator::AtMost,
            "the longest phrase wins"
        );
        assert_eq!(
            one("5 million or more people, with over 5 rooms").value,
            "5"
        );
    }

    #[test]
    fn trailing_words_finish_a_comparison() {
        assert!(comparisons("cities of 5 million or more").is_empty());
        let c = one("cities with more than 5 or more");
        assert_eq!(c.comparator, Comparator::AtLeast);
    }

    #[test]
    fn a_subject_stops_at_a_clause_end() {
        let c = one("Show all rows, over 20");
        assert!(c.subject.is_empty(), "{c:?}");
    }

    #[test]
    fn names_placed_with_of_in_from_are_equalities() {
        let found = comparisons("Show me the countries of South America, sorted by population");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].comparator, Comparator::Equals);
        assert_eq!(found[0].value, "South America");
        assert_eq!(found[0].subject, vec!["south", "america"]);
        assert!(found[0].placed);
        let found = comparisons("Show me only the cities that are in Peru");
        assert_eq!(found[0].value, "Peru");
        assert!(comparisons("Open the page of the city of cusco").is_empty());
        assert!(comparisons("Log in as Alice").is_empty());
    }

    #[test]
    fn operator_lists_are_known_by_labels_or_values() {
        let datasette: Vec<(String, String)> = [
            ("=", "exact"),
            ("!=", "not"),
            ("contains", "contains"),
            ("starts with", "startswith"),
            (">", "gt"),
            ("≥", "gte"),
        ]
        .iter()
        .map(|(l, v)| ((*l).to_owned(), (*v).to_owned()))
        .collect();
        assert!(is_operator_list(&datasette));
        assert_eq!(option_comparator(">", "gt"), Some(Comparator::Greater));
        assert_eq!(
            option_comparator("", "istartswith"),
            Some(Comparator::StartsWith)
        );
        let priorities: Vec<(String, String)> = ["critical", "urgent", "bug"]
            .iter()
            .map(|l| ((*l).to_owned(), String::new()))
            .collect();
        assert!(!is_operator_list(&priorities));
    }

    #[test]
    fn stems() {
        assert_eq!(stem("names"), "name");
        assert_eq!(stem("cities"), "city");
        assert_eq!(stem("class"), "class");
    }
}
