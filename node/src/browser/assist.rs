//! The model tier's help to one browser environment: a verdict on a page when the task has no
//! success predicate, a ranking of a flat shortlist of candidates, and a recovery when the
//! search keeps landing on the same pages. The router ([`crate::llm::router`]) decides when
//! each is worth a call; what was asked and spent is kept in this environment's ledger
//! (taken into each branch's counters) and its tokens enter the step's cost (the score's
//! `μ·cost`).
//!
//! Answers are remembered per page here (a page judged or ranked once is not asked about
//! again by this environment) and on disk by the tier (by the whole question).
//!
//! The verdict: the start page, an HTTP error or a browser error page is no success and costs no
//! call; the small tier judges, a large tier of its own confirms a success. The validator's second
//! tier: a submit-shaped step whose pre-pass is inconclusive is read before and after by the small
//! tier. A ranking lifts the chosen candidate (`MODEL_CHOICE_SHARE`), its why naming `model`. A
//! recovery, when the task's last actions in this process reached at most two pages
//! (`ModelTier::stuck_now`, at most `router::MAX_RECOVERIES` per task and process), asks the
//! large tier and lifts its steps (why `recovery`).

use crate::environment::Why;
use crate::llm::ModelTier;
use crate::llm::prompts::{self, Recovery};
use crate::llm::router::{self, Route};
use crate::policy::Proposals;
use forager_protocol::llm::{ModelUsage, ModelUse, Tier};
use forager_protocol::observation::Observation;
use forager_protocol::verdict::{Verdict, VerdictOutcome, VerdictTier};
use forager_protocol::{Fingerprint, RiskClass};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The share of the priors a chosen candidate is lifted to (the rest keeps its order).
const MODEL_CHOICE_SHARE: f64 = 0.5;
/// The share the steps of a recovery are lifted to, together.
const RECOVERY_SHARE: f64 = 0.6;
/// The model's say in a page's value hint, where it is asked (`value`): half, beside the
/// rules' half (neither alone was measured better; see docs/model-tier.md).
const MODEL_VALUE_SHARE: f64 = 0.5;

/// The model tier as one environment uses it.
pub(crate) struct ModelAssist {
    tier: Arc<ModelTier>,
    goal: String,
    /// The start URL's origin: pages there are described by their path.
    origin: String,
    ceiling: RiskClass,
    /// The start page as prompts describe it: the "before" of every verdict.
    start: Option<(Fingerprint, String)>,
    judged: HashMap<Fingerprint, bool>,
    ranked: HashMap<Fingerprint, Option<u64>>,
    valued: HashMap<Fingerprint, Option<f64>>,
    usage: Mutex<ModelUsage>,
    /// Tokens spent since the last step took them into its cost.
    pending_tokens: u64,
}

