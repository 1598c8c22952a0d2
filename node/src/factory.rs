//! How a node's worker gets environments for its tasks: an [`EnvFactory`] makes them
//! (Chromium contexts in production, simulated sites at cluster scale) and reads back what
//! they saw: each step's page, the network's summary, the evidence a write left.
//!
//! It sits above [`crate::environment`], [`crate::memory`] and [`crate::claims`], which it
//! names, and below the worker and the browser, which use it: the browser imports nothing of
//! the worker's.

use crate::environment::{EnvError, Environment, WriteEvidence};
use crate::memory::GoalEmbedder;
use forager_protocol::result::NetworkSummary;
use forager_protocol::task::AfterCheck;
use forager_protocol::wire::{BranchCounters, PageInfo};
use forager_protocol::{Action, Fingerprint, TaskSpec};

/// Makes environments for tasks: Chromium contexts in production, simulated sites in
/// cluster-scale runs.
pub trait EnvFactory: Send + Sync + 'static {
    /// The environment.
    type Env: Environment<Action = Action> + Send + 'static;
    /// A fresh environment for a task. `for_replay`: the environment must reproduce a path
    /// from scratch (no reuse of live pages).
    fn create(&self, task: &TaskSpec, for_replay: bool) -> Result<Self::Env, EnvError>;
    /// Has the environment claim every write from the task's queen before it runs (an
    /// environment that cannot write, a simulation's, ignores it).
    fn set_write_claims(_env: &mut Self::Env, _claims: crate::claims::WriteClaims) {}
    /// How goals are embedded for the memory: the same reader the environments' policy
    /// uses (hashed n-grams unless a sentence model is loaded).
    fn goal_embedder(&self) -> GoalEmbedder {
        GoalEmbedder::Ngram
    }
    /// What the environment saw at the step from `before` to `after`: URL, title, validator
    /// verdict, healed locator.
    fn step_info(env: &Self::Env, before: Fingerprint, after: Fingerprint) -> PageInfo;
    /// Why the environment's policy chose `action` where it led to `after`, when it says.
    fn why(
        _env: &Self::Env,
        _action: &Action,
        _after: Fingerprint,
    ) -> Option<forager_protocol::result::StepWhy> {
        None
    }
    /// What the environment's network did (origins reached, requests blocked).
    fn network(env: &Self::Env) -> NetworkSummary;
    /// What the environment counted since it was created: restores served from a kept page
    /// and replayed from the start, pages read and the time reading them (the other fields
    /// are the search's and stay 0).
    fn counters(env: &Self::Env) -> BranchCounters;
    /// What the model tier was asked and spent in the environment since the last call
    /// (nothing where no model is asked).
    fn take_model_usage(_env: &Self::Env) -> forager_protocol::llm::ModelUsage {
        forager_protocol::llm::ModelUsage::default()
    }
    /// The current page's answer in the task's answer schema, as JSON text (nothing where no
    /// model is asked).
    fn extract_answer(_env: &mut Self::Env) -> impl Future<Output = Option<String>> + Send {
        async { None }
    }
    /// A screenshot (JPEG) of the environment's current page, when it has pixels to show.
    fn screenshot(env: &Self::Env) -> impl Future<Output = Option<Vec<u8>>> + Send;
    /// What the page looked like right after a step that wrote (or came after a write) on a
    /// site whose writes must not be repeated, captured when the step ran: the evidence a
    /// verification attests the step by. `None` when nothing was captured for that state.
    fn evidence(env: &Self::Env, after: Fingerprint) -> Option<WriteEvidence>;
    /// Loads the task's after-check page in the environment's current context (whose session
    /// the reproduced steps established) and says whether it shows the text.
    fn after_check(
        env: &mut Self::Env,
        check: &AfterCheck,
    ) -> impl Future<Output = Result<bool, EnvError>> + Send;
    /// Restores the site before a replay that executes writes: runs the task's reset command,
    /// when it has one (an error when this node may not run it, or it fails).
    fn reset_site(env: &mut Self::Env) -> impl Future<Output = Result<(), EnvError>> + Send;
}
