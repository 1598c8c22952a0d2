//! The seven risk classes and the classifier that assigns one to a planned action.
//!
//! An action above the task's risk ceiling is never executed: the search records it as
//! `approval_required`. The classifier therefore errs upward: a control whose purpose it
//! cannot tell, inside a form that posts, counts as an external submission (class 4).
//!
//! Classification reads first what the action *sends*, as the page declares it
//! ([`Sends`]), then the words:
//!
//! - Submitting a `<form method=get>` (its submit control, or Enter in one of its fields) is a
//!   read, whatever the button says ("Apply", "Go", "Submit", "Filter"): it builds a URL.
//! - A link to an http(s) URL is a `GET` navigation: a read, unless its URL names a handler
//!   that changes state (a whole path segment, a query key, or the value of an `action`-like
//!   key: `/group/3/delete/`, `?@action=logout`, `?op=remove`; not `lang_delete.html`, a page
//!   about deleting): then the verb it names decides
//!   (delete, remove, destroy, erase, purge: destructive; log out: authenticated read;
//!   unsubscribe, deactivate: account mutation). A link's *name* raises it only for logging
//!   out and for putting something into a cart: "Remove this filter", "Clear", "Buy now",
//!   "Delete this post" linking to a page of the site are navigations to pages whose own
//!   buttons act. A query's other values (a search for "remove stains") say nothing. A link
//!   the page's script handles (`href="#"`, `javascript:`) is read the same way, by its words
//!   for the session and a cart only: the network gate holds what its script sends.
//! - A control that sends a form by `POST`, or whose sending is not declared (a script's
//!   handler), is read by the accessible name of the control being *activated*, erring upward.
//!   A checkbox, a radio button, a field or an option only changes what a form holds, so a
//!   click on one is read by its name alone, never as the form's submission.
//!
//! For a fill, the accessible name labels the field (its purpose), not an action, so a fill
//! on its own is read-only; a fill with Enter submits the form and is classified by the form's
//! method and submit control.
//!
//! What the page declares is a claim: while an action runs, the browser refuses every request
//! other than `GET`/`HEAD`/`OPTIONS` that the action's class does not allow, and every page
//! load whose URL names a handler above it (`node`'s network gate), so a control that says it
//! reads and then posts, or whose script navigates to `/item/3/delete`, is caught and re-rated
//! ([`class_of_request`], [`class_of_url`]).
//!
//! [`allows_writes`] says which classes the gate lets send (2, an authenticated read, and up).

use crate::action::{Action, ActionShape, Sends};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How much harm an action can do, from 1 (read-only) to 7 (destructive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub enum RiskClass {
    /// Reading: links, search, filters, pagination.
    ReadOnly = 1,
    /// Reading behind a login; logging in or out.
    AuthenticatedRead = 2,
    /// A reversible write the user owns: a draft, a cart, a coupon, a wizard step.
    DraftWrite = 3,
    /// Sending something to others: a post, a message, an application, a form submission.
    ExternalSubmission = 4,
    /// Spending money.
    Financial = 5,
    /// Changing the account itself: password, e-mail, settings, deactivation.
    AccountMutation = 6,
    /// Destroying data.
    Destructive = 7,
}

impl RiskClass {
    /// All classes, lowest first.
    pub const ALL: [RiskClass; 7] = [
        RiskClass::ReadOnly,
        RiskClass::AuthenticatedRead,
        RiskClass::DraftWrite,
        RiskClass::ExternalSubmission,
        RiskClass::Financial,
        RiskClass::AccountMutation,
        RiskClass::Destructive,
    ];

    /// The default ceiling of a task: draft writes run autonomously, anything above needs a human.
    pub const DEFAULT_CEILING: RiskClass = RiskClass::DraftWrite;

    /// The class as its number, 1 to 7.
    pub fn level(self) -> u8 {
        self as u8
    }

    /// The class mapped to [0, 1] for the score's risk term: 1 → 0, 7 → 1.
    pub fn normalised(self) -> f64 {
        f64::from(self.level() - 1) / 6.0
    }
}

impl fmt::Display for RiskClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            RiskClass::ReadOnly => "read-only",
            RiskClass::AuthenticatedRead => "authenticated read",
            RiskClass::DraftWrite => "draft write",
            RiskClass::ExternalSubmission => "external submission",
            RiskClass::Financial => "financial",
            RiskClass::AccountMutation => "account mutation",
            RiskClass::Destructive => "destructive",
        };
        write!(f, "{} ({name})", self.level())
    }
}

/// A number outside 1..=7 given as a risk class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("risk class must be 1 to 7, got {0}")]
pub struct InvalidRiskClass(pub u8);

impl TryFrom<u8> for RiskClass {
    type Error = InvalidRiskClass;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        RiskClass::ALL
            .get(usize::from(value).wrapping_sub(1))
            .copied()
            .ok_or(InvalidRiskClass(value))
    }
}

impl From<RiskClass> for u8 {
    fn from(class: RiskClass) -> u8 {
        class.level()
    }
}

/// What the classifier knows about the action's target.
#[derive(Debug, Clone, Copy, Default)]
pub struct RiskContext<'a> {
    /// The activated control's accessible name (for a click), or empty.
    pub accessible_name: &'a str,
    /// ARIA role of the target (`link`, `button`, `textbox`, …), or empty.
    pub role: &'a str,
    /// For a fill: the `type` attribute of the input (`password`, `email`, …).
    pub input_type: &'a str,
    /// The accessible name of the submit control of the enclosing form, if any.
    pub form_submit_name: Option<&'a str>,
    /// Whether the enclosing form (if any) sends a POST (a write) rather than a GET.
    pub form_posts: bool,
    /// The text of the dialog being accepted, for [`ActionShape::AcceptDialog`].
    pub dialog_text: &'a str,
    /// What activating the target sends, as its page declares it ([`Sends`]); `None` when
    /// not known (a page not read). Read before the words: see [`classify`].
    pub sends: Option<&'a Sends>,
}

