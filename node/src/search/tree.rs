//! The search tree and its planner: no I/O, deterministic for a given seed and job order.
//!
//! [`Search::plan`] selects by the score (virtual loss included), widens in prior order, turns
//! candidates above the ceiling into `approval_required` prunes and returns a [`Job`];
//! [`Search::complete`] attaches the child, prunes it when it must (`pruning.rs`; a success is
//! never pruned), evaluates it (value hint or rollout) and backs up. A pruned child still costs
//! its parent a visit (the parent's own mean is backed up), so a node whose actions all reach
//! known states is not chosen again and again. Beyond plain UCT:
//!
//! - first-play urgency (`SearchConfig::first_play_urgency`, on for resettable tasks): a fresh
//!   candidate counts as [`FIRST_PLAY_VISITS`] visits worth its node's mean, so a child that
//!   clearly raised the value is followed before the allowance goes to its alike siblings;
//! - commuted orders last (`put_uncommuted_first`): a candidate whose other order the tree holds
//!   (B then A, when A then B was tried) moves behind the rest (`SearchMetrics::commuted_later`);
//! - a hidden change (handlers ran, the fingerprint did not move) stays open for
//!   [`MAX_HIDDEN_CHAIN`] steps, [`MAX_ROLL_CHAIN`] when the handlers drew random numbers (a die
//!   thrown again), and so does a detour of at most [`MAX_DETOUR`] steps back past a failure;
//! - states and locations other branches reached (`learn_states`, `learn_locations`) count as
//!   transpositions at the same or a smaller depth; a link to a known location is deferred and by
//!   default never tried (`SearchConfig::try_known_targets`);
//! - a node whose actions reached [`COPY_AFTER_KNOWN`] transpositions and nothing new closes as a
//!   copy, its untried candidates dropped (`SearchMetrics::copies_closed`);
//! - a flat node (a wordless page whose [`FLAT_MIN_CHILDREN`] children are valued within
//!   [`FLAT_SPREAD`] of it: a game's board) gets a uniform playout of up to [`FLAT_PLAYOUT_DEPTH`]
//!   steps after each action tried there; a playout that ends in a dead end values the action 0.
//!
//! Measured effects: `simulations/results/README.md`.

mod pruning;

use super::{Approval, Evaluation, Finish, PathStep, SearchConfig, SearchMetrics, SearchReport};
use crate::environment::{Candidate, EnvError, StateInfo, Step};
use crate::memory::ReplayMemory;
use forager_protocol::score::{ScoreInputs, parent_log, uct_score_with_parent_log};
use forager_protocol::trajectory::Cost;
use forager_protocol::{FailureReason, Fingerprint, PruneReason, RiskClass};
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Index of a node in the tree.
pub type NodeId = u32;
/// Identity of a job.
pub type JobId = u64;
/// Identity of a worker (one environment).
pub type WorkerId = usize;

const ROOT: NodeId = 0;

/// Most nodes reserved when a search starts (a larger budget grows the tree as it goes).
const MAX_RESERVED_NODES: u32 = 4096;

/// Where a node stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeStatus {
    /// Can be selected and expanded.
    Open,
    /// Its state satisfies the success predicates (terminal).
    Success,
    /// Everything below it has been explored or pruned.
    Exhausted,
    /// Cut, with the reason.
    Pruned(PruneReason),
}

/// Most actions in a row whose only effect is in the page's script ("press ONE, then TWO"):
/// enough for a sequence of hidden steps, few enough that a page whose every click runs a
/// handler does not double the tree at each level.
pub const MAX_HIDDEN_CHAIN: u32 = 2;

/// Most rolls in a row kept: actions whose handler drew random numbers and whose page looks
/// as before ("Generate" showed a number the fingerprint does not tell apart, or the same
/// one). Each is another throw of the page's dice: with a one-in-three chance per throw,
/// eleven throws (the first and ten kept repeats) all miss 1.2 % of the time (six kept
/// repeats were too few on a development seed of MiniWoB++'s generate-number, whose first
/// eight numbers all missed). A page whose every click draws pays at most this many levels
/// per candidate, within the budget.
pub const MAX_ROLL_CHAIN: u32 = 10;

/// Longest detour back to a state where an action failed that is kept rather than pruned as
/// a loop: two steps, a popup shown and dismissed.
pub const MAX_DETOUR: u32 = 2;

/// The visits a fresh candidate counts as under first-play urgency
/// ([`super::SearchConfig::first_play_urgency`]): fewer than one, so a child must beat its
/// node's mean by a margin before the node's next candidate waits. 0.5 is the best point of
/// 0.25–1 on the simulated sites (`simulations/results/README.md`).
pub const FIRST_PLAY_VISITS: f64 = 0.5;

/// Reached children a node needs before it can be called flat: three actions that changed the
/// page and not what the eyes measure are a pattern, one or two may be chance.
pub const FLAT_MIN_CHILDREN: usize = 3;

/// Widest gap between a child's value hint and its node's under which the node is flat: a
/// tie, allowing for rounding. A move on a game's board (a mark with no text) moves the eyes'
/// values by nothing; so do some moves on ordinary pages, whose values move in steps, which is
/// why a flat node must be `wordless` too.
pub const FLAT_SPREAD: f64 = 0.005;

/// Actions of a playout from a flat node ([`super::SearchConfig::flat_playout_depth`]):
/// enough to finish a game of tic-tac-toe from its first move (at most five of a player's
/// moves), with a no-op click or two on the way. Without them, a tree whose values are all
/// alike is searched breadth first and never reaches an outcome that needs three good moves
/// (9 × 7 × 5 paths).
pub const FLAT_PLAYOUT_DEPTH: u32 = 8;

/// Actions from a node that all reached states the tree (or another branch) holds by another
/// path, with nothing new among them, after which the node is closed as a copy: its page is
/// one the search has by another way (an inbox with one more star: every row it opens, the
/// unstarred inbox opens too), and every further action there would most likely be one more
/// known state at the price of an action. Two, not one: a first known state may be the
/// commuted order of two actions on a page that does hold something new. A loop back to the
/// path does not count: a "close" or "back" is on every page, the useful ones too.
pub const COPY_AFTER_KNOWN: u32 = 2;

