//! A success wins only once a node other than its finder reproduced it (the finder itself
//! only in a one-node cluster): the shortest waiting success first, a reproduced one held
//! while a shorter one waits, a finder whose success fails [`REPRODUCTION_ATTEMPTS`] replays
//! distrusted for the rest of the task, a verifier's own trouble (a timeout, a crash) retried
//! up to [`TRANSIENT_RETRIES`] times without counting against the path. A success that took
//! a detour off the start page has its shortcut tried beside its reproduction.
//!
//! A verifier replays every step, or on a site not declared resettable those before the first
//! write (`FoundPath::reproducible_steps`), comparing pages by family, then the after-check page
//! if the task has one; reproduced, each step is `reproduced` or `attested`. A reproduced success
//! waits while a shorter one does (`publish_held`: until none is left or the wall time is up), so
//! of two nodes that race to the goal the fewer steps win whichever reported first. See
//! `docs/verification.md`.

use super::reports::bounded_model_usage;
use super::{Branch, Phase, RequestFailed, Shortcut, TaskRun, signed_by};
use crate::artifacts::Evidence;
use crate::journal::JournalEvent;
use crate::metrics::QueenMetrics;
use forager_protocol::artifact::{Attestation, Digest32};
use forager_protocol::result::StepVerification;
use forager_protocol::signing::Domain;
use forager_protocol::wire::{
    BranchId, FoundPath, Message, PageInfo, ReplayReport, ReplayRequest, WireCandidate,
    judge_reproduction, verified_pages,
};
use forager_protocol::{Action, Fingerprint, RiskClass};
use libp2p::PeerId;
use std::collections::HashSet;
use std::time::Duration;

/// A success waiting to be reproduced.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(super) path: FoundPath,
    pub(super) finder: PeerId,
    /// Nodes that failed to answer a replay of it (not asked again).
    pub(super) tried: HashSet<PeerId>,
    /// Replays that answered and did not reproduce it.
    pub(super) failed_replays: u32,
    /// Replays the verifier could not carry out for a reason of its own (a timeout, a
    /// crash): not counted against the path, at most [`TRANSIENT_RETRIES`].
    pub(super) transient_failures: u32,
    /// The finder's signed report holding the path.
    pub(super) claim: Option<Attestation>,
    /// The finder's screenshots of the path's pages past a write, per step (empty where it
    /// sent none): the pictures of the attested steps.
    pub(super) shots: Vec<Vec<u8>>,
}

/// A reproduced success, ready to be published.
#[derive(Debug)]
pub(super) struct ReproducedPass {
    pub(super) steps: Vec<(Action, Fingerprint, RiskClass)>,
    pub(super) verification: Vec<StepVerification>,
    pub(super) finder: PeerId,
    pub(super) verifier: PeerId,
    pub(super) pages: Vec<PageInfo>,
    pub(super) evidence: Option<Evidence>,
    /// The answer the reproducer extracted on the final page (a task with an answer schema).
    pub(super) answer: Option<forager_protocol::llm::JsonAnswer>,
}

/// Replays a success gets before it is rejected and its finder distrusted: a real site (or a
/// simulated one) can glitch once; a lie fails every time.
const REPRODUCTION_ATTEMPTS: u32 = 2;

/// Replays a verifier could not carry out (an operation timed out, its browser crashed) that
/// a success gets on top of [`REPRODUCTION_ATTEMPTS`]: a slow server is no lying finder.
const TRANSIENT_RETRIES: u32 = 2;

