//! A goal read as a plan before the browser moves (the seed design's GOAP pre-planning): the
//! act it asks for (find, filter, sort, open, create, edit, publish, delete, comment), the
//! object it is about (a collection, a record it names by number, title or description), every
//! **condition** it states (field, operator, value: "French", "before 1900", "urgent
//! priority", "titled "…"") and its **preconditions** (a login; the right collection).
//!
//! Reading is mechanical and page-free: which field of a page a condition's words name, and
//! which of the page's spellings its value takes, is the eyes' business (`node`'s plan
//! signals), which score a page by the share of the plan's conditions it evidences. The same
//! plan is what `forager plan` prints, and its shape (act, object, conditions' fields and
//! operators, without their values) is what the workflow memory's templates are keyed by.
//! Nothing here decides success; page text never enters a plan (only the goal's does).

use crate::comparison::{self, Comparator, Token};
use serde::{Deserialize, Serialize};

mod words;
use words::*;

/// What the goal asks to be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Act {
    /// Show, list, which…: a listing narrowed by the conditions (when it has any).
    Find,
    /// Put a listing in an order.
    Sort,
    /// Open one record's page.
    Open,
    /// Make a new record with the conditions' values.
    Create,
    /// Change a record's fields to the conditions' values.
    Edit,
    /// Make a record public.
    Publish,
    /// Take a record out of public view.
    Unpublish,
    /// Delete a record.
    Delete,
    /// Add a comment or message to a record.
    Comment,
    /// Log in, and nothing more.
    LogIn,
}

impl Act {
    /// Whether the act writes (a record made, changed, published, deleted, commented on).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Act::Create | Act::Edit | Act::Publish | Act::Unpublish | Act::Delete | Act::Comment
        )
    }

    /// The act's name as `forager plan` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Act::Find => "find",
            Act::Sort => "sort",
            Act::Open => "open",
            Act::Create => "create",
            Act::Edit => "edit",
            Act::Publish => "publish",
            Act::Unpublish => "unpublish",
            Act::Delete => "delete",
            Act::Comment => "comment",
            Act::LogIn => "log in",
        }
    }
}

/// States a listing is filtered by, in the goal's fixed words: the words, the field, the
/// value as a page most often writes it, and its other spellings.
const STATES: &[(&str, &str, &str, &[&str])] = &[
    (
        "out of stock",
        "stock",
        "out of stock",
        &["sold out", "unavailable", "not in stock"],
    ),
    (
        "sold out",
        "stock",
        "out of stock",
        &["sold out", "unavailable", "not in stock"],
    ),
    (
        "not in stock",
        "stock",
        "out of stock",
        &["sold out", "unavailable", "not in stock"],
    ),
    ("in draft", "status", "draft", &["drafts", "unpublished"]),
    ("drafts", "status", "draft", &["drafts", "unpublished"]),
    ("unpublished", "status", "draft", &["drafts", "unpublished"]),
];

/// How a condition compares a field with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    /// The field is the value.
    Equals,
    /// The field is anything but the value ("unresolved": the status is not resolved).
    NotEquals,
    /// Strictly more.
    Greater,
    /// At least.
    AtLeast,
    /// Strictly less ("before 1900").
    Less,
    /// At most.
    AtMost,
    /// Begins with.
    StartsWith,
    /// Ends with.
    EndsWith,
    /// Contains ("mentions", "about").
    Contains,
}

impl Operator {
    /// The operator of a comparison's comparator.
    pub fn of(comparator: Comparator) -> Operator {
        match comparator {
            Comparator::Greater => Operator::Greater,
            Comparator::AtLeast => Operator::AtLeast,
            Comparator::Less => Operator::Less,
            Comparator::AtMost => Operator::AtMost,
            Comparator::StartsWith => Operator::StartsWith,
            Comparator::EndsWith => Operator::EndsWith,
            Comparator::Contains => Operator::Contains,
            Comparator::Equals => Operator::Equals,
        }
    }

    /// Its symbol, as `forager plan` prints it.
    pub fn symbol(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::NotEquals => "≠",
            Operator::Greater => ">",
            Operator::AtLeast => "≥",
            Operator::Less => "<",
            Operator::AtMost => "≤",
            Operator::StartsWith => "starts with",
            Operator::EndsWith => "ends with",
            Operator::Contains => "contains",
        }
    }

    /// Whether a text (a cell, a field's value) satisfies the operator against `value`:
    /// numbers compare as numbers (a cell's digits, thousands separators and all), texts as
    /// whole words, case aside.
    pub fn holds(self, text: &str, value: &str) -> bool {
        let (text_lower, value_lower) = (text.trim().to_lowercase(), value.trim().to_lowercase());
        if value_lower.is_empty() {
            return false;
        }
        let numbers = number_in(text).zip(value_lower.replace(',', "").parse::<f64>().ok());
        match self {
            Operator::Greater => numbers.is_some_and(|(t, v)| t > v),
            Operator::AtLeast => numbers.is_some_and(|(t, v)| t >= v),
            Operator::Less => numbers.is_some_and(|(t, v)| t < v),
            Operator::AtMost => numbers.is_some_and(|(t, v)| t <= v),
            Operator::StartsWith => text_lower.starts_with(&value_lower),
            Operator::EndsWith => text_lower.ends_with(&value_lower),
            Operator::Contains => has_words(&text_lower, &value_lower),
            Operator::Equals => {
                text_lower == value_lower
                    || numbers.is_some_and(|(t, v)| t == v && text_lower.len() < 24)
            }
            Operator::NotEquals => !text_lower.is_empty() && !has_words(&text_lower, &value_lower),
        }
    }
}

/// The number a text shows ("84,000,000", "1,428,000,000 people", "1851"), if it is mostly one.
fn number_in(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    let digits: String = trimmed
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, ',' | '.' | '-' | ' '))
        .filter(|c| !matches!(c, ',' | ' '))
        .collect();
    if digits.is_empty() || digits == "-" {
        return None;
    }
    digits.parse().ok()
}

/// Whether `text` holds `words` as whole words (both lower case).
fn has_words(text: &str, words: &str) -> bool {
    let padded = format!(" {} ", normalise(text));
    let wanted = normalise(words);
    !wanted.is_empty() && padded.contains(&format!(" {wanted} "))
}

/// Lower-case words joined by single spaces, punctuation dropped.
fn normalise(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One condition the goal states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    /// The lower-case words that name the field ("priority", "population", "came out");
    /// empty where the goal names only the value ("Asian countries"): the page tells which
    /// field holds it.
    pub field: Vec<String>,
    /// How the field compares with the value.
    pub operator: Operator,
    /// The value as the goal gives it, ready to type (a number with its magnitude written
    /// out: "100 million" is `100000000`).
    pub value: String,
    /// Other ways a page may write the value ("Asian" → "Asia"; "unresolved" → "not
    /// resolved").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// The goal's words it was read from.
    pub phrase: String,
}

