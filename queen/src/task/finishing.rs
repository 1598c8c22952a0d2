//! When a task is over (its time, its budget, every branch exhausted), its result (a pass's
//! steps with their pages, or a failure's reason in words a user can act on), and the
//! artifacts a finished task leaves, written on a blocking thread off the actor.

use super::verification::ReproducedPass;
use super::{Outbox, Phase, TaskRun};
use crate::artifacts::{Evidence, KeptReport};
use crate::journal::{JournalEvent, TaskDir};
use forager_protocol::result::{
    ApprovalNeeded, Metrics, RESULT_VERSION, ResultStep, RunError, RunResult, Status,
};
use forager_protocol::wire::{PageInfo, TaskId};
use forager_protocol::workflow::WORKFLOW_FILE;
use forager_protocol::{Action, FailureReason, PruneReason, RiskClass, TaskSpec};
use std::time::Duration;
use tokio::time::Instant;

impl TaskRun {
    pub(super) fn note_failure(&mut self, what: &str) {
        self.failures += 1;
        tracing::warn!(task = %self.id, "{what}");
        self.record(JournalEvent::Problem { what: what.into() });
    }

    /// Whether the task must stop now, and why.
    pub(super) fn over(&self) -> Option<FailureReason> {
        if self.started.elapsed() >= Duration::from_secs(u64::from(self.task.budget.wall_time_secs))
        {
            return Some(FailureReason::Timeout);
        }
        if self.phase != Phase::Searching
            || !self.assigned.is_empty()
            || self.verifying.is_some()
            || !self.unverified.is_empty()
        {
            return None;
        }
        if self.remaining() == 0 {
            // Blocked actions explain a failure better than the budget: the search found a
            // way it may not take.
            return Some(if self.approvals.is_empty() {
                FailureReason::BudgetExhausted
            } else {
                FailureReason::ApprovalRequired
            });
        }
        if self.branches.iter().all(|b| b.exhausted) {
            return Some(if !self.rejected_paths.is_empty() {
                FailureReason::NotReproduced
            } else if self.approvals.is_empty() {
                FailureReason::SearchExhausted
            } else {
                FailureReason::ApprovalRequired
            });
        }
        None
    }

    pub(super) fn base_result(&self) -> RunResult {
        RunResult {
            version: RESULT_VERSION,
            status: Status::Failing,
            task_id: self.id.to_string(),
            goal: self.task.goal.clone(),
            start_url: self.task.start_url.clone(),
            seed: self.task.seed,
            steps: Vec::new(),
            error: None,
            approval_required: self
                .approvals
                .iter()
                .filter_map(|a| {
                    let (last, prefix) = a.actions.split_last()?;
                    Some(ApprovalNeeded {
                        prefix: prefix.iter().map(Action::label).collect(),
                        label: last.label(),
                        risk: a.risks.last().copied().unwrap_or(RiskClass::Destructive),
                        actions: a.actions.clone(),
                    })
                })
                .collect(),
            metrics: Metrics {
                actions: self.actions,
                replayed_actions: self.replayed,
                browser_ms: self.cost.browser_ms,
                // The ledgers' count where a model was asked (it also holds what expansions
                // and reproductions asked, which no step's cost carries).
                tokens: if self.counters.model.is_empty() {
                    self.cost.tokens
                } else {
                    self.counters.model.tokens()
                },
                // The queen's root and its branches, then what the nodes grew below them.
                nodes: 1 + self.branches.len() as u64 + self.counters.nodes,
                iterations: self.branches.iter().map(|b| u64::from(b.visits)).sum(),
                wall_ms: self.started.elapsed().as_millis() as u64,
                workers: self.contributors.len() as u32,
                cache_hits: self.counters.cache_hits,
                cache_misses: self.counters.cache_misses,
                pages_read: self.counters.pages_read,
                reading_ms: self.counters.reading_us / 1000,
                remembered: self.counters.remembered,
                pruned: self.counters.pruned.clone(),
                model: self.counters.model.clone(),
                memory: self.memory_use.clone(),
            },
            network: self.network.clone(),
            answer: None,
            judged_by: if self.task.success.is_empty() {
                forager_protocol::llm::Judge::Model
            } else {
                forager_protocol::llm::Judge::Predicates
            },
        }
    }

