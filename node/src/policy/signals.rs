//! The eyes' signals, and the one place they are combined.
//!
//! A signal reads one thing of a page against the goal ("the control carries a name the goal
//! spells out", "the goal's choices are made") and says how it moves either a click's
//! affinity (its prior before normalisation: [`ClickSignal`], a [`Lift`]) or the page's value
//! ([`PageSignal`], a share of it). [`combine`] and [`page_value`] put them together in a
//! fixed order that does not depend on where a signal sits in a list: first every floor, then
//! every addition, then every factor; a page's value is the weighted mean of its parts. Each
//! signal has a named weight ([`Weights`]: 1 unless set; 0 turns it off), which is how a sweep
//! or an ablation sets them (`FORAGER_WEIGHTS=parity=0,forward_not_reply=0`). What each signal
//! added is kept as the candidate's [`Why`], which a step's result shows.
//!
//! Adding a signal: write its reading as a function of [`ClickPage`] (or a field of
//! [`PageParts`]), put it in [`CLICK_SIGNALS`] (or [`PAGE_SIGNALS`]) with its name and what it
//! reads, and give it a unit test beside the others below. Rules that know one benchmark's
//! task family live in `families.rs`.
//!
//! A page's value is multiplied by `MISPLACED_VALUE_FACTOR` for each field labelled for one of
//! the goal's values that holds another. For each executed action the browser environment notes
//! its rank among the candidates the search could take and its top signals
//! (`forager_protocol::result::StepWhy`), which travel to the queen beside the step and into
//! `result.json`, the journal and the report; pass@1 is a passing path whose every step was rank
//! 1 (`RunResult::first_choice_path`).

use super::families;
pub(super) use super::{ClickPage, Lift, NAMED_AFFINITY};
use super::{GoalProgress, keeps_course, mentions, padded_words};
use crate::environment::Why;
use crate::goal::GoalReading;
use forager_protocol::observation::Element;
use std::collections::HashMap;

/// The signal every click starts from: how like the goal the control's words are (n-grams, and
/// the sentence model where one is loaded).
pub(super) const GOAL_SIMILARITY: &str = "goal_similarity";

