//! How far a page is along what the goal names, read before anything is submitted: the
//! choices made, the values fields hold or could take, the names shown, a calendar's month.
//! A state's value for the search ([`GoalProgress`]), so that a half-filled form ranks above
//! an untouched one.

use super::families;
use super::{
    Choices, GOAL_DAY_LIFT, MONTH_STEP_LIFT, OPEN_CALENDAR_FLOOR, OTHER_DATE_SHARE, POSITION_LIFT,
    REPEAT_AFFINITY, SHOWN_MONTH_CEILING, clicks_risk, is_clickable, is_text_field, mentions,
    names_phrase, padded_words, quotes_a_button, target_of,
};
use crate::environment::Candidate;
use crate::goal::GoalReading;
use forager_protocol::Action;
use forager_protocol::observation::{Element, Observation, PageValue, PageValueKind};

/// How much of what the goal names the page already shows done, each part in [0, 1] or `None`
/// when the goal names nothing of the kind on this page. A state's value, so that the search
/// can tell a half-filled form from an untouched one before anything is submitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GoalProgress {
    /// The checkboxes, radio buttons and options the goal names that are checked, less half a
    /// point for each one it does not name that is.
    pub(super) choices: Option<f64>,
    /// The values the goal gives that some field holds.
    pub(super) values: Option<f64>,
    /// The values the goal gives that no field holds yet and that an empty field of this page
    /// could take (a name in a one-line field, other values in any): the page is a fill away
    /// from holding them (a forward's empty "to" for the recipient the goal names).
    pub(super) placeable: Option<f64>,
    /// The goal's names (other than the page's controls) that the page shows as content, not
    /// as a control to pick ("the email by Wilhelmina": her email open, not the inbox row), or
    /// holds in a field.
    pub(super) names: Option<f64>,
    /// Items that show one number with an "Odd" and an "Even" control: the share marked with
    /// the one that fits, less those marked with the other.
    pub(super) parity: Option<f64>,
    /// Fields labelled for one of the goal's labelled values that hold something else
    /// ("From:" holding the destination, or the date).
    pub(super) misplaced: usize,
}

/// Whether `word` is a word of a control's name or of `text` (the page's text, or a part of it).
pub(super) fn shows_word(observation: &Observation, text: &str, word: &str) -> bool {
    let word = word.to_lowercase();
    observation
        .elements
        .iter()
        .map(|e| e.name.as_str())
        .chain(std::iter::once(text))
        .any(|text| crate::embed::words(text).any(|w| w == word))
}

/// Choices the goal wants and those made: wanted ones checked, less half a point for each
/// checked one it does not want.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) wanted: usize,
    pub(super) done: usize,
    pub(super) wrong: usize,
}

impl Tally {
    pub(super) fn count(&mut self, wanted: bool, checked: bool) {
        self.wanted += usize::from(wanted);
        self.done += usize::from(wanted && checked);
        self.wrong += usize::from(!wanted && checked);
    }

    pub(super) fn share(&self) -> Option<f64> {
        (self.wanted > 0).then(|| {
            ((self.done as f64 - 0.5 * self.wrong as f64) / self.wanted as f64).clamp(0.0, 1.0)
        })
    }
}

impl Tally {
    /// The goal wants `count` of those it names, not all ("on 2 posts by @gravida"): more
    /// pressed than that are wrong ones.
    pub(super) fn limit(&mut self, count: usize) {
        if self.done > count {
            self.wrong += self.done - count;
            self.done = count;
        }
        self.wanted = count.min(self.wanted);
    }
}

/// How many of someone's items the goal asks for: the number before "posts by" ("the "Like"
/// button on 2 posts by @gravida"), in figures or as a word up to ten.
pub(super) fn item_count(goal_words: &str) -> Option<usize> {
    const NUMBER_WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let words: Vec<&str> = goal_words.split_whitespace().collect();
    words.windows(3).find_map(|w| {
        if w[2] != "by" {
            return None;
        }
        w[0].parse::<usize>()
            .ok()
            .or_else(|| NUMBER_WORDS.iter().position(|n| *n == w[0]))
    })
}

