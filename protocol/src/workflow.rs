//! A compiled workflow (`workflow.json`, version [`WORKFLOW_VERSION`]): a winning trajectory
//! turned into deterministic steps that `forager replay` runs without search.
//!
//! Each step is the action as the search executed it, whose target carries a ranked chain of
//! locators (CSS path, role + accessible name, visible text, position relative to a stable
//! neighbour: replay falls back along it and records which one healed the step), and the
//! post-condition expected after it: the URL's path (a pattern: runs of digits may differ), the
//! page's main heading, and its fingerprint family (see [`crate::fingerprint::family`]).
//!
//! Task inputs stay parameters: a fill says which input it types (`FillValue::Input`), and the
//! values are given at replay (`--input NAME=VALUE`); no value is ever in the file. The compiler
//! is a pure function of the trajectory, so `forager verify` can compile it again and compare.
//!
//! A file is read by `Workflow::from_json` (size, version, then `Workflow::validate`, which names
//! the first bad field); `Workflow::check_inputs` refuses missing and unknown inputs by name.
//! [`compile`] takes the task, the steps and the reproducer's pages.

use crate::action::{Action, FillValue, Locator, Target};
use crate::fingerprint::{Fingerprint, mask_digits};
use crate::predicate::SuccessPredicate;
use crate::result::ResultStep;
use crate::risk::RiskClass;
use crate::task::{TaskError, TaskSpec};
use crate::wire::{PageInfo, TaskId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The version of `workflow.json` this build writes and reads.
pub const WORKFLOW_VERSION: u32 = 1;
/// The workflow's file name in a run directory.
pub const WORKFLOW_FILE: &str = "workflow.json";
/// Most steps a workflow may have.
pub const MAX_WORKFLOW_STEPS: usize = 256;
/// Largest workflow file read, in bytes.
pub const MAX_WORKFLOW_BYTES: usize = 4 << 20;
/// Compiled-size limit of a post-condition's URL pattern.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled workflow. See the module documentation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    /// [`WORKFLOW_VERSION`].
    pub version: u32,
    /// The id of the task it was compiled from.
    pub task_id: String,
    /// The task's goal.
    pub goal: String,
    /// Where the steps start.
    pub start_url: String,
    /// Origins besides the start URL's that the steps may reach.
    pub allowed_origins: Vec<String>,
    /// The seed of the pages' `Math.random` (and clock) the path was found with.
    pub seed: u64,
    /// Task inputs the steps type, by name: each must be given at replay.
    pub parameters: Vec<String>,
    /// What must hold after the last step.
    pub success: Vec<SuccessPredicate>,
    /// The steps, in order.
    pub steps: Vec<WorkflowStep>,
    /// The task's risk ceiling: a step above it runs at replay only with a consent
    /// (`forager replay --consent`) for it. Workflows without it predate consents and
    /// replay every step.
    #[serde(default = "no_ceiling")]
    pub risk_ceiling: RiskClass,
    /// The consents the run that found the steps was given (a record: a replay needs its
    /// own, which may have been revoked since).
    #[serde(default)]
    pub consents: Vec<crate::consent::SignedConsent>,
}

fn no_ceiling() -> RiskClass {
    RiskClass::Destructive
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowStep {
    /// 1-based position.
    pub index: u32,
    /// A human label of the action.
    pub label: String,
    /// The action; its targets carry the ranked locator chains.
    pub action: Action,
    /// Its risk class.
    pub risk: RiskClass,
    /// What must hold after it.
    pub expect: PostCondition,
}

/// What a step must leave behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostCondition {
    /// A regular expression the URL's path must match.
    pub url_path: String,
    /// Text the page must show (its main heading when it was recorded), if any.
    pub text: Option<String>,
    /// The fingerprint family the page must have, if known.
    pub family: Option<Fingerprint>,
    /// The exact state seen when it was recorded (for the record: a page may differ in details
    /// and still be the right one).
    pub fingerprint: Fingerprint,
}

