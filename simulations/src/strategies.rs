//! Search strategies compared on the same sites: forager's MCTS and three baselines.
//!
//! All four act through the same [`Environment`] interface under the same rules: the budget
//! counts executed actions (restoring a state by replay is counted separately), and no
//! strategy executes a candidate above the risk ceiling.
//!
//! - `mcts`: the engine in `forager-node`.
//! - `random`: uniform random walks from the start, restarted at dead ends or the depth limit.
//! - `bfs`: breadth-first over states (deduplicated by fingerprint), restoring by replay.
//! - `greedy`: always the highest-prior action, never backtracking; stops at a dead end or a loop.

use crate::env::{Counters, SimEnvironment};
use crate::site::Site;
use forager_node::environment::{Candidate, Environment};
use forager_node::memory::{FlatMemory, GoalEmbedder, ReplayMemory};
use forager_node::search::{self, Evaluation, Finish, NoObserver, SearchConfig};
use forager_protocol::wire::TraceStep;
use forager_protocol::{FailureReason, Fingerprint, RiskClass, ScoreWeights};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A search strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// forager's Monte-Carlo tree search.
    Mcts,
    /// Random walks.
    Random,
    /// Breadth-first search.
    Bfs,
    /// Highest prior first, no backtracking.
    Greedy,
}

impl Strategy {
    /// All strategies, MCTS first.
    pub const ALL: [Strategy; 4] = [
        Strategy::Mcts,
        Strategy::Random,
        Strategy::Bfs,
        Strategy::Greedy,
    ];

    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Mcts => "mcts",
            Strategy::Random => "random",
            Strategy::Bfs => "bfs",
            Strategy::Greedy => "greedy",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy {0:?}: expected mcts, random, bfs or greedy")]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownStrategy(s.to_owned()))
    }
}

/// How each site is searched.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Actions per site.
    pub budget: u32,
    /// Deepest path.
    pub max_depth: u32,
    /// Risk ceiling.
    pub ceiling: RiskClass,
    /// Score weights (MCTS only).
    pub weights: ScoreWeights,
    /// Leaf evaluation (MCTS only).
    pub evaluation: Evaluation,
    /// Stop at the first success (MCTS only; baselines always do).
    pub stop_at_first_success: bool,
    /// See [`SearchConfig::max_backup`] (MCTS only).
    pub max_backup: f64,
    /// See [`SearchConfig::try_known_targets`] (MCTS only).
    pub try_known_targets: bool,
    /// See [`SearchConfig::first_play_urgency`] (MCTS only).
    pub first_play_urgency: bool,
    /// Progressive widening (MCTS only).
    pub widening: forager_node::search::Widening,
    /// See [`SearchConfig::hint_weight`] (MCTS only).
    pub hint_weight: f64,
    /// Seed of the search's and the environment's random choices.
    pub seed: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        let defaults = SearchConfig::default();
        RunConfig {
            budget: 500,
            max_depth: 12,
            ceiling: RiskClass::DEFAULT_CEILING,
            weights: ScoreWeights::DEFAULT,
            evaluation: Evaluation::Heuristic,
            stop_at_first_success: true,
            max_backup: defaults.max_backup,
            try_known_targets: defaults.try_known_targets,
            first_play_urgency: defaults.first_play_urgency,
            widening: defaults.widening,
            hint_weight: defaults.hint_weight,
            seed: 0,
        }
    }
}

/// What one strategy did on one site.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteOutcome {
    /// The path found, if any (action ids).
    pub path: Option<Vec<u32>>,
    /// The site's optimal path length.
    pub optimal: Option<u32>,
    /// Why it failed, when it did.
    pub failure: Option<FailureReason>,
    /// Budgeted actions spent.
    pub actions: u32,
    /// Iterations (MCTS jobs; for baselines, actions).
    pub iterations: u64,
    /// What the environment counted.
    pub counters: Counters,
    /// Cost of the path found, in ms.
    pub path_cost_ms: u64,
    /// Highest risk class on the path found.
    pub path_risk: RiskClass,
    /// Whether the path passes a login.
    pub path_logs_in: bool,
    /// Actions that needed approval (MCTS reports them).
    pub approvals: usize,
    /// Time spent searching.
    pub elapsed: Duration,
}

impl SiteOutcome {
    /// Whether a path was found.
    pub fn solved(&self) -> bool {
        self.path.is_some()
    }
}

