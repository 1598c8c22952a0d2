//! What a node's signed progress report adds to the task: actions spent, the branch's
//! numbers, the locations and states it reached (each bounded by what its actions can have
//! done: a lie only wastes the liar's branch), its successes waiting for reproduction, the
//! part of its tree the journal lacks, and its counters.

use super::{Branch, MemoryBranch, Pending, Phase, RequestFailed, Shortcut, TaskRun, signed_by};
use crate::artifacts::KeptReport;
use crate::journal::{JournalEvent, JournalTree, JournalTreeNode};
use crate::metrics::QueenMetrics;
use forager_protocol::artifact::{Attestation, Digest32};
use forager_protocol::result::NetworkSummary;
use forager_protocol::signing::Domain;
use forager_protocol::wire::{
    BranchId, KnownLocation, KnownState, MAX_PRUNE_REASONS, Message, ProgressReport, TreeSnapshot,
    TreeStatus,
};
use forager_protocol::{Action, FailureReason};
use libp2p::PeerId;
use std::collections::HashSet;

impl TaskRun {
    pub(super) fn merge_network(&mut self, network: &NetworkSummary) {
        let n = &mut self.network;
        n.allowed_requests += network.allowed_requests;
        n.blocked_requests += network.blocked_requests;
        for origin in &network.allowed_origins {
            if !n.allowed_origins.contains(origin) {
                n.allowed_origins.push(origin.clone());
            }
        }
        n.allowed_origins.sort();
        for url in &network.blocked_urls {
            if n.blocked_urls.len() < 100 && !n.blocked_urls.contains(url) {
                n.blocked_urls.push(url.clone());
            }
        }
        n.refused_writes += network.refused_writes;
        n.background_refused += network.background_refused;
        n.view_state_refused += network.view_state_refused;
        for request in &network.background_requests {
            if n.background_requests.len() < 100 && !n.background_requests.contains(request) {
                n.background_requests.push(request.clone());
            }
        }
        for request in &network.refused_write_requests {
            if n.refused_write_requests.len() < 100 && !n.refused_write_requests.contains(request) {
                n.refused_write_requests.push(request.clone());
            }
        }
    }

    /// Adds a report's counters, bounded by what its actions can have caused: a restore, a
    /// node or a prune per executed action (and the branch root), a few named reasons.
    pub(super) fn merge_counters(&mut self, report: &ProgressReport) {
        let most = u64::from(report.actions) + report.prefix_fingerprints.len() as u64 + 1;
        let c = &report.counters;
        self.counters.cache_hits += c.cache_hits.min(most);
        self.counters.cache_misses += c.cache_misses.min(most);
        // A page read per executed action and restore at most, each within the request's
        // own time.
        let pages = c.pages_read.min(2 * most);
        self.counters.pages_read += pages;
        self.counters.reading_us += c.reading_us.min(pages * 60_000_000);
        self.counters.remembered += c.remembered.min(most);
        self.counters.nodes += c.nodes.min(most);
        let named = |reason: &str| {
            !reason.is_empty()
                && reason.len() <= 32
                && reason.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        };
        for (reason, count) in c
            .pruned
            .iter()
            .filter(|(r, _)| named(r))
            .take(MAX_PRUNE_REASONS)
        {
            let known = self.counters.pruned.len() < MAX_PRUNE_REASONS;
            if known || self.counters.pruned.contains_key(reason) {
                *self.counters.pruned.entry(reason.clone()).or_default() +=
                    (*count).min(u32::try_from(most).unwrap_or(u32::MAX));
            }
        }
        self.counters
            .model
            .add(&bounded_model_usage(&c.model, most));
    }