/// Why a workflow cannot be compiled, read or run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkflowError {
    /// The file is larger than [`MAX_WORKFLOW_BYTES`].
    #[error("the workflow is {size} bytes, at most {limit} are read")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// It is not a workflow document.
    #[error("not a workflow document: {0}")]
    Format(String),
    /// Another version.
    #[error("workflow version {found}; this build reads version {WORKFLOW_VERSION}")]
    Version {
        /// The file's version.
        found: u32,
    },
    /// A field has a bad value.
    #[error("invalid workflow field `{field}`: {reason}")]
    InvalidField {
        /// The field (`steps[2].expect.url_path`, …).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// Parameters the steps need were not given.
    #[error("missing input{}: {} (give each with --input NAME=VALUE)", if .0.len() == 1 { "" } else { "s" }, .0.join(", "))]
    MissingInputs(Vec<String>),
    /// Inputs were given that no step uses.
    #[error("unknown input{}: {} (this workflow's parameters: {})", if .names.len() == 1 { "" } else { "s" }, .names.join(", "), if .parameters.is_empty() { "none".to_owned() } else { .parameters.join(", ") })]
    UnknownInputs {
        /// The names given.
        names: Vec<String>,
        /// The workflow's parameters.
        parameters: Vec<String>,
    },
    /// The trajectory cannot be compiled.
    #[error("cannot compile: {0}")]
    Compile(String),
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> WorkflowError {
    WorkflowError::InvalidField {
        field: field.into(),
        reason: reason.into(),
    }
}

/// The rank of a locator kind in a chain: CSS, role + name, text, relative position, item.
fn rank(locator: &Locator) -> u8 {
    match locator {
        Locator::Css(_) => 0,
        Locator::Role { .. } => 1,
        Locator::Text(_) => 2,
        Locator::Near { .. } => 3,
        Locator::InItem { .. } => 4,
        Locator::Described { .. } => 5,
    }
}

/// A target's chain ranked (CSS, role + name, text, relative position; stable within a kind)
/// without duplicates.
fn ranked(target: &Target) -> Target {
    let mut locators: Vec<Locator> = Vec::with_capacity(target.locators.len());
    for locator in &target.locators {
        if !locators.contains(locator) {
            locators.push(locator.clone());
        }
    }
    locators.sort_by_key(rank);
    Target {
        locators,
        role: target.role.clone(),
        name: target.name.clone(),
        sends: target.sends.clone(),
    }
}

/// The action with every target's chain ranked.
fn rank_targets(action: &Action) -> Action {
    match action {
        Action::Click { target } => Action::Click {
            target: ranked(target),
        },
        Action::Fill {
            target,
            value,
            enter,
        } => Action::Fill {
            target: ranked(target),
            value: value.clone(),
            enter: *enter,
        },
        Action::Select { target, option } => Action::Select {
            target: ranked(target),
            option: option.clone(),
        },
        Action::FillForm { fields, submit } => Action::FillForm {
            fields: fields
                .iter()
                .map(|f| crate::action::FieldValue {
                    target: ranked(&f.target),
                    value: f.value.clone(),
                    select: f.select,
                })
                .collect(),
            submit: submit.as_ref().map(ranked),
        },
        Action::Check { targets } => Action::Check {
            targets: targets.iter().map(ranked).collect(),
        },
        Action::Scroll { target, to } => Action::Scroll {
            target: ranked(target),
            to: *to,
        },
        Action::Repeat { target, times } => Action::Repeat {
            target: ranked(target),
            times: *times,
        },
        Action::Hover { target } => Action::Hover {
            target: ranked(target),
        },
        Action::Slide { moves } => Action::Slide {
            moves: moves
                .iter()
                .map(|m| crate::action::SliderMove {
                    target: ranked(&m.target),
                    value: m.value.clone(),
                })
                .collect(),
        },
        other => other.clone(),
    }
}

/// The most clicks a repeated click may make.
pub const MAX_REPEAT: u32 = 60;

/// A pattern matching `path` with every run of digits free to differ.
pub fn path_pattern(url: &str) -> String {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_owned())
        .unwrap_or_else(|_| "/".to_owned());
    let masked = mask_digits(&path);
    let mut pattern = String::from("^");
    for part in masked.split('#').enumerate() {
        if part.0 > 0 {
            pattern.push_str("[0-9]+");
        }
        pattern.push_str(&regex::escape(part.1));
    }
    pattern.push('$');
    pattern
}