/// Phrases matched at word boundaries anywhere in a name, most specific first; the first
/// match decides. Specific phrases come before the verbs they contain ("remove from cart"
/// is a draft write even though "remove" alone is destructive).
const PHRASES: &[(&str, RiskClass)] = &[
    // Draft writes that contain scarier words.
    ("remove from cart", RiskClass::DraftWrite),
    ("remove from basket", RiskClass::DraftWrite),
    ("remove from wishlist", RiskClass::DraftWrite),
    ("remove item", RiskClass::DraftWrite),
    ("save as draft", RiskClass::DraftWrite),
    ("save draft", RiskClass::DraftWrite),
    ("apply code", RiskClass::DraftWrite),
    ("apply coupon", RiskClass::DraftWrite),
    ("apply promo", RiskClass::DraftWrite),
    ("apply discount", RiskClass::DraftWrite),
    ("apply filter", RiskClass::ReadOnly),
    ("apply filters", RiskClass::ReadOnly),
    ("add to cart", RiskClass::DraftWrite),
    ("add to basket", RiskClass::DraftWrite),
    ("add to bag", RiskClass::DraftWrite),
    ("add to wishlist", RiskClass::DraftWrite),
    ("add to favorites", RiskClass::DraftWrite),
    ("update cart", RiskClass::DraftWrite),
    ("checkout", RiskClass::DraftWrite),
    ("check out", RiskClass::DraftWrite),
    // Destructive.
    ("delete", RiskClass::Destructive),
    ("destroy", RiskClass::Destructive),
    ("erase", RiskClass::Destructive),
    ("wipe", RiskClass::Destructive),
    ("purge", RiskClass::Destructive),
    ("empty trash", RiskClass::Destructive),
    ("clear all data", RiskClass::Destructive),
    ("remove", RiskClass::Destructive),
    ("drop", RiskClass::Destructive),
    ("terminate", RiskClass::Destructive),
    // Account mutation.
    ("close account", RiskClass::AccountMutation),
    ("deactivate", RiskClass::AccountMutation),
    ("change password", RiskClass::AccountMutation),
    ("reset password", RiskClass::AccountMutation),
    ("update password", RiskClass::AccountMutation),
    ("confirm password", RiskClass::AccountMutation),
    ("change email", RiskClass::AccountMutation),
    ("update email", RiskClass::AccountMutation),
    ("update profile", RiskClass::AccountMutation),
    ("save settings", RiskClass::AccountMutation),
    ("update settings", RiskClass::AccountMutation),
    ("disable two factor", RiskClass::AccountMutation),
    ("disable 2fa", RiskClass::AccountMutation),
    ("unsubscribe", RiskClass::AccountMutation),
    ("cancel subscription", RiskClass::AccountMutation),
    // Financial.
    ("place order", RiskClass::Financial),
    ("buy", RiskClass::Financial),
    ("purchase", RiskClass::Financial),
    ("pay", RiskClass::Financial),
    ("order now", RiskClass::Financial),
    ("complete order", RiskClass::Financial),
    ("confirm order", RiskClass::Financial),
    ("confirm purchase", RiskClass::Financial),
    ("confirm payment", RiskClass::Financial),
    ("donate", RiskClass::Financial),
    ("transfer", RiskClass::Financial),
    ("withdraw", RiskClass::Financial),
    ("send money", RiskClass::Financial),
    ("subscribe", RiskClass::Financial),
    ("book now", RiskClass::Financial),
    ("bid", RiskClass::Financial),
    // External submission.
    ("submit", RiskClass::ExternalSubmission),
    ("send", RiskClass::ExternalSubmission),
    ("post", RiskClass::ExternalSubmission),
    ("publish", RiskClass::ExternalSubmission),
    ("share", RiskClass::ExternalSubmission),
    ("reply", RiskClass::ExternalSubmission),
    ("comment", RiskClass::ExternalSubmission),
    ("invite", RiskClass::ExternalSubmission),
    ("sign up", RiskClass::ExternalSubmission),
    ("register", RiskClass::ExternalSubmission),
    ("request", RiskClass::ExternalSubmission),
    ("apply", RiskClass::ExternalSubmission),
    ("confirm", RiskClass::ExternalSubmission),
    ("upload", RiskClass::ExternalSubmission),
    ("vote", RiskClass::ExternalSubmission),
    ("report", RiskClass::ExternalSubmission),
    // Draft writes.
    ("save", RiskClass::DraftWrite),
    ("create", RiskClass::DraftWrite),
    ("edit", RiskClass::DraftWrite),
    ("update", RiskClass::DraftWrite),
    ("add", RiskClass::DraftWrite),
    ("draft", RiskClass::DraftWrite),
    // Session.
    ("log in", RiskClass::AuthenticatedRead),
    ("login", RiskClass::AuthenticatedRead),
    ("sign in", RiskClass::AuthenticatedRead),
    ("log out", RiskClass::AuthenticatedRead),
    ("logout", RiskClass::AuthenticatedRead),
    ("sign out", RiskClass::AuthenticatedRead),
];

/// Words that move a wizard along: a draft write inside a form that posts, a read elsewhere
/// (pagination).
const STEP_WORDS: &[&str] = &["next", "continue", "proceed", "previous", "back"];

/// Lower-cases a name and reduces it to words separated by single spaces.
pub(crate) fn normalise_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut pending_space = false;
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(c);
        } else {
            pending_space = true;
        }
    }
    out
}

/// Whether `phrase` occurs in `words` (both normalised) at word boundaries.
pub(crate) fn contains_phrase(words: &str, phrase: &str) -> bool {
    let mut start = 0;
    while let Some(pos) = words[start..].find(phrase) {
        let at = start + pos;
        let end = at + phrase.len();
        let before_ok = at == 0 || words.as_bytes()[at - 1] == b' ';
        let after_ok = end == words.len() || words.as_bytes()[end] == b' ';
        if before_ok && after_ok {
            return true;
        }
        start = at + 1;
        while !words.is_char_boundary(start) {
            start += 1;
        }
    }
    false
}

/// The class a control's name implies, if any phrase matches.
fn class_of_name(name: &str) -> Option<RiskClass> {
    let words = normalise_name(name);
    PHRASES
        .iter()
        .find(|(phrase, _)| contains_phrase(&words, phrase))
        .map(|&(_, class)| class)
}

