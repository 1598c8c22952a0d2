//! Searching a branch: checking its search out, restoring its root, running the tree for the
//! assignment's budget, and reporting what it found.
//!
//! `reach_branch_root` replays the known part of the prefix and executes the rest; for a
//! remembered workflow (`BranchAssignment::workflow`) a step that cannot be taken or leads nowhere
//! makes the last page reached the branch root, and the search goes on from there. A branch whose
//! page another branch already owns is given up at once as exhausted. The signed report carries
//! the numbers the queen bounds: visits, value, actions, newly known locations and states, prunes
//! by reason, page-cache and model counters, successes with what was seen per step, the tree's
//! new part. A root that, reached with a mounted capsule, asks to log in again reports
//! `session_ended`, and the queen ends the task `session_expired` at once.

use super::branches::{Branch, BranchState, Branches, CheckedOut, Checkout, check_in};
use super::consent::{check_capsule, consented_for, refused_at_the_network, unconsented_prefix};
use super::publish::RolloutObserver;
use super::replay::seen_along;
use super::{now_nanos, sign};
use crate::embed::action_key;
use crate::environment::{EnvError, Environment};
use crate::factory::EnvFactory;
use crate::memory::ReplayMemory;
use crate::net::NodeIdentity;
use crate::search;
use crate::search::{Finish, NodeStatus, Search, SearchConfig};
use forager_protocol::result::NetworkSummary;
use forager_protocol::trajectory::{Cost, TrajectoryVector};
use forager_protocol::wire::{
    Announcement, BranchAssignment, FoundPath, KnownLocation, KnownState, MAX_TREE_NODES, Message,
    ProgressAnswer, ProgressReport, Refusal, RefusalReason, TraceStep, TreeNode, TreeSnapshot,
    TreeStatus,
};
use forager_protocol::{Action, FailureReason, Fingerprint, PruneReason, TaskSpec};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::sync::mpsc;

/// What a branch search gets from the memory: the votes, and the goal's vector (with its
/// embedder) for the rollouts it gossips.
pub(super) struct Remembered {
    pub(super) memory: Arc<dyn ReplayMemory + Send + Sync>,
    pub(super) goal: Option<(TrajectoryVector, forager_protocol::wire::EmbedderId)>,
}

pub(super) async fn search_branch<F: EnvFactory>(
    factory: &F,
    identity: &NodeIdentity,
    branches: &std::sync::Mutex<Branches<F::Env>>,
    assignment: BranchAssignment,
    remembered: Remembered,
    rollouts: mpsc::Sender<Announcement>,
    claims: crate::claims::WriteClaims,
) -> Message {
    if let Err(detail) = check_capsule(&assignment.task) {
        return Refusal::new(RefusalReason::InvalidTask, detail).into();
    }
    let key = (assignment.task_id, assignment.branch);
    let (checked_out, released) = {
        let mut map = branches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        (map.check_out(key), map.stop_flag(key.0))
    };
    let mut state = match checked_out {
        Checkout::Kept(state) => *state,
        Checkout::Busy => {
            return Refusal::new(
                RefusalReason::Busy,
                format!("branch {} is being searched here", assignment.branch.0),
            )
            .into();
        }
        Checkout::New => match factory.create(&assignment.task, false) {
            Ok(env) => BranchState {
                env: Branch {
                    inner: env,
                    prefix: Vec::new(),
                },
                search: None,
                tree: 0,
            },
            Err(e) => {
                check_in(branches, key, None);
                return Refusal::new(
                    RefusalReason::NoEnvironment,
                    format!("cannot create an environment: {e}"),
                )
                .into();
            }
        },
    };
    // Should the search panic, the branch is checked in empty (searched afresh next time).
    let guard = CheckedOut {
        branches,
        key,
        returned: false,
    };
    F::set_write_claims(&mut state.env.inner, claims);
    let before = F::counters(&state.env.inner);
    let mut report = run_branch(&mut state, &assignment, remembered, rollouts, released).await;
    let mut screenshots = Vec::new();
    for path in &mut report.successes {
        path.seen = seen_along::<F>(&state.env.inner, path, &mut screenshots);
    }
    report.network = F::network(&state.env.inner);
    let after = F::counters(&state.env.inner);
    let counters = &mut report.counters;
    counters.cache_hits = after.cache_hits.saturating_sub(before.cache_hits);
    counters.cache_misses = after.cache_misses.saturating_sub(before.cache_misses);
    counters.pages_read = after.pages_read.saturating_sub(before.pages_read);
    counters.reading_us = after.reading_us.saturating_sub(before.reading_us);
    // Taken, not diffed: what expansions and replays in between asked rides along here.
    counters.model = F::take_model_usage(&state.env.inner);
    guard.check_in(state);
    match sign(identity, report) {
        Ok(report) => Message::Progress(Box::new(ProgressAnswer {
            report,
            screenshots,
        })),
        Err(refusal) => refusal.into(),
    }
}

