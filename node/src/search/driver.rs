//! Runs a [`Search`] on one or more environments.
//!
//! Each environment is a worker. The driver asks the tree for a job per idle worker, runs the
//! jobs concurrently (they overlap whenever environments await real I/O), and feeds each
//! outcome back. A crashed environment is recovered and its job retried, up to
//! [`SearchConfig::max_crash_retries`] consecutive crashes; the deadline is checked after
//! every job.
//!
//! A diverged replay or a transient page is tried up to three times (`ATTEMPTS`) before the job
//! fails. A rollout draws by prior (uniformly in a playout), skips candidates above the ceiling
//! or refused, and never picks again an action that left its page as it was (a square taken).

use super::tree::{Job, JobOutcome, NodeId, Plan, RolloutStep, Search, WorkerId};
use super::{Finish, SearchConfig, SearchReport};
use crate::environment::{Candidate, EnvError, Environment};
use crate::memory::ReplayMemory;
use forager_protocol::{FailureReason, Fingerprint};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;
use std::time::Instant;

/// Why a search could not run at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// No environment was given.
    #[error("a search needs at least one environment")]
    NoEnvironment,
    /// The start state could not be observed.
    #[error("cannot observe the start state: {0}")]
    Start(#[source] EnvError),
}

/// Something that happened during a search, for progress displays and event logs.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchEvent {
    /// A node was added to the tree (pruned ones included; look at its status).
    NodeAdded(NodeId),
    /// An existing node was cut (its status says why).
    NodePruned(NodeId),
    /// A worker's environment crashed and was recovered.
    Crashed {
        /// The worker.
        worker: WorkerId,
        /// What the environment said.
        error: String,
    },
    /// The search ended.
    Finished(Finish),
}

/// Receives [`SearchEvent`]s with read access to the tree.
pub trait SearchObserver<A> {
    /// Called after each change.
    fn on_event(&mut self, search: &Search<A>, event: &SearchEvent);

