//! The task: what the user wants done, how success is recognised, and what the search may spend.
//!
//! A task arrives from the command line, a TOML or JSON file, or over the wire from
//! `forager submit`; all three end in [`TaskSpec::validate`], which names the first bad field.

use crate::capsule::{CapsuleRef, SessionState};
use crate::consent::SignedConsent;
use crate::predicate::SuccessPredicate;
use crate::risk::RiskClass;
use crate::score::ScoreWeights;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Longest goal text accepted, in bytes.
pub const MAX_GOAL_BYTES: usize = 4096;
/// Most success predicates a task may carry.
pub const MAX_PREDICATES: usize = 32;
/// Longest predicate argument (regex, text, selector, script), in bytes.
pub const MAX_PREDICATE_BYTES: usize = 16 * 1024;
/// Most named inputs a task may carry.
pub const MAX_INPUTS: usize = 64;
/// Longest input value, in bytes.
pub const MAX_INPUT_BYTES: usize = 4096;
/// Most actions a budget may allow.
pub const MAX_ACTION_BUDGET: u32 = 1_000_000;
/// Deepest search allowed.
pub const MAX_DEPTH: u32 = 256;
/// Most consents one task carries.
pub const MAX_CONSENTS: usize = 16;
/// Compiled-size limit for URL regexes, so a hostile task cannot blow up memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// What the search may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Actions the search may execute (expansions and rollout steps; restoring a state by
    /// replaying a prefix is counted separately, as cost).
    pub actions: u32,
    /// Deepest path, in actions from the start URL.
    pub max_depth: u32,
    /// Wall-clock limit for the whole task, in seconds.
    pub wall_time_secs: u32,
    /// Browser milliseconds (plus priced model tokens) that normalise the score's cost term.
    pub cost_ms: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            actions: 500,
            max_depth: 12,
            wall_time_secs: 600,
            cost_ms: 120_000,
        }
    }
}

/// A task. See the field docs; `validate` before use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Where every path starts (http or https).
    pub start_url: String,
    /// What the user wants, in words; the policy's priors come from it.
    pub goal: String,
    /// All of these must hold for a state to count as success.
    pub success: Vec<SuccessPredicate>,
    /// A state where any of these holds is a dead end: the task has failed there for good (an
    /// error page, a refused payment, a lost game, a benchmark episode that ended with no
    /// reward). The search prunes it (`dead_end`) instead of exploring past it.
    #[serde(default)]
    pub failure: Vec<SuccessPredicate>,
    /// Values the agent may type, by name (`--input email=a@b.c`).
    #[serde(default)]
    pub inputs: BTreeMap<String, String>,
    /// What the search may spend.
    #[serde(default)]
    pub budget: Budget,
    /// Actions above this class are never executed; they are reported as `approval_required`.
    #[serde(default = "default_ceiling")]
    pub risk_ceiling: RiskClass,
    /// Weights of the production-aware score.
    #[serde(default)]
    pub weights: ScoreWeights,
    /// Seed of every random choice, so that a run can be repeated.
    #[serde(default)]
    pub seed: u64,
    /// Origins besides the start URL's that navigation may reach.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Whether the site may be reset (a sandbox): only then are prefixes with writes replayed.
    #[serde(default)]
    pub resettable: bool,
    /// The task family for the replay bonus; defaults to the start URL's origin.
    #[serde(default)]
    pub family: Option<String>,
    /// A read-only check after the fact: a page that shows the task's effect (the list that
    /// now holds the new record), loaded by the reproducer when the path's writes are attested
    /// rather than repeated.
    #[serde(default)]
    pub verify: Option<AfterCheck>,
    /// A shell command a node runs before each replay of a path with writes (restoring a
    /// staging database, say): with it the site counts as resettable. Nodes run it only when
    /// their operator allowed it (`forager node --allow-reset-cmd`; `explore` always does).
    #[serde(default)]
    pub reset_cmd: Option<String>,
    /// Actions above the ceiling the user allowed, each at one prefix
    /// ([`crate::consent`]); not part of the task's id, so a run with consents resumes the
    /// run that asked for them.
    #[serde(default)]
    pub consents: Vec<SignedConsent>,
    /// The session capsule the task mounts, as a record (no secret); not part of the task's
    /// id, like the consents.
    #[serde(default)]
    pub capsule: Option<CapsuleRef>,
    /// The capsule's opened session, mounted into every browser context the task opens. It
    /// travels to nodes inside the task over the encrypted cluster connection only:
    /// [`TaskSpec::redacted`], which every artifact and journal holds, drops it.
    #[serde(default)]
    pub session: Option<SessionState>,
    /// The language-model tier the task may ask (`--model-url`), and its budgets. With one, a
    /// task may have no success predicate: the model's verdict judges it, and the result says
    /// so. Without one, no model is ever asked.
    #[serde(default)]
    pub model: Option<crate::llm::ModelSettings>,
}