struct Node<A> {
    parent: Option<NodeId>,
    /// The action from the parent; `None` at the root.
    action: Option<A>,
    key: u64,
    risk: RiskClass,
    prior: f64,
    depth: u32,
    /// `None` for children that were never executed (approval required, action failed).
    fingerprint: Option<Fingerprint>,
    status: NodeStatus,
    visits: u32,
    value_sum: f64,
    /// Best value backed up through this node (discounted to it).
    value_max: f64,
    in_flight: u32,
    value_hint: f64,
    step_cost: Cost,
    path_cost_ms: f64,
    /// Highest normalised risk on the path.
    path_risk: f64,
    /// Highest session fragility on the path.
    path_auth: f64,
    /// The memory's vote for the action that led here (the score's replay bonus R).
    replay: f64,
    /// The memory's votes for this state's actions, by key.
    votes: Vec<(u64, f64)>,
    /// Where its state is, and its kind (0 when never reached).
    location: u64,
    page_family: u64,
    /// Reached by an action whose only effect is in the page's script (same fingerprint as
    /// its parent, handlers ran): kept rather than pruned, see [`MAX_HIDDEN_CHAIN`].
    hidden: bool,
    /// Its page's controls show no words of their own (`StateInfo::wordless`).
    wordless: bool,
    /// Candidates in descending prior order; the first `next_candidate` are taken.
    candidates: Vec<Candidate<A>>,
    next_candidate: usize,
    /// Candidates whose target is already known (a link to a visited URL), tried only when
    /// nothing else is left here; the first `next_deferred` are taken.
    deferred: Vec<Candidate<A>>,
    next_deferred: usize,
    children: Vec<NodeId>,
}

impl<A> Node<A> {
    fn has_fresh(&self) -> bool {
        self.next_candidate < self.candidates.len()
    }

    fn has_deferred(&self) -> bool {
        self.next_deferred < self.deferred.len()
    }
}

/// Which list a candidate is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    Fresh,
    Deferred,
}

/// A read-only view of a node, for reports and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeView<'a, A> {
    /// The node.
    pub id: NodeId,
    /// Its parent.
    pub parent: Option<NodeId>,
    /// The action from the parent.
    pub action: Option<&'a A>,
    /// Depth from the root.
    pub depth: u32,
    /// Its state's fingerprint, if it was reached.
    pub fingerprint: Option<Fingerprint>,
    /// Its status.
    pub status: &'a NodeStatus,
    /// Completed visits.
    pub visits: u32,
    /// Mean backed-up value.
    pub mean_value: f64,
    /// The action's risk class.
    pub risk: RiskClass,
    /// What executing the action cost, in browser milliseconds.
    pub cost_ms: u64,
    /// The memory's vote for the action (the replay bonus R), in [0, 1].
    pub replay: f64,
    /// Where its state is ([`StateInfo::location`]; 0 when never reached).
    pub location: u64,
    /// Its state's kind ([`StateInfo::page_family`]).
    pub page_family: u64,
    /// The action's stable key ([`Candidate::key`]).
    pub key: u64,
}

/// Work for one environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Job<A> {
    /// The job's identity, to hand back with its outcome.
    pub id: JobId,
    /// The worker that must run it (its environment's position is tracked).
    pub worker: WorkerId,
    /// The node whose candidate is tried.
    pub parent: NodeId,
    /// The prefix that restores `parent` (actions with the fingerprints they must reach).
    pub prefix: Vec<(A, Fingerprint)>,
    /// Whether the worker's environment must replay `prefix` first (false when it is already
    /// at `parent`).
    pub restore: bool,
    /// The action to try.
    pub action: A,
    /// Whether to list the candidates of the state reached (false when it cannot be expanded).
    pub wants_candidates: bool,
    /// Rollout steps to take after the action (0 for heuristic evaluation).
    pub rollout_depth: u32,
    /// The rollout is a playout from a flat node, whose eyes cannot tell its actions apart:
    /// its choices are uniform, not weighted by the priors.
    pub playout: bool,
    /// Seed for the rollout's random choices.
    pub rollout_seed: u64,
    /// Highest risk class a rollout may execute.
    pub risk_ceiling: RiskClass,
}

/// One rollout step as executed.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutStep<A> {
    /// The candidate taken.
    pub candidate: Candidate<A>,
    /// What it reached.
    pub step: Step,
    /// The candidates there (empty at the end of the rollout).
    pub candidates: Vec<Candidate<A>>,
}

