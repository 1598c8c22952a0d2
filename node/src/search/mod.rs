//! The MCTS engine, generic over [`crate::Environment`].
//!
//! Two halves:
//!
//! - [`Search`] (in `tree`) owns the tree and does no I/O. [`Search::plan`] walks down by the
//!   production-aware score and returns a [`Job`] (restore this prefix, try this action, roll
//!   out this far); [`Search::complete`] takes the job's [`JobOutcome`], adds the child,
//!   prunes it with a recorded reason if it made no progress, looped, or reached a state
//!   already known at the same or smaller depth, and backs up value, visits, cost and risk.
//!   Several jobs may be in flight at once: virtual loss spreads them over branches.
//! - [`run`] (in `driver`) executes jobs on one or more environments and feeds the results back.
//!
//! Safety invariant: a candidate above the risk ceiling is never put into a job; it becomes a
//! pruned child with reason `approval_required`, and rollouts skip such candidates too.

mod driver;
mod tree;

pub use driver::{NoObserver, SearchError, SearchEvent, SearchObserver, run, run_from, start};
pub use tree::{
    FIRST_PLAY_VISITS, FLAT_MIN_CHILDREN, FLAT_PLAYOUT_DEPTH, FLAT_SPREAD, Job, JobId, JobOutcome,
    NodeId, NodeStatus, NodeView, Plan, RolloutStep, Search, WorkerId,
};

use forager_protocol::trajectory::Cost;
use forager_protocol::{FailureReason, Fingerprint, RiskClass, ScoreWeights, TaskSpec};
use std::collections::BTreeMap;
use std::time::Duration;

/// How many children a node may have, given its visits: `ceil(coefficient · (visits+1)^exponent)`.
/// Unvisited candidates are taken in prior order as the allowance grows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Widening {
    /// Children allowed at the first visit.
    pub coefficient: f64,
    /// Growth with visits; 0.5 gives √n.
    pub exponent: f64,
}

impl Widening {
    /// How many children a node with `visits` visits may have.
    pub fn allowed(&self, visits: u32) -> usize {
        (self.coefficient * f64::from(visits.saturating_add(1)).powf(self.exponent)).ceil() as usize
    }
}

impl Default for Widening {
    fn default() -> Self {
        Widening {
            coefficient: 2.0,
            exponent: 0.5,
        }
    }
}

/// How a new leaf is valued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evaluation {
    /// The environment's value hint of the leaf, scaled by [`SearchConfig::hint_weight`].
    Heuristic,
    /// A prior-weighted random rollout of at most `depth` actions (which count against the
    /// budget); a success found on the way is added to the tree.
    Rollout {
        /// Most actions per rollout.
        depth: u32,
    },
}

/// Everything that steers one search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// Weights of the production-aware score.
    pub weights: ScoreWeights,
    /// Actions above this class are never executed.
    pub risk_ceiling: RiskClass,
    /// Actions the search may execute (expansions and rollout steps).
    pub action_budget: u32,
    /// Deepest path.
    pub max_depth: u32,
    /// Cost (ms) that normalises the score's cost term.
    pub cost_budget_ms: f64,
    /// Progressive widening.
    pub widening: Widening,
    /// Leaf evaluation.
    pub evaluation: Evaluation,
    /// Value lost per level of backup, so that shorter successes are worth more.
    pub discount: f64,
    /// Scale of the value hint for non-success leaves (kept below 1 so a success dominates).
    pub hint_weight: f64,
    /// Zero-valued visits added per job in flight.
    pub virtual_loss: f64,
    /// Stop at the first success instead of spending the rest of the budget on shorter paths.
    pub stop_at_first_success: bool,
    /// Weight of the best value seen below a node against the mean of its backed-up values in
    /// Q: 0 is classic mean backup, 1 is max backup. In deterministic goal search the best
    /// descendant says more about a branch than the average one.
    pub max_backup: f64,
    /// Whether a node whose widening allows another child first compares it with the children
    /// it has (first-play urgency): the fresh candidate counts as half a visit worth the
    /// node's mean value ([`FIRST_PLAY_VISITS`]), and a child that scores higher is
    /// followed instead. Off: a fresh child is opened whenever the allowance grows.
    pub first_play_urgency: bool,
    /// Whether candidates leading to an already-known location (a link to a visited URL) are
    /// tried as a last resort before a node is given up (true), or never (false: as a crawler
    /// does; the state they would reach is known unless the same URL shows another state).
    pub try_known_targets: bool,
    /// Under [`Evaluation::Heuristic`], the actions of a random playout taken after an action
    /// tried at a flat node: one whose reached children all look to the eyes as it does
    /// ([`FLAT_MIN_CHILDREN`], [`FLAT_SPREAD`]), a game's board whose outcome
    /// shows only at its end. 0: never.
    pub flat_playout_depth: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// The task family, for the replay bonus.
    pub family: String,
    /// Consecutive environment crashes tolerated before the run fails `browser_crashed`.
    pub max_crash_retries: u32,
    /// Wall-clock limit.
    pub deadline: Option<Duration>,
    /// Actions above the ceiling a user consented to, each at one path below the root.
    pub consented: Vec<Consented>,
}

