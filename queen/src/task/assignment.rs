//! Which node does what next: the start page opened by one node (another after a failure,
//! the task failed once two nodes, or every node of a smaller cluster, say it cannot be
//! opened), the branches made of its candidates (a consent's resumption and a remembered
//! workflow among them), and each idle trusted node given a branch by the production-aware
//! score with virtual loss for the actions in flight, its last holder first. A reproduction
//! waiting ends new work; a lost or silent assignment frees its branch for any node.
//!
//! Branches open by the engine's widening rule over their reported visits, in prior order (the
//! same rule and defaults as a node's own root). Every assignment carries the locations and page
//! states other branches reached with their depth (the cluster-wide transposition set; the start
//! page is the root's). A remembered workflow bound to this task's values (`recall`, journaled
//! `recalled` first so a resumed queen numbers branches alike) is one more branch, numbered last:
//! its prefix is the workflow's steps, it is assigned first and alone (`pick_branch`: no other
//! branch until its first report), and its assignment says `workflow`. A shared way in (a prefix
//! the site's workflows share, or the workflow of the task the goal begins with) is tried alone
//! the same way.
//!
//! Measured on 20 simulated sites: counting whole assignments instead of iterations opened ~5 of
//! 16 branches in a 500-action budget and solved 5 sites (one process: 20); the shared locations
//! took 5 to 18 solved with one node and 5 to 16 with four (without each one's owner, a branch
//! whose tree was dropped found its own pages "known": 16 and 12). Shared page states took the
//! choice fixture (`tests/tests/dynamic.rs`) at 200 actions from failing most runs to passing most.

use super::reports::bounded_model_usage;
use super::verification::ReproducedPass;
use super::{
    Awaited, Branch, Ending, MemoryBranch, Outbox, Phase, ROOT_OWNER, RequestFailed, TaskRun,
    signed_by,
};
use crate::config::QueenConfig;
use crate::journal::JournalEvent;
use forager_node::search::Widening;
use forager_protocol::result::MemoryUse;
use forager_protocol::score::{ScoreInputs, uct_score};
use forager_protocol::signing::Domain;
use forager_protocol::wire::{
    BranchAssignment, BranchId, ExpandRequest, FoundPath, KnownLocation, KnownState, Message,
    RefusalReason, WireCandidate, branch_candidates,
};
use forager_protocol::{Action, FailureReason, RiskClass};
use libp2p::PeerId;
use std::collections::HashSet;
use tokio::time::Instant;

impl TaskRun {
    /// One scheduling pass over the task: publishes a held success whose shorter rivals are
    /// gone, tells the nodes once it ended, ends it when its budget or time is up, and gives
    /// its next work to idle nodes (the start page while expanding, then reproductions and
    /// branches).
    pub(crate) fn schedule(
        &mut self,
        nodes: &HashSet<PeerId>,
        config: &QueenConfig,
        outbox: &mut Outbox,
    ) {
        self.publish_held();
        if self.phase == Phase::Done {
            self.release(outbox);
            return;
        }
        if self.stop_next(outbox) {
            return;
        }
        if self.ends_now(nodes) {
            // A task that began to stop tells its nodes at once.
            self.stop_next(outbox);
            return;
        }
        match self.phase {
            Phase::Expanding => self.expand_next(outbox),
            Phase::Searching => self.search_next(nodes, config, outbox),
            Phase::Done => {}
        }
    }

    /// Tells the nodes that took part that the task ended, once: they drop its branch
    /// searches (browser pages) kept for a next assignment that will not come.
    pub(super) fn release(&mut self, outbox: &mut Outbox) {
        if self.released {
            return;
        }
        self.released = true;
        let mut nodes: Vec<PeerId> = self.contributors.iter().copied().collect();
        nodes.sort();
        for node in nodes {
            outbox.send(node, Message::Release(self.id), Awaited::Release);
        }
    }