/// Whether the field `element` holds `text`, whole or as a phrase of its value.
pub(super) fn holds_already(observation: &Observation, element: &Element, text: &str) -> bool {
    !element.name.is_empty()
        && observation.values.iter().any(|v| {
            v.kind == PageValueKind::Field
                && v.label == element.name
                // In the very letter case too: "hello" is typed again over "Hello".
                && v.value.contains(text)
                && mentions(&v.value, &padded_words(&v.value), text)
        })
}

/// A field's label as the goal would give it: "From:" → "from".
pub(super) fn label_key(label: &str) -> String {
    label.trim().trim_end_matches(':').trim().to_lowercase()
}

/// How a field's value holds one of the goal's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// Only as the whole value (a number, a name).
    Exactly,
    /// Whole, or as a piece (≥ 3 characters) it starts or ends with (a quoted string).
    Pieces,
    /// Whole, or as a phrase among its words (a labelled value).
    Phrase,
}

/// A control that is no button, link or field (a tile, a swatch: a `clickable` the page's
/// listeners make) whose name the goal names ("red" for "all the shades of red").
pub(super) fn named_shape(element: &Element, choices: &Choices) -> bool {
    element.role == "clickable" && names_phrase(&choices.goal_words, &element.name)
}

/// The controls the goal quotes by name ("Like") that sit in an item ([`Element::record`]: a
/// post, a row), each with whether its item is of someone the goal names ("the posts by
/// @aliquam").
pub(super) fn quoted_item_toggles<'a>(
    observation: &'a Observation,
    reading: &'a GoalReading,
) -> impl Iterator<Item = (&'a Element, bool)> + 'a {
    let names: Vec<&str> = reading
        .names
        .iter()
        .filter(|n| !reading.recipient(&n.text))
        .map(|n| n.text.as_str())
        .collect();
    observation
        .elements
        .iter()
        .filter(|element| {
            !element.record.is_empty()
                && reading
                    .quoted
                    .iter()
                    .any(|q| q.text.eq_ignore_ascii_case(element.name.trim()))
        })
        .map(move |element| {
            let record = padded_words(&element.record);
            let theirs = names.iter().any(|n| mentions(&element.record, &record, n));
            (element, theirs)
        })
}

pub(super) fn goal_progress(
    observation: &Observation,
    reading: &GoalReading,
    goal: &str,
) -> GoalProgress {
    let goal_text = padded_words(goal);
    let fields = FieldsHeld::of(observation, &goal_text);
    let values = values_progress(observation, reading, &fields);
    GoalProgress {
        choices: choices_progress(observation, reading, &goal_text),
        values: values.map(|v| v.held),
        placeable: values.map(|v| v.placeable),
        names: names_progress(observation, reading, goal, &fields),
        parity: families::parity_marked(observation),
        misplaced: misplaced_fields(reading, &fields),
    }
}

/// The page's fields and what they hold, with their labels as the goal would give them.
pub(super) struct FieldsHeld<'a> {
    pub(super) values: Vec<&'a PageValue>,
    pub(super) labels: Vec<String>,
    /// An empty, editable one-line text field (not a search box unless the goal searches).
    pub(super) empty_line: bool,
    /// An empty, editable text field of any kind (a message body too).
    pub(super) empty_any: bool,
}

