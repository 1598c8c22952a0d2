//! Remembered workflows: a verified success kept as a workflow with **parameters**, so that a
//! later task of the same kind with other values can be tried as that workflow first.
//!
//! A success's parameters are the values its steps used that came from its goal: every quoted
//! string of the goal, and a plain word (or a few) of the goal that a step typed, chose or
//! clicked by name ("… cities in Peru" clicking `Peru`) or by the item its control sits in
//! ("Which country is Mombasa in?" clicking the country link of the row that reads
//! `Mombasa`: a [`Locator::InItem`]); a task input a step typed is a
//! parameter by its name (its value is never kept). The goal with those values replaced by
//! slots is the workflow's [`GoalTemplate`]; a new goal *matches* it when it is the template with
//! other values in the slots (letter case, spacing and end punctuation aside), and then
//! [`RememberedWorkflow::bind`] gives the steps with the new values put where the old ones were:
//! a fill's value, a select's option, a clicked control's name or its item's key (its
//! positional locators dropped, which would find the old control; a control known by its item
//! alone loses its old name too) and the URLs the steps declare they send to.
//!
//! Pure functions of their inputs: the queen's store (`forager_queen::memory`) keeps the
//! records on disk, and the node replays the bound steps as a branch's prefix.
//!
//! A control's name made only of command words ("Add", "Save") is no value. Besides a goal that
//! is the template ([`GoalTemplate::bind`]), a goal whose first part is
//! ([`GoalTemplate::bind_first_part`]: "Log in as bob and …") and an alike goal's quoted values
//! by position ([`GoalTemplate::bind_quoted`]) bind too, and so does a goal whose *plan* has the
//! shape of the workflow's goal's plan, in other words and with other values, a record it
//! describes otherwise found by its description ([`RememberedWorkflow::bind_by_plan`], in
//! `recall/shape.rs`). [`site_of`] names a workflow's site
//! (origin and path, digits masked); [`quoted_spans`] is the one reader of a goal's quoted
//! strings (`forager_node::goal` builds on it).

use crate::action::{Action, FillValue, Locator, Sends, Target};
use crate::digest::Digest32;
use crate::fingerprint::mask_digits;
use crate::risk::RiskClass;
use crate::wire::EmbedderId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod shape;

/// The version of a remembered workflow's document.
pub const RECALL_VERSION: u32 = 1;
/// Most steps a remembered workflow keeps (a longer success is not remembered).
pub const MAX_RECALLED_STEPS: usize = 64;
/// Most parameters a template has.
pub const MAX_PARAMETERS: usize = 16;
/// Most words a plain-word parameter's value may have.
const MAX_WORD_VALUE_WORDS: usize = 4;
/// Fewest letters of the word before a slot for it to name the slot's kind ("issue {0}"):
/// "to {0}", "as {0}" say nothing of what the value is.
const MIN_CONTEXT_CHARS: usize = 3;
/// Where one need of a goal ends and the next begins ("log in as bob *and* mark issue 2").
const CLAUSE_BREAKS: &[&str] = &[" and ", " then ", ", ", "; "];
/// Words that say what to do rather than with what: a control named so is part of the
/// workflow, not a value of the goal ("add a group" clicking `Add`).
const COMMAND_WORDS: &[&str] = &[
    "add", "apply", "create", "delete", "edit", "filter", "find", "go", "log", "login", "new",
    "next", "open", "remove", "save", "search", "show", "sort", "submit", "update", "view", "in",
    "on", "the", "a", "an", "of", "to", "and", "or", "with", "for", "by", "me", "all", "only",
];

/// Where a parameter's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParameterKind {
    /// A quoted string of the goal.
    Quoted,
    /// Plain words of the goal that a step used.
    Word,
    /// A task input, by name (its value is given by each task, never kept).
    Input,
}

/// One parameter of a template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    /// Where its value comes from.
    pub kind: ParameterKind,
    /// The value the remembered success used (from its goal, which is no secret); for an
    /// input, the input's name.
    pub value: String,
}

/// A goal with its values set aside: `text` holds `{0}`, `{1}` … where the values of the
/// quoted and word parameters stood, and where an input's value stood ("Log in as alice" with
/// the input `username=alice`: the steps type the input by name, so another task's goal
/// may name another user there); `{{` and `}}` are literal braces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalTemplate {
    /// The goal with slots.
    pub text: String,
    /// The parameters, in the order of their first place in the goal (inputs the goal does
    /// not name last).
    pub parameters: Vec<Parameter>,
}

/// One step of a remembered workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberedStep {
    /// The action as the success executed it.
    pub action: Action,
    /// Its risk class.
    pub risk: RiskClass,
    /// The parameters (indices into the template's) whose values it uses.
    pub uses: Vec<u32>,
}

/// A verified success kept as a parametrized workflow. See the module documentation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberedWorkflow {
    /// [`RECALL_VERSION`].
    pub version: u32,
    /// The site: the start URL's origin and path, runs of digits masked ([`site_of`]).
    pub site: String,
    /// The start URL the success started from.
    pub start_url: String,
    /// Whether the success ran with a session capsule mounted (it starts logged in): it is
    /// recalled only for tasks that mount one, and a workflow found without one (which logs
    /// in) only for tasks that do not.
    #[serde(default)]
    pub mounted: bool,
    /// The goal with its values set aside.
    pub template: GoalTemplate,
    /// The steps.
    pub steps: Vec<RememberedStep>,
    /// The embedder of `vector`.
    pub embedder: EmbedderId,
    /// The embedding of the template's words (slots removed): how alike two goals are once
    /// their values are set aside.
    pub vector: Vec<f32>,
    /// The peer that found the success and the one that reproduced it.
    pub found_by: String,
    /// The peer that reproduced it.
    pub verified_by: String,
    /// When it was learned (Unix seconds).
    pub learned_at: u64,
}

/// Why a success cannot be remembered, or a record not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecallError {
    /// The success has no steps, or more than [`MAX_RECALLED_STEPS`].
    #[error("a success of {0} steps is not remembered (1 to {MAX_RECALLED_STEPS})")]
    Steps(usize),
    /// Its goal has more than [`MAX_PARAMETERS`] values.
    #[error("a goal with {0} values is not remembered (at most {MAX_PARAMETERS})")]
    Parameters(usize),
    /// Another version.
    #[error("remembered workflow version {0}; this build reads version {RECALL_VERSION}")]
    Version(u32),
    /// A step names a parameter that does not exist.
    #[error("step {step} uses parameter {parameter}, which the template lacks")]
    Dangling {
        /// The step (from 1).
        step: usize,
        /// The parameter index.
        parameter: u32,
    },
}

/// The site a start URL belongs to: its origin and path, runs of digits masked.
pub fn site_of(start_url: &str) -> String {
    match url::Url::parse(start_url) {
        Ok(url) => format!(
            "{}{}",
            url.origin().ascii_serialization(),
            mask_digits(url.path())
        ),
        Err(_) => mask_digits(start_url),
    }
}