/// The class a link's name implies: a link is a read unless its name *starts* with a verb
/// ("Delete post", "Buy now"), so that "Annual report" stays a read.
fn class_of_link_name(name: &str) -> Option<RiskClass> {
    let words = normalise_name(name);
    PHRASES
        .iter()
        .find(|(phrase, _)| {
            words.starts_with(phrase)
                && words
                    .as_bytes()
                    .get(phrase.len())
                    .is_none_or(|&b| b == b' ')
        })
        .map(|&(_, class)| class)
}

/// A link named by a generic editing verb alone ("Add", "Edit", "Create group", "New"): it
/// opens the form whose own button writes.
fn opens_a_form(name: &str) -> bool {
    const VERBS: &[&str] = &["add", "edit", "create", "update", "draft"];
    let words = normalise_name(name);
    let mut split = words.split(' ');
    let first = split.next().unwrap_or("");
    VERBS.contains(&first) && split.next() != Some("to")
}

fn is_step_control(name: &str) -> bool {
    let words = normalise_name(name);
    STEP_WORDS.iter().any(|w| contains_phrase(&words, w))
}

/// The class of an action from the action alone (its shape, its target's name and role), for
/// those who did not see the page it was offered on: a replaying environment, the queen.
pub fn classify_action(action: &Action) -> RiskClass {
    classify(
        action.shape(),
        &RiskContext {
            accessible_name: action.target().map_or("", |t| t.name.as_str()),
            role: action.target().map_or("", |t| t.role.as_str()),
            sends: action.target().map(|t| &t.sends),
            ..Default::default()
        },
    )
}

/// Classifies one action. See the module documentation for the rules.
pub fn classify(shape: ActionShape, context: &RiskContext<'_>) -> RiskClass {
    match shape {
        ActionShape::Navigate
        | ActionShape::Back
        | ActionShape::Select
        | ActionShape::Scroll
        | ActionShape::Hover
        | ActionShape::Done
        | ActionShape::DismissDialog => RiskClass::ReadOnly,
        ActionShape::Fill { enter: false } | ActionShape::Press { enter: false } => {
            RiskClass::ReadOnly
        }
        ActionShape::Fill { enter: true } | ActionShape::Press { enter: true } => {
            classify_form_submission(context)
        }
        ActionShape::AcceptDialog => {
            // Accepting "Are you sure you want to delete…?" is the deletion.
            class_of_name(context.dialog_text).unwrap_or(RiskClass::ReadOnly)
        }
        ActionShape::Click => match context.sends {
            Some(Sends::Get { url }) if is_link(context.role) => {
                classify_link_navigation(context.accessible_name, url)
            }
            // The submit control of a GET form (or a click in one of its fields).
            Some(Sends::Get { .. }) => RiskClass::ReadOnly,
            _ => classify_click_by_words(context),
        },
    }
}

/// Roles an `<a href>` takes: a link, and a link made a menu's item, a tab or a tree's item
/// (its `href` is what it sends, as a link's is).
fn is_link(role: &str) -> bool {
    ["link", "menuitem", "tab", "treeitem"]
        .iter()
        .any(|r| role.eq_ignore_ascii_case(r))
}

/// Roles whose click changes only what a form holds (or where focus is), never sends it.
fn only_holds_a_value(role: &str) -> bool {
    const ROLES: &[&str] = &[
        "checkbox",
        "radio",
        "switch",
        "option",
        "textbox",
        "searchbox",
        "combobox",
        "spinbutton",
        "slider",
        "menuitemcheckbox",
        "menuitemradio",
    ];
    ROLES.iter().any(|r| role.eq_ignore_ascii_case(r))
}

/// Roles of fields one types into.
fn takes_text(role: &str) -> bool {
    ["textbox", "searchbox", "spinbutton", "combobox"]
        .iter()
        .any(|r| role.eq_ignore_ascii_case(r))
}

/// Verbs that, named by a URL, make its `GET` handler change state.
const URL_VERBS: &[(&str, RiskClass)] = &[
    ("delete", RiskClass::Destructive),
    ("remove", RiskClass::Destructive),
    ("destroy", RiskClass::Destructive),
    ("erase", RiskClass::Destructive),
    ("purge", RiskClass::Destructive),
    ("trash", RiskClass::Destructive),
    ("deactivate", RiskClass::AccountMutation),
    ("unsubscribe", RiskClass::AccountMutation),
    ("logout", RiskClass::AuthenticatedRead),
    ("log out", RiskClass::AuthenticatedRead),
    ("signout", RiskClass::AuthenticatedRead),
    ("sign out", RiskClass::AuthenticatedRead),
    ("logoff", RiskClass::AuthenticatedRead),
    ("log off", RiskClass::AuthenticatedRead),
];

/// Query keys whose value names what the handler does (`?action=delete`, Roundup's
/// `?@action=logout`); any other key's value is data (a search's words) and says nothing.
const ACTION_KEYS: &[&str] = &[
    "action",
    "_action",
    "@action",
    "op",
    "operation",
    "do",
    "cmd",
    "command",
    "method",
    "_method",
    "task",
    "mode",
    "verb",
];

/// The parts of a URL that can name its handler, each whole: its path's segments, its query's
/// keys, and the values of its action-like keys. A part names a verb only as a whole
/// (`/group/3/delete/`, `?delete=3`, `?action=remove`), so a page *about* deleting
/// (`lang_delete.html`, `/docs/remove-a-package`) is no handler. `None` for what does not
/// parse as an absolute URL.
fn handler_parts(url: &str) -> Option<Vec<String>> {
    let (_, rest) = url.split_once("://")?;
    let rest = rest.split('#').next().unwrap_or("");
    let (authority_and_path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = authority_and_path
        .split_once('/')
        .map_or("", |(_, path)| path);
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        parts.push(key);
        if ACTION_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k)) {
            parts.push(value);
        }
    }
    Some(
        parts
            .into_iter()
            .map(|p| normalise_name(&p.replace("%20", " ").replace('+', " ")))
            .collect(),
    )
}

/// The class of the verb a URL names for its handler, if it names one.
pub fn class_of_url(url: &str) -> Option<RiskClass> {
    let parts = handler_parts(url)?;
    URL_VERBS
        .iter()
        .find(|(verb, _)| parts.iter().any(|part| part == verb))
        .map(|&(_, class)| class)
}