/// An action above the ceiling that a user consented to ([`forager_protocol::consent`]), as
/// the tree matches it: the keys of the actions from the tree's root to the state, the
/// action's key, and the highest class it may have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consented {
    /// Keys of the actions from the root to the state where it is offered.
    pub path: Vec<u64>,
    /// The action's key.
    pub key: u64,
    /// The class the user saw it at.
    pub risk: RiskClass,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            weights: ScoreWeights::DEFAULT,
            risk_ceiling: RiskClass::DEFAULT_CEILING,
            action_budget: 500,
            max_depth: 12,
            cost_budget_ms: 120_000.0,
            widening: Widening::default(),
            evaluation: Evaluation::Heuristic,
            discount: 0.95,
            hint_weight: 0.9,
            virtual_loss: 1.0,
            stop_at_first_success: true,
            max_backup: 0.0,
            first_play_urgency: true,
            try_known_targets: false,
            flat_playout_depth: tree::FLAT_PLAYOUT_DEPTH,
            seed: 0,
            family: String::new(),
            max_crash_retries: 3,
            deadline: None,
            consented: Vec::new(),
        }
    }
}

impl SearchConfig {
    /// The configuration a task asks for (defaults for what a task does not say).
    pub fn for_task(task: &TaskSpec) -> SearchConfig {
        SearchConfig {
            weights: task.weights,
            risk_ceiling: task.risk_ceiling,
            action_budget: task.budget.actions,
            max_depth: task.budget.max_depth,
            cost_budget_ms: task.budget.cost_ms as f64,
            seed: task.seed,
            family: task.family(),
            deadline: Some(Duration::from_secs(u64::from(task.budget.wall_time_secs))),
            // On a live application a branch followed deep may write (an unrelated form
            // saved), and every later restore of the pages it changed diverges; there the
            // search keeps its breadth. Pages that hold no server state (`resettable`) get it.
            first_play_urgency: task.resettable,
            ..SearchConfig::default()
        }
    }
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// A success was found.
    Solved,
    /// No success; the reason.
    Failed(FailureReason),
}

/// One step of a path found.
#[derive(Debug, Clone, PartialEq)]
pub struct PathStep<A> {
    /// The action.
    pub action: A,
    /// The state it reached.
    pub fingerprint: Fingerprint,
    /// 1 at a success, else the state's value hint.
    pub reward: f64,
    /// What the action cost.
    pub cost: Cost,
    /// The action's risk class.
    pub risk: RiskClass,
}

/// An action the search would have taken but may not: it needs a human's approval.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval<A> {
    /// The path to the state where the action was offered.
    pub prefix: Vec<A>,
    /// The action.
    pub action: A,
    /// Its risk class.
    pub class: RiskClass,
    /// The policy's prior for it.
    pub prior: f64,
}

/// Counters of a search.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SearchMetrics {
    /// Actions executed by expansions and rollouts (what the budget counts).
    pub actions: u32,
    /// Actions executed again to restore states.
    pub replayed_actions: u64,
    /// Restores and actions repeated because a replay diverged or a page reported a
    /// transient error (HTTP 5xx), before giving up on them.
    pub retries: u64,
    /// Restores performed.
    pub restores: u64,
    /// Jobs that needed no restore because the worker was already at the state.
    pub restores_skipped: u64,
    /// Jobs completed.
    pub iterations: u64,
    /// Nodes in the tree, pruned ones included.
    pub nodes: u64,
    /// Successful states found.
    pub successes: u32,
    /// Budgeted actions spent when the first success was found.
    pub first_success_after: Option<u32>,
    /// Everything the environments reported spending (acts and restores).
    pub cost: Cost,
    /// Environment crashes survived.
    pub crashes: u32,
    /// Candidates never tried because their target location was already known.
    pub skipped_known_targets: u64,
    /// Candidates put after others because the tree held their other order (see
    /// `put_uncommuted_first`).
    pub commuted_later: u64,
    /// States at which the memory voted for some of the actions.
    pub remembered: u64,
    /// Nodes closed because their actions reached only known states (see
    /// `tree::COPY_AFTER_KNOWN`).
    pub copies_closed: u64,
}

/// What a search produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchReport<A> {
    /// How it ended.
    pub finish: Finish,
    /// The best success found: shortest, then cheapest.
    pub best: Option<Vec<PathStep<A>>>,
    /// Actions that were not executed because they need approval.
    pub approvals: Vec<Approval<A>>,
    /// Pruned children by reason kind.
    pub prunes: BTreeMap<&'static str, u32>,
    /// Counters.
    pub metrics: SearchMetrics,
}

#[cfg(test)]
mod tests;
