//! Policies: which actions a page offers and how promising each looks (its prior).
//!
//! The default policy is offline and deterministic. Priors come from the similarity of the goal
//! to each element's accessible name, text and nearby text, through an [`Embedder`] (hashed
//! n-grams), and, when a sentence model is loaded, from the model's similarity of the goal to
//! what a control says it does (its name with, for a link, the words of its target's URL); a
//! page's value hint likewise compares the goal to the page (title, headings, the start of its
//! text). The two are mixed by taking the larger: the n-grams keep exact names, quoted strings
//! and identifiers sharp, the model hears a goal in other words. The model's texts of one page
//! are embedded in one batch ([`Policy::prepare`], on a blocking thread) before the proposals
//! are made. Forms are proposed whole ([`Action::FillForm`]): each field gets the task input (or quoted string from the goal) whose name best matches the field's label,
//! placeholder or type, and the form is submitted. Links to origins the task does not allow are
//! never proposed, whatever the page says: page text is untrusted input.

mod candidates;
mod families;
mod field_kind;
mod fill;
mod plan;
mod precise;
pub mod signals;
mod terminal;

use crate::embed::{SparseVector, action_key, stable_hash, text_features};
use crate::environment::Candidate;
use crate::goal::{GoalReading, Quoted, words_of};
use crate::model::SentenceModel;
use forager_protocol::action::ActionShape;
use forager_protocol::action::FieldValue;
use forager_protocol::credential::Credential;
use forager_protocol::observation::{
    Element, Observation, PageValue, PageValueKind, ScrollPosition,
};
use forager_protocol::risk::{self, RiskContext};
use forager_protocol::{Action, FillValue, RiskClass, ScrollEdge, SliderMove, Target};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Text → vector, for similarity. Deterministic.
pub trait Embedder: Send + Sync {
    /// The vector of a text.
    fn embed(&self, text: &str) -> SparseVector;
}

/// The hashed word and character-trigram embedder of [`crate::embed::text_features`].
#[derive(Debug, Clone, Copy, Default)]
pub struct HashedNgrams;

impl Embedder for HashedNgrams {
    fn embed(&self, text: &str) -> SparseVector {
        text_features(text)
    }
}

/// What a policy knows about the task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskContext {
    /// The goal text.
    pub goal: String,
    /// Input names (values stay in the task; actions refer to inputs by name).
    pub inputs: Vec<(String, String)>,
    /// Origins links may lead to (`scheme://host:port`).
    pub allowed_origins: Vec<String>,
    /// The part of the site the task starts in: the start URL's origin and folder.
    pub area: Option<Area>,
}

/// An origin and a path prefix: where a task's pages are (`/admin/` of an admin interface).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    /// `scheme://host:port`.
    pub origin: String,
    /// The start URL's folder, ending in `/`.
    pub path: String,
}

impl Area {
    /// The area of a start URL: its origin and the folder of its path.
    pub fn of(start_url: &str) -> Option<Area> {
        let url = url::Url::parse(start_url).ok()?;
        let path = url.path();
        let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        Some(Area {
            origin: url.origin().ascii_serialization(),
            path: if folder.is_empty() {
                "/".into()
            } else {
                folder.into()
            },
        })
    }
}

impl TaskContext {
    /// Strings quoted in the goal ("…", '…', “…”), as literal fill values.
    pub fn quoted_strings(&self) -> Vec<String> {
        GoalReading::of(&self.goal)
            .quoted
            .into_iter()
            .map(|q| q.text)
            .collect()
    }

    fn allows(&self, href: &str) -> bool {
        match url::Url::parse(href) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                let origin = url.origin().ascii_serialization();
                self.allowed_origins.contains(&origin)
            }
            // javascript:, mailto: and the like are not navigations we follow.
            Ok(url) => url.scheme() == "javascript",
            Err(_) => false,
        }
    }
}

/// A page's candidates and how promising the page itself looks.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposals {
    /// The actions, priors normalised to sum to 1.
    pub candidates: Vec<Candidate<Action>>,
    /// The page's value hint in [0, 1]: its title's and headings' similarity to the goal, or
    /// 0.8 × its most goal-like action, whichever is larger.
    pub value_hint: f64,
}

/// Proposes actions for a page.
pub trait Policy: Send + Sync {
    /// The candidates of an observation.
    fn propose(&self, observation: &Observation, task: &TaskContext) -> Proposals;

    /// Heavy work `propose` will need for this observation (embedding its texts), done ahead
    /// on a blocking thread so that `propose` only looks things up. Optional: `propose` does
    /// whatever was not prepared itself.
    fn prepare(&self, _observation: &Observation, _task: &TaskContext) {}
}

/// The offline, deterministic policy described in the module documentation.
pub struct DefaultPolicy<E = HashedNgrams> {
    embedder: E,
    model: Option<Arc<SentenceModel>>,
    /// The signals' weights ([`signals::WEIGHTS_VARIABLE`] sets them for sweeps and ablations).
    weights: signals::Weights,
}

impl Default for DefaultPolicy<HashedNgrams> {
    fn default() -> Self {
        DefaultPolicy::with_model(None)
    }
}

/// How well, at least, a goal's name the page does not show fits a single-line field: enough
/// to be typed before the page's own texts, never enough to count as fitting ([`FITS`]) in a
/// form whose fields say what they want ("Witt" is for "Director Name", not "Genre").
const UNSEEN_NAME_FIT: f64 = 0.09;

/// Verbs before a quoted control's name ("press "Search"", "click "OK"").
const PRESS_VERBS: &[&str] = &["press", "click", "hit", "tap", "push"];

/// The longest block of page text offered as a value when the goal points at shown text: a
/// code or a phrase, not an article.
const SHOWN_TEXT_MAX_CHARS: usize = 60;

/// The weight of typing over what a field already holds, against typing into an empty one.
const PREFILLED_FILL: f64 = 0.5;

/// The goal's numbers a slider is offered, at most (each slider gets each).
const MAX_SLIDE_NUMBERS: usize = 8;

/// A slide's affinity when the goal speaks of a slider (above a click: the slider is the
/// way), and when it does not (a slider among other controls, its number perhaps one of the
/// goal's).
const SLIDER_NAMED_AFFINITY: f64 = 1.5;
const SLIDER_AFFINITY: f64 = 0.3;

/// A scroll's affinity: asked for, to the edge the goal names ("scroll to the bottom"); asked
/// for, to the other edge; not asked for, down (content below the fold may hold the goal);
/// not asked for, up (seldom the way, but not never: a box that starts in its middle).
const SCROLL_ASKED_HERE: f64 = 1.2;
const SCROLL_ASKED_ELSEWHERE: f64 = 0.3;
const SCROLL_UNASKED_DOWN: f64 = 0.1;
const SCROLL_UNASKED_UP: f64 = 0.02;

/// How much a control's text beyond its name (a card's body) and the text near it (its
/// paragraph) count against its name in its likeness to the goal: the name says what the
/// control does; the rest is context (docs/search-benchmark.md, "What the mix is").
const TEXT_WEIGHT: f64 = 0.7;
const NEARBY_WEIGHT: f64 = 0.4;

/// `keeps_course`'s factors, from the least likely way to the most: a link that jumps within
/// the page for screen readers; one that ends the session, or switches the theme (either loses
/// what the run has built); one that reloads the page; one that switches the language (the
/// page's words change under the goal's); one that leaves the start page's area of the site
/// (the goal may still lie there, rarely).
const SKIP_LINK_FACTOR: f64 = 0.05;
const SESSION_END_FACTOR: f64 = 0.1;
const PRESENTATION_FACTOR: f64 = 0.1;
const RELOAD_FACTOR: f64 = 0.2;
const LANGUAGE_FACTOR: f64 = 0.3;
const LEAVES_AREA_FACTOR: f64 = 0.5;

/// `choices`' factors: a choice the goal names that is made already (clicking it undoes
/// it), and a button while one of the goal's choices is still to make (it would send the
/// form short of it).
const CHOICE_UNDONE_FACTOR: f64 = 0.1;
const CHOICE_PENDING_FACTOR: f64 = 0.5;

/// `position`'s lift: the control at the position the goal names ("the 2nd checkbox"), above
/// the names' likeness, which tells the checkboxes apart not at all.
const POSITION_LIFT: f64 = 0.6;

/// `calendar_step`'s lifts: the goal's day in the goal's month (the click that finishes the
/// date), and a step of the calendar toward the goal's month.
const GOAL_DAY_LIFT: f64 = 1.5;
const MONTH_STEP_LIFT: f64 = 1.0;

/// The affinity of pressing a calendar's step control as often as the goal's month is away:
/// one action for what would be many, above any of them.
const REPEAT_AFFINITY: f64 = 2.0;

/// `date_nearness`: a field holding another date than the goal's counts at most this share
/// of the way (by how near its month is); a calendar open on some month is at least
/// `OPEN_CALENDAR_FLOOR` of the way and at most `SHOWN_MONTH_CEILING` on the goal's month,
/// below the date held in a field (1).
const OTHER_DATE_SHARE: f64 = 0.5;
const OPEN_CALENDAR_FLOOR: f64 = 0.25;
const SHOWN_MONTH_CEILING: f64 = 0.9;

/// Model cosines at or below this say nothing (a goal and unrelated link texts land around
/// 0–0.15 with all-MiniLM-L6-v2); above it they are scaled so that [`MODEL_SURE`] counts as
/// a match.
const MODEL_FLOOR: f32 = 0.15;
/// A model cosine that counts as a full match (a user's question and a link's few words
/// that answer it land around 0.3–0.5).
const MODEL_SURE: f32 = 0.6;
/// Characters of a page's text that its summary keeps (the model reads 128 tokens at most).
const SUMMARY_CHARS: usize = 600;

impl DefaultPolicy<HashedNgrams> {
    /// The default policy with a sentence model beside the n-grams (or without, `None`).
    pub fn with_model(model: Option<Arc<SentenceModel>>) -> Self {
        DefaultPolicy {
            embedder: HashedNgrams,
            model,
            weights: signals::Weights::from_env(),
        }
    }
}

impl<E: Embedder> DefaultPolicy<E> {
    /// A policy over an embedder.
    pub fn new(embedder: E) -> Self {
        DefaultPolicy {
            embedder,
            model: None,
            weights: signals::Weights::from_env(),
        }
    }

    /// The same policy with these signal weights.
    pub fn with_weights(self, weights: signals::Weights) -> Self {
        DefaultPolicy { weights, ..self }
    }

    /// The model's similarity of two texts, rescaled to [0, 1]; 0 without a model, for empty
    /// text, or when the model fails (logged).
    fn semantic(&self, goal: &str, text: &str) -> f64 {
        let Some(model) = &self.model else {
            return 0.0;
        };
        if text.trim().is_empty() {
            return 0.0;
        }
        match model.embed(&[goal, text]) {
            Ok(vectors) => {
                let cosine = crate::model::cosine(&vectors[0], &vectors[1]);
                f64::from(((cosine - MODEL_FLOOR) / (MODEL_SURE - MODEL_FLOOR)).clamp(0.0, 1.0))
            }
            Err(error) => {
                tracing::debug!(%error, "the sentence model failed; n-grams only for this text");
                0.0
            }
        }
    }

    fn similarity(&self, goal: &SparseVector, text: &str) -> f64 {
        if text.trim().is_empty() {
            return 0.0;
        }
        f64::from(goal.cosine(&self.embedder.embed(text)).max(0.0))
    }

    fn affinity(&self, goal: &SparseVector, element: &Element) -> f64 {
        let name = self.similarity(goal, &element.name);
        let text = if element.text != element.name {
            TEXT_WEIGHT * self.similarity(goal, &element.text)
        } else {
            0.0
        };
        let nearby = NEARBY_WEIGHT * self.similarity(goal, &element.nearby_text);
        name.max(text).max(nearby)
    }

    /// [`Self::affinity`] mixed with the model's view of the element.
    fn mixed_affinity(&self, goal: &SparseVector, goal_text: &str, element: &Element) -> f64 {
        let lexical = self.affinity(goal, element);
        if self.model.is_none() {
            return lexical;
        }
        // The model reads what the control says, not its context: the links of one
        // paragraph share their context, and a goal like that paragraph would lift them all
        // alike (measured on sqlite3-doc: the order of 46 start-page links got worse). Beside
        // it, weak n-gram matches (0.1–0.3: shared little words and trigrams) are noise that
        // would decide the order; squared, they fall below the model's, while an exact name
        // (0.8 and more) still wins.
        (lexical * lexical).max(self.semantic(goal_text, &control_text(element)))
    }
}