/// The site a task's memory is kept under: its family ([`TaskSpec::family`], the start URL's
/// origin unless the task names one) and the start URL's path, runs of digits masked.
///
/// [`TaskSpec::family`]: crate::task::TaskSpec::family
pub fn site_key(task: &crate::task::TaskSpec) -> String {
    match &task.family {
        Some(family) => {
            let path = url::Url::parse(&task.start_url)
                .map(|u| mask_digits(u.path()))
                .unwrap_or_default();
            format!("{family}{path}")
        }
        None => site_of(&task.start_url),
    }
}

fn origin_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o != "null")
}

/// The quoted strings of a text ("…", “…”, '…'; an apostrophe inside a word opens nothing),
/// as byte ranges of their contents (trimmed), in the order readers of goals list them: by
/// kind of quote, then position; a text quoted twice counts once.
pub fn quoted_spans(goal: &str) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (open, close) in [('"', '"'), ('\u{201c}', '\u{201d}'), ('\'', '\'')] {
        let mut at = 0;
        while let Some(start) = goal[at..].find(open).map(|s| s + at) {
            let inside = start + open.len_utf8();
            let Some(end) = goal[inside..].find(close).map(|e| e + inside) else {
                break;
            };
            if open == '\'' && goal[..start].ends_with(|c: char| c.is_alphanumeric()) {
                // An apostrophe inside a word (don't, user's) opens nothing.
                at = inside;
                continue;
            }
            let raw = &goal[inside..end];
            let trimmed = raw.trim();
            let lead = raw.len() - raw.trim_start().len();
            let range = inside + lead..inside + lead + trimmed.len();
            let apostrophe = open == '\'' && trimmed.contains(' ') && trimmed.len() > 60;
            if !trimmed.is_empty()
                && trimmed.len() <= 200
                && !apostrophe
                && !out.iter().any(|r| goal[r.clone()] == *trimmed)
            {
                out.push(range);
            }
            at = end + close.len_utf8();
        }
    }
    out
}