impl<'a> FieldsHeld<'a> {
    pub(super) fn of(observation: &'a Observation, goal_text: &str) -> FieldsHeld<'a> {
        // A value typed into a search box is progress only when the goal is to search:
        // otherwise the reply text in the inbox's search field looks like a reply half
        // written.
        let searching = goal_text.contains(" search ");
        let counts = |name: &str| searching || !name.to_lowercase().contains("search");
        let values: Vec<&PageValue> = observation
            .values
            .iter()
            .filter(|v| v.kind == PageValueKind::Field && counts(&v.label))
            .collect();
        let labels = values.iter().map(|v| label_key(&v.label)).collect();
        // A field without a value of its own name on the page is empty (what fields hold is
        // read under their names).
        let empty = |e: &&Element| {
            is_text_field(e)
                && !e.disabled
                && !e.readonly
                && counts(&e.name)
                && !values.iter().any(|v| v.label == e.name)
        };
        let empty_fields: Vec<&Element> = observation.elements.iter().filter(empty).collect();
        FieldsHeld {
            empty_line: empty_fields.iter().any(|e| e.tag != "textarea"),
            empty_any: !empty_fields.is_empty(),
            values,
            labels,
        }
    }
}

/// The checkboxes, radio buttons and options the goal names that are checked, less half a
/// point for each one it does not name that is; or the toggles it quotes on someone's items.
pub(super) fn choices_progress(
    observation: &Observation,
    reading: &GoalReading,
    goal_text: &str,
) -> Option<f64> {
    let named = |name: &str| names_phrase(goal_text, name);
    let mut boxes = Tally::default();
    for element in &observation.elements {
        if !matches!(
            element.role.as_str(),
            "checkbox" | "radio" | "switch" | "option"
        ) {
            continue;
        }
        boxes.count(named(&element.name), element.checked);
    }
    // Toggles the goal quotes by name in the items of someone it names ("Like" on the posts by
    // @aliquam), where no checkbox is named: those pressed among those of such items, less
    // half a point for each pressed in another's item. Only where there are several to press
    // (one "Mute" in one menu is a click to make, not a state to count).
    if boxes.wanted == 0 {
        let mut toggles = Tally::default();
        for (element, theirs) in quoted_item_toggles(observation, reading) {
            toggles.count(theirs, element.checked);
        }
        if toggles.wanted >= 2 {
            if let Some(count) = item_count(goal_text) {
                toggles.limit(count);
            }
            boxes = toggles;
        }
    }
    boxes.share()
}

/// Shares of the goal's values: those some field holds, and those no field holds that an
/// empty field could take.
#[derive(Debug, Clone, Copy)]
pub(super) struct ValuesProgress {
    pub(super) held: f64,
    pub(super) placeable: f64,
}

/// The values the goal gives that some field holds (where the goal labels values, a field
/// with one of its labels holds that value only), and those an empty field could take.
pub(super) fn values_progress(
    observation: &Observation,
    reading: &GoalReading,
    fields: &FieldsHeld<'_>,
) -> Option<ValuesProgress> {
    let (mut wanted, mut done, mut placeable) = (0usize, 0usize, 0usize);
    let field_labels = &fields.labels;
    // Where the goal labels values ("from: LIH to: …"), a field with one of its labels holds
    // that value only, and the goal's other values count in the other fields.
    let labelled: Vec<&str> = reading
        .labelled
        .iter()
        .map(|l| l.context.as_str())
        .collect();
    let held_for = |label: Option<&str>| -> Vec<&str> {
        let has_field = label.is_some_and(|l| field_labels.iter().any(|f| f == l));
        fields
            .values
            .iter()
            .zip(field_labels)
            .filter(|(_, f)| match label {
                Some(l) if has_field => f.as_str() == l,
                _ => !labelled.contains(&f.as_str()),
            })
            .map(|(v, _)| v.value.as_str())
            .collect()
    };
    // A name the page shows is there to be found ("the email by Andria"); one it does not
    // show is there to be typed ("forward it to Ibby").
    let shown = |name: &str| shows_word(observation, &observation.text_excerpt, name);
    let literals = reading
        .quoted
        .iter()
        .filter(|q| !quotes_a_button(q, observation))
        .map(|q| (reading.cased(&q.text), Held::Pieces, None))
        .chain(reading.labelled.iter().map(|l| {
            (
                reading.cased(&l.text),
                Held::Phrase,
                Some(l.context.as_str()),
            )
        }))
        .chain(
            reading
                .tokens
                .iter()
                .map(|t| (t.clone(), Held::Exactly, None)),
        )
        .chain(
            reading
                .names
                .iter()
                .filter(|n| !shown(&n.text) || reading.recipient(&n.text))
                .map(|n| (n.text.clone(), Held::Exactly, None)),
        );
    for (literal, how, label) in literals {
        // Only values some field on this page could hold count.
        if !observation.elements.iter().any(is_text_field) {
            break;
        }
        wanted += 1;
        // A quoted piece a field's value starts or ends with counts too: "starts with "Lith"
        // and ends with "ania"" is done by "Lithuania", picked from suggestions. Not numbers
        // (12 is not 123) and not names.
        let holds = |h: &&str| {
            let h = h.trim();
            h == literal
                || match how {
                    Held::Exactly => false,
                    Held::Pieces => {
                        literal.chars().count() >= 3
                            && (h.starts_with(literal.as_str()) || h.ends_with(literal.as_str()))
                    }
                    // A labelled value inside a suggestion picked for it: "LIH" in "Kauai
                    // Island/Lihue, HI (LIH)".
                    Held::Phrase => mentions(h, &padded_words(h), &literal),
                }
        };
        if held_for(label).iter().any(holds) {
            done += 1;
        } else if match how {
            // A name goes into a one-line field (a recipient), not a message's body.
            Held::Exactly => fields.empty_line,
            Held::Pieces | Held::Phrase => fields.empty_any,
        } {
            placeable += 1;
        }
    }
    (wanted > 0).then(|| ValuesProgress {
        held: done as f64 / wanted as f64,
        placeable: placeable as f64 / wanted as f64,
    })
}

/// The goal's names (other than the page's controls) that the page shows as content, not as
/// a control to pick, or holds in a single-line field.
pub(super) fn names_progress(
    observation: &Observation,
    reading: &GoalReading,
    goal: &str,
    fields: &FieldsHeld<'_>,
) -> Option<f64> {
    let goal_text = padded_words(goal);
    // The page's words without the goal itself, where the page prints it (a task page shows
    // its instruction): the goal's names are always in that.
    let content = padded_words(&observation.text_excerpt).replacen(&goal_text, " ", 1);
    let controls: Vec<String> = observation
        .elements
        .iter()
        .map(|e| padded_words(&e.name))
        .collect();
    let raw_content = observation.text_excerpt.replacen(goal, " ", 1);
    // A name held in a single-line field (a recipient, a login): one typed into a text body
    // (a reply's message) is not where the goal's names go, and must not make a reply to the
    // sender look like the goal's forward to someone else done.
    let bodies: Vec<&str> = observation
        .elements
        .iter()
        .filter(|e| e.tag == "textarea")
        .map(|e| e.name.as_str())
        .collect();
    let held_names: Vec<&str> = fields
        .values
        .iter()
        .filter(|v| !bodies.contains(&v.label.as_str()))
        .map(|v| v.value.as_str())
        .collect();
    let (mut wanted_names, mut shown_names) = (0usize, 0usize);
    for name in &reading.names {
        // "press Submit" names a control of this page, not a subject.
        if observation
            .elements
            .iter()
            .any(|e| e.name.eq_ignore_ascii_case(&name.text))
        {
            continue;
        }
        wanted_names += 1;
        // A recipient counts once typed, not where the page shows her (her own email open).
        let as_content = !reading.recipient(&name.text)
            && mentions(&raw_content, &content, &name.text)
            && !observation
                .elements
                .iter()
                .zip(&controls)
                .any(|(e, c)| mentions(&e.name, c, &name.text));
        if as_content
            || held_names
                .iter()
                .any(|h| h.trim().eq_ignore_ascii_case(&name.text))
        {
            shown_names += 1;
        }
    }
    (wanted_names > 0).then(|| shown_names as f64 / wanted_names as f64)
}

/// Fields labelled for one of the goal's labelled values that hold something else.
pub(super) fn misplaced_fields(reading: &GoalReading, fields: &FieldsHeld<'_>) -> usize {
    fields
        .values
        .iter()
        .zip(&fields.labels)
        .filter(|(v, label)| {
            let value = v.value.trim();
            let mut own = reading
                .labelled
                .iter()
                .filter(|l| l.context == **label)
                .peekable();
            own.peek().is_some()
                && !value.is_empty()
                && !own.any(|l| {
                    let literal = reading.cased(&l.text);
                    value == literal || mentions(value, &padded_words(value), &literal)
                })
        })
        .count()
}

/// A prior bonus for each element at a position the goal names: "the 3rd input textbox",
/// "the 2nd checkbox", "the 6th search result", counted among the page's elements of that kind
/// in document order.
pub(super) fn position_bonus(observation: &Observation, reading: &GoalReading) -> Vec<f64> {
    let mut bonus = vec![0.0; observation.elements.len()];
    for position in &reading.positions {
        let has = |word: &str| position.kind.iter().any(|k| k.starts_with(word));
        let kind: fn(&Element) -> bool = if has("checkbox") {
            |e| e.role == "checkbox"
        } else if has("radio") {
            |e| e.role == "radio"
        } else if has("textarea") || (has("text") && has("area")) {
            |e| e.tag == "textarea"
        } else if has("textbox") || has("input") || has("field") || has("text") {
            |e| is_text_field(e) && e.tag != "textarea"
        } else if has("button") {
            |e| e.role == "button"
        } else if has("link") || has("result") {
            |e| matches!(e.role.as_str(), "link" | "clickable")
        } else if has("tab") {
            |e| e.role == "tab"
        } else if has("item") || has("option") {
            |e| is_clickable(e)
        } else {
            continue;
        };
        let of_kind: Vec<usize> = (0..observation.elements.len())
            .filter(|&i| kind(&observation.elements[i]))
            .collect();
        if let Some(i) = position.ordinal.index(of_kind.len()) {
            bonus[of_kind[i]] += POSITION_LIFT;
        }
    }
    bonus
}

/// A calendar on the page and a date the goal names: the month it shows (its title) against
/// the goal's. The controls that step a calendar's month toward the goal's (`Prev`, `Next`,
/// by name, icon or class words) and, once it shows the goal's month, the one named by the
/// goal's day, get a prior bonus; the months between are the page's distance from the goal.
pub(super) struct Calendar {
    /// Months from the shown month to the goal's (negative: the goal is earlier).
    pub(super) months: i32,
    pub(super) day: u32,
}

impl Calendar {
    pub(super) fn of(observation: &Observation, reading: &GoalReading) -> Option<Calendar> {
        let goal = reading.dates.first()?;
        // Once a field holds the goal's date, the calendar has done its part.
        let chosen = observation.values.iter().any(|v| {
            v.kind == PageValueKind::Field && crate::goal::dates_of(&v.value).contains(goal)
        });
        if chosen {
            return None;
        }
        let (year, month) = crate::goal::shown_month(&observation.text_excerpt)?;
        Some(Calendar {
            months: goal.months_from(year, month),
            day: goal.day,
        })
    }