impl Condition {
    /// Every spelling of the value: the value, then its alternatives.
    pub fn spellings(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.value.as_str()).chain(self.alternatives.iter().map(String::as_str))
    }

    /// Whether a text (a cell, an option's label, a field's value) says this condition's
    /// value under its operator, in any of its spellings. An option "not resolved" says
    /// "≠ resolved".
    pub fn said_by(&self, text: &str) -> bool {
        if self.operator == Operator::NotEquals {
            let lower = normalise(text);
            return self.spellings().any(|v| {
                let v = normalise(v);
                lower == format!("not {v}")
                    || lower == format!("un{v}")
                    || lower == format!("non {v}")
                    || lower == format!("- {v}")
            });
        }
        self.spellings().any(|v| self.operator.holds(text, v))
    }

    /// Whether a cell or a shown field value satisfies the condition.
    pub fn holds_for(&self, text: &str) -> bool {
        match self.operator {
            Operator::NotEquals => self.spellings().all(|v| Operator::NotEquals.holds(text, v)),
            Operator::Equals => self.spellings().any(|v| {
                Operator::Equals.holds(text, v)
                    || has_words(&text.to_lowercase(), &v.to_lowercase())
                        && text.len() <= v.len() + 24
            }),
            other => self.spellings().any(|v| other.holds(text, v)),
        }
    }

    /// How `forager plan` prints it: `priority = urgent`, `population > 100000000`, `? = Asian`.
    pub fn describe(&self) -> String {
        let field = if self.field.is_empty() {
            "?".to_owned()
        } else {
            self.field.join(" ")
        };
        format!("{field} {} {}", self.operator.symbol(), self.value)
    }
}

/// How the goal wants a listing ordered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// The words naming what it is ordered by ("population").
    pub field: Vec<String>,
    /// Biggest first (`Some(true)`), smallest first (`Some(false)`), or either.
    pub descending: Option<bool>,
}

/// The record a goal names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Record {
    /// By kind and number ("issue 3").
    Number {
        /// The kind ("issue").
        kind: String,
        /// Its number.
        number: String,
    },
    /// By its name or title, quoted or capitalised ("Cusco", "Old news").
    Name {
        /// The name.
        name: String,
    },
    /// By what it is about ("the book about hunting a whale", "the dark mode issue"): the
    /// content words, most telling last.
    Described {
        /// The words, lower case, without filler.
        words: Vec<String>,
    },
}

impl Record {
    /// The words a page must show to be this record's: its number, name or description.
    pub fn words(&self) -> Vec<String> {
        match self {
            Record::Number { number, .. } => vec![number.clone()],
            Record::Name { name } => vec![name.to_lowercase()],
            Record::Described { words } => words.clone(),
        }
    }

    /// How `forager plan` prints it.
    pub fn describe(&self) -> String {
        match self {
            Record::Number { kind, number } => format!("{kind} {number}"),
            Record::Name { name } => format!("\"{name}\""),
            Record::Described { words } => format!("about {}", words.join(" ")),
        }
    }
}

/// What must hold before the act can be done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "needs", rename_all = "snake_case")]
pub enum Precondition {
    /// A logged-in session (as this user, when the goal names one): the goal says so, or its
    /// act writes.
    Login {
        /// The user the goal logs in as ("as alice").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
        /// Whether the goal says so (else it is inferred from a writing act).
        stated: bool,
    },
}

/// A goal as a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// What is to be done.
    pub act: Act,
    /// The kind of thing it is about, singular, lower case ("country", "issue", "bug").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The one record the act is on, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<Record>,
    /// Every condition the goal states: filters for a listing, values for a record.
    pub conditions: Vec<Condition>,
    /// The order a listing is wanted in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// What must hold first.
    pub preconditions: Vec<Precondition>,
}

/// The shape of a plan, without its values: what a workflow template is keyed by, so that a
/// goal naming its record or its values otherwise is the same kind of task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlanShape {
    /// The act.
    pub act: Act,
    /// The object's kind.
    pub object: Option<String>,
    /// Each condition's field words and operator, in the goal's order.
    pub conditions: Vec<(Vec<String>, Operator)>,
    /// Whether the record is named, and how ("number", "name", "described").
    pub record: Option<String>,
}

impl Plan {
    /// The shape of the plan: its act, object and conditions' fields, no values.
    pub fn shape(&self) -> PlanShape {
        PlanShape {
            act: self.act,
            object: self.object.clone(),
            conditions: self
                .conditions
                .iter()
                .map(|c| (c.field.clone(), c.operator))
                .collect(),
            record: self.record.as_ref().map(|r| {
                match r {
                    Record::Number { .. } => "number",
                    Record::Name { .. } => "name",
                    Record::Described { .. } => "described",
                }
                .to_owned()
            }),
        }
    }

    /// Whether the plan needs a login (stated or inferred).
    pub fn needs_login(&self) -> bool {
        self.preconditions
            .iter()
            .any(|p| matches!(p, Precondition::Login { .. }))
    }

    /// The user the goal logs in as, if it names one.
    pub fn login_user(&self) -> Option<&str> {
        self.preconditions.iter().find_map(|p| match p {
            Precondition::Login { user, .. } => user.as_deref(),
        })
    }

    /// Reads a goal.
    pub fn of(goal: &str) -> Plan {
        let tokens = comparison::tokens(goal);
        let lower: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
        let login = login_at(&lower);
        let user = login.and_then(|at| login_user(&tokens, &lower, at));
        let act = act_of(&lower, login.is_some());
        let mut reader = Reader {
            tokens: &tokens,
            lower: &lower,
            taken: vec![false; tokens.len()],
            conditions: Vec::new(),
            user: user.clone(),
        };
        if let Some(at) = login {
            reader.take_login(at);
        }
        let order = reader.order();
        reader.comparisons(goal);
        reader.assignees();
        reader.authors();
        reader.quoted();
        reader.tagged();
        reader.field_nouns(act);
        reader.marked_as(act);
        reader.states(act);
        let numbered = reader.numbered_record();
        let (mut object, modifiers, about) = reader.object(act);
        let record = match numbered {
            Some(record) => Some(record),
            None => reader.record(act, &modifiers, about, &mut object),
        };
        // A comparison's subject named the listing too ("Asian countries have more than 100
        // million people"): the field is what is left.
        let listing: Vec<String> = object
            .iter()
            .cloned()
            .chain(modifiers.iter().map(|(_, w)| w.to_lowercase()))
            .collect();
        for condition in &mut reader.conditions {
            let kept: Vec<String> = condition
                .field
                .iter()
                .filter(|w| !listing.contains(&comparison::stem(w)) && !listing.contains(w))
                .cloned()
                .collect();
            if !kept.is_empty() {
                condition.field = kept;
            }
        }
        if act == Act::Find || act == Act::Sort {
            for (at, word) in modifiers {
                reader.modifier(at, &word);
            }
        }
        let mut preconditions = Vec::new();
        if login.is_some() || act.writes() {
            preconditions.push(Precondition::Login {
                user,
                stated: login.is_some(),
            });
        }
        // Publishing a record is its state made public (and the reverse): a condition the
        // page's listing or record shows.
        let state = match act {
            Act::Publish => Some(("published", vec!["live".to_owned(), "public".to_owned()])),
            Act::Unpublish => Some((
                "draft",
                vec!["unpublished".to_owned(), "private".to_owned()],
            )),
            _ => None,
        };
        if let Some((value, alternatives)) = state
            && !reader.conditions.iter().any(|c| c.field == ["status"])
        {
            reader.conditions.push(Condition {
                field: vec!["status".into()],
                operator: Operator::Equals,
                value: value.into(),
                alternatives,
                phrase: act.name().into(),
            });
        }
        // A listing wanted in an order and narrowed by nothing is a sort.
        let act = match act {
            Act::Find if order.is_some() && reader.conditions.is_empty() => Act::Sort,
            other => other,
        };
        Plan {
            act,
            object,
            record,
            conditions: reader.conditions,
            order,
            preconditions,
        }
    }
}