/// Text a replay can expect on the page: the main heading, unless it holds digits (an order
/// number, a count: they differ from run to run).
fn expected_text(page: &PageInfo) -> Option<String> {
    page.heading
        .as_ref()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty() && !h.chars().any(|c| c.is_ascii_digit()))
}

/// Compiles a winning trajectory: the task, its steps, and what the reproducing node saw after
/// each (`pages`, one per step). Pure: the same trajectory always gives the same workflow.
pub fn compile(
    task: &TaskSpec,
    steps: &[ResultStep],
    pages: &[PageInfo],
) -> Result<Workflow, WorkflowError> {
    if steps.is_empty() {
        return Err(WorkflowError::Compile("the path has no steps".into()));
    }
    if pages.len() != steps.len() {
        return Err(WorkflowError::Compile(format!(
            "{} steps but {} observed pages",
            steps.len(),
            pages.len()
        )));
    }
    let task_id = TaskId::of(task)
        .map_err(|e| WorkflowError::Compile(e.to_string()))?
        .to_string();
    let mut parameters = BTreeSet::new();
    let compiled = steps
        .iter()
        .zip(pages)
        .map(|(step, page)| {
            parameters.extend(step.action.inputs().into_iter().map(str::to_owned));
            WorkflowStep {
                index: step.index,
                label: step.label.clone(),
                action: rank_targets(&step.action),
                risk: step.risk,
                expect: PostCondition {
                    url_path: path_pattern(&step.url),
                    text: expected_text(page),
                    family: page.family,
                    fingerprint: step.fingerprint,
                },
            }
        })
        .collect();
    Ok(Workflow {
        version: WORKFLOW_VERSION,
        task_id,
        goal: task.goal.clone(),
        start_url: task.start_url.clone(),
        allowed_origins: task.allowed_origins.clone(),
        seed: task.seed,
        parameters: parameters.into_iter().collect(),
        success: task.success.clone(),
        steps: compiled,
        risk_ceiling: task.risk_ceiling,
        consents: task.consents.clone(),
    })
}

impl Workflow {
    /// The canonical JSON rendering (pretty, newline at the end): what forager writes, and the
    /// only form `forager verify` accepts.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// The steps above the workflow's ceiling that no consent in `consents` permits (each
    /// consent is taken as checked by the caller), by index. `key` is the search's action key.
    pub fn unconsented_steps(
        &self,
        consents: &[crate::consent::Consent],
        key: impl Fn(&Action) -> u64,
    ) -> Vec<&WorkflowStep> {
        let keys: Vec<u64> = self.steps.iter().map(|s| key(&s.action)).collect();
        self.steps
            .iter()
            .enumerate()
            .filter(|(i, step)| {
                step.risk > self.risk_ceiling
                    && !consents
                        .iter()
                        .any(|c| c.permits(&keys[..*i], keys[*i], step.risk))
            })
            .map(|(_, step)| step)
            .collect()
    }