    /// Whether a control is another day than the goal's: a control named by a bare day
    /// number (1 to 31) while the calendar shows another month, or another day of the goal's
    /// month. Picking it sets a date the goal does not name, so it is not offered (a calendar
    /// has some thirty of them, and a search would try each).
    pub(super) fn other_day(&self, element: &Element) -> bool {
        let name = element.name.trim();
        let Ok(day) = name.parse::<u32>() else {
            return false;
        };
        (1..=31).contains(&day) && name.len() <= 2 && (self.months != 0 || day != self.day)
    }

    /// Whether a control steps the calendar toward the goal's month.
    pub(super) fn steps_toward(&self, element: &Element) -> bool {
        let name = element.name.trim();
        let words: Vec<String> = crate::embed::words(name).collect();
        let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
        let earlier =
            has(&["prev", "previous", "earlier"]) || ["<", "<<", "«", "‹"].contains(&name);
        let later = has(&["next", "later"]) || [">", ">>", "»", "›"].contains(&name);
        (self.months < 0 && earlier && !later) || (self.months > 0 && later && !earlier)
    }

    pub(super) fn bonus(&self, element: &Element) -> f64 {
        let name = element.name.trim();
        if self.months == 0 {
            let day = self.day.to_string();
            let padded = format!("{:02}", self.day);
            return if name == day || name == padded {
                GOAL_DAY_LIFT
            } else {
                0.0
            };
        }
        if self.steps_toward(element) {
            MONTH_STEP_LIFT
        } else {
            0.0
        }
    }