pub(super) async fn run_branch<E: Environment<Action = Action>>(
    state: &mut BranchState<E>,
    assignment: &BranchAssignment,
    remembered: Remembered,
    rollouts: mpsc::Sender<Announcement>,
    released: Arc<AtomicBool>,
) -> ProgressReport {
    let Remembered { memory, goal } = remembered;
    let mut report = empty_report(assignment);
    let deadline = Duration::from_millis(assignment.deadline_ms);
    let search = match state.search.take() {
        Some(mut search) => {
            search.extend(assignment.actions);
            search.set_deadline(Some(deadline));
            search
        }
        None => match open_branch(state, assignment, memory, &mut report).await {
            Some(search) => search,
            None => return report,
        },
    };
    explore_branch(
        state,
        assignment,
        search,
        goal,
        (rollouts, released),
        report,
    )
    .await
}

/// A report that says nothing yet.
pub(super) fn empty_report(assignment: &BranchAssignment) -> ProgressReport {
    ProgressReport {
        task: assignment.task_id,
        branch: assignment.branch,
        prefix_fingerprints: Vec::new(),
        visits: 0,
        value_sum: 0.0,
        best_value: 0.0,
        actions: 0,
        replayed: 0,
        cost: Cost::default(),
        successes: Vec::new(),
        approvals: Vec::new(),
        exhausted: false,
        error: None,
        network: NetworkSummary::default(),
        counters: Default::default(),
        locations: Vec::new(),
        states: Vec::new(),
        tree: TreeSnapshot::default(),
        session_ended: false,
    }
}

/// How a branch root was reached: the prefix with its fingerprints, or why not.
pub(super) enum Reached {
    /// At the branch root.
    Root(Vec<(Action, Fingerprint)>),
    /// A login page where the session held: `true` when the start page itself asks (the
    /// server ended the mounted session).
    LoggedOut(bool),
    /// The branch's action changed nothing, or ended the task.
    Nothing,
}

/// Reaches the branch root (replays what is known, executes the rest) and starts a search
/// there; `None` with the report saying why when it cannot.
pub(super) async fn open_branch<E: Environment<Action = Action>>(
    state: &mut BranchState<E>,
    assignment: &BranchAssignment,
    memory: Arc<dyn ReplayMemory + Send + Sync>,
    report: &mut ProgressReport,
) -> Option<Search<Action>> {
    let task = &assignment.task;
    if let Some(i) = unconsented_prefix(task, assignment) {
        report.error = Some(format!(
            "the branch's step {} ({}) is above the task's ceiling and no consent covers it",
            i + 1,
            assignment.prefix[i].label()
        ));
        report.exhausted = true;
        return None;
    }
    let known: Vec<(Action, Fingerprint)> = assignment
        .prefix
        .iter()
        .cloned()
        .zip(assignment.expected.iter().copied())
        .collect();
    let reached = reach_branch_root(&mut state.env.inner, assignment, &known, report).await;
    let prefix = match reached {
        Ok(Reached::Root(prefix)) => prefix,
        Ok(Reached::LoggedOut(ended)) => {
            report.error = Some(
                "the branch lands on a login page: the mounted session no longer holds".into(),
            );
            report.session_ended = ended && task.session.is_some();
            report
                .counters
                .pruned
                .insert(PruneReason::SessionExpired.kind().to_owned(), 1);
            report.exhausted = true;
            return None;
        }
        Ok(Reached::Nothing) => {
            report.error = Some("the branch's action changed nothing, or ended the task".into());
            report.exhausted = true;
            return None;
        }
        Err(EnvError::RiskUnderestimated { class, request }) => {
            let at = (known.len() + report.actions as usize)
                .min(assignment.prefix.len().saturating_sub(1));
            refused_at_the_network(report, task, &assignment.prefix, at, class, &request);
            return None;
        }
        Err(e) => {
            report.error = Some(format!("cannot reach the branch: {e}"));
            report.exhausted = !matches!(e, EnvError::Crashed(_) | EnvError::Timeout { .. });
            return None;
        }
    };
    state.env.prefix = prefix;
    let deadline = Duration::from_millis(assignment.deadline_ms);
    let config = SearchConfig {
        action_budget: assignment.actions.saturating_sub(report.actions).max(1),
        max_depth: task
            .budget
            .max_depth
            .saturating_sub(assignment.prefix.len() as u32)
            .max(1),
        deadline: Some(deadline),
        consented: consented_for(task, assignment),
        ..SearchConfig::for_task(task)
    };
    // The env is at the branch root: its restore(&[]) is a no-op there.
    match search::start(&mut state.env, config, Some(memory)).await {
        Ok(search) => {
            state.tree = now_nanos();
            Some(search)
        }
        Err(e) => {
            report.error = Some(e.to_string());
            None
        }
    }
}