/// What `forager plan` (and `forager explore --dry-run`) reports of a task before a search:
/// its plan, each precondition with whether it can be met and how, what the memory holds for
/// it, and what the start page showed when it was read. The document `--json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanReport {
    /// [`PLAN_REPORT_VERSION`].
    pub version: u32,
    /// The goal, as given.
    pub goal: String,
    /// The start URL.
    pub start_url: String,
    /// The plan read from the goal.
    pub plan: Plan,
    /// Each precondition, judged.
    pub preconditions: Vec<Judged>,
    /// The workflow the memory holds for this kind of task, if any (its template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remembered: Option<String>,
    /// The start page as read (only with `--read-start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_page: Option<StartPage>,
}

/// The version of [`PlanReport`].
pub const PLAN_REPORT_VERSION: u32 = 1;

impl PlanReport {
    /// Whether every precondition can be met (none is judged unmet).
    pub fn ready(&self) -> bool {
        self.preconditions.iter().all(|j| j.met != Some(false))
    }
}

/// A precondition with its judgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    /// The precondition.
    pub precondition: Precondition,
    /// `Some(true)`: it can be met; `Some(false)`: it cannot; `None`: not known before the
    /// search.
    pub met: Option<bool>,
    /// How, or why not, in words ("needs a login: no credentials and no capsule given").
    pub how: String,
}

/// What the start page showed, read once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartPage {
    /// Where it landed.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its HTTP status, when known.
    pub http_status: Option<u16>,
    /// Whether it asks for a password (a login form).
    pub asks_to_log_in: bool,
    /// How many controls it offers.
    pub controls: usize,
}

/// What a task brings toward a login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginMeans {
    /// Credentials among its inputs (a user name, a password, a code).
    pub credentials: bool,
    /// A session capsule.
    pub capsule: bool,
}

/// Judges a plan's preconditions with what the task brings and, when it was read, what the
/// start page shows.
pub fn judge(plan: &Plan, means: LoginMeans, start: Option<&StartPage>) -> Vec<Judged> {
    let mut judged = Vec::new();
    for precondition in &plan.preconditions {
        match precondition {
            Precondition::Login { user, stated } => {
                let who = user
                    .as_deref()
                    .map_or(String::new(), |u| format!(" as {u}"));
                let (met, how) = if means.capsule {
                    (
                        Some(true),
                        format!("a login{who}: the session capsule given"),
                    )
                } else if means.credentials {
                    (
                        Some(true),
                        format!("a login{who}: the credentials given as inputs"),
                    )
                } else if *stated || start.is_some_and(|s| s.asks_to_log_in) {
                    (
                        Some(false),
                        format!("needs a login{who}: no credentials and no capsule given"),
                    )
                } else {
                    (
                        None,
                        format!(
                            "may need a login (the goal {}s a record) and none is given",
                            plan.act.name()
                        ),
                    )
                };
                judged.push(Judged {
                    precondition: precondition.clone(),
                    met,
                    how,
                });
            }
        }
    }
    // A start page that asks to log in where the plan did not say so.
    if !plan.needs_login()
        && let Some(start) = start.filter(|s| s.asks_to_log_in)
    {
        let can = means.capsule || means.credentials;
        judged.push(Judged {
            precondition: Precondition::Login {
                user: None,
                stated: false,
            },
            met: Some(can),
            how: if can {
                format!("the start page ({}) asks to log in: the means are given", start.title)
            } else {
                format!(
                    "needs a login: the start page ({}) asks for one, and no credentials and no capsule are given",
                    start.title
                )
            },
        });
    }
    judged
}

/// Where "log in" (or "sign in", "login as", "logged in") begins, if the goal asks for it: not
/// a control's name it asks to press ("press login", "click "Log in"").
fn login_at(lower: &[String]) -> Option<usize> {
    (0..lower.len()).find(|&i| {
        let next = lower.get(i + 1).map(String::as_str);
        let before = i.checked_sub(1).map(|b| lower[b].as_str());
        let says = matches!(
            (lower[i].as_str(), next),
            ("log" | "sign", Some("in" | "on"))
                | ("logged", Some("in"))
                | ("login", Some("as" | "first" | "with"))
        );
        says && !matches!(before, Some("press" | "click" | "hit" | "tap" | "the"))
    })
}

/// "log in as alice": the word after "as".
fn login_user(tokens: &[Token], lower: &[String], at: usize) -> Option<String> {
    let mut i = at + 1;
    while i < lower.len() && i <= at + 3 {
        if lower[i] == "as" {
            return tokens
                .get(i + 1)
                .filter(|t| !t.text.is_empty())
                .map(|t| t.text.clone());
        }
        i += 1;
    }
    None
}

/// The act the goal's verbs ask for, the strongest first.
fn act_of(lower: &[String], logs_in: bool) -> Act {
    let has = |w: &str| lower.iter().any(|l| l == w);
    let has_stem = |stems: &[&str]| {
        lower.iter().any(|l| {
            stems
                .iter()
                .any(|s| l == s || l.starts_with(s) && l.len() <= s.len() + 3)
        })
    };
    let phrase = |words: &[&str]| lower.windows(words.len()).any(|w| w == words);
    if has_stem(&["delete", "remove", "trash", "erase"]) {
        return Act::Delete;
    }
    if has_stem(&["unpublish"]) || phrase(&["take", "down"]) {
        return Act::Unpublish;
    }
    if has_stem(&["publish"]) {
        return Act::Publish;
    }
    if has_stem(&["comment"])
        || has("reply")
        || phrase(&["add", "a", "note"])
        || phrase(&["add", "a", "message"])
    {
        return Act::Comment;
    }
    if has("new")
        || has_stem(&["create", "report", "file", "register"]) && !has("reported")
        || has("add") && !phrase(&["add", "to"])
        || (has("post") || has("write") || has("draft"))
            && lower
                .first()
                .is_some_and(|w| ["post", "write", "draft"].contains(&w.as_str()))
    {
        return Act::Create;
    }
    if has_stem(&[
        "change", "set", "raise", "lower", "rename", "update", "edit", "mark", "assign", "move",
        "retitle", "reopen", "close", "resolve", "replace", "correct",
    ]) && !has("assigned")
        || phrase(&["hand"]) && has("over")
        || has("give") && has("to") && lower.first().is_none_or(|w| w != "give")
    {
        return Act::Edit;
    }
    if has("open") && !is_modifier_open(lower)
        || phrase(&["take", "me", "to"])
        || phrase(&["go", "to"])
        || phrase(&["its", "page"])
        || phrase(&["their", "page"])
    {
        return Act::Open;
    }
    if logs_in
        && lower.iter().enumerate().all(|(i, w)| {
            w.is_empty()
                || [
                    "log", "in", "on", "as", "sign", "login", "please", "and", "then", "me",
                    "first",
                ]
                .contains(&w.as_str())
                || i > 0 && lower[i - 1] == "as"
        })
    {
        return Act::LogIn;
    }
    Act::Find
}