    /// Asked after every job: true stops the search (`interrupted`), as on Ctrl-C.
    fn should_stop(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl<A> SearchObserver<A> for NoObserver {
    fn on_event(&mut self, _search: &Search<A>, _event: &SearchEvent) {}
}

/// Searches with the given environments as workers; returns the report and the tree.
pub async fn run<E: Environment>(
    workers: &mut [E],
    config: SearchConfig,
    memory: Option<Arc<dyn ReplayMemory + Send + Sync>>,
    observer: &mut (dyn SearchObserver<E::Action> + Send),
) -> Result<(SearchReport<E::Action>, Search<E::Action>), SearchError> {
    let (first, _) = workers
        .split_first_mut()
        .ok_or(SearchError::NoEnvironment)?;
    let search = start(first, config, memory).await?;
    Ok(run_from(workers, search, observer).await)
}

/// Observes the start state in `env` and roots a tree there (`env` stays at the root).
pub async fn start<E: Environment>(
    env: &mut E,
    config: SearchConfig,
    memory: Option<Arc<dyn ReplayMemory + Send + Sync>>,
) -> Result<Search<E::Action>, SearchError> {
    env.restore(&[]).await.map_err(SearchError::Start)?;
    let root = env.observe().await.map_err(SearchError::Start)?;
    let root_candidates = env.candidates().await.map_err(SearchError::Start)?;
    let mut search = Search::new(config, root, root_candidates, memory);
    search.set_position_root(0);
    Ok(search)
}

/// Continues a tree with the given workers until it finishes (give it more budget with
/// [`Search::extend`] to resume a finished one).
pub async fn run_from<E: Environment>(
    workers: &mut [E],
    mut search: Search<E::Action>,
    observer: &mut (dyn SearchObserver<E::Action> + Send),
) -> (SearchReport<E::Action>, Search<E::Action>) {
    if let [env] = workers {
        return run_alone(env, search, observer).await;
    }
    let started = Instant::now();
    let deadline = search.config().deadline;
    let max_crashes = search.config().max_crash_retries;
    let mut idle: Vec<(WorkerId, &mut E)> = workers.iter_mut().enumerate().rev().collect();
    let mut running = FuturesUnordered::new();
    let mut consecutive_crashes = 0u32;
    let mut seen_nodes = 1usize;

    loop {
        while let Some((worker, env)) = idle.pop() {
            match search.plan(worker) {
                Plan::Job(job) => running.push(execute(worker, env, job)),
                Plan::Wait | Plan::Finished(_) => {
                    idle.push((worker, env));
                    break;
                }
            }
        }
        seen_nodes = announce_new_nodes(&mut search, observer, seen_nodes);
        let Some((worker, env, job, outcome, retries)) = running.next().await else {
            // Nothing running and nothing to start: the plan said Finished.
            let finish = match search.plan(0) {
                Plan::Finished(finish) => finish,
                Plan::Job(_) | Plan::Wait => {
                    // Unreachable by construction (Wait implies work in flight); end safely.
                    Finish::Failed(FailureReason::SearchExhausted)
                }
            };
            observer.on_event(&search, &SearchEvent::Finished(finish));
            return (search.report(finish), search);
        };
        if let Some(error) = crash_of(&outcome) {
            consecutive_crashes += 1;
            let retry = recover_from_crash(
                &mut search,
                observer,
                worker,
                env,
                error,
                consecutive_crashes <= max_crashes,
            )
            .await;
            if retry {
                let mut retry = job;
                retry.restore = true;
                running.push(execute(worker, env, retry));
                continue;
            }
        } else {
            consecutive_crashes = 0;
        }
        search.note_retries(retries);
        search.complete(job.id, outcome);
        seen_nodes = announce_new_nodes(&mut search, observer, seen_nodes);
        idle.push((worker, env));
        if deadline.is_some_and(|limit| started.elapsed() >= limit) {
            search.force_finish(Finish::Failed(FailureReason::Timeout));
        }
        if observer.should_stop() {
            search.force_finish(Finish::Failed(FailureReason::Interrupted));
        }
    }
}

/// [`run_from`] with one worker. Its jobs cannot overlap, so each runs to its end in place,
/// without the boxed task, the wakers and the moves of large futures that a set of concurrent
/// jobs costs (a tenth of a simulated search's time). Plans, completions and events come in
/// the same order as in the general loop.
async fn run_alone<E: Environment>(
    env: &mut E,
    mut search: Search<E::Action>,
    observer: &mut (dyn SearchObserver<E::Action> + Send),
) -> (SearchReport<E::Action>, Search<E::Action>) {
    const WORKER: WorkerId = 0;
    let started = Instant::now();
    let deadline = search.config().deadline;
    let max_crashes = search.config().max_crash_retries;
    let mut consecutive_crashes = 0u32;
    let mut seen_nodes = 1usize;

    loop {
        let planned = search.plan(WORKER);
        seen_nodes = announce_new_nodes(&mut search, observer, seen_nodes);
        let Plan::Job(mut job) = planned else {
            // Nothing in flight: as in the general loop, the plan is asked once more.
            let finish = match search.plan(WORKER) {
                Plan::Finished(finish) => finish,
                Plan::Job(_) | Plan::Wait => Finish::Failed(FailureReason::SearchExhausted),
            };
            observer.on_event(&search, &SearchEvent::Finished(finish));
            return (search.report(finish), search);
        };
        loop {
            let span =
                tracing::debug_span!("job", worker = WORKER, branch = job.parent, job = job.id);
            let (outcome, retries) =
                tracing::Instrument::instrument(execute_job(env, &job), span).await;
            if let Some(error) = crash_of(&outcome) {
                consecutive_crashes += 1;
                let retry = recover_from_crash(
                    &mut search,
                    observer,
                    WORKER,
                    env,
                    error,
                    consecutive_crashes <= max_crashes,
                )
                .await;
                if retry {
                    job.restore = true;
                    seen_nodes = announce_new_nodes(&mut search, observer, seen_nodes);
                    continue;
                }
            } else {
                consecutive_crashes = 0;
            }
            search.note_retries(retries);
            search.complete(job.id, outcome);
            seen_nodes = announce_new_nodes(&mut search, observer, seen_nodes);
            break;
        }
        if deadline.is_some_and(|limit| started.elapsed() >= limit) {
            search.force_finish(Finish::Failed(FailureReason::Timeout));
        }
        if observer.should_stop() {
            search.force_finish(Finish::Failed(FailureReason::Interrupted));
        }
    }
}

/// Counts a worker's crash, tells the observer and restarts the environment; whether the job
/// is to be retried (`may_retry` and the environment came back), else the search is finished
/// as crashed.
async fn recover_from_crash<E: Environment>(
    search: &mut Search<E::Action>,
    observer: &mut (dyn SearchObserver<E::Action> + Send),
    worker: WorkerId,
    env: &mut E,
    error: &EnvError,
    may_retry: bool,
) -> bool {
    observer.on_event(
        search,
        &SearchEvent::Crashed {
            worker,
            error: error.to_string(),
        },
    );
    search.note_crash();
    let recovered = env.recover().await;
    search.forget_position(worker);
    if may_retry && recovered.is_ok() {
        tracing::warn!(worker, %error, "environment crashed; retrying the job");
        return true;
    }
    tracing::error!(worker, %error, "environment crashed too often; giving up");
    search.force_finish(Finish::Failed(FailureReason::BrowserCrashed));
    false
}

fn announce_new_nodes<A: Clone>(
    search: &mut Search<A>,
    observer: &mut (dyn SearchObserver<A> + Send),
    seen: usize,
) -> usize {
    let total = search.node_count();
    for id in seen..total {
        observer.on_event(search, &SearchEvent::NodeAdded(id as NodeId));
    }
    for id in search.take_late_prunes() {
        if (id as usize) < seen {
            observer.on_event(search, &SearchEvent::NodePruned(id));
        }
    }
    total
}

fn crash_of<A>(outcome: &JobOutcome<A>) -> Option<&EnvError> {
    match outcome {
        JobOutcome::RestoreFailed { error, .. } | JobOutcome::ActFailed { error, .. } => {
            matches!(error, EnvError::Crashed(_)).then_some(error)
        }
        JobOutcome::Reached { .. } => None,
    }
}

/// Attempts per restore or action when a replay diverges or a page reports a transient
/// failure: glitches happen on real sites, and losing a branch to one is worse than a retry.
const ATTEMPTS: u32 = 3;

/// Runs one job on one environment.
async fn execute<E: Environment>(
    worker: WorkerId,
    env: &mut E,
    job: Job<E::Action>,
) -> (WorkerId, &mut E, Job<E::Action>, JobOutcome<E::Action>, u32) {
    let span = tracing::debug_span!("job", worker, branch = job.parent, job = job.id);
    let (outcome, retries) = tracing::Instrument::instrument(execute_job(env, &job), span).await;
    (worker, env, job, outcome, retries)
}

async fn restore_with_retries<E: Environment>(
    env: &mut E,
    prefix: &[(E::Action, forager_protocol::Fingerprint)],
    retries: &mut u32,
) -> Result<crate::environment::Step, EnvError> {
    let mut attempt = 1;
    loop {
        match env.restore(prefix).await {
            Err(EnvError::Diverged { .. } | EnvError::RootDiverged { .. })
                if attempt < ATTEMPTS =>
            {
                attempt += 1;
                *retries += 1;
            }
            other => return other,
        }
    }
}

async fn execute_job<E: Environment>(
    env: &mut E,
    job: &Job<E::Action>,
) -> (JobOutcome<E::Action>, u32) {
    let mut retries = 0;
    let mut restore = None;
    if job.restore {
        match restore_with_retries(env, &job.prefix, &mut retries).await {
            Ok(step) => restore = Some(step),
            Err(error) => {
                let outcome = JobOutcome::RestoreFailed {
                    error,
                    executed: 0,
                    cost: Default::default(),
                };
                return (outcome, retries);
            }
        }
    }
    let mut attempt = 1;
    let step = loop {
        match env.act(&job.action).await {
            Ok(step) if step.state.transient && attempt < ATTEMPTS => {
                attempt += 1;
                retries += 1;
                if let Err(error) = restore_with_retries(env, &job.prefix, &mut retries).await {
                    return (JobOutcome::ActFailed { restore, error }, retries);
                }
            }
            Ok(step) => break step,
            Err(error) => return (JobOutcome::ActFailed { restore, error }, retries),
        }
    };
    if step.state.success || !job.wants_candidates {
        let outcome = JobOutcome::Reached {
            restore,
            step,
            candidates: Vec::new(),
            rollout: Vec::new(),
        };
        return (outcome, retries);
    }
    let candidates = match env.candidates().await {
        Ok(candidates) => candidates,
        Err(error @ EnvError::Crashed(_)) => {
            return (JobOutcome::ActFailed { restore, error }, retries);
        }
        // A page whose actions cannot be listed is a dead end, not a failed action.
        Err(_) => Vec::new(),
    };
    let rollout = if job.rollout_depth > 0 {
        roll_out(env, job, candidates.clone(), step.state.fingerprint).await
    } else {
        Vec::new()
    };
    let outcome = JobOutcome::Reached {
        restore,
        step,
        candidates,
        rollout,
    };
    (outcome, retries)
}

/// A prior-weighted random walk that never executes a candidate above the ceiling. An action
/// that left the page as it was (a click on a square already marked) is not picked again in
/// the walk: a walk is a guess, and one that spends its steps on what did nothing guesses
/// little.
async fn roll_out<E: Environment>(
    env: &mut E,
    job: &Job<E::Action>,
    mut candidates: Vec<Candidate<E::Action>>,
    mut here: Fingerprint,
) -> Vec<RolloutStep<E::Action>> {
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(job.rollout_seed);
    let mut steps = Vec::new();
    let mut idle: Vec<u64> = Vec::new();
    for _ in 0..job.rollout_depth {
        let Some(candidate) = pick(&mut rng, &candidates, job, &idle) else {
            break;
        };
        let Ok(step) = env.act(&candidate.action).await else {
            break;
        };
        if step.state.fingerprint == here && !step.state.hidden_change {
            idle.push(candidate.key);
        }
        here = step.state.fingerprint;
        // A success or a dead end ends the walk: nothing past either counts.
        let terminal = step.state.success || step.state.dead_end;
        let next = if terminal {
            Vec::new()
        } else {
            env.candidates().await.unwrap_or_default()
        };
        steps.push(RolloutStep {
            candidate,
            step,
            candidates: next.clone(),
        });
        if terminal {
            break;
        }
        candidates = next;
    }
    steps
}

fn pick<A: Clone>(
    rng: &mut rand::rngs::ChaCha8Rng,
    candidates: &[Candidate<A>],
    job: &Job<A>,
    idle: &[u64],
) -> Option<Candidate<A>> {
    let weight = |c: &Candidate<A>| {
        if job.playout {
            1.0
        } else {
            c.prior.max(0.0) + 0.01
        }
    };
    let allowed = |c: &&Candidate<A>| {
        c.risk <= job.risk_ceiling && c.refused.is_none() && !idle.contains(&c.key)
    };
    let total: f64 = candidates.iter().filter(allowed).map(weight).sum();
    if total <= 0.0 {
        return None;
    }
    let mut target = rng.random_range(0.0..total);
    let mut last = None;
    for candidate in candidates.iter().filter(allowed) {
        target -= weight(candidate);
        last = Some(candidate);
        if target <= 0.0 {
            break;
        }
    }
    last.cloned()
}
