//! What an agent sees of a page: elements it can act on, page metadata, and the fingerprint.

use crate::action::Locator;
use crate::fingerprint::Fingerprint;
use serde::{Deserialize, Serialize};

/// The form an element belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormContext {
    /// The form's name or id, if any.
    pub name: String,
    /// The accessible name of the form's submit control, if it has one.
    pub submit_name: Option<String>,
    /// Whether the form posts (writes) rather than gets.
    pub posts: bool,
    /// A CSS selector of the form element, grouping its fields.
    pub selector: String,
    /// No `<form>` element: the fields and button share a container, as in pages that
    /// handle their inputs in script. Its fields can be filled one at a time as well.
    #[serde(default)]
    pub implicit: bool,
}

/// An option of a select element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectOption {
    /// The option's value.
    pub value: String,
    /// Its visible label.
    pub label: String,
}

/// An element the agent can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Element {
    /// ARIA role, or the closest equivalent for non-semantic clickables (`clickable`).
    pub role: String,
    /// Accessible name; derived from label, placeholder or nearby text when the tree has none.
    pub name: String,
    /// Visible text, trimmed and bounded.
    pub text: String,
    /// Text near the element (its label, heading, or preceding text), for the policy.
    pub nearby_text: String,
    /// The text of the repeated item the element sits in (a list row, a post, a card, a table
    /// row: an ancestor with siblings of its own kind), bounded; empty when there is none. What
    /// tells one post's "Like" from another's.
    #[serde(default)]
    pub record: String,
    /// The header of the table column whose cell the element sits in (`country_code`), bounded;
    /// empty outside a table with headers. What a row's control stands for ("that country").
    #[serde(default)]
    pub column: String,
    /// The HTML tag.
    pub tag: String,
    /// For inputs, the `type` attribute.
    pub input_type: String,
    /// For links, the resolved `href`.
    pub href: Option<String>,
    /// Ranked locators, CSS first.
    pub locators: Vec<Locator>,
    /// The enclosing form, if any.
    pub form: Option<FormContext>,
    /// Whether the field is required.
    pub required: bool,
    /// Whether the control is disabled.
    pub disabled: bool,
    /// For selects, the options.
    pub options: Vec<SelectOption>,
    /// Whether it is checked (a checkbox, a radio button, `aria-checked`, or a class that says
    /// so: `selected`, `active`, `pressed`) or, for a select, whether an option other than the
    /// first is chosen.
    #[serde(default)]
    pub checked: bool,
    /// Whether it says it opens a menu or popup (`aria-haspopup`, or a list item beside a
    /// hidden nested list): pointing at it may show what a click would choose past.
    #[serde(default)]
    pub popup: bool,
    /// A field that takes no typing (`readonly`): its value comes from a widget it opens (a
    /// date picker's calendar), or not at all.
    #[serde(default)]
    pub readonly: bool,
    /// What activating it sends (a link's `href`, the `<form>` a submit control or Enter in
    /// a field submits), as the page declares it; `Unknown` for script handlers.
    #[serde(default)]
    pub sends: crate::action::Sends,
    /// Its `autocomplete` attribute, lower case (`current-password`, `one-time-code`,
    /// `username`, …): what a field is made for, which decides where a credential may go.
    #[serde(default)]
    pub autocomplete: String,
    /// A field of a `<form>` that the form does not send: it has no `name` while other
    /// fields of the form have one (a widget's own box, such as a list's filter). What is
    /// typed there never reaches the server.
    #[serde(default)]
    pub unsent: bool,
}

/// A value the page shows, which a goal may ask to be typed elsewhere ("Enter the value of
/// Gender", "copy the text in the textarea"): page text, as untrusted as any other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageValue {
    /// What names it: a table row's first cell, a term, a field's name ("" for a paragraph).
    pub label: String,
    /// The value itself, bounded.
    pub value: String,
    /// Where it comes from.
    pub kind: PageValueKind,
    /// A field or list whose value is not the one the page served (typed or chosen since,
    /// not sent yet).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
}

/// Where a [`PageValue`] was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageValueKind {
    /// A table row of two cells, or a term and its definition.
    Pair,
    /// What a field (not a password field) holds.
    Field,
    /// A paragraph's text.
    Paragraph,
    /// How many shown elements carry a word in their class (`label`: the word; `value`: the
    /// number): what a goal that asks for a number of things counts.
    Count,
    /// The option a list (a single-choice `<select>`) shows chosen: `label` is the list's
    /// name, `value` the option's label.
    Choice,
}

/// A table of records the page shows: its header and the rows under it, each cell's text
/// (bounded). What tells whether every row listed satisfies a goal's conditions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// The column headers.
    pub headers: Vec<String>,
    /// The rows, each a cell per header.
    pub rows: Vec<Vec<String>>,
}

/// A box of text that scrolls (a text area, a scrolling panel of text), which a scroll action
/// can move to its top or bottom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scrollable {
    /// Its accessible name, or words of its class or id, or the text before it.
    pub name: String,
    /// Its role (`textbox`, `region`).
    pub role: String,
    /// Ranked locators, CSS first.
    pub locators: Vec<Locator>,
    /// Where it stands.
    pub at: ScrollPosition,
}

/// Where a scrolling box stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScrollPosition {
    /// At its start.
    Top,
    /// Between its ends.
    Middle,
    /// At its end.
    Bottom,
}

/// A terminal in the page: a field the page keeps out of sight (transparent, or a pixel or
/// less) that takes the keys typed at it, and a transcript beside it that shows what they did
/// (a web shell; xterm.js's helper text area). Commands are typed into the field with Enter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Terminal {
    /// The field's accessible name, or the transcript's first line.
    pub name: String,
    /// The field's locators, CSS first.
    pub locators: Vec<Locator>,
    /// The transcript's last lines (bounded), a cursor's block characters removed; its last
    /// line is the prompt waiting for a command.
    pub transcript: Vec<String>,
}

/// A dialog the page opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The dialog's message.
    pub message: String,
}

/// One look at a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The page URL.
    pub url: String,
    /// The document title.
    pub title: String,
    /// HTTP status of the main document, when known.
    pub http_status: Option<u16>,
    /// Interactive elements, in document order.
    pub elements: Vec<Element>,
    /// A bounded excerpt of the visible text.
    pub text_excerpt: String,
    /// Console errors since the last action.
    pub console_errors: Vec<String>,
    /// Dialogs opened since the last action.
    pub dialogs: Vec<Dialog>,
    /// The accessibility snapshot, one `role "name" state…` line per element, as hashed into
    /// the fingerprint.
    pub snapshot: Vec<String>,
    /// Names of the page's forms and tools, as hashed into the fingerprint.
    pub forms: Vec<String>,
    /// Validation-shaped messages visible on the page (invalid fields, alerts saying so).
    pub validation_errors: Vec<String>,
    /// Values the page shows that a fill could use (bounded).
    #[serde(default)]
    pub values: Vec<PageValue>,
    /// Tables of records (bounded).
    #[serde(default)]
    pub tables: Vec<Table>,
    /// Boxes of text that scroll (bounded).
    #[serde(default)]
    pub scrollables: Vec<Scrollable>,
    /// Terminals that take typed commands (bounded).
    #[serde(default)]
    pub terminals: Vec<Terminal>,
    /// The state's identity.
    pub fingerprint: Fingerprint,
}