/// Replays the `known` part of the branch's prefix and executes the rest, counting what it
/// executes in `report`.
pub(super) async fn reach_branch_root<E: Environment<Action = Action>>(
    env: &mut E,
    assignment: &BranchAssignment,
    known: &[(Action, Fingerprint)],
    report: &mut ProgressReport,
) -> Result<Reached, EnvError> {
    let mut here = env.restore(known).await?.state;
    if here.session_expired && !here.success {
        // Where the session held before, a login page: the server ended it.
        return Ok(Reached::LoggedOut(true));
    }
    let mut prefix = known.to_vec();
    for action in &assignment.prefix[known.len()..] {
        if assignment.workflow && here.success {
            // A remembered workflow's success came before its last steps.
            break;
        }
        let step = match env.act(action).await {
            Ok(step) => step,
            // A remembered workflow's step this page lacks: the search goes on from here.
            Err(
                e @ (EnvError::TargetMissing(_)
                | EnvError::TargetHidden(_)
                | EnvError::TargetCovered(_)
                | EnvError::NavigationBlocked(_)),
            ) if assignment.workflow => {
                tracing::info!(step = prefix.len() + 1, error = %e, "the remembered workflow diverges");
                break;
            }
            Err(e) => return Err(e),
        };
        report.actions += 1;
        let stayed = step.state.fingerprint == here.fingerprint
            && !step.state.success
            && !step.state.hidden_change;
        if stayed || step.state.dead_end {
            if !assignment.workflow {
                // As a node's tree prunes such a child: nothing below it is new.
                return Ok(Reached::Nothing);
            }
            tracing::info!(
                step = prefix.len() + 1,
                "the remembered workflow's step leads nowhere"
            );
            if step.state.dead_end {
                // Back to the last page the workflow reached.
                env.restore(&prefix).await?;
            }
            break;
        }
        if step.state.session_expired && !step.state.success {
            return Ok(Reached::LoggedOut(false));
        }
        prefix.push((action.clone(), step.state.fingerprint));
        here = step.state;
    }
    Ok(Reached::Root(prefix))
}