/// What a control says it does, for the model: its name (or text) and, for a link, the words
/// of its target's path ("lang_altertable.html" → "lang altertable").
fn control_text(element: &Element) -> String {
    let name = if element.name.trim().is_empty() {
        element.text.as_str()
    } else {
        element.name.as_str()
    };
    let path_words = element
        .href
        .as_deref()
        .and_then(|href| url::Url::parse(href).ok())
        .map(|url| {
            let path = url.path();
            let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
            let stem = last.split('.').next().unwrap_or("");
            crate::embed::words(&stem.replace(|c: char| c.is_ascii_digit(), " "))
                .filter(|w| w.len() > 1 && !matches!(w.as_str(), "index" | "html" | "htm"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    if path_words.is_empty() {
        name.trim().to_owned()
    } else {
        format!("{} ({path_words})", name.trim())
    }
}

/// What a page is about, for the model: its title, first headings and the start of its text.
fn page_summary(observation: &Observation, goal: &str) -> String {
    let headings: Vec<&str> = observation
        .snapshot
        .iter()
        .filter_map(|l| l.strip_prefix("heading "))
        .take(5)
        .collect();
    let mut summary = format!(
        "{}. {}. {}",
        observation.title.trim(),
        headings.join(". "),
        // Without the goal where the page prints it (a task page shows its instruction): a
        // page is not nearer the goal for saying what it is.
        observation.text_excerpt.replacen(goal, " ", 1).trim()
    );
    if let Some((cut, _)) = summary.char_indices().nth(SUMMARY_CHARS) {
        summary.truncate(cut);
    }
    summary
}

/// The texts the model compares the goal with on this page, in the order `propose` asks.
fn model_texts(observation: &Observation, task: &TaskContext) -> Vec<String> {
    let mut texts = vec![task.goal.clone(), page_summary(observation, &task.goal)];
    for element in &observation.elements {
        if element.disabled || !(is_clickable(element) || is_text_field(element)) {
            continue;
        }
        texts.push(control_text(element));
    }
    texts.retain(|t| !t.trim().is_empty());
    texts
}

/// Whether a control's name (or a goal) speaks of ending a session: "Log out", "Sign out".
pub fn ends_session(name: &str) -> bool {
    let words = forager_protocol::fingerprint::mask_digits(&name.to_lowercase());
    [
        "log out", "logout", "log off", "sign out", "signout", "sign off",
    ]
    .iter()
    .any(|w| words.contains(w))
}

/// Whether an action aimed at a control of this name, sending to this URL (a link's `href`,
/// a form's action), would end the session the search stands on: log out, sign out, switch
/// user, revoke sessions, delete or close the account; by its name or by the handler its URL
/// names (`/logout`, `?@action=logout`). Such an action is refused outright unless the goal
/// asks for the same thing (`goal_ends_session`).
pub fn would_end_session(name: &str, url: Option<&str>) -> bool {
    const MORE: &[&str] = &[
        "switch user",
        "switch account",
        "change user",
        "log in as another",
        "revoke",
        "delete my account",
        "delete account",
        "close my account",
        "close account",
        "deactivate",
    ];
    let words = forager_protocol::fingerprint::mask_digits(&name.to_lowercase());
    ends_session(name)
        || MORE.iter().any(|w| words.contains(w))
        || url.is_some_and(|url| {
            forager_protocol::risk::class_of_url(url) == Some(RiskClass::AuthenticatedRead)
        })
}

/// Whether a goal asks to end the session (or to do what ends it: "switch user", "delete my
/// account"): then such actions are the task and may run.
pub fn goal_ends_session(goal: &str) -> bool {
    would_end_session(goal, None)
}

/// Whether a control's name (or a goal) speaks of how pages look rather than what they hold:
/// a theme, dark or light mode, the font size, contrast.
pub fn is_presentation(name: &str) -> bool {
    let name = name.to_lowercase();
    [
        "theme",
        "dark mode",
        "light mode",
        "font size",
        "high contrast",
    ]
    .iter()
    .any(|w| name.contains(w))
}

/// How much a control that keeps the task's session and area is preferred to one that does
/// not, in [0, 1]: ending the session, switching the theme or the language, or leaving the
/// start page's part of the site ("View site" from /admin/) is tried last unless the goal
/// asks for it; so are links that only reload the page (a header's home link on the home
/// page) or jump within it for screen readers ("Skip to main content", hidden until focused).
fn keeps_course(element: &Element, task: &TaskContext, page_url: &str) -> f64 {
    let name = element.name.to_lowercase();
    let goal = task.goal.to_lowercase();
    if ["skip to ", "skip navigation", "jump to "]
        .iter()
        .any(|w| name.starts_with(w))
    {
        return SKIP_LINK_FACTOR;
    }
    if element.href.as_deref() == Some(page_url) {
        return RELOAD_FACTOR;
    }
    if ends_session(&name) && !ends_session(&goal) {
        return SESSION_END_FACTOR;
    }
    if is_presentation(&name) && !is_presentation(&goal) {
        return PRESENTATION_FACTOR;
    }
    if (name.contains("language") || element.role == "combobox" && name.contains("lang"))
        && !goal.contains("language")
    {
        return LANGUAGE_FACTOR;
    }
    if let (Some(area), Some(href)) = (&task.area, &element.href)
        && let Ok(url) = url::Url::parse(href)
        && area.origin == url.origin().ascii_serialization()
        && !url.path().starts_with(&area.path)
    {
        return LEAVES_AREA_FACTOR;
    }
    1.0
}

/// The stable location hash of a URL, as environments report [`crate::StateInfo::location`]:
/// the URL without its fragment.
pub fn location_of(url: &str) -> u64 {
    let without_fragment = match url::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.split('#').next().unwrap_or(url).to_owned(),
    };
    stable_hash(without_fragment.as_bytes())
}

/// A text's words, lower case, joined by single spaces and padded with one on each side, so
/// that a phrase can be looked up whole ([`names_phrase`]).
fn padded_words(text: &str) -> String {
    format!(
        " {} ",
        crate::embed::words(text).collect::<Vec<_>>().join(" ")
    )
}

/// Whether a goal (as [`padded_words`]) names `name` as a whole phrase of at least two letters.
fn names_phrase(goal_words: &str, name: &str) -> bool {
    let phrase = crate::embed::words(name).collect::<Vec<_>>().join(" ");
    phrase.len() >= 2 && goal_words.contains(&format!(" {phrase} "))
}

/// Whether `raw` text (and its [`padded_words`]) names `name`: a handle (`@et`) only as that
/// very token, not as the word "et" of some other text; anything else as a whole phrase.
fn mentions(raw: &str, padded: &str, name: &str) -> bool {
    if name.starts_with('@') {
        return raw
            .split(|c: char| c.is_whitespace() || ",;:()[]\"'".contains(c))
            .any(|token| {
                token
                    .trim_end_matches(['.', '!', '?'])
                    .eq_ignore_ascii_case(name)
            });
    }
    names_phrase(padded, name)
}

/// Whether activating the control leaves the page where it is as far as its page says: not a
/// link that navigates, not a form's submission (`Sends::Get`/`Post`). Only such controls are
/// pressed in turn in one action (`Action::Check`).
fn stays_on_page(element: &Element) -> bool {
    matches!(element.sends, forager_protocol::Sends::Unknown)
        || (is_choice(element) && !element.tag.eq_ignore_ascii_case("a"))
}

/// A control that holds a choice the page keeps: a checkbox, a radio button, a switch.
fn is_choice(element: &Element) -> bool {
    matches!(element.role.as_str(), "checkbox" | "radio" | "switch")
}

/// How a signal moves a click's affinity.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lift {
    /// Raises it to at least this: a control the goal names is worth that much whatever its
    /// n-grams say.
    AtLeast(f64),
    /// Adds this.
    Add(f64),
    /// Multiplies it by this (a factor in (0, 1] holds a control back).
    Scale(f64),
}

/// What a click's signals read of a page, once per page.
struct ClickPage<'a> {
    observation: &'a Observation,
    task: &'a TaskContext,
    reading: &'a GoalReading,
    choices: &'a Choices<'a>,
    /// Per element: the bonus of a position the goal names ("the 3rd checkbox").
    positions: &'a [f64],
    /// Per element: whether it is a control of the item at the goal's extreme.
    extremes: &'a [bool],
    /// Per element: how far its item is one the goal names (the "+" of a dish it orders).
    item_shares: &'a [f64],
    /// A control the goal quotes that no element of this page carries ("Mute" in a menu not
    /// open yet).
    hidden_quoted: bool,
    /// Toggles the goal names that are pressed already (pressing them again undoes them).
    pressed_toggles: &'a [&'a Element],
    /// Every value the goal gives is held by a field: sending the form is what is left.
    values_held: bool,
    /// Some value the goal gives is held by no field yet: sending a form now sends it without.
    values_pending: bool,
    calendar: Option<&'a Calendar>,
    /// The goal's plan read against the page (`None` in unit tests of other signals).
    plan: Option<&'a plan::PlanPage>,
}

/// The affinity at least of an element that carries a name or a quoted text of the goal.
const NAMED_AFFINITY: f64 = 0.8;

/// What the goal asks of the page's choices, read once per page for the clicks' priors.
struct Choices<'a> {
    goal_words: String,
    /// The goal asks to clear choices ("uncheck", "deselect"): a made choice it names is
    /// there to be undone.
    undoing: bool,
    /// Some choice the goal names is not made yet.
    remaining: bool,
    /// The page's named choices (few: a label is looked up among them only).
    choices: Vec<&'a Element>,
}

impl<'a> Choices<'a> {
    fn of(observation: &'a Observation, goal: &str) -> Self {
        let goal_words = padded_words(goal);
        let undoing = [
            " uncheck",
            " untick",
            " deselect",
            " unselect",
            " clear ",
            " turn off ",
            " disable ",
        ]
        .iter()
        .any(|w| goal_words.contains(w));
        let choices: Vec<&Element> = observation
            .elements
            .iter()
            .filter(|e| is_choice(e) && !e.name.is_empty())
            .collect();
        let remaining = choices
            .iter()
            .any(|e| !e.checked && names_phrase(&goal_words, &e.name));
        Choices {
            goal_words,
            undoing,
            remaining,
            choices,
        }
    }

    /// How much a click on `element` is worth for the choices, in (0, 1]. A choice the goal
    /// names that is already made is not clicked again: a checkbox would be unchecked (back
    /// to a state seen before), a radio button would stay as it is (no progress). A label
    /// that toggles a choice counts as that choice. While a choice the goal names remains to
    /// be made, buttons wait: the goal's "and press Submit" comes after its choices, and a
    /// submission before them is a dead end that costs an action in every state.
    fn factor(&self, element: &Element) -> f64 {
        let toggled = if is_choice(element) {
            Some(element)
        } else {
            self.choices
                .iter()
                .copied()
                .find(|e| e.name == element.name)
        };
        if let Some(choice) = toggled
            && choice.checked
            && names_phrase(&self.goal_words, &choice.name)
            && (choice.role == "radio" || !self.undoing)
        {
            return CHOICE_UNDONE_FACTOR;
        }
        if self.remaining && toggled.is_none() && element.role == "button" {
            return CHOICE_PENDING_FACTOR;
        }
        1.0
    }
}

/// How much of what the goal names the page already shows done, each part in [0, 1] or `None`
/// when the goal names nothing of the kind on this page. A state's value, so that the search
/// can tell a half-filled form from an untouched one before anything is submitted.
#[derive(Debug, Clone, Copy, PartialEq)]
struct GoalProgress {
    /// The checkboxes, radio buttons and options the goal names that are checked, less half a
    /// point for each one it does not name that is.
    choices: Option<f64>,
    /// The values the goal gives that some field holds.
    values: Option<f64>,
    /// The values the goal gives that no field holds yet and that an empty field of this page
    /// could take (a name in a one-line field, other values in any): the page is a fill away
    /// from holding them (a forward's empty "to" for the recipient the goal names).
    placeable: Option<f64>,
    /// The goal's names (other than the page's controls) that the page shows as content, not
    /// as a control to pick ("the email by Wilhelmina": her email open, not the inbox row), or
    /// holds in a field.
    names: Option<f64>,
    /// Items that show one number with an "Odd" and an "Even" control: the share marked with
    /// the one that fits, less those marked with the other.
    parity: Option<f64>,
    /// Fields labelled for one of the goal's labelled values that hold something else
    /// ("From:" holding the destination, or the date).
    misplaced: usize,
}