    /// Ends the task if its budget or time is up (time with searches running: begins to stop,
    /// [`TaskRun::end_early`]), or if every node of the cluster is distrusted and nothing is
    /// in flight; whether it ended or began to stop.
    pub(super) fn ends_now(&mut self, nodes: &HashSet<PeerId>) -> bool {
        if let Some(reason) = self.over() {
            // Time is up with searches running: their reports are what the task did, so it
            // stops as an interrupted one does (the nodes told, a short grace for them).
            if reason == FailureReason::Timeout && !self.assigned.is_empty() {
                self.end_early(Ending::TimedOut);
                return true;
            }
            self.finish_failing(reason);
            return true;
        }
        let idle_run = self.assigned.is_empty()
            && self.verifying.is_none()
            && self.unverified.is_empty()
            && self.expanding.is_none();
        if idle_run && !nodes.is_empty() && nodes.is_subset(&self.distrusted) {
            self.finish_failing_with(
                FailureReason::NotReproduced,
                "every node's success failed to reproduce; no node is left to search".into(),
            );
            return true;
        }
        false
    }

    /// Asks an idle node to open the start page, if none is at it: one that did not fail
    /// at it yet, else (every idle one failed once) the last, starting over.
    pub(super) fn expand_next(&mut self, outbox: &mut Outbox) {
        if self.expanding.is_some() || outbox.idle.is_empty() {
            return;
        }
        let fresh = outbox
            .idle
            .iter()
            .position(|n| !self.expand_failed.contains(n));
        if fresh.is_none() {
            self.expand_failed.clear();
        }
        let node = outbox.take(fresh.unwrap_or(outbox.idle.len() - 1));
        self.expanding = Some(node);
        let request = Message::Expand(Box::new(ExpandRequest {
            task: self.task.clone(),
        }));
        outbox.send(node, request, Awaited::Expansion);
    }

    /// Gives the searching task's work to idle nodes: a waiting success's reproduction
    /// first (it ends the task), a shortcut beside it, and, when no success waits, branches
    /// to every idle trusted node.
    pub(super) fn search_next(
        &mut self,
        nodes: &HashSet<PeerId>,
        config: &QueenConfig,
        outbox: &mut Outbox,
    ) {
        if let Some((verifier, request, pending)) = self.next_verification(nodes, &outbox.busy) {
            outbox.idle.retain(|n| *n != verifier);
            outbox.busy.insert(verifier);
            outbox.send(verifier, request, Awaited::Replay(Box::new(pending)));
        }
        let deadline_ms = config.assignment_deadline.as_millis() as u64;
        let assign = |run: &mut TaskRun, outbox: &mut Outbox, index, branch, actions| {
            let node = outbox.take(index);
            let request = run.assign(node, branch, actions, deadline_ms);
            config.metrics.assignments.inc();
            let sent = Instant::now();
            outbox.send(node, request, Awaited::Assignment { branch, sent });
        };
        // A shortcut goes beside the reproduction of the success it shortens.
        if let Some((branch, actions)) = self.shortcut_to_assign()
            && let Some(index) = outbox
                .idle
                .iter()
                .position(|n| !self.distrusted.contains(n))
        {
            assign(self, outbox, index, branch, actions);
        }
        // A success waiting for its reproduction may end the task: no new work.
        let waiting =
            self.verifying.is_some() || !self.unverified.is_empty() || self.held.is_some();
        while !waiting && !outbox.idle.is_empty() {
            let idle = &outbox.idle;
            let trusted: Vec<usize> = (0..idle.len())
                .filter(|&i| !self.distrusted.contains(&idle[i]))
                .collect();
            let Some(&last) = trusted.last() else {
                break;
            };
            let Some((branch, actions)) = self.pick_branch(config.chunk_actions, config.widening)
            else {
                break;
            };
            // The branch's last holder keeps its tree: it continues where it stopped
            // instead of another node starting the subtree over.
            let holder = self.branches[branch.0 as usize].holder;
            let index = trusted
                .iter()
                .copied()
                .find(|&i| Some(idle[i]) == holder)
                .unwrap_or(last);
            assign(self, outbox, index, branch, actions);
        }
    }