/// Whether `needle` occurs in `hay` as whole words, ignoring letter case: the byte offset of
/// the first such occurrence.
fn find_words(hay: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let lower_hay = hay.to_lowercase();
    let lower_needle = needle.to_lowercase();
    // Lower-casing can change byte lengths; only then is the search given up.
    if lower_hay.len() != hay.len() || lower_needle.len() != needle.len() {
        return None;
    }
    let mut from = 0;
    while let Some(i) = lower_hay[from..].find(&lower_needle).map(|i| i + from) {
        let end = i + lower_needle.len();
        let before = lower_hay[..i].chars().next_back();
        let after = lower_hay[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return Some(i);
        }
        from = i + lower_needle.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// What a step types, field by field.
fn typed(action: &Action) -> Vec<&FillValue> {
    match action {
        Action::Fill { value, .. } => vec![value],
        Action::FillForm { fields, .. } => fields.iter().map(|f| &f.value).collect(),
        _ => Vec::new(),
    }
}

/// The value strings a step carries: typed literals, chosen options, slider values.
fn step_values(action: &Action) -> Vec<&str> {
    let mut values: Vec<&str> = typed(action)
        .into_iter()
        .filter_map(|v| match v {
            FillValue::Literal(v) => Some(v.as_str()),
            FillValue::Input(_) => None,
        })
        .collect();
    match action {
        Action::Select { option, .. } => values.push(option),
        Action::Slide { moves } => values.extend(moves.iter().map(|m| m.value.as_str())),
        _ => {}
    }
    values
}

/// The names of the controls a step clicks (what a word of the goal may name).
fn clicked_names(action: &Action) -> Vec<&str> {
    match action {
        Action::Click { target } | Action::Repeat { target, .. } | Action::Hover { target } => {
            vec![target.name.as_str()]
        }
        Action::Check { targets } => targets.iter().map(|t| t.name.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// The keys of the items a step's clicked controls sit in ([`Locator::InItem`]): a word of
/// the goal there names the row, not the control ("Which country is Mombasa in?" clicking
/// the country link in Mombasa's row).
fn item_keys(action: &Action) -> Vec<&str> {
    match action {
        Action::Click { target } | Action::Repeat { target, .. } | Action::Hover { target } => {
            target.item().map(|(key, _)| key).into_iter().collect()
        }
        Action::Check { targets } => targets
            .iter()
            .filter_map(|t| t.item())
            .map(|(k, _)| k)
            .collect(),
        _ => Vec::new(),
    }
}

/// The inputs a step types, by name.
fn step_inputs(action: &Action) -> Vec<&str> {
    typed(action)
        .into_iter()
        .filter_map(|v| match v {
            FillValue::Input(name) => Some(name.as_str()),
            FillValue::Literal(_) => None,
        })
        .collect()
}

/// The value of the goal a clicked control's name is: the name (a trailing count such as
/// `12` or `(12)` aside) found whole in the goal, outside its quoted strings, and not only
/// command words. A name that merely shares a word with the goal (`Add group` for "add a
/// group") is part of the workflow, not a value.
fn goal_words_in_name(goal: &str, quoted: &[std::ops::Range<usize>], name: &str) -> Option<String> {
    let mut words: Vec<&str> = name
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    while words.len() > 1
        && words
            .last()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
    {
        words.pop();
    }
    if words.is_empty()
        || words.len() > MAX_WORD_VALUE_WORDS
        || words
            .iter()
            .all(|w| COMMAND_WORDS.contains(&w.to_lowercase().as_str()))
        || words.iter().all(|w| w.chars().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let value = words.join(" ");
    let at = find_words(goal, &value)?;
    (at > 0 && !quoted.iter().any(|q| q.contains(&at)))
        .then(|| goal[at..at + value.len()].to_owned())
}

impl GoalTemplate {
    /// The template of a goal whose success took `steps`, with the task's `inputs` (only
    /// their names are kept). Literal values that equal an input's value are the input's.
    pub fn of(
        goal: &str,
        steps: &[Action],
        inputs: &BTreeMap<String, String>,
    ) -> Result<GoalTemplate, RecallError> {
        let quoted = quoted_spans(goal);
        // Slot values with their first position in the goal.
        let mut slots: Vec<(usize, ParameterKind, String)> = quoted
            .iter()
            .map(|r| (r.start, ParameterKind::Quoted, goal[r.clone()].to_owned()))
            .collect();
        let mut add_word = |value: String, at: usize| {
            let taken = slots
                .iter()
                .any(|(_, _, v)| v.eq_ignore_ascii_case(&value) || v.contains(&value));
            if !taken {
                slots.push((at, ParameterKind::Word, value));
            }
        };
        for action in steps {
            for value in step_values(action) {
                if inputs.values().any(|v| v == value) {
                    continue;
                }
                let words = value.split_whitespace().count();
                if (1..=MAX_WORD_VALUE_WORDS).contains(&words)
                    && let Some(at) = find_words(goal, value.trim())
                    && !quoted.iter().any(|q| q.contains(&at))
                {
                    add_word(goal[at..at + value.trim().len()].to_owned(), at);
                } else if let Some((at, phrase)) =
                    spelled_numbers(goal).into_iter().find(|(at, phrase)| {
                        crate::amount::spelled(phrase).as_deref() == Some(value.trim())
                            && !quoted.iter().any(|q| q.contains(at))
                    })
                {
                    // "5 million" typed as 5000000: the phrase is the value.
                    add_word(phrase, at);
                }
            }
            for name in clicked_names(action).into_iter().chain(item_keys(action)) {
                if let Some(value) = goal_words_in_name(goal, &quoted, name)
                    && let Some(at) = find_words(goal, &value)
                {
                    add_word(value, at);
                }
            }
        }
        let mut names: Vec<&str> = steps.iter().flat_map(step_inputs).collect();
        names.sort_unstable();
        names.dedup();
        // Where the goal names an input the steps type (not a credential's value), that
        // place is the input's slot.
        let mut input_slots: Vec<(usize, usize, &str)> = Vec::new();
        for name in &names {
            let Some(value) = inputs.get(*name) else {
                continue;
            };
            if matches!(
                crate::credential::Credential::of(name),
                Some(crate::credential::Credential::Secret { .. })
            ) || value.trim().len() < 3
            {
                continue;
            }
            if let Some(at) = find_words(goal, value.trim())
                && !quoted.iter().any(|q| q.contains(&at))
                && !slots
                    .iter()
                    .any(|(s, _, v)| at < s + v.len() && *s < at + value.trim().len())
            {
                input_slots.push((at, value.trim().len(), name));
            }
        }
        let mut placed: Vec<(usize, usize, Parameter)> = slots
            .iter()
            .map(|(at, kind, value)| {
                (
                    *at,
                    value.len(),
                    Parameter {
                        kind: *kind,
                        value: value.clone(),
                    },
                )
            })
            .chain(input_slots.iter().map(|(at, len, name)| {
                (
                    *at,
                    *len,
                    Parameter {
                        kind: ParameterKind::Input,
                        value: (*name).to_owned(),
                    },
                )
            }))
            .collect();
        placed.sort_by_key(|(at, _, _)| *at);
        let mut parameters: Vec<Parameter> = placed.iter().map(|(_, _, p)| p.clone()).collect();
        for name in names {
            if !parameters
                .iter()
                .any(|p| p.kind == ParameterKind::Input && p.value == name)
            {
                parameters.push(Parameter {
                    kind: ParameterKind::Input,
                    value: name.to_owned(),
                });
            }
        }
        if parameters.len() > MAX_PARAMETERS {
            return Err(RecallError::Parameters(parameters.len()));
        }
        // Input slots by their place: the template never holds an input's value.
        let input_ranges: Vec<(std::ops::Range<usize>, usize)> = placed
            .iter()
            .enumerate()
            .filter(|(_, (_, _, p))| p.kind == ParameterKind::Input)
            .map(|(i, (at, len, _))| (*at..*at + *len, i))
            .collect();
        Ok(GoalTemplate {
            text: slotted(goal, &parameters, &input_ranges),
            parameters,
        })
    }

    /// The template's words with the slots left out: what is embedded to compare two goals
    /// with their values set aside.
    pub fn words(&self) -> String {
        let mut out = String::new();
        for piece in pieces(&self.text) {
            if let Piece::Text(text) = piece {
                out.push_str(&text);
                out.push(' ');
            }
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The values a goal gives the template's slots, when the goal is the template with
    /// other values (letter case, spacing and a final `.`, `!` or `?` aside); `None` otherwise.
    pub fn bind(&self, goal: &str) -> Option<Vec<String>> {
        let mut pattern = String::from("(?is)^\\s*");
        for piece in pieces(trim_end(&self.text)) {
            match piece {
                Piece::Text(text) => {
                    for (i, word) in text.split_whitespace().enumerate() {
                        if i > 0 || text.starts_with(char::is_whitespace) {
                            pattern.push_str("\\s+");
                        }
                        pattern.push_str(&regex::escape(word));
                    }
                    if text.ends_with(char::is_whitespace) && !text.trim().is_empty() {
                        pattern.push_str("\\s+");
                    }
                }
                Piece::Slot(_) => pattern.push_str("(.+?)"),
            }
        }
        pattern.push_str("\\s*$");
        let regex = regex::RegexBuilder::new(&pattern)
            .size_limit(1 << 20)
            .build()
            .ok()?;
        let captures = regex.captures(trim_end(goal))?;
        // A slot the text lacks keeps its old value; a slot used twice must get one value.
        let mut values: Vec<String> = self.parameters.iter().map(|p| p.value.clone()).collect();
        let mut given = vec![false; values.len()];
        let slots = pieces(trim_end(&self.text))
            .into_iter()
            .filter_map(|p| match p {
                Piece::Slot(i) => Some(i),
                Piece::Text(_) => None,
            });
        for (capture, slot) in slots.enumerate() {
            let value = captures.get(capture + 1)?.as_str().trim().to_owned();
            let parameter = self.parameters.get(slot)?;
            // A word of the goal or an input's value it names ("as alice") is a few words:
            // a slot at the goal's end must not swallow another need ("Log in as {username}"
            // is not "Log in as alice and report a new bug").
            if value.is_empty()
                || matches!(parameter.kind, ParameterKind::Word | ParameterKind::Input)
                    && value.split_whitespace().count() > MAX_WORD_VALUE_WORDS
            {
                return None;
            }
            if given[slot] {
                if !values[slot].eq_ignore_ascii_case(&value) {
                    return None;
                }
                continue;
            }
            given[slot] = true;
            values[slot] = value;
        }
        Some(values)
    }

    /// The values a goal's *first part* gives the template, when the goal begins with the
    /// template (with other values) and goes on with another need after a clause break: "Log
    /// in as bob and set the status of issue 4" begins with "Log in as {0}". The break is
    /// ` and `, ` then `, `, ` or `; ` ([`CLAUSE_BREAKS`]); the longest first part that binds
    /// wins. `None` when no proper first part binds (the whole goal is [`GoalTemplate::bind`]'s).
    pub fn bind_first_part(&self, goal: &str) -> Option<Vec<String>> {
        let lower = goal.to_ascii_lowercase();
        let mut ends: Vec<usize> = CLAUSE_BREAKS
            .iter()
            .flat_map(|b| lower.match_indices(b).map(|(i, _)| i))
            .filter(|&i| i > 0)
            .collect();
        ends.sort_unstable();
        ends.dedup();
        // A break inside a quoted value is no break.
        let quoted = quoted_spans(goal);
        ends.into_iter()
            .rev()
            .filter(|i| !quoted.iter().any(|q| q.contains(i)))
            .filter_map(|i| goal.get(..i))
            .map(|part| part.trim_end_matches([',', ';', ' ']))
            .find_map(|part| self.bind(part))
    }

    /// Values for the one-word slots read by the word before each in the template: "issue
    /// {0}" finds "issue 4" in a goal of another need that names a thing of the same kind
    /// (a number binds only a number). `None` for a slot the goal does not name so, an
    /// input's or a quoted one's, or one whose word before is short ("to", "as": no kind).
    pub fn bind_by_context(&self, goal: &str) -> Vec<Option<String>> {
        let pieces = pieces(trim_end(&self.text));
        let bare = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned();
        let goal_words: Vec<String> = goal.split_whitespace().map(bare).collect();
        let mut out = vec![None; self.parameters.len()];
        for (k, piece) in pieces.iter().enumerate() {
            let Piece::Slot(slot) = piece else {
                continue;
            };
            let Some(parameter) = self.parameters.get(*slot) else {
                continue;
            };
            let before = match k.checked_sub(1).and_then(|p| pieces.get(p)) {
                Some(Piece::Text(before)) if before.ends_with(char::is_whitespace) => before,
                _ => continue,
            };
            let context = before
                .split_whitespace()
                .last()
                .map(bare)
                .unwrap_or_default();
            if parameter.kind != ParameterKind::Word
                || parameter.value.split_whitespace().count() != 1
                || context.chars().count() < MIN_CONTEXT_CHARS
                || !context.chars().all(char::is_alphabetic)
            {
                continue;
            }
            let numeric = |v: &str| v.chars().all(|c| c.is_ascii_digit());
            let wants_number = numeric(&parameter.value);
            out[*slot] = goal_words.windows(2).find_map(|w| {
                (w[0].eq_ignore_ascii_case(&context)
                    && !w[1].is_empty()
                    && (!wants_number || numeric(&w[1])))
                .then(|| w[1].clone())
            });
        }
        out
    }

    /// Values for the slots taken from a goal's quoted strings, in order: for a goal that is
    /// alike (by its vector) but not the template's words exactly. Only when no slot is a
    /// plain word and the quoted counts agree. One value per parameter (an input's is its
    /// name).
    pub fn bind_quoted(&self, goal: &str) -> Option<Vec<String>> {
        if self
            .parameters
            .iter()
            .any(|p| p.kind == ParameterKind::Word)
        {
            return None;
        }
        let mut quoted = quoted_spans(goal);
        quoted.sort_by_key(|r| r.start);
        let wanted = self
            .parameters
            .iter()
            .filter(|p| p.kind == ParameterKind::Quoted)
            .count();
        if quoted.len() != wanted {
            return None;
        }
        let mut given = quoted.into_iter().map(|r| goal[r].to_owned());
        self.parameters
            .iter()
            .map(|p| match p.kind {
                ParameterKind::Quoted => given.next(),
                _ => Some(p.value.clone()),
            })
            .collect()
    }
}

fn trim_end(text: &str) -> &str {
    text.trim_end().trim_end_matches(['.', '!', '?']).trim_end()
}

enum Piece {
    Text(String),
    Slot(usize),
}

/// A template's text split into literal text and slots.
fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                    digits.push(d);
                    chars.next();
                }
                if chars.peek() == Some(&'}')
                    && let Ok(i) = digits.parse()
                {
                    chars.next();
                    if !literal.is_empty() {
                        out.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    out.push(Piece::Slot(i));
                } else {
                    literal.push('{');
                    literal.push_str(&digits);
                }
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        out.push(Piece::Text(literal));
    }
    out
}

/// The goal with every occurrence of a slot parameter's value replaced by its slot (an
/// input's slots are given by place: `inputs`).
fn slotted(
    goal: &str,
    parameters: &[Parameter],
    inputs: &[(std::ops::Range<usize>, usize)],
) -> String {
    // Byte ranges of the goal → slot index, left to right, not overlapping.
    let mut taken: Vec<(std::ops::Range<usize>, usize)> = inputs.to_vec();
    let quoted = quoted_spans(goal);
    for (i, p) in parameters.iter().enumerate() {
        match p.kind {
            ParameterKind::Input => continue,
            ParameterKind::Quoted => {
                for r in quoted.iter().filter(|r| goal[(*r).clone()] == p.value) {
                    taken.push((r.clone(), i));
                }
            }
            ParameterKind::Word => {
                let mut from = 0;
                while let Some(at) = find_words(&goal[from..], &p.value).map(|a| a + from) {
                    let range = at..at + p.value.len();
                    if !taken
                        .iter()
                        .any(|(r, _)| r.start < range.end && range.start < r.end)
                        && !quoted.iter().any(|q| q.contains(&at))
                    {
                        taken.push((range.clone(), i));
                    }
                    from = range.end;
                }
            }
        }
    }
    taken.sort_by_key(|(r, _)| r.start);
    let mut out = String::new();
    let mut at = 0;
    for (range, slot) in taken {
        if range.start < at {
            continue;
        }
        out.push_str(&escape_braces(&goal[at..range.start]));
        out.push_str(&format!("{{{slot}}}"));
        at = range.end;
    }
    out.push_str(&escape_braces(&goal[at..]));
    out
}

fn escape_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

impl RememberedWorkflow {
    /// Remembers a verified success: its steps with their risk classes, parametrized by its
    /// goal and the task's inputs.
    #[allow(clippy::too_many_arguments)]
    pub fn remember(
        goal: &str,
        start_url: &str,
        steps: &[(Action, RiskClass)],
        inputs: &BTreeMap<String, String>,
        embedder: EmbedderId,
        vector: Vec<f32>,
        found_by: String,
        verified_by: String,
        learned_at: u64,
    ) -> Result<RememberedWorkflow, RecallError> {
        if steps.is_empty() || steps.len() > MAX_RECALLED_STEPS {
            return Err(RecallError::Steps(steps.len()));
        }
        let actions: Vec<Action> = steps
            .iter()
            .map(|(a, _)| inputs_by_name(a.clone(), inputs))
            .collect();
        let template = GoalTemplate::of(goal, &actions, inputs)?;
        let steps = actions
            .into_iter()
            .zip(steps.iter().map(|(_, r)| *r))
            .map(|(action, risk)| {
                let uses = template
                    .parameters
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| uses_parameter(&action, p))
                    .map(|(i, _)| i as u32)
                    .collect();
                RememberedStep { action, risk, uses }
            })
            .collect();
        Ok(RememberedWorkflow {
            version: RECALL_VERSION,
            site: site_of(start_url),
            start_url: start_url.to_owned(),
            mounted: false,
            template,
            steps,
            embedder,
            vector,
            found_by,
            verified_by,
            learned_at,
        })
    }

    /// Its identity: the digest of its site, template and steps.
    pub fn id(&self) -> Digest32 {
        let steps = serde_json::to_vec(&self.steps).unwrap_or_default();
        let mut bytes = Vec::with_capacity(steps.len() + 256);
        bytes.extend_from_slice(self.site.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(self.template.text.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&steps);
        Digest32::of(&bytes)
    }

    /// Checks what a reader relies on: the version, the step count, the parameters the steps
    /// name.
    pub fn check(&self) -> Result<(), RecallError> {
        if self.version != RECALL_VERSION {
            return Err(RecallError::Version(self.version));
        }
        if self.steps.is_empty() || self.steps.len() > MAX_RECALLED_STEPS {
            return Err(RecallError::Steps(self.steps.len()));
        }
        if self.template.parameters.len() > MAX_PARAMETERS {
            return Err(RecallError::Parameters(self.template.parameters.len()));
        }
        for (i, step) in self.steps.iter().enumerate() {
            if let Some(&parameter) = step
                .uses
                .iter()
                .find(|&&u| u as usize >= self.template.parameters.len())
            {
                return Err(RecallError::Dangling {
                    step: i + 1,
                    parameter,
                });
            }
        }
        Ok(())
    }

    /// Its first `n` steps, each parameter that `rebound` gives a value (by index, from
    /// [`GoalTemplate::bind_by_context`]) set to it and every other value as it is, their
    /// URLs moved to the origin of `start_url` as [`RememberedWorkflow::bind`] moves them.
    pub fn first_steps(
        &self,
        n: usize,
        rebound: &[Option<String>],
        start_url: &str,
    ) -> Vec<(Action, RiskClass)> {
        let moved = origin_of(&self.start_url)
            .zip(origin_of(start_url))
            .filter(|(old, new)| old != new);
        let parameters = &self.template.parameters;
        self.steps
            .iter()
            .take(n)
            .map(|step| {
                let mut action = step.action.clone();
                for &u in &step.uses {
                    if let (Some(parameter), Some(Some(new))) =
                        (parameters.get(u as usize), rebound.get(u as usize))
                        && parameter.kind != ParameterKind::Input
                        && parameter.value != *new
                    {
                        substitute_value_of(&mut action, &parameter.value, new);
                    }
                }
                if let Some((old, new)) = &moved {
                    rebase(&mut action, old, new);
                }
                (action, step.risk)
            })
            .collect()
    }

    /// The highest risk class of its steps.
    pub fn risk(&self) -> RiskClass {
        self.steps
            .iter()
            .map(|s| s.risk)
            .max()
            .unwrap_or(RiskClass::ReadOnly)
    }

    /// The steps with the slots' new `values` (from [`GoalTemplate::bind`]) put where the old
    /// ones were, and URLs on the start URL's origin moved to the origin of `start_url` (one
    /// family served elsewhere); `None` when the task lacks an input the steps type.
    pub fn bind(
        &self,
        values: &[String],
        inputs: &BTreeMap<String, String>,
        start_url: &str,
    ) -> Option<Vec<(Action, RiskClass)>> {
        let moved = origin_of(&self.start_url)
            .zip(origin_of(start_url))
            .filter(|(old, new)| old != new);
        let parameters = &self.template.parameters;
        if parameters
            .iter()
            .any(|p| p.kind == ParameterKind::Input && !inputs.contains_key(&p.value))
        {
            return None;
        }
        let steps = self
            .steps
            .iter()
            .map(|step| {
                let mut action = step.action.clone();
                for &u in &step.uses {
                    let (Some(parameter), Some(new)) =
                        (parameters.get(u as usize), values.get(u as usize))
                    else {
                        continue;
                    };
                    if parameter.kind != ParameterKind::Input && parameter.value != *new {
                        substitute_value_of(&mut action, &parameter.value, new);
                    }
                }
                if let Some((old, new)) = &moved {
                    rebase(&mut action, old, new);
                }
                (action, step.risk)
            })
            .collect();
        Some(steps)
    }
}

/// A literal that equals an input's value is that input (a value never kept).
fn inputs_by_name(mut action: Action, inputs: &BTreeMap<String, String>) -> Action {
    let by_name = |value: &mut FillValue| {
        if let FillValue::Literal(v) = value
            && let Some((name, _)) = inputs.iter().find(|(_, iv)| *iv == v)
        {
            *value = FillValue::Input(name.clone());
        }
    };
    match &mut action {
        Action::Fill { value, .. } => by_name(value),
        Action::FillForm { fields, .. } => fields.iter_mut().for_each(|f| by_name(&mut f.value)),
        _ => {}
    }
    action
}

fn uses_parameter(action: &Action, parameter: &Parameter) -> bool {
    match parameter.kind {
        ParameterKind::Input => step_inputs(action).contains(&parameter.value.as_str()),
        ParameterKind::Quoted | ParameterKind::Word => {
            let spelled = crate::amount::spelled(&parameter.value);
            step_values(action).iter().any(|v| {
                find_words(v, &parameter.value).is_some()
                    || spelled
                        .as_deref()
                        .is_some_and(|n| find_words(v, n).is_some())
            }) || clicked_names(action)
                .iter()
                .chain(&item_keys(action))
                .any(|n| find_words(n, &parameter.value).is_some())
        }
    }
}

/// Replaces the whole-word occurrences of `old` in `text` (any letter case) with `new`.
fn replace_words(text: &str, old: &str, new: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = find_words(rest, old) {
        out.push_str(&rest[..at]);
        out.push_str(new);
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

/// A URL with the old value replaced as URLs carry it (raw, `+` for spaces, percent-encoded).
fn replace_in_url(url: &str, old: &str, new: &str) -> String {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let mut out = url.replace(&encode(old), &encode(new));
    let percent = |s: &str| encode(s).replace('+', "%20");
    out = out.replace(&percent(old), &percent(new));
    replace_words(&out, old, new)
}

fn substitute_target(target: &mut Target, old: &str, new: &str) {
    let named = find_words(&target.name, old).is_some();
    let keyed = target
        .item()
        .is_some_and(|(key, _)| find_words(key, old).is_some());
    if !named && !keyed {
        return;
    }
    if named {
        target.name = replace_words(&target.name, old, new);
    } else {
        // Only the item it sits in was the value: its name is the old control's (the old
        // row's country), not known for the new one.
        target.name.clear();
    }
    // Positional locators would find the old control: the new one is found by its name, or
    // by the item that carries the new value.
    target.locators.retain_mut(|locator| match locator {
        Locator::Css(_) | Locator::Near { .. } => false,
        Locator::Role { name, .. } => {
            *name = replace_words(name, old, new);
            named
        }
        Locator::Text(text) => {
            *text = replace_words(text, old, new);
            named
        }
        Locator::InItem { key, .. } => {
            let carried = find_words(key, old).is_some();
            *key = replace_words(key, old, new);
            carried
        }
        // What the record is about is no value of the goal's slots.
        Locator::Described { .. } => true,
    });
    if target.locators.is_empty() {
        target.locators.push(Locator::Text(target.name.clone()));
    }
    let declared = target.sends.clone();
    substitute_sends(&mut target.sends, old, new);
    // An address that did not carry the old value (a slug, an id) is the old control's: the
    // new one's is not known, and a step must not fall back on it (a missing link is
    // followed by its declared address).
    if old != new && target.sends == declared && !matches!(declared, Sends::Unknown) {
        target.sends = Sends::Unknown;
    }
}

fn substitute_sends(sends: &mut Sends, old: &str, new: &str) {
    match sends {
        Sends::Get { url } | Sends::Post { url } => *url = replace_in_url(url, old, new),
        _ => {}
    }
}

fn substitute_value(value: &mut FillValue, old: &str, new: &str) {
    if let FillValue::Literal(v) = value {
        *v = replace_words(v, old, new);
    }
}

/// Moves the URLs an action declares or goes to from origin `old` to origin `new`.
fn rebase(action: &mut Action, old: &str, new: &str) {
    let moved = |url: &mut String| {
        if let Some(rest) = url.strip_prefix(old)
            && (rest.is_empty() || rest.starts_with(['/', '?', '#']))
        {
            *url = format!("{new}{rest}");
        }
    };
    let sends = |sends: &mut Sends| match sends {
        Sends::Get { url } | Sends::Post { url } => moved(url),
        _ => {}
    };
    match action {
        Action::Navigate { url } => moved(url),
        Action::FillForm { fields, submit } => {
            fields.iter_mut().for_each(|f| sends(&mut f.target.sends));
            if let Some(submit) = submit {
                sends(&mut submit.sends);
            }
        }
        Action::Check { targets } => targets.iter_mut().for_each(|t| sends(&mut t.sends)),
        Action::Slide { moves } => moves.iter_mut().for_each(|m| sends(&mut m.target.sends)),
        Action::Click { target }
        | Action::Fill { target, .. }
        | Action::Select { target, .. }
        | Action::Scroll { target, .. }
        | Action::Repeat { target, .. }
        | Action::Hover { target } => sends(&mut target.sends),
        Action::Press { .. } | Action::Back | Action::Done => {}
    }
}

/// Puts `new` where `old` stood in an action's values, clicked names and declared URLs.
/// Puts a parameter's `new` value where its `old` one was, and where a number the old one
/// spells was typed ("5 million" typed as 5000000), the number the new one spells.
fn substitute_value_of(action: &mut Action, old: &str, new: &str) {
    substitute(action, old, new);
    if let (Some(old), Some(new)) = (crate::amount::spelled(old), crate::amount::spelled(new)) {
        substitute(action, &old, &new);
    }
}

/// The amounts a goal spells with their magnitude ("5 million", "2.5k"), with their byte
/// positions ([`crate::amount::spelled`]).
fn spelled_numbers(goal: &str) -> Vec<(usize, String)> {
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut start = None;
    for (i, c) in goal.char_indices().chain([(goal.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                let word = goal[s..i].trim_end_matches(|c: char| !c.is_alphanumeric());
                words.push((s, word));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, &(at, word)) in words.iter().enumerate() {
        let pair = words
            .get(k + 1)
            .and_then(|&(next, magnitude)| goal.get(at..next + magnitude.len()));
        if let Some(phrase) = pair.filter(|p| crate::amount::spelled(p).is_some()) {
            out.push((at, phrase.to_owned()));
        } else if crate::amount::spelled(word).is_some() {
            out.push((at, word.to_owned()));
        }
    }
    out
}

fn substitute(action: &mut Action, old: &str, new: &str) {
    match action {
        Action::Click { target } | Action::Repeat { target, .. } | Action::Hover { target } => {
            substitute_target(target, old, new)
        }
        Action::Check { targets } => targets
            .iter_mut()
            .for_each(|t| substitute_target(t, old, new)),
        Action::Fill { target, value, .. } => {
            substitute_value(value, old, new);
            substitute_sends(&mut target.sends, old, new);
        }
        Action::FillForm { fields, submit } => {
            for field in fields.iter_mut() {
                substitute_value(&mut field.value, old, new);
            }
            if let Some(submit) = submit {
                substitute_sends(&mut submit.sends, old, new);
            }
        }
        Action::Select { option, .. } => *option = replace_words(option, old, new),
        Action::Slide { moves } => {
            for m in moves.iter_mut() {
                m.value = replace_words(&m.value, old, new);
            }
        }
        Action::Navigate { url } => *url = replace_in_url(url, old, new),
        Action::Press { .. } | Action::Back | Action::Done | Action::Scroll { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::FieldValue;
    use proptest::prelude::*;

    fn target(role: &str, name: &str) -> Target {
        Target {
            locators: vec![
                Locator::Css(format!("main > {role}:nth-of-type(3)")),
                Locator::Role {
                    role: role.into(),
                    name: name.into(),
                },
                Locator::Text(name.into()),
            ],
            role: role.into(),
            name: name.into(),
            sends: Sends::Unknown,
        }
    }

    fn click(name: &str) -> Action {
        Action::Click {
            target: target("link", name),
        }
    }

    /// Remembers `steps` with a test embedder and no peers.
    fn remember_on(
        goal: &str,
        start_url: &str,
        steps: &[(Action, RiskClass)],
        inputs: &BTreeMap<String, String>,
    ) -> Result<RememberedWorkflow, RecallError> {
        RememberedWorkflow::remember(
            goal,
            start_url,
            steps,
            inputs,
            crate::wire::EmbedderId {
                name: "ngram".into(),
                digest: Digest32::of(b"test"),
                dim: 1,
            },
            vec![1.0],
            String::new(),
            String::new(),
            0,
        )
    }

    fn no_inputs() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    fn remember(goal: &str, steps: Vec<Action>) -> RememberedWorkflow {
        let steps: Vec<(Action, RiskClass)> = steps
            .into_iter()
            .map(|a| (a, RiskClass::ReadOnly))
            .collect();
        remember_on(goal, "http://127.0.0.1:8000/admin/", &steps, &no_inputs())
            .expect("a success to remember")
    }

    #[test]
    fn quoted_values_become_slots_and_bind_to_other_values() {
        let fill = Action::FillForm {
            fields: vec![FieldValue {
                target: target("textbox", "Name"),
                value: FillValue::Literal("editors".into()),
                select: false,
            }],
            submit: Some(target("button", "Save")),
        };
        let memory = remember(
            "Add a new group named \"editors\"",
            vec![click("Groups"), click("Add group"), fill],
        );
        assert_eq!(memory.template.text, "Add a new group named \"{0}\"");
        assert_eq!(memory.template.parameters[0].kind, ParameterKind::Quoted);
        assert_eq!(memory.steps[2].uses, vec![0]);
        let values = memory
            .template
            .bind("add a new group  named \"reviewers\".")
            .expect("the same template");
        assert_eq!(values, vec!["reviewers".to_owned()]);
        let bound = memory
            .bind(&values, &no_inputs(), "http://127.0.0.1:8000/admin/")
            .expect("no inputs needed");
        let Action::FillForm { fields, .. } = &bound[2].0 else {
            panic!("a form fill");
        };
        assert_eq!(fields[0].value, FillValue::Literal("reviewers".into()));
        // Steps that use no value are the success's own.
        assert_eq!(bound[0].0, memory.steps[0].action);
        // Another task is no variant.
        assert_eq!(
            memory.template.bind("delete the group named \"reviewers\""),
            None
        );
    }

    #[test]
    fn a_number_is_bound_by_the_word_before_it_in_a_goal_of_another_need() {
        let open = |number: &str| Action::FillForm {
            fields: vec![FieldValue {
                target: target("textbox", "@number"),
                value: FillValue::Literal(number.into()),
                select: false,
            }],
            submit: Some(target("button", "Show issue:")),
        };
        let memory = remember(
            "raise the priority of issue 3 to urgent",
            vec![open("3"), click("urgent")],
        );
        assert_eq!(memory.steps[0].uses.len(), 1, "{:?}", memory.template);
        let slot = memory.steps[0].uses[0] as usize;
        // Another need, the same kind of thing named: "issue 4".
        let rebound = memory
            .template
            .bind_by_context("set the status of issue 4 to deferred");
        assert_eq!(rebound.len(), memory.template.parameters.len());
        assert_eq!(rebound[slot].as_deref(), Some("4"));
        // "to urgent" says nothing of what "deferred" would be: not bound.
        assert!(
            rebound
                .iter()
                .enumerate()
                .all(|(i, v)| i == slot || v.is_none()),
            "{rebound:?}"
        );
        let steps = memory.first_steps(1, &rebound, "http://127.0.0.1:8000/admin/");
        assert_eq!(steps[0].0, open("4"));
        // A number binds a number only; a goal that does not name the kind binds nothing.
        let none = memory.template.bind_by_context("close issue four");
        assert!(none.iter().all(Option::is_none), "{none:?}");
        let none = memory.template.bind_by_context("show me ticket 4");
        assert!(none.iter().all(Option::is_none), "{none:?}");
    }

    #[test]
    fn a_word_of_the_goal_a_step_clicked_is_a_parameter_and_its_control_is_found_by_name() {
        let mut facet = click("Peru");
        if let Action::Click { target } = &mut facet {
            target.sends = Sends::Get {
                url: "http://127.0.0.1:8001/db/cities?country=Peru".into(),
            };
        }
        let memory = remember(
            "Show me only the cities that are in Peru",
            vec![click("cities"), facet],
        );
        // "cities" names the table (a word of the goal too): both are values of this goal.
        assert!(
            memory.template.text.ends_with("in {1}"),
            "{}",
            memory.template.text
        );
        let values = memory
            .template
            .bind("show me only the cities that are in New Zealand")
            .expect("the same template");
        assert_eq!(values[1], "New Zealand");
        let bound = memory
            .bind(&values, &no_inputs(), "http://127.0.0.1:8000/admin/")
            .expect("bound");
        let Action::Click { target } = &bound[1].0 else {
            panic!("a click");
        };
        assert_eq!(target.name, "New Zealand");
        assert!(
            target
                .locators
                .iter()
                .all(|l| !matches!(l, Locator::Css(_) | Locator::Near { .. })),
            "positional locators would find the old control: {:?}",
            target.locators
        );
        assert_eq!(
            target.sends,
            Sends::Get {
                url: "http://127.0.0.1:8001/db/cities?country=New+Zealand".into()
            }
        );
    }

    #[test]
    fn an_address_without_the_value_is_the_old_controls_and_is_dropped() {
        let mut desk = click("Walnut desk");
        if let Action::Click { target } = &mut desk {
            target.sends = Sends::Get {
                url: "http://127.0.0.1:8001/item/walnut-desk".into(),
            };
        }
        let memory = remember("Check delivery of the \"Walnut desk\"", vec![desk]);
        let values = memory
            .template
            .bind("Check delivery of the \"Bench\"")
            .expect("the same template");
        let bound = memory
            .bind(&values, &no_inputs(), "http://127.0.0.1:8001/")
            .expect("bound");
        let Action::Click { target } = &bound[0].0 else {
            panic!("a click");
        };
        assert_eq!(target.name, "Bench");
        assert_eq!(
            target.sends,
            Sends::Unknown,
            "not the walnut desk's address"
        );
    }

    #[test]
    fn a_word_of_the_goal_naming_the_row_is_a_parameter_and_the_control_is_found_in_the_new_row() {
        let mut country = click("Kenya");
        if let Action::Click { target } = &mut country {
            target.locators.push(Locator::InItem {
                key: "Mombasa".into(),
                role: "link".into(),
                nth: 2,
            });
            target.sends = Sends::Get {
                url: "http://127.0.0.1:8001/world/countries/KE".into(),
            };
        }
        let memory = remember(
            "Which country is Mombasa in? Take me to that country's page",
            vec![country],
        );
        assert_eq!(memory.template.parameters.len(), 1, "{:?}", memory.template);
        assert_eq!(memory.template.parameters[0].value, "Mombasa");
        assert_eq!(memory.steps[0].uses, vec![0]);
        let values = memory
            .template
            .bind("Which country is Hamburg in? Take me to that country's page")
            .expect("the same template");
        let bound = memory
            .bind(&values, &no_inputs(), "http://127.0.0.1:8001/world/cities")
            .expect("bound");
        let Action::Click { target } = &bound[0].0 else {
            panic!("a click");
        };
        // Kenya is the old row's answer: only the row's key is known for Hamburg.
        assert_eq!(
            target.locators,
            vec![Locator::InItem {
                key: "Hamburg".into(),
                role: "link".into(),
                nth: 2,
            }]
        );
        assert_eq!(target.name, "");
        assert_eq!(target.sends, Sends::Unknown, "not Kenya's address");
        assert_eq!(bound[0].0.label(), "click the link in \"Hamburg\"'s item");
        // A row key that is no word of the goal is no parameter, and the step is kept as is.
        let memory = remember("Open Kenya's page", vec![click("Kenya")]);
        assert!(
            memory
                .template
                .parameters
                .iter()
                .all(|p| p.value != "Mombasa")
        );
    }

    #[test]
    fn command_words_and_inputs_are_no_slots_and_input_values_are_never_kept() {
        let mut inputs = BTreeMap::new();
        inputs.insert("password".to_owned(), "hunter2".to_owned());
        let login = Action::FillForm {
            fields: vec![FieldValue {
                target: target("textbox", "Password"),
                value: FillValue::Literal("hunter2".into()),
                select: false,
            }],
            submit: Some(target("button", "Log in")),
        };
        let steps = vec![
            (login, RiskClass::AuthenticatedRead),
            (click("Add"), RiskClass::ReadOnly),
        ];
        let memory = remember_on(
            "log in and add a new bug",
            "http://127.0.0.1:9000/",
            &steps,
            &inputs,
        )
        .expect("remembered");
        assert_eq!(memory.template.text, "log in and add a new bug");
        assert_eq!(
            memory.template.parameters,
            vec![Parameter {
                kind: ParameterKind::Input,
                value: "password".into()
            }]
        );
        let text = serde_json::to_string(&memory).expect("json");
        assert!(!text.contains("hunter2"), "{text}");
        // A task without the input cannot use it.
        assert!(memory.bind(&[], &no_inputs(), "").is_none());
        assert!(memory.bind(&[], &inputs, "").is_some());
        assert_eq!(memory.risk(), RiskClass::AuthenticatedRead);
    }

    #[test]
    fn an_input_the_goal_names_is_a_slot_and_its_value_is_not_kept() {
        let mut inputs = BTreeMap::new();
        inputs.insert("username".to_owned(), "alice".to_owned());
        inputs.insert("password".to_owned(), "tulip garden 42".to_owned());
        let login = Action::FillForm {
            fields: vec![
                FieldValue {
                    target: target("textbox", "Username"),
                    value: FillValue::Input("username".into()),
                    select: false,
                },
                FieldValue {
                    target: target("textbox", "Password"),
                    value: FillValue::Input("password".into()),
                    select: false,
                },
            ],
            submit: Some(target("button", "Log in")),
        };
        let memory = remember_on(
            "Log in as alice and show me \"UI\" issues",
            "http://127.0.0.1:9000/",
            &[(login, RiskClass::AuthenticatedRead)],
            &inputs,
        )
        .expect("remembered");
        assert_eq!(
            memory.template.text,
            "Log in as {0} and show me \"{1}\" issues"
        );
        assert_eq!(memory.template.parameters[0].value, "username");
        let values = memory
            .template
            .bind("log in as bob and show me \"docs\" issues")
            .expect("another user, another keyword");
        assert_eq!(values[1], "docs");
        let text = serde_json::to_string(&memory).expect("json");
        assert!(!text.contains("alice") && !text.contains("tulip"), "{text}");
    }

    #[test]
    fn a_record_that_names_a_missing_parameter_is_refused() {
        let mut memory = remember("open \"Reports\"", vec![click("Reports")]);
        memory.check().expect("valid");
        memory.steps[0].uses.push(7);
        assert_eq!(
            memory.check(),
            Err(RecallError::Dangling {
                step: 1,
                parameter: 7
            })
        );
        memory.version = 9;
        assert_eq!(memory.check(), Err(RecallError::Version(9)));
    }

    #[test]
    fn an_input_slot_at_the_goals_end_does_not_swallow_another_need() {
        let mut inputs = BTreeMap::new();
        inputs.insert("username".to_owned(), "alice".to_owned());
        let login = Action::FillForm {
            fields: vec![FieldValue {
                target: target("textbox", "username"),
                value: FillValue::Literal("alice".into()),
                select: false,
            }],
            submit: Some(target("button", "Login")),
        };
        let memory = remember_on(
            "Log in as alice",
            "http://127.0.0.1:8802/tracker/",
            &[(login, RiskClass::AuthenticatedRead)],
            &inputs,
        )
        .expect("remembered");
        assert_eq!(memory.template.text, "Log in as {0}");
        assert_eq!(
            memory.template.bind("Log in as bob"),
            Some(vec!["bob".to_owned()])
        );
        assert_eq!(
            memory
                .template
                .bind("Log in as alice and report a new bug titled \"Export\""),
            None
        );
        // …but it is that goal's first part, with its value.
        assert_eq!(
            memory
                .template
                .bind_first_part("Log in as bob and report a new bug titled \"Export\""),
            Some(vec!["bob".to_owned()])
        );
        assert_eq!(
            memory
                .template
                .bind_first_part("log in as bob, then mark issue 2 as resolved."),
            Some(vec!["bob".to_owned()])
        );
        // The whole goal is no first part; a break inside a quoted value is no break; a goal
        // that begins otherwise has none.
        assert_eq!(memory.template.bind_first_part("Log in as bob"), None);
        assert_eq!(
            memory
                .template
                .bind_first_part("Log in as \"bob and carol\""),
            None
        );
        assert_eq!(
            memory
                .template
                .bind_first_part("Open issue 2 and log in as bob"),
            None
        );
    }

    #[test]
    fn an_amount_the_goal_spells_is_the_number_a_step_typed() {
        let filter = |value: &str| Action::FillForm {
            fields: vec![FieldValue {
                target: target("textbox", "population__gt"),
                value: FillValue::Literal(value.into()),
                select: false,
            }],
            submit: Some(target("button", "Apply")),
        };
        let memory = remember(
            "Show the cities with more than 5 million inhabitants",
            vec![filter("5000000")],
        );
        assert_eq!(
            memory.template.text,
            "Show the cities with more than {0} inhabitants"
        );
        let values = memory
            .template
            .bind("Show the cities with more than 2.5 million inhabitants")
            .expect("binds");
        let steps = memory
            .bind(&values, &no_inputs(), &memory.start_url)
            .expect("bound");
        assert_eq!(steps[0].0, filter("2500000"));
        assert_eq!(
            spelled_numbers("over 3 million, under 2 billion."),
            vec![(5, "3 million".to_owned()), (22, "2 billion".to_owned())]
        );
    }

    #[test]
    fn quoted_values_bind_by_position_for_an_alike_goal() {
        let memory = remember("open the report \"Q3\"", vec![click("Q3")]);
        assert_eq!(
            memory.template.bind_quoted("please show me report \"Q4\""),
            Some(vec!["Q4".to_owned()])
        );
        assert_eq!(memory.template.bind_quoted("show me the reports"), None);
        assert_eq!(memory.template.words(), "open the report \" \"");
    }

    #[test]
    fn a_family_served_elsewhere_gets_its_urls_moved() {
        let mut link = click("Groups");
        if let Action::Click { target } = &mut link {
            target.sends = Sends::Get {
                url: "http://127.0.0.1:8000/admin/auth/group/".into(),
            };
        }
        let navigate = Action::Navigate {
            url: "http://127.0.0.1:8000/admin/auth/group/add/".into(),
        };
        let memory = remember("open the groups", vec![link, navigate]);
        let bound = memory
            .bind(&[], &no_inputs(), "http://127.0.0.1:9100/admin/")
            .expect("bound");
        assert_eq!(
            bound[1].0,
            Action::Navigate {
                url: "http://127.0.0.1:9100/admin/auth/group/add/".into()
            }
        );
        let Action::Click { target } = &bound[0].0 else {
            panic!("a click");
        };
        assert_eq!(
            target.sends,
            Sends::Get {
                url: "http://127.0.0.1:9100/admin/auth/group/".into()
            }
        );
        assert_eq!(
            memory.first_steps(1, &[], "http://127.0.0.1:9100/")[0],
            bound[0]
        );
        let mut task = crate::task::TaskSpec::new("http://127.0.0.1:9100/admin/", "x", Vec::new());
        assert_eq!(site_key(&task), "http://127.0.0.1:9100/admin/");
        task.family = Some("django".into());
        assert_eq!(site_key(&task), "django/admin/");
    }

    #[test]
    fn sites_mask_digits_and_ignore_queries() {
        assert_eq!(
            site_of("http://127.0.0.1:8000/admin/auth/group/12/?q=x"),
            site_of("http://127.0.0.1:8000/admin/auth/group/7/")
        );
        assert_ne!(
            site_of("http://127.0.0.1:8000/admin/"),
            site_of("http://127.0.0.1:8001/admin/")
        );
    }

    proptest! {
        /// A goal made from a template with any quoted values binds back to exactly those
        /// values, and the template never holds them.
        #[test]
        fn templates_bind_the_values_they_were_filled_with(
            first in "[a-zA-Z][a-zA-Z0-9 ]{0,20}[a-zA-Z0-9]",
            second in "[a-zA-Z][a-zA-Z0-9 ]{0,20}[a-zA-Z0-9]",
        ) {
            let memory = remember(
                "Add a new group named \"editors\" to \"staff\"",
                vec![click("Add group")],
            );
            let goal = format!("Add a new group named \"{first}\" to \"{second}\"");
            let values = memory.template.bind(&goal);
            prop_assert_eq!(values, Some(vec![first.trim().to_owned(), second.trim().to_owned()]));
        }

        /// Templates survive any goal text: braces are escaped, binding never panics, and a
        /// goal binds to its own template's values.
        #[test]
        fn any_goal_binds_to_its_own_template(goal in "\\PC{1,80}") {
            let memory = remember_on(&goal,
                "http://127.0.0.1/",
                &[(click("x"), RiskClass::ReadOnly)],
                &no_inputs());
            if let Ok(memory) = memory {
                let values = memory.template.bind(&goal);
                if let Some(values) = values {
                    prop_assert_eq!(values.len(), memory.template.parameters.len());
                }
            }
        }
    }
}