/// Whether `word` is a word of a control's name or of `text` (the page's text, or a part of it).
fn shows_word(observation: &Observation, text: &str, word: &str) -> bool {
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
struct Tally {
    wanted: usize,
    done: usize,
    wrong: usize,
}

impl Tally {
    fn count(&mut self, wanted: bool, checked: bool) {
        self.wanted += usize::from(wanted);
        self.done += usize::from(wanted && checked);
        self.wrong += usize::from(!wanted && checked);
    }

    fn share(&self) -> Option<f64> {
        (self.wanted > 0).then(|| {
            ((self.done as f64 - 0.5 * self.wrong as f64) / self.wanted as f64).clamp(0.0, 1.0)
        })
    }
}

impl Tally {
    /// The goal wants `count` of those it names, not all ("on 2 posts by @gravida"): more
    /// pressed than that are wrong ones.
    fn limit(&mut self, count: usize) {
        if self.done > count {
            self.wrong += self.done - count;
            self.done = count;
        }
        self.wanted = count.min(self.wanted);
    }
}

/// How many of someone's items the goal asks for: the number before "posts by" ("the "Like"
/// button on 2 posts by @gravida"), in figures or as a word up to ten.
fn item_count(goal_words: &str) -> Option<usize> {
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
fn holds_already(observation: &Observation, element: &Element, text: &str) -> bool {
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
fn label_key(label: &str) -> String {
    label.trim().trim_end_matches(':').trim().to_lowercase()
}

/// How a field's value holds one of the goal's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Only as the whole value (a number, a name).
    Exactly,
    /// Whole, or as a piece (≥ 3 characters) it starts or ends with (a quoted string).
    Pieces,
    /// Whole, or as a phrase among its words (a labelled value).
    Phrase,
}

/// A control that is no button, link or field (a tile, a swatch: a `clickable` the page's
/// listeners make) whose name the goal names ("red" for "all the shades of red").
fn named_shape(element: &Element, choices: &Choices) -> bool {
    element.role == "clickable" && names_phrase(&choices.goal_words, &element.name)
}

/// The controls the goal quotes by name ("Like") that sit in an item ([`Element::record`]: a
/// post, a row), each with whether its item is of someone the goal names ("the posts by
/// @aliquam").
fn quoted_item_toggles<'a>(
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

fn goal_progress(observation: &Observation, reading: &GoalReading, goal: &str) -> GoalProgress {
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
struct FieldsHeld<'a> {
    values: Vec<&'a PageValue>,
    labels: Vec<String>,
    /// An empty, editable one-line text field (not a search box unless the goal searches).
    empty_line: bool,
    /// An empty, editable text field of any kind (a message body too).
    empty_any: bool,
}

impl<'a> FieldsHeld<'a> {
    fn of(observation: &'a Observation, goal_text: &str) -> FieldsHeld<'a> {
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
fn choices_progress(
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
struct ValuesProgress {
    held: f64,
    placeable: f64,
}

/// The values the goal gives that some field holds (where the goal labels values, a field
/// with one of its labels holds that value only), and those an empty field could take.
fn values_progress(
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
fn names_progress(
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
fn misplaced_fields(reading: &GoalReading, fields: &FieldsHeld<'_>) -> usize {
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
fn position_bonus(observation: &Observation, reading: &GoalReading) -> Vec<f64> {
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
struct Calendar {
    /// Months from the shown month to the goal's (negative: the goal is earlier).
    months: i32,
    day: u32,
}

impl Calendar {
    fn of(observation: &Observation, reading: &GoalReading) -> Option<Calendar> {
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
    fn other_day(&self, element: &Element) -> bool {
        let name = element.name.trim();
        let Ok(day) = name.parse::<u32>() else {
            return false;
        };
        (1..=31).contains(&day) && name.len() <= 2 && (self.months != 0 || day != self.day)
    }

    /// Whether a control steps the calendar toward the goal's month.
    fn steps_toward(&self, element: &Element) -> bool {
        let name = element.name.trim();
        let words: Vec<String> = crate::embed::words(name).collect();
        let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
        let earlier =
            has(&["prev", "previous", "earlier"]) || ["<", "<<", "«", "‹"].contains(&name);
        let later = has(&["next", "later"]) || [">", ">>", "»", "›"].contains(&name);
        (self.months < 0 && earlier && !later) || (self.months > 0 && later && !earlier)
    }

    fn bonus(&self, element: &Element) -> f64 {
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
    fn walk(&self, observation: &Observation) -> Option<(Candidate<Action>, f64)> {
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
fn month_nearness(months: i32) -> f64 {
    1.0 - f64::from(months.unsigned_abs().min(12)) / 12.0
}

/// How near a page is to the date the goal names, when it shows a date at all: a field that
/// holds the goal's date is there (1); a calendar is on the way, the nearer its month the
/// further (0.25 a year away, 0.9 at the month); a field that holds another date is off the
/// way (half its nearness: picking the wrong day is worse than looking for the right one).
fn date_progress(observation: &Observation, reading: &GoalReading) -> Option<f64> {
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

/// Whether following `href` from the page at `page` loads another document: not an in-page
/// anchor (`#tabs-2`, `#`: the same URL up to the fragment) nor a `javascript:` link, which
/// only run the page's own handlers.
fn leaves_page(href: &str, page: &str) -> bool {
    match (url::Url::parse(href), url::Url::parse(page)) {
        (Ok(mut to), Ok(mut from)) => {
            if !matches!(to.scheme(), "http" | "https") {
                return false;
            }
            to.set_fragment(None);
            from.set_fragment(None);
            to != from
        }
        _ => true,
    }
}

/// Boxes of text scrolled to their end (or back to their start): a page may unlock a form at
/// the end of an agreement, or check what was read. A goal that asks to scroll ranks them
/// first, the end it names above the other; otherwise the end is a long shot and the start
/// a longer one (a box is seldom read backwards).
fn scroll_candidates(observation: &Observation, goal: &str) -> Vec<(Candidate<Action>, f64)> {
    let words = padded_words(goal);
    let says = |phrases: &[&str]| phrases.iter().any(|p| words.contains(&format!(" {p} ")));
    let asks_scroll = says(&["scroll", "scrolled", "scrolling"]);
    let mut candidates = Vec::new();
    for scrollable in &observation.scrollables {
        for to in [ScrollEdge::Bottom, ScrollEdge::Top] {
            let there = matches!(
                (to, scrollable.at),
                (ScrollEdge::Bottom, ScrollPosition::Bottom)
                    | (ScrollEdge::Top, ScrollPosition::Top)
            );
            if there {
                continue;
            }
            let named = match to {
                ScrollEdge::Bottom => says(&["bottom", "end"]),
                ScrollEdge::Top => says(&["top", "beginning", "start"]),
            };
            let affinity = match (asks_scroll, named, to) {
                (true, true, _) => SCROLL_ASKED_HERE,
                (true, false, _) => SCROLL_ASKED_ELSEWHERE,
                (false, _, ScrollEdge::Bottom) => SCROLL_UNASKED_DOWN,
                (false, _, ScrollEdge::Top) => SCROLL_UNASKED_UP,
            };
            candidates.push((
                Candidate {
                    action: Action::Scroll {
                        target: Target {
                            locators: scrollable.locators.clone(),
                            role: scrollable.role.clone(),
                            name: scrollable.name.clone(),
                            sends: Default::default(),
                        },
                        to,
                    },
                    prior: 0.0,
                    risk: RiskClass::ReadOnly,
                    key: 0,
                    target: None,
                    refused: None,
                    why: Default::default(),
                },
                affinity,
            ));
        }
    }
    candidates
}

/// The plain numbers a goal writes, in order, repeats kept ("Select -97 with the slider",
/// "the combination [3,18,6]"): digits standing alone, with a minus or a decimal part, not
/// glued to letters ("the 2nd checkbox", "x3") nor part of a date or a time ("11/25/2016",
/// "10:30").
fn goal_numbers(goal: &str) -> Vec<String> {
    let chars: Vec<char> = goal.chars().collect();
    // A hyphen before is glue too where it is no minus sign ("rate-5", "COVID-19").
    let glued =
        |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || matches!(c, '/' | ':' | '-'));
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && chars[i - 1].is_ascii_digit()) {
            i += 1;
            continue;
        }
        let mut start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
        }
        let minus = start > 0
            && matches!(chars[start - 1], '-' | '\u{2212}')
            && (start < 2 || !chars[start - 2].is_alphanumeric());
        if minus {
            start -= 1;
        }
        let before = if start > 0 {
            chars.get(start - 1)
        } else {
            None
        };
        if glued(before) || glued(chars.get(i)) {
            continue;
        }
        let number: String = chars[start..i].iter().collect();
        numbers.push(number.replace('\u{2212}', "-"));
    }
    numbers
}

/// Sliders moved to the numbers the goal gives: as many numbers as sliders, each to its
/// own in order, all in one action ("the combination [3,18,6]" for three sliders: one at a
/// time the moves commute); otherwise every slider to every number, one at a time. A high
/// prior where the goal speaks of a slider, a low one elsewhere (its numbers may be for
/// something else).
fn slide_candidates(observation: &Observation, goal: &str) -> Vec<(Candidate<Action>, f64)> {
    let sliders: Vec<&Element> = observation
        .elements
        .iter()
        .filter(|e| e.role == "slider" && !e.disabled)
        .collect();
    if sliders.is_empty() {
        return Vec::new();
    }
    let mut numbers = goal_numbers(goal);
    numbers.truncate(MAX_SLIDE_NUMBERS);
    let words = padded_words(goal);
    let affinity = if [" slider ", " sliders ", " slide "]
        .iter()
        .any(|w| words.contains(w))
    {
        SLIDER_NAMED_AFFINITY
    } else {
        SLIDER_AFFINITY
    };
    let slide = |moves: Vec<SliderMove>| {
        (
            Candidate {
                action: Action::Slide { moves },
                prior: 0.0,
                risk: RiskClass::ReadOnly,
                key: 0,
                target: None,
                refused: None,
                why: Default::default(),
            },
            affinity,
        )
    };
    let to = |slider: &Element, number: &String| SliderMove {
        target: target_of(slider),
        value: number.clone(),
    };
    if numbers.len() == sliders.len() {
        return vec![slide(
            sliders
                .iter()
                .zip(&numbers)
                .map(|(s, n)| to(s, n))
                .collect(),
        )];
    }
    let mut distinct: Vec<&String> = Vec::new();
    for number in &numbers {
        if !distinct.contains(&number) {
            distinct.push(number);
        }
    }
    sliders
        .iter()
        .flat_map(|s| distinct.iter().map(move |n| (*s, *n)))
        .map(|(s, n)| slide(vec![to(s, n)]))
        .collect()
}

fn target_of(element: &Element) -> Target {
    Target {
        locators: element.locators.clone(),
        role: element.role.clone(),
        name: element.name.clone(),
        sends: element.sends.clone(),
    }
}

/// A field for a free-text search: its role or type says so, or its name does ("Search:",
/// "Find", "Keywords", "Query").
fn is_search_box(element: &Element) -> bool {
    element.role == "searchbox"
        || element.input_type.eq_ignore_ascii_case("search")
        || crate::embed::words(&element.name)
            .any(|w| ["search", "find", "keyword", "keywords", "query"].contains(&w.as_str()))
}

fn is_text_field(element: &Element) -> bool {
    matches!(
        element.role.as_str(),
        "textbox" | "searchbox" | "spinbutton"
    ) && !matches!(
        element.input_type.as_str(),
        "checkbox" | "radio" | "submit" | "button" | "file" | "image" | "reset" | "range" | "color"
    )
}

/// "press "Search"": a quoted name after a verb of pressing that a control of this page
/// carries is that control, not a value to type.
fn quotes_a_button(quoted: &Quoted, observation: &Observation) -> bool {
    quoted
        .context
        .split_whitespace()
        .last()
        .is_some_and(|verb| PRESS_VERBS.contains(&verb.to_lowercase().as_str()))
        && observation
            .elements
            .iter()
            .any(|e| is_clickable(e) && e.name.eq_ignore_ascii_case(&quoted.text))
}

fn is_clickable(element: &Element) -> bool {
    matches!(
        element.role.as_str(),
        "link"
            | "button"
            | "clickable"
            | "menuitem"
            | "tab"
            | "checkbox"
            | "radio"
            | "option"
            | "switch"
            | "treeitem"
    )
}

/// A value a field can take.
#[derive(Debug, Clone)]
struct ValueSource {
    value: FillValue,
    /// What describes it: the input's name, or the literal itself.
    description: String,
    literal: String,
    /// One of the goal's names that the page does not show: there to be typed ("send it to
    /// Marlena"), into a single-line field whatever its name.
    unseen_name: bool,
    /// The label the goal gives it under ("from: LIH"), lower case: it goes into the field
    /// with that label, and not into one another value is labelled for.
    label: Option<String>,
    /// A value the goal spells out (not a task input's): it belongs in some field of a form
    /// the goal is about, even where no field's name fits it.
    in_goal: bool,
}

impl<E: Embedder> Policy for DefaultPolicy<E> {
    fn prepare(&self, observation: &Observation, task: &TaskContext) {
        if let Some(model) = &self.model {
            let texts = model_texts(observation, task);
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            if let Err(error) = model.embed(&texts) {
                tracing::debug!(%error, "embedding a page's texts failed");
            }
        }
    }

    fn propose(&self, observation: &Observation, task: &TaskContext) -> Proposals {
        self.proposals(observation, task)
    }
}

/// A click on `element` (its prior is set once all candidates are scored).
fn click_candidate(
    element: &Element,
    risk: RiskClass,
    target: Option<u64>,
    twins: bool,
) -> Candidate<Action> {
    Candidate {
        action: Action::Click {
            target: target_of(element),
        },
        prior: 0.0,
        risk,
        key: click_key(element, twins),
        target,
        refused: None,
        why: Default::default(),
    }
}

/// A click's key: its role and name, and where other controls of the page share those
/// (`twins`), the text of its item ([`Element::record`]): the "Like" of one post is another
/// action than the "Like" of the next, and the search tells their orders apart by key.
fn click_key(element: &Element, twins: bool) -> u64 {
    if !twins || element.record.is_empty() {
        action_key(&format!("click {} {}", element.role, element.name))
    } else {
        action_key(&format!(
            "click {} {} in {}",
            element.role, element.name, element.record
        ))
    }
}

/// The risk of clicking every one of `elements`: the highest of theirs.
fn clicks_risk(elements: &[&Element]) -> RiskClass {
    elements
        .iter()
        .map(|e| {
            risk::classify(
                ActionShape::Click,
                &RiskContext {
                    accessible_name: &e.name,
                    role: &e.role,
                    input_type: &e.input_type,
                    sends: Some(&e.sends),
                    ..RiskContext::default()
                },
            )
        })
        .max()
        .unwrap_or(RiskClass::ReadOnly)
}

/// Pointing at `element` (a menu item with a submenu): read-only.
fn hover_candidate(element: &Element) -> Candidate<Action> {
    Candidate {
        action: Action::Hover {
            target: target_of(element),
        },
        prior: 0.0,
        risk: RiskClass::ReadOnly,
        key: action_key(&format!("hover {} {}", element.role, element.name)),
        target: None,
        refused: None,
        why: Default::default(),
    }
}

/// What a value the goal labels ("from: LIH") gains in a field with that label.
const LABEL_FIT: f64 = 1.0;

/// How well a value must fit a field (n-gram similarity of its description and the field's
/// name) to be put there before the goal's spare words are tried.
const FITS: f64 = 0.1;

/// How many of the goal's spare words a field nothing fits is tried with.
const MAX_SPARE_WORDS: usize = 4;

/// How many of the goal's values no field fitted are tried in the fields nothing fits, and in
/// how many assignments at most.
const MAX_LEFTOVER_VALUES: usize = 2;
const MAX_LEFTOVER_PLANS: usize = 8;

/// What a number gains in a field whose name asks for one ("2012" in "Released Date").
const NUMBER_FIELD_FIT: f64 = 0.5;

/// Words of a field's name that ask for a number or a date.
const NUMBER_FIELD_WORDS: &[&str] = &[
    "date", "year", "day", "month", "time", "age", "number", "no", "zip", "postcode", "phone",
    "amount", "price", "quantity", "qty", "count", "total",
];

/// Whether a field's name asks for a number or a date ("Released Date", "Zip code").
fn asks_for_number(name: &str) -> bool {
    crate::embed::words(name).any(|w| NUMBER_FIELD_WORDS.contains(&w.as_str()))
}

/// Digits, with at most the separators of a date, a time or a decimal ("2012", "11/25/2016").
fn is_number_like(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '/' | '-' | '.' | ':' | ','))
}

/// Words that carry no value of their own.
const FILLER_WORDS: &[&str] = &[
    "the", "and", "for", "from", "with", "into", "onto", "that", "this", "then", "than", "all",
    "any", "are", "was", "were", "has", "have", "had", "not", "but", "you", "your", "its", "their",
    "them", "they", "his", "her", "our", "out", "off", "over", "under", "when", "where", "which",
    "who", "what", "will", "can", "should", "would", "please", "also", "done", "press", "click",
    "enter", "type", "fill", "find", "select", "choose", "search", "submit", "button", "field",
    "form", "text", "box", "textbox", "finished", "below", "above", "using",
];

/// The goal's words (the first five letters told apart) that neither a value source, a
/// filler word nor anything the page names already accounts for: what is left for a field
/// that no value fits ("paranoid" and "movies" in "Search for paranoid movies directed by
/// Witt from year 2016", beside fields Genre, Year and Director Name).
fn spare_words(goal: &str, observation: &Observation, sources: &[ValueSource]) -> Vec<String> {
    let stem = |w: &str| w.chars().take(5).collect::<String>();
    let mut named: Vec<String> = Vec::new();
    for element in &observation.elements {
        named.extend(crate::embed::words(&element.name).map(|w| stem(&w)));
    }
    for source in sources {
        named.extend(crate::embed::words(&source.literal).map(|w| stem(&w)));
    }
    let mut spare: Vec<String> = Vec::new();
    for word in goal.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        let lower = word.to_lowercase();
        if lower.chars().count() < 3
            || !lower.chars().all(char::is_alphabetic)
            || FILLER_WORDS.contains(&lower.as_str())
            // A kind of number ("year 2016") says what a value is; it is none itself.
            || NUMBER_FIELD_WORDS.contains(&lower.as_str())
            || named.contains(&stem(&lower))
            || spare.iter().any(|s| s.eq_ignore_ascii_case(word))
        {
            continue;
        }
        spare.push(word.to_owned());
    }
    spare
}

/// The token with up to two words before it in the goal ("year 2016"), or the token alone.
fn words_before(goal: &str, token: &str) -> String {
    let words: Vec<&str> = goal.split_whitespace().collect();
    match words
        .iter()
        .position(|w| w.trim_matches(|c: char| !c.is_alphanumeric()) == token || *w == token)
    {
        Some(i) => words[i.saturating_sub(2)..=i].join(" "),
        None => token.to_owned(),
    }
}

/// Whether the element's item ([`Element::record`]) holds one of the goal's quoted texts or
/// names that the element's own name and text do not, and the element's name is a word of the
/// goal (`goal_words`, as [`padded_words`]): the "Like" of @aliquam's post for "like
/// @aliquam's post", not the "star" and "trash" of every row that names the goal's sender.
/// Any control of the item when the control the goal quotes is on no page yet
/// (`hidden_quoted`: "Mute" behind @et's "more").
fn record_names_goal_word(
    element: &Element,
    reading: &GoalReading,
    goal_words: &str,
    hidden_quoted: bool,
) -> bool {
    if element.record.is_empty() || (reading.quoted.is_empty() && reading.names.is_empty()) {
        return false;
    }
    if !hidden_quoted
        && !crate::embed::words(&element.name)
            .any(|w| w.len() >= 3 && goal_words.contains(&format!(" {w} ")))
    {
        return false;
    }
    record_names_what_element_does_not(element, reading)
}

/// Whether the element's item ([`Element::record`]) holds a quoted text or a name of the
/// goal (not a recipient's) that the element's own name and text do not.
fn record_names_what_element_does_not(element: &Element, reading: &GoalReading) -> bool {
    let record = padded_words(&element.record);
    let (name, text) = (padded_words(&element.name), padded_words(&element.text));
    let names = reading.names.iter().filter(|n| !reading.recipient(&n.text));
    reading.quoted.iter().chain(names).any(|q| {
        mentions(&element.record, &record, &q.text)
            && !mentions(&element.name, &name, &q.text)
            && !mentions(&element.text, &text, &q.text)
    })
}

/// The kind of thing the goal asks the number of: the word after "number of" or "how many"
/// ("Type the total number of blocks" → "block"), as [`crate::item_controls::stem`] has it.
fn counted_kind(goal: &str) -> Option<String> {
    let words: Vec<String> = crate::embed::words(goal).collect();
    words.windows(3).find_map(|w| {
        let asks = (w[0] == "number" && w[1] == "of") || (w[0] == "how" && w[1] == "many");
        asks.then(|| crate::item_controls::stem(&w[2]))
    })
}

/// The widest range of numbers the goal names whose members are all offered as values.
const MAX_RANGE_VALUES: i64 = 20;

/// How the options of one multiple choice are joined in `Action::Select` (`act.js` splits on it).
pub const MULTIPLE_OPTIONS: &str = "\n";

/// The options of a list whose label the goal names as a whole phrase (case-insensitive).
fn named_options(
    options: &[forager_protocol::observation::SelectOption],
    goal: &str,
) -> Vec<String> {
    let goal: Vec<String> = crate::embed::words(goal).collect();
    options
        .iter()
        .filter(|option| {
            let label: Vec<String> = crate::embed::words(&option.label).collect();
            !label.is_empty()
                && goal
                    .windows(label.len())
                    .any(|window| window == label.as_slice())
        })
        .map(|option| option.label.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::Locator;
    use forager_protocol::observation::FormContext;

    fn element(role: &str, name: &str) -> Element {
        let mut element = crate::testing::control(role, name, "");
        element.tag = "a".into();
        element.locators = vec![Locator::Text(name.into())];
        element
    }

    pub(super) fn page(elements: Vec<Element>) -> Observation {
        crate::testing::page("http://127.0.0.1:1/", elements)
    }

    /// The labels of the form fills the default policy proposes for a page and a goal.
    fn form_fills(observation: &Observation, goal: &str) -> Vec<String> {
        form_fills_weighted(observation, goal, "")
    }

    /// [`form_fills`] with signal weights (`name=weight,…`).
    fn form_fills_weighted(observation: &Observation, goal: &str, weights: &str) -> Vec<String> {
        let weights = signals::Weights::parse(weights).expect("weights of known signals");
        DefaultPolicy::default()
            .with_weights(weights)
            .propose(observation, &task(goal, &[]))
            .candidates
            .iter()
            .filter(|c| matches!(c.action, Action::FillForm { .. }))
            .map(|c| c.action.label())
            .collect()
    }

    pub(super) fn task(goal: &str, inputs: &[(&str, &str)]) -> TaskContext {
        TaskContext {
            area: None,
            goal: goal.into(),
            inputs: inputs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            allowed_origins: vec!["http://127.0.0.1:1".into()],
        }
    }

    #[test]
    fn the_goals_names_pick_the_row_and_value_the_page_that_shows_them() {
        let goal = "Find the email by Wilhelmina and forward that email to Malva.";
        let reading = GoalReading::of(goal);
        let rows = ["Wilhelmina Leo placerat", "Marlena Dolor suspendis"];
        assert!(signals::names_goal(
            &element("clickable", rows[0]),
            &reading
        ));
        assert!(!signals::names_goal(
            &element("clickable", rows[1]),
            &reading
        ));
        assert!(!signals::names_goal(
            &element("button", "Wilhelminas"),
            &reading
        ));

        // The inbox: her name is on a row to pick, and the page prints the goal itself.
        let mut inbox = page(rows.iter().map(|r| element("clickable", r)).collect());
        inbox.text_excerpt = format!("{goal} {} {}", rows[0], rows[1]);
        // Her email open: her name is content; another's: it is nowhere.
        let open = |sender: &str| open_email(goal, sender);
        let names = |o: &Observation| goal_progress(o, &reading, goal).names;
        assert_eq!(names(&inbox), Some(0.0));
        assert_eq!(names(&open("Wilhelmina")), Some(0.5));
        assert_eq!(names(&open("Marlena")), Some(0.0));
        let policy = DefaultPolicy::default();
        let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
        assert!(value(&open("Wilhelmina")) > value(&open("Marlena")));
        assert!(value(&open("Wilhelmina")) > value(&inbox));
    }

    /// An email open on a page that prints the goal: its sender, its text, Reply and Forward.
    fn open_email(goal: &str, sender: &str) -> Observation {
        let mut email = page(vec![
            element("button", "Reply"),
            element("button", "Forward"),
        ]);
        email.text_excerpt = format!("{goal} {sender} Leo placerat. Reply Forward");
        email
    }

    #[test]
    fn a_possessive_names_whose_email_to_open_and_the_other_name_is_the_recipient() {
        // MiniWoB++'s email-inbox-forward-nl-turk, seed 2: before, "Lucie's" was no name,
        // Katee's own email scored as progress and the search spent its budget there.
        let goal = "Lucie's email, will you forward that to Katee?";
        let reading = GoalReading::of(goal);
        let rows = [
            "Lucie Ligula. Ligula in aliqu..",
            "Katee Elementum et. Purus..",
        ];
        assert!(signals::names_goal(
            &element("clickable", rows[0]),
            &reading
        ));
        let open = |sender: &str| open_email(goal, sender);
        let policy = DefaultPolicy::default();
        let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
        assert!(value(&open("Lucie")) > value(&open("Katee")));
    }

    #[test]
    fn someones_email_for_someone_else_is_forwarded_whatever_the_verb() {
        // email-inbox-forward-nl-turk, seeds 1 and 6: "give" and "send" are no "Forward",
        // and the search spent its budget on replies to the sender.
        let policy = DefaultPolicy::default();
        for goal in [
            "I command you to give Etheline the email from Doria.",
            "Send Joella the email from Chrystal.",
        ] {
            let mut email = open_email(goal, "Doria");
            email.elements.push(element("button", "close email"));
            assert_eq!(
                best(&policy.propose(&email, &task(goal, &[]))),
                "click \"Forward\"",
                "{goal}"
            );
        }
        // A reply stays a reply.
        let goal = "Reply to Joyan's email with, \"Vestibulum.\".";
        assert_eq!(
            best(&policy.propose(&open_email(goal, "Joyan"), &task(goal, &[]))),
            "click \"Reply\""
        );
    }

    /// The label of the proposal with the highest prior.
    fn best(proposals: &Proposals) -> String {
        proposals
            .candidates
            .iter()
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .map(|c| c.action.label())
            .unwrap_or_default()
    }

    /// An email's reply or forward form: a one-line "to" and a message body, no button the
    /// policy reads as the form's submit; the page's values are what the fields hold.
    fn compose_form(to: &str, body: &str) -> Observation {
        let implicit = FormContext {
            name: "area".into(),
            submit_name: None,
            posts: false,
            selector: "#area".into(),
            implicit: true,
        };
        let recipient = one_line_field("to", &implicit);
        let mut message = element("textbox", "");
        message.tag = "textarea".into();
        message.locators = vec![Locator::Css("#message".into())];
        message.form = Some(implicit);
        let mut form = page(vec![recipient, message, element("clickable", "send")]);
        form.values = [("to", to), ("", body)]
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(label, value)| PageValue {
                changed: false,
                label: label.into(),
                value: value.into(),
                kind: PageValueKind::Field,
            })
            .collect();
        form
    }

    /// An `<input type=text>` named `name` in `form`.
    fn one_line_field(name: &str, form: &FormContext) -> Element {
        let mut field = element("textbox", name);
        field.tag = "input".into();
        field.input_type = "text".into();
        field.form = Some(form.clone());
        field
    }

    /// A "Tags" field with a Submit button, holding `held`.
    fn tags_form(held: &str) -> Observation {
        let form = FormContext {
            name: "form".into(),
            submit_name: Some("Submit".into()),
            posts: false,
            selector: "#form".into(),
            implicit: true,
        };
        let tags = one_line_field("Tags:", &form);
        let mut submit = element("button", "Submit");
        submit.tag = "button".into();
        submit.form = Some(form);
        let mut observation = page(vec![tags, submit]);
        if !held.is_empty() {
            observation.values = vec![PageValue {
                changed: false,
                label: "Tags:".into(),
                value: held.into(),
                kind: PageValueKind::Field,
            }];
        }
        observation
    }

    /// A flight search: "From:", "To:" and an unnamed date field, holding `held` (label,
    /// value).
    fn flight_form(held: &[(&str, &str)]) -> Observation {
        let form = FormContext {
            name: "form".into(),
            submit_name: Some("Search".into()),
            posts: false,
            selector: "#form".into(),
            implicit: true,
        };
        let mut search = element("button", "Search");
        search.tag = "button".into();
        search.form = Some(form.clone());
        let mut observation = page(vec![
            one_line_field("From:", &form),
            one_line_field("To:", &form),
            one_line_field("", &form),
            search,
        ]);
        observation.values = held
            .iter()
            .map(|(label, value)| PageValue {
                changed: false,
                label: (*label).into(),
                value: (*value).into(),
                kind: PageValueKind::Field,
            })
            .collect();
        observation
    }

    #[test]
    fn a_date_field_that_takes_no_typing_is_clicked_not_filled() {
        let goal =
            "Book the shortest one-way flight from: LIH to: West Palm Beach, FL on 11/25/2016.";
        let with_picker = |held: &[(&str, &str)]| {
            let mut observation = flight_form(held);
            observation.elements[2].readonly = true;
            observation
        };
        let observation = with_picker(&[]);
        let proposals = DefaultPolicy::default().propose(&observation, &task(goal, &[]));
        let date_field = target_of(&observation.elements[2]);
        // No fill types into it, alone or in the form; the form is filled without it.
        assert!(
            proposals
                .candidates
                .iter()
                .all(|c| !c.action.targets()[..].contains(&&date_field)
                    || matches!(c.action, Action::Click { .. })),
            "{proposals:?}"
        );
        assert!(proposals.candidates.iter().any(|c| matches!(
            &c.action,
            Action::FillForm { fields, .. } if fields.len() == 2
        )));
        // Clicking it (its calendar opens) ranks with the best while the goal's date is to do.
        let click_prior = |proposals: &Proposals| {
            proposals
                .candidates
                .iter()
                .find(|c| matches!(&c.action, Action::Click { target } if *target == date_field))
                .map(|c| c.prior)
                .expect("a click on the date field")
        };
        let best = proposals
            .candidates
            .iter()
            .map(|c| c.prior)
            .fold(0.0, f64::max);
        assert!(click_prior(&proposals) >= 0.5 * best, "{proposals:?}");
        // The date still all to do: no value for it, however the rest looks.
        let reading = GoalReading::of(goal);
        assert_eq!(date_progress(&observation, &reading), Some(0.0));
        let mut plain = flight_form(&[]);
        plain.elements[2].readonly = false;
        assert_eq!(date_progress(&plain, &reading), None);
        // A field that holds the goal's value in a suggestion chosen for it is not typed
        // into again.
        let held = with_picker(&[("From:", "Kauai Island/Lihue, HI (LIH)")]);
        let proposals = DefaultPolicy::default().propose(&held, &task(goal, &[]));
        let from = target_of(&held.elements[0]);
        assert!(
            !proposals.candidates.iter().any(|c| matches!(
                &c.action,
                Action::Fill { target, value: FillValue::Literal(v), .. } if *target == from && v == "LIH"
            )),
            "{proposals:?}"
        );
    }

    #[test]
    fn values_the_goal_labels_go_into_the_fields_with_those_labels() {
        let goal =
            "Book the shortest one-way flight from: LIH to: West Palm Beach, FL on 11/25/2016.";
        let reading = GoalReading::of(goal);
        let values =
            |held: &[(&str, &str)]| goal_progress(&flight_form(held), &reading, goal).values;
        // The suggestions picked hold the labelled values; the date is held by the other field.
        let done = values(&[
            ("From:", "Kauai Island/Lihue, HI (LIH)"),
            ("To:", "West Palm Beach, FL (PBI)"),
            ("", "11/25/2016"),
        ]);
        assert_eq!(done, Some(1.0));
        // A value in the field another value is labelled for is no progress.
        assert_eq!(values(&[("From:", "West Palm Beach, FL")]), Some(0.0));
        assert_eq!(values(&[("From:", "11/25/2016")]), Some(0.0));
        assert_eq!(values(&[("From:", "LIH")]), Some(1.0 / 3.0));
        // Another value in a labelled field is counted as misplaced, and such a page is worth
        // less than the one with the value in its place; the date counts only outside them.
        let progress = |held: &[(&str, &str)]| goal_progress(&flight_form(held), &reading, goal);
        assert_eq!(progress(&[("From:", "West Palm Beach, FL")]).misplaced, 1);
        assert_eq!(progress(&[("From:", "11/25/2016")]).misplaced, 1);
        assert_eq!(
            progress(&[("To:", "West Palm Beach, FL (PBI)")]).misplaced,
            0
        );
        assert_eq!(
            progress(&[("From:", "Kauai Island/Lihue, HI (LIH)")]).misplaced,
            0
        );
        assert_eq!(
            date_progress(&flight_form(&[("From:", "11/25/2016")]), &reading),
            None
        );
        assert_eq!(
            date_progress(&flight_form(&[("", "11/25/2016")]), &reading),
            Some(1.0)
        );
        // Both with the destination's suggestion up, as the page shows it under either field:
        // a promise alike.
        let value = |held: &[(&str, &str)]| {
            let mut page = flight_form(held);
            page.elements
                .push(element("clickable", "West Palm Beach, FL (PBI)"));
            DefaultPolicy::default()
                .propose(&page, &task(goal, &[]))
                .value_hint
        };
        assert!(
            value(&[("To:", "West Palm Beach, FL")]) > value(&[("From:", "West Palm Beach, FL")])
        );
        assert!(value(&[("", "11/25/2016")]) > value(&[("From:", "11/25/2016")]));
        // The form's fill puts each labelled value under its label.
        let proposals = DefaultPolicy::default().propose(&flight_form(&[]), &task(goal, &[]));
        let best_form = proposals
            .candidates
            .iter()
            .filter(|c| matches!(c.action, Action::FillForm { .. }))
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .map(|c| c.action.label());
        assert_eq!(
            best_form.as_deref(),
            Some(
                "fill \"From:\"=\"LIH\", \"To:\"=\"West Palm Beach, FL\", \"\"=\"11/25/2016\" \
                 and click \"Search\""
            )
        );
    }

    #[test]
    fn likes_pressed_on_the_named_users_posts_are_progress() {
        let goal = "Click the \"Like\" button on all posts by @aliquam and then click Submit.";
        let reading = GoalReading::of(goal);
        let feed = |pressed: &[usize]| {
            let posts = ["@aliquam Vel quis", "@morbi Nunc eget", "@aliquam Sed et"];
            let mut elements: Vec<Element> = posts
                .iter()
                .enumerate()
                .map(|(i, post)| {
                    let mut like = element("clickable", "like");
                    like.record = (*post).into();
                    like.checked = pressed.contains(&i);
                    like
                })
                .collect();
            elements.push(element("button", "Submit"));
            page(elements)
        };
        let choices = |pressed: &[usize]| goal_progress(&feed(pressed), &reading, goal).choices;
        assert_eq!(choices(&[]), Some(0.0));
        assert_eq!(choices(&[0]), Some(0.5));
        assert_eq!(choices(&[0, 2]), Some(1.0));
        // A like on another's post costs half of one.
        assert_eq!(choices(&[0, 1, 2]), Some(0.75));
        // One such control (a "Mute" in one open menu) is a click, not a count.
        let mute = "For the user @et, click on the \"Mute\" button.";
        let mut menu = element("clickable", "Mute");
        menu.record = "@et Lorem ipsum".into();
        let observation = page(vec![menu]);
        assert_eq!(
            goal_progress(&observation, &GoalReading::of(mute), mute).choices,
            None
        );
    }

    #[test]
    fn a_suggestion_that_holds_the_goals_pieces_is_sent() {
        let goal = "Enter an item that starts with \"Lith\" and ends with \"ania\".";
        let reading = GoalReading::of(goal);
        let values = |held: &str| goal_progress(&tags_form(held), &reading, goal).values;
        // Both pieces are in the suggestion picked; a piece typed alone is half.
        assert_eq!(values("Lithuania"), Some(1.0));
        assert_eq!(values("Lith"), Some(0.5));
        assert_eq!(values("Latvia"), Some(0.0));
        let submit_prior = |held: &str| {
            let proposals = DefaultPolicy::default().propose(&tags_form(held), &task(goal, &[]));
            let best = proposals
                .candidates
                .iter()
                .max_by(|a, b| a.prior.total_cmp(&b.prior))
                .map(|c| c.action.label());
            let submit = proposals
                .candidates
                .iter()
                .find(|c| c.action.label() == "click \"Submit\"")
                .map(|c| c.prior);
            (best, submit)
        };
        // With every piece held, sending the form comes first; with one, typing does.
        let (best, ready) = submit_prior("Lithuania");
        assert_eq!(best.as_deref(), Some("click \"Submit\""));
        let (best, half) = submit_prior("Lith");
        assert_ne!(best.as_deref(), Some("click \"Submit\""));
        assert!(ready > half, "{ready:?} vs {half:?}");
    }

    #[test]
    fn a_forward_types_the_recipient_and_keeps_the_message() {
        let goal = "Send Marlena the email from Caprice.";
        let forward = compose_form("", "Leo placerat. Leo scelerisque.");
        let proposals = DefaultPolicy::default().propose(&forward, &task(goal, &[]));
        let prior = |label: &str| {
            proposals
                .candidates
                .iter()
                .find(|c| c.action.label() == label)
                .map(|c| c.prior)
                .unwrap_or_else(|| panic!("{label} proposed"))
        };
        // The name goes into the empty recipient field before it is typed over the message.
        assert!(
            prior("fill \"to\" with \"Marlena\"") > prior("fill \"\" with \"Marlena\""),
            "the recipient before the message"
        );
        // Enter in a <textarea> is a line break, not a submit: never proposed there, and a
        // form without a button presses it in its one-line field.
        for candidate in &proposals.candidates {
            match &candidate.action {
                Action::Fill { target, enter, .. } => {
                    assert!(
                        !(*enter && target.name.is_empty()),
                        "{}",
                        candidate.action.label()
                    );
                }
                Action::FillForm {
                    fields,
                    submit: None,
                } => {
                    let last = fields.last().expect("a field");
                    assert_eq!(last.target.name, "to", "{}", candidate.action.label());
                }
                _ => {}
            }
        }

        // A reply to the sender with the recipient's name as its message is no more done than
        // the forward with the recipient typed where recipients go.
        let reading = GoalReading::of(goal);
        let names = |o: &Observation| goal_progress(o, &reading, goal).names;
        let forwarded = compose_form("Marlena", "Leo placerat. Leo scelerisque.");
        let replied = compose_form("Caprice", "Marlena");
        assert_eq!(names(&forwarded), Some(0.5));
        assert_eq!(names(&replied), Some(0.5));
    }

    #[test]
    fn a_form_with_an_empty_field_for_the_goals_value_ranks_above_the_page_before_it() {
        // MiniWoB++ email-inbox-forward-nl-turk, development seeds 2002-2004: the forward form
        // (its "to" empty, the sender no longer shown) was valued below the email it came
        // from and below the reply form, and its send was tried before its fill.
        let goal = "Find yesterday's emails from Devon and forward them to Donielle.";
        let reading = GoalReading::of(goal);
        let policy = DefaultPolicy::default();
        let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
        let placeable = |o: &Observation| goal_progress(o, &reading, goal).placeable;
        let forward = compose_form("", "Et volutpat. Tincidunt enim.");
        // A reply, as MiniWoB++ draws it: the sender as text, the body empty; a name goes in
        // no body.
        let header = "to: Devon subject: Re: Et volutpat.";
        let mut body = element("textbox", header);
        body.tag = "textarea".into();
        let mut reply = page(vec![body, element("clickable", "send reply")]);
        reply.text_excerpt = format!("{goal} {header}");
        assert_eq!(placeable(&forward), Some(1.0));
        assert_eq!(placeable(&reply), Some(0.0));
        assert!(value(&forward) > value(&reply));
        assert!(
            value(&forward) < value(&open_email(goal, "Devon")),
            "her email open shows her name"
        );
        // Typed, the recipient is held: more than a place for it.
        let typed = compose_form("Donielle", "Et volutpat. Tincidunt enim.");
        assert_eq!(placeable(&typed), Some(0.0));
        assert!(value(&typed) > value(&forward));
        // A search box is no place for a value unless the goal searches.
        let form = FormContext {
            name: "search".into(),
            submit_name: None,
            posts: false,
            selector: "#search".into(),
            implicit: true,
        };
        let mut search = page(vec![one_line_field("Search", &form)]);
        search.text_excerpt = "Search".into();
        assert_eq!(placeable(&search), Some(0.0));
    }

    #[test]
    fn a_calendar_steps_toward_the_goals_month_then_takes_its_day() {
        let policy = DefaultPolicy::default();
        let goal = task("Select 04/08/2016 as the date and hit submit.", &[]);
        let calendar = |shown: &str| {
            let mut observation = page(
                ["Prev", "Next", "8", "12", "Submit"]
                    .into_iter()
                    .map(|n| element("link", n))
                    .collect(),
            );
            observation.text_excerpt = format!("Date: Prev Next {shown} Su Mo Tu 1 2 3");
            policy.propose(&observation, &goal)
        };
        let prior = |proposals: &Proposals, name: &str| {
            proposals
                .candidates
                .iter()
                .find(|c| {
                    c.action
                        == Action::Click {
                            target: target_of(&element("link", name)),
                        }
                })
                .map(|c| c.prior)
                .expect("proposed")
        };
        let proposed = |proposals: &Proposals, name: &str| {
            proposals.candidates.iter().any(|c| {
                c.action
                    == Action::Click {
                        target: target_of(&element("link", name)),
                    }
            })
        };
        let december = calendar("December 2016");
        assert!(prior(&december, "Prev") > 2.0 * prior(&december, "Next"));
        // Days of another month than the goal's are not offered.
        assert!(!proposed(&december, "8") && !proposed(&december, "12"));
        // The walk back to April in one action, ranked first.
        let walk = december
            .candidates
            .iter()
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .expect("candidates");
        assert_eq!(walk.action.label(), "click \"Prev\" 8 times");
        // A month away: one click, no walk.
        let may = calendar("May 2016");
        assert!(
            may.candidates
                .iter()
                .all(|c| !matches!(c.action, Action::Repeat { .. }))
        );
        assert!(prior(&may, "Prev") > prior(&may, "Next"));
        let january = calendar("January 2016");
        assert!(prior(&january, "Next") > 2.0 * prior(&january, "Prev"));
        let april = calendar("April 2016");
        for other in ["Prev", "Next", "Submit"] {
            assert!(prior(&april, "8") > 2.0 * prior(&april, other), "{other}");
        }
        // At the goal's month, only the goal's day.
        assert!(!proposed(&april, "12"));
        // The nearer the month, the higher the page's value.
        let value = |shown| calendar(shown).value_hint;
        assert!(value("April 2016") > value("June 2016"));
        assert!(value("June 2016") > value("December 2016"));
    }

    #[test]
    fn a_goal_that_asks_to_scroll_ranks_the_end_it_names_first() {
        let policy = DefaultPolicy::default();
        let mut observation = page(vec![element("button", "Submit")]);
        let scrollable = |at| forager_protocol::observation::Scrollable {
            name: "text area".into(),
            role: "textbox".into(),
            locators: vec![Locator::Css("#text-area".into())],
            at,
        };
        observation.scrollables = vec![scrollable(ScrollPosition::Middle)];
        let scrolls = |proposals: &Proposals| -> Vec<(ScrollEdge, f64)> {
            proposals
                .candidates
                .iter()
                .filter_map(|c| match &c.action {
                    Action::Scroll { to, .. } => Some((*to, c.prior)),
                    _ => None,
                })
                .collect()
        };
        let submit_prior = |proposals: &Proposals| {
            proposals
                .candidates
                .iter()
                .find(|c| matches!(c.action, Action::Click { .. }))
                .map(|c| c.prior)
                .expect("the button")
        };
        let asked = policy.propose(
            &observation,
            &task(
                "Scroll the textarea to the top of the text hit submit.",
                &[],
            ),
        );
        let asked = scrolls(&asked);
        assert_eq!(asked.len(), 2, "both ends: {asked:?}");
        let prior = |to| {
            asked
                .iter()
                .find(|(t, _)| *t == to)
                .map(|(_, p)| *p)
                .unwrap_or(0.0)
        };
        assert!(
            prior(ScrollEdge::Top) > 2.0 * prior(ScrollEdge::Bottom),
            "{asked:?}"
        );
        // Not asked: the end is a long shot below the page's controls.
        let plain = policy.propose(&observation, &task("Press Submit", &[]));
        let bottom = scrolls(&plain)
            .into_iter()
            .find(|(t, _)| *t == ScrollEdge::Bottom)
            .map(|(_, p)| p)
            .expect("offered");
        assert!(bottom < submit_prior(&plain), "{bottom}");
        // A box at its end is not scrolled there again; its keys differ by end.
        observation.scrollables = vec![scrollable(ScrollPosition::Bottom)];
        let at_end = policy.propose(&observation, &task("Scroll to the bottom", &[]));
        assert_eq!(
            scrolls(&at_end).iter().map(|(t, _)| *t).collect::<Vec<_>>(),
            vec![ScrollEdge::Top]
        );
    }

    #[test]
    fn a_named_choice_already_made_is_not_clicked_again_and_buttons_wait_for_the_rest() {
        let choice = |role: &str, name: &str, checked: bool| {
            let mut e = element(role, name);
            e.tag = "input".into();
            e.checked = checked;
            e
        };
        let goal = "Check \"Beta\" and \"Delta\", choose \"Large\" and press Submit";
        let priors = |elements: Vec<Element>, goal: &str| -> Vec<(String, f64)> {
            DefaultPolicy::default()
                .propose(&page(elements), &task(goal, &[]))
                .candidates
                .iter()
                .filter_map(|c| c.action.target().map(|t| (t.name.clone(), c.prior)))
                .collect()
        };
        let of = |priors: &[(String, f64)], name: &str| {
            priors
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, p)| *p)
                .expect("proposed")
        };
        let fresh = priors(
            vec![
                choice("checkbox", "Beta", false),
                choice("checkbox", "Delta", false),
                choice("radio", "Large", false),
                element("button", "Submit"),
            ],
            goal,
        );
        let half = priors(
            vec![
                choice("checkbox", "Beta", true),
                choice("checkbox", "Delta", false),
                choice("radio", "Large", true),
                element("button", "Submit"),
            ],
            goal,
        );
        // Checked Beta and chosen Large fall behind Delta, which is still to do; so does Submit.
        assert!(of(&half, "Beta") * 3.0 < of(&half, "Delta"), "{half:?}");
        assert!(of(&half, "Large") * 3.0 < of(&half, "Delta"), "{half:?}");
        assert!(of(&half, "Submit") < of(&half, "Delta"), "{half:?}");
        let done = priors(
            vec![
                choice("checkbox", "Beta", true),
                choice("checkbox", "Delta", true),
                choice("radio", "Large", true),
                element("button", "Submit"),
            ],
            goal,
        );
        // With every choice made, Submit leads; before, it waited.
        let best = done
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("candidates");
        assert_eq!(best.0, "Submit", "{done:?}");
        // Untouched, the three choices are one action, tried first.
        let proposals = DefaultPolicy::default().propose(
            &page(vec![
                choice("checkbox", "Alpha", false),
                choice("checkbox", "Beta", false),
                choice("checkbox", "Delta", false),
                choice("radio", "Large", false),
                element("button", "Submit"),
            ]),
            &task(goal, &[]),
        );
        let top = proposals
            .candidates
            .iter()
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .expect("candidates");
        assert_eq!(top.action.label(), "check \"Beta\", \"Delta\", \"Large\"");
        let submit_share =
            |p: &[(String, f64)]| of(p, "Submit") / p.iter().map(|x| x.1).sum::<f64>();
        assert!(
            submit_share(&fresh) < submit_share(&done),
            "{fresh:?} {done:?}"
        );
        // A goal that clears choices clicks a checked box it names.
        let clearing = priors(
            vec![
                choice("checkbox", "Beta", true),
                choice("checkbox", "Delta", false),
                element("button", "Submit"),
            ],
            "Uncheck \"Beta\" and press Submit",
        );
        assert!(
            of(&clearing, "Beta") > of(&clearing, "Delta"),
            "{clearing:?}"
        );
    }

    #[test]
    fn the_choices_the_goal_names_order_the_states_of_a_page() {
        let goal = "Check \"Beta\" and \"Delta\", choose \"Large\" and press Submit";
        let value = |checked: &[&str]| {
            let elements = ["Alpha", "Beta", "Gamma", "Delta", "Large"]
                .iter()
                .map(|name| {
                    let mut e = element(
                        if *name == "Large" {
                            "radio"
                        } else {
                            "checkbox"
                        },
                        name,
                    );
                    e.tag = "input".into();
                    e.checked = checked.contains(name);
                    e
                })
                .chain([element("button", "Submit")])
                .collect();
            DefaultPolicy::default()
                .propose(&page(elements), &task(goal, &[]))
                .value_hint
        };
        let steps = [
            value(&[]),
            value(&["Beta"]),
            value(&["Beta", "Delta"]),
            value(&["Beta", "Delta", "Large"]),
        ];
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
        // A box the goal does not name is no progress, and costs some once others are made.
        assert!(value(&["Alpha"]) <= steps[0]);
        assert!(value(&["Beta", "Alpha"]) < steps[1]);
    }

    #[test]
    fn leaving_the_session_the_theme_or_the_area_is_tried_last() {
        let link = |name: &str, href: &str| {
            let mut e = element("link", name);
            e.href = Some(href.into());
            e
        };
        let mut observation = page(vec![
            link("Groups", "http://127.0.0.1:1/admin/auth/group/"),
            link("Log out", "http://127.0.0.1:1/admin/logout/"),
            element("button", "Toggle theme (current theme: auto)"),
            link("View site", "http://127.0.0.1:1/"),
            link("Skip to main content", "http://127.0.0.1:1/admin/#content"),
            link("Site administration", "http://127.0.0.1:1/admin/"),
        ]);
        observation.url = "http://127.0.0.1:1/admin/".into();
        let prior = |goal: &str, name: &str| {
            let mut context = task(goal, &[]);
            context.area = Area::of("http://127.0.0.1:1/admin/");
            DefaultPolicy::default()
                .propose(&observation, &context)
                .candidates
                .iter()
                .find(|c| c.action.target().is_some_and(|t| t.name == name))
                .map(|c| c.prior)
                .expect("proposed")
        };
        let goal = "add a group for the site's editors";
        for name in [
            "Log out",
            "Toggle theme (current theme: auto)",
            "View site",
            "Skip to main content",
            "Site administration",
        ] {
            assert!(prior(goal, name) < prior(goal, "Groups"), "{name}");
        }
        // Unless the goal asks for it.
        assert!(prior("log out of the site", "Log out") > prior("log out of the site", "Groups"));
        assert!(ends_session("LOG OUT") && ends_session("Sign out") && !ends_session("Logo"));
        assert_eq!(
            Area::of("http://127.0.0.1:1/admin/index.html").map(|a| a.path),
            Some("/admin/".into())
        );
    }

    #[test]
    fn credentials_go_only_where_credentials_are_asked_for() {
        let field = |name: &str, kind: &str| {
            let mut e = element("textbox", name);
            e.tag = "input".into();
            e.input_type = kind.into();
            e.form = Some(forager_protocol::observation::FormContext {
                name: "group_form".into(),
                submit_name: Some("Save".into()),
                posts: true,
                selector: "#group_form".into(),
                implicit: false,
            });
            e
        };
        let mut save = element("button", "Save");
        save.form = field("x", "text").form;
        let observation = page(vec![field("Name:", "text"), field("Filter", "text"), save]);
        let goal = "log in and add a new group named \"editors\"";
        let proposals = DefaultPolicy::default().propose(
            &observation,
            &task(goal, &[("username", "admin"), ("password", "secret")]),
        );
        let forms: Vec<&Action> = proposals
            .candidates
            .iter()
            .map(|c| &c.action)
            .filter(|a| matches!(a, Action::FillForm { .. }))
            .collect();
        assert!(!forms.is_empty());
        for form in forms {
            let Action::FillForm { fields, .. } = form else {
                unreachable!()
            };
            for f in fields {
                if f.target.name == "Name:" {
                    assert_eq!(f.value, FillValue::Literal("editors".into()), "{form:?}");
                }
                assert_ne!(f.value, FillValue::Input("password".into()), "{form:?}");
            }
        }
    }

    /// The tracker's page: a "Show issue" number field in a GET form beside the login form.
    #[test]
    fn credentials_never_go_into_a_get_form_beside_the_login_form() {
        use forager_protocol::Sends;
        let in_form = |name: &str, kind: &str, form: &str, posts: bool| {
            let mut e = element("textbox", name);
            e.tag = "input".into();
            e.input_type = kind.into();
            e.form = Some(forager_protocol::observation::FormContext {
                name: form.into(),
                submit_name: Some(if posts { "Login" } else { "show" }.into()),
                posts,
                selector: format!("#{form}"),
                implicit: false,
            });
            let url = format!("http://127.0.0.1:1/{form}");
            e.sends = if posts {
                Sends::Post { url }
            } else {
                Sends::Get { url }
            };
            e
        };
        let mut show = element("button", "show");
        show.form = in_form("x", "text", "issue", false).form;
        show.sends = in_form("x", "text", "issue", false).sends;
        let mut login = element("button", "Login");
        login.form = in_form("x", "text", "login", true).form;
        login.sends = in_form("x", "text", "login", true).sends;
        let observation = page(vec![
            in_form("Show issue:", "number", "issue", false),
            in_form("Search", "search", "issue", false),
            show,
            in_form("Username", "text", "login", true),
            in_form("Password", "password", "login", true),
            login,
        ]);
        let goal = "Log in as alice and report a new bug titled \"Crash on save\"";
        let proposals = DefaultPolicy::default().propose(
            &observation,
            &task(goal, &[("username", "alice"), ("password", "wonderland")]),
        );
        let mut credentials_typed = 0;
        for candidate in &proposals.candidates {
            let fields: Vec<&FieldValue> = match &candidate.action {
                Action::FillForm { fields, .. } => fields.iter().collect(),
                _ => Vec::new(),
            };
            for f in fields {
                if let FillValue::Input(name) = &f.value {
                    credentials_typed += 1;
                    match name.as_str() {
                        "password" => assert_eq!(f.target.name, "Password", "{candidate:?}"),
                        "username" => assert_eq!(f.target.name, "Username", "{candidate:?}"),
                        other => panic!("unexpected input {other}"),
                    }
                }
            }
            if let Action::Fill {
                value: FillValue::Input(name),
                target,
                ..
            } = &candidate.action
            {
                panic!("{name} typed alone into {:?}", target.name);
            }
        }
        assert!(credentials_typed >= 2, "the login form is still filled");
    }

    /// A data browser's table: a search box and a filter row's value in one GET form, a goal
    /// that quotes nothing. The goal's telling word goes into the search box.
    #[test]
    fn spare_words_go_into_a_forms_search_box_when_nothing_fits() {
        let field = |name: &str, role: &str, kind: &str| {
            let mut e = element(role, name);
            e.tag = "input".into();
            e.input_type = kind.into();
            e.form = Some(forager_protocol::observation::FormContext {
                name: "table".into(),
                submit_name: Some("Apply".into()),
                posts: false,
                selector: "#table".into(),
                implicit: false,
            });
            e
        };
        let mut apply = element("button", "Apply");
        apply.form = field("x", "textbox", "text").form;
        let observation = page(vec![
            field("Search:", "searchbox", "search"),
            field("_filter_value", "textbox", "text"),
            apply,
        ]);
        let proposals = DefaultPolicy::default().propose(
            &observation,
            &task("Find the cities whose description mentions a harbour", &[]),
        );
        let searched: Vec<String> = proposals
            .candidates
            .iter()
            .filter_map(|c| match &c.action {
                Action::FillForm { fields, .. } => fields
                    .iter()
                    .find(|f| f.target.name == "Search:")
                    .and_then(|f| match &f.value {
                        FillValue::Literal(text) => Some(text.clone()),
                        FillValue::Input(_) => None,
                    }),
                _ => None,
            })
            .collect();
        assert!(searched.iter().any(|w| w == "harbour"), "{searched:?}");
    }

    #[test]
    fn session_ending_controls_are_known_by_name_and_by_url() {
        assert!(would_end_session("Log out", None));
        assert!(would_end_session("Switch user", None));
        assert!(would_end_session("Delete my account", None));
        assert!(would_end_session("Revoke all sessions", None));
        assert!(would_end_session(
            "Bye",
            Some("http://h/issue?@action=logout")
        ));
        assert!(!would_end_session("Log in", None));
        assert!(!would_end_session(
            "Issues",
            Some("http://h/issue?@sort=id")
        ));
        assert!(goal_ends_session("log out of the admin"));
        assert!(!goal_ends_session("add a new group named \"reviewers\""));
    }

    #[test]
    fn goal_like_links_get_higher_priors_and_foreign_links_none() {
        let mut foreign = element("link", "Free laptops here");
        foreign.href = Some("http://127.0.0.2:1/steal".into());
        let mut laptops = element("link", "Laptops");
        laptops.href = Some("http://127.0.0.1:1/laptops".into());
        let mut garden = element("link", "Garden tools");
        garden.href = Some("http://127.0.0.1:1/garden".into());
        let proposals = DefaultPolicy::default().propose(
            &page(vec![foreign, laptops, garden]),
            &task("buy a laptop", &[]),
        );
        assert_eq!(
            proposals.candidates.len(),
            2,
            "the foreign link is not proposed"
        );
        let prior = |name: &str| {
            proposals
                .candidates
                .iter()
                .find(|c| c.action.target().is_some_and(|t| t.name == name))
                .map(|c| c.prior)
                .expect("proposed")
        };
        assert!(prior("Laptops") > prior("Garden tools"));
        let sum: f64 = proposals.candidates.iter().map(|c| c.prior).sum();
        assert!((sum - 1.0).abs() < 1e-9);
        assert!(proposals.candidates.iter().all(|c| c.target.is_some()));
    }

    #[test]
    fn text_typed_into_a_search_box_is_progress_only_when_the_goal_is_to_search() {
        let typed_into = |label: &str| {
            let mut field = element("textbox", label);
            field.tag = "input".into();
            field.input_type = "text".into();
            // The sender is shown (found, not typed).
            let mut observation = page(vec![element("heading", "From Andria"), field]);
            observation.values = vec![PageValue {
                changed: false,
                label: label.into(),
                value: "Varius. Morbi.".into(),
                kind: PageValueKind::Field,
            }];
            observation
        };
        let reply = "Find the email by Andria and reply to them with the text \"Varius. Morbi.\".";
        let progress = |observation: &Observation, goal: &str| {
            goal_progress(observation, &GoalReading::of(goal), goal)
                .values
                .expect("a value is wanted")
        };
        assert_eq!(progress(&typed_into("Message"), reply), 1.0);
        assert_eq!(progress(&typed_into("Search"), reply), 0.0);
        let search = "Search for \"Varius. Morbi.\" and open the first result";
        assert_eq!(progress(&typed_into("Search"), search), 1.0);
        // A name the page does not show is a value to type.
        let forward = "Find the email by Andria and forward that email to Ibby.";
        assert_eq!(progress(&typed_into("to"), forward), 0.0);
    }

    #[test]
    fn a_multiple_choice_list_gets_every_option_the_goal_names_at_once() {
        let mut list = element("listbox", "");
        list.tag = "select".into();
        list.options = ["Fayette", "Claudie", "Danit", "Fay"]
            .iter()
            .map(|name| forager_protocol::observation::SelectOption {
                value: name.to_string(),
                label: name.to_string(),
            })
            .collect();
        let proposals = DefaultPolicy::default().propose(
            &page(vec![list, element("button", "Submit")]),
            &task(
                "Select Fayette, Claudie from the scroll list and click Submit.",
                &[],
            ),
        );
        let chosen: Vec<&str> = proposals
            .candidates
            .iter()
            .filter_map(|c| match &c.action {
                Action::Select { option, .. } => Some(option.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            chosen,
            vec!["Fayette\nClaudie"],
            "whole names only, in list order"
        );
        let nothing = DefaultPolicy::default().propose(
            &page(vec![element("listbox", "")]),
            &task("Select Fayette", &[]),
        );
        assert!(
            nothing
                .candidates
                .iter()
                .all(|c| !matches!(c.action, Action::Select { .. }))
        );
    }

    #[test]
    fn forms_are_filled_whole_with_matching_inputs_and_classified() {
        let form = FormContext {
            name: "login".into(),
            submit_name: Some("Log in".into()),
            posts: true,
            selector: "#login".into(),
            implicit: false,
        };
        let mut email = element("textbox", "Email address");
        email.input_type = "email".into();
        email.form = Some(form.clone());
        let mut password = element("textbox", "Password");
        password.input_type = "password".into();
        password.form = Some(form.clone());
        let mut submit = element("button", "Log in");
        submit.form = Some(form);
        let proposals = DefaultPolicy::default().propose(
            &page(vec![email, password, submit]),
            &task(
                "sign in",
                &[("password", "hunter2"), ("email", "a@b.example")],
            ),
        );
        let fill = proposals
            .candidates
            .iter()
            .find(|c| matches!(c.action, Action::FillForm { .. }))
            .expect("a form fill");
        let Action::FillForm { fields, submit } = &fill.action else {
            unreachable!()
        };
        assert_eq!(submit.as_ref().map(|s| s.name.as_str()), Some("Log in"));
        let pairs: Vec<(&str, &FillValue)> = fields
            .iter()
            .map(|f| (f.target.name.as_str(), &f.value))
            .collect();
        assert_eq!(
            pairs,
            [
                ("Email address", &FillValue::Input("email".into())),
                ("Password", &FillValue::Input("password".into()))
            ]
        );
        assert_eq!(fill.risk, RiskClass::AuthenticatedRead);
        // Inputs stay references: no secret in the action.
        assert!(!fill.action.label().contains("hunter2"));
    }

    #[test]
    fn quoted_strings_become_values() {
        let t = task("search for \u{201c}ThinkPad X1\u{201d} and 'blue'", &[]);
        assert_eq!(t.quoted_strings(), ["ThinkPad X1", "blue"]);
        let mut search = element("searchbox", "Search");
        search.form = Some(FormContext {
            name: "search".into(),
            submit_name: None,
            posts: false,
            selector: "#s".into(),
            implicit: false,
        });
        let proposals = DefaultPolicy::default().propose(&page(vec![search]), &t);
        let typed: Vec<String> = proposals
            .candidates
            .iter()
            .filter(|c| matches!(c.action, Action::FillForm { .. }))
            .map(|c| c.action.label())
            .collect();
        assert_eq!(typed.len(), 2, "{typed:?}");
        assert!(
            typed[0].contains("ThinkPad X1") && typed[1].contains("blue"),
            "{typed:?}"
        );
        assert!(
            proposals
                .candidates
                .iter()
                .all(|c| c.risk == RiskClass::ReadOnly)
        );
    }

    #[test]
    fn the_item_a_control_sits_in_picks_it_among_its_likes() {
        let goal = "Click the \"Like\" button on all posts by @aliquam and then click Submit.";
        let post = |author: &str, control: &str| {
            let mut e = element("clickable", control);
            e.text = String::new();
            e.locators = vec![Locator::Css(format!("#{author} .{control}"))];
            // Lorem ipsum says "aliquam" too: only the handle names her.
            e.record = format!("Ann {author} 3h ago Lorem aliquam dolor");
            e
        };
        let feed = page(vec![
            post("@morbi", "like"),
            post("@morbi", "reply"),
            post("@aliquam", "reply"),
            post("@aliquam", "like"),
            post("@nunc", "like"),
        ]);
        let proposals = DefaultPolicy::default().propose(&feed, &task(goal, &[]));
        let prior = |i: usize| {
            let target = target_of(&feed.elements[i]);
            proposals
                .candidates
                .iter()
                .find(|c| matches!(&c.action, Action::Click { target: t } if *t == target))
                .map(|c| c.prior)
                .expect("a click on every control")
        };
        assert!(prior(3) > prior(0), "her post's Like over another's");
        assert!(prior(3) > prior(4));
        assert!(
            (prior(2) - prior(1)).abs() < 1e-9,
            "her post's Reply no more than another's: the goal names no reply"
        );
        assert!(prior(0) > prior(2), "a Like over a Reply, whoever's");
    }

    #[test]
    fn the_steppers_of_the_dishes_the_goal_names_come_first() {
        let dishes = [
            "Caesar Salad vegan gluten-free",
            "Chicken wings meat",
            "Grilled Pork Tenderloin meat gluten-free",
            "Spaghetti and Meatballs meat",
            "Ice cream sundae dairy peanuts gluten-free",
            "Coconut mango tart vegan",
        ];
        let mut elements = Vec::new();
        for (n, dish) in dishes.iter().enumerate() {
            for control in ["-", "+"] {
                let mut e = element("clickable", control);
                e.tag = "span".into();
                e.locators = vec![Locator::Css(format!("#dish{n} .{control}"))];
                e.record = format!("{dish} - +");
                elements.push(e);
            }
        }
        let mut order = element("button", "Order!");
        order.tag = "button".into();
        elements.push(order);
        let menu = page(elements);
        let priors = |goal: &str| {
            let proposals = DefaultPolicy::default().propose(&menu, &task(goal, &[]));
            menu.elements
                .iter()
                .map(|e| {
                    let target = target_of(e);
                    let click = proposals
                        .candidates
                        .iter()
                        .find(|c| matches!(&c.action, Action::Click { target: t } if *t == target))
                        .map(|c| c.prior)
                        .expect("a click on every control");
                    let repeat = proposals
                        .candidates
                        .iter()
                        .find(|c| matches!(&c.action, Action::Repeat { target: t, .. } if *t == target))
                        .map(|c| (c.prior, c.action.label()));
                    (click, repeat)
                })
                .collect::<Vec<_>>()
        };
        let one_of_each = "Order one of each item: Grilled Pork Tenderloin, Ice cream sundae";
        let named = priors(one_of_each);
        let (pork, sundae, wings) = (&named[4..6], &named[8..10], &named[2..4]);
        for (lifted, (click, repeat)) in pork.iter().chain(sundae).enumerate() {
            assert!(*click > wings[lifted % 2].0 * 2.0, "{named:?}");
            assert!(repeat.is_none(), "one of each: no count to repeat");
        }
        // Each named dish's "+" (and, for the search to rule out, each one's "-") in one action.
        let presses = |goal: &str| -> Vec<Vec<Target>> {
            DefaultPolicy::default()
                .propose(&menu, &task(goal, &[]))
                .candidates
                .into_iter()
                .filter_map(|c| match c.action {
                    Action::Check { targets } => Some(targets),
                    _ => None,
                })
                .collect()
        };
        let plus = |dish: usize| target_of(&menu.elements[dish * 2 + 1]);
        assert!(presses(one_of_each).contains(&vec![plus(2), plus(4)]));
        // The reading turned off (its held-out measurement): no dish's controls in one action,
        // none pressed as often as the goal counts.
        let unread = DefaultPolicy::default()
            .with_weights(signals::Weights::parse("item_controls=0").expect("a known reading"))
            .propose(&menu, &task("Order 4 items that are vegan", &[]))
            .candidates;
        assert!(
            !unread
                .iter()
                .any(|c| matches!(c.action, Action::Check { .. } | Action::Repeat { .. })),
            "{unread:?}"
        );
        // Two of the two vegan dishes, not of some other.
        assert_eq!(
            presses("Order 2 items that are vegan")
                .into_iter()
                .filter(|t| t[0].name == "+")
                .collect::<Vec<_>>(),
            vec![vec![plus(0), plus(5)]]
        );
        let vegan = priors("Order 4 items that are vegan");
        for (n, (click, repeat)) in vegan.iter().take(12).enumerate() {
            let dish = dishes[n / 2];
            if dish.contains("vegan") {
                assert!(*click > vegan[2].0 * 2.0, "{vegan:?}");
                let (_, label) = repeat
                    .as_ref()
                    .expect("a vegan dish's control pressed 4 times");
                assert!(label.ends_with("4 times"), "{label}");
            } else {
                assert!(repeat.is_none());
            }
        }
    }

    #[test]
    fn the_likes_of_all_her_posts_are_pressed_in_one_action() {
        let post = |n: usize, author: &str, control: &str, pressed: bool| {
            let mut e = element("clickable", control);
            e.text = String::new();
            e.locators = vec![Locator::Css(format!("#post{n} .{control}"))];
            e.record = format!("Ann {author} Lorem dolor");
            e.checked = pressed;
            e
        };
        let feed = |pressed: bool| {
            page(vec![
                post(0, "@aliquam", "like", false),
                post(1, "@morbi", "like", false),
                post(0, "@aliquam", "reply", false),
                post(3, "@aliquam", "like", pressed),
                post(4, "@aliquam", "like", false),
            ])
        };
        let group = |goal: &str, pressed: bool| {
            let feed = feed(pressed);
            DefaultPolicy::default()
                .propose(&feed, &task(goal, &[]))
                .candidates
                .into_iter()
                .find_map(|c| match c.action {
                    Action::Check { targets } => Some(
                        targets
                            .iter()
                            .map(|t| t.locators[0].clone())
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
        };
        let css = |s: &str| Locator::Css(s.into());
        let all = "Click the \"Like\" button on all posts by @aliquam and then click Submit.";
        assert_eq!(
            group(all, false),
            Some(vec![
                css("#post0 .like"),
                css("#post3 .like"),
                css("#post4 .like")
            ])
        );
        // One already pressed is left as it is (pressing it again would undo it).
        assert_eq!(
            group(all, true),
            Some(vec![css("#post0 .like"), css("#post4 .like")])
        );
        // Her pressed Like is not clicked again before the others (it would be undone).
        let pressed = feed(true);
        let proposals = DefaultPolicy::default().propose(&pressed, &task(all, &[]));
        let prior = |i: usize| {
            let target = target_of(&pressed.elements[i]);
            proposals
                .candidates
                .iter()
                .find(|c| matches!(&c.action, Action::Click { target: t } if *t == target))
                .map(|c| c.prior)
                .expect("a click on every control")
        };
        assert!(prior(3) < prior(4) && prior(3) < prior(1), "{proposals:?}");
        // Without "all" the goal may mean one of them: they are clicked one at a time.
        let one = "Click the \"Like\" button on a post by @aliquam.";
        assert_eq!(group(one, false), None);
        // Where the goal gives their number, that many of hers: the first ones not pressed,
        // less those pressed already.
        let two = "Click the \"Like\" button on 2 posts by @aliquam and then click Submit.";
        assert_eq!(
            group(two, false),
            Some(vec![css("#post0 .like"), css("#post3 .like")])
        );
        let three = "Click the \"Like\" button on 3 posts by @aliquam and then click Submit.";
        assert_eq!(
            group(three, true),
            Some(vec![css("#post0 .like"), css("#post4 .like")])
        );
        // One left to press is a click.
        assert_eq!(group(two, true), None);
        // Progress counts to the number: two of three pressed is the whole of "2 posts", and
        // a third pressed is one too many.
        let reading = GoalReading::of(two);
        let mut feed = feed(true);
        let share = |feed: &Observation| goal_progress(feed, &reading, two).choices;
        assert_eq!(share(&feed), Some(0.5));
        feed.elements[0].checked = true;
        assert_eq!(share(&feed), Some(1.0));
        feed.elements[4].checked = true;
        assert_eq!(share(&feed), Some(0.75));
        assert_eq!(item_count(&padded_words(three)), Some(3));
        assert_eq!(item_count(&padded_words("Like two posts by @et")), Some(2));
        assert_eq!(item_count(&padded_words(all)), None);
    }

    #[test]
    fn all_the_shapes_the_goal_names_are_selected_in_one_action() {
        let tile = |n: usize, colour: &str, selected: bool| {
            let mut e = element("clickable", colour);
            e.text = String::new();
            e.locators = vec![Locator::Css(format!("#area > span:nth-of-type({n})"))];
            e.checked = selected;
            e
        };
        let tiles = |selected: bool| {
            page(vec![
                tile(1, "blue", false),
                tile(2, "red", false),
                tile(3, "green", false),
                tile(4, "red", selected),
                tile(5, "red", false),
                element("button", "Submit"),
            ])
        };
        let goal = "Select all the shades of red and press Submit.";
        let proposals = |selected: bool| {
            DefaultPolicy::default()
                .propose(&tiles(selected), &task(goal, &[]))
                .candidates
        };
        let group = |selected: bool| {
            proposals(selected)
                .into_iter()
                .find_map(|c| match c.action {
                    Action::Check { targets } => Some(
                        targets
                            .iter()
                            .map(|t| t.locators[0].clone())
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
        };
        let css = |n: usize| Locator::Css(format!("#area > span:nth-of-type({n})"));
        assert_eq!(group(false), Some(vec![css(2), css(4), css(5)]));
        assert_eq!(group(true), Some(vec![css(2), css(5)]));
        // A selected one is not clicked again before the rest (it would be unselected).
        let selected = proposals(true);
        let prior = |n: usize| {
            selected
                .iter()
                .find(|c| {
                    matches!(&c.action, Action::Click { target } if target.locators[0] == css(n))
                })
                .map(|c| c.prior)
                .expect("a click on every tile")
        };
        assert!(prior(4) < prior(2), "{selected:?}");
    }

    #[test]
    fn a_field_the_form_does_not_send_takes_only_a_value_that_fits_it() {
        // Django's "Add group": a "Name" the goal's value fits, and the permission list's two
        // filter boxes, which have no name and are not sent. Before, the fill plans typed the
        // goal's value into them too (one value for three fields, reused), or its spare words
        // ("new", "named").
        let goal = "log in and add a new group named \"editors\"";
        let form = FormContext {
            name: "group_form".into(),
            submit_name: Some("Save".into()),
            posts: true,
            selector: "#group_form".into(),
            implicit: false,
        };
        let filter = |name: &str, unsent: bool| {
            let mut field = one_line_field(name, &form);
            field.locators = vec![Locator::Css(format!("#{}", name.replace(' ', "-")))];
            field.unsent = unsent;
            field
        };
        let mut save = element("button", "Save");
        save.tag = "input".into();
        save.form = Some(form.clone());
        let fields = |unsent: bool| {
            page(vec![
                filter("Name:", false),
                filter("Type into this box to filter available permissions", unsent),
                filter("Type into this box to filter chosen permissions", unsent),
                save.clone(),
            ])
        };
        let sent = form_fills(&fields(false), goal);
        assert!(
            sent.iter().any(|l| l.contains("filter available")),
            "sent fields take a value: {sent:#?}"
        );
        let fills = form_fills(&fields(true), goal);
        assert!(!fills.is_empty(), "a fill of Name");
        for fill in &fills {
            assert!(!fill.contains("filter"), "{fills:#?}");
        }
        assert!(
            fills.iter().any(|l| l.contains("\"Name:\"=\"editors\"")),
            "{fills:#?}"
        );

        // And they are no part of how well the form is filled: the fill of "Name" fits as
        // well as in a form without them (before, a third as well: one field of three).
        let fit = |observation: &Observation| {
            DefaultPolicy::default()
                .propose(observation, &task(goal, &[]))
                .candidates
                .iter()
                .find(|c| {
                    c.action
                        .label()
                        .starts_with("fill \"Name:\"=\"editors\" and")
                })
                .and_then(|c| {
                    c.why
                        .0
                        .iter()
                        .find(|(s, _)| *s == "values_fit")
                        .map(|w| w.1)
                })
                .expect("a fill of Name alone, with its fit")
        };
        let alone = page(vec![filter("Name:", false), save.clone()]);
        assert!(fit(&fields(true)) > 0.0);
        assert!(
            (fit(&fields(true)) - fit(&alone)).abs() < 1e-9,
            "{} against {}",
            fit(&fields(true)),
            fit(&alone)
        );
    }

    #[test]
    fn a_field_no_value_fits_takes_the_goals_spare_words() {
        let goal = "Search for paranoid movies directed by Witt from year 2016.";
        let form = FormContext {
            name: "movies".into(),
            submit_name: Some("Search".into()),
            posts: false,
            selector: "#area".into(),
            implicit: true,
        };
        let field = |name: &str| {
            let mut e = element("textbox", name);
            e.text = String::new();
            e.tag = "input".into();
            e.input_type = "text".into();
            e.locators = vec![Locator::Css(format!("#{}", name.replace(' ', "-")))];
            e.form = Some(form.clone());
            e
        };
        let mut search = element("button", "Search");
        search.form = Some(form.clone());

        // Names that fit neither the year nor the genre ("Released Date", "Movie Genre"): the
        // goal's number, which no name fits, is tried in each of them, first where a number
        // is asked for; before, those fields took spare words only and "2016" was left out.
        let unfitting = page(vec![
            field("Movie Genre"),
            field("Director Name"),
            field("Released Date"),
            search.clone(),
        ]);
        let proposals = DefaultPolicy::default().propose(&unfitting, &task(goal, &[]));
        let first = proposals
            .candidates
            .iter()
            .filter(|c| matches!(c.action, Action::FillForm { .. }))
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .map(|c| c.action.label())
            .unwrap_or_default();
        for pair in [
            "\"Movie Genre\"=\"paranoid\"",
            "\"Released Date\"=\"2016\"",
            "\"Director Name\"=\"Witt\"",
        ] {
            assert!(first.contains(pair), "{first}");
        }

        let movies = page(vec![
            field("Genre"),
            field("Year"),
            field("Director Name"),
            search,
        ]);
        let fills = form_fills(&movies, goal);
        let wanted = fills.iter().find(|l| {
            l.contains("\"Genre\"=\"paranoid\"")
                && l.contains("\"Year\"=\"2016\"")
                && l.contains("\"Director Name\"=\"Witt\"")
        });
        assert!(wanted.is_some(), "{fills:#?}");
        assert!(
            !fills
                .iter()
                .any(|l| l.contains("=\"directed\"") || l.contains("=\"Search\"")),
            "words the page names are no spare words: {fills:#?}"
        );

        // Unnamed fields (a copy's target beside its sources) take no spare word.
        let copy = "Copy the text from the 2nd text area below and paste it into the text input.";
        let mut fields = vec![field(""), field(""), field("")];
        for (i, f) in fields.iter_mut().enumerate() {
            f.name = String::new();
            f.nearby_text = "text".into();
            f.locators = vec![Locator::Css(format!("#f{i}"))];
        }
        let mut copying = page(fields);
        copying.values = vec![
            PageValue {
                changed: false,
                label: String::new(),
                value: "Sapien ut ultricies".into(),
                kind: PageValueKind::Field,
            },
            PageValue {
                changed: false,
                label: String::new(),
                value: "Sit mi scelerisque".into(),
                kind: PageValueKind::Field,
            },
        ];
        let fills = form_fills(&copying, copy);
        assert!(!fills.is_empty());
        let spare_word = |l: &String| {
            ["Copy", "paste", "area", "input"]
                .iter()
                .any(|w| l.contains(&format!("=\"{w}\"")))
        };
        assert!(!fills.iter().any(spare_word), "{fills:#?}");
    }

    #[test]
    fn numbers_marked_by_their_parity_raise_the_pages_value() {
        let row = |number: i64, marked: Option<&str>| {
            ["Odd", "Even"].map(|name| {
                let mut e = element("button", name);
                e.record = format!("Odd {number} Even");
                e.locators = vec![Locator::Css(format!("#n{number} .{name}"))];
                e.checked = marked == Some(name);
                e
            })
        };
        let board = |marks: [Option<&str>; 3]| {
            let mut elements: Vec<Element> = [3, 8, -5]
                .iter()
                .zip(marks)
                .flat_map(|(&n, m)| row(n, m))
                .collect();
            elements.push(element("button", "Submit"));
            page(elements)
        };
        let goal = "Mark the numbers below as odd or even and press submit when done.";
        let policy = DefaultPolicy::default();
        let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
        let none = board([None, None, None]);
        let one = board([Some("Odd"), None, None]);
        let two = board([Some("Odd"), Some("Even"), None]);
        let wrong = board([Some("Even"), Some("Even"), None]);
        assert!(value(&one) > value(&none));
        assert!(value(&two) > value(&one));
        assert!(value(&wrong) < value(&two));
        // And the fitting control first.
        let proposals = policy.propose(&none, &task(goal, &[]));
        let prior = |css: &str| {
            proposals
                .candidates
                .iter()
                .find(|c| {
                    matches!(&c.action, Action::Click { target }
                        if target.locators == vec![Locator::Css(css.into())])
                })
                .map(|c| c.prior)
                .expect("a click")
        };
        assert!(prior("#n3 .Odd") > prior("#n3 .Even"));
        assert!(prior("#n8 .Even") > prior("#n8 .Odd"));
    }

    /// A form of one text field, named `name`, submitted by "Submit".
    fn one_field_form(name: &str) -> Element {
        let mut field = element("textbox", "");
        field.form = Some(FormContext {
            name: name.into(),
            submit_name: Some("Submit".into()),
            posts: false,
            selector: format!("#{name}"),
            implicit: false,
        });
        field
    }

    #[test]
    fn the_answer_to_the_pages_sum_is_a_value_to_type() {
        let mut quiz = page(vec![one_field_form("answer")]);
        quiz.text_excerpt = "Solve the math problem. 7 x 6 = Submit".into();
        let labels = form_fills(&quiz, "Solve the math problem and type your answer.");
        assert!(labels.iter().any(|l| l.contains("\"42\"")), "{labels:?}");
    }

    #[test]
    fn the_number_of_things_the_goal_asks_for_is_counted_on_the_page() {
        let count = |label: &str, value: &str| PageValue {
            changed: false,
            label: label.into(),
            value: value.into(),
            kind: PageValueKind::Count,
        };
        let mut blocks = page(vec![one_field_form("math")]);
        blocks.values = vec![
            count("visual", "2"),
            count("addition", "8"),
            count("block", "8"),
        ];
        let goal = "Type the total number of blocks into the textbox and press Submit.";
        let labels = form_fills(&blocks, goal);
        assert!(labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
        assert!(!labels.iter().any(|l| l.contains("\"2\"")), "{labels:?}");
        // A goal that asks no number of anything types no count.
        let labels = form_fills(&blocks, "Type your name into the textbox and press Submit.");
        assert!(!labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
        // The reading turned off (its held-out measurement): no count either.
        let labels = form_fills_weighted(&blocks, goal, "counted_kind=0");
        assert!(!labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
        assert_eq!(
            counted_kind("How many circles are red?").as_deref(),
            Some("circle")
        );
    }

    #[test]
    fn the_answer_to_the_pages_arithmetic_is_a_value_unless_the_reading_is_off() {
        let mut sum = page(vec![one_field_form("math")]);
        sum.text_excerpt =
            "Solve the math problem and type your answer into the textbox. 3 + 5 =".into();
        let goal =
            "Solve the math problem and type your answer into the textbox. Press submit when done.";
        let labels = form_fills(&sum, goal);
        assert!(labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
        let labels = form_fills_weighted(&sum, goal, "page_arithmetic=0.5");
        assert!(labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
        let labels = form_fills_weighted(&sum, goal, "page_arithmetic=0");
        assert!(!labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
    }

    #[test]
    fn a_small_range_in_the_goal_is_tried_number_by_number() {
        let values = |goal: &str| form_fills(&page(vec![one_field_form("guess")]), goal);
        let small = values("Guess the number between 0-9 and press Submit.");
        for n in 0..=9 {
            assert!(
                small.iter().any(|l| l.contains(&format!("\"{n}\""))),
                "{n}: {small:?}"
            );
        }
        // A range wider than MAX_RANGE_VALUES is not spelled out.
        let wide = values("Guess the number between 0-999 and press Submit.");
        assert!(!wide.iter().any(|l| l.contains("\"500\"")), "{wide:?}");
    }
    #[test]
    fn the_goals_numbers_are_what_its_sliders_are_moved_to() {
        assert_eq!(
            goal_numbers("Select -97 with the slider and hit Submit."),
            ["-97"]
        );
        assert_eq!(
            goal_numbers("Set the sliders to the combination [3,18,3] and submit."),
            ["3", "18", "3"]
        );
        // Ordinals, dates, times and words with digits are not numbers to move to.
        assert!(
            goal_numbers("Click the 2nd checkbox on 11/25/2016 at 10:30 for x3 then rate-5 2.5")
                .iter()
                .eq(["2.5"].iter())
        );
        let mut slider = element("slider", "");
        slider.locators = vec![Locator::Css("#s1 > span".into())];
        let mut second = element("slider", "");
        second.locators = vec![Locator::Css("#s2 > span".into())];
        let slides = |elements: Vec<Element>, goal: &str| -> Vec<(String, f64)> {
            DefaultPolicy::default()
                .propose(&page(elements), &task(goal, &[]))
                .candidates
                .into_iter()
                .filter_map(|c| match c.action {
                    Action::Slide { moves } => {
                        let moves: Vec<String> = moves
                            .iter()
                            .map(|m| format!("{} {}", m.target.locators[0], m.value))
                            .collect();
                        Some((moves.join(", "), c.prior))
                    }
                    _ => None,
                })
                .collect()
        };
        let submit = element("button", "Submit");
        // As many numbers as sliders: each its own, in order, in one action.
        let ordered = slides(
            vec![slider.clone(), second.clone(), submit.clone()],
            "Set the sliders to the combination [7,7] and submit.",
        );
        let labels: Vec<&str> = ordered.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["css=#s1 > span 7, css=#s2 > span 7"],
            "{ordered:?}"
        );
        // Otherwise every slider to every number, once each.
        let every = slides(
            vec![slider.clone(), submit.clone()],
            "Move the slider to 4, or to 9, or 4 again.",
        );
        assert_eq!(every.len(), 2, "{every:?}");
        // A slide the goal asks for outranks the button; numbers in a goal that speaks of
        // no slider are a weak hint only.
        let against_the_button = |goal: &str| {
            let candidates = DefaultPolicy::default()
                .propose(
                    &page(vec![slider.clone(), submit.clone()]),
                    &task(goal, &[]),
                )
                .candidates;
            let prior = |slide: bool| {
                candidates
                    .iter()
                    .find(|c| matches!(c.action, Action::Slide { .. }) == slide)
                    .map_or(0.0, |c| c.prior)
            };
            prior(true) / prior(false)
        };
        let asked = against_the_button("Select 48 with the slider.");
        let other = against_the_button("Order 48 apples.");
        assert!(asked > 1.0 && asked > 3.0 * other, "{asked} vs {other}");
        // No numbers, no slides; no slider, no slides.
        assert!(slides(vec![slider.clone(), submit.clone()], "Use the slider.").is_empty());
        assert!(slides(vec![submit], "Select 48 with the slider.").is_empty());
    }
}
