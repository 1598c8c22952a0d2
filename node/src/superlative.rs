//! Items the goal wants at an extreme: "book the cheapest flight", "the shortest one", "the
//! most expensive". The goal's superlative names a quantity (a price, a duration) and a
//! direction; each item on the page (a result, a row: [`Element::record`]) shows its quantity,
//! and the controls of the item where it is smallest (or largest) are the ones to press. The
//! default policy lifts their priors; which item is right is still for the page to tell.

use std::sync::LazyLock;

use forager_protocol::observation::Element;
use regex::Regex;

/// What a superlative measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// An amount of money ("$482", "€12.50").
    Price,
    /// A length of time ("5h 23m", "2 hours 10 minutes", "45 min").
    Duration,
}

/// A quantity the goal wants at its smallest or largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Superlative {
    /// What is measured.
    pub quantity: Quantity,
    /// Largest (true) or smallest (false).
    pub most: bool,
}

/// Single words that are a superlative of their own.
const SUPERLATIVE_WORDS: &[(&str, Quantity, bool)] = &[
    ("cheapest", Quantity::Price, false),
    ("priciest", Quantity::Price, true),
    ("shortest", Quantity::Duration, false),
    ("quickest", Quantity::Duration, false),
    ("fastest", Quantity::Duration, false),
    ("longest", Quantity::Duration, true),
    ("slowest", Quantity::Duration, true),
];

/// Two-word superlatives ("least expensive", "lowest price").
const SUPERLATIVE_PHRASES: &[(&str, &str, Quantity, bool)] = &[
    ("least", "expensive", Quantity::Price, false),
    ("most", "expensive", Quantity::Price, true),
    ("lowest", "price", Quantity::Price, false),
    ("highest", "price", Quantity::Price, true),
    ("lowest", "priced", Quantity::Price, false),
    ("highest", "priced", Quantity::Price, true),
];

impl Superlative {
    /// The goal's first superlative, if it has one.
    pub fn of(goal: &str) -> Option<Superlative> {
        let words: Vec<String> = goal
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        for (i, word) in words.iter().enumerate() {
            if let Some(&(_, quantity, most)) = SUPERLATIVE_WORDS.iter().find(|(w, _, _)| w == word)
            {
                return Some(Superlative { quantity, most });
            }
            if let Some(next) = words.get(i + 1)
                && let Some(&(_, _, quantity, most)) = SUPERLATIVE_PHRASES
                    .iter()
                    .find(|(a, b, _, _)| a == word && b == next)
            {
                return Some(Superlative { quantity, most });
            }
        }
        None
    }
}

/// A currency sign and an amount, or an amount and a currency code.
static PRICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[$€£¥]\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?(?:USD|EUR|GBP|dollars)\b")
        .expect("a valid pattern")
});

/// Hours and minutes: "5h 23m", "5 h", "2 hours 10 minutes", "45 min", "1 hr 5 mins".
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        \b(?:(?P<h>\d+)\s?(?:h|hr|hrs|hour|hours)\b)?
        \s*
        (?:(?P<m>\d+)\s?(?:m|min|mins|minute|minutes)\b)?",
    )
    .expect("a valid pattern")
});

/// The first amount of `quantity` in `text`, in its unit (money, or minutes).
pub fn read(quantity: Quantity, text: &str) -> Option<f64> {
    match quantity {
        Quantity::Price => {
            let captures = PRICE.captures(text)?;
            let amount = captures.get(1).or_else(|| captures.get(2))?;
            amount.as_str().replace(',', "").parse().ok()
        }
        Quantity::Duration => DURATION.captures_iter(text).find_map(|c| {
            let hours = c.name("h").and_then(|h| h.as_str().parse::<f64>().ok());
            let minutes = c.name("m").and_then(|m| m.as_str().parse::<f64>().ok());
            (hours.is_some() || minutes.is_some())
                .then(|| hours.unwrap_or(0.0) * 60.0 + minutes.unwrap_or(0.0))
        }),
    }
}