    pub(super) fn on_report(
        &mut self,
        report: ProgressReport,
        node: PeerId,
        claim: Option<Attestation>,
        screenshots: &[Vec<u8>],
    ) {
        self.merge_network(&report.network);
        self.merge_counters(&report);
        if report.session_ended && report.successes.is_empty() && self.task.capsule.is_some() {
            // Every branch stands on the one session the server ended: no branch can go on.
            tracing::warn!(%node, "a branch's root asks to log in again: the server ended the mounted session");
            self.actions += report.actions;
            self.finish_failing(FailureReason::SessionExpired);
            return;
        }
        self.actions += report.actions;
        self.replayed += report.replayed;
        self.cost = self.cost.plus(report.cost);
        if let Some(b) = self.branches.get_mut(report.branch.0 as usize) {
            b.assignments += 1;
            b.visits += report.visits;
            // A node's numbers are bounded here: a lie can only waste the liar's own branch.
            b.value_sum += report.value_sum.clamp(0.0, f64::from(report.visits));
            b.exhausted |= report.exhausted;
            if !report.prefix_fingerprints.is_empty() {
                b.prefix_fingerprints = report.prefix_fingerprints.clone();
            }
        }
        self.note_recalled(&report);
        // Each executed action reaches at most one new location: more is a lie, and lies here
        // could hide states from the other searches.
        let allowed = report.actions as usize + report.prefix_fingerprints.len() + 1;
        let locations: Vec<KnownLocation> =
            report.locations.iter().copied().take(allowed).collect();
        self.learn_locations(report.branch, &locations);
        // Each executed action reaches at most one state, too.
        let states: Vec<KnownState> = report.states.iter().copied().take(allowed).collect();
        self.learn_states(report.branch, &states);
        let tree = self.journal_tree(node, report.branch.0, &report.tree);
        if self.keep_all
            && let Some(attestation) = &claim
        {
            self.keep_report(attestation.clone(), node, &report);
        }
        let claim = claim.filter(|_| !report.successes.is_empty());
        self.record(JournalEvent::Report {
            node: node.to_string(),
            branch: report.branch.0,
            visits: report.visits,
            value_sum: report.value_sum,
            best_value: report.best_value,
            actions: report.actions,
            exhausted: report.exhausted,
            prefix_fingerprints: report.prefix_fingerprints.clone(),
            error: report.error.clone(),
            locations,
            states,
            replayed: report.replayed,
            cost_ms: report.cost.browser_ms,
            tree,
        });
        for approval in report.approvals {
            if !self.approvals.iter().any(|a| a.actions == approval.actions) {
                self.approvals.push(approval);
            }
        }
        for path in report.successes {
            if self.rejected_paths.contains(&path.actions)
                || self
                    .unverified
                    .iter()
                    .any(|p| p.path.actions == path.actions)
            {
                continue;
            }
            self.record(JournalEvent::Success {
                finder: node.to_string(),
                actions: path.actions.iter().map(Action::label).collect(),
                path: path.clone(),
                claim: claim.clone(),
            });
            // Each screenshot the report names by digest, at its step; any other is dropped.
            let shots = path
                .seen
                .iter()
                .map(|seen| {
                    seen.screenshot
                        .and_then(|d| screenshots.iter().find(|b| Digest32::of(b) == d))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            self.try_shortcut(&path);
            self.unverified.push_back(Pending {
                path,
                finder: node,
                tried: HashSet::new(),
                failed_replays: 0,
                transient_failures: 0,
                claim: claim.clone(),
                shots,
            });
        }
    }

    /// The first report on a remembered workflow's branch says how it fared: it worked when
    /// its own steps (all of them, or fewer) reached a success; otherwise the search went on
    /// from the last page they reached.
    pub(super) fn note_recalled(&mut self, report: &ProgressReport) {
        let Some(b) = self.branches.get_mut(report.branch.0 as usize) else {
            return;
        };
        let Some(MemoryBranch {
            id,
            reported: false,
            whole,
        }) = b.memory
        else {
            return;
        };
        if let Some(m) = &mut b.memory {
            m.reported = true;
        }
        let steps = b.lead.len() + 1;
        let reached = report.prefix_fingerprints.len().min(steps);
        let worked = report
            .successes
            .iter()
            .any(|p| p.actions.len() <= steps && b.path().starts_with(&p.actions));
        if let Some(used) = &mut self.memory_use {
            used.reached = reached as u32;
            used.worked = worked;
        }
        tracing::info!(task = %self.id, workflow = %id.to_hex(), reached, steps, worked, "the remembered workflow reported");
        if let Some(memory) = &self.memory
            && whole
        {
            memory.note(&id, worked);
        }
    }

    /// The part of a reported tree the journal does not hold yet (new nodes, and nodes whose
    /// numbers or status changed).
    pub(super) fn journal_tree(
        &mut self,
        node: PeerId,
        branch: u64,
        tree: &TreeSnapshot,
    ) -> Option<JournalTree> {
        if tree.nodes.is_empty() {
            return None;
        }
        let seen = self
            .journaled_trees
            .entry((node, branch, tree.instance))
            .or_default();
        let mut changed = Vec::new();
        for n in &tree.nodes {
            let entry = JournalTreeNode {
                id: n.id,
                parent: n.parent,
                label: n.action.as_ref().map(Action::label),
                status: n.status.kind().to_owned(),
                visits: n.visits,
                value: n.mean_value.clamp(0.0, 1.0),
                risk: n.risk.level(),
                cost_ms: n.cost_ms,
                replay: if n.replay.is_finite() {
                    n.replay.clamp(0.0, 1.0)
                } else {
                    0.0
                },
                detail: match &n.status {
                    TreeStatus::Pruned(forager_protocol::PruneReason::ActionFailed { reason }) => {
                        Some(reason.chars().take(200).collect())
                    }
                    _ => None,
                },
            };
            if seen.get(&n.id) != Some(&entry) {
                seen.insert(n.id, entry.clone());
                changed.push(entry);
            }
        }
        Some(JournalTree {
            instance: tree.instance,
            nodes: changed,
            omitted: tree.omitted,
        })
    }

    /// Keeps a signed report for `rollouts.json` when its tree holds a node no kept report of
    /// the same tree holds yet.
    pub(super) fn keep_report(
        &mut self,
        attestation: Attestation,
        node: PeerId,
        report: &ProgressReport,
    ) {
        let known: HashSet<u32> = self
            .kept_reports
            .iter()
            .filter(|k| {
                k.node == node
                    && k.branch == report.branch.0
                    && k.tree.instance == report.tree.instance
            })
            .flat_map(|k| k.tree.nodes.iter().map(|n| n.id))
            .collect();
        if report.tree.nodes.iter().all(|n| known.contains(&n.id)) {
            return;
        }
        let prefix = self
            .branches
            .get(report.branch.0 as usize)
            .map(Branch::path)
            .unwrap_or_default();
        self.kept_reports.push(KeptReport {
            attestation,
            node,
            branch: report.branch.0,
            prefix,
            tree: report.tree.clone(),
        });
    }
}

/// A peer's model usage, bounded by what its `most` actions can have asked (a few questions
/// per page read: a verdict, a ranking, a recovery), with its fallback reason kept short.
pub(super) fn bounded_model_usage(
    usage: &forager_protocol::llm::ModelUsage,
    most: u64,
) -> forager_protocol::llm::ModelUsage {
    let questions = 3 * 2 * most;
    let mut bounded = usage.clone();
    for tier in bounded.tiers.values_mut() {
        tier.calls = tier.calls.min(questions);
        tier.cached = tier.cached.min(questions);
        tier.failed = tier.failed.min(questions);
        if !tier.cost.is_finite() || tier.cost < 0.0 {
            tier.cost = 0.0;
        }
    }
    for count in bounded.uses.values_mut() {
        *count = (*count).min(questions);
    }
    bounded.rules_decided = bounded.rules_decided.min(questions);
    bounded.model_decided = bounded.model_decided.min(questions);
    if let Some(reason) = &mut bounded.fell_back
        && reason.len() > forager_protocol::llm::MAX_FALLBACK_BYTES
    {
        let mut end = forager_protocol::llm::MAX_FALLBACK_BYTES;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    bounded
}

impl TaskRun {
    /// A node's answer to an assignment: its signed progress report, or a lost assignment
    /// (the branch is free again for any node).
    pub(crate) fn on_assignment_answer(
        &mut self,
        node: PeerId,
        branch: BranchId,
        result: Result<Message, RequestFailed>,
        metrics: &QueenMetrics,
    ) {
        let given = self
            .assigned
            .remove(&node)
            .map_or(0, |(_, actions)| actions);
        if self.shortcut == Shortcut::Pending(branch) {
            // Tried once: a success it found is verified like any other; a lost answer is
            // not tried again (the longer success stands).
            self.shortcut = Shortcut::Done;
        }
        let reported = matches!(result, Ok(Message::Progress(_)));
        if let Some(b) = self.branches.get_mut(branch.0 as usize) {
            b.in_flight = b.in_flight.saturating_sub(1);
            b.in_flight_actions = b.in_flight_actions.saturating_sub(given);
            if !reported && b.holder == Some(node) {
                // Its tree may be gone with it: any node may take the branch.
                b.holder = None;
            }
        }
        if self.phase == Phase::Done {
            // A late report: the result stands and the journal is closed.
            return;
        }
        match result {
            Ok(Message::Progress(answer)) if signed_by(&answer.report.signer, node) => {
                let signed = &answer.report;
                match signed.verify(Domain::Report) {
                    Ok(report) if report.task == self.id && report.branch == branch => {
                        metrics.actions.inc_by(u64::from(report.actions));
                        let restores = &metrics.restores;
                        restores
                            .get_or_create(&crate::metrics::label("how", "kept"))
                            .inc_by(report.counters.cache_hits);
                        restores
                            .get_or_create(&crate::metrics::label("how", "fresh"))
                            .inc_by(report.counters.cache_misses);
                        // What stands behind a success in the trajectory (and with
                        // --keep-all, every finished rollout), as signed.
                        let claim = if report.successes.is_empty() && !self.keep_all {
                            None
                        } else {
                            Attestation::of(signed, node.to_string()).ok()
                        };
                        self.on_report(report.clone(), node, claim, &answer.screenshots);
                    }
                    _ => self.note_failure("progress report with a bad signature"),
                }
            }
            Ok(other) => {
                metrics
                    .reassigned
                    .get_or_create(&crate::metrics::label("reason", "no_report"))
                    .inc();
                self.note_failure(&format!("node {node} did not report: {other:?}"));
                self.record(JournalEvent::Reassigned {
                    node: node.to_string(),
                    branch: branch.0,
                    reason: "no report".into(),
                });
            }
            Err(reason) => {
                let why = match reason {
                    RequestFailed::Network(_) => "network",
                    RequestFailed::Silent(_) => "silent",
                };
                metrics
                    .reassigned
                    .get_or_create(&crate::metrics::label("reason", why))
                    .inc();
                tracing::warn!(%node, branch = branch.0, %reason, "assignment lost; reassigning");
                self.record(JournalEvent::Reassigned {
                    node: node.to_string(),
                    branch: branch.0,
                    reason: reason.to_string(),
                });
            }
        }
    }
}