/// Whether "open" is an adjective here ("the open bugs"), not the verb.
fn is_modifier_open(lower: &[String]) -> bool {
    lower.iter().enumerate().all(|(i, w)| {
        w != "open"
            || i > 0
                && ["the", "all", "any", "still", "are", "is", "my"]
                    .contains(&lower[i - 1].as_str())
    })
}

/// The condition reader's state: which tokens a condition took already.
struct Reader<'a> {
    tokens: &'a [Token],
    lower: &'a [String],
    taken: Vec<bool>,
    conditions: Vec<Condition>,
    user: Option<String>,
}

impl Reader<'_> {
    fn word(&self, i: usize) -> &str {
        self.lower.get(i).map_or("", String::as_str)
    }

    fn free(&self, i: usize) -> bool {
        i < self.tokens.len() && !self.taken[i] && !self.tokens[i].text.is_empty()
    }

    fn take(&mut self, range: std::ops::Range<usize>) {
        for i in range {
            if let Some(t) = self.taken.get_mut(i) {
                *t = true;
            }
        }
    }

    fn phrase(&self, range: std::ops::Range<usize>) -> String {
        self.tokens[range.start.min(self.tokens.len())..range.end.min(self.tokens.len())]
            .iter()
            .filter(|t| !t.text.is_empty())
            .map(|t| {
                if t.quoted {
                    format!("\"{}\"", t.text)
                } else {
                    t.text.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn push(&mut self, mut condition: Condition) {
        if condition.alternatives.is_empty()
            && matches!(condition.operator, Operator::Equals)
            && let Some(place) = demonym_place(&condition.value)
        {
            condition.alternatives.push(place);
        }
        let same = |c: &Condition| {
            c.value.eq_ignore_ascii_case(&condition.value) && c.operator == condition.operator
        };
        if !self.conditions.iter().any(same) {
            self.conditions.push(condition);
        }
    }

    /// A value word: not filler, not a verb, not empty.
    fn value_word(&self, i: usize) -> bool {
        self.free(i)
            && (self.tokens[i].quoted
                || !FILLER.contains(&self.word(i)) && !VERBS.contains(&self.word(i)))
    }

    /// "log in as alice": taken, so that neither word is a value.
    fn take_login(&mut self, at: usize) {
        let mut end = at + 2;
        if self.word(end) == "as" {
            end += 2;
        }
        self.take(at..end.min(self.tokens.len()));
    }

    /// "sorted by population", "sort … by population, biggest first".
    fn order(&mut self) -> Option<Order> {
        let lower = self.lower;
        let at = (0..lower.len()).find(|&i| {
            [
                "sort", "sorted", "order", "ordered", "sorting", "rank", "ranked",
            ]
            .contains(&lower[i].as_str())
        });
        let descending = if lower.iter().any(|w| {
            [
                "biggest",
                "largest",
                "highest",
                "most",
                "descending",
                "newest",
                "latest",
                "decreasing",
            ]
            .contains(&w.as_str())
        }) {
            Some(true)
        } else if lower.iter().any(|w| {
            [
                "smallest",
                "lowest",
                "least",
                "ascending",
                "oldest",
                "earliest",
                "increasing",
                "alphabetically",
            ]
            .contains(&w.as_str())
        }) {
            Some(false)
        } else {
            None
        };
        let at = at?;
        let by = (at + 1..lower.len().min(at + 6)).find(|&i| lower[i] == "by")?;
        let field: Vec<String> = (by + 1..lower.len())
            .take_while(|&i| !lower[i].is_empty())
            .filter(|&i| !FILLER.contains(&lower[i].as_str()))
            .take(2)
            .map(|i| lower[i].clone())
            .collect();
        let end = by + 1 + field.len();
        self.take(at..end.min(self.tokens.len()));
        // "biggest first": its words are the order's.
        let firsts: Vec<usize> = (1..lower.len()).filter(|&i| lower[i] == "first").collect();
        for i in firsts {
            self.take(i - 1..i + 1);
        }
        (!field.is_empty()).then_some(Order { field, descending })
    }

    /// The goal's comparisons ("more than 100 million people", "before 1900", "start with
    /// "San"", "in Peru").
    fn comparisons(&mut self, goal: &str) {
        for found in comparison::comparisons(goal) {
            // The tokens it took: its value's (a placed name's run, or a compared value).
            let Some(at) = self.find_value(&found.value, found.placed) else {
                continue;
            };
            let value_len = if found.placed {
                found.value.split_whitespace().count()
            } else {
                1
            };
            if (at..at + value_len).any(|i| self.taken.get(i).copied().unwrap_or(true)) {
                continue;
            }
            let start = at.saturating_sub(if found.placed { 1 } else { 3 });
            let subject: Vec<String> = found
                .subject
                .iter()
                .filter(|w| !VERBS.contains(&w.as_str()))
                .cloned()
                .collect();
            let (field, alternatives) = if found.placed {
                (
                    Vec::new(),
                    demonym_place(&found.value).into_iter().collect(),
                )
            } else {
                (field_words(&subject), Vec::new())
            };
            let end = (at + value_len + 2).min(self.tokens.len());
            let phrase = self.phrase(start..end);
            self.take(at..at + value_len);
            self.push(Condition {
                field,
                operator: Operator::of(found.comparator),
                value: found.value.clone(),
                alternatives,
                phrase,
            });
        }
    }

    /// Where a comparison's value sits among the tokens: a quoted token, a number (written
    /// out or not), or a run of words.
    fn find_value(&self, value: &str, placed: bool) -> Option<usize> {
        let first = value.split_whitespace().next()?.to_lowercase();
        (0..self.tokens.len()).find(|&i| {
            let t = &self.tokens[i];
            if t.quoted {
                return t.text == value;
            }
            let lower = &self.lower[i];
            if placed {
                return *lower == first;
            }
            *lower == first
                || crate::amount::number(&t.text).is_some_and(|n| {
                    let factor = self
                        .lower
                        .get(i + 1)
                        .and_then(|w| crate::amount::magnitude(w))
                        .unwrap_or(1.0);
                    crate::amount::written(n * factor) == value
                })
                || lower.trim_end_matches(|c: char| c.is_alphabetic()) != lower.as_str()
                    && lower.chars().next().is_some_and(|c| c.is_ascii_digit())
                    && value.starts_with(lower.trim_end_matches(|c: char| c.is_alphabetic()))
        })
    }

    /// "assigned to alice", "assign the dark mode issue to bob", "hand it over to carol":
    /// the assignee. "me" is the user the goal logs in as.
    fn assignees(&mut self) {
        let lower = self.lower;
        for i in 0..lower.len() {
            let w = lower[i].as_str();
            let assigns = w.starts_with("assign") || w == "hand" || w == "give";
            if !assigns {
                continue;
            }
            let Some(to) = (i + 1..lower.len().min(i + 9))
                .take_while(|&j| !lower[j].is_empty())
                .find(|&j| lower[j] == "to")
            else {
                continue;
            };
            let Some(name) = self.person(to + 1) else {
                continue;
            };
            let phrase = self.phrase(i..to + 2);
            if w.starts_with("assign") && to == i + 1 {
                self.take(i..to + 2);
            } else {
                self.take(i..i + 1);
                self.take(to..to + 2);
                if let Some(over) = (i..to).find(|&j| lower[j] == "over") {
                    self.take(over..over + 1);
                }
            }
            self.push(Condition {
                field: vec!["assigned".into(), "to".into()],
                operator: Operator::Equals,
                value: name,
                alternatives: Vec::new(),
                phrase,
            });
        }
    }

    /// A person named at token `i` ("alice", "Bob", "me" for the user logging in).
    fn person(&self, i: usize) -> Option<String> {
        if !self.free(i) {
            return None;
        }
        let word = self.word(i);
        if word == "me" || word == "myself" {
            return self.user.clone();
        }
        (!FILLER.contains(&word) && !VERBS.contains(&word) && !FIELD_NOUNS.contains(&word))
            .then(|| self.tokens[i].text.clone())
    }

    /// "written by bob", "reported by alice", "posts by carol": the author.
    fn authors(&mut self) {
        let lower = self.lower;
        for i in 1..lower.len() {
            if lower[i] != "by" || self.taken[i] {
                continue;
            }
            let before = lower[i - 1].as_str();
            if [
                "sort", "sorted", "order", "ordered", "group", "grouped", "filter",
            ]
            .contains(&before)
            {
                continue;
            }
            let Some(name) = self.person(i + 1) else {
                continue;
            };
            if self.tokens[i + 1].quoted {
                continue;
            }
            let field = match before {
                "reported" | "filed" | "opened" => "reporter",
                "assigned" => "assigned",
                _ => "author",
            };
            let start = if [
                "written", "reported", "created", "posted", "authored", "filed", "opened", "made",
                "sent", "edited",
            ]
            .contains(&before)
            {
                i - 1
            } else {
                i
            };
            let phrase = self.phrase(start..i + 2);
            self.take(start..i + 2);
            self.push(Condition {
                field: vec![field.into()],
                operator: Operator::Equals,
                value: name,
                alternatives: Vec::new(),
                phrase,
            });
        }
    }

    /// Quoted values: a title ("titled "…""), a text ("saying "…""), or a field's value
    /// where the words before name the field.
    fn quoted(&mut self) {
        for i in 0..self.tokens.len() {
            if !self.tokens[i].quoted || self.taken[i] {
                continue;
            }
            let before: Vec<&str> = (i.saturating_sub(3)..i).map(|j| self.word(j)).collect();
            let last = before.last().copied().unwrap_or("");
            let field: Vec<String> = if TITLE_WORDS.contains(&last)
                || before.len() >= 2
                    && TITLE_WORDS.contains(&before[before.len() - 2])
                    && ["is", "as", "of"].contains(&last)
            {
                TITLE_FIELDS.iter().map(|s| (*s).to_owned()).collect()
            } else if TEXT_WORDS.contains(&last) {
                TEXT_FIELDS.iter().map(|s| (*s).to_owned()).collect()
            } else if FIELD_NOUNS.contains(&comparison::stem(last).as_str()) {
                vec![comparison::stem(last)]
            } else {
                // A quoted control to press ("click "Save"") is no condition.
                if [
                    "click", "press", "hit", "tap", "choose", "select", "button", "link",
                ]
                .contains(&last)
                {
                    continue;
                }
                Vec::new()
            };
            let start = i.saturating_sub(usize::from(!last.is_empty()));
            let phrase = self.phrase(start..i + 1);
            self.take(i..i + 1);
            if !field.is_empty() {
                self.take(start..i);
            }
            self.push(Condition {
                field,
                operator: Operator::Equals,
                value: self.tokens[i].text.clone(),
                alternatives: Vec::new(),
                phrase,
            });
        }
    }

    /// "tagged UI", "tagged with the UI keyword", "labelled backend".
    fn tagged(&mut self) {
        for i in 0..self.lower.len() {
            if !["tagged", "labelled", "labeled", "marked"].contains(&self.word(i)) || self.taken[i]
            {
                continue;
            }
            let mut j = i + 1;
            while ["with", "the", "a", "an", "as"].contains(&self.word(j)) {
                j += 1;
            }
            if !self.value_word(j) {
                continue;
            }
            let mut end = j + 1;
            let field = if FIELD_NOUNS.contains(&comparison::stem(self.word(end)).as_str()) {
                end += 1;
                comparison::stem(self.word(end - 1))
            } else if self.word(i) == "marked" {
                "status".to_owned()
            } else {
                "keyword".to_owned()
            };
            let phrase = self.phrase(i..end);
            let value = self.tokens[j].text.clone();
            self.take(i..end);
            self.push(Condition {
                field: vec![field],
                operator: Operator::Equals,
                value,
                alternatives: Vec::new(),
                phrase,
            });
        }
    }

    /// A field noun with its value: "urgent priority", "with the keyword UI", "the priority
    /// of issue 3 to urgent", "priority: urgent", "in the News category".
    fn field_nouns(&mut self, act: Act) {
        for i in 0..self.lower.len() {
            let noun = comparison::stem(self.word(i));
            if !FIELD_NOUNS.contains(&noun.as_str()) || !self.free(i) {
                continue;
            }
            // "Asian countries": a plural is the collection listed, not one of its fields
            // (but "the keywords UI and docs" are a field's values).
            let plural = noun != self.word(i);
            if plural && !["keyword", "tag", "label", "category"].contains(&noun.as_str()) {
                continue;
            }
            // "the priority of issue 3 to urgent", "set the status to resolved".
            let to = (i + 1..self.lower.len().min(i + 6))
                .take_while(|&j| !self.lower[j].is_empty())
                .find(|&j| ["to", "as", "into"].contains(&self.word(j)));
            if let Some(to) = to.filter(|_| act == Act::Edit)
                && self.value_word(to + 1)
            {
                let value = self.tokens[to + 1].text.clone();
                let phrase = self.phrase(i..to + 2);
                self.take(i..i + 1);
                self.take(to..to + 2);
                self.push(Condition {
                    field: vec![noun],
                    operator: Operator::Equals,
                    value,
                    alternatives: Vec::new(),
                    phrase,
                });
                continue;
            }
            // "urgent priority", "the UI keyword", "the News category".
            if i > 0 && self.value_word(i - 1) && !self.lower[i - 1].is_empty() {
                let value = self.tokens[i - 1].text.clone();
                let phrase = self.phrase(i - 1..i + 1);
                self.take(i - 1..i + 1);
                self.push(Condition {
                    field: vec![noun],
                    operator: Operator::Equals,
                    value,
                    alternatives: Vec::new(),
                    phrase,
                });
                continue;
            }
            // "with the keyword UI", "priority urgent", "status: open".
            if self.value_word(i + 1) {
                let value = self.tokens[i + 1].text.clone();
                let phrase = self.phrase(i..i + 2);
                self.take(i..i + 2);
                self.push(Condition {
                    field: vec![noun],
                    operator: Operator::Equals,
                    value,
                    alternatives: Vec::new(),
                    phrase,
                });
            }
        }
    }

    /// "mark issue 2 as resolved", "close it as a duplicate": the record's status.
    fn marked_as(&mut self, act: Act) {
        if act != Act::Edit {
            return;
        }
        for i in 0..self.lower.len() {
            if !["mark", "flag", "close", "set"].contains(&self.word(i)) {
                continue;
            }
            let Some(as_at) = (i + 1..self.lower.len().min(i + 7))
                .take_while(|&j| !self.lower[j].is_empty())
                .find(|&j| self.word(j) == "as" || self.word(j) == "to")
            else {
                continue;
            };
            let mut j = as_at + 1;
            while ["a", "an", "the"].contains(&self.word(j)) {
                j += 1;
            }
            if !self.value_word(j) {
                continue;
            }
            let value = self.tokens[j].text.clone();
            let phrase = self.phrase(i..j + 1);
            self.take(as_at..j + 1);
            self.push(Condition {
                field: vec!["status".into()],
                operator: Operator::Equals,
                value,
                alternatives: Vec::new(),
                phrase,
            });
        }
    }

    /// A record's state said in fixed words: "out of stock" (or "sold out"), "in draft" (or
    /// "drafts", "unpublished"). What a listing is filtered by, not a record's name: a goal
    /// that creates or edits leaves them to its other readers ("with 5 in stock").
    fn states(&mut self, act: Act) {
        if !matches!(act, Act::Find | Act::Sort | Act::Open) {
            return;
        }
        for (words, field, value, alternatives) in STATES {
            let words: Vec<&str> = words.split(' ').collect();
            for i in 0..self.lower.len() {
                let end = i + words.len();
                if end > self.lower.len()
                    || self.taken[i..end].iter().any(|t| *t)
                    || self.lower[i..end]
                        .iter()
                        .map(String::as_str)
                        .ne(words.iter().copied())
                {
                    continue;
                }
                let phrase = self.phrase(i..end);
                self.take(i..end);
                self.push(Condition {
                    field: vec![(*field).to_owned()],
                    operator: Operator::Equals,
                    value: (*value).to_owned(),
                    alternatives: alternatives.iter().map(|a| (*a).to_owned()).collect(),
                    phrase,
                });
            }
        }
    }

    /// The object noun (singular), the free words before it (modifiers, with their
    /// positions), and where an "about …" description starts.
    fn object(&mut self, act: Act) -> (Option<String>, Vec<(usize, String)>, Option<usize>) {
        let lower = self.lower;
        let about = (0..lower.len()).find(|&i| {
            ["about", "regarding", "concerning"].contains(&lower[i].as_str())
                || lower[i] == "on" && i > 0 && lower[i - 1] == "focusing"
        });
        // The object: the first noun after the verb and its determiners (a word followed by a
        // preposition, a relative word, a participle, a comma or the end), or the last word
        // before "about".
        let mut first_content = None;
        for i in 0..lower.len() {
            let w = lower[i].as_str();
            let skipped = w.is_empty()
                || self.taken[i]
                || self.tokens[i].quoted
                || FILLER.contains(&w)
                || VERBS.contains(&w) && first_content.is_none()
                || i == 0 && self.unknown_verb_first();
            if skipped {
                if first_content.is_some() {
                    // a filler word ends the noun phrase ("countries with", "issues that")
                    break;
                }
                continue;
            }
            if first_content.is_none() {
                first_content = Some(i);
            }
            let next = lower.get(i + 1).map_or("", String::as_str);
            let plural = comparison::stem(w) != w && !w.ends_with("ss");
            let ends_phrase = next.is_empty()
                || FILLER.contains(&next)
                || VERBS.contains(&next)
                || PARTICIPLES.contains(&next)
                || next.ends_with("ly") && next.len() > 4
                || next.ends_with("ed") && next.len() > 4
                || plural && comparison::stem(next) == next
                || self.taken.get(i + 1).copied().unwrap_or(true)
                || self.tokens.get(i + 1).is_some_and(|t| t.quoted);
            if ends_phrase {
                let start = first_content.unwrap_or(i);
                let noun = comparison::stem(w);
                let modifiers: Vec<(usize, String)> = (start..i)
                    .filter(|&j| self.free(j) && !VERBS.contains(&lower[j].as_str()))
                    .map(|j| (j, self.tokens[j].text.clone()))
                    .collect();
                self.take(i..i + 1);
                let _ = act;
                return (Some(noun), modifiers, about);
            }
        }
        (None, Vec::new(), about)
    }

    /// Whether the goal's first word reads as a verb the vocabulary lacks ("Play X …",
    /// "Reserve a table …"): it comes before a determiner, a single letter or a quote, where
    /// a first adjective ("Urgent bugs …", "Asian countries …") comes before its noun.
    fn unknown_verb_first(&self) -> bool {
        let Some(next) = self.tokens.get(1) else {
            return false;
        };
        let next_lower = next.text.to_lowercase();
        next.quoted
            || next.text.chars().count() == 1 && next.text.chars().all(char::is_alphabetic)
            || [
                "the", "a", "an", "my", "all", "every", "this", "that", "some", "our",
            ]
            .contains(&next_lower.as_str())
    }

    /// A record the goal names by kind and number: "issue 3", "ticket 12".
    fn numbered_record(&mut self) -> Option<Record> {
        let lower = self.lower;
        for i in 0..lower.len().saturating_sub(1) {
            let next = &self.tokens[i + 1].text;
            if !lower[i].is_empty()
                && self.free(i)
                && self.free(i + 1)
                && !FILLER.contains(&lower[i].as_str())
                && !VERBS.contains(&lower[i].as_str())
                && !lower[i].chars().any(|c| c.is_ascii_digit())
                && next.chars().all(|c| c.is_ascii_digit())
                && !next.is_empty()
                && next.len() <= 7
                && crate::amount::magnitude(lower.get(i + 2).map_or("", String::as_str)).is_none()
            {
                self.take(i..i + 2);
                return Some(Record::Number {
                    kind: comparison::stem(&lower[i]),
                    number: next.clone(),
                });
            }
        }
        None
    }

    /// The record the act is on: a described one ("about hunting a whale", "the dark mode
    /// issue" for an act on one record: its words, the noun's with them, and then no object
    /// of its own), or a name ("the city of Cusco").
    fn record(
        &mut self,
        act: Act,
        modifiers: &[(usize, String)],
        about: Option<usize>,
        object: &mut Option<String>,
    ) -> Option<Record> {
        let lower = self.lower;
        if let Some(at) = about {
            let words: Vec<String> = (at + 1..lower.len())
                .take_while(|&j| !lower[j].is_empty())
                .filter(|&j| {
                    self.free(j)
                        && !FILLER.contains(&lower[j].as_str())
                        && !VERBS.contains(&lower[j].as_str())
                })
                .map(|j| lower[j].clone())
                .collect();
            let end = (at + 1..lower.len())
                .find(|&j| lower[j].is_empty())
                .unwrap_or(lower.len());
            if !words.is_empty() {
                self.take(at..end);
                return Some(Record::Described { words });
            }
        }
        let on_one = !matches!(act, Act::Find | Act::Sort | Act::Create | Act::LogIn);
        if on_one && !modifiers.is_empty() {
            let mut words: Vec<String> = modifiers.iter().map(|(_, w)| w.to_lowercase()).collect();
            words.extend(object.take());
            for (at, _) in modifiers {
                self.take(*at..*at + 1);
            }
            return Some(Record::Described { words });
        }
        // "the page of the city of Cusco": a placed name for an act on one record.
        if on_one
            && let Some(index) = self.conditions.iter().position(|c| {
                c.field.is_empty()
                    && c.operator == Operator::Equals
                    && c.phrase.split_whitespace().count() <= 3
            })
        {
            let condition = self.conditions.remove(index);
            return Some(Record::Name {
                name: condition.value,
            });
        }
        None
    }

    /// A modifier of a listing's object ("Asian countries", "unread issues", "unresolved
    /// bugs"): a condition whose field the page tells.
    fn modifier(&mut self, at: usize, word: &str) {
        let lower = word.to_lowercase();
        if lower.chars().all(|c| c.is_ascii_digit()) || !self.free(at) {
            return;
        }
        let (operator, value, alternatives) = if let Some(base) =
            lower.strip_prefix("un").filter(|b| {
                b.len() >= 4
                    && b.ends_with("ed")
                    && !["under", "unread", "united"]
                        .iter()
                        .any(|w| lower.starts_with(w))
            }) {
            (Operator::NotEquals, base.to_owned(), Vec::new())
        } else {
            let alternatives: Vec<String> = DEMONYMS
                .iter()
                .filter(|(adjective, _)| *adjective == lower)
                .map(|(_, place)| (*place).to_owned())
                .collect();
            (Operator::Equals, word.to_owned(), alternatives)
        };
        self.take(at..at + 1);
        let phrase = self.phrase(at..at + 2);
        self.push(Condition {
            field: Vec::new(),
            operator,
            value,
            alternatives,
            phrase,
        });
    }
}

/// A placed name's other spelling: "South American" is placed in "South America".
fn demonym_place(value: &str) -> Option<String> {
    let last = value.split_whitespace().last()?.to_lowercase();
    let (_, place) = DEMONYMS.iter().find(|(adjective, _)| *adjective == last)?;
    let mut words: Vec<&str> = value.split_whitespace().collect();
    words.pop();
    words.push(place);
    Some(words.join(" "))
}

/// A comparison's subject as field words: its nouns, stemmed ("inhabitants" → "inhabitant").
fn field_words(subject: &[String]) -> Vec<String> {
    subject
        .iter()
        .map(|w| comparison::stem(w))
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn described(plan: &Plan) -> Vec<String> {
        plan.conditions.iter().map(Condition::describe).collect()
    }

    #[test]
    fn a_fields_words_are_never_empty() {
        let plan = Plan::of("Which cities have a population of more than 10 million?");
        assert_eq!(
            plan.conditions
                .iter()
                .map(|c| c.field.clone())
                .collect::<Vec<_>>(),
            vec![vec!["population".to_owned()]]
        );
    }

    #[test]
    fn two_filters_on_a_listing() {
        let plan =
            Plan::of("List only the books originally written in French that came out before 1900");
        assert_eq!(plan.act, Act::Find);
        assert_eq!(plan.object.as_deref(), Some("book"));
        let conditions = described(&plan);
        assert!(
            conditions.contains(&"came out < 1900".to_owned()),
            "{conditions:?}"
        );
        assert!(
            conditions.contains(&"? = French".to_owned()),
            "{conditions:?}"
        );
        assert_eq!(plan.conditions.len(), 2, "{conditions:?}");
        assert!(plan.preconditions.is_empty());
    }

    #[test]
    fn states_prices_and_a_second_condition() {
        let plan = Plan::of("Which garden products are out of stock?");
        assert_eq!(plan.object.as_deref(), Some("product"));
        let conditions = described(&plan);
        assert!(
            conditions.contains(&"stock = out of stock".to_owned()),
            "{conditions:?}"
        );
        assert!(plan.conditions[0].said_by("Sold out"), "{conditions:?}");
        let plan = Plan::of("Show me the articles in draft written by Bob");
        assert_eq!(plan.object.as_deref(), Some("article"));
        let conditions = described(&plan);
        assert!(
            conditions.contains(&"status = draft".to_owned()),
            "{conditions:?}"
        );
        assert_eq!(plan.conditions.len(), 2, "{conditions:?}");
        let plan = Plan::of("Show the products cheaper than 15 euros");
        assert_eq!(plan.object.as_deref(), Some("product"));
        assert_eq!(described(&plan), vec!["price < 15".to_owned()]);
        assert_eq!(plan.record, None, "\"than 15\" names no record");
        let plan = Plan::of("Find the books under $20 that are out of stock");
        let conditions = described(&plan);
        assert!(
            conditions.contains(&"price < 20".to_owned()),
            "{conditions:?}"
        );
        assert!(
            conditions.contains(&"stock = out of stock".to_owned()),
            "{conditions:?}"
        );
        // Creating a record with a stock keeps its value for the form, not a filter.
        let plan = Plan::of("Add a new kitchen product \"Bread bin\" priced 22.00 with 5 in stock");
        assert!(
            plan.conditions.iter().all(|c| c.value != "out of stock"),
            "{:?}",
            described(&plan)
        );
    }

    #[test]
    fn an_adjective_of_place_and_a_number() {
        let plan =
            Plan::of("Which Asian countries have more than 100 million people? Show just those");
        assert_eq!(plan.object.as_deref(), Some("country"));
        assert_eq!(plan.conditions.len(), 2, "{:?}", described(&plan));
        let asian = &plan
            .conditions
            .iter()
            .find(|c| c.value == "Asian")
            .expect("Asian");
        assert_eq!(asian.alternatives, vec!["Asia".to_owned()]);
        let people = plan
            .conditions
            .iter()
            .find(|c| c.operator == Operator::Greater)
            .expect(">");
        assert_eq!(people.value, "100000000");
        assert_eq!(people.field, vec!["people".to_owned()]);
    }

    #[test]
    fn a_negated_state_and_a_keyword() {
        let plan = Plan::of("all the unresolved issues tagged with the UI keyword");
        assert_eq!(plan.act, Act::Find);
        assert_eq!(plan.object.as_deref(), Some("issue"));
        let conditions = described(&plan);
        assert!(
            conditions.contains(&"keyword = UI".to_owned()),
            "{conditions:?}"
        );
        assert!(
            conditions.contains(&"? ≠ resolved".to_owned()),
            "{conditions:?}"
        );
        assert_eq!(plan.conditions.len(), 2);
        let plan = Plan::of("Show me the unread issues tagged UI");
        let conditions = described(&plan);
        assert_eq!(
            conditions,
            vec!["keyword = UI".to_owned(), "? = unread".to_owned()]
        );
    }

    #[test]
    fn a_title_and_a_list_value_for_a_new_record() {
        let plan = Plan::of(
            "Log in as alice and report a new bug called \"Export fails\" with urgent priority",
        );
        assert_eq!(plan.act, Act::Create);
        assert_eq!(plan.object.as_deref(), Some("bug"));
        let conditions = described(&plan);
        assert!(
            conditions.contains(&"title = Export fails".to_owned()),
            "{conditions:?}"
        );
        assert!(
            conditions.contains(&"priority = urgent".to_owned()),
            "{conditions:?}"
        );
        assert_eq!(plan.conditions.len(), 2, "{conditions:?}");
        assert_eq!(plan.login_user(), Some("alice"));
        assert!(matches!(
            plan.preconditions[0],
            Precondition::Login { stated: true, .. }
        ));
    }

    #[test]
    fn a_record_found_by_its_description() {
        let plan = Plan::of("Which book is about hunting a whale? Open its page.");
        assert_eq!(plan.act, Act::Open);
        assert_eq!(plan.object.as_deref(), Some("book"));
        assert_eq!(
            plan.record,
            Some(Record::Described {
                words: vec!["hunting".into(), "whale".into()]
            })
        );
        assert!(plan.conditions.is_empty(), "{:?}", described(&plan));
    }

    #[test]
    fn a_record_to_change_named_by_its_words() {
        let plan = Plan::of("Log in as alice and assign the dark mode issue to bob");
        assert_eq!(plan.act, Act::Edit);
        assert_eq!(described(&plan), vec!["assigned to = bob".to_owned()]);
        assert_eq!(
            plan.record,
            Some(Record::Described {
                words: vec!["dark".into(), "mode".into(), "issue".into()]
            })
        );
        let other = Plan::of("hand the duplex printing crash over to carol");
        assert_eq!(other.act, Act::Edit);
        assert_eq!(described(&other), vec!["assigned to = carol".to_owned()]);
        // The same shape: one template for both.
        let plan = Plan::of("hand the dark mode request over to bob");
        assert_eq!(plan.shape(), other.shape());
    }

    #[test]
    fn edits_by_number() {
        let plan = Plan::of("Log in as alice and raise the priority of issue 3 to urgent");
        assert_eq!(plan.act, Act::Edit);
        assert_eq!(described(&plan), vec!["priority = urgent".to_owned()]);
        assert_eq!(
            plan.record,
            Some(Record::Number {
                kind: "issue".into(),
                number: "3".into()
            })
        );
        let plan = Plan::of("Log in as alice and mark issue 2 as resolved");
        assert_eq!(described(&plan), vec!["status = resolved".to_owned()]);
        let plan = Plan::of(
            "Log in as alice and add a comment to issue 1 saying \"I can reproduce this\"",
        );
        assert_eq!(plan.act, Act::Comment);
        assert_eq!(
            described(&plan),
            vec!["text = I can reproduce this".to_owned()]
        );
    }

    #[test]
    fn sorts_and_places() {
        let plan = Plan::of("Show me the countries of South America, sorted by population");
        assert_eq!(plan.act, Act::Find);
        assert_eq!(described(&plan), vec!["? = South America".to_owned()]);
        assert_eq!(
            plan.order,
            Some(Order {
                field: vec!["population".into()],
                descending: None
            })
        );
        let plan = Plan::of("Sort the cities by population, biggest first");
        assert_eq!(plan.act, Act::Sort);
        assert!(plan.conditions.is_empty(), "{:?}", described(&plan));
        assert_eq!(plan.order.and_then(|o| o.descending), Some(true));
        let plan = Plan::of("Open the page of the city of Cusco");
        assert_eq!(plan.act, Act::Open);
        assert_eq!(
            plan.record,
            Some(Record::Name {
                name: "Cusco".into()
            })
        );
    }

    #[test]
    fn logins_and_assignments_to_me() {
        let plan = Plan::of("Log in as alice");
        assert_eq!(plan.act, Act::LogIn);
        assert!(plan.conditions.is_empty());
        let plan = Plan::of("Log in as alice and show me the issues assigned to me");
        assert_eq!(plan.act, Act::Find);
        assert_eq!(described(&plan), vec!["assigned to = alice".to_owned()]);
        let plan = Plan::of("Show me only the cities that are in Peru");
        assert_eq!(described(&plan), vec!["? = Peru".to_owned()]);
        assert!(!plan.needs_login());
        let plan = Plan::of("log in and add a new group named \"editors\"");
        assert_eq!(plan.act, Act::Create);
        assert_eq!(described(&plan), vec!["title = editors".to_owned()]);
    }

    #[test]
    fn a_first_word_the_vocabulary_lacks_is_a_verb_not_a_condition() {
        let plan = Plan::of("Play X and win the game");
        assert!(plan.conditions.is_empty(), "{:?}", plan.conditions);
        let plan = Plan::of("Urgent bugs in the backend");
        assert!(
            plan.conditions
                .iter()
                .any(|c| c.value.eq_ignore_ascii_case("urgent")),
            "{:?}",
            plan.conditions
        );
    }

    #[test]
    fn publishing_and_deleting_on_an_admin() {
        let plan = Plan::of(
            "Publish a new page titled \"Spring fair\" with the text \"Stalls open at nine\"",
        );
        assert_eq!(plan.act, Act::Publish);
        assert_eq!(
            described(&plan),
            [
                "title = Spring fair",
                "text = Stalls open at nine",
                "status = published"
            ]
        );
        let plan = Plan::of("Delete the page \"Old news\"");
        assert_eq!(plan.act, Act::Delete);
        assert_eq!(
            plan.record,
            Some(Record::Name {
                name: "Old news".into()
            })
        );
        assert!(plan.conditions.is_empty(), "{:?}", described(&plan));
    }

    #[test]
    fn operators_hold_on_cells() {
        assert!(Operator::Greater.holds("1,428,000,000", "100000000"));
        assert!(!Operator::Greater.holds("84,000,000", "100000000"));
        assert!(Operator::Less.holds("1851", "1900"));
        assert!(Operator::Contains.holds("Capital high in the Andes.", "andes"));
        assert!(!Operator::Contains.holds("Andean plateau", "andes"));
        let asian = Plan::of("Which Asian countries are there?");
        let condition = &asian.conditions[0];
        assert!(condition.holds_for("Asia"));
        assert!(!condition.holds_for("Europe"));
        let unresolved = &Plan::of("the unresolved issues").conditions[0];
        assert!(unresolved.holds_for("chatting"));
        assert!(!unresolved.holds_for("resolved"));
        assert!(unresolved.said_by("not resolved"));
    }

    #[test]
    fn a_stated_login_without_means_is_unmet_before_any_search() {
        let plan = Plan::of("Log in as alice and report a new bug titled \"X\"");
        let none = LoginMeans {
            credentials: false,
            capsule: false,
        };
        let judged = judge(&plan, none, None);
        assert_eq!(judged.len(), 1);
        assert_eq!(judged[0].met, Some(false));
        assert!(
            judged[0].how.contains("no credentials and no capsule"),
            "{}",
            judged[0].how
        );
        let with = judge(
            &plan,
            LoginMeans {
                credentials: true,
                capsule: false,
            },
            None,
        );
        assert_eq!(with[0].met, Some(true));
        // A read whose start page asks for a password.
        let read = Plan::of("Show me the open issues");
        let start = StartPage {
            url: "http://h/login".into(),
            title: "Sign in".into(),
            http_status: Some(200),
            asks_to_log_in: true,
            controls: 3,
        };
        let judged = judge(&read, none, Some(&start));
        assert_eq!(judged[0].met, Some(false));
        assert!(judge(&read, none, None).is_empty());
    }

    proptest! {
        #[test]
        fn any_goal_is_read_without_panicking(goal in "\\PC{0,160}") {
            let plan = Plan::of(&goal);
            for condition in &plan.conditions {
                prop_assert!(!condition.value.is_empty());
            }
        }

        #[test]
        fn a_filter_pair_is_read_whatever_the_values(
            place in "(Asian|European|African)",
            n in 1u32..1000,
        ) {
            let plan = Plan::of(&format!("Which {place} countries have more than {n} million people?"));
            prop_assert_eq!(plan.conditions.len(), 2);
            prop_assert_eq!(plan.act, Act::Find);
        }
    }
}