/// Runs a strategy on a site. `memory` feeds MCTS's replay bonus.
pub fn run_site(
    site: &Arc<Site>,
    strategy: Strategy,
    config: &RunConfig,
    memory: Option<Arc<dyn ReplayMemory + Send + Sync>>,
) -> SiteOutcome {
    let mut env = SimEnvironment::new(site.clone(), config.seed, config.ceiling);
    let started = Instant::now();
    let (path, failure, actions, iterations, approvals) = match strategy {
        Strategy::Mcts => mcts(&mut env, config, memory),
        Strategy::Random => baseline(random_walks(&mut env, config)),
        Strategy::Bfs => baseline(breadth_first(&mut env, config)),
        Strategy::Greedy => baseline(greedy(&mut env, config)),
    };
    let elapsed = started.elapsed();
    let mut state = site.start();
    let mut path_cost_ms = 0;
    let mut path_risk = RiskClass::ReadOnly;
    let mut path_logs_in = false;
    for &action in path.iter().flatten() {
        let def = &site.actions[action as usize];
        path_risk = path_risk.max(def.risk);
        path_logs_in |= matches!(def.effect, crate::site::Effect::Login(_));
        if let Some(next) = site.transition(state, action) {
            let slowness = site.pages[next.page as usize].slowness;
            path_cost_ms += (f64::from(site.params.latency_ms) * slowness) as u64;
            state = next;
        }
    }
    SiteOutcome {
        path,
        optimal: site.optimal_actions,
        failure,
        actions,
        iterations,
        counters: env.counters(),
        path_cost_ms,
        path_risk,
        path_logs_in,
        approvals,
        elapsed,
    }
}

type Found = (Option<Vec<u32>>, Option<FailureReason>, u32, u64, usize);

/// A baseline's path (if any), failure reason (if any) and actions spent.
type Baseline = (Option<Vec<u32>>, Option<FailureReason>, u32);

fn baseline((path, failure, actions): Baseline) -> Found {
    (path, failure, actions, u64::from(actions), 0)
}

fn mcts(
    env: &mut SimEnvironment,
    config: &RunConfig,
    memory: Option<Arc<dyn ReplayMemory + Send + Sync>>,
) -> Found {
    let search_config = SearchConfig {
        weights: config.weights,
        risk_ceiling: config.ceiling,
        action_budget: config.budget,
        max_depth: config.max_depth,
        evaluation: config.evaluation,
        stop_at_first_success: config.stop_at_first_success,
        max_backup: config.max_backup,
        try_known_targets: config.try_known_targets,
        first_play_urgency: config.first_play_urgency,
        widening: config.widening,
        hint_weight: config.hint_weight,
        seed: config.seed,
        family: family_name(env.site()),
        ..SearchConfig::default()
    };
    let result = futures::executor::block_on(search::run(
        std::slice::from_mut(env),
        search_config,
        memory,
        &mut NoObserver,
    ));
    match result {
        Ok((report, _tree)) => {
            let path = report
                .best
                .map(|steps| steps.into_iter().map(|s| s.action).collect());
            let failure = match report.finish {
                Finish::Solved => None,
                Finish::Failed(reason) => Some(reason),
            };
            (
                path,
                failure,
                report.metrics.actions,
                report.metrics.iterations,
                report.approvals.len(),
            )
        }
        Err(_) => (None, Some(FailureReason::BrowserCrashed), 0, 0, 0),
    }
}

/// The replay-bonus family of a site.
pub fn family_name(site: &Site) -> String {
    format!("sim-family-{:016x}", site.family)
}

/// Adds a solved site's path to the memory of its family.
pub fn remember(memory: &FlatMemory, site: &Site, path: &[u32]) {
    let tables = site.tables();
    let mut state = site.start();
    let mut trace = Vec::new();
    for &a in path {
        let location = tables.pages[state.page as usize].location;
        trace.push(TraceStep {
            location,
            // As `SimEnvironment` reports it.
            page_family: location.rotate_left(17),
            key: site.actions[a as usize].key,
        });
        match site.transition(state, a) {
            Some(next) => state = next,
            None => break,
        }
    }
    if let Ok(goal) = GoalEmbedder::Ngram.embed(&site.goal) {
        memory.insert(&family_name(site), goal, trace);
    }
}

fn allowed(candidates: Vec<Candidate<u32>>, ceiling: RiskClass) -> Vec<Candidate<u32>> {
    candidates
        .into_iter()
        .filter(|c| c.risk <= ceiling)
        .collect()
}

fn block<T>(future: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(future)
}

/// Restores, retrying a diverged replay as the MCTS driver does.
fn restore_retrying(env: &mut SimEnvironment, prefix: &[(u32, Fingerprint)]) -> bool {
    (0..3).any(|_| block(env.restore(prefix)).is_ok())
}