    /// Gives `branch` to `node` for `actions` actions: marks it in flight (virtual loss, its
    /// holder), journals it, and builds the assignment.
    pub(super) fn assign(
        &mut self,
        node: PeerId,
        branch: BranchId,
        actions: u32,
        deadline_ms: u64,
    ) -> Message {
        self.assigned.insert(node, (branch, actions));
        self.contributors.insert(node);
        let b = &mut self.branches[branch.0 as usize];
        b.in_flight += 1;
        b.in_flight_actions += actions;
        b.holder = Some(node);
        let prefix = b.path();
        let expected = b.prefix_fingerprints.clone();
        let workflow = b.memory.is_some() || b.shortcut;
        self.record(JournalEvent::Assigned {
            node: node.to_string(),
            branch: branch.0,
            action: prefix
                .iter()
                .map(Action::label)
                .collect::<Vec<_>>()
                .join(" → "),
            actions,
        });
        Message::Assign(Box::new(BranchAssignment {
            task: self.task.clone(),
            task_id: self.id,
            branch,
            prefix,
            expected,
            actions,
            deadline_ms,
            known_locations: self
                .locations
                .iter()
                .filter(|(_, (_, owner))| *owner != branch)
                .map(|(&location, &(depth, _))| KnownLocation { location, depth })
                .collect(),
            known_states: self.known_states(branch),
            workflow,
        }))
    }

    /// Takes a remembered workflow as the task's first branch (see `set_branches`).
    pub(super) fn recall(&mut self, recalled: crate::memory::Recalled) {
        self.memory_use = Some(MemoryUse {
            workflow: recalled.id.to_hex(),
            matched: recalled.matched.as_str().into(),
            steps: recalled.steps.len() as u32,
            reached: 0,
            worked: false,
        });
        self.recalled = Some(recalled);
    }

    pub(super) fn set_branches(&mut self, candidates: Vec<WireCandidate>) {
        // The consents were checked when the task was accepted; here they are matched.
        let task = &self.task;
        let (branches, approvals) = branch_candidates(candidates, task.risk_ceiling, |c| {
            task.consents
                .iter()
                .any(|s| s.value.permits(&[], c.key, c.risk))
        });
        for candidate in approvals {
            self.approvals.push(FoundPath::new(
                vec![candidate.action.clone()],
                Vec::new(),
                vec![candidate.risk],
            ));
        }
        // A consent for an action past the start page resumes there: a branch whose prefix is
        // the approved path and the approved action, tried first (its prior is above any
        // other's). Numbered after the start page's branches, which keep their order.
        let resumes: Vec<(Vec<Action>, WireCandidate)> = self
            .task
            .consents
            .iter()
            .filter(|c| !c.value.prefix.is_empty())
            .map(|c| {
                let consent = &c.value;
                (
                    consent.prefix.iter().map(|s| s.action.clone()).collect(),
                    WireCandidate {
                        action: consent.action.action.clone(),
                        prior: 2.0,
                        risk: consent.risk,
                        key: consent.action.key,
                        target: None,
                    },
                )
            })
            .collect();
        self.branches = branches
            .into_iter()
            .map(|candidate| (Vec::new(), candidate))
            .chain(resumes)
            .enumerate()
            .map(|(i, (lead, candidate))| Branch::new(BranchId(i as u64), lead, candidate))
            .collect();
        // A remembered workflow with this task's values: one branch whose prefix is its
        // steps, tried first and alone (numbered last, so the others keep their numbers).
        if let Some(recalled) = &self.recalled
            && let Some(((last, _), lead)) = recalled.steps.split_last()
        {
            let risk = recalled
                .steps
                .iter()
                .map(|(_, r)| *r)
                .max()
                .unwrap_or(RiskClass::ReadOnly);
            let mut branch = Branch::new(
                BranchId(self.branches.len() as u64),
                lead.iter().map(|(a, _)| a.clone()).collect(),
                WireCandidate {
                    action: last.clone(),
                    // A workflow: above any start-page action's (their priors sum to 1) and a
                    // consent's resumption (2), tried first. A way in (a shared prefix, a
                    // first part's workflow): above the start page's too, higher the more
                    // verified successes began so.
                    prior: if recalled.matched.is_way_in() {
                        1.0 + 0.1 * f64::from(recalled.support)
                    } else {
                        3.0
                    },
                    risk,
                    key: forager_node::embed::action_key(&last.label()),
                    target: None,
                },
            );
            branch.memory = Some(MemoryBranch {
                id: recalled.id,
                reported: false,
                whole: !recalled.matched.is_way_in(),
            });
            self.branches.push(branch);
        }
        self.phase = Phase::Searching;
    }