/// Handler words that, in a *write's* URL or body, say it changes the account: a page about
/// them is only read (`GET /account/email` shows a form), a write to them changes who owns the
/// account.
const ACCOUNT_WRITE_WORDS: &[&str] = &[
    "email",
    "e mail",
    "password",
    "passwd",
    "credentials",
    "deactivate",
    "roles",
    "permissions",
    "apikey",
    "api key",
];

/// The class of what a write request does, as its handler and body say (beyond what its
/// method says): a verb of its URL (`/issues/2/delete`), an account word of its URL's path
/// (`POST /account/email`), or the value of an action-like field of its body
/// (`_action=delete`, `_method=DELETE`, `{"action": "remove"}`). `None` when neither names
/// one: the network gate then judges the write by the action that sent it alone.
pub fn class_of_write(url: &str, body: &str) -> Option<RiskClass> {
    let from_body = body_action_values(body);
    let mut parts = handler_parts(url).unwrap_or_default();
    parts.extend(from_body.iter().cloned());
    let by_verb = URL_VERBS
        .iter()
        .filter(|(verb, _)| parts.iter().any(|part| part == verb))
        .map(|&(_, class)| class)
        .max();
    let path_parts: Vec<String> = url::Url::parse(url)
        .map(|u| {
            u.path()
                .split('/')
                .filter(|p| !p.is_empty())
                .map(normalise_name)
                .collect()
        })
        .unwrap_or_default();
    let by_account = path_parts
        .iter()
        .chain(&from_body)
        .any(|part| ACCOUNT_WRITE_WORDS.contains(&part.as_str()))
        .then_some(RiskClass::AccountMutation);
    by_verb.max(by_account)
}

/// The values of a body's action-like fields (`ACTION_KEYS`), normalised: a form's
/// (`a=1&_action=delete`) or a JSON object's top level.
fn body_action_values(body: &str) -> Vec<String> {
    let body = body.trim();
    let is_action_key = |key: &str| ACTION_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k));
    if body.starts_with('{') {
        let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(body)
        else {
            return Vec::new();
        };
        return map
            .iter()
            .filter(|(key, _)| is_action_key(key))
            .filter_map(|(_, value)| value.as_str().map(normalise_name))
            .collect();
    }
    url::form_urlencoded::parse(body.as_bytes())
        .filter(|(key, _)| is_action_key(key))
        .map(|(_, value)| normalise_name(&value))
        .collect()
}

/// The record ids a URL's path names: segments that are a number (`/issues/3`), or a word
/// of three letters or more followed by one (Roundup's `/issue3`), digits only. Version
/// segments (`v2`) and dates are no ids.
fn record_ids(url: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Vec::new();
    };
    parsed
        .path()
        .split('/')
        .filter_map(|segment| {
            let (word, digits) = numbered(segment)?;
            let numeric = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
            let word_ok = word.is_empty()
                || (word.len() >= 3 && word.chars().all(|c| c.is_ascii_alphabetic()));
            (numeric && word_ok && digits.len() <= 12).then(|| digits.to_owned())
        })
        .collect()
}

/// A path segment split where its digits begin (`issue3` → `issue`, `3`).
fn numbered(segment: &str) -> Option<(&str, &str)> {
    let digits_at = segment.find(|c: char| c.is_ascii_digit())?;
    Some(segment.split_at(digits_at))
}

/// Whether a URL's path names a record (`/issues/4/comments`, `/issue4`).
pub fn names_a_record(url: &str) -> bool {
    !record_ids(url).is_empty()
}

/// Whether a write to `request` goes to another record than the page it was sent from names:
/// both URLs' paths name records ([`record_ids`]) and they share none (a "Save" on
/// `/issues/3` that posts to `/issues/2`). A page that names no record (a list, a form for a
/// new one) writes wherever its rows point.
/// A wizard's next step (`/apply/2` posting to `/apply/3`) is not another record: the same path
/// with its one numbered segment one higher is the form going on, not a write elsewhere.
pub fn writes_another_record(page: &str, request: &str) -> bool {
    let on_page = record_ids(page);
    let written = record_ids(request);
    !on_page.is_empty()
        && !written.is_empty()
        && !written.iter().any(|id| on_page.contains(id))
        && !is_next_step(page, request)
}

/// Whether `request`'s path is `page`'s with one numbered segment counted up by one
/// (`/apply/2` → `/apply/3`, `/signup/step1` → `/signup/step2`).
fn is_next_step(page: &str, request: &str) -> bool {
    let (Ok(page), Ok(request)) = (url::Url::parse(page), url::Url::parse(request)) else {
        return false;
    };
    let page: Vec<&str> = page.path().split('/').collect();
    let request: Vec<&str> = request.path().split('/').collect();
    if page.len() != request.len() {
        return false;
    }
    let mut differing = page.iter().zip(&request).filter(|(a, b)| a != b);
    let (Some((from, to)), None) = (differing.next(), differing.next()) else {
        return false;
    };
    let split = |segment| -> Option<(&str, u64)> {
        let (word, digits) = numbered(segment)?;
        Some((word, digits.parse().ok()?))
    };
    match (split(from), split(to)) {
        (Some((word_from, n_from)), Some((word_to, n_to))) => {
            word_from == word_to && n_from.checked_add(1) == Some(n_to)
        }
        _ => false,
    }
}

/// Words of a handler's URL that say it keeps the page's own view or presence: which items
/// are open, a menu or sidebar's state, a dismissed notice, a draft kept as it is typed, an
/// editor's lock or heartbeat, telemetry.
const VIEW_STATE_WORDS: &[&str] = &[
    "autosave",
    "autosaves",
    "draft",
    "drafts",
    "preference",
    "preferences",
    "prefs",
    "option",
    "options",
    "setting",
    "settings",
    "state",
    "view",
    "views",
    "layout",
    "sidebar",
    "dismiss",
    "dismissed",
    "dismissible",
    "dismissibles",
    "seen",
    "presence",
    "ping",
    "heartbeat",
    "lock",
    "telemetry",
    "analytics",
    "track",
    "tracking",
    "metrics",
    "beacon",
    "storylist",
    "collapsed",
    "expanded",
    "toggle",
    "recent",
    "visited",
    "ui",
];