impl ModelAssist {
    pub(crate) fn new(
        tier: Arc<ModelTier>,
        goal: String,
        start_url: &str,
        ceiling: RiskClass,
    ) -> ModelAssist {
        let origin = url::Url::parse(start_url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        ModelAssist {
            tier,
            goal,
            origin,
            ceiling,
            start: None,
            judged: HashMap::new(),
            ranked: HashMap::new(),
            valued: HashMap::new(),
            usage: Mutex::new(ModelUsage::default()),
            pending_tokens: 0,
        }
    }

    /// The ledger since it was last taken.
    pub(crate) fn take_usage(&self) -> ModelUsage {
        std::mem::take(&mut *self.usage.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Tokens spent since the last call: the cost of the step being finished.
    pub(crate) fn take_tokens(&mut self) -> u64 {
        std::mem::take(&mut self.pending_tokens)
    }

    async fn ask(
        &mut self,
        tier: Tier,
        model_use: ModelUse,
        question: crate::llm::client::Question,
    ) -> Option<serde_json::Value> {
        let mut usage = ModelUsage::default();
        let answer = self.tier.ask(tier, model_use, question, &mut usage).await;
        self.pending_tokens += usage.tokens();
        self.usage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(&usage);
        answer
    }

    /// [`Self::ask`], and the answer through its `check`; an answer the check refuses (a
    /// choice not offered, a shape not asked for) is counted (`ModelUsage::rejected`).
    async fn ask_checked<T>(
        &mut self,
        tier: Tier,
        model_use: ModelUse,
        question: crate::llm::client::Question,
        check: impl FnOnce(&serde_json::Value) -> Option<T>,
    ) -> Option<T> {
        let answer = self.ask(tier, model_use, question).await?;
        let checked = check(&answer);
        if checked.is_none() {
            self.usage
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .rejected += 1;
        }
        checked
    }

    fn count(&self, decided_by_model: bool) {
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        if decided_by_model {
            usage.model_decided += 1;
        } else {
            usage.rules_decided += 1;
        }
    }

    /// Notes the page an action reached (restores are not counted: they revisit pages by
    /// design): what tells a stuck search.
    pub(crate) fn acted(&mut self, reached: Fingerprint) {
        let [a, b, c, d, e, f, g, h, ..] = reached.0;
        self.tier
            .acted(u64::from_le_bytes([a, b, c, d, e, f, g, h]));
    }

    /// Remembers the start page (the first page looked at): the "before" of every verdict.
    pub(crate) fn saw_start(&mut self, observation: &Observation) {
        if self.start.is_none() {
            self.start = Some((
                observation.fingerprint,
                prompts::describe(observation, &self.origin),
            ));
        }
    }

    /// Whether the page achieves the goal, by the model (a task without a predicate). The
    /// deterministic pre-pass first: the start page, an error page or a browser error page is
    /// not a success and costs no call. The small tier judges; a success is confirmed by the
    /// large tier when one of its own is configured.
    pub(crate) async fn verdict(&mut self, observation: &Observation) -> bool {
        let Some((start, before)) = self.start.clone() else {
            return false;
        };
        if observation.fingerprint == start
            || observation.http_status.is_some_and(|s| s >= 400)
            || observation.url.starts_with("chrome-error://")
        {
            return false;
        }
        if let Some(&done) = self.judged.get(&observation.fingerprint) {
            return done;
        }
        let after = prompts::describe(observation, &self.origin);
        let question = prompts::verdict(&self.goal, &before, &after);
        let mut done = match self
            .ask(Tier::Small, ModelUse::Verdict, question.clone())
            .await
        {
            Some(answer) => prompts::judged(&answer),
            None => None,
        };
        if matches!(done, Some((true, _))) && self.tier.has_large() {
            done = match self.ask(Tier::Large, ModelUse::Verdict, question).await {
                Some(answer) => prompts::judged(&answer),
                None => None,
            };
        }
        let (done, reason) = done.unwrap_or((false, "no usable verdict".into()));
        tracing::info!(url = %observation.url, done, %reason, "model verdict");
        self.judged.insert(observation.fingerprint, done);
        done
    }

    /// The validator's second tier: where the deterministic pre-pass could not tell whether a
    /// submission did what it was for, the small tier's reading of the page before and after.
    pub(crate) async fn submission(
        &mut self,
        action: &str,
        before: &Observation,
        after: &Observation,
    ) -> Option<Verdict> {
        if !self.tier.settings().asks(ModelUse::Verdict) {
            return None;
        }
        let question = prompts::submission(
            &self.goal,
            action,
            &prompts::describe(before, &self.origin),
            &prompts::describe(after, &self.origin),
        );
        let answer = self.ask(Tier::Small, ModelUse::Verdict, question).await?;
        let (outcome, reason) = prompts::submitted(&answer)?;
        let outcome = match outcome {
            "advanced" => VerdictOutcome::Advanced,
            "rejected" => VerdictOutcome::Rejected,
            _ => VerdictOutcome::Inconclusive,
        };
        Some(Verdict {
            outcome,
            tier: VerdictTier::Model,
            reasons: vec![reason],
        })
    }

    /// The answer on `observation` in the task's answer schema (the large tier: the final
    /// reading), as JSON text, when it is meaningful.
    pub(crate) async fn extract(&mut self, observation: &Observation) -> Option<String> {
        let schema: serde_json::Value =
            serde_json::from_str(self.tier.settings().answer_schema.as_deref()?).ok()?;
        let question = prompts::extract(
            &self.goal,
            &prompts::describe(observation, &self.origin),
            &schema,
        );
        let answer = self.ask(Tier::Large, ModelUse::Verdict, question).await?;
        let answer = prompts::extracted(&answer, &schema);
        tracing::info!(url = %observation.url, found = answer.is_some(), "answer extracted");
        answer.map(|a| a.to_string())
    }

    fn executable(&self, proposals: &Proposals) -> Vec<usize> {
        proposals
            .candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.refused.is_none() && c.risk <= self.ceiling)
            .map(|(i, _)| i)
            .collect()
    }

    /// The router's call on a page's candidates: the rules' order when it is clear, else the
    /// small tier's choice from the shortlist, lifted to [`MODEL_CHOICE_SHARE`] of the priors
    /// (its why names `model`). Then, when the last actions led to at most two pages, a recovery (the large tier).
    pub(crate) async fn rank(&mut self, observation: &Observation, proposals: &mut Proposals) {
        if self.tier.settings().asks(ModelUse::Value) {
            self.value(observation, proposals).await;
        }
        let settings = self.tier.settings();
        let (priors_on, recovery_on) = (
            settings.asks(ModelUse::Priors),
            settings.asks(ModelUse::Recovery),
        );
        let mut shortlist = self.executable(proposals);
        shortlist.sort_by(|&a, &b| {
            proposals.candidates[b]
                .prior
                .total_cmp(&proposals.candidates[a].prior)
        });
        if recovery_on && shortlist.len() > 1 && self.tier.stuck_now() {
            self.recover(observation, proposals, &shortlist).await;
            return;
        }
        if !priors_on {
            return;
        }
        if let Some(known) = self.ranked.get(&observation.fingerprint) {
            // Decided at an earlier look at this page: the same order again, not counted again.
            if let Some(index) =
                known.and_then(|key| proposals.candidates.iter().position(|c| c.key == key))
            {
                lift(proposals, &[index], MODEL_CHOICE_SHARE, "model");
            }
            return;
        }
        let priors: Vec<f64> = shortlist
            .iter()
            .map(|&i| proposals.candidates[i].prior)
            .collect();
        if router::route_priors(&priors) == Route::Rules {
            self.ranked.insert(observation.fingerprint, None);
            self.count(false);
            return;
        }
        shortlist.truncate(router::SHORTLIST);
        let labels: Vec<String> = shortlist
            .iter()
            .map(|&i| proposals.candidates[i].action.label())
            .collect();
        let question = prompts::rank(
            &self.goal,
            &prompts::describe(observation, &self.origin),
            &labels,
        );
        let chosen = self
            .ask_checked(Tier::Small, ModelUse::Priors, question, |answer| {
                prompts::chosen(answer, shortlist.len())
            })
            .await;
        self.ranked.insert(
            observation.fingerprint,
            chosen.map(|i| proposals.candidates[shortlist[i]].key),
        );
        // The model decided where it chose other than the rules' first.
        self.count(chosen.is_some_and(|i| i != 0));
        if let Some(i) = chosen {
            lift(proposals, &[shortlist[i]], MODEL_CHOICE_SHARE, "model");
        }
    }

    /// The page's value hint, blended with the model's reading of how far the goal is (asked
    /// once per page).
    async fn value(&mut self, observation: &Observation, proposals: &mut Proposals) {
        let progress = match self.valued.get(&observation.fingerprint) {
            Some(known) => *known,
            None => {
                let question =
                    prompts::value(&self.goal, &prompts::describe(observation, &self.origin));
                let progress = self
                    .ask(Tier::Small, ModelUse::Value, question)
                    .await
                    .and_then(|answer| prompts::progress(&answer));
                self.valued.insert(observation.fingerprint, progress);
                progress
            }
        };
        if let Some(progress) = progress {
            proposals.value_hint =
                (1.0 - MODEL_VALUE_SHARE) * proposals.value_hint + MODEL_VALUE_SHARE * progress;
        }
    }

    async fn recover(
        &mut self,
        observation: &Observation,
        proposals: &mut Proposals,
        shortlist: &[usize],
    ) {
        let offered: Vec<usize> = shortlist
            .iter()
            .copied()
            .take(2 * router::SHORTLIST)
            .collect();
        let labels: Vec<String> = offered
            .iter()
            .map(|&i| proposals.candidates[i].action.label())
            .collect();
        let tried = vec![observation.title.clone()];
        let question = prompts::recovery(
            &self.goal,
            &prompts::describe(observation, &self.origin),
            &labels,
            &tried,
        );
        let recovered = self
            .ask_checked(Tier::Large, ModelUse::Recovery, question, |answer| {
                prompts::recovered(answer, offered.len())
            })
            .await;
        match recovered {
            Some(Recovery::Steps(steps)) => {
                let chosen: Vec<usize> = steps.iter().map(|&i| offered[i]).collect();
                tracing::info!(url = %observation.url, steps = ?chosen.iter().map(|&i| proposals.candidates[i].action.label()).collect::<Vec<_>>(), "model recovery");
                self.count(true);
                lift(proposals, &chosen, RECOVERY_SHARE, "recovery");
            }
            Some(Recovery::GiveUp(reason)) => {
                tracing::info!(url = %observation.url, %reason, "model recovery gives up here");
                self.count(false);
            }
            None => self.count(false),
        }
    }
}

/// Lifts `chosen` (in order, the first most) to `share` of the priors together, the others
/// scaled into the rest; each chosen candidate's why gains `signal` with its lift.
fn lift(proposals: &mut Proposals, chosen: &[usize], share: f64, signal: &'static str) {
    if chosen.is_empty() {
        return;
    }
    let total: f64 = proposals.candidates.iter().map(|c| c.prior).sum();
    let others: f64 = proposals
        .candidates
        .iter()
        .enumerate()
        .filter(|(i, _)| !chosen.contains(i))
        .map(|(_, c)| c.prior)
        .sum();
    let scale = if others > 0.0 && total > 0.0 {
        (1.0 - share) * total / others
    } else {
        1.0
    };
    // Shares of the chosen: 1/2, 1/3, 1/6 for three (harmonic, first most).
    let weights: Vec<f64> = (1..=chosen.len()).map(|k| 1.0 / k as f64).collect();
    let weight_sum: f64 = weights.iter().sum();
    for (i, candidate) in proposals.candidates.iter_mut().enumerate() {
        match chosen.iter().position(|&c| c == i) {
            Some(rank) => {
                let before = candidate.prior;
                candidate.prior = share * total.max(f64::MIN_POSITIVE) * weights[rank] / weight_sum;
                let mut why = std::mem::take(&mut candidate.why.0);
                why.push((signal, candidate.prior - before));
                candidate.why = Why(why);
            }
            None => candidate.prior *= scale,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Candidate;
    use forager_protocol::Action;

    fn proposals(priors: &[f64]) -> Proposals {
        Proposals {
            candidates: priors
                .iter()
                .enumerate()
                .map(|(i, &prior)| Candidate {
                    action: if i % 2 == 0 {
                        Action::Back
                    } else {
                        Action::Done
                    },
                    prior,
                    risk: RiskClass::ReadOnly,
                    key: i as u64,
                    target: None,
                    refused: None,
                    why: Why::default(),
                })
                .collect(),
            value_hint: 0.0,
        }
    }

    #[test]
    fn a_lifted_choice_leads_and_the_priors_still_sum_to_one() {
        let mut p = proposals(&[0.4, 0.35, 0.25]);
        lift(&mut p, &[2], MODEL_CHOICE_SHARE, "model");
        let priors: Vec<f64> = p.candidates.iter().map(|c| c.prior).collect();
        assert!(
            (priors.iter().sum::<f64>() - 1.0).abs() < 1e-9,
            "{priors:?}"
        );
        assert!((priors[2] - 0.5).abs() < 1e-9);
        assert!(priors[0] > priors[1], "the others keep their order");
        assert_eq!(p.candidates[2].why.0.last().map(|w| w.0), Some("model"));
        let mut p = proposals(&[0.2, 0.2, 0.2, 0.2, 0.2]);
        lift(&mut p, &[3, 1], RECOVERY_SHARE, "recovery");
        assert!(p.candidates[3].prior > p.candidates[1].prior);
        assert!(p.candidates[1].prior > p.candidates[0].prior);
    }
}
