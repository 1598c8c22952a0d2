//! The result document of a run (`result.json`, and `--json` on stdout).
//!
//! Its schema is written down in `docs/result.md`; the field names here are that schema.
//! Version [`RESULT_VERSION`]; a field is only ever added, never renamed, within a version.

use crate::action::Action;
use crate::fingerprint::Fingerprint;
use crate::outcome::FailureReason;
use crate::risk::RiskClass;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version of [`RunResult`].
pub const RESULT_VERSION: u32 = 1;

/// `pass` or `failing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A path to a state where every success predicate holds was found.
    Pass,
    /// None was found; `error` says why.
    Failing,
}

/// Why a run is failing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    /// The named reason.
    pub reason: FailureReason,
    /// A human explanation.
    pub detail: String,
}

/// One step of the path found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultStep {
    /// 1-based position.
    pub index: u32,
    /// A human label of the action.
    pub label: String,
    /// The action itself (inputs by name, never their values).
    pub action: Action,
    /// URL reached.
    pub url: String,
    /// Title reached.
    pub title: String,
    /// Fingerprint of the state reached.
    pub fingerprint: Fingerprint,
    /// The action's risk class.
    pub risk: RiskClass,
    /// 1 at the success, else the state's value hint.
    pub reward: f64,
    /// What the action cost, in browser milliseconds.
    pub cost_ms: u64,
    /// The validator's verdict, for submit-shaped actions.
    pub verdict: Option<Verdict>,
    /// Which locator of the target's chain resolved it, when it was not the first.
    pub healed_locator: Option<u32>,
    /// That locator, as text (`role=link[name="…"]`), when it was not the first: the step was
    /// healed by it.
    #[serde(default)]
    pub healed_by: Option<String>,
    /// How the queen's verification knows the step: executed again by another node
    /// (`reproduced`), or, for a write on a site that must not see it twice and the steps after
    /// it, taken from the finder's signed evidence (`attested`).
    #[serde(default)]
    pub verification: StepVerification,
    /// Why the finder's policy chose the action: its rank among the page's candidates and
    /// the named signals that made its prior. `None` where the finder did not say (a step
    /// of a replayed workflow, a result of an older build).
    #[serde(default)]
    pub why: Option<StepWhy>,
}

/// Most signals a step's why names.
pub const MAX_WHY_SIGNALS: usize = 4;

/// The longest signal name a step's why carries, in bytes.
pub const MAX_SIGNAL_NAME: usize = 40;

/// Why a step's action was chosen, as the policy ranked the page's candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepWhy {
    /// Its place among the candidates the search could take on that page (1 = the policy's
    /// first choice; candidates above the risk ceiling or refused are not counted).
    pub rank: u32,
    /// How many candidates it could take there.
    pub candidates: u32,
    /// Its prior, in [0, 1].
    pub prior: f64,
    /// The signals that moved its affinity most (at most [`MAX_WHY_SIGNALS`]), largest first.
    pub signals: Vec<SignalLift>,
}

/// What one named signal added to a candidate's affinity (negative: it held it back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalLift {
    /// The signal's name (`goal_similarity`, `names_goal_word`, `keeps_course`, …; see
    /// `docs/signals.md`), at most [`MAX_SIGNAL_NAME`] bytes.
    pub signal: String,
    /// What it added.
    pub lift: f64,
}

impl StepWhy {
    /// The same, bounded as a peer may send it: at most [`MAX_WHY_SIGNALS`] signals, names
    /// cut to [`MAX_SIGNAL_NAME`] bytes, non-finite numbers as 0.
    pub fn bounded(mut self) -> StepWhy {
        self.signals.truncate(MAX_WHY_SIGNALS);
        for signal in &mut self.signals {
            let mut end = signal.signal.len().min(MAX_SIGNAL_NAME);
            while !signal.signal.is_char_boundary(end) {
                end -= 1;
            }
            signal.signal.truncate(end);
            if !signal.lift.is_finite() {
                signal.lift = 0.0;
            }
        }
        if !self.prior.is_finite() {
            self.prior = 0.0;
        }
        self
    }
}

/// How a step of a passing path was verified.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerification {
    /// Another node executed it again and saw a page of the same kind.
    #[default]
    Reproduced,
    /// Not executed again (it writes, or it comes after a write, on a site not declared
    /// resettable): the finder's signed evidence (page digest, screenshot) stands for it.
    Attested,
}

impl StepVerification {
    /// `reproduced` or `attested`.
    pub fn name(self) -> &'static str {
        match self {
            StepVerification::Reproduced => "reproduced",
            StepVerification::Attested => "attested",
        }
    }
}