/// Runs the branch's search within its assignment and reports what it found.
pub(super) async fn explore_branch<E: Environment<Action = Action>>(
    state: &mut BranchState<E>,
    assignment: &BranchAssignment,
    search: Search<Action>,
    goal: Option<(TrajectoryVector, forager_protocol::wire::EmbedderId)>,
    (rollouts, released): (mpsc::Sender<Announcement>, Arc<AtomicBool>),
    mut report: ProgressReport,
) -> ProgressReport {
    let task = &assignment.task;
    let mut search = search;
    // Depths on the wire count from the start URL; this tree's from the branch root.
    let below_root = state.env.prefix.len() as u32;
    // Another branch owns this branch's page (two first actions that lead to the same state,
    // as typing with and without Enter often do): everything below it is searched there.
    let root_succeeded = search
        .nodes()
        .next()
        .is_some_and(|root| matches!(root.status, NodeStatus::Success));
    if let Some((_, root)) = state.env.prefix.last()
        && !root_succeeded
        && assignment
            .known_states
            .iter()
            .any(|k| k.fingerprint == *root && k.depth <= below_root)
    {
        report.error = Some("another branch reaches this branch's page".into());
        report.exhausted = true;
        state.search = Some(search);
        return report;
    }
    search.learn_locations(
        assignment
            .known_locations
            .iter()
            .map(|k| (k.location, k.depth.saturating_sub(below_root))),
    );
    search.learn_states(
        assignment
            .known_states
            .iter()
            .map(|k| (k.fingerprint, k.depth.saturating_sub(below_root))),
    );
    report.prefix_fingerprints = state.env.prefix.iter().map(|(_, f)| *f).collect();
    let (visits_before, value_before) = root_stats(&search);
    // The prefix's pages are not seen here (the start page was opened by the expanding
    // node): the first is the start URL's location; deeper ones are unknown (0, matching
    // nothing).
    let start = crate::policy::location_of(&task.start_url);
    let mut observer = RolloutObserver {
        task: assignment.task_id,
        family: task.family(),
        goal,
        prefix: state
            .env
            .prefix
            .iter()
            .enumerate()
            .map(|(i, (action, _))| TraceStep {
                location: if i == 0 { start } else { 0 },
                page_family: 0,
                key: action_key(&action.label()),
            })
            .collect(),
        rollouts,
        released,
    };
    let actions_before = search.metrics().actions;
    let replayed_before = search.metrics().replayed_actions;
    let nodes_before = search.metrics().nodes;
    let remembered_before = search.metrics().remembered;
    let pruned_before = search.prunes().clone();
    let cost_before = search.metrics().cost;
    let (outcome, search) =
        search::run_from(std::slice::from_mut(&mut state.env), search, &mut observer).await;
    let (visits_after, value_after) = root_stats(&search);
    (report.locations, report.states) = newly_known(&search, assignment, &state.env.prefix);
    report.visits = visits_after.saturating_sub(visits_before);
    report.value_sum = value_after - value_before;
    report.best_value = search
        .nodes()
        .skip(1)
        .filter(|n| !matches!(n.status, NodeStatus::Pruned(_)))
        .map(|n| {
            if *n.status == NodeStatus::Success {
                1.0
            } else {
                n.mean_value
            }
        })
        .fold(0.0, f64::max);
    report.actions += outcome.metrics.actions - actions_before;
    report.replayed = outcome.metrics.replayed_actions - replayed_before;
    report.counters.nodes = outcome.metrics.nodes.saturating_sub(nodes_before);
    report.counters.remembered = outcome.metrics.remembered.saturating_sub(remembered_before);
    report.counters.pruned = outcome
        .prunes
        .iter()
        .filter_map(|(&reason, &count)| {
            let new = count.saturating_sub(pruned_before.get(reason).copied().unwrap_or(0));
            (new > 0).then(|| (reason.to_owned(), new))
        })
        .collect();
    report.cost = Cost {
        browser_ms: outcome.metrics.cost.browser_ms - cost_before.browser_ms,
        tokens: outcome.metrics.cost.tokens - cost_before.tokens,
    };
    (report.successes, report.approvals) = paths_found(task, &state.env.prefix, &search, &outcome);
    report.exhausted = matches!(
        outcome.finish,
        Finish::Failed(
            FailureReason::SearchExhausted
                | FailureReason::ApprovalRequired
                | FailureReason::NoProgress
                | FailureReason::Nondeterministic
        )
    );
    report.tree = tree_snapshot(&search, state.tree);
    state.search = Some(search);
    report
}

/// The locations and page states this branch's search reached first, or at a shallower depth
/// than the assignment knew them (depths from the start URL), its own page included.
pub(super) fn newly_known(
    search: &Search<Action>,
    assignment: &BranchAssignment,
    prefix: &[(Action, Fingerprint)],
) -> (Vec<KnownLocation>, Vec<KnownState>) {
    let below_root = prefix.len() as u32;
    let given: std::collections::HashMap<u64, u32> = assignment
        .known_locations
        .iter()
        .map(|k| (k.location, k.depth))
        .collect();
    let locations: Vec<KnownLocation> = search
        .locations()
        .map(|(location, depth)| KnownLocation {
            location,
            depth: depth + below_root,
        })
        .filter(|k| given.get(&k.location).is_none_or(|&d| k.depth < d))
        .collect();
    let given: std::collections::HashMap<Fingerprint, u32> = assignment
        .known_states
        .iter()
        .map(|k| (k.fingerprint, k.depth))
        .collect();
    let mut states: Vec<KnownState> = search
        .states()
        .map(|(fingerprint, depth)| KnownState {
            fingerprint,
            depth: depth + below_root,
        })
        .filter(|k| given.get(&k.fingerprint).is_none_or(|&d| k.depth < d))
        .collect();
    // The branch's own page too (the tree lists what is below it), so that another branch
    // reaching the same page can leave it to this one.
    if let Some((_, root)) = prefix.last()
        && given.get(root).is_none_or(|&d| below_root < d)
    {
        states.push(KnownState {
            fingerprint: *root,
            depth: below_root,
        });
    }
    // Shallowest first (the queen keeps as many as the actions spent), in a stable order.
    states.sort_by_key(|k| (k.depth, k.fingerprint));
    (locations, states)
}