/// One named signal of a click's affinity.
pub(super) struct ClickSignal {
    /// Its name, as the why and the weights say it.
    pub(super) name: &'static str,
    /// What it reads (for `docs/signals.md` and a newcomer).
    pub(super) reads: &'static str,
    /// It orders the page's clicks only, and says nothing of how promising the page is (a
    /// calendar's step toward the goal's month: a page is not nearer for holding a calendar).
    pub(super) prior_only: bool,
    /// How it moves the affinity of the click on element `index`, if at all.
    pub(super) lift: fn(&ClickPage<'_>, usize, &Element) -> Option<Lift>,
}

/// The affinity at least of a control of an item the goal names by the item's words (the
/// "+" of a dish it orders: [`crate::item_controls`]), and of pressing it as often as the goal
/// counts. Low: above the page's other controls, below a control that carries a goal word
/// ("Order!"), which sends what the items hold once they hold it. Pressing each named item's
/// control at once ranks first (as `check` does).
pub(super) const ITEM_AFFINITY: f64 = 0.2;

/// What an element gains when the item it sits in (a post, a row) carries a name of the goal
/// that the element itself does not: the "Like" of @aliquam's post over the other posts' ones.
pub(super) const RECORD_NAMED_LIFT: f64 = 0.15;

/// What a control of the item the goal wants at an extreme gains ("the cheapest flight":
/// the "Book" of the lowest price).
pub(super) const EXTREME_LIFT: f64 = 0.3;

/// What a form's submit button gains when its page's fields hold every value the goal gives
/// (a suggestion picked, a value typed alone): the step left, ahead of typing again.
pub(super) const READY_SUBMIT_LIFT: f64 = 0.3;

/// The factor of a form's submit control while a value the goal gives is held by no field:
/// sent now, the form goes without it (a dead end or a wrong answer), and a whole-form fill
/// that types the values and sends it is the better first try.
pub(super) const VALUES_PENDING_FACTOR: f64 = 0.3;

/// The factor of a text field's label: clicking it only focuses the field, which the form's
/// fill does anyway.
pub(super) const FOCUSES_ONLY_FACTOR: f64 = 0.1;

/// The factor of a toggle the goal wants pressed that is pressed already: pressed again, it
/// is undone.
pub(super) const PRESSED_AGAIN_FACTOR: f64 = 0.1;

/// The signals of a click's affinity. Their order here changes nothing ([`combine`] orders by
/// kind of lift); it is the order the why lists equal lifts in.
pub(super) const CLICK_SIGNALS: &[ClickSignal] = &[
    ClickSignal {
        name: "names_goal_word",
        reads: "the control's name or text holds a quoted text, labelled value or name of the goal",
        prior_only: false,
        lift: names_goal_word,
    },
    ClickSignal {
        name: "item_named",
        reads: "the control sits in an item the goal names by its words (the \"+\" of a dish)",
        prior_only: false,
        lift: |page, index, _| {
            let share = page.item_shares.get(index).copied().unwrap_or(0.0);
            (share > 0.0).then_some(Lift::AtLeast(ITEM_AFFINITY * share))
        },
    },
    ClickSignal {
        name: families::FORWARD_NOT_REPLY,
        reads: "for a goal that passes an item on: forward, not reply (MiniWoB++ email)",
        prior_only: false,
        lift: families::forward_not_reply,
    },
    ClickSignal {
        name: "item_names_goal",
        reads: "the control's item (a post, a row) carries a name of the goal the control does not",
        prior_only: false,
        lift: |page, _, element| {
            super::record_names_goal_word(
                element,
                page.reading,
                &page.choices.goal_words,
                page.hidden_quoted,
            )
            .then_some(Lift::Add(RECORD_NAMED_LIFT))
        },
    },
    ClickSignal {
        name: "opens_named_item",
        reads: "a link of an item (a table row) the goal names, to a page below this one: the item's own page",
        prior_only: false,
        lift: |page, _, element| {
            opens_named_item(element, page.reading, &page.observation.url)
                .then_some(Lift::AtLeast(NAMED_AFFINITY))
        },
    },
    ClickSignal {
        name: "names_column_of_named_item",
        reads: "a link of an item the goal names, in the table column the goal's words name (\"that country's page\" in Mombasa's row)",
        prior_only: false,
        lift: |page, _, element| {
            column_of_named_item(element, page.reading, &page.choices.goal_words)
                .then_some(Lift::AtLeast(NAMED_AFFINITY))
        },
    },
    ClickSignal {
        name: families::PARITY,
        reads: "an \"Odd\"/\"Even\" control beside a number it fits or not (MiniWoB++ odd-or-even)",
        prior_only: false,
        lift: families::parity,
    },
    ClickSignal {
        name: "form_ready",
        reads: "the control sends a form whose fields hold every value the goal gives",
        prior_only: false,
        lift: |page, _, element| {
            (page.values_held && sends_form(element)).then_some(Lift::Add(READY_SUBMIT_LIFT))
        },
    },
    ClickSignal {
        name: "values_pending",
        reads: "the control sends a form while a value the goal gives is held by no field yet",
        prior_only: false,
        lift: |page, _, element| {
            (page.values_pending && sends_form(element))
                .then_some(Lift::Scale(VALUES_PENDING_FACTOR))
        },
    },
    ClickSignal {
        name: "superlative",
        reads: "the control's item is the one the goal wants at an extreme (\"the cheapest\")",
        prior_only: false,
        lift: |page, index, _| {
            page.extremes
                .get(index)
                .copied()
                .unwrap_or(false)
                .then_some(Lift::Add(EXTREME_LIFT))
        },
    },
    ClickSignal {
        name: "position",
        reads: "the control is at the position the goal names (\"the 2nd checkbox\")",
        prior_only: false,
        lift: |page, index, _| {
            let bonus = page.positions.get(index).copied().unwrap_or(0.0);
            (bonus > 0.0).then_some(Lift::Add(bonus))
        },
    },
    ClickSignal {
        name: "calendar_step",
        reads: "the control steps a calendar toward the goal's month, or is the goal's day",
        prior_only: true,
        lift: |page, _, element| {
            let bonus = page.calendar.map_or(0.0, |c| c.bonus(element));
            (bonus > 0.0).then_some(Lift::Add(bonus))
        },
    },
    ClickSignal {
        name: "keeps_course",
        reads: "the control ends the session, switches theme or language, leaves the area, reloads or skips",
        prior_only: false,
        lift: |page, _, element| {
            let factor = keeps_course(element, page.task, &page.observation.url);
            (factor < 1.0).then_some(Lift::Scale(factor))
        },
    },
    ClickSignal {
        name: "choices",
        reads: "a choice the goal names is made already, or buttons wait while one remains",
        prior_only: false,
        lift: |page, _, element| {
            let factor = page.choices.factor(element);
            (factor < 1.0).then_some(Lift::Scale(factor))
        },
    },
    ClickSignal {
        name: "focuses_only",
        reads: "the control is a text field's label (the fill focuses the field anyway)",
        prior_only: false,
        lift: |page, _, element| {
            let focuses_only = element.tag == "label"
                && page
                    .observation
                    .elements
                    .iter()
                    .any(|e| super::is_text_field(e) && e.name == element.name);
            focuses_only.then_some(Lift::Scale(FOCUSES_ONLY_FACTOR))
        },
    },
    ClickSignal {
        name: "plan_adds",
        reads: "a link whose address adds one of the plan's unmet conditions to the listing's query (a facet), or orders it as the plan asks",
        prior_only: false,
        lift: |page, _, element| {
            let adds = page.plan?.link(element).adds.len();
            (adds > 0).then_some(Lift::Add(super::plan::PLAN_LINK_LIFT * adds as f64))
        },
    },
    ClickSignal {
        name: "plan_drops",
        reads: "a link whose address drops a condition of the plan the page meets (back to the whole listing)",
        prior_only: false,
        lift: |page, _, element| {
            let drops = page.plan?.link(element).drops.len();
            (drops > 0).then_some(Lift::Scale(
                super::plan::PLAN_UNDO_FACTOR.powi(drops as i32),
            ))
        },
    },
    ClickSignal {
        name: "plan_off_login",
        reads: "the control leads away from the login the plan needs (registering, recovering a password) while the goal says nothing of it",
        prior_only: false,
        lift: |page, _, element| {
            page.plan?
                .off_login(&page.task.goal, &element.name)
                .then_some(Lift::Scale(super::plan::PLAN_UNDO_FACTOR))
        },
    },
    ClickSignal {
        name: "plan_other_records",
        reads: "a link of a listed record while the plan makes a new one (an existing record's page is off its way); not one that says the act (\"Add\", \"New\") or names the plan's object (\"Groups\" in a list of collections)",
        prior_only: false,
        lift: |page, _, element| {
            let plan = page.plan?;
            (plan.plan.act == forager_protocol::plan::Act::Create
                && element.role == "link"
                && !element.record.is_empty()
                && !element.column.is_empty()
                && !says_create_or_object(&element.name, plan.plan.object.as_deref()))
            .then_some(Lift::Scale(super::plan::PLAN_UNDO_FACTOR))
        },
    },
    ClickSignal {
        name: "plan_record",
        reads: "a link of the listed item the plan's record is (its number, name or described words), to a page below the listing",
        prior_only: false,
        lift: |page, _, element| {
            page.plan?
                .opens_record(element, &page.observation.url)
                .then_some(Lift::AtLeast(NAMED_AFFINITY))
        },
    },
    ClickSignal {
        name: "pressed_already",
        reads: "a toggle the goal wants pressed that is pressed (again, it is undone)",
        prior_only: false,
        lift: |page, _, element| {
            page.pressed_toggles
                .iter()
                .any(|t| std::ptr::eq(*t, element))
                .then_some(Lift::Scale(PRESSED_AGAIN_FACTOR))
        },
    },
];

/// Whether the control is a link of an item the goal names (a quoted text or a name the
/// item's text holds and the link's does not) to a page below this one: a listing's row
/// links to the row's own page (`/world/cities` → `/world/cities/3`, the id "3" in Cusco's
/// row), its other links to other things (the row's country).
fn opens_named_item(element: &Element, reading: &GoalReading, page_url: &str) -> bool {
    if element.role != "link" || element.record.is_empty() {
        return false;
    }
    let Some(href) = element.href.as_deref() else {
        return false;
    };
    let here = page_url
        .split(['?', '#'])
        .next()
        .unwrap_or(page_url)
        .trim_end_matches('/');
    let below = href
        .strip_prefix(here)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with(['?', '#']));
    below && super::record_names_what_element_does_not(element, reading)
}