/// An action that was not executed because it needs a human's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalNeeded {
    /// The path (labels) to the state where it was offered.
    pub prefix: Vec<String>,
    /// Its label.
    pub label: String,
    /// Its risk class.
    pub risk: RiskClass,
    /// The actions whole, the prefix's then its own (locators and all): what `forager
    /// approve` signs a consent for.
    #[serde(default)]
    pub actions: Vec<Action>,
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Actions the search executed (expansions and rollouts).
    pub actions: u32,
    /// Actions executed again to restore states.
    pub replayed_actions: u64,
    /// Browser milliseconds spent.
    pub browser_ms: u64,
    /// Model tokens spent.
    pub tokens: u64,
    /// Nodes in the search tree.
    pub nodes: u64,
    /// Search iterations.
    pub iterations: u64,
    /// Wall-clock milliseconds of the run.
    pub wall_ms: u64,
    /// Workers (browser contexts searching at once).
    pub workers: u32,
    /// Restores served by a live page kept at the state.
    pub cache_hits: u64,
    /// Restores that replayed from the start.
    pub cache_misses: u64,
    /// Pages the policy read (each observation the search proposed actions from).
    #[serde(default)]
    pub pages_read: u64,
    /// Milliseconds spent reading them (embedding their texts; cached texts cost nothing).
    #[serde(default)]
    pub reading_ms: u64,
    /// Pages at which the memory of earlier successes voted for some of the actions.
    #[serde(default)]
    pub remembered: u64,
    /// Pruned branches by reason.
    pub pruned: BTreeMap<String, u32>,
    /// What the language-model tier was asked and spent, per tier and use (empty without a
    /// model). `tokens` above is its total.
    #[serde(default)]
    pub model: crate::llm::ModelUsage,
    /// The remembered workflow tried first, if the memory held one for this task (`null`
    /// otherwise: the result also travels in bincode, which cannot skip a field).
    #[serde(default)]
    pub memory: Option<MemoryUse>,
}

/// How a remembered workflow fared as a run's first branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryUse {
    /// The workflow's id (hex; `forager memory list` shows it).
    pub workflow: String,
    /// How the goal matched it: `template` (the same words, other values), `alike`, or a way
    /// in the search went on from: `prefix` (the steps the site's workflows share) or `part`
    /// (the workflow of a task the goal begins with).
    pub matched: String,
    /// Its steps.
    pub steps: u32,
    /// How many of them the first node's replay took (the search went on from there).
    pub reached: u32,
    /// Whether its steps reached a success.
    pub worked: bool,
}

/// What the browser's network did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkSummary {
    /// Requests let through.
    pub allowed_requests: u64,
    /// Their origins.
    pub allowed_origins: Vec<String>,
    /// Requests blocked because their origin is not the task's.
    pub blocked_requests: u64,
    /// The first blocked URLs.
    pub blocked_urls: Vec<String>,
    /// Writes (requests other than `GET`/`HEAD`/`OPTIONS`) the network gate refused because
    /// the action that caused them was rated a read (or they came between actions).
    #[serde(default)]
    pub refused_writes: u64,
    /// The first refused writes, as `METHOD URL`.
    #[serde(default)]
    pub refused_write_requests: Vec<String>,
    /// Of the refused writes, those the page sent on its own (a timer's, a heartbeat's, a
    /// beacon, between actions): charged to no action, no branch pruned for them.
    #[serde(default)]
    pub background_refused: u64,
    /// The first of them, as `METHOD URL`.
    #[serde(default)]
    pub background_requests: Vec<String>,
    /// Of the refused writes, those an action that commits nothing caused and that only save
    /// the page's own view (a menu's state, the items open, a draft as it is typed): no
    /// branch pruned for them.
    #[serde(default)]
    pub view_state_refused: u64,
}

/// The result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// [`RESULT_VERSION`].
    pub version: u32,
    /// `pass` or `failing`.
    pub status: Status,
    /// The task's id (hex).
    pub task_id: String,
    /// The goal.
    pub goal: String,
    /// The start URL.
    pub start_url: String,
    /// The seed.
    pub seed: u64,
    /// The path found (empty when failing).
    pub steps: Vec<ResultStep>,
    /// Why it is failing.
    pub error: Option<RunError>,
    /// Actions not executed for lack of approval.
    pub approval_required: Vec<ApprovalNeeded>,
    /// Counters.
    pub metrics: Metrics,
    /// Network activity.
    pub network: NetworkSummary,
    /// How success was judged: the task's predicates, or (a task without one) the model
    /// tier's verdict, which is weaker.
    #[serde(default)]
    pub judged_by: crate::llm::Judge,
    /// The final page's answer in the task's answer schema (`--answer-schema`), extracted by
    /// the model tier from the page the reproduction ended on and checked meaningful.
    #[serde(default)]
    pub answer: Option<crate::llm::JsonAnswer>,
}

impl RunResult {
    /// Whether the policy's first choice at every step of the path is what solved the task
    /// (pass@1: the first rollout, greedy by the priors, solves it without the search's
    /// patience). `None` when the run failed, or a step does not say its rank.
    pub fn first_choice_path(&self) -> Option<bool> {
        if self.status != Status::Pass || self.steps.is_empty() {
            return None;
        }
        self.steps
            .iter()
            .map(|step| step.why.as_ref().map(|why| why.rank == 1))
            .try_fold(true, |all, first| first.map(|f| all && f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results travel to `forager submit` in bincode, which has no field names: a field
    /// skipped when empty would shift every later one.
    #[test]
    fn metrics_round_trip_in_bincode_with_and_without_a_memory() {
        for memory in [
            None,
            Some(MemoryUse {
                workflow: "ab".repeat(32),
                matched: "template".into(),
                steps: 3,
                reached: 2,
                worked: false,
            }),
        ] {
            let metrics = Metrics {
                actions: 7,
                memory,
                ..Metrics::default()
            };
            let frame = crate::codec::encode(&metrics).expect("encodes");
            let back: Metrics = crate::codec::decode(&frame, 1 << 20).expect("decodes");
            assert_eq!(back, metrics);
        }
    }
}