/// The successes and the actions awaiting approval this branch's search found, as paths
/// from the start URL.
pub(super) fn paths_found(
    task: &TaskSpec,
    prefix: &[(Action, Fingerprint)],
    search: &Search<Action>,
    outcome: &crate::search::SearchReport<Action>,
) -> (Vec<FoundPath>, Vec<FoundPath>) {
    let (mut successes, mut approvals) = (Vec::new(), Vec::new());
    let full = |steps: Vec<(Action, Fingerprint, forager_protocol::RiskClass)>| {
        let mut path = FoundPath::new(
            prefix.iter().map(|(a, _)| a.clone()).collect(),
            prefix.iter().map(|(_, f)| *f).collect(),
            crate::consent::prefix_risks(
                task,
                &prefix.iter().map(|(a, _)| a.clone()).collect::<Vec<_>>(),
            ),
        );
        for (action, fingerprint, risk) in steps {
            path.actions.push(action);
            path.fingerprints.push(fingerprint);
            path.risks.push(risk);
        }
        path
    };
    if let Some(best) = &outcome.best {
        successes.push(full(
            best.iter()
                .map(|s| (s.action.clone(), s.fingerprint, s.risk))
                .collect(),
        ));
    } else if search
        .nodes()
        .next()
        .is_some_and(|root| *root.status == NodeStatus::Success)
    {
        successes.push(full(Vec::new()));
    }
    for approval in &outcome.approvals {
        let mut path = full(Vec::new());
        path.actions.extend(approval.prefix.iter().cloned());
        path.actions.push(approval.action.clone());
        path.risks.push(approval.class);
        approvals.push(path);
    }
    (successes, approvals)
}

/// The tree as a report carries it: all of it when it is small, else the paths to successes
/// and then the most visited nodes, each with its ancestors, up to [`MAX_TREE_NODES`].
pub(super) fn tree_snapshot(search: &Search<Action>, instance: u64) -> TreeSnapshot {
    let nodes: Vec<_> = search.nodes().collect();
    let mut keep = vec![nodes.len() <= MAX_TREE_NODES; nodes.len()];
    if nodes.len() > MAX_TREE_NODES {
        let mut order: Vec<usize> = (0..nodes.len())
            .filter(|&i| *nodes[i].status == NodeStatus::Success)
            .collect();
        let mut by_visits: Vec<usize> = (0..nodes.len()).collect();
        by_visits.sort_by_key(|&i| std::cmp::Reverse(nodes[i].visits));
        order.extend(by_visits);
        let mut kept = 0;
        for id in order {
            let mut path = Vec::new();
            let mut cursor = Some(id);
            while let Some(c) = cursor.filter(|&c| !keep[c]) {
                path.push(c);
                cursor = nodes[c].parent.map(|p| p as usize);
            }
            if kept + path.len() > MAX_TREE_NODES {
                continue;
            }
            kept += path.len();
            for c in path {
                keep[c] = true;
            }
        }
    }
    let kept: Vec<TreeNode> = nodes
        .iter()
        .filter(|n| keep[n.id as usize])
        .map(|n| TreeNode {
            id: n.id,
            parent: n.parent,
            action: n.action.cloned(),
            fingerprint: n.fingerprint,
            status: match n.status {
                NodeStatus::Open => TreeStatus::Open,
                NodeStatus::Success => TreeStatus::Success,
                NodeStatus::Exhausted => TreeStatus::Exhausted,
                NodeStatus::Pruned(reason) => TreeStatus::Pruned(reason.clone()),
            },
            visits: n.visits,
            mean_value: n.mean_value,
            risk: n.risk,
            cost_ms: n.cost_ms,
            replay: n.replay,
        })
        .collect();
    TreeSnapshot {
        instance,
        omitted: (nodes.len() - kept.len()) as u32,
        nodes: kept,
    }
}

pub(super) fn root_stats(search: &Search<Action>) -> (u32, f64) {
    search.nodes().next().map_or((0, 0.0), |root| {
        (root.visits, root.mean_value * f64::from(root.visits))
    })
}
