//! Writes: which steps write on a site that is not reset, the evidence a write left, the claim
//! of a write from the queen before it runs, the task's reset command and after-check.
//!
//! On a site not declared resettable, the evidence of pages past a write (page digest and
//! screenshot, taken when the step ran; the last `MAX_EVIDENCE`) is kept for the success's
//! report. `ChromiumEnv::reset_site` runs the task's reset command (only with
//! `EnvOptions::allow_reset`) before any replay of a path that writes; `ChromiumEnv::after_check`
//! loads the task's after-check page. A write of class 4 or more runs only once the task's queen
//! granted its key (`claim_write`, before anything is sent).

use super::{ChromiumEnv, PageSummary};
use crate::browser::tab::Tab;
use crate::environment::{EnvError, WriteEvidence};
use forager_protocol::observation::Observation;
use forager_protocol::task::AfterCheck;
use forager_protocol::{Action, Fingerprint, RiskClass};

/// SHA-256 of a page as read: its URL and accessibility snapshot.
pub(super) fn page_digest(observation: &Observation) -> forager_protocol::digest::Digest32 {
    let mut text = observation.url.clone();
    for line in &observation.snapshot {
        text.push('\n');
        text.push_str(line);
    }
    forager_protocol::digest::Digest32::of(text.as_bytes())
}