/// A page to load, and a text it must show, to check a task's effect without repeating it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterCheck {
    /// The page (on the start URL's or an allowed origin).
    pub url: String,
    /// A text the page must contain.
    pub text: String,
}

fn default_ceiling() -> RiskClass {
    RiskClass::DEFAULT_CEILING
}

/// A task that cannot be run, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// A field has a bad value.
    #[error("invalid task field `{field}`: {reason}")]
    InvalidField {
        /// The field's name as written in a task file (`start_url`, `success[2]`, …).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl TaskError {
    fn field(field: impl Into<String>, reason: impl fmt::Display) -> TaskError {
        TaskError::InvalidField {
            field: field.into(),
            reason: reason.to_string(),
        }
    }

    /// The name of the bad field.
    pub fn field_name(&self) -> &str {
        match self {
            TaskError::InvalidField { field, .. } => field,
        }
    }
}

/// How a redacted input value starts: `sha256:` and 64 lower-case hex digits follow.
pub const REDACTED_PREFIX: &str = "sha256:";

fn is_redacted(value: &str) -> bool {
    value.len() == REDACTED_PREFIX.len() + 64
        && value.starts_with(REDACTED_PREFIX)
        && value[REDACTED_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl TaskSpec {
    /// The task with every input value replaced by `sha256:<hex digest>` and without its
    /// mounted session: what artifacts carry (someone who knows a value can check it; no one
    /// else learns it) and what the task id is computed over. Redacting twice changes nothing.
    pub fn redacted(&self) -> TaskSpec {
        use sha2::Digest;
        let mut task = self.clone();
        task.session = None;
        for value in task.inputs.values_mut() {
            if !is_redacted(value) {
                let digest = sha2::Sha256::digest(value.as_bytes());
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                *value = format!("{REDACTED_PREFIX}{hex}");
            }
        }
        task
    }

    /// A task with defaults for everything but what must be given.
    pub fn new(
        start_url: impl Into<String>,
        goal: impl Into<String>,
        success: Vec<SuccessPredicate>,
    ) -> TaskSpec {
        TaskSpec {
            start_url: start_url.into(),
            goal: goal.into(),
            success,
            failure: Vec::new(),
            inputs: BTreeMap::new(),
            budget: Budget::default(),
            risk_ceiling: RiskClass::DEFAULT_CEILING,
            weights: ScoreWeights::DEFAULT,
            seed: 0,
            allowed_origins: Vec::new(),
            resettable: false,
            family: None,
            verify: None,
            reset_cmd: None,
            consents: Vec::new(),
            capsule: None,
            session: None,
            model: None,
        }
    }

    /// Whether paths with writes may be replayed: the site is a declared sandbox, or a reset
    /// command restores it before each such replay.
    pub fn replays_writes(&self) -> bool {
        self.resettable || self.reset_cmd.is_some()
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), TaskError> {
        let start = parse_web_url("start_url", &self.start_url)?;
        self.validate_goal_and_predicates()?;
        self.validate_inputs()?;
        self.validate_budget_and_weights()?;
        self.validate_places(&start)?;
        self.validate_consents_and_session()?;
        debug_assert!(start.host().is_some());
        Ok(())
    }

    /// The goal, and the success and failure predicates (sizes, regexes).
    fn validate_goal_and_predicates(&self) -> Result<(), TaskError> {
        let goal = self.goal.trim();
        if goal.is_empty() {
            return Err(TaskError::field("goal", "must not be empty"));
        }
        if self.goal.len() > MAX_GOAL_BYTES {
            return Err(TaskError::field(
                "goal",
                format!("{} bytes, at most {MAX_GOAL_BYTES}", self.goal.len()),
            ));
        }

        if self.success.is_empty() && self.model.is_none() {
            return Err(TaskError::field(
                "success",
                "at least one success predicate is required (URL regex, text, selector, \
                 JavaScript or extraction), or a model to judge the goal (`--model-url URL \
                 --model NAME`; `scripts/local-model start` serves one on this machine)",
            ));
        }
        if let Some(model) = &self.model {
            model
                .validate()
                .map_err(|(field, message)| TaskError::field(field, message))?;
        }
        if self.success.len() > MAX_PREDICATES {
            return Err(TaskError::field(
                "success",
                format!(
                    "{} predicates, at most {MAX_PREDICATES}",
                    self.success.len()
                ),
            ));
        }
        if self.failure.len() > MAX_PREDICATES {
            return Err(TaskError::field(
                "failure",
                format!(
                    "{} predicates, at most {MAX_PREDICATES}",
                    self.failure.len()
                ),
            ));
        }
        let named = |list: &'static str| move |(i, p)| (format!("{list}[{i}]"), p);
        let predicates = (self.success.iter().enumerate().map(named("success")))
            .chain(self.failure.iter().enumerate().map(named("failure")));
        for (field, predicate) in predicates {
            let argument = predicate.argument();
            if argument.trim().is_empty() {
                return Err(TaskError::field(field, "must not be empty"));
            }
            if argument.len() > MAX_PREDICATE_BYTES {
                return Err(TaskError::field(
                    field,
                    format!("{} bytes, at most {MAX_PREDICATE_BYTES}", argument.len()),
                ));
            }
            if let SuccessPredicate::UrlMatches(pattern) = predicate {
                regex::RegexBuilder::new(pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| TaskError::field(field, format!("bad regex: {e}")))?;
            }
        }

        Ok(())
    }

    /// The inputs' names and sizes.
    fn validate_inputs(&self) -> Result<(), TaskError> {
        if self.inputs.len() > MAX_INPUTS {
            return Err(TaskError::field(
                "inputs",
                format!("{} inputs, at most {MAX_INPUTS}", self.inputs.len()),
            ));
        }
        for (name, value) in &self.inputs {
            let valid_name = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid_name {
                return Err(TaskError::field(
                    format!("inputs.{name}"),
                    "input names are 1 to 64 characters of letters, digits, '_' and '-'",
                ));
            }
            if value.len() > MAX_INPUT_BYTES {
                return Err(TaskError::field(
                    format!("inputs.{name}"),
                    format!("{} bytes, at most {MAX_INPUT_BYTES}", value.len()),
                ));
            }
        }

        Ok(())
    }

    /// The budgets and the score's weights.
    fn validate_budget_and_weights(&self) -> Result<(), TaskError> {
        let budget = &self.budget;
        if budget.actions == 0 || budget.actions > MAX_ACTION_BUDGET {
            return Err(TaskError::field(
                "budget.actions",
                format!("{} is outside 1..={MAX_ACTION_BUDGET}", budget.actions),
            ));
        }
        if budget.max_depth == 0 || budget.max_depth > MAX_DEPTH {
            return Err(TaskError::field(
                "budget.max_depth",
                format!("{} is outside 1..={MAX_DEPTH}", budget.max_depth),
            ));
        }
        if budget.wall_time_secs == 0 {
            return Err(TaskError::field(
                "budget.wall_time_secs",
                "must be positive",
            ));
        }
        if budget.cost_ms == 0 {
            return Err(TaskError::field("budget.cost_ms", "must be positive"));
        }

        if let Err((name, value)) = self.weights.validate() {
            return Err(TaskError::field(
                format!("weights.{name}"),
                format!("{value} is not a finite, non-negative number"),
            ));
        }

        Ok(())
    }

    /// The allowed origins, the family, the after-check's page (on an origin of the task)
    /// and the reset command.
    fn validate_places(&self, start: &url::Url) -> Result<(), TaskError> {
        for (i, origin) in self.allowed_origins.iter().enumerate() {
            parse_web_url(&format!("allowed_origins[{i}]"), origin)?;
        }
        if let Some(family) = &self.family
            && (family.trim().is_empty() || family.len() > 256)
        {
            return Err(TaskError::field("family", "must be 1 to 256 bytes"));
        }
        if let Some(check) = &self.verify {
            let url = parse_web_url("verify.url", &check.url)?;
            let origin = url.origin().ascii_serialization();
            let allowed = origin == start.origin().ascii_serialization()
                || self.allowed_origins.iter().any(|o| {
                    url::Url::parse(o.trim())
                        .is_ok_and(|o| o.origin().ascii_serialization() == origin)
                });
            if !allowed {
                return Err(TaskError::field(
                    "verify.url",
                    format!("{origin} is neither the start URL's origin nor an allowed one"),
                ));
            }
            if check.text.trim().is_empty() || check.text.len() > MAX_PREDICATE_BYTES {
                return Err(TaskError::field(
                    "verify.text",
                    format!("must be 1 to {MAX_PREDICATE_BYTES} bytes"),
                ));
            }
        }
        if let Some(command) = &self.reset_cmd
            && (command.trim().is_empty() || command.len() > 4096 || command.contains('\0'))
        {
            return Err(TaskError::field(
                "reset_cmd",
                "must be 1 to 4096 bytes of shell command, without NUL",
            ));
        }
        Ok(())
    }

    /// The consents (at most [`MAX_CONSENTS`], each for an origin of the task, above no
    /// depth it can reach) and the mounted session (with its capsule).
    fn validate_consents_and_session(&self) -> Result<(), TaskError> {
        if self.consents.len() > MAX_CONSENTS {
            return Err(TaskError::field(
                "consents",
                format!("at most {MAX_CONSENTS} consents per task"),
            ));
        }
        let origins = self.origins();
        for consent in &self.consents {
            let consent = &consent.value;
            if !origins.contains(&consent.origin) {
                return Err(TaskError::field(
                    "consents",
                    format!(
                        "a consent is for {}, an origin the task does not allow",
                        consent.origin
                    ),
                ));
            }
            if consent.prefix.len() >= self.budget.max_depth as usize {
                return Err(TaskError::field(
                    "consents",
                    "a consent's prefix is deeper than the task's max_depth",
                ));
            }
        }
        if let Some(session) = &self.session {
            session
                .check()
                .map_err(|e| TaskError::field("session", e.to_string()))?;
            if self.capsule.is_none() {
                return Err(TaskError::field(
                    "session",
                    "a session is mounted only with the capsule it came from",
                ));
            }
        }
        Ok(())
    }

    /// The origins the task acts on: the start URL's, then the allowed ones.
    pub fn origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = url::Url::parse(&self.start_url)
            .map(|u| vec![u.origin().ascii_serialization()])
            .unwrap_or_default();
        for origin in &self.allowed_origins {
            if !origins.contains(origin) {
                origins.push(origin.clone());
            }
        }
        origins
    }

    /// The task family used to group trajectories for the replay bonus.
    pub fn family(&self) -> String {
        match &self.family {
            Some(family) => family.clone(),
            None => url::Url::parse(&self.start_url)
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_else(|_| self.start_url.clone()),
        }
    }
}

fn parse_web_url(field: &str, text: &str) -> Result<url::Url, TaskError> {
    let parsed = url::Url::parse(text.trim())
        .map_err(|e| TaskError::field(field, format!("{text:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(TaskError::field(
            field,
            format!("scheme {:?} is not http or https", parsed.scheme()),
        ));
    }
    if parsed.host().is_none() {
        return Err(TaskError::field(field, "has no host"));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> TaskSpec {
        let mut task = TaskSpec::new(
            "http://127.0.0.1:8080/",
            "Find the ThinkPad X1 and add it to the cart",
            vec![
                SuccessPredicate::UrlMatches(r"/cart$".into()),
                SuccessPredicate::TextPresent("ThinkPad X1".into()),
            ],
        );
        task.inputs.insert("email".into(), "a@b.example".into());
        task
    }

    #[test]
    fn redaction_hides_input_values_and_is_idempotent() {
        let task = valid();
        let redacted = task.redacted();
        let value = &redacted.inputs["email"];
        assert!(is_redacted(value), "{value}");
        assert!(
            !serde_json::to_string(&redacted)
                .expect("json")
                .contains("a@b.example")
        );
        assert_eq!(redacted.redacted(), redacted);
        // Everything else is untouched; another value, another digest.
        assert_eq!(redacted.goal, task.goal);
        let mut other = task.clone();
        other.inputs.insert("email".into(), "c@d.example".into());
        assert_ne!(other.redacted().inputs["email"], *value);
    }

    #[test]
    fn a_valid_task_passes() {
        assert_eq!(valid().validate(), Ok(()));
        assert_eq!(valid().family(), "http://127.0.0.1:8080");
    }

    #[test]
    fn each_bad_field_is_named() {
        type Mutation = fn(&mut TaskSpec);
        let cases: &[(&str, Mutation)] = &[
            ("start_url", |t| t.start_url = "not a url".into()),
            ("start_url", |t| t.start_url = "file:///etc/passwd".into()),
            ("start_url", |t| t.start_url = "javascript:alert(1)".into()),
            ("goal", |t| t.goal = "   ".into()),
            ("goal", |t| t.goal = "x".repeat(MAX_GOAL_BYTES + 1)),
            ("success", |t| t.success.clear()),
            ("success[0]", |t| {
                t.success[0] = SuccessPredicate::UrlMatches("(".into())
            }),
            ("success[1]", |t| {
                t.success[1] = SuccessPredicate::TextPresent(" ".into())
            }),
            ("success[0]", |t| {
                t.success[0] = SuccessPredicate::UrlMatches("a{1000}{1000}{1000}".into())
            }),
            ("failure[0]", |t| {
                t.failure = vec![SuccessPredicate::UrlMatches("(".into())]
            }),
            ("failure[1]", |t| {
                t.failure = vec![
                    SuccessPredicate::JavaScript("done".into()),
                    SuccessPredicate::JavaScript(String::new()),
                ]
            }),
            ("failure", |t| {
                t.failure = vec![SuccessPredicate::TextPresent("x".into()); MAX_PREDICATES + 1]
            }),
            ("inputs.bad name", |t| {
                t.inputs.insert("bad name".into(), "v".into());
            }),
            ("budget.actions", |t| t.budget.actions = 0),
            ("budget.max_depth", |t| t.budget.max_depth = MAX_DEPTH + 1),
            ("budget.wall_time_secs", |t| t.budget.wall_time_secs = 0),
            ("budget.cost_ms", |t| t.budget.cost_ms = 0),
            ("weights.auth", |t| t.weights.auth = f64::INFINITY),
            ("allowed_origins[0]", |t| {
                t.allowed_origins.push("ftp://x".into())
            }),
            ("family", |t| t.family = Some(String::new())),
        ];
        for (field, mutate) in cases {
            let mut task = valid();
            mutate(&mut task);
            let err = task.validate().expect_err(field);
            assert_eq!(err.field_name(), *field, "{err}");
        }
    }

    #[test]
    fn task_files_use_defaults_and_reject_unknown_fields() {
        let json = r#"{
            "start_url": "https://shop.example/",
            "goal": "find the cart",
            "success": [{"url_matches": "/cart"}, {"extraction": "document.title"}],
            "risk_ceiling": 2
        }"#;
        let task: TaskSpec = serde_json::from_str(json).expect("parses");
        assert_eq!(task.risk_ceiling, RiskClass::AuthenticatedRead);
        assert_eq!(task.budget, Budget::default());
        assert_eq!(task.weights, ScoreWeights::DEFAULT);
        assert_eq!(task.validate(), Ok(()));

        let typo = json.replace("\"goal\"", "\"gaol\"");
        assert!(serde_json::from_str::<TaskSpec>(&typo).is_err());
        let bad_class = json.replace("\"risk_ceiling\": 2", "\"risk_ceiling\": 9");
        let err = serde_json::from_str::<TaskSpec>(&bad_class).expect_err("class 9");
        assert!(err.to_string().contains("risk class"), "{err}");
    }
}