/// Whether a write only keeps the session the browser already has alive: a `POST` to a
/// token or session refresh handler (`/auth/refresh`, `/oauth/token/refresh`,
/// `/api/session/refresh`). A single-page app sends it on every load; refused, its login is
/// lost at the next reload (Directus). It sends no data of the user's and changes nothing
/// another user sees, so the network gate lets it through at every class.
pub fn keeps_session(method: &str, url: &str) -> bool {
    if !method.eq_ignore_ascii_case("POST") {
        return false;
    }
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    let segments: Vec<String> = parsed
        .path_segments()
        .map(|s| {
            s.filter(|s| !s.is_empty())
                .map(str::to_ascii_lowercase)
                .collect()
        })
        .unwrap_or_default();
    let Some(last) = segments.last() else {
        return false;
    };
    let refresh = matches!(last.as_str(), "refresh" | "refresh-token" | "refresh_token");
    let session_words = [
        "auth", "oauth", "session", "sessions", "token", "tokens", "jwt",
    ];
    refresh && segments.iter().any(|s| session_words.contains(&s.as_str()))
}

/// Whether a write (a request the network gate held) only saves the page's own view, by what
/// it is and where it goes: a `PUT` or `PATCH` (a resource's state replaced, not a record
/// made), or a handler whose URL names view state ([`VIEW_STATE_WORDS`]); never one whose URL
/// names a handler above a draft write (a delete, an account's change), nor a `DELETE`. The
/// gate refuses such a write either way; this decides only that it is no reason to prune the
/// action that caused it, when that action commits nothing (no commit verb, no Enter).
pub fn saves_view_state(method: &str, url: &str) -> bool {
    // An account's own settings are the user's, whatever the method.
    let account = handler_parts(url).is_some_and(|parts| {
        parts.iter().any(|part| {
            part.split(|c: char| !c.is_alphanumeric()).any(|w| {
                [
                    "account",
                    "password",
                    "email",
                    "user",
                    "users",
                    "role",
                    "roles",
                    "permission",
                    "permissions",
                    "profile",
                    "token",
                    "tokens",
                ]
                .contains(&w)
            })
        })
    });
    if method.eq_ignore_ascii_case("DELETE")
        || account
        || class_of_url(url).is_some_and(|class| class > RiskClass::DraftWrite)
    {
        return false;
    }
    let idempotent = method.eq_ignore_ascii_case("PUT") || method.eq_ignore_ascii_case("PATCH");
    let named = handler_parts(url).is_some_and(|parts| {
        parts.iter().any(|part| {
            part.split(|c: char| !c.is_alphanumeric())
                .any(|w| VIEW_STATE_WORDS.contains(&w))
        })
    }) || url.split_once('?').is_some_and(|(_, q)| {
        q.split(['&', '='])
            .any(|w| VIEW_STATE_WORDS.contains(&w.to_lowercase().as_str()))
    });
    idempotent || named
}

/// A link that navigates by `GET`: see the module documentation.
fn classify_link_navigation(name: &str, url: &str) -> RiskClass {
    if let Some(class) = class_of_url(url) {
        return class;
    }
    let words = normalise_name(name);
    let ends_session = [
        "log out", "logout", "sign out", "signout", "log off", "sign off",
    ]
    .iter()
    .any(|p| contains_phrase(&words, p));
    if ends_session {
        return RiskClass::AuthenticatedRead;
    }
    // A cart's links often write on GET ("Add to cart" → /cart?add=3).
    match class_of_link_name(name) {
        Some(RiskClass::DraftWrite) if !opens_a_form(name) => RiskClass::DraftWrite,
        _ => RiskClass::ReadOnly,
    }
}

/// A click read by words: the control's name, erring upward inside a posting form.
fn classify_click_by_words(context: &RiskContext<'_>) -> RiskClass {
    // A click into a field focuses it, whatever its label says ("Confirm password").
    if takes_text(context.role) {
        return RiskClass::ReadOnly;
    }
    let is_link = is_link(context.role);
    if is_link && matches!(context.sends, Some(Sends::Unknown)) {
        // A link the page's script handles (`href="#"`, `javascript:`): what it sends is the
        // network gate's to hold (writes, and page loads of URLs that name a state-changing
        // handler); its words raise it only for ending the session and for a cart.
        return classify_link_navigation(context.accessible_name, "");
    }
    let posts = context.form_posts || matches!(context.sends, Some(Sends::Post { .. }));
    let by_name = if is_link {
        // A link to "Apply now", "Sign up" or "Add" opens a form; the form's own button
        // is the submission. Links that spend, delete or change the account stay risky,
        // and so do links that put something into a cart ("Add to cart").
        class_of_link_name(context.accessible_name)
            .filter(|class| *class != RiskClass::ExternalSubmission)
            .filter(|class| {
                *class != RiskClass::DraftWrite || !opens_a_form(context.accessible_name)
            })
    } else {
        class_of_name(context.accessible_name)
    };
    match by_name {
        Some(class) => class,
        None if is_step_control(context.accessible_name) => {
            if posts {
                RiskClass::DraftWrite
            } else {
                RiskClass::ReadOnly
            }
        }
        // A link without alarming words is a read; an unknown control that submits a
        // posting form is assumed to send something out (a checkbox does not send it).
        None if !is_link && posts && !only_holds_a_value(context.role) => {
            RiskClass::ExternalSubmission
        }
        None => RiskClass::ReadOnly,
    }
}

/// The class a request the network gate held shows an action to have: a `DELETE` destroys,
/// any other write (`POST`, `PUT`, `PATCH`, a beacon) sends something out; `GET`, `HEAD` and
/// `OPTIONS` read.
pub fn class_of_request(method: &str) -> RiskClass {
    match method.to_ascii_uppercase().as_str() {
        "GET" | "HEAD" | "OPTIONS" => RiskClass::ReadOnly,
        "DELETE" => RiskClass::Destructive,
        _ => RiskClass::ExternalSubmission,
    }
}

/// Whether an action of this class may send writes (anything but `GET`/`HEAD`/`OPTIONS`):
/// from an authenticated read (a login posts its form) up.
pub fn allows_writes(class: RiskClass) -> bool {
    class >= RiskClass::AuthenticatedRead
}

