//! What a goal says, read mechanically: the strings it quotes and what each is for, the values
//! it names without quotes (dates, times, amounts, codes), the positions it points at ("the 3rd
//! textbox", "the last word") and the letter case it asks for. The default policy turns these
//! into fill values and priors; nothing here decides success.
//!
//! A [`GoalReading`] also holds the names a goal gives inside a sentence and its handles
//! ("posts by @aliquam"), which of them are senders ("the email from Caprice", "Lucie's email")
//! and so which are recipients ([`GoalReading::recipient`]), whether it passes an item on
//! ([`GoalReading::passes_on`]: "give Etheline the email from Doria"), whether it points at text
//! the page shows (`shown_text`), and values given under a label (`labelled`: "from: LIH to: …").

/// A string quoted in the goal and the words just before it (`the username "kenda"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quoted {
    /// The quoted text.
    pub text: String,
    /// Up to three words before the opening quote.
    pub context: String,
}

/// A position the goal points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordinal {
    /// The n-th, counting from 1.
    Nth(usize),
    /// The last.
    Last,
}

impl Ordinal {
    /// The index this position names in a list of `len` items.
    pub fn index(self, len: usize) -> Option<usize> {
        match self {
            Ordinal::Nth(n) if n >= 1 && n <= len => Some(n - 1),
            Ordinal::Last if len > 0 => Some(len - 1),
            _ => None,
        }
    }
}

/// "The 3rd input textbox": a position and the words naming what it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// Which one.
    pub ordinal: Ordinal,
    /// The (lower-case) words after the ordinal: what is counted.
    pub kind: Vec<String>,
}

/// The letter case a goal asks typed text to have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// "in all lower case letters".
    Lower,
    /// "in upper case".
    Upper,
}

/// A calendar date the goal names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoalDate {
    /// The year.
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, 1 to 31.
    pub day: u32,
}

impl GoalDate {
    /// Months from `year`/`month` to this date's month (negative: it is earlier).
    pub fn months_from(&self, year: i32, month: u32) -> i32 {
        (self.year - year) * 12 + self.month as i32 - month as i32
    }
}

/// English month names; three letters name one too.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The month a word names (`July`, `jul`, `Sept`), 1 to 12.
pub fn month_of(word: &str) -> Option<u32> {
    let word = word.to_lowercase();
    if word.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| *m == word || (word.len() <= 4 && m.starts_with(&word)))
        .map(|i| i as u32 + 1)
}

/// A plausible calendar date, or none.
fn date(year: i32, month: u32, day: u32) -> Option<GoalDate> {
    ((1000..=9999).contains(&year) && (1..=12).contains(&month) && (1..=31).contains(&day))
        .then_some(GoalDate { year, month, day })
}

/// Dates written `MM/DD/YYYY`, `YYYY-MM-DD` or `July 11, 2016` / `11 July 2016`.
fn dates_in(words: &[&str]) -> Vec<GoalDate> {
    let mut found = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        let word = trim_punctuation(raw);
        let numbers = |separator: char| -> Option<Vec<i32>> {
            let parts: Vec<&str> = word.split(separator).collect();
            (parts.len() == 3)
                .then(|| parts.iter().map(|p| p.parse::<i32>().ok()).collect())
                .flatten()
        };
        let parsed = if let Some(n) = numbers('/') {
            date(n[2], n[0] as u32, n[1] as u32)
        } else if let Some(n) = numbers('-') {
            date(n[0], n[1] as u32, n[2] as u32)
        } else if let Some(month) = month_of(word) {
            let number = |j: usize| -> Option<i32> {
                words
                    .get(j)
                    .map(|w| trim_punctuation(w))
                    .and_then(|w| w.strip_suffix(['.', ',']).unwrap_or(w).parse().ok())
            };
            match (
                i.checked_sub(1).and_then(number),
                number(i + 1),
                number(i + 2),
            ) {
                (_, Some(day), Some(year)) if day <= 31 => date(year, month, day as u32),
                (Some(day), Some(year), _) if day <= 31 => date(year, month, day as u32),
                _ => None,
            }
        } else {
            None
        };
        if let Some(parsed) = parsed
            && !found.contains(&parsed)
        {
            found.push(parsed);
        }
    }
    found
}