    /// Reads and validates a workflow file's bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Workflow, WorkflowError> {
        if bytes.len() > MAX_WORKFLOW_BYTES {
            return Err(WorkflowError::TooLarge {
                size: bytes.len(),
                limit: MAX_WORKFLOW_BYTES,
            });
        }
        // The version first, so that another version is named as such rather than as a shape
        // this build does not know.
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| WorkflowError::Format(e.to_string()))?;
        match value.get("version").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(WORKFLOW_VERSION) => {}
            Some(v) => {
                return Err(WorkflowError::Version {
                    found: u32::try_from(v).unwrap_or(u32::MAX),
                });
            }
            None => return Err(WorkflowError::Format("no `version` number".into())),
        }
        let workflow: Workflow =
            serde_json::from_value(value).map_err(|e| WorkflowError::Format(e.to_string()))?;
        workflow.validate()?;
        Ok(workflow)
    }

    /// Checks every field; names the first bad one.
    pub fn validate(&self) -> Result<(), WorkflowError> {
        if self.version != WORKFLOW_VERSION {
            return Err(WorkflowError::Version {
                found: self.version,
            });
        }
        // The task-shaped fields are checked as a task's are.
        self.task(BTreeMap::new())
            .validate()
            .map_err(|TaskError::InvalidField { field, reason }| invalid(field, reason))?;
        if self.steps.is_empty() {
            return Err(invalid("steps", "a workflow needs at least one step"));
        }
        if self.steps.len() > MAX_WORKFLOW_STEPS {
            return Err(invalid(
                "steps",
                format!("{} steps, at most {MAX_WORKFLOW_STEPS}", self.steps.len()),
            ));
        }
        let declared: BTreeSet<&str> = self.parameters.iter().map(String::as_str).collect();
        for (i, step) in self.steps.iter().enumerate() {
            let field = |name: &str| format!("steps[{i}].{name}");
            if step.index != i as u32 + 1 {
                return Err(invalid(
                    field("index"),
                    format!("is {}, expected {}", step.index, i + 1),
                ));
            }
            for target in step.action.targets() {
                if target.locators.is_empty() {
                    return Err(invalid(field("action"), "a target has no locator"));
                }
            }
            if let Action::Repeat { times, .. } = &step.action
                && !(2..=MAX_REPEAT).contains(times)
            {
                return Err(invalid(
                    field("action"),
                    format!("repeats a click {times} times, not 2 to {MAX_REPEAT}"),
                ));
            }
            if let Action::Slide { moves } = &step.action {
                if moves.is_empty() {
                    return Err(invalid(field("action"), "a slide moves no slider"));
                }
                if let Some(bad) = moves.iter().find(|m| {
                    !m.value
                        .trim()
                        .parse::<f64>()
                        .is_ok_and(|number| number.is_finite())
                }) {
                    return Err(invalid(
                        field("action"),
                        format!("slides to {:?}, which is no number", bad.value),
                    ));
                }
            }
            if let Action::Navigate { url } = &step.action {
                let parsed = url::Url::parse(url)
                    .map_err(|e| invalid(field("action"), format!("bad URL {url:?}: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(invalid(field("action"), "navigation must be http or https"));
                }
            }
            if let Some(name) = step
                .action
                .inputs()
                .into_iter()
                .find(|n| !declared.contains(n))
            {
                return Err(invalid(
                    field("action"),
                    format!("types input {name:?}, which is not among the parameters"),
                ));
            }
            regex::RegexBuilder::new(&step.expect.url_path)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map_err(|e| invalid(field("expect.url_path"), format!("bad regex: {e}")))?;
        }
        Ok(())
    }

    /// Checks the given inputs against the parameters: every parameter given, nothing else.
    pub fn check_inputs(&self, inputs: &BTreeMap<String, String>) -> Result<(), WorkflowError> {
        let missing: Vec<String> = self
            .parameters
            .iter()
            .filter(|p| !inputs.contains_key(*p))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(WorkflowError::MissingInputs(missing));
        }
        let unknown: Vec<String> = inputs
            .keys()
            .filter(|k| !self.parameters.contains(k))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(WorkflowError::UnknownInputs {
                names: unknown,
                parameters: self.parameters.clone(),
            });
        }
        Ok(())
    }

    /// The task a replay runs under: the workflow's start, origins, seed and success
    /// predicates, with these input values.
    pub fn task(&self, inputs: BTreeMap<String, String>) -> TaskSpec {
        let mut task = TaskSpec::new(
            self.start_url.clone(),
            self.goal.clone(),
            self.success.clone(),
        );
        task.allowed_origins = self.allowed_origins.clone();
        task.seed = self.seed;
        task.inputs = inputs;
        task.budget.actions = self.steps.len().max(1) as u32;
        task.budget.max_depth = self.steps.len().max(1) as u32;
        task
    }

    /// Whether any step types a literal value (not a parameter): shown in reports so that a
    /// reader knows what the workflow types on its own.
    pub fn literal_values(&self) -> Vec<(u32, String)> {
        let mut found = Vec::new();
        for step in &self.steps {
            let values: Vec<&FillValue> = match &step.action {
                Action::Fill { value, .. } => vec![value],
                Action::FillForm { fields, .. } => fields.iter().map(|f| &f.value).collect(),
                _ => Vec::new(),
            };
            for value in values {
                if let FillValue::Literal(text) = value {
                    found.push((step.index, text.clone()));
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::FieldValue;

    fn target(name: &str, locators: Vec<Locator>) -> Target {
        Target {
            locators,
            role: "textbox".into(),
            name: name.into(),
            sends: Default::default(),
        }
    }

    fn step(index: u32, action: Action, url: &str) -> ResultStep {
        ResultStep {
            index,
            label: action.label(),
            action,
            url: url.into(),
            title: "t".into(),
            fingerprint: Fingerprint([index as u8; 16]),
            risk: RiskClass::ReadOnly,
            reward: 0.0,
            cost_ms: 3,
            verdict: None,
            healed_locator: None,
            healed_by: None,
            verification: Default::default(),
            why: None,
        }
    }

    fn page(heading: Option<&str>) -> PageInfo {
        PageInfo {
            url: String::new(),
            title: "t".into(),
            verdict: None,
            healed_locator: None,
            healed_by: None,
            family: Some(Fingerprint([9; 16])),
            heading: heading.map(str::to_owned),
            cost_ms: 3,
            value_hint: 0.5,
            why: None,
        }
    }

    fn sample() -> (TaskSpec, Vec<ResultStep>, Vec<PageInfo>) {
        let mut task = TaskSpec::new(
            "http://127.0.0.1:8080/",
            "Log in as \"ada\"",
            vec![SuccessPredicate::TextPresent("Welcome".into())],
        );
        task.inputs
            .insert("password".into(), "correct-horse".into());
        task.seed = 5;
        let near = Locator::Near {
            anchor: "Sign in".into(),
            role: "textbox".into(),
            nth: 2,
        };
        let login = Action::FillForm {
            fields: vec![
                FieldValue {
                    target: target(
                        "User",
                        vec![Locator::Text("User".into()), Locator::Css("#u".into())],
                    ),
                    value: FillValue::Literal("ada".into()),
                    select: false,
                },
                FieldValue {
                    target: target(
                        "Password",
                        vec![
                            near.clone(),
                            Locator::Css("#p".into()),
                            near,
                            Locator::Role {
                                role: "textbox".into(),
                                name: "Password".into(),
                            },
                        ],
                    ),
                    value: FillValue::Input("password".into()),
                    select: false,
                },
            ],
            submit: None,
        };
        let open = Action::Click {
            target: target("Orders", vec![Locator::Css("#o".into())]),
        };
        let steps = vec![
            step(1, login, "http://127.0.0.1:8080/account?session=1"),
            step(2, open, "http://127.0.0.1:8080/orders/1042"),
        ];
        let pages = vec![page(Some("Your account")), page(Some("Order 1042"))];
        (task, steps, pages)
    }

    #[test]
    fn compiles_ranked_chains_parameters_and_post_conditions() {
        let (task, steps, pages) = sample();
        let workflow = compile(&task, &steps, &pages).expect("compiles");
        workflow.validate().expect("valid");
        assert_eq!(workflow.parameters, vec!["password".to_owned()]);
        assert_eq!(workflow.seed, 5);
        let Action::FillForm { fields, .. } = &workflow.steps[0].action else {
            panic!("a form");
        };
        let kinds: Vec<&str> = fields[1]
            .target
            .locators
            .iter()
            .map(Locator::kind)
            .collect();
        assert_eq!(kinds, vec!["css", "role", "near"], "ranked, deduplicated");
        let kinds: Vec<&str> = fields[0]
            .target
            .locators
            .iter()
            .map(Locator::kind)
            .collect();
        assert_eq!(kinds, vec!["css", "text"]);
        // The path's digits may differ; the heading with a number is not expected verbatim.
        assert_eq!(workflow.steps[1].expect.url_path, "^/orders/[0-9]+$");
        assert_eq!(workflow.steps[0].expect.url_path, "^/account$");
        assert_eq!(
            workflow.steps[0].expect.text.as_deref(),
            Some("Your account")
        );
        assert_eq!(workflow.steps[1].expect.text, None);
        let pattern = regex::Regex::new(&workflow.steps[1].expect.url_path).expect("regex");
        assert!(pattern.is_match("/orders/7"));
        assert!(!pattern.is_match("/orders/7/cancel"));
        // No input value anywhere in the file; the same trajectory compiles the same bytes.
        let json = workflow.to_json().expect("json");
        assert!(!String::from_utf8_lossy(&json).contains("correct-horse"));
        let again = compile(&task.redacted(), &steps, &pages).expect("compiles");
        assert_eq!(again.to_json().expect("json"), json);
        assert_eq!(Workflow::from_json(&json).expect("reads"), workflow);
    }

    #[test]
    fn inputs_are_checked_by_name() {
        let (task, steps, pages) = sample();
        let workflow = compile(&task, &steps, &pages).expect("compiles");
        let none = BTreeMap::new();
        assert_eq!(
            workflow.check_inputs(&none),
            Err(WorkflowError::MissingInputs(vec!["password".into()]))
        );
        let mut given = BTreeMap::new();
        given.insert("password".to_owned(), "x".to_owned());
        assert_eq!(workflow.check_inputs(&given), Ok(()));
        given.insert("pasword".to_owned(), "x".to_owned());
        let error = workflow.check_inputs(&given).expect_err("unknown");
        assert!(error.to_string().contains("pasword"), "{error}");
    }

    #[test]
    fn bad_files_are_named_errors() {
        let (task, steps, pages) = sample();
        let workflow = compile(&task, &steps, &pages).expect("compiles");
        let json = String::from_utf8(workflow.to_json().expect("json")).expect("utf-8");
        assert!(matches!(
            Workflow::from_json(b"{"),
            Err(WorkflowError::Format(_))
        ));
        assert!(matches!(
            Workflow::from_json(
                json.replacen("\"version\": 1", "\"version\": 9", 1)
                    .as_bytes()
            ),
            Err(WorkflowError::Version { found: 9 })
        ));
        let cases = [
            ("\"^/account$\"", "\"(\"", "steps[0].expect.url_path"),
            ("\"index\": 2", "\"index\": 5", "steps[1].index"),
            (
                "\"start_url\": \"http://127.0.0.1:8080/\"",
                "\"start_url\": \"ftp://x/\"",
                "start_url",
            ),
            (
                "\"parameters\": [\n    \"password\"\n  ]",
                "\"parameters\": []",
                "steps[0].action",
            ),
        ];
        for (from, to, field) in cases {
            assert!(json.contains(from), "{from}");
            let error =
                Workflow::from_json(json.replacen(from, to, 1).as_bytes()).expect_err("refused");
            match error {
                WorkflowError::InvalidField { field: named, .. } => assert_eq!(named, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        // A slide to no number, or of no slider.
        let target = workflow.steps[0].action.targets()[0].clone();
        for moves in [
            vec![crate::action::SliderMove {
                target,
                value: "half way".into(),
            }],
            vec![],
        ] {
            let mut bad = workflow.clone();
            bad.steps[0].action = Action::Slide { moves };
            let bytes = bad.to_json().expect("json");
            match Workflow::from_json(&bytes) {
                Err(WorkflowError::InvalidField { field, .. }) => {
                    assert_eq!(field, "steps[0].action")
                }
                other => panic!("{other:?}"),
            }
        }
        let mut huge = json.clone().into_bytes();
        huge.resize(MAX_WORKFLOW_BYTES + 1, b' ');
        assert!(matches!(
            Workflow::from_json(&huge),
            Err(WorkflowError::TooLarge { .. })
        ));
        assert!(compile(&task, &steps[..1], &pages).is_err());
        assert!(compile(&task, &[], &[]).is_err());
    }
}