/// Enter in a field submits its form: the form's submit control (or, failing that, whether the
/// form posts) decides the class. A password field being submitted is at least a login.
fn classify_form_submission(context: &RiskContext<'_>) -> RiskClass {
    let by_submit = match context.sends {
        // A GET form builds a URL, whatever its button says.
        Some(Sends::Get { .. }) => Some(RiskClass::ReadOnly),
        _ => context.form_submit_name.and_then(class_of_name),
    };
    let baseline = if context.form_posts {
        RiskClass::ExternalSubmission
    } else {
        RiskClass::ReadOnly
    };
    let class = by_submit.unwrap_or(baseline);
    if context.input_type.eq_ignore_ascii_case("password") {
        class.max(RiskClass::AuthenticatedRead)
    } else {
        class
    }
}

#[cfg(test)]
mod view_state_tests {
    use super::*;

    #[test]
    fn writes_of_the_pages_own_view_are_told_apart_by_what_and_where() {
        assert!(saves_view_state(
            "PUT",
            "http://h/recipes/default/tiddlers/%24%3A%2FStoryList"
        ));
        assert!(saves_view_state("PATCH", "http://h/admin/dismissibles/"));
        assert!(saves_view_state(
            "POST",
            "http://h/admin/editing-sessions/ping/3/"
        ));
        assert!(saves_view_state(
            "POST",
            "http://h/wp-json/wp/v2/posts/7/autosaves"
        ));
        assert!(saves_view_state(
            "POST",
            "http://h/w/api.php?action=options&format=json"
        ));
        assert!(!saves_view_state("POST", "http://h/items/3/comments"));
        assert!(!saves_view_state("POST", "http://h/group/3/delete/"));
        assert!(!saves_view_state("PUT", "http://h/account/password/change"));
        assert!(!saves_view_state("DELETE", "http://h/ui/state"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click(name: &str) -> RiskClass {
        classify(
            ActionShape::Click,
            &RiskContext {
                accessible_name: name,
                role: "button",
                ..RiskContext::default()
            },
        )
    }

    #[test]
    fn click_table() {
        let table: &[(&str, u8)] = &[
            ("Search", 1),
            ("Next page", 1),
            ("Read more", 1),
            ("Log in", 2),
            ("Sign out", 2),
            ("Save as draft", 3),
            ("Apply code", 3),
            ("Add to cart", 3),
            ("Remove from cart", 3),
            ("Apply filters", 1),
            ("Submit", 4),
            ("Post review", 4),
            ("Apply", 4),
            ("Confirm", 4),
            ("Sign up", 4),
            ("Place order", 5),
            ("Buy now", 5),
            ("Pay €12.00", 5),
            ("Proceed to checkout", 3),
            ("Confirm order", 5),
            ("Confirm password", 6),
            ("Change password", 6),
            ("Deactivate my account", 6),
            ("Delete account", 7),
            ("Yes, delete everything", 7),
            ("Remove", 7),
            ("Empty trash", 7),
        ];
        for &(name, expected) in table {
            assert_eq!(click(name).level(), expected, "click on {name:?}");
        }
    }

    #[test]
    fn fills_are_read_only_without_enter_whatever_the_label() {
        for label in ["Confirm password", "Delete reason", "Card number", "Search"] {
            let context = RiskContext {
                accessible_name: label,
                role: "textbox",
                form_submit_name: Some("Delete account"),
                form_posts: true,
                ..RiskContext::default()
            };
            assert_eq!(
                classify(ActionShape::Fill { enter: false }, &context),
                RiskClass::ReadOnly,
                "{label}"
            );
        }
    }

    #[test]
    fn fill_with_enter_takes_the_forms_class() {
        let table: &[(Option<&str>, bool, &str, u8)] = &[
            (Some("Search"), false, "search", 1),
            (None, false, "text", 1),
            (None, true, "text", 4),
            (Some("Log in"), true, "password", 2),
            (Some("Change password"), true, "password", 6),
            (Some("Place order"), true, "text", 5),
            (Some("Go"), false, "password", 2),
        ];
        for &(submit, posts, input_type, expected) in table {
            let context = RiskContext {
                accessible_name: "Field",
                role: "textbox",
                input_type,
                form_submit_name: submit,
                form_posts: posts,
                ..RiskContext::default()
            };
            assert_eq!(
                classify(ActionShape::Fill { enter: true }, &context).level(),
                expected,
                "{submit:?} posts={posts} type={input_type}"
            );
        }
    }

    #[test]
    fn unknown_button_in_posting_form_is_external_submission_but_links_are_not() {
        let button = RiskContext {
            accessible_name: "Go",
            role: "button",
            form_posts: true,
            ..RiskContext::default()
        };
        assert_eq!(
            classify(ActionShape::Click, &button),
            RiskClass::ExternalSubmission
        );
        let link = RiskContext {
            role: "link",
            ..button
        };
        assert_eq!(classify(ActionShape::Click, &link), RiskClass::ReadOnly);
    }

    #[test]
    fn links_are_reads_unless_their_name_starts_with_a_verb() {
        let link = |name| {
            classify(
                ActionShape::Click,
                &RiskContext {
                    accessible_name: name,
                    role: "link",
                    ..RiskContext::default()
                },
            )
        };
        assert_eq!(link("Annual report"), RiskClass::ReadOnly);
        assert_eq!(link("Latest share prices"), RiskClass::ReadOnly);
        assert_eq!(link("Delete this post"), RiskClass::Destructive);
        assert_eq!(link("Buy now"), RiskClass::Financial);
        assert_eq!(link("Apply now"), RiskClass::ReadOnly);
        assert_eq!(link("Sign up for free"), RiskClass::ReadOnly);
        assert_eq!(link("Payments"), RiskClass::ReadOnly);
        // Editing verbs alone open the form whose button writes; a cart link writes itself.
        assert_eq!(link("Add"), RiskClass::ReadOnly);
        assert_eq!(link("Edit profile"), RiskClass::ReadOnly);
        assert_eq!(link("Create group"), RiskClass::ReadOnly);
        assert_eq!(link("Add to cart"), RiskClass::DraftWrite);
        assert_eq!(link("Save"), RiskClass::DraftWrite);
        assert_eq!(link("Change password"), RiskClass::AccountMutation);
    }

    #[test]
    fn wizard_steps_are_draft_writes_only_inside_posting_forms() {
        let step = |posts| {
            classify(
                ActionShape::Click,
                &RiskContext {
                    accessible_name: "Next",
                    role: "button",
                    form_posts: posts,
                    ..RiskContext::default()
                },
            )
        };
        assert_eq!(step(true), RiskClass::DraftWrite);
        assert_eq!(step(false), RiskClass::ReadOnly);
    }

    #[test]
    fn accepting_a_dialog_reads_its_text() {
        let context = RiskContext {
            dialog_text: "Are you sure you want to delete this project?",
            ..RiskContext::default()
        };
        assert_eq!(
            classify(ActionShape::AcceptDialog, &context),
            RiskClass::Destructive
        );
        assert_eq!(
            classify(ActionShape::DismissDialog, &context),
            RiskClass::ReadOnly
        );
    }

    #[test]
    fn phrases_match_whole_words_only() {
        // "paypal" and "postcode" must not read as "pay" and "post".
        assert_eq!(click("PayPal help"), RiskClass::ReadOnly);
        assert_eq!(click("Postcode lookup"), RiskClass::ReadOnly);
        assert_eq!(click("Addresses"), RiskClass::ReadOnly);
    }

    fn sends_get(url: &str) -> Sends {
        Sends::Get { url: url.into() }
    }

    #[test]
    fn get_forms_are_reads_whatever_their_button_says() {
        let get = sends_get("http://127.0.0.1:8001/db/cities");
        for name in [
            "Apply", "Go", "Submit", "Filter", "Send", "Confirm", "Delete",
        ] {
            let context = RiskContext {
                accessible_name: name,
                role: "button",
                form_submit_name: Some(name),
                sends: Some(&get),
                ..RiskContext::default()
            };
            assert_eq!(
                classify(ActionShape::Click, &context),
                RiskClass::ReadOnly,
                "{name}"
            );
            assert_eq!(
                classify(ActionShape::Fill { enter: true }, &context),
                RiskClass::ReadOnly,
                "Enter in a field of a GET form named {name}"
            );
        }
        // The same buttons in a form that posts keep today's reading.
        let post = Sends::Post {
            url: "http://127.0.0.1:8001/db/cities".into(),
        };
        let posted = |name| {
            classify(
                ActionShape::Click,
                &RiskContext {
                    accessible_name: name,
                    role: "button",
                    form_posts: true,
                    sends: Some(&post),
                    ..RiskContext::default()
                },
            )
        };
        assert_eq!(posted("Apply"), RiskClass::ExternalSubmission);
        assert_eq!(posted("Go"), RiskClass::ExternalSubmission);
        assert_eq!(posted("Delete"), RiskClass::Destructive);
        assert_eq!(posted("Save"), RiskClass::DraftWrite);
    }

    #[test]
    fn a_link_that_navigates_reads_unless_its_url_names_a_handler_that_changes_state() {
        let link = |name: &str, url: &str| {
            let sends = sends_get(url);
            classify(
                ActionShape::Click,
                &RiskContext {
                    accessible_name: name,
                    role: "link",
                    sends: Some(&sends),
                    ..RiskContext::default()
                },
            )
        };
        let base = "http://127.0.0.1:8001";
        let table: &[(&str, &str, RiskClass)] = &[
            (
                "Remove this filter",
                "/db/cities?_sort=name",
                RiskClass::ReadOnly,
            ),
            ("Clear", "/db/cities", RiskClass::ReadOnly),
            ("Delete this post", "/posts/3/", RiskClass::ReadOnly),
            ("Buy now", "/books/7", RiskClass::ReadOnly),
            ("Annual report", "/reports/2025", RiskClass::ReadOnly),
            // A search for words that sound alarming is still a search.
            (
                "remove stains",
                "/search?q=remove+stains",
                RiskClass::ReadOnly,
            ),
            // The URL names the handler: what it does decides, whatever the link says.
            (
                "Delete",
                "/admin/auth/group/3/delete/",
                RiskClass::Destructive,
            ),
            ("Tidy up", "/items/3/delete", RiskClass::Destructive),
            ("x", "/items?action=remove&id=3", RiskClass::Destructive),
            ("Log out", "/logout", RiskClass::AuthenticatedRead),
            ("Bye", "/issue?@action=logout", RiskClass::AuthenticatedRead),
            ("Sign out", "/account", RiskClass::AuthenticatedRead),
            (
                "Unsubscribe",
                "/list/unsubscribe?u=3",
                RiskClass::AccountMutation,
            ),
            // A cart's links write on GET.
            ("Add to cart", "/cart?item=3", RiskClass::DraftWrite),
            // Pages about deleting are no handlers that delete.
            ("DELETE", "/lang_delete.html", RiskClass::ReadOnly),
            (
                "Removing a package",
                "/docs/remove-a-package",
                RiskClass::ReadOnly,
            ),
            ("x", "/items?delete=3", RiskClass::Destructive),
        ];
        for &(name, path, expected) in table {
            assert_eq!(
                link(name, &format!("{base}{path}")),
                expected,
                "{name} -> {path}"
            );
        }
    }

    #[test]
    fn a_link_the_pages_script_handles_is_held_by_the_gate_not_its_words() {
        let script = |name| {
            classify(
                ActionShape::Click,
                &RiskContext {
                    accessible_name: name,
                    role: "link",
                    sends: Some(&Sends::Unknown),
                    ..RiskContext::default()
                },
            )
        };
        assert_eq!(script("Remove this filter"), RiskClass::ReadOnly);
        assert_eq!(script("Delete"), RiskClass::ReadOnly);
        assert_eq!(script("Log out"), RiskClass::AuthenticatedRead);
        assert_eq!(script("Add to cart"), RiskClass::DraftWrite);
    }

    #[test]
    fn a_checkbox_in_a_posting_form_only_holds_a_value() {
        for role in ["checkbox", "radio", "switch", "textbox"] {
            let context = RiskContext {
                accessible_name: "Remember me?",
                role,
                form_posts: true,
                ..RiskContext::default()
            };
            assert_eq!(
                classify(ActionShape::Click, &context),
                RiskClass::ReadOnly,
                "{role}"
            );
        }
        // A click into a field is a read whatever its label says.
        let field = RiskContext {
            accessible_name: "Confirm password",
            role: "textbox",
            form_posts: true,
            ..RiskContext::default()
        };
        assert_eq!(classify(ActionShape::Click, &field), RiskClass::ReadOnly);
        // By its name a checkbox can still be alarming: a row's "Delete" box.
        let delete = RiskContext {
            accessible_name: "Delete",
            role: "checkbox",
            form_posts: true,
            ..RiskContext::default()
        };
        assert_eq!(
            classify(ActionShape::Click, &delete),
            RiskClass::Destructive
        );
    }

    #[test]
    fn an_action_alone_is_classified_by_what_its_target_declares() {
        use crate::action::{Locator, Target};
        let target = |role: &str, name: &str, sends: Sends| Target {
            locators: vec![Locator::Css("#x".into())],
            role: role.into(),
            name: name.into(),
            sends,
        };
        let apply = Action::Click {
            target: target("button", "Apply", sends_get("http://h/db/t")),
        };
        assert_eq!(classify_action(&apply), RiskClass::ReadOnly);
        let undeclared = Action::Click {
            target: target("button", "Apply", Sends::Unknown),
        };
        assert_eq!(classify_action(&undeclared), RiskClass::ExternalSubmission);
        let delete = Action::Click {
            target: target("link", "Tidy", sends_get("http://h/items/3/delete")),
        };
        assert_eq!(classify_action(&delete), RiskClass::Destructive);
    }

    #[test]
    fn requests_are_classed_by_method() {
        assert_eq!(class_of_request("GET"), RiskClass::ReadOnly);
        assert_eq!(class_of_request("head"), RiskClass::ReadOnly);
        assert_eq!(class_of_request("OPTIONS"), RiskClass::ReadOnly);
        assert_eq!(class_of_request("POST"), RiskClass::ExternalSubmission);
        assert_eq!(class_of_request("PUT"), RiskClass::ExternalSubmission);
        assert_eq!(class_of_request("PATCH"), RiskClass::ExternalSubmission);
        assert_eq!(class_of_request("DELETE"), RiskClass::Destructive);
        assert!(!allows_writes(RiskClass::ReadOnly));
        assert!(allows_writes(RiskClass::AuthenticatedRead));
        assert!(allows_writes(RiskClass::DraftWrite));
    }

    #[test]
    fn risk_class_numbers_round_trip_and_reject_out_of_range() {
        for class in RiskClass::ALL {
            assert_eq!(RiskClass::try_from(class.level()), Ok(class));
        }
        assert_eq!(RiskClass::try_from(0), Err(InvalidRiskClass(0)));
        assert_eq!(RiskClass::try_from(8), Err(InvalidRiskClass(8)));
        assert_eq!(RiskClass::ReadOnly.normalised(), 0.0);
        assert_eq!(RiskClass::Destructive.normalised(), 1.0);
    }

    #[test]
    fn a_session_refresh_is_told_from_a_write() {
        assert!(keeps_session("POST", "http://127.0.0.1:8055/auth/refresh"));
        assert!(keeps_session("post", "http://h/api/oauth/token/refresh"));
        assert!(keeps_session(
            "POST",
            "http://h/api/session/refresh-token?x=1"
        ));
        assert!(!keeps_session("GET", "http://h/auth/refresh"));
        assert!(!keeps_session("POST", "http://h/items/articles/refresh"));
        assert!(!keeps_session("POST", "http://h/auth/login"));
        assert!(!keeps_session("POST", "http://h/auth/password/reset"));
        assert!(!keeps_session("POST", "not a url"));
    }

    #[test]
    fn a_write_is_rated_by_what_its_handler_and_body_say() {
        let base = "http://127.0.0.1:8000";
        assert_eq!(
            class_of_write(&format!("{base}/issues/2/delete"), ""),
            Some(RiskClass::Destructive)
        );
        assert_eq!(
            class_of_write(&format!("{base}/issues/2"), "csrf=x&_action=delete"),
            Some(RiskClass::Destructive)
        );
        assert_eq!(
            class_of_write(&format!("{base}/issues/2"), "_method=DELETE"),
            Some(RiskClass::Destructive)
        );
        assert_eq!(
            class_of_write(
                &format!("{base}/api/items"),
                r#"{"action": "remove", "id": 3}"#
            ),
            Some(RiskClass::Destructive)
        );
        assert_eq!(
            class_of_write(&format!("{base}/account/email"), "email=m%40x.test"),
            Some(RiskClass::AccountMutation)
        );
        // Data is no handler: a comment that says "delete" or names a password field.
        assert_eq!(
            class_of_write(
                &format!("{base}/issues/2/comments"),
                "body=please+delete+this"
            ),
            None
        );
        assert_eq!(
            class_of_write(&format!("{base}/login"), "username=alice&password=x"),
            None
        );
        assert_eq!(
            class_of_write(&format!("{base}/issues/2"), "priority=high"),
            None
        );
        assert_eq!(
            class_of_write("not a url", "action=delete"),
            Some(RiskClass::Destructive)
        );
    }

    #[test]
    fn a_write_to_another_record_than_the_page_names_is_told() {
        let base = "http://127.0.0.1:8000";
        let at = |p: &str| format!("{base}{p}");
        assert!(writes_another_record(&at("/issues/3"), &at("/issues/2")));
        assert!(writes_another_record(&at("/issue3"), &at("/issue2")));
        assert!(!writes_another_record(
            &at("/issues/3"),
            &at("/issues/3/comments")
        ));
        assert!(!writes_another_record(&at("/issue3"), &at("/issue3")));
        // A list or a new record's form names none; a version segment is no record.
        assert!(!writes_another_record(&at("/issues"), &at("/issues/2")));
        assert!(!writes_another_record(
            &at("/issues/3"),
            &at("/api/v2/ping")
        ));
        assert!(!writes_another_record(
            &at("/admin/app/issue/3/change/"),
            &at("/admin/app/issue/3/change/")
        ));
        assert!(!writes_another_record(
            &at("/projects/2/issues/new"),
            &at("/projects/2/issues")
        ));
        // A wizard's next step is the form going on; a step back or a jump is another record.
        assert!(!writes_another_record(&at("/apply/2"), &at("/apply/3")));
        assert!(!writes_another_record(
            &at("/signup/step1"),
            &at("/signup/step2")
        ));
        assert!(writes_another_record(&at("/issues/3"), &at("/issues/5")));
        assert!(writes_another_record(&at("/issues/3"), &at("/tickets/4")));
    }
}