/// Ranges of whole numbers: `0-9`, `3–7`, `between 3 and 7`, `from 3 to 7` (low first).
fn ranges_in(words: &[&str]) -> Vec<(i64, i64)> {
    let number = |word: &str| trim_punctuation(word).parse::<i64>().ok();
    let mut found = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        let word = trim_punctuation(raw);
        let dashed = word
            .split_once(['-', '\u{2013}'])
            .and_then(|(a, b)| Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)));
        let spelled = match (word.to_lowercase().as_str(), words.get(i + 2)) {
            ("between", Some(joint)) if trim_punctuation(joint).eq_ignore_ascii_case("and") => {
                words
                    .get(i + 1)
                    .and_then(|a| number(a))
                    .zip(words.get(i + 3).and_then(|b| number(b)))
            }
            ("from", Some(joint)) if trim_punctuation(joint).eq_ignore_ascii_case("to") => words
                .get(i + 1)
                .and_then(|a| number(a))
                .zip(words.get(i + 3).and_then(|b| number(b))),
            _ => None,
        };
        if let Some((low, high)) = dashed.or(spelled)
            && low < high
            && !found.contains(&(low, high))
        {
            found.push((low, high));
        }
    }
    found
}

/// The dates a text names (as [`GoalReading::dates`] reads them).
pub fn dates_of(text: &str) -> Vec<GoalDate> {
    dates_in(&text.split_whitespace().collect::<Vec<_>>())
}

/// The month and year a page shows first as a heading-like pair (`December 2016`): a
/// calendar's title.
pub fn shown_month(text: &str) -> Option<(i32, u32)> {
    let words: Vec<&str> = words_of(text);
    words.windows(2).find_map(|pair| {
        let month = month_of(pair[0])?;
        let year: i32 = pair[1].parse().ok().filter(|y| (1000..=9999).contains(y))?;
        Some((year, month))
    })
}

/// A goal, read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoalReading {
    /// Quoted strings, in order, without repeats.
    pub quoted: Vec<Quoted>,
    /// Unquoted tokens with digits (a date, a time with its AM/PM, an amount, a code).
    pub tokens: Vec<String>,
    /// Unquoted names: capitalised words inside a sentence ("forward that email to Malva"),
    /// each with the two words before it (what it is for: "email to").
    pub names: Vec<Quoted>,
    /// Positions the goal points at.
    pub positions: Vec<Position>,
    /// The case typed text should have, if the goal says.
    pub case: Option<Case>,
    /// Calendar dates the goal names.
    pub dates: Vec<GoalDate>,
    /// Ranges of whole numbers the goal names ("between 0-9", "from 3 to 7"), in order.
    pub ranges: Vec<(i64, i64)>,
    /// The names that say whose item the goal is about ("the email from Caprice", "by
    /// Andria", "the mail Ibby sent you"), where it names a sender at all. The goal's other
    /// names are then who it goes to ("send Marlena …"), to be typed even where the page
    /// shows them too (Marlena's own email in the inbox).
    pub senders: Vec<String>,
    /// Whether the goal points at text the page shows rather than saying it ("type the text
    /// below", "the code shown"): the page's short text blocks are then values to type.
    pub shown_text: bool,
    /// Values the goal gives under a label ("from: LIH to: West Palm Beach, FL on …"), each
    /// with its label, lower case and without the colon, as `context`: the value of the field
    /// with that label.
    pub labelled: Vec<Quoted>,
}

/// Words that end a labelled value: they start the sentence's next part ("to: West Palm
/// Beach, FL on 11/25/2016").
const LABELLED_VALUE_ENDS: &[&str] = &[
    "on", "at", "in", "for", "and", "with", "by", "from", "to", "as", "then", "before", "after",
];

/// Longest labelled value, in characters: longer runs are prose, not a field's value.
const LABELLED_VALUE_MAX_CHARS: usize = 60;

/// A label: one word of letters ending in a colon ("from:", "Subject:").
fn label_of(word: &str) -> Option<&str> {
    let label = word.strip_suffix(':')?;
    (!label.is_empty() && label.chars().all(char::is_alphabetic)).then_some(label)
}