/// Whether the control is a link in a row the goal names (by a name the row's text holds and
/// the link's does not) and in a column whose header a word of the goal names: "Which
/// country is Mombasa in? Take me to that country's page" is the `country_code` link of
/// Mombasa's row, not the same country's link in another city's row, nor Mombasa's own page.
fn column_of_named_item(element: &Element, reading: &GoalReading, goal_words: &str) -> bool {
    element.role == "link"
        && crate::embed::words(&element.column)
            .any(|w| w.len() >= 3 && goal_words.contains(&format!(" {w} ")))
        && super::record_names_what_element_does_not(element, reading)
}

/// Whether the control is its form's submit control.
fn sends_form(element: &Element) -> bool {
    element.form.as_ref().is_some_and(|f| {
        f.submit_name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(&element.name))
    })
}

/// An element that carries a name the goal spells out ("the email by Wilhelmina", "click on
/// "Yes"") is what the goal is about, however little else of the goal its text shares (a
/// list row's subject and preview dilute the n-grams). A recipient is typed, not picked: her
/// own email in the inbox is not the one to open.
fn names_goal_word(page: &ClickPage<'_>, _: usize, element: &Element) -> Option<Lift> {
    names_goal(element, page.reading).then_some(Lift::AtLeast(NAMED_AFFINITY))
}

/// Whether the element's name or text holds one of the goal's quoted texts, labelled values
/// or names (not a recipient's) as whole words (case-insensitive).
pub(super) fn names_goal(element: &Element, reading: &GoalReading) -> bool {
    if reading.quoted.is_empty() && reading.names.is_empty() && reading.labelled.is_empty() {
        return false;
    }
    let (name, text) = (padded_words(&element.name), padded_words(&element.text));
    reading
        .quoted
        .iter()
        .chain(&reading.labelled)
        .chain(reading.names.iter().filter(|n| !reading.recipient(&n.text)))
        .any(|q| mentions(&element.name, &name, &q.text) || mentions(&element.text, &text, &q.text))
}

/// The weight of each named signal: 1 unless set, 0 turns a signal off. A floor is raised to
/// `weight × floor`, an addition is `weight × lift`, a factor is `factor ^ weight`, a page
/// part's share is `weight × share`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights(HashMap<String, f64>);

/// The variable a sweep or an ablation sets weights in: `name=weight` pairs, comma-separated.
pub const WEIGHTS_VARIABLE: &str = "FORAGER_WEIGHTS";

/// Why a weights setting was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsError {
    /// A pair is not `name=number`.
    #[error("{0:?} is not name=weight")]
    Malformed(String),
    /// No signal has that name.
    #[error("no signal is named {0:?} (known: {1})")]
    UnknownSignal(String, String),
    /// A weight that is not a finite number at least 0.
    #[error("the weight of {0} must be a finite number ≥ 0")]
    BadWeight(String),
}