    /// The whole walk to the goal's month in one action, when it is more than one step.
    pub(super) fn walk(&self, observation: &Observation) -> Option<(Candidate<Action>, f64)> {
        let times = self.months.unsigned_abs();
        if !(2..=forager_protocol::workflow::MAX_REPEAT).contains(&times) {
            return None;
        }
        let control = observation
            .elements
            .iter()
            .find(|e| !e.disabled && is_clickable(e) && self.steps_toward(e))?;
        let risk = clicks_risk(&[control]);
        Some((
            Candidate {
                action: Action::Repeat {
                    target: target_of(control),
                    times,
                },
                prior: 0.0,
                risk,
                key: 0,
                target: None,
                refused: None,
                why: Default::default(),
            },
            REPEAT_AFFINITY,
        ))
    }
}

/// How near months are: 1 at the same month, 0 a year or more apart.
pub(super) fn month_nearness(months: i32) -> f64 {
    1.0 - f64::from(months.unsigned_abs().min(12)) / 12.0
}

/// How near a page is to the date the goal names, when it shows a date at all: a field that
/// holds the goal's date is there (1); a calendar is on the way, the nearer its month the
/// further (0.25 a year away, 0.9 at the month); a field that holds another date is off the
/// way (half its nearness: picking the wrong day is worse than looking for the right one).
pub(super) fn date_progress(observation: &Observation, reading: &GoalReading) -> Option<f64> {
    let goal = reading.dates.first()?;
    let held = observation
        .values
        .iter()
        .filter(|v| v.kind == PageValueKind::Field)
        // Not in a field labelled for another of the goal's values ("From:").
        .filter(|v| {
            let label = label_key(&v.label);
            !reading.labelled.iter().any(|l| l.context == label)
        })
        .flat_map(|v| crate::goal::dates_of(&v.value))
        .map(|date| {
            if date == *goal {
                1.0
            } else {
                OTHER_DATE_SHARE * month_nearness(goal.months_from(date.year, date.month))
            }
        })
        .fold(None, |best: Option<f64>, p| {
            Some(best.map_or(p, |b| b.max(p)))
        });
    let shown = crate::goal::shown_month(&observation.text_excerpt).map(|(year, month)| {
        OPEN_CALENDAR_FLOOR
            + (SHOWN_MONTH_CEILING - OPEN_CALENDAR_FLOOR)
                * month_nearness(goal.months_from(year, month))
    });
    // A date field that takes no typing, empty, and no calendar open: the date is still all
    // to do, and a page that looks promising for other reasons is no nearer to it.
    let picker_waits = || {
        observation
            .elements
            .iter()
            .any(|e| e.readonly && !e.disabled && is_text_field(e))
    };
    match (held, shown) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (None, None) if picker_waits() => Some(0.0),
        (a, b) => a.or(b),
    }
}