/// Runs a reset command with `sh -c`, bounded by [`RESET_TIMEOUT`]; a failure names the exit
/// status and the end of its error output.
pub(super) async fn run_reset_command(command: &str) -> Result<(), EnvError> {
    let mut child = tokio::process::Command::new("sh");
    child
        .args(["-c", command])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(RESET_TIMEOUT, child.output())
        .await
        .map_err(|_| {
            EnvError::ResetFailed(format!(
                "the reset command ran longer than {} s",
                RESET_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| EnvError::ResetFailed(format!("cannot run sh: {e}")))?;
    if output.status.success() {
        tracing::info!(%command, "site reset");
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: String = stderr
        .trim()
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Err(EnvError::ResetFailed(format!(
        "the reset command exited with {}: {tail}",
        output.status
    )))
}

/// Pages past a write an environment keeps the evidence of.
pub(super) const MAX_EVIDENCE: usize = 32;

/// How long a task's reset command may run.
pub(super) const RESET_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether the action submits a form by `POST` (its button, or Enter in one of its fields):
/// what it sent stays with the server and the context's cookies whatever history does.
pub(super) fn posts_form(action: &Action) -> bool {
    let submits = match action {
        Action::Fill { enter, .. } => *enter,
        Action::Select { .. } | Action::Hover { .. } | Action::Scroll { .. } => false,
        _ => true,
    };
    submits
        && action
            .target()
            .is_some_and(|t| matches!(t.sends, forager_protocol::action::Sends::Post { .. }))
}

impl ChromiumEnv {
    /// Whether these steps write (risk class 3 or more) on a site not declared resettable:
    /// states past them cannot be reached again by replay.
    pub(super) fn writes(&self, steps: &[(Action, Fingerprint)]) -> bool {
        !self.task.replays_writes()
            && steps
                .iter()
                .any(|(a, _)| self.risk_of(a) >= RiskClass::DraftWrite)
    }

    /// Whether `action` took the page from `before` to `after` without changing what it holds:
    /// only fields marked invalid (a submission the browser refused for empty required
    /// fields), or, for a presentation control the goal does not ask for (a theme toggle), a
    /// page of the same family.
    pub(super) fn only_presentation(
        &self,
        before: &Observation,
        after: &Observation,
        action: &Action,
    ) -> bool {
        if before.url != after.url {
            return false;
        }
        let validity_aside = |o: &Observation| -> Vec<String> {
            o.snapshot
                .iter()
                .map(|l| l.replace(" invalid", ""))
                .collect()
        };
        if validity_aside(before) == validity_aside(after) {
            return true;
        }
        let presentation = action
            .target()
            .is_some_and(|t| crate::policy::is_presentation(&t.name))
            && !crate::policy::is_presentation(&self.task.goal);
        presentation && PageSummary::of(before).family == PageSummary::of(after).family
    }

    /// Whether a step `action` taken after `prefix` lands past a write on a site whose writes
    /// are not repeated: its page is evidence.
    pub(super) fn past_write(&self, prefix: &[(Action, Fingerprint)], action: &Action) -> bool {
        // The queen decides what a reproduction may execute by the same rule (the higher of
        // the two readings), so every step it will attest has its evidence.
        !self.task.replays_writes()
            && std::iter::once(action)
                .chain(prefix.iter().map(|(a, _)| a))
                .any(|a| {
                    self.risk_of(a)
                        .max(forager_protocol::risk::classify_action(a))
                        >= RiskClass::DraftWrite
                })
    }

    /// Keeps what a page past a write shows (its digest and a screenshot): the only time it
    /// can be seen, since a verification will not repeat the write.
    pub(super) async fn witness_write(&mut self, tab: &Tab, observation: &Observation) {
        let screenshot = tab
            .screenshot()
            .await
            .inspect_err(|error| tracing::warn!(%error, "no screenshot of a write"))
            .ok();
        self.keep_evidence(
            observation.fingerprint,
            WriteEvidence {
                page_digest: page_digest(observation),
                screenshot,
            },
        );
    }

    pub(super) fn keep_evidence(&mut self, state: Fingerprint, evidence: WriteEvidence) {
        self.evidence.retain(|(f, _)| *f != state);
        if self.evidence.len() >= MAX_EVIDENCE {
            self.evidence.pop_front();
        }
        self.evidence.push_back((state, evidence));
    }

    /// The evidence kept for a state past a write.
    pub fn evidence(&self, state: &Fingerprint) -> Option<&WriteEvidence> {
        self.evidence
            .iter()
            .find(|(f, _)| f == state)
            .map(|(_, e)| e)
    }

    /// Runs the task's reset command, if it has one: before any replay that executes writes.
    pub async fn reset_site(&mut self) -> Result<(), EnvError> {
        let Some(command) = &self.task.reset_cmd else {
            return Ok(());
        };
        if !self.options.allow_reset {
            return Err(EnvError::ResetFailed(
                "this node does not run reset commands (start it with --allow-reset-cmd)".into(),
            ));
        }
        run_reset_command(command).await?;
        self.stats.resets += 1;
        Ok(())
    }

    /// Loads `check.url` in the current tab (whose session the steps so far established) and
    /// says whether the page shows `check.text`. The tab is spent: its state is no longer one
    /// of the search's.
    pub async fn after_check(&mut self, check: &AfterCheck) -> Result<bool, EnvError> {
        let Some(live) = &mut self.current else {
            return Err(EnvError::Other("no current page: restore first".into()));
        };
        live.dirty = true;
        live.tab.navigate(&check.url).await?;
        live.tab.settle().await?;
        let (texts, _) = live
            .tab
            .check_dom(std::slice::from_ref(&check.text), &[])
            .await?;
        Ok(texts.first().copied().unwrap_or(false))
    }

    /// Refuses to replay a write on a site not declared resettable.
    pub(super) fn check_replay(
        &mut self,
        actions: &[(Action, Fingerprint)],
    ) -> Result<(), EnvError> {
        if self.task.replays_writes() {
            return Ok(());
        }
        match actions
            .iter()
            .find(|(a, _)| self.risk_of(a) >= RiskClass::DraftWrite)
        {
            Some((action, _)) => {
                self.stats.replays_refused += 1;
                Err(EnvError::ReplayUnsafe(format!(
                    "the path writes ({}), the site is not declared resettable, and no live page \
                     was kept there",
                    action.label()
                )))
            }
            None => Ok(()),
        }
    }

    /// Asks the queen for a write of the task before it runs, where a write runs once per
    /// task (a site not declared resettable, searched for a queen): another branch that
    /// reached the same form first holds it.
    pub(super) async fn claim_write(
        &self,
        page_url: &str,
        action: &Action,
    ) -> Result<(), EnvError> {
        let Some(claims) = &self.claims else {
            return Ok(());
        };
        // A draft (a cart, a saved draft: class 3) belongs to the browser context's own
        // session and is made again in each; what reaches others (class 4 and up: a comment,
        // an issue, an order) is made once.
        if self.task.replays_writes() || self.risk_of(action) < RiskClass::ExternalSubmission {
            return Ok(());
        }
        let key = crate::claims::write_key(page_url, action);
        match claims.claim(key).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(EnvError::WriteTaken(format!(
                "another branch holds {}",
                action.label()
            ))),
            Err(error) => Err(EnvError::WriteTaken(format!(
                "the queen could not be asked ({error}); not sending {}",
                action.label()
            ))),
        }
    }

    /// Has every write of this environment claimed from the queen first.
    pub fn set_write_claims(&mut self, claims: crate::claims::WriteClaims) {
        self.claims = Some(claims);
    }
}