/// For each element, whether it is a control of an item whose quantity is the extreme the
/// goal asks for. The quantity is read from the element's own name first ("Book flight for
/// $482"), else from its item; only where at least two items show one.
pub fn extremes(superlative: Option<Superlative>, elements: &[Element]) -> Vec<bool> {
    let mut out = vec![false; elements.len()];
    let Some(superlative) = superlative else {
        return out;
    };
    let amounts: Vec<Option<f64>> = elements
        .iter()
        .map(|e| {
            if e.record.is_empty() {
                return None;
            }
            read(superlative.quantity, &e.name).or_else(|| read(superlative.quantity, &e.record))
        })
        .collect();
    let items = amounts.iter().flatten().count();
    if items < 2 {
        return out;
    }
    let extreme = amounts
        .iter()
        .flatten()
        .copied()
        .fold(None, |best: Option<f64>, a| {
            Some(match best {
                Some(b) if superlative.most => b.max(a),
                Some(b) => b.min(a),
                None => a,
            })
        });
    for (slot, amount) in out.iter_mut().zip(&amounts) {
        *slot = amount.is_some() && *amount == extreme;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(name: &str, record: &str) -> Element {
        crate::testing::control("button", name, record)
    }

    #[test]
    fn superlatives_read_from_goals() {
        let cheapest = Superlative {
            quantity: Quantity::Price,
            most: false,
        };
        assert_eq!(
            Superlative::of("Book the cheapest one-way flight from: LIH"),
            Some(cheapest)
        );
        assert_eq!(
            Superlative::of("Buy the least expensive lamp"),
            Some(cheapest)
        );
        assert_eq!(
            Superlative::of("Pick the most expensive plan"),
            Some(Superlative {
                quantity: Quantity::Price,
                most: true
            })
        );
        assert_eq!(
            Superlative::of("Book the shortest one-way flight"),
            Some(Superlative {
                quantity: Quantity::Duration,
                most: false
            })
        );
        assert_eq!(Superlative::of("Book a flight to Boston"), None);
    }

    #[test]
    fn prices_and_durations_read_from_text() {
        assert_eq!(read(Quantity::Price, "Book flight for $482"), Some(482.0));
        assert_eq!(
            read(Quantity::Price, "Total: $1,204.50 today"),
            Some(1204.5)
        );
        assert_eq!(read(Quantity::Price, "costs 30 USD"), Some(30.0));
        assert_eq!(read(Quantity::Price, "no price here, 482"), None);
        let flight = "Depart: 2:31 PM Tue Nov 15 2016 Arrives: 9:54 AM Wed Nov 16 2016 \
                      Duration: 19h 23m Book flight for $482";
        assert_eq!(read(Quantity::Duration, flight), Some(19.0 * 60.0 + 23.0));
        assert_eq!(read(Quantity::Duration, "2 hours 10 minutes"), Some(130.0));
        assert_eq!(read(Quantity::Duration, "45 min"), Some(45.0));
        assert_eq!(read(Quantity::Duration, "Tue Nov 15 2016"), None);
    }

    #[test]
    fn the_item_at_the_extreme_is_marked() {
        let elements = [
            element("Back", ""),
            element(
                "Book flight for $482",
                "Duration: 5h 3m Book flight for $482",
            ),
            element(
                "Book flight for $120",
                "Duration: 9h 0m Book flight for $120",
            ),
            element(
                "Book flight for $300",
                "Duration: 2h 59m Book flight for $300",
            ),
        ];
        let cheapest = Superlative::of("the cheapest flight");
        assert_eq!(extremes(cheapest, &elements), [false, false, true, false]);
        let shortest = Superlative::of("the shortest flight");
        assert_eq!(extremes(shortest, &elements), [false, false, false, true]);
        let priciest = Superlative::of("the most expensive flight");
        assert_eq!(extremes(priciest, &elements), [false, true, false, false]);
        assert_eq!(extremes(None, &elements), [false; 4]);
        // One item alone is no comparison.
        assert_eq!(extremes(cheapest, &elements[..2]), [false, false]);
    }
}