/// "from: LIH to: West Palm Beach, FL on 11/25/2016." → (from, LIH), (to, West Palm Beach,
/// FL): each label's value runs to the next label, a word that starts the sentence's next part
/// ([`LABELLED_VALUE_ENDS`]), or the end of the sentence.
fn labelled_in(words: &[&str]) -> Vec<Quoted> {
    let mut out: Vec<Quoted> = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        let Some(label) = label_of(raw) else { continue };
        let mut value: Vec<&str> = Vec::new();
        for word in &words[i + 1..] {
            let lower = trim_punctuation(word).to_lowercase();
            if label_of(word).is_some()
                || (!value.is_empty() && LABELLED_VALUE_ENDS.contains(&lower.as_str()))
            {
                break;
            }
            value.push(word);
            if word.ends_with(['.', ';', '!', '?']) {
                break;
            }
        }
        let text = value
            .join(" ")
            .trim_end_matches([',', '.', ';', '!', '?'])
            .trim()
            .to_owned();
        if !text.is_empty()
            && text.chars().count() <= LABELLED_VALUE_MAX_CHARS
            && !out.iter().any(|q| q.text == text)
        {
            out.push(Quoted {
                text,
                context: label.to_lowercase(),
            });
        }
    }
    out
}

/// Words for a piece of text, and words that say the page shows it.
const TEXT_WORDS: &[&str] = &["text", "letters", "characters", "code", "string"];
const SHOWN_WORDS: &[&str] = &["below", "above", "shown", "displayed"];

/// "the text below", "the text in the box above", "the displayed code": a text word with a
/// shown word at most four words after it, or right before it.
fn points_at_shown_text(words: &[&str]) -> bool {
    let lower: Vec<String> = words
        .iter()
        .map(|w| trim_punctuation(w).to_lowercase())
        .collect();
    lower.iter().enumerate().any(|(i, w)| {
        TEXT_WORDS.contains(&w.as_str())
            && (lower[i + 1..]
                .iter()
                .take(4)
                .any(|next| SHOWN_WORDS.contains(&next.as_str()))
                || i.checked_sub(1)
                    .is_some_and(|before| ["shown", "displayed"].contains(&lower[before].as_str())))
    })
}

const ORDINAL_WORDS: &[&str] = &[
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
];