    pub(super) fn on_expanded(
        &mut self,
        report: forager_protocol::wire::ExpandReport,
        node: PeerId,
    ) {
        self.contributors.insert(node);
        // One page read: a verdict, a ranking and a recovery at most.
        self.counters
            .model
            .add(&bounded_model_usage(&report.model, 1));
        if !report.success
            && let Some(memory) = &self.memory
            && let Some(recalled) = memory.recall(&self.task)
        {
            tracing::info!(task = %self.id, workflow = %recalled.id.to_hex(), steps = recalled.steps.len(), "a remembered workflow is tried first");
            self.record(JournalEvent::Recalled {
                workflow: recalled.id.to_hex(),
                matched: recalled.matched,
                steps: recalled.steps.clone(),
                support: recalled.support,
            });
            self.recall(recalled);
        }
        self.record(JournalEvent::Branches {
            node: node.to_string(),
            root: report.root,
            candidates: report.candidates.clone(),
        });
        self.states.insert(report.root, (0, ROOT_OWNER));
        if report.session_expired && !report.success {
            self.finish_failing(FailureReason::SessionExpired);
            return;
        }
        if report.success {
            // The start page already satisfies the task: an empty path, trivially reproduced.
            self.finish_pass(ReproducedPass {
                steps: Vec::new(),
                verification: Vec::new(),
                finder: node,
                verifier: node,
                pages: Vec::new(),
                evidence: None,
                answer: None,
            });
            return;
        }
        self.set_branches(report.candidates);
        if self.branches.is_empty() {
            let reason = if self.approvals.is_empty() {
                FailureReason::SearchExhausted
            } else {
                FailureReason::ApprovalRequired
            };
            self.finish_failing(reason);
        }
    }

    pub(super) fn remaining(&self) -> u32 {
        let in_flight: u32 = self.assigned.values().map(|(_, actions)| actions).sum();
        self.task
            .budget
            .actions
            .saturating_sub(self.actions + in_flight)
    }

