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
    /// The state's identity.
    pub fingerprint: Fingerprint,
}