    pub(super) fn finish_pass(&mut self, pass: ReproducedPass) {
        let ReproducedPass {
            steps,
            verification,
            finder,
            verifier,
            pages,
            evidence,
            answer,
        } = pass;
        let mut result = self.base_result();
        result.status = Status::Pass;
        result.answer = answer;
        result.steps = steps
            .into_iter()
            .enumerate()
            .map(|(i, (action, fingerprint, risk))| {
                let page = pages.get(i);
                ResultStep {
                    index: i as u32 + 1,
                    label: action.label(),
                    action,
                    url: page.map(|p| p.url.clone()).unwrap_or_default(),
                    title: page.map(|p| p.title.clone()).unwrap_or_default(),
                    fingerprint,
                    risk,
                    reward: page.map_or(0.0, |p| p.value_hint.clamp(0.0, 1.0)),
                    cost_ms: page.map_or(0, |p| p.cost_ms),
                    verdict: page.and_then(|p| p.verdict.clone()),
                    healed_locator: page.and_then(|p| p.healed_locator),
                    healed_by: page.and_then(|p| p.healed_by.clone()),
                    verification: verification.get(i).copied().unwrap_or_default(),
                    why: page.and_then(|p| p.why.clone()),
                }
            })
            .collect();
        if let Some(last) = result.steps.last_mut() {
            last.reward = 1.0;
        }
        tracing::info!(task = %self.id, %finder, %verifier, steps = result.steps.len(), "pass");
        let steps = result.steps.clone();
        self.finish(result);
        self.artifacts = Some(self.artifact_job(Some(Passed {
            steps,
            pages,
            evidence,
            found_by: finder.to_string(),
            verified_by: verifier.to_string(),
        })));
    }

    /// What is left to write once the result stands, to be done off the actor.
    pub(super) fn artifact_job(&mut self, passed: Option<Passed>) -> ArtifactJob {
        // A write was made in this task (a claim was granted) and the pass's own path sends
        // none: it found the page another branch's write left (that branch's path was not
        // reproduced). Its steps would not do the task again: no workflow is learned from it.
        let reads_another_write = passed
            .as_ref()
            .is_some_and(|p| reads_another_write(!self.writes_claimed.is_empty(), &p.steps));
        if reads_another_write && self.memory.is_some() {
            tracing::warn!(task = %self.id, "the pass reads what another branch wrote: not remembered as a workflow");
        }
        ArtifactJob {
            id: self.id,
            task: self.task.clone(),
            dir: self.dir.clone(),
            key: self.key.clone(),
            kept_reports: self
                .keep_all
                .then(|| std::mem::take(&mut self.kept_reports)),
            passed,
            memory: self
                .memory
                .clone()
                .filter(|_| !self.memory_use.as_ref().is_some_and(|u| u.worked))
                .filter(|_| !reads_another_write),
        }
    }

    pub(super) fn finish_failing(&mut self, reason: FailureReason) {
        // A search that ran out where the mounted session stopped holding failed because of
        // the session: that is what the user can fix.
        let expired = self
            .counters
            .pruned
            .get(PruneReason::SessionExpired.kind())
            .copied()
            .unwrap_or(0);
        let reason = match reason {
            FailureReason::SearchExhausted
            | FailureReason::BudgetExhausted
            | FailureReason::NoProgress
                if expired > 0 && self.task.capsule.is_some() =>
            {
                FailureReason::SessionExpired
            }
            other => other,
        };
        let detail = match reason {
            FailureReason::SessionExpired => format!(
                "the session capsule no longer logs in: {} page(s) of its origins asked for a \
                 login; capture it again (forager capsule refresh) or give the credentials",
                expired.max(1)
            ),
            FailureReason::BudgetExhausted => format!(
                "the cluster spent its {} actions without a reproduced success",
                self.task.budget.actions
            ),
            FailureReason::Timeout => format!(
                "the wall-clock limit of {} s passed",
                self.task.budget.wall_time_secs
            ),
            FailureReason::ApprovalRequired => {
                let spent = if self.remaining() == 0 {
                    format!(
                        " (the {} actions of the budget are spent)",
                        self.task.budget.actions
                    )
                } else {
                    String::new()
                };
                // The deepest one is the nearest to the goal the search got (a riskier one
                // near the start page is seldom on the way); the result lists them all.
                let others = match self.approvals.len() {
                    0 | 1 => String::new(),
                    n => format!(" (and {} more in result.json)", n - 1),
                };
                match self
                    .approvals
                    .iter()
                    .max_by_key(|a| (a.actions.len(), a.risks.last().copied()))
                    .and_then(|a| a.actions.last())
                {
                    Some(action) => format!(
                        "the way forward needs a human's approval: {}{others}{spent}",
                        action.label()
                    ),
                    None => format!("the way forward needs a human's approval{spent}"),
                }
            }
            FailureReason::NotReproduced => {
                "successes were reported but no second node could reproduce them".into()
            }
            other => other.as_str().replace('_', " "),
        };
        self.finish_failing_with(reason, detail);
    }