impl TaskRun {
    /// The waiting success to reproduce next, if no reproduction runs: the shortest (the
    /// earliest of those: it makes the better workflow), by any node but its finder and those
    /// that tried it (nodes run two jobs at once, so a busy one can take it; the finder only
    /// in a one-node cluster). Marks it in flight and journals it.
    pub(super) fn next_verification(
        &mut self,
        nodes: &HashSet<PeerId>,
        busy: &HashSet<PeerId>,
    ) -> Option<(PeerId, Message, Pending)> {
        if self.verifying.is_some() {
            return None;
        }
        let index = self
            .unverified
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (p.path.actions.len(), *i))
            .map(|(i, _)| i)?;
        let pending = self.unverified.get(index)?.clone();
        let mut candidates: Vec<PeerId> = nodes.iter().copied().collect();
        candidates.sort();
        let others = candidates.len() > 1;
        let verifier = candidates
            .iter()
            .filter(|n| (!others || **n != pending.finder) && !pending.tried.contains(n))
            .min_by_key(|n| busy.contains(n))
            .copied()?;
        self.unverified.remove(index);
        self.verifying = Some(verifier);
        let path = &pending.path;
        self.record(JournalEvent::Verifying {
            node: verifier.to_string(),
            finder: pending.finder.to_string(),
            actions: path.actions.iter().map(Action::label).collect(),
        });
        let request = Message::Replay(Box::new(ReplayRequest {
            task: self.task.clone(),
            task_id: self.id,
            reproduce: path.reproducible_steps(&self.task) as u32,
            path: path.clone(),
        }));
        Some((verifier, request, pending))
    }

    pub(super) fn on_replayed(
        &mut self,
        report: ReplayReport,
        attestation: Attestation,
        screenshots: Vec<Vec<u8>>,
        mut pending: Pending,
        verifier: PeerId,
    ) {
        let finder = pending.finder;
        self.contributors.insert(verifier);
        self.merge_network(&report.network);
        let most = u64::from(report.executed) + 1;
        self.counters
            .model
            .add(&bounded_model_usage(&report.model, most));
        let path = &pending.path;
        let steps = path.actions.len();
        let reproducible = path.reproducible_steps(&self.task);
        let verdict =
            judge_reproduction(&self.task, path, reproducible, &report).and_then(|after_check| {
                // Every picture the finder's report names must have come with it.
                match (reproducible..steps).find(|&i| {
                    path.seen.get(i).is_some_and(|s| s.screenshot.is_some())
                        && pending.shots.get(i).is_none_or(Vec::is_empty)
                }) {
                    Some(i) => Err(format!(
                        "the finder named a screenshot of step {} and did not send it",
                        i + 1
                    )),
                    None => Ok(after_check),
                }
            });
        if let Ok(after_check) = verdict {
            let path = pending.path;
            let verification: Vec<StepVerification> = (0..steps)
                .map(|i| {
                    if i < reproducible {
                        StepVerification::Reproduced
                    } else {
                        StepVerification::Attested
                    }
                })
                .collect();
            self.record(JournalEvent::Verified {
                finder: finder.to_string(),
                verifier: verifier.to_string(),
                actions: path.actions.iter().map(Action::label).collect(),
                steps: verification.clone(),
                after_check,
            });
            // The reproducer's pages and pictures where it went; the finder's past a write.
            let pages = verified_pages(&report, &path, reproducible);
            let mut screenshots = screenshots;
            screenshots.truncate(reproducible);
            for i in screenshots.len()..steps {
                screenshots.push(pending.shots.get(i).cloned().unwrap_or_default());
            }
            let pass = ReproducedPass {
                steps: path
                    .actions
                    .iter()
                    .cloned()
                    .zip(path.fingerprints.iter().copied())
                    .zip(path.risks.iter().copied())
                    .map(|((a, f), r)| (a, f, r))
                    .collect(),
                verification,
                finder,
                verifier,
                pages,
                evidence: pending.claim.map(|found_by| Evidence {
                    found_by,
                    reproduced_by: attestation,
                    screenshots,
                }),
                answer: report.answer.clone(),
            };
            if self.shorter_waiting(steps) {
                tracing::info!(
                    task = %self.id,
                    steps,
                    "a reproduced success is held while a shorter one is reproduced"
                );
                self.held = Some(pass);
            } else {
                // Shorter than any held one (else it would have waited): the held one goes.
                self.held = None;
                self.finish_pass(pass);
            }
        } else if let Err(reason) = verdict {
            if report.transient && pending.transient_failures < TRANSIENT_RETRIES {
                pending.transient_failures += 1;
                tracing::warn!(%finder, %verifier, %reason, "a success could not be replayed by its verifier: it is tried again");
                self.unverified.push_back(pending);
                return;
            }
            tracing::warn!(%finder, %verifier, %reason, "a success was not reproduced");
            pending.failed_replays += 1;
            let rejected = pending.failed_replays >= REPRODUCTION_ATTEMPTS;
            self.record(JournalEvent::NotReproduced {
                finder: finder.to_string(),
                verifier: verifier.to_string(),
                actions: pending.path.actions.iter().map(Action::label).collect(),
                reason,
                rejected,
            });
            if rejected {
                // Broken or lying, the finder gets no more of this task's work.
                self.distrusted.insert(finder);
                self.rejected_paths.insert(pending.path.actions);
            } else {
                self.unverified.push_back(pending);
            }
        }
    }

    /// Whether a success shorter than `steps` actions waits for its reproduction, or a
    /// shortcut of fewer steps for its node's answer.
    pub(super) fn shorter_waiting(&self, steps: usize) -> bool {
        let shortcut = match self.shortcut {
            Shortcut::Pending(b) => self
                .branches
                .get(b.0 as usize)
                .is_some_and(|b| b.lead.len() + 1 < steps),
            _ => false,
        };
        shortcut || self.unverified.iter().any(|p| p.path.actions.len() < steps)
    }

    /// Adds the shortcut of a success that took a detour off the start page, if it has one
    /// and none was tried: a branch replaying the shorter path, assigned beside the
    /// success's reproduction (`shortcut_to_assign`).
    pub(super) fn try_shortcut(&mut self, path: &FoundPath) {
        if self.shortcut != Shortcut::Untried || self.remaining() == 0 {
            return;
        }
        let start: Vec<&WireCandidate> = self
            .branches
            .iter()
            .filter(|b| b.lead.is_empty() && b.memory.is_none() && !b.shortcut)
            .map(|b| &b.candidate)
            .collect();
        let Some(steps) = crate::shortcut::shortcut_of(&self.task, path, &start) else {
            return;
        };
        tracing::info!(
            task = %self.id,
            from = path.actions.len(),
            to = steps.len(),
            "a success took a detour off the start page: its shortcut is tried"
        );
        self.record(JournalEvent::Shortcut {
            steps: steps.clone(),
        });
        self.add_shortcut(steps);
    }

    /// The shortcut's branch: the shorter path as a workflow's lead and last step.
    pub(super) fn add_shortcut(&mut self, steps: Vec<(Action, RiskClass)>) {
        let risk = steps
            .iter()
            .map(|(_, r)| *r)
            .max()
            .unwrap_or(RiskClass::ReadOnly);
        let mut actions: Vec<Action> = steps.into_iter().map(|(a, _)| a).collect();
        let Some(last) = actions.pop() else {
            return;
        };
        let id = BranchId(self.branches.len() as u64);
        let mut branch = Branch::new(
            id,
            actions,
            WireCandidate {
                key: forager_node::embed::action_key(&last.label()),
                action: last,
                prior: 0.0,
                risk,
                target: None,
            },
        );
        branch.shortcut = true;
        self.branches.push(branch);
        self.shortcut = Shortcut::Pending(id);
    }

    /// The shortcut's branch and its actions, while it waits for a node (it goes even while
    /// a success waits for its reproduction: that is when it is worth trying).
    pub(super) fn shortcut_to_assign(&self) -> Option<(BranchId, u32)> {
        let Shortcut::Pending(id) = self.shortcut else {
            return None;
        };
        let b = self.branches.get(id.0 as usize)?;
        (b.in_flight == 0 && b.assignments == 0)
            .then(|| (id, (b.lead.len() as u32 + 1).min(self.remaining()).max(1)))
    }

    /// Publishes the held success if nothing shorter is left to reproduce, or if the time is
    /// up; whether it did.
    pub(super) fn publish_held(&mut self) -> bool {
        let Some(held) = self
            .held
            .as_ref()
            .filter(|_| self.phase == Phase::Searching)
        else {
            return false;
        };
        let timed_out = self.started.elapsed()
            >= Duration::from_secs(u64::from(self.task.budget.wall_time_secs));
        let settled = self.verifying.is_none() && !self.shorter_waiting(held.steps.len());
        if !(timed_out || settled) {
            return false;
        }
        if let Some(pass) = self.held.take() {
            self.finish_pass(pass);
        }
        true
    }
}