/// `3rd`, `21st` → 3, 21; `third` → 3; `last` → Last.
fn ordinal(word: &str) -> Option<Ordinal> {
    let lower = word.to_ascii_lowercase();
    if lower == "last" {
        return Some(Ordinal::Last);
    }
    if let Some(i) = ORDINAL_WORDS.iter().position(|w| *w == lower) {
        return Some(Ordinal::Nth(i + 1));
    }
    ["st", "nd", "rd", "th"].iter().find_map(|suffix| {
        let digits = lower.strip_suffix(suffix)?;
        (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
            .then(|| digits.parse().ok().map(Ordinal::Nth))
            .flatten()
    })
}

fn trim_punctuation(word: &str) -> &str {
    word.trim_matches(|c: char| {
        matches!(
            c,
            '.' | ','
                | ';'
                | ':'
                | '!'
                | '?'
                | '('
                | ')'
                | '"'
                | '\''
                | '['
                | ']'
                | '\u{201c}'
                | '\u{201d}'
                | '\u{2018}'
                | '\u{2019}'
        )
    })
}

impl GoalReading {
    /// Reads a goal.
    pub fn of(goal: &str) -> GoalReading {
        let quoted = quoted(goal);
        let words: Vec<&str> = goal.split_whitespace().collect();
        // Unquoted labelled values are read as quoted ones are (their words are no names).
        let labelled: Vec<Quoted> = labelled_in(&words)
            .into_iter()
            .filter(|l| !quoted.iter().any(|q| q.text.contains(&l.text)))
            .collect();
        let mut tokens: Vec<String> = Vec::new();
        let mut positions = Vec::new();
        let mut names: Vec<Quoted> = Vec::new();
        let mut senders: Vec<String> = Vec::new();
        for (i, raw) in words.iter().enumerate() {
            let word = trim_punctuation(raw);
            // "Lucie's email": a possessive names whose item it is, even first in a sentence
            // (a third of the ways people ask for an email in MiniWoB++'s crowd-written goals).
            let possessive = ["'s", "\u{2019}s"]
                .iter()
                .find_map(|suffix| word.strip_suffix(suffix));
            let word = possessive.unwrap_or(word);
            let sentence_start = i == 0
                || words[i - 1].ends_with(['.', '!', '?', ':'])
                || words[i - 1].starts_with('"');
            let capitalised = word.chars().next().is_some_and(char::is_uppercase)
                && word.chars().skip(1).any(char::is_lowercase)
                && word.chars().all(char::is_alphabetic);
            // A handle ("posts by @aliquam") names someone as a capital does.
            let handle = word.len() > 1
                && word.starts_with('@')
                && word[1..]
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            if ((capitalised && (!sentence_start || possessive.is_some())) || handle)
                && !quoted
                    .iter()
                    .chain(&labelled)
                    .any(|q| q.text.contains(word))
                && !names.iter().any(|n| n.text == word)
            {
                let context = words[i.saturating_sub(2)..i]
                    .iter()
                    .map(|w| trim_punctuation(w))
                    .collect::<Vec<_>>()
                    .join(" ");
                let after = words.get(i + 1).map(|w| trim_punctuation(w).to_lowercase());
                let before = context.rsplit(' ').next().unwrap_or("").to_lowercase();
                if ["from", "by"].contains(&before.as_str())
                    || after.as_deref() == Some("sent")
                    || possessive.is_some()
                {
                    senders.push(word.to_owned());
                }
                names.push(Quoted {
                    text: word.to_owned(),
                    context,
                });
            }
            if let Some(ordinal) = ordinal(word) {
                let kind: Vec<String> = words[i + 1..]
                    .iter()
                    .take(3)
                    .map(|w| trim_punctuation(w).to_lowercase())
                    .take_while(|w| !w.is_empty())
                    .collect();
                if !kind.is_empty() {
                    positions.push(Position { ordinal, kind });
                }
                continue;
            }
            if word.is_empty() || !word.chars().any(|c| c.is_ascii_digit()) {
                continue;
            }
            let mut value = word.to_owned();
            if let Some(next) = words.get(i + 1) {
                let next = trim_punctuation(next);
                if word.contains(':') && ["AM", "PM", "am", "pm"].contains(&next) {
                    value = format!("{word} {next}");
                }
            }
            if !tokens.contains(&value) && !quoted.iter().any(|q| q.text.contains(&value)) {
                tokens.push(value);
            }
        }
        let lower = goal.to_lowercase();
        let case = if lower.contains("lower case") || lower.contains("lowercase") {
            Some(Case::Lower)
        } else if lower.contains("upper case") || lower.contains("uppercase") {
            Some(Case::Upper)
        } else {
            None
        };
        let dates = dates_in(&words);
        let ranges = ranges_in(&words);
        let shown_text = points_at_shown_text(&words);
        GoalReading {
            quoted,
            tokens,
            names,
            positions,
            case,
            dates,
            ranges,
            shown_text,
            senders,
            labelled,
        }
    }

    /// Whether a name of the goal is who it goes to: the goal names a sender, and this is
    /// another name.
    pub fn recipient(&self, name: &str) -> bool {
        !self.senders.is_empty() && !self.senders.iter().any(|s| s == name)
    }

    /// Whether the goal passes someone's item on to another person ("send Joella the email
    /// from Chrystal", "give it to Ros"): it names a sender and a recipient. That is a
    /// forward, whatever verb it uses; a reply would go back to the sender.
    pub fn passes_on(&self) -> bool {
        !self.senders.is_empty() && self.names.iter().any(|n| self.recipient(&n.text))
    }

    /// A value as the goal wants it typed (its letter case).
    pub fn cased(&self, value: &str) -> String {
        match self.case {
            Some(Case::Lower) => value.to_lowercase(),
            Some(Case::Upper) => value.to_uppercase(),
            None => value.to_owned(),
        }
    }
}

/// Strings quoted with "…", “…” or '…' (apostrophes inside words are not quotes), with the
/// three words before each.
fn quoted(goal: &str) -> Vec<Quoted> {
    forager_protocol::recall::quoted_spans(goal)
        .into_iter()
        .map(|range| {
            // The opening quote is the character before the trimmed contents' spaces.
            let before = goal[..range.start].trim_end();
            let before =
                &before[..before.len() - before.chars().next_back().map_or(0, char::len_utf8)];
            let mut context: Vec<&str> = before.split_whitespace().rev().take(3).collect();
            context.reverse();
            Quoted {
                text: goal[range].to_owned(),
                context: context.join(" "),
            }
        })
        .collect()
}

/// The words of a text, without surrounding punctuation.
pub fn words_of(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(trim_punctuation)
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_carry_what_they_are_for() {
        let goal = GoalReading::of(
            "Enter the username \"kenda\" and the password \"99kS\" into the text fields",
        );
        let pairs: Vec<(&str, &str)> = goal
            .quoted
            .iter()
            .map(|q| (q.text.as_str(), q.context.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("kenda", "Enter the username"),
                ("99kS", "and the password")
            ]
        );
        let goal = GoalReading::of("Don't click 'Buy' or the user's \u{201c}Save\u{201d}");
        let texts: Vec<&str> = goal.quoted.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(texts, ["Save", "Buy"]);
    }

    #[test]
    fn names_inside_a_sentence_are_values_too() {
        let goal = GoalReading::of(
            "Find the email by Wilhelmina and forward that email to Malva. Then Submit \"Ok Go\".",
        );
        let pairs: Vec<(&str, &str)> = goal
            .names
            .iter()
            .map(|n| (n.text.as_str(), n.context.as_str()))
            .collect();
        // "Find" and "Then" start sentences, "Ok" is quoted; a control's name ("Submit") is
        // read too, and the policy leaves out what names a control on the page.
        assert_eq!(
            pairs,
            [
                ("Wilhelmina", "email by"),
                ("Malva", "email to"),
                ("Submit", "Malva Then")
            ]
        );
        assert!(
            GoalReading::of("Click button ONE, then TWO.")
                .names
                .is_empty()
        );
        // A handle names someone, even first in a sentence; a lone "@" does not.
        let handles: Vec<String> = GoalReading::of("@et: mute. Like all posts by @aliquam, not @.")
            .names
            .into_iter()
            .map(|n| n.text)
            .collect();
        assert_eq!(handles, ["@et", "@aliquam"]);
    }

    #[test]
    fn unquoted_values_and_positions() {
        let goal = GoalReading::of("Enter 11:57 PM as the time, then click the 3rd checkbox.");
        assert_eq!(goal.tokens, ["11:57 PM"]);
        assert_eq!(
            goal.positions,
            [Position {
                ordinal: Ordinal::Nth(3),
                kind: vec!["checkbox".into()]
            }]
        );
        let goal = GoalReading::of("Select 01/10/2010, the second radio button and the last word.");
        assert_eq!(goal.tokens, ["01/10/2010"]);
        assert_eq!(goal.positions[0].ordinal, Ordinal::Nth(2));
        assert_eq!(goal.positions[0].kind, ["radio", "button", "and"]);
        assert_eq!(goal.positions[1].ordinal, Ordinal::Last);
        assert_eq!(goal.positions[1].kind, ["word"]);
        assert_eq!(Ordinal::Nth(2).index(3), Some(1));
        assert_eq!(Ordinal::Nth(4).index(3), None);
        assert_eq!(Ordinal::Last.index(3), Some(2));
    }

    #[test]
    fn dates_in_the_ways_people_write_them() {
        let day = |year, month, day| GoalDate { year, month, day };
        assert_eq!(
            GoalReading::of("Select 04/08/2016 as the date and hit submit.").dates,
            [day(2016, 4, 8)]
        );
        assert_eq!(
            GoalReading::of("Book it on July 11, 2016, or 2016-12-01, or 3 Sept 2017").dates,
            [day(2016, 7, 11), day(2016, 12, 1), day(2017, 9, 3)]
        );
        // Not dates: a time, an amount, a month without a day, a 13th month.
        assert!(
            GoalReading::of("At 11:57 PM pay $3.50 in May, or 13/01/2016")
                .dates
                .is_empty()
        );
        assert_eq!(day(2016, 4, 8).months_from(2016, 12), -8);
        assert_eq!(day(2017, 1, 8).months_from(2016, 12), 1);
        assert_eq!(
            shown_month("Prev Next December 2016 Su Mo"),
            Some((2016, 12))
        );
        assert_eq!(shown_month("May the 4th"), None);
    }

    #[test]
    fn ranges_of_whole_numbers() {
        assert_eq!(
            GoalReading::of("Guess the number between 0-9 and press Submit.").ranges,
            [(0, 9)]
        );
        assert_eq!(
            GoalReading::of("Pick one between 3 and 7, or from 10 to 12.").ranges,
            [(3, 7), (10, 12)]
        );
        // Not ranges: a date, a code, a backwards pair.
        assert!(
            GoalReading::of("On 2016-12-01 enter AB-12 or 9-3")
                .ranges
                .is_empty()
        );
    }

    #[test]
    fn senders_and_recipients() {
        for (goal, sender, recipient) in [
            ("Send Marlena the email from Caprice.", "Caprice", "Marlena"),
            ("Forward the mail by Ibby to Andria.", "Ibby", "Andria"),
            ("Forward Wren the message Lyda sent you.", "Lyda", "Wren"),
            (
                "I command you to give Etheline the email from Doria.",
                "Doria",
                "Etheline",
            ),
            (
                "Lucie's email, will you forward that to Katee?",
                "Lucie",
                "Katee",
            ),
            (
                "Could you forward Ardys\u{2019}s email to Jo?",
                "Ardys",
                "Jo",
            ),
        ] {
            let reading = GoalReading::of(goal);
            assert_eq!(reading.senders, [sender], "{goal}");
            assert!(
                reading.recipient(recipient) && !reading.recipient(sender),
                "{goal}"
            );
        }
        // A possessive first in a sentence is a name all the same; whose email is answered.
        let reading = GoalReading::of("Answer Lucie's email with \"Yes\"");
        assert_eq!(reading.senders, ["Lucie"]);
        assert_eq!(reading.names.len(), 1);
        assert_eq!(reading.names[0].text, "Lucie");
        assert!(GoalReading::of("Send Joella the email from Chrystal.").passes_on());
        assert!(GoalReading::of("Find Darlleen's email, forward to Essa").passes_on());
        assert!(!GoalReading::of("Reply to Joyan's email with, \"Vestibulum.\".").passes_on());
        assert!(!GoalReading::of("Send email to Prisca saying, \"Faucibus.\"").passes_on());
        // No sender named: no name is a recipient by this rule.
        let reading = GoalReading::of("Reply to Alice with the word Yes");
        assert!(reading.senders.is_empty() && !reading.recipient("Alice"));
    }

    #[test]
    fn text_the_page_shows() {
        for goal in [
            "Type the text below into the text field and press Submit.",
            "Copy the text in the textarea below, paste it into the textbox",
            "Enter the displayed code",
            "Type the letters shown in the picture",
        ] {
            assert!(GoalReading::of(goal).shown_text, "{goal}");
        }
        for goal in [
            "Enter \"Lima\" into the text field",
            "Click the button below",
            "Type the 4th word in the paragraph below",
            "Find the text field and type your name",
        ] {
            assert!(!GoalReading::of(goal).shown_text, "{goal}");
        }
    }

    #[test]
    fn labelled_values() {
        let reading = GoalReading::of(
            "Book the shortest one-way flight from: LIH to: West Palm Beach, FL on 11/25/2016.",
        );
        let pairs: Vec<(&str, &str)> = reading
            .labelled
            .iter()
            .map(|l| (l.context.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(pairs, [("from", "LIH"), ("to", "West Palm Beach, FL")]);
        // Their words are the values', not names of their own; the date after them stays a token.
        assert!(reading.names.is_empty(), "{:?}", reading.names);
        assert_eq!(reading.tokens, ["11/25/2016"]);
        let reading = GoalReading::of("Send it with Subject: Weekly report and Priority: high");
        let pairs: Vec<(&str, &str)> = reading
            .labelled
            .iter()
            .map(|l| (l.context.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(pairs, [("subject", "Weekly report"), ("priority", "high")]);
        // A time is no label; a colon at the end of a sentence labels nothing.
        assert!(
            GoalReading::of("Enter 11:57 PM as the time")
                .labelled
                .is_empty()
        );
        assert!(GoalReading::of("Do this:").labelled.is_empty());
    }

    #[test]
    fn letter_case() {
        let goal = GoalReading::of("Type \"TRUMAN\" in all lower case letters");
        assert_eq!(goal.cased("TRUMAN"), "truman");
        assert_eq!(
            GoalReading::of("Type \"olin\" in upper case").cased("olin"),
            "OLIN"
        );
        assert_eq!(GoalReading::of("Type \"Olin\"").cased("Olin"), "Olin");
    }
}
