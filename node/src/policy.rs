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
//! are made. Forms are proposed whole ([`Action::FillForm`]): each field gets the task input
//! (or quoted string from the goal) whose name best matches the field's label, placeholder or
//! type, and the form is submitted. Links to origins the task does not allow are
//! never proposed, whatever the page says: page text is untrusted input.
//!
//! A control's prior is the larger of the model's similarity (cosine 0.15 → 0, 0.6 → 1:
//! `MODEL_FLOOR`, `MODEL_SURE`) and the square of its n-gram affinity (weak n-gram matches are
//! noise; exact names still win). Values for fields come from the task's inputs, the goal's
//! reading (`crate::goal`) and the page's own values whose label the goal names. Controls that
//! leave the task's course get a fraction of their prior (`keeps_course`: theme and language
//! switches, links out of the start URL's folder, reloads, skip links); one that would end the
//! session is refused unless the goal asks ([`would_end_session`], [`goal_ends_session`]).
//! Credentials go only into fields made for them (`forager_protocol::credential`).
//!
//! Where each rule lives: `candidates.rs` builds every kind of candidate from one reading of the
//! page; `signals.rs` names and combines the signals; `families.rs` holds a benchmark family's
//! rules; `fill.rs` gives values and their fields; `precise.rs` fills a form with only what the
//! goal names; `progress.rs` measures how far a page is; `plan.rs` scores a page against the
//! goal's plan; `terminal.rs` reads a terminal; `field_kind.rs` tells kinds of field apart. Each
//! rule's detail is in its item's doc.
//!
//! Invariant: no rule inside a candidate builder changes an affinity by itself. A new reading of
//! the page is a signal in `signals.rs`, with its name, what it reads, a unit test and a line in
//! `docs/signals.md` (a test checks that the docs list every signal).

mod candidates;
mod families;
mod field_kind;
mod fill;
mod plan;
mod precise;
mod progress;
pub mod signals;
mod terminal;

use crate::embed::{SparseVector, action_key, stable_hash, text_features};
use crate::environment::Candidate;
use crate::goal::{GoalReading, Quoted, words_of};
use crate::model::SentenceModel;
use forager_protocol::action::ActionShape;
use forager_protocol::action::FieldValue;
use forager_protocol::credential::Credential;
use forager_protocol::observation::{Element, Observation, PageValueKind, ScrollPosition};
use forager_protocol::risk::{self, RiskContext};
use forager_protocol::{Action, FillValue, RiskClass, ScrollEdge, SliderMove, Target};
use progress::{
    Calendar, GoalProgress, date_progress, goal_progress, holds_already, item_count, label_key,
    named_shape, position_bonus, quoted_item_toggles, shows_word,
};
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
mod tests;