    /// Ends a running task early, by an operator's cancel, the user's stop of the run
    /// (Ctrl-C, SIGTERM) or its wall-clock limit: `failing`, its result keeping what the task
    /// did until then (actions, nodes, approvals, network). False when it had ended already.
    ///
    /// Assignments still running are told to stop at once (their nodes stop after the job in
    /// hand and report): the task ends when they have answered, or after [`STOP_GRACE`].
    pub(crate) fn end_early(&mut self, ending: Ending) -> bool {
        if self.phase == Phase::Done || self.stopping.is_some() {
            return false;
        }
        if !self.assigned.is_empty() {
            tracing::info!(
                task = %self.id,
                running = self.assigned.len(),
                "stopping: waiting for the running assignments' reports"
            );
            self.stopping = Some((ending, Instant::now() + STOP_GRACE));
            return true;
        }
        self.finish_early(ending);
        true
    }

    /// While stopping: tells the nodes, and ends the task once the running assignments
    /// answered or the grace is over; whether it is stopping.
    pub(super) fn stop_next(&mut self, outbox: &mut Outbox) -> bool {
        let Some((ending, until)) = self.stopping else {
            return false;
        };
        self.release(outbox);
        if self.assigned.is_empty() || Instant::now() >= until {
            self.finish_early(ending);
        }
        true
    }

    fn finish_early(&mut self, ending: Ending) {
        let (reason, by) = match ending {
            Ending::Cancelled => (FailureReason::Cancelled, "cancelled by an operator".into()),
            Ending::Interrupted => (FailureReason::Interrupted, "interrupted by the user".into()),
            Ending::TimedOut => (
                FailureReason::Timeout,
                format!(
                    "the wall-clock limit of {} s passed",
                    self.task.budget.wall_time_secs
                ),
            ),
        };
        tracing::info!(task = %self.id, actions = self.actions, "task ended: {by}");
        self.finish_failing_with(reason, format!("{by} after {} actions", self.actions));
    }

    pub(super) fn finish_failing_with(&mut self, reason: FailureReason, detail: String) {
        let mut result = self.base_result();
        result.error = Some(RunError { reason, detail });
        self.finish(result);
        self.artifacts = Some(self.artifact_job(None));
    }

    pub(super) fn finish(&mut self, result: RunResult) {
        self.record(JournalEvent::Finished {
            result: Box::new(result.clone()),
        });
        self.result = Some(result);
        self.phase = Phase::Done;
    }
}

/// How long a task ended early waits for its running assignments' reports: a node stops
/// after the job in hand (an action and the page's settle, a second or two).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(3);

/// Why a task ended before its search did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// An operator cancelled it (`forager cancel`, the operator's API).
    Cancelled,
    /// The user stopped the run that submitted it (Ctrl-C, SIGTERM).
    Interrupted,
    /// Its wall-clock limit passed while searches were running.
    TimedOut,
}

/// Whether a pass's `steps` send nothing to others while a write was made in its task
/// (`wrote`): the pass read what another branch wrote.
pub(super) fn reads_another_write(wrote: bool, steps: &[ResultStep]) -> bool {
    wrote && steps.iter().all(|s| s.risk < RiskClass::ExternalSubmission)
}