impl Weights {
    /// Every signal at weight 1.
    pub fn unit() -> Weights {
        Weights::default()
    }

    /// Parses `name=weight,name=weight`; every name must be a signal's.
    pub fn parse(text: &str) -> Result<Weights, WeightsError> {
        let mut weights = HashMap::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = pair
                .split_once('=')
                .ok_or_else(|| WeightsError::Malformed(pair.to_owned()))?;
            let name = name.trim();
            if !signal_names().any(|known| known == name) {
                return Err(WeightsError::UnknownSignal(
                    name.to_owned(),
                    signal_names().collect::<Vec<_>>().join(", "),
                ));
            }
            let weight: f64 = weight
                .trim()
                .parse()
                .map_err(|_| WeightsError::Malformed(pair.to_owned()))?;
            if !weight.is_finite() || weight < 0.0 {
                return Err(WeightsError::BadWeight(name.to_owned()));
            }
            weights.insert(name.to_owned(), weight);
        }
        Ok(Weights(weights))
    }

    /// The weights [`WEIGHTS_VARIABLE`] sets, else every one 1 (a malformed setting is
    /// logged and ignored: a policy must always be made).
    pub fn from_env() -> Weights {
        match std::env::var(WEIGHTS_VARIABLE) {
            Ok(text) => Weights::parse(&text).unwrap_or_else(|error| {
                tracing::warn!(%error, variable = WEIGHTS_VARIABLE, "signal weights ignored");
                Weights::unit()
            }),
            Err(_) => Weights::unit(),
        }
    }

    /// A signal's weight.
    pub fn of(&self, signal: &str) -> f64 {
        self.0.get(signal).copied().unwrap_or(1.0)
    }

    /// Whether a reading (on or off, no degree) is on: at any weight above 0.
    pub fn on(&self, reading: &str) -> bool {
        self.of(reading) > 0.0
    }
}

/// What kind of say a signal has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// It lifts a click's affinity (and so its prior, and the page's promise).
    Click,
    /// It lifts a click's prior only.
    PriorOnly,
    /// It is a share of the page's value.
    Page,
    /// It may only raise the page's value.
    PageRaising,
    /// It lowers the page's value.
    PagePenalty,
    /// It moves a form fill's affinity.
    Fill,
    /// A benchmark family's reading of values or items, on or (at weight 0) off.
    Reading,
}

/// Every signal: its name, its kind and what it reads (`docs/signals.md` lists the same).
pub fn catalogue() -> Vec<(&'static str, SignalKind, &'static str)> {
    let mut all = vec![(
        GOAL_SIMILARITY,
        SignalKind::Click,
        "how like the goal the control's name, text and nearby text are (n-grams; the sentence model too where loaded)",
    )];
    all.extend(CLICK_SIGNALS.iter().map(|s| {
        let kind = if s.prior_only {
            SignalKind::PriorOnly
        } else {
            SignalKind::Click
        };
        (s.name, kind, s.reads)
    }));
    all.extend(PAGE_SIGNALS.iter().map(|s| {
        let kind = if s.raises_only {
            SignalKind::PageRaising
        } else {
            SignalKind::Page
        };
        (s.name, kind, s.reads)
    }));
    all.extend(
        FILL_SIGNALS
            .iter()
            .map(|(name, reads)| (*name, SignalKind::Fill, *reads)),
    );
    all.push((
        MISPLACED_VALUES,
        SignalKind::PagePenalty,
        "fields labelled for one of the goal's values that hold another",
    ));
    all.extend(
        families::READINGS
            .iter()
            .map(|(name, reads)| (*name, SignalKind::Reading, *reads)),
    );
    all
}

/// Every signal's name, clicks' and pages' (and the page's penalty).
pub fn signal_names() -> impl Iterator<Item = &'static str> {
    std::iter::once(GOAL_SIMILARITY)
        .chain(CLICK_SIGNALS.iter().map(|s| s.name))
        .chain(PAGE_SIGNALS.iter().map(|s| s.name))
        .chain(FILL_SIGNALS.iter().map(|(name, _)| *name))
        .chain(std::iter::once(MISPLACED_VALUES))
        .chain(families::READINGS.iter().map(|(name, _)| *name))
}