/// Whether the screenshots beside a replay report are the ones it signed.
fn screenshots_match(report: &ReplayReport, screenshots: &[Vec<u8>]) -> bool {
    report.screenshots.len() == screenshots.len()
        && report
            .screenshots
            .iter()
            .zip(screenshots)
            .all(|(digest, bytes)| match digest {
                Some(d) => *d == Digest32::of(bytes),
                None => bytes.is_empty(),
            })
}

impl TaskRun {
    /// A node's answer to a replay: a reproduction's signed report, or none.
    pub(crate) fn on_replay_answer(
        &mut self,
        node: PeerId,
        mut pending: Pending,
        result: Result<Message, RequestFailed>,
        nodes: &HashSet<PeerId>,
        metrics: &QueenMetrics,
    ) {
        self.verifying = None;
        if self.phase == Phase::Done {
            return;
        }
        let verified = match result {
            Ok(Message::Replayed(answer)) if signed_by(&answer.report.signer, node) => {
                let signed = &answer.report;
                signed
                    .verify(Domain::Report)
                    .ok()
                    .cloned()
                    .filter(|report| screenshots_match(report, &answer.screenshots))
                    .zip(Attestation::of(signed, node.to_string()).ok())
                    .map(|(report, attestation)| (report, attestation, answer.screenshots))
            }
            _ => None,
        };
        match verified {
            Some((report, attestation, screenshots)) => {
                self.on_replayed(report, attestation, screenshots, pending, node);
                let verdict = if self.phase == Phase::Done {
                    "reproduced"
                } else {
                    "not_reproduced"
                };
                metrics
                    .reproductions
                    .get_or_create(&crate::metrics::label("verdict", verdict))
                    .inc();
            }
            None => {
                // The verifier gave no valid answer: another node will be asked.
                self.note_failure(&format!("replay on {node} gave no valid answer"));
                pending.tried.insert(node);
                let left = nodes
                    .iter()
                    .any(|n| *n != pending.finder && !pending.tried.contains(n));
                if left {
                    self.unverified.push_back(pending);
                } else {
                    self.note_failure("no node left to reproduce a success");
                    self.rejected_paths.insert(pending.path.actions);
                }
            }
        }
    }
}