/// What a passing task adds to its artifacts.
pub(super) struct Passed {
    pub(super) steps: Vec<ResultStep>,
    pub(super) pages: Vec<PageInfo>,
    pub(super) evidence: Option<Evidence>,
    pub(super) found_by: String,
    pub(super) verified_by: String,
}

/// The files a finished task leaves besides its journal and result, written on a blocking
/// thread so the actor goes on serving other tasks: `rollouts.json` (with `--keep-all`), and
/// for a pass the workflow, the step screenshots, then the report, then the signed trajectory
/// that names all of their digests.
pub(crate) struct ArtifactJob {
    id: TaskId,
    task: TaskSpec,
    dir: TaskDir,
    key: Option<ed25519_dalek::SigningKey>,
    kept_reports: Option<Vec<KeptReport>>,
    passed: Option<Passed>,
    /// Where a pass is remembered as a parametrized workflow (`None` also when the pass is a
    /// remembered workflow's own steps: its record counted the success already).
    memory: Option<crate::memory::WorkflowMemory>,
}

impl ArtifactJob {
    pub(crate) fn write(mut self) -> TaskId {
        let id = self.id;
        let mut files = vec![crate::journal::JOURNAL_FILE, crate::journal::RESULT_FILE];
        if let Some(kept) = &self.kept_reports {
            match crate::artifacts::write_rollouts(&self.dir, &id, kept) {
                Ok(()) => files.push(crate::artifacts::ROLLOUTS_FILE),
                Err(error) => tracing::error!(task = %id, %error, "cannot write the rollouts"),
            }
        }
        let Some(Passed {
            steps,
            pages,
            evidence,
            found_by,
            verified_by,
        }) = self.passed.take()
        else {
            self.write_report();
            return id;
        };
        if let Some(memory) = &self.memory
            && !steps.is_empty()
        {
            let actions: Vec<(Action, RiskClass)> =
                steps.iter().map(|s| (s.action.clone(), s.risk)).collect();
            match memory.remember_pass(&self.task, &actions, found_by, verified_by) {
                Ok(workflow) => {
                    tracing::info!(task = %id, workflow = %workflow.to_hex(), "remembered as a workflow")
                }
                Err(error) => tracing::warn!(task = %id, %error, "not remembered"),
            }
        }
        if !steps.is_empty() {
            match forager_protocol::workflow::compile(&self.task, &steps, &pages)
                .map_err(|e| e.to_string())
                .and_then(|w| w.to_json().map_err(|e| e.to_string()))
            {
                Ok(bytes) => match self.dir.write_file(WORKFLOW_FILE, &bytes) {
                    Ok(()) => files.insert(2, WORKFLOW_FILE),
                    Err(error) => tracing::error!(task = %id, %error, "cannot write the workflow"),
                },
                Err(error) => tracing::error!(task = %id, %error, "cannot compile the workflow"),
            }
        }
        if let Some(evidence) = &evidence
            && let Err(error) =
                crate::artifacts::write_screenshots(&self.dir, &evidence.screenshots)
        {
            tracing::error!(task = %id, %error, "cannot write the screenshots");
        }
        self.write_report();
        if self.dir.dir().join(crate::report::REPORT_FILE).exists() {
            files.push(crate::report::REPORT_FILE);
        }
        match (evidence, &self.key) {
            (Some(evidence), Some(key)) => {
                let written = crate::artifacts::write_trajectory(
                    &self.dir, key, &self.task, steps, evidence, &files,
                );
                if let Err(error) = written {
                    tracing::error!(task = %id, %error, "cannot write the trajectory");
                }
            }
            // The start page itself passed (no node report stands behind an empty path), or
            // this queen has no key to sign with.
            _ => tracing::info!(task = %id, "no signed trajectory for this result"),
        }
        id
    }

    /// Writes `report.html` from the finished task's files.
    pub(super) fn write_report(&self) {
        if let Err(error) = crate::report::write_run_report(self.dir.dir()) {
            tracing::error!(task = %self.id, %error, "cannot write the report");
        }
    }
}