/// A click's affinity from its base (`goal_similarity`) and its signals' lifts, and what each
/// added: floors first, then additions, then factors, each as weighted. The one place a
/// click's signals meet.
pub(super) fn combine(base: f64, lifts: &[(&'static str, Lift)], weights: &Weights) -> (f64, Why) {
    let mut affinity = weights.of(GOAL_SIMILARITY) * base;
    let mut why = vec![(GOAL_SIMILARITY, affinity)];
    let floors = lifts.iter().filter_map(|(n, l)| match l {
        Lift::AtLeast(x) => Some((*n, *x)),
        _ => None,
    });
    for (name, floor) in floors {
        let before = affinity;
        affinity = affinity.max(weights.of(name) * floor);
        why.push((name, affinity - before));
    }
    for (name, lift) in lifts {
        if let Lift::Add(x) = lift {
            let added = weights.of(name) * x;
            affinity += added;
            why.push((name, added));
        }
    }
    for (name, lift) in lifts {
        if let Lift::Scale(factor) = lift {
            let before = affinity;
            affinity *= factor.powf(weights.of(name));
            why.push((name, affinity - before));
        }
    }
    (affinity, Why(why))
}

/// The lifts of the click on element `index`.
pub(super) fn click_lifts(
    page: &ClickPage<'_>,
    index: usize,
    element: &Element,
) -> Vec<(&'static str, Lift)> {
    CLICK_SIGNALS
        .iter()
        .filter_map(|s| (s.lift)(page, index, element).map(|lift| (s.name, lift)))
        .collect()
}

/// What the page shows of the goal done, each part in [0, 1] or `None` where the goal names
/// nothing of the kind on this page.
pub(super) struct PageParts {
    pub(super) progress: GoalProgress,
    /// How near the page is to the date the goal names.
    pub(super) dates: Option<f64>,
    /// The share of the goal's plan the page evidences.
    pub(super) plan: Option<f64>,
}

/// One named part of a page's value.
pub(super) struct PageSignal {
    pub(super) name: &'static str,
    pub(super) reads: &'static str,
    /// Its weight in the mean, against the rest of the hint's 1 (the page's likeness to the
    /// goal and its most promising action).
    pub(super) share: f64,
    /// It may only raise the value: values typed are progress, but their absence says nothing
    /// (the goal's quoted product name is not for the checkout form's fields).
    pub(super) raises_only: bool,
    pub(super) read: fn(&PageParts) -> Option<f64>,
}

/// The parts of a page's value besides its likeness to the goal.
pub(super) const PAGE_SIGNALS: &[PageSignal] = &[
    PageSignal {
        name: "choices_made",
        reads: "the checkboxes, radios and options the goal names that are checked (less the others checked)",
        // On a page of checkboxes every state looks alike to the rest of the hint: without
        // this gradient a search spends its budget on every subset of the boxes.
        share: 1.0,
        raises_only: false,
        read: |parts| parts.progress.choices,
    },
    PageSignal {
        name: families::PARITY_MARKED,
        reads: "numbers marked with the Odd/Even control that fits them (MiniWoB++ odd-or-even)",
        share: 1.0,
        raises_only: false,
        read: |parts| parts.progress.parity,
    },
    PageSignal {
        name: "names_shown",
        reads: "the goal's subjects on show as content (the email by the sender it names, open) or held in a field",
        share: 1.0,
        raises_only: false,
        read: |parts| parts.progress.names,
    },
    PageSignal {
        name: "date_nearness",
        reads: "how near a calendar's month or a field's date is to the goal's date",
        // Most of the value: the rest of the hint sees every step of a calendar alike.
        share: 1.5,
        raises_only: false,
        read: |parts| parts.dates,
    },
    PageSignal {
        name: "plan_conditions",
        reads: "the share of the plan's conditions the page evidences (its query, every row it lists, a record's served values), and whether it is the plan's record",
        // Most of a listing's value: without it a page with one of two filters applied looks
        // as far from the goal as the whole listing.
        share: 2.0,
        raises_only: false,
        read: |parts| parts.plan,
    },
    PageSignal {
        name: "values_held",
        reads: "the values the goal gives that some field holds",
        share: 1.0,
        raises_only: true,
        read: |parts| parts.progress.values,
    },
    PageSignal {
        name: "values_placeable",
        reads: "the values the goal gives that no field holds and an empty field could take",
        share: 1.0,
        raises_only: true,
        read: |parts| parts.progress.placeable.map(|p| p * PLACEABLE_CREDIT),
    },
];

/// What a value that an empty field could take counts for, against one a field holds: half.
/// The page is one fill from holding it, where a page without a field for it is at least
/// two steps away (an email's view, before its "Forward"): without it the forward form ranks
/// below the email it came from (its sender no longer shown), and its send was tried before
/// its fill (MiniWoB++ email-inbox-forward-nl-turk, development seeds).
pub(super) const PLACEABLE_CREDIT: f64 = 0.5;

/// The signals of a form's fill (besides its words' likeness and its values' fit): each
/// reads what sending the form would do to the goal's plan.
pub(super) const FILL_SIGNALS: &[(&str, &str)] = &[
    (
        PLAN_SETS,
        "the fill puts one of the plan's unmet conditions into the form's fields (per condition)",
    ),
    (
        PLAN_UNSETS,
        "the fill sends a GET form without a condition of the plan the page's address holds, another record's form where the plan makes one, or a form away from the plan's login",
    ),
];

/// The fill signal of the conditions a fill sets.
pub(super) const PLAN_SETS: &str = "plan_sets";

/// The fill signal of the conditions a fill drops.
pub(super) const PLAN_UNSETS: &str = "plan_unsets";

/// The page's penalty: a field labelled for one of the goal's values that holds another.
pub(super) const MISPLACED_VALUES: &str = "misplaced_values";

/// What a page's value is multiplied by for each field labelled for one of the goal's values
/// that holds another (at most four count).
pub(super) const MISPLACED_VALUE_FACTOR: f64 = 0.8;

/// A page's value: the weighted mean of its hint (weight 1) and the parts it shows, the
/// parts that only raise taken where they raise it, then the penalty for misplaced values.
/// The one place a page's signals meet.
pub(super) fn page_value(hint: f64, parts: &PageParts, weights: &Weights) -> f64 {
    let (mut sum, mut total) = (hint, 1.0);
    let present = |raises_only: bool| {
        PAGE_SIGNALS
            .iter()
            .filter(move |s| s.raises_only == raises_only)
            .filter_map(|s| (s.read)(parts).map(|v| (weights.of(s.name) * s.share, v)))
    };
    for (share, value) in present(false) {
        sum += share * value;
        total += share;
    }
    for (share, value) in present(true) {
        if share > 0.0 && (sum + share * value) / (total + share) > sum / total {
            sum += share * value;
            total += share;
        }
    }
    let misplaced = parts.progress.misplaced.min(4) as i32;
    let penalty = MISPLACED_VALUE_FACTOR
        .powi(misplaced)
        .powf(weights.of(MISPLACED_VALUES));
    (sum / total * penalty).clamp(0.0, 1.0)
}

/// Whether a link's name says "make one" ("Add", "+ New", "Create group") or names the plan's
/// object ("Groups" for a new group): the way to a new record, not another record's page.
fn says_create_or_object(name: &str, object: Option<&str>) -> bool {
    crate::embed::words(name).any(|w| {
        ["add", "new", "create"].contains(&w.as_str())
            || object.is_some_and(|o| forager_protocol::comparison::stem(&w) == o)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_link_that_makes_one_is_no_other_record() {
        // Django's admin index: "Groups | + Add | Change" rows of collections.
        assert!(super::says_create_or_object("+ Add", Some("group")));
        assert!(super::says_create_or_object("Groups", Some("group")));
        assert!(super::says_create_or_object("New page", None));
        assert!(!super::says_create_or_object("staff", Some("group")));
        assert!(!super::says_create_or_object("Change", Some("group")));
    }

    use super::*;
    use crate::goal::GoalReading;
    use crate::policy::{Choices, TaskContext};

    fn progress() -> GoalProgress {
        GoalProgress {
            choices: None,
            values: None,
            placeable: None,
            names: None,
            parity: None,
            misplaced: 0,
        }
    }

    fn element(role: &str, name: &str) -> Element {
        crate::testing::control(role, name, "")
    }

    /// Runs `check` on the lifts of each element of a page for `goal`.
    fn with_page(goal: &str, elements: Vec<Element>, check: impl Fn(&ClickPage<'_>, &[Element])) {
        let observation = crate::policy::tests::page(elements);
        let task = TaskContext {
            goal: goal.into(),
            inputs: Vec::new(),
            allowed_origins: vec!["http://127.0.0.1".into()],
            area: None,
        };
        let reading = GoalReading::of(goal);
        let choices = Choices::of(&observation, goal);
        let n = observation.elements.len();
        let zeros = vec![0.0; n];
        let page = ClickPage {
            observation: &observation,
            task: &task,
            reading: &reading,
            choices: &choices,
            positions: &zeros,
            extremes: &vec![false; n],
            item_shares: &zeros,
            hidden_quoted: false,
            pressed_toggles: &[],
            values_held: false,
            values_pending: false,
            calendar: None,
            plan: None,
        };
        check(&page, &observation.elements);
    }

    #[test]
    fn floors_then_additions_then_factors_whatever_the_order_given() {
        let lifts = [
            ("keeps_course", Lift::Scale(0.5)),
            ("position", Lift::Add(0.2)),
            ("names_goal_word", Lift::AtLeast(0.8)),
        ];
        let (affinity, why) = combine(0.1, &lifts, &Weights::unit());
        assert!((affinity - 0.5).abs() < 1e-9, "(max(0.1, 0.8) + 0.2) × 0.5");
        let mut reversed = lifts;
        reversed.reverse();
        assert_eq!(combine(0.1, &reversed, &Weights::unit()).0, affinity);
        // What each added sums to the affinity.
        let total: f64 = why.0.iter().map(|(_, lift)| lift).sum();
        assert!((total - affinity).abs() < 1e-9);
        assert_eq!(why.top(1)[0].0, "names_goal_word");
    }

    #[test]
    fn a_weight_of_zero_turns_a_signal_off_and_one_changes_nothing() {
        let lifts = [
            ("position", Lift::Add(0.6)),
            ("keeps_course", Lift::Scale(0.1)),
        ];
        let unit = combine(0.3, &lifts, &Weights::unit()).0;
        assert!((unit - 0.09).abs() < 1e-9);
        let off = Weights::parse("position=0, keeps_course=0").expect("known signals");
        assert!((combine(0.3, &lifts, &off).0 - 0.3).abs() < 1e-9);
        let one = Weights::parse("position=1").expect("known signal");
        assert_eq!(combine(0.3, &lifts, &one).0, unit);
    }

    #[test]
    fn weights_name_known_signals_with_finite_non_negative_numbers() {
        assert!(matches!(
            Weights::parse("colour=1"),
            Err(WeightsError::UnknownSignal(..))
        ));
        assert!(matches!(
            Weights::parse("position"),
            Err(WeightsError::Malformed(_))
        ));
        assert!(matches!(
            Weights::parse("position=-1"),
            Err(WeightsError::BadWeight(_))
        ));
        assert!(matches!(
            Weights::parse("position=NaN"),
            Err(WeightsError::BadWeight(_))
        ));
        assert_eq!(Weights::parse("").expect("empty is unit"), Weights::unit());
        let names: Vec<&str> = signal_names().collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "signal names are unique");
    }

    #[test]
    fn a_page_value_is_the_weighted_mean_of_its_parts_in_any_order() {
        let mut parts = PageParts {
            progress: progress(),
            dates: None,
            plan: None,
        };
        assert_eq!(page_value(0.4, &parts, &Weights::unit()), 0.4);
        parts.progress.choices = Some(1.0);
        assert!((page_value(0.4, &parts, &Weights::unit()) - 0.7).abs() < 1e-9);
        // Two parts: each has its share, whichever is read first.
        parts.progress.names = Some(0.0);
        assert!((page_value(0.4, &parts, &Weights::unit()) - (0.4 + 1.0) / 3.0).abs() < 1e-9);
        // A date weighs 1.5 against the hint's 1.
        let dates = PageParts {
            progress: progress(),
            dates: Some(1.0),
            plan: None,
        };
        assert!((page_value(0.0, &dates, &Weights::unit()) - 0.6).abs() < 1e-9);
    }

    #[test]
    fn values_held_only_raise_a_page_and_misplaced_values_lower_it() {
        let mut parts = PageParts {
            progress: progress(),
            dates: None,
            plan: None,
        };
        parts.progress.values = Some(0.0);
        assert_eq!(page_value(0.6, &parts, &Weights::unit()), 0.6);
        parts.progress.values = Some(1.0);
        assert!((page_value(0.6, &parts, &Weights::unit()) - 0.8).abs() < 1e-9);
        parts.progress.misplaced = 9;
        let four = 0.8 * MISPLACED_VALUE_FACTOR.powi(4);
        assert!((page_value(0.6, &parts, &Weights::unit()) - four).abs() < 1e-9);
    }

    #[test]
    fn the_link_to_a_named_rows_own_page_is_lifted() {
        let link = |name: &str, href: &str, record: &str| {
            let mut e = crate::testing::control("link", name, record);
            e.href = Some(href.into());
            e
        };
        let reading = GoalReading::of("Open the page of the city of Cusco");
        let here = "http://127.0.0.1:1/world/cities?_sort=id";
        let row = "3 Cusco Peru 428450";
        assert!(opens_named_item(
            &link("3", "http://127.0.0.1:1/world/cities/3", row),
            &reading,
            here
        ));
        // The row's country is another thing's page; another row's id is not the named one;
        // a link that carries the name itself is `names_goal_word`'s.
        assert!(!opens_named_item(
            &link("Peru", "http://127.0.0.1:1/world/countries/PE", row),
            &reading,
            here
        ));
        assert!(!opens_named_item(
            &link("4", "http://127.0.0.1:1/world/cities/4", "4 Lima Peru"),
            &reading,
            here
        ));
        assert!(!opens_named_item(
            &link("Cusco", "http://127.0.0.1:1/world/cities/3", row),
            &reading,
            here
        ));
        assert!(!opens_named_item(
            &link("3", "http://127.0.0.1:1/world/cities?_sort=name", row),
            &reading,
            here
        ));
    }

    #[test]
    fn a_control_the_goal_names_is_lifted_to_the_named_affinity() {
        with_page(
            "Open the email by \"Wilhelmina\"",
            vec![element("link", "Wilhelmina"), element("link", "Doria")],
            |page, elements| {
                let named = click_lifts(page, 0, &elements[0]);
                assert!(named.contains(&("names_goal_word", Lift::AtLeast(NAMED_AFFINITY))));
                assert!(click_lifts(page, 1, &elements[1]).is_empty());
            },
        );
    }

    #[test]
    fn a_submit_waits_while_a_named_choice_remains_and_a_fields_label_is_held_back() {
        let mut label = element("clickable", "Name");
        label.tag = "label".into();
        let field = element("textbox", "Name");
        with_page(
            "Select \"Beta\" and press Submit",
            vec![
                element("checkbox", "Beta"),
                element("button", "Submit"),
                label,
                field,
            ],
            |page, elements| {
                let submit = click_lifts(page, 1, &elements[1]);
                assert!(submit.contains(&("choices", Lift::Scale(0.5))));
                let beta = click_lifts(page, 0, &elements[0]);
                assert!(!beta.iter().any(|(name, _)| *name == "choices"));
                let label = click_lifts(page, 2, &elements[2]);
                assert!(label.contains(&("focuses_only", Lift::Scale(FOCUSES_ONLY_FACTOR))));
            },
        );
    }

    #[test]
    fn a_forms_submit_waits_while_a_value_is_pending_and_is_lifted_once_all_are_held() {
        let mut submit = element("button", "Go");
        submit.form = Some(forager_protocol::observation::FormContext {
            selector: "form".into(),
            name: String::new(),
            submit_name: Some("Go".into()),
            posts: false,
            implicit: false,
        });
        let other = element("button", "Help");
        with_page("Enter \"Rex\"", vec![submit, other], |page, elements| {
            let pending = ClickPage {
                values_pending: true,
                ..*page
            };
            assert_eq!(
                click_lifts(&pending, 0, &elements[0]),
                vec![("values_pending", Lift::Scale(VALUES_PENDING_FACTOR))]
            );
            assert!(click_lifts(&pending, 1, &elements[1]).is_empty());
            let held = ClickPage {
                values_held: true,
                ..*page
            };
            assert_eq!(
                click_lifts(&held, 0, &elements[0]),
                vec![("form_ready", Lift::Add(READY_SUBMIT_LIFT))]
            );
        });
    }

    #[test]
    fn the_control_of_the_item_the_goal_names_is_lifted_and_one_pressed_already_held_back() {
        let mine = crate::testing::control("button", "Like", "@aliquam Nunc id");
        let theirs = crate::testing::control("button", "Like", "@et Lorem ipsum");
        with_page(
            "Click the \"Like\" button on all posts by @aliquam",
            vec![mine, theirs],
            |page, elements| {
                let mine = click_lifts(page, 0, &elements[0]);
                assert!(mine.contains(&("item_names_goal", Lift::Add(RECORD_NAMED_LIFT))));
                let theirs = click_lifts(page, 1, &elements[1]);
                assert!(!theirs.iter().any(|(name, _)| *name == "item_names_goal"));
                let pressed = [&elements[0]];
                let shares = [1.0, 0.0];
                let page = ClickPage {
                    pressed_toggles: &pressed,
                    item_shares: &shares,
                    ..*page
                };
                let lifts = click_lifts(&page, 0, &elements[0]);
                assert!(lifts.contains(&("pressed_already", Lift::Scale(PRESSED_AGAIN_FACTOR))));
                assert!(lifts.contains(&("item_named", Lift::AtLeast(ITEM_AFFINITY))));
                assert!(
                    !click_lifts(&page, 1, &elements[1])
                        .iter()
                        .any(|(name, _)| *name == "pressed_already" || *name == "item_named")
                );
            },
        );
    }

    #[test]
    fn the_link_in_the_named_rows_column_the_goal_names_is_lifted() {
        let in_column = |name: &str, record: &str, column: &str| Element {
            column: column.into(),
            ..crate::testing::control("link", name, record)
        };
        with_page(
            "Which country is Mombasa in? Take me to that country's page",
            vec![
                in_column("Kenya", "1 Mombasa Kenya 1200000", "country_code"),
                in_column("Kenya", "2 Nairobi Kenya 4400000", "country_code"),
                in_column("1", "1 Mombasa Kenya 1200000", "id"),
                crate::testing::control("link", "country_code", ""),
            ],
            |page, elements| {
                let named = |i: usize| {
                    click_lifts(page, i, &elements[i])
                        .iter()
                        .any(|(name, _)| *name == "names_column_of_named_item")
                };
                assert!(named(0), "Mombasa's country");
                assert!(!named(1), "another city's row");
                assert!(!named(2), "the id column is not the country");
                assert!(!named(3), "no row");
            },
        );
    }

    #[test]
    fn leaving_the_session_is_held_back_unless_the_goal_asks() {
        with_page(
            "Find the release notes",
            vec![element("link", "Log out"), element("link", "Release notes")],
            |page, elements| {
                let lifts = click_lifts(page, 0, &elements[0]);
                assert!(matches!(lifts[..], [("keeps_course", Lift::Scale(f))] if f < 0.5));
                assert!(click_lifts(page, 1, &elements[1]).is_empty());
            },
        );
    }

    #[test]
    fn docs_signals_lists_every_signal_with_what_it_reads() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/signals.md"),
        )
        .expect("docs/signals.md");
        for (name, _, reads) in catalogue() {
            assert!(
                docs.contains(&format!("`{name}`")),
                "{name} is not in docs/signals.md"
            );
            assert!(
                docs.contains(reads),
                "what {name} reads is not in docs/signals.md"
            );
        }
    }

    #[test]
    fn a_calendar_step_lifts_the_prior_only() {
        let signal = CLICK_SIGNALS
            .iter()
            .find(|s| s.name == "calendar_step")
            .expect("the calendar's signal");
        assert!(signal.prior_only);
        assert!(CLICK_SIGNALS.iter().filter(|s| s.prior_only).count() == 1);
    }

    #[test]
    fn position_extremes_and_ready_forms_add_their_lifts() {
        with_page(
            "Click the 2nd button",
            vec![element("button", "A"), element("button", "B")],
            |page, elements| {
                let positions = [0.0, 0.6];
                let extremes = [true, false];
                let page = ClickPage {
                    positions: &positions,
                    extremes: &extremes,
                    ..*page
                };
                assert_eq!(
                    click_lifts(&page, 1, &elements[1]),
                    vec![("position", Lift::Add(0.6))]
                );
                assert_eq!(
                    click_lifts(&page, 0, &elements[0]),
                    vec![("superlative", Lift::Add(EXTREME_LIFT))]
                );
            },
        );
    }
}