    /// The next branch to assign and how many actions to give it: the queen's root is searched
    /// like a node's tree root — the production-aware score over the branches' reported
    /// iterations and mean values, virtual loss for the actions in flight, progressive widening
    /// opening unvisited branches in prior order.
    pub(super) fn pick_branch(&self, chunk: u32, widening: Widening) -> Option<(BranchId, u32)> {
        let remaining = self.remaining();
        if remaining == 0 {
            return None;
        }
        // A remembered workflow, or a shared way in, is tried first, alone: the others wait
        // for its report. A whole chunk: the page it leads to is its branch's alone (another
        // branch that reaches it stops there), and a search that opens the other branches
        // first comes back to a visited one only when their allowance is spent (measured on
        // the Roundup sequence: with 6 actions past the login, `new-bug` failed).
        if let Some(b) = self
            .branches
            .iter()
            .find(|b| b.memory.is_some_and(|m| !m.reported) && !b.exhausted)
        {
            return (b.in_flight == 0).then(|| (b.id, chunk.min(remaining).max(1)));
        }
        let visits = |b: &Branch| f64::from(b.visits) + f64::from(b.in_flight_actions);
        let parent: f64 = self.branches.iter().map(visits).sum();
        let opened = self
            .branches
            .iter()
            .filter(|b| b.assignments > 0 || b.in_flight > 0)
            .count();
        let allowance = widening.allowed(parent as u32);
        let mut best: Option<(BranchId, f64)> = None;
        // One holder at a time: a node's search is a deterministic function of the branch, so
        // a second node on the same branch would only repeat the first one's work (a node
        // left idle is the next success's reproducer).
        for b in self
            .branches
            .iter()
            .filter(|b| !b.exhausted && b.in_flight == 0 && !b.shortcut)
        {
            let fresh = b.assignments == 0 && b.in_flight == 0;
            if fresh && opened >= allowance && best.is_some() {
                continue;
            }
            let score = if fresh || b.visits == 0 && b.in_flight_actions == 0 {
                // Unvisited: by prior, above any visited branch while the allowance lasts.
                1e6 + b.candidate.prior
            } else {
                uct_score(
                    &self.task.weights,
                    &ScoreInputs {
                        value_sum: b.value_sum,
                        visits: f64::from(b.visits),
                        virtual_visits: f64::from(b.in_flight_actions),
                        parent_visits: parent,
                        replay_similarity: 0.0,
                        risk: b.candidate.risk.normalised(),
                        cost: 0.0,
                        auth: 0.0,
                    },
                )
            };
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((b.id, score));
            }
        }
        best.map(|(id, _)| (id, chunk.min(remaining).max(1)))
    }

    /// The states owned elsewhere than `branch`, shallowest first (in a stable order).
    pub(super) fn known_states(&self, branch: BranchId) -> Vec<KnownState> {
        let mut known: Vec<KnownState> = self
            .states
            .iter()
            .filter(|(_, (_, owner))| *owner != branch)
            .map(|(&fingerprint, &(depth, _))| KnownState { fingerprint, depth })
            .collect();
        known.sort_by_key(|k| (k.depth, k.fingerprint));
        known
    }

    pub(super) fn learn_states(&mut self, branch: BranchId, states: &[KnownState]) {
        for k in states {
            let entry = self
                .states
                .entry(k.fingerprint)
                .or_insert((k.depth, branch));
            if k.depth < entry.0 {
                *entry = (k.depth, branch);
            }
        }
    }

    pub(super) fn learn_locations(&mut self, branch: BranchId, locations: &[KnownLocation]) {
        for k in locations {
            let entry = self
                .locations
                .entry(k.location)
                .or_insert((k.depth, branch));
            if k.depth < entry.0 {
                *entry = (k.depth, branch);
            }
        }
    }
}

impl TaskRun {
    /// A node's answer to `Expand`: the start page's candidates, or why not.
    pub(crate) fn on_expand_answer(
        &mut self,
        node: PeerId,
        result: Result<Message, RequestFailed>,
        cluster_size: usize,
    ) {
        self.expanding = None;
        match result {
            Ok(Message::Expanded(signed)) if signed_by(&signed.signer, node) => {
                match signed.verify(Domain::Report) {
                    Ok(report) => self.on_expanded(report.clone(), node),
                    Err(_) => self.note_failure("expand report with a bad signature"),
                }
            }
            Ok(Message::Refused { reason, detail }) => {
                self.expand_failed.insert(node);
                self.note_failure(&format!(
                    "node {node} could not open the start page ({reason}): {detail}"
                ));
                // One node's word is not enough to give up (it may be broken or
                // lying): two, or every node of a smaller cluster.
                if reason == RefusalReason::StartPage {
                    self.start_failures.insert(node);
                    if self.start_failures.len() >= cluster_size.clamp(1, 2) {
                        self.finish_failing_with(FailureReason::NavigationFailed, detail);
                    }
                }
            }
            Ok(_) => {
                self.expand_failed.insert(node);
                self.note_failure("unexpected answer to expand");
            }
            Err(reason) => {
                self.expand_failed.insert(node);
                self.note_failure(&format!("expand on {node} failed: {reason}"));
            }
        }
    }
}