/// What running a job produced.
#[derive(Debug, Clone, PartialEq)]
pub enum JobOutcome<A> {
    /// Restoring the prefix failed; nothing was tried.
    RestoreFailed {
        /// Why.
        error: EnvError,
        /// Actions executed during the failed restore.
        executed: u32,
        /// What it cost.
        cost: Cost,
    },
    /// The prefix was restored (if asked) but the action failed.
    ActFailed {
        /// The restore, if one ran.
        restore: Option<Step>,
        /// Why.
        error: EnvError,
    },
    /// The action reached a state.
    Reached {
        /// The restore, if one ran.
        restore: Option<Step>,
        /// The action's step.
        step: Step,
        /// Candidates at the state reached (empty if not asked for).
        candidates: Vec<Candidate<A>>,
        /// Rollout steps after it.
        rollout: Vec<RolloutStep<A>>,
    },
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan<A> {
    /// Run this job.
    Job(Job<A>),
    /// Nothing to start until a job in flight completes.
    Wait,
    /// The search is over.
    Finished(Finish),
}

/// A map keyed by values that are hashes already (fingerprints, location hashes): one
/// multiply per word instead of SipHash, which was a tenth of a search's instructions. The
/// keys are not chosen by anyone to collide (a fingerprint is a SHA-256 digest), and a map
/// lives for one search.
type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`].
#[derive(Debug, Clone, Copy, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        // Multiply, then fold the high half down: hashbrown reads both the low bits (the
        // bucket) and the top ones (the tag).
        let mixed = (self.0 ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = mixed ^ (mixed >> 32);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

struct InFlight<A> {
    parent: NodeId,
    worker: WorkerId,
    reserved: u32,
    candidate: Candidate<A>,
    /// Its rollout is a playout from a flat node: an outcome it reached is the node's value.
    playout: bool,
}

/// The search tree and planner. See the module documentation of [`crate::search`].
pub struct Search<A> {
    config: SearchConfig,
    nodes: Vec<Node<A>>,
    /// Fingerprint → the node that owns the state (the shallowest live one).
    table: KeyMap<Fingerprint, NodeId>,
    /// Location (URL hash) → the smallest depth at which it was reached.
    locations: KeyMap<u64, u32>,
    /// States other searches of the task reached (another branch, the start page), with
    /// their depth below this root: reaching one again no shallower is a transposition.
    external_states: KeyMap<Fingerprint, u32>,
    memory: Option<Arc<dyn ReplayMemory + Send + Sync>>,
    rng: rand::rngs::ChaCha8Rng,
    /// Jobs in flight: one per worker at most, so a list.
    in_flight: Vec<(JobId, InFlight<A>)>,
    next_job: JobId,
    reserved: u32,
    positions: Vec<Option<NodeId>>,
    best: Option<NodeId>,
    approvals: Vec<(NodeId, NodeId)>,
    prunes: BTreeMap<&'static str, u32>,
    metrics: SearchMetrics,
    /// Set when a worker's environment crashed too often, or the deadline passed.
    forced_finish: Option<Finish>,
    late_prunes: Vec<NodeId>,
}

impl<A: Clone> Search<A> {
    /// A tree whose root is the start state and its candidates.
    pub fn new(
        config: SearchConfig,
        root: StateInfo,
        root_candidates: Vec<Candidate<A>>,
        memory: Option<Arc<dyn ReplayMemory + Send + Sync>>,
    ) -> Search<A> {
        let rng = rand::rngs::ChaCha8Rng::seed_from_u64(config.seed);
        // A node per budgeted action, about: reserved at once rather than copied as it grows.
        let nodes = Vec::with_capacity(config.action_budget.min(MAX_RESERVED_NODES) as usize + 1);
        let mut search = Search {
            config,
            nodes,
            table: KeyMap::default(),
            locations: KeyMap::default(),
            external_states: KeyMap::default(),
            memory,
            rng,
            in_flight: Vec::new(),
            next_job: 0,
            reserved: 0,
            positions: Vec::new(),
            best: None,
            approvals: Vec::new(),
            prunes: BTreeMap::new(),
            metrics: SearchMetrics::default(),
            forced_finish: None,
            late_prunes: Vec::new(),
        };
        let status = if root.success {
            NodeStatus::Success
        } else {
            NodeStatus::Open
        };
        search.nodes.push(Node {
            parent: None,
            action: None,
            key: 0,
            risk: RiskClass::ReadOnly,
            prior: 1.0,
            depth: 0,
            fingerprint: Some(root.fingerprint),
            status,
            visits: 1,
            value_sum: if root.success { 1.0 } else { 0.0 },
            value_max: if root.success { 1.0 } else { 0.0 },
            in_flight: 0,
            value_hint: root.value_hint,
            step_cost: Cost::default(),
            path_cost_ms: 0.0,
            path_risk: 0.0,
            path_auth: root.auth.clamp(0.0, 1.0),
            replay: 0.0,
            votes: Vec::new(),
            location: root.location,
            page_family: root.page_family,
            hidden: false,
            wordless: root.wordless,
            candidates: Vec::new(),
            next_candidate: 0,
            deferred: Vec::new(),
            next_deferred: 0,
            children: Vec::new(),
        });
        // A branch that starts where the mounted session no longer holds: nothing below it
        // can be reached logged in.
        let root_candidates = if root.session_expired && !root.success {
            search.nodes[ROOT as usize].status = NodeStatus::Pruned(PruneReason::SessionExpired);
            *search
                .prunes
                .entry(PruneReason::SessionExpired.kind())
                .or_default() += 1;
            Vec::new()
        } else {
            root_candidates
        };
        let (candidates, votes) = search.remembered(&root, root_candidates);
        search.nodes[ROOT as usize].candidates = candidates;
        search.nodes[ROOT as usize].votes = votes;
        search.table.insert(root.fingerprint, ROOT);
        search.locations.insert(root.location, 0);
        search.metrics.nodes = 1;
        if root.success {
            search.best = Some(ROOT);
            search.metrics.successes = 1;
            search.metrics.first_success_after = Some(0);
        }
        search
    }

    /// The configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The counters so far.
    pub fn metrics(&self) -> &SearchMetrics {
        &self.metrics
    }

    /// Children pruned so far, by reason name.
    pub fn prunes(&self) -> &BTreeMap<&'static str, u32> {
        &self.prunes
    }

    /// Whether any job is in flight.
    pub fn busy(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Ends the search early with this result (deadline, crashed environment).
    pub fn force_finish(&mut self, finish: Finish) {
        self.forced_finish.get_or_insert(finish);
    }

    /// Allows `actions` more actions from now and clears a finish forced by a deadline, so
    /// that a finished search can be resumed (a node continuing a branch it was given again).
    pub fn extend(&mut self, actions: u32) {
        self.config.action_budget = self.metrics.actions.saturating_add(actions);
        if matches!(
            self.forced_finish,
            Some(Finish::Failed(FailureReason::Timeout))
        ) {
            self.forced_finish = None;
        }
    }

    /// Locations this search has reached or learned, each with the fewest actions from its
    /// root.
    pub fn locations(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.locations.iter().map(|(l, d)| (*l, *d))
    }

    /// Marks locations reached elsewhere (another search of the same task, in another branch)
    /// as known `depth` actions below this root: links to them are deferred as if this search
    /// had reached them, so that two searches do not explore one state twice.
    pub fn learn_locations(&mut self, known: impl IntoIterator<Item = (u64, u32)>) {
        for (location, depth) in known {
            self.locations
                .entry(location)
                .and_modify(|d| *d = (*d).min(depth))
                .or_insert(depth);
        }
    }

    /// States this search owns, each with its depth below the root (for the other searches
    /// of the task: see [`Search::learn_states`]).
    pub fn states(&self) -> impl Iterator<Item = (Fingerprint, u32)> + '_ {
        self.table.iter().filter_map(|(fingerprint, &owner)| {
            let node = &self.nodes[owner as usize];
            (!matches!(node.status, NodeStatus::Pruned(_)) && node.parent.is_some())
                .then_some((*fingerprint, node.depth))
        })
    }

    /// Marks states reached elsewhere (another branch of the same task, the start page) as
    /// known `depth` actions below this root: reached again here at that depth or deeper,
    /// they are cut as transpositions, as two paths to one state are in one tree.
    pub fn learn_states(&mut self, known: impl IntoIterator<Item = (Fingerprint, u32)>) {
        for (fingerprint, depth) in known {
            self.external_states
                .entry(fingerprint)
                .and_modify(|d| *d = (*d).min(depth))
                .or_insert(depth);
        }
    }

    /// Sets the wall-clock limit of the next `run_from`.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Duration>) {
        self.config.deadline = deadline;
    }

    /// Counts a crash survived.
    pub fn note_crash(&mut self) {
        self.metrics.crashes += 1;
    }

    /// Number of nodes in the tree.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The prefix (actions and expected fingerprints) that restores a node's state.
    pub fn restore_prefix(&self, id: NodeId) -> Vec<(A, Fingerprint)> {
        self.prefix(id)
    }

    /// Forgets where a worker's environment is (after a crash and restart).
    pub fn forget_position(&mut self, worker: WorkerId) {
        if let Some(slot) = self.positions.get_mut(worker) {
            *slot = None;
        }
    }

    /// Records that a worker's environment is at the start state (after a fresh observe).
    pub fn set_position_root(&mut self, worker: WorkerId) {
        self.ensure_worker(worker);
        self.positions[worker] = Some(ROOT);
    }

    fn ensure_worker(&mut self, worker: WorkerId) {
        if self.positions.len() <= worker {
            self.positions.resize(worker + 1, None);
        }
    }

    /// The next job for `worker`, a reason to wait, or the end of the search.
    pub fn plan(&mut self, worker: WorkerId) -> Plan<A> {
        self.ensure_worker(worker);
        if let Some(finish) = self.forced_finish {
            return if self.busy() {
                Plan::Wait
            } else {
                Plan::Finished(finish)
            };
        }
        if self.best.is_some() && self.config.stop_at_first_success {
            return if self.busy() {
                Plan::Wait
            } else {
                Plan::Finished(Finish::Solved)
            };
        }
        if self.metrics.actions + self.reserved >= self.config.action_budget {
            return if self.busy() {
                Plan::Wait
            } else {
                Plan::Finished(self.finish_without_more_work(FailureReason::BudgetExhausted))
            };
        }
        let mut blocked: Vec<NodeId> = Vec::new();
        loop {
            let Some((parent, pick)) = self.select(&mut blocked) else {
                return if self.busy() {
                    Plan::Wait
                } else {
                    Plan::Finished(self.finish_without_more_work(FailureReason::SearchExhausted))
                };
            };
            if pick == Pick::Fresh {
                self.put_uncommuted_first(parent);
            }
            let node = &mut self.nodes[parent as usize];
            let candidate = match pick {
                Pick::Fresh => {
                    node.next_candidate += 1;
                    node.candidates[node.next_candidate - 1].clone()
                }
                Pick::Deferred => {
                    node.next_deferred += 1;
                    node.deferred[node.next_deferred - 1].clone()
                }
            };
            if let Some(reason) = candidate.refused.clone() {
                let child = self.add_child(parent, &candidate, None);
                self.prune(child, reason);
                continue;
            }
            if candidate.risk > self.config.risk_ceiling && !self.consented(parent, &candidate) {
                let child = self.add_child(parent, &candidate, None);
                self.prune(
                    child,
                    PruneReason::ApprovalRequired {
                        class: candidate.risk,
                    },
                );
                self.approvals.push((parent, child));
                continue;
            }
            let budget_left = self.config.action_budget - self.metrics.actions - self.reserved;
            let child_depth = self.nodes[parent as usize].depth + 1;
            let expandable = child_depth < self.config.max_depth;
            let playout = self.config.evaluation == Evaluation::Heuristic
                && self.config.flat_playout_depth > 0
                && pick == Pick::Fresh
                && self.flat(parent);
            let rollout_depth = match self.config.evaluation {
                Evaluation::Heuristic if playout => self.config.flat_playout_depth,
                Evaluation::Heuristic => 0,
                Evaluation::Rollout { depth } => depth,
            };
            let rollout = if expandable {
                rollout_depth
                    .min(budget_left.saturating_sub(1))
                    .min(self.config.max_depth - child_depth)
            } else {
                0
            };
            let reserved = 1 + rollout;
            let restore = self.positions[worker] != Some(parent);
            // Virtual loss along the path.
            let mut cursor = Some(parent);
            while let Some(id) = cursor {
                self.nodes[id as usize].in_flight += 1;
                cursor = self.nodes[id as usize].parent;
            }
            self.positions[worker] = None;
            self.reserved += reserved;
            let id = self.next_job;
            self.next_job += 1;
            self.in_flight.push((
                id,
                InFlight {
                    parent,
                    worker,
                    reserved,
                    candidate: candidate.clone(),
                    playout,
                },
            ));
            return Plan::Job(Job {
                id,
                worker,
                parent,
                prefix: self.prefix(parent),
                restore,
                action: candidate.action,
                wants_candidates: expandable,
                rollout_depth: rollout,
                playout,
                rollout_seed: self.rng.next_u64(),
                risk_ceiling: self.config.risk_ceiling,
            });
        }
    }

    /// Whether the node's actions change its page without changing what the eyes measure, on
    /// a page whose controls show no words to read (`wordless`): [`FLAT_MIN_CHILDREN`] reached
    /// children or more, each valued within [`FLAT_SPREAD`] of it; or fewer, none valued
    /// apart, below a flat node whose value it shares (a board after a move is a board). Its
    /// moves are told apart only by where they lead in the end, so an action tried there is
    /// followed by a playout. (Values tie on ordinary pages too, where the eyes' value moves in
    /// steps: a search form and its results; there the controls' words tell the actions apart,
    /// and playouts only spent the budget: MiniWoB++ search-engine, development seed 2001.)
    fn flat(&self, id: NodeId) -> bool {
        let node = &self.nodes[id as usize];
        if !node.wordless {
            return false;
        }
        let mut reached = 0;
        for &child in &node.children {
            let child = &self.nodes[child as usize];
            if child.fingerprint.is_none() || matches!(child.status, NodeStatus::Pruned(_)) {
                continue;
            }
            if (child.value_hint - node.value_hint).abs() > FLAT_SPREAD {
                return false;
            }
            reached += 1;
        }
        reached >= FLAT_MIN_CHILDREN
            || node.parent.is_some_and(|parent| {
                (self.nodes[parent as usize].value_hint - node.value_hint).abs() <= FLAT_SPREAD
                    && self.flat(parent)
            })
    }

    /// The failure reason when no more work can start, refined by what was seen.
    fn finish_without_more_work(&self, default: FailureReason) -> Finish {
        if self.best.is_some() {
            return Finish::Solved;
        }
        match default {
            // Branches lost to replays that kept diverging explain an exhausted search best.
            FailureReason::SearchExhausted if self.prunes.contains_key("nondeterministic") => {
                Finish::Failed(FailureReason::Nondeterministic)
            }
            FailureReason::SearchExhausted if !self.approvals.is_empty() => {
                Finish::Failed(FailureReason::ApprovalRequired)
            }
            FailureReason::SearchExhausted
                if self.nodes.len() > 1
                    && self.nodes[1..].iter().all(|n| {
                        matches!(
                            n.status,
                            NodeStatus::Pruned(PruneReason::NoProgress | PruneReason::Loop)
                        )
                    }) =>
            {
                Finish::Failed(FailureReason::NoProgress)
            }
            other => Finish::Failed(other),
        }
    }

    /// Whether a node may get new children: open, not too deep, and (when refining after a
    /// success) still able to lead to a strictly shorter one.
    fn expandable(&self, id: NodeId) -> bool {
        let node = &self.nodes[id as usize];
        if node.status != NodeStatus::Open || node.depth + 1 > self.config.max_depth {
            return false;
        }
        match self.best {
            Some(best) => node.depth + 1 < self.nodes[best as usize].depth,
            None => true,
        }
    }

    fn live_children(&self, id: NodeId) -> u32 {
        self.nodes[id as usize]
            .children
            .iter()
            .filter(|&&c| {
                matches!(
                    self.nodes[c as usize].status,
                    NodeStatus::Open | NodeStatus::Success | NodeStatus::Exhausted
                )
            })
            .count() as u32
    }

    /// Moves fresh candidates whose target is already known (reached at the same or a smaller
    /// depth) to the deferred list. Knowing only ever grows, so a deferred candidate stays so.
    fn defer_known(&mut self, id: NodeId) {
        let child_depth = self.nodes[id as usize].depth + 1;
        loop {
            let node = &self.nodes[id as usize];
            let Some(candidate) = node.candidates.get(node.next_candidate) else {
                return;
            };
            let known = candidate
                .target
                .and_then(|t| self.locations.get(&t))
                .is_some_and(|&depth| depth <= child_depth);
            if !known {
                return;
            }
            let node = &mut self.nodes[id as usize];
            let candidate = node.candidates[node.next_candidate].clone();
            node.deferred.push(candidate);
            node.next_candidate += 1;
            if !self.config.try_known_targets {
                self.metrics.skipped_known_targets += 1;
            }
        }
    }

    /// Whether the tree already holds the other order of the last action to `id` and the
    /// candidate `key`: `id`'s parent has a child by `key`, which has a child by `id`'s own
    /// action. Actions on different items of a page (a "Like" on two posts, a star on two
    /// rows) commute, so the candidate would most likely reach a state the tree has.
    fn other_order_known(&self, id: NodeId, key: u64) -> bool {
        let node = &self.nodes[id as usize];
        let Some(parent) = node.parent else {
            return false;
        };
        let executed = |c: &NodeId, k: u64| {
            let child = &self.nodes[*c as usize];
            child.key == k && child.fingerprint.is_some()
        };
        self.nodes[parent as usize]
            .children
            .iter()
            .filter(|c| executed(c, key))
            .any(|c| {
                self.nodes[*c as usize]
                    .children
                    .iter()
                    .any(|g| executed(g, node.key))
            })
    }

    /// Moves the first fresh candidate of `id` whose other order the tree does not hold to the
    /// front of the fresh ones (the rest keep their order): commuted orders are tried last.
    fn put_uncommuted_first(&mut self, id: NodeId) {
        let node = &self.nodes[id as usize];
        let start = node.next_candidate;
        let first_new = (start..node.candidates.len())
            .find(|&i| !self.other_order_known(id, node.candidates[i].key));
        if let Some(i) = first_new
            && i > start
        {
            self.nodes[id as usize].candidates[start..=i].rotate_right(1);
            self.metrics.commuted_later += 1;
        }
    }

    /// Walks down from the root to the node whose next candidate should be tried.
    fn select(&mut self, blocked: &mut Vec<NodeId>) -> Option<(NodeId, Pick)> {
        'restart: loop {
            let mut id = ROOT;
            loop {
                self.defer_known(id);
                let node = &self.nodes[id as usize];
                let expandable = self.expandable(id);
                let can_expand = expandable && node.has_fresh();
                let live = self.live_children(id);
                let widening_allows =
                    can_expand && (live as usize) < self.config.widening.allowed(node.visits);
                if widening_allows && (!self.config.first_play_urgency || live == 0) {
                    return Some((id, Pick::Fresh));
                }
                let parent_visits =
                    f64::from(node.visits) + self.config.virtual_loss * f64::from(node.in_flight);
                let parent_log = parent_log(parent_visits);
                let mut best: Option<(NodeId, f64)> = None;
                for &child in &node.children {
                    let c = &self.nodes[child as usize];
                    if c.status != NodeStatus::Open || blocked.contains(&child) {
                        continue;
                    }
                    // Q blends the mean and the best backed-up value (see `max_backup`).
                    let beta = self.config.max_backup.clamp(0.0, 1.0);
                    let visits = f64::from(c.visits).max(1.0);
                    let blended = (1.0 - beta) * c.value_sum + beta * c.value_max * visits;
                    let score = uct_score_with_parent_log(
                        &self.config.weights,
                        &ScoreInputs {
                            value_sum: blended,
                            visits: f64::from(c.visits),
                            virtual_visits: self.config.virtual_loss * f64::from(c.in_flight),
                            parent_visits,
                            replay_similarity: c.replay,
                            risk: c.path_risk,
                            cost: c.path_cost_ms / self.config.cost_budget_ms.max(1.0),
                            auth: c.path_auth,
                        },
                        parent_log,
                    );
                    // Ties go to the earlier child (higher prior): deterministic.
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((child, score));
                    }
                }
                if widening_allows {
                    // First-play urgency: a fresh candidate scores as half a visit worth this
                    // node's mean value (what its children have been worth so far). A child
                    // that did clearly better is followed before the allowance goes to its
                    // siblings.
                    let node = &self.nodes[id as usize];
                    let mean = node.value_sum / f64::from(node.visits.max(1));
                    let fresh = uct_score_with_parent_log(
                        &self.config.weights,
                        &ScoreInputs {
                            value_sum: FIRST_PLAY_VISITS * mean,
                            visits: FIRST_PLAY_VISITS,
                            virtual_visits: 0.0,
                            parent_visits,
                            replay_similarity: 0.0,
                            risk: node.path_risk,
                            cost: node.path_cost_ms / self.config.cost_budget_ms.max(1.0),
                            auth: node.path_auth,
                        },
                        parent_log,
                    );
                    if best.is_none_or(|(_, s)| fresh >= s) {
                        return Some((id, Pick::Fresh));
                    }
                }
                match best {
                    Some((child, _)) => id = child,
                    None if can_expand => return Some((id, Pick::Fresh)),
                    None if expandable && node.has_deferred() && self.config.try_known_targets => {
                        return Some((id, Pick::Deferred));
                    }
                    None => {
                        // Nothing to do below this node now.
                        if self.nodes[id as usize].in_flight > 0 {
                            blocked.push(id);
                        } else if self.nodes[id as usize].status == NodeStatus::Open {
                            self.nodes[id as usize].status = NodeStatus::Exhausted;
                        }
                        if id == ROOT {
                            return None;
                        }
                        continue 'restart;
                    }
                }
            }
        }
    }

    /// Whether a user consented to `candidate` at `parent` (it is above the ceiling).
    fn consented(&self, parent: NodeId, candidate: &Candidate<A>) -> bool {
        if self.config.consented.is_empty() {
            return false;
        }
        let path: Vec<u64> = self.path_nodes(parent)[1..]
            .iter()
            .map(|&id| self.nodes[id as usize].key)
            .collect();
        self.config
            .consented
            .iter()
            .any(|c| c.key == candidate.key && candidate.risk <= c.risk && c.path == path)
    }

    /// Actions and fingerprints from the root to `id`.
    fn prefix(&self, id: NodeId) -> Vec<(A, Fingerprint)> {
        let mut path = Vec::with_capacity(self.nodes[id as usize].depth as usize);
        let mut cursor = id;
        while let Some(parent) = self.nodes[cursor as usize].parent {
            let node = &self.nodes[cursor as usize];
            if let (Some(action), Some(fingerprint)) = (&node.action, node.fingerprint) {
                path.push((action.clone(), fingerprint));
            }
            cursor = parent;
        }
        path.reverse();
        path
    }

    fn path_nodes(&self, id: NodeId) -> Vec<NodeId> {
        let mut path = vec![id];
        let mut cursor = id;
        while let Some(parent) = self.nodes[cursor as usize].parent {
            path.push(parent);
            cursor = parent;
        }
        path.reverse();
        path
    }

    fn add_child(
        &mut self,
        parent: NodeId,
        candidate: &Candidate<A>,
        reached: Option<&Step>,
    ) -> NodeId {
        let id = self.nodes.len() as NodeId;
        let p = &self.nodes[parent as usize];
        let replay = p
            .votes
            .iter()
            .find(|(key, _)| *key == candidate.key)
            .map_or(0.0, |(_, vote)| *vote);
        let (fingerprint, value_hint, auth, cost) = match reached {
            Some(step) => (
                Some(step.state.fingerprint),
                step.state.value_hint.clamp(0.0, 1.0),
                step.state.auth.clamp(0.0, 1.0),
                step.cost,
            ),
            None => (None, 0.0, 0.0, Cost::default()),
        };
        let node = Node {
            parent: Some(parent),
            action: Some(candidate.action.clone()),
            key: candidate.key,
            risk: candidate.risk,
            prior: candidate.prior,
            depth: p.depth + 1,
            fingerprint,
            status: NodeStatus::Open,
            visits: 0,
            value_sum: 0.0,
            value_max: 0.0,
            in_flight: 0,
            value_hint,
            step_cost: cost,
            path_cost_ms: p.path_cost_ms + cost.priced_ms(1.0),
            path_risk: p.path_risk.max(candidate.risk.normalised()),
            path_auth: p.path_auth.max(auth),
            replay,
            votes: Vec::new(),
            location: reached.map_or(0, |step| step.state.location),
            page_family: reached.map_or(0, |step| step.state.page_family),
            hidden: reached.is_some_and(|step| step.state.hidden_change),
            wordless: reached.is_some_and(|step| step.state.wordless),
            candidates: Vec::new(),
            next_candidate: 0,
            deferred: Vec::new(),
            next_deferred: 0,
            children: Vec::new(),
        };
        self.nodes.push(node);
        self.nodes[parent as usize].children.push(id);
        self.metrics.nodes += 1;
        id
    }

    /// A state's candidates in the order they will be tried, after the memory's votes
    /// ([`crate::memory::raise_priors`]: plausible remembered routes are tried first); the votes are
    /// kept for the children's replay bonus.
    fn remembered(
        &mut self,
        state: &StateInfo,
        mut candidates: Vec<Candidate<A>>,
    ) -> (Vec<Candidate<A>>, Vec<(u64, f64)>) {
        let Some(memory) = &self.memory else {
            return (sorted(candidates), Vec::new());
        };
        let votes = crate::memory::raise_priors(&mut candidates, &memory.votes(state));
        if !votes.is_empty() {
            self.metrics.remembered += 1;
        }
        (sorted(candidates), votes)
    }

    fn backup(&mut self, from: NodeId, value: f64) {
        let mut value = value.clamp(0.0, 1.0);
        let mut cursor = Some(from);
        while let Some(id) = cursor {
            let node = &mut self.nodes[id as usize];
            node.visits += 1;
            node.value_sum += value;
            node.value_max = node.value_max.max(value);
            value *= self.config.discount;
            cursor = node.parent;
        }
    }

    fn record_success(&mut self, id: NodeId) {
        self.metrics.successes += 1;
        if self.metrics.first_success_after.is_none() {
            self.metrics.first_success_after = Some(self.metrics.actions);
        }
        let better = match self.best {
            None => true,
            Some(best) => {
                let (b, n) = (&self.nodes[best as usize], &self.nodes[id as usize]);
                n.depth < b.depth || (n.depth == b.depth && n.path_cost_ms < b.path_cost_ms)
            }
        };
        if better {
            self.best = Some(id);
        }
    }

    /// Adds a reached state as a child; returns it and whether it is live (not pruned).
    fn attach(
        &mut self,
        parent: NodeId,
        candidate: &Candidate<A>,
        step: &Step,
        candidates: Vec<Candidate<A>>,
    ) -> (NodeId, bool) {
        let child = self.add_child(parent, candidate, Some(step));
        let depth = self.nodes[child as usize].depth;
        self.locations
            .entry(step.state.location)
            .and_modify(|d| *d = (*d).min(depth))
            .or_insert(depth);
        // A success is never redundant: the predicates can hold on a page whose fingerprint did
        // not change (a script's reward, a value in a field), and that page is the goal, not a
        // repeat of its parent. Nor does it claim the state from the parent that shares it.
        if !step.state.success {
            // A dead end first: a failure the page shows only in script state looks like no
            // progress, and it is the failure that matters.
            if step.state.dead_end {
                self.prune(child, PruneReason::DeadEnd);
                return (child, false);
            }
            if step.state.session_lost {
                self.prune(child, PruneReason::SessionLost);
                return (child, false);
            }
            if step.state.session_expired {
                self.prune(child, PruneReason::SessionExpired);
                return (child, false);
            }
            match self.redundancy(child) {
                // A change only the page's script holds: kept, a few in a row at most. It
                // shares its parent's fingerprint, so it owns no state of its own.
                Some(PruneReason::NoProgress)
                    if step.state.hidden_change
                        && self.hidden_chain(parent)
                            < if step.state.rolled {
                                MAX_ROLL_CHAIN
                            } else {
                                MAX_HIDDEN_CHAIN
                            } => {}
                // Back where an action failed, by a short detour (a popup that took the
                // field's focus, shown and dismissed): the page looks as it did, but pages
                // remember what they showed, and what failed there may work now. Kept as a
                // hidden change, to try it again.
                Some(PruneReason::Loop)
                    if self.detour_past_failure(child)
                        && self.hidden_chain(parent) < MAX_HIDDEN_CHAIN =>
                {
                    self.nodes[child as usize].hidden = true;
                }
                Some(reason) => {
                    self.prune(child, reason);
                    return (child, false);
                }
                None => self.claim_state(child),
            }
        }
        if step.state.success {
            self.nodes[child as usize].status = NodeStatus::Success;
            self.record_success(child);
        } else {
            let (candidates, votes) = self.remembered(&step.state, candidates);
            self.nodes[child as usize].candidates = candidates;
            self.nodes[child as usize].votes = votes;
            if self.nodes[child as usize].depth >= self.config.max_depth {
                self.prune(child, PruneReason::DepthLimit);
                // Still a real state: it keeps its visit below.
                return (child, true);
            }
        }
        (child, true)
    }

    /// Counts restores or actions a worker repeated.
    pub fn note_retries(&mut self, retries: u32) {
        self.metrics.retries += u64::from(retries);
    }

    /// Absorbs a job's outcome.
    pub fn complete(&mut self, job: JobId, outcome: JobOutcome<A>) {
        let Some(index) = self.in_flight.iter().position(|(id, _)| *id == job) else {
            tracing::warn!(job, "outcome for an unknown job ignored");
            return;
        };
        let (_, flight) = self.in_flight.swap_remove(index);
        self.reserved -= flight.reserved;
        let mut cursor = Some(flight.parent);
        while let Some(id) = cursor {
            let node = &mut self.nodes[id as usize];
            node.in_flight = node.in_flight.saturating_sub(1);
            cursor = node.parent;
        }
        self.metrics.iterations += 1;
        let candidate = flight.candidate;

        let restore = match &outcome {
            JobOutcome::RestoreFailed { executed, cost, .. } => Some(Step {
                state: StateInfo {
                    fingerprint: Fingerprint([0; 16]),
                    success: false,
                    dead_end: false,
                    hidden_change: false,
                    rolled: false,
                    wordless: false,
                    value_hint: 0.0,
                    auth: 0.0,
                    location: 0,
                    page_family: 0,
                    logged_in: false,
                    session_lost: false,
                    session_expired: false,
                    transient: false,
                },
                cost: *cost,
                executed: *executed,
            }),
            JobOutcome::ActFailed { restore, .. } | JobOutcome::Reached { restore, .. } => *restore,
        };
        match restore {
            Some(step) => {
                self.metrics.restores += 1;
                self.metrics.replayed_actions += u64::from(step.executed);
                self.metrics.cost = self.metrics.cost.plus(step.cost);
            }
            None => self.metrics.restores_skipped += 1,
        }

        match outcome {
            JobOutcome::RestoreFailed { error, .. } => {
                // The candidate was not tried, but the restore failure prunes the parent or
                // one of its ancestors, so it could never be tried from here anyway.
                self.restore_failed(flight.parent, error);
            }
            JobOutcome::ActFailed { error, .. } => {
                self.metrics.actions += 1;
                let child = self.add_child(flight.parent, &candidate, None);
                let reason = match error {
                    EnvError::RiskUnderestimated { class, .. } => {
                        PruneReason::RiskUnderestimated { class }
                    }
                    EnvError::WriteTaken(_) => PruneReason::WriteTaken,
                    EnvError::WriteElsewhere { .. } => PruneReason::WriteElsewhere,
                    error => PruneReason::ActionFailed {
                        reason: error.to_string(),
                    },
                };
                self.prune(child, reason);
            }
            JobOutcome::Reached {
                step,
                candidates,
                rollout,
                ..
            } => {
                self.metrics.actions += 1 + rollout.len() as u32;
                self.metrics.cost = self.metrics.cost.plus(step.cost);
                for r in &rollout {
                    self.metrics.cost = self.metrics.cost.plus(r.step.cost);
                }
                let rolled_out = !rollout.is_empty();
                let (child, live) = self.attach(flight.parent, &candidate, &step, candidates);
                if !live {
                    // An action that found nothing new still cost a visit: the parent's mean
                    // is backed up (its value stays, its exploration bonus pays), or a node
                    // whose actions all lead to known states is chosen again and again until
                    // none is left (a "star" beside every row of an inbox).
                    let parent = &self.nodes[flight.parent as usize];
                    if parent.visits > 0 {
                        let mean = parent.value_sum / f64::from(parent.visits);
                        self.backup(flight.parent, mean);
                    }
                    self.close_if_copy(flight.parent);
                    return;
                }
                let (value, leaf) = self.evaluate(child, &step, rollout, flight.playout);
                self.backup(leaf, value);
                // The worker's environment sits at the new state unless a rollout moved it.
                if !rolled_out && self.nodes[child as usize].status == NodeStatus::Open {
                    self.positions[flight.worker] = Some(child);
                }
            }
        }
    }

    /// The value of a new leaf and the node to back up from (a rollout's success, if any).
    fn evaluate(
        &mut self,
        child: NodeId,
        step: &Step,
        rollout: Vec<RolloutStep<A>>,
        playout: bool,
    ) -> (f64, NodeId) {
        if step.state.success {
            return (1.0, child);
        }
        let hint_value = self.config.hint_weight * step.state.value_hint.clamp(0.0, 1.0);
        if rollout.is_empty() {
            return (hint_value, child);
        }
        if rollout.last().is_some_and(|r| r.step.state.success) {
            // Keep the rollout's path: it is a success the tree must be able to return.
            let mut parent = child;
            for r in rollout {
                if self.nodes[parent as usize].status != NodeStatus::Open {
                    break;
                }
                // A step that left the page as it was is no part of the path.
                if !r.step.state.success
                    && !r.step.state.hidden_change
                    && self.nodes[parent as usize].fingerprint == Some(r.step.state.fingerprint)
                {
                    continue;
                }
                // The rollout took this candidate from `parent`; record it as expanded there.
                let (node, live) = self.attach(parent, &r.candidate, &r.step, r.candidates);
                if !live {
                    break;
                }
                parent = node;
            }
            if self.nodes[parent as usize].status == NodeStatus::Success {
                return (1.0, parent);
            }
            return (hint_value, child);
        }
        // A playout that ended the game without winning it lost it: on a flat node that is all
        // there is to tell its actions apart. (A random walk from an ordinary page that hits a
        // dead end says little of the action before it: there the hint stands.)
        if playout && rollout.last().is_some_and(|r| r.step.state.dead_end) {
            return (0.0, child);
        }
        let steps = rollout.len() as i32;
        let last_hint = rollout
            .last()
            .filter(|r| !r.step.state.dead_end)
            .map_or(0.0, |r| r.step.state.value_hint.clamp(0.0, 1.0));
        let rollout_value = self.config.hint_weight * last_hint * self.config.discount.powi(steps);
        (hint_value.max(rollout_value), child)
    }

    fn restore_failed(&mut self, target: NodeId, error: EnvError) {
        match error {
            EnvError::Diverged { step, .. } => {
                // The node at depth step+1 on the path is where replay went elsewhere.
                let path = self.path_nodes(target);
                let at = path.get(step + 1).copied().unwrap_or(target);
                self.prune(at, PruneReason::Nondeterministic);
            }
            // Jobs in flight may each find it: the root is cut once.
            EnvError::RootDiverged { .. } => {
                if !matches!(self.nodes[ROOT as usize].status, NodeStatus::Pruned(_)) {
                    self.prune(ROOT, PruneReason::Nondeterministic);
                }
            }
            EnvError::ReplayUnsafe(_) if target != ROOT => self.freeze(target),
            other => {
                if target != ROOT {
                    self.prune(
                        target,
                        PruneReason::ActionFailed {
                            reason: format!("restore: {other}"),
                        },
                    );
                } else {
                    self.force_finish(Finish::Failed(FailureReason::Nondeterministic));
                }
            }
        }
    }

    /// The report of the search so far.
    pub fn report(&self, finish: Finish) -> SearchReport<A> {
        let best = self.best.map(|best| {
            self.path_nodes(best)
                .into_iter()
                .skip(1)
                .filter_map(|id| {
                    let n = &self.nodes[id as usize];
                    Some(PathStep {
                        action: n.action.clone()?,
                        fingerprint: n.fingerprint?,
                        reward: if n.status == NodeStatus::Success {
                            1.0
                        } else {
                            n.value_hint
                        },
                        cost: n.step_cost,
                        risk: n.risk,
                    })
                })
                .collect()
        });
        let approvals = self
            .approvals
            .iter()
            .filter_map(|&(parent, child)| {
                let c = &self.nodes[child as usize];
                Some(Approval {
                    prefix: self.prefix(parent).into_iter().map(|(a, _)| a).collect(),
                    action: c.action.clone()?,
                    class: c.risk,
                    prior: c.prior,
                })
            })
            .collect();
        SearchReport {
            finish,
            best,
            approvals,
            prunes: self.prunes.clone(),
            metrics: self.metrics,
        }
    }

    /// Every node, in creation order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeView<'_, A>> {
        self.nodes.iter().enumerate().map(|(i, n)| NodeView {
            id: i as NodeId,
            parent: n.parent,
            action: n.action.as_ref(),
            depth: n.depth,
            fingerprint: n.fingerprint,
            status: &n.status,
            visits: n.visits,
            mean_value: if n.visits > 0 {
                n.value_sum / f64::from(n.visits)
            } else {
                0.0
            },
            risk: n.risk,
            cost_ms: n.step_cost.browser_ms,
            replay: n.replay,
            location: n.location,
            page_family: n.page_family,
            key: n.key,
        })
    }
}

fn sorted<A>(mut candidates: Vec<Candidate<A>>) -> Vec<Candidate<A>> {
    // Stable: equal priors keep the environment's order, so runs are repeatable.
    candidates.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    candidates
}