/// Acts, retrying (after restoring `prefix`) when the page reports a transient failure: the
/// same recovery the MCTS driver has, so that the comparison is about search alone.
fn act_retrying(
    env: &mut SimEnvironment,
    prefix: &[(u32, Fingerprint)],
    action: u32,
) -> Option<forager_node::Step> {
    for attempt in 1..=3 {
        let step = block(env.act(&action)).ok()?;
        if !step.state.transient || attempt == 3 {
            return Some(step);
        }
        if !restore_retrying(env, prefix) {
            return None;
        }
    }
    None
}

fn random_walks(env: &mut SimEnvironment, config: &RunConfig) -> Baseline {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x7a11);
    let mut actions = 0;
    while actions < config.budget {
        if block(env.restore(&[])).is_err() {
            break;
        }
        let mut path: Vec<(u32, Fingerprint)> = Vec::new();
        for _ in 0..config.max_depth {
            let candidates = allowed(block(env.candidates()).unwrap_or_default(), config.ceiling);
            if candidates.is_empty() || actions >= config.budget {
                break;
            }
            let choice = candidates[rng.random_range(0..candidates.len())].action;
            actions += 1;
            let Some(step) = act_retrying(env, &path, choice) else {
                break;
            };
            path.push((choice, step.state.fingerprint));
            if step.state.success {
                return (
                    Some(path.into_iter().map(|(a, _)| a).collect()),
                    None,
                    actions,
                );
            }
        }
    }
    (None, Some(FailureReason::BudgetExhausted), actions)
}

fn breadth_first(env: &mut SimEnvironment, config: &RunConfig) -> Baseline {
    let mut actions = 0;
    let Ok(root) = block(env.restore(&[])) else {
        return (None, Some(FailureReason::BrowserCrashed), 0);
    };
    if root.state.success {
        return (Some(Vec::new()), None, 0);
    }
    let mut seen: HashSet<Fingerprint> = HashSet::from([root.state.fingerprint]);
    // A crawler does not fetch a URL it has already fetched.
    let mut seen_locations: HashSet<u64> = HashSet::from([root.state.location]);
    let mut queue: VecDeque<Vec<(u32, Fingerprint)>> = VecDeque::from([Vec::new()]);
    while let Some(prefix) = queue.pop_front() {
        if prefix.len() as u32 >= config.max_depth {
            continue;
        }
        if !restore_retrying(env, &prefix) {
            continue;
        }
        let candidates: Vec<Candidate<u32>> =
            allowed(block(env.candidates()).unwrap_or_default(), config.ceiling)
                .into_iter()
                .filter(|c| c.target.is_none_or(|t| !seen_locations.contains(&t)))
                .collect();
        for (i, candidate) in candidates.iter().enumerate() {
            if actions >= config.budget {
                return (None, Some(FailureReason::BudgetExhausted), actions);
            }
            if i > 0 && !restore_retrying(env, &prefix) {
                break;
            }
            actions += 1;
            let Some(step) = act_retrying(env, &prefix, candidate.action) else {
                continue;
            };
            let mut path = prefix.clone();
            path.push((candidate.action, step.state.fingerprint));
            if step.state.success {
                return (
                    Some(path.into_iter().map(|(a, _)| a).collect()),
                    None,
                    actions,
                );
            }
            seen_locations.insert(step.state.location);
            if seen.insert(step.state.fingerprint) {
                queue.push_back(path);
            }
        }
    }
    (None, Some(FailureReason::SearchExhausted), actions)
}

fn greedy(env: &mut SimEnvironment, config: &RunConfig) -> Baseline {
    let mut actions = 0;
    let Ok(root) = block(env.restore(&[])) else {
        return (None, Some(FailureReason::BrowserCrashed), 0);
    };
    let mut visited: HashSet<Fingerprint> = HashSet::from([root.state.fingerprint]);
    let mut path: Vec<(u32, Fingerprint)> = Vec::new();
    for _ in 0..config.max_depth.min(config.budget) {
        let candidates = allowed(block(env.candidates()).unwrap_or_default(), config.ceiling);
        // Highest prior; the first of equals (the environment's order) for determinism.
        let Some(best) = candidates
            .iter()
            .fold(None::<&Candidate<u32>>, |best, c| match best {
                Some(b) if b.prior >= c.prior => Some(b),
                _ => Some(c),
            })
        else {
            return (None, Some(FailureReason::SearchExhausted), actions);
        };
        actions += 1;
        let Some(step) = act_retrying(env, &path, best.action) else {
            return (None, Some(FailureReason::SearchExhausted), actions);
        };
        path.push((best.action, step.state.fingerprint));
        if step.state.success {
            return (
                Some(path.into_iter().map(|(a, _)| a).collect()),
                None,
                actions,
            );
        }
        if !visited.insert(step.state.fingerprint) {
            return (None, Some(FailureReason::NoProgress), actions);
        }
    }
    (None, Some(FailureReason::BudgetExhausted), actions)
}
