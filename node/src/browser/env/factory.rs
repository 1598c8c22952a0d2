//! Chromium environments made for a node's worker ([`ChromiumFactory`]), one per task and
//! branch on the node's browser, and what the worker reads back from them.

use super::{ChromiumEnv, EnvOptions};
use crate::browser::pool::BrowserPool;
use crate::environment::{EnvError, WriteEvidence};
use crate::policy::DefaultPolicy;
use forager_protocol::task::AfterCheck;
use forager_protocol::{Action, Fingerprint, TaskSpec};
use std::sync::Arc;

/// Makes Chromium environments on a node's browser for the worker.
#[derive(Debug, Clone)]
pub struct ChromiumFactory {
    /// The node's browser.
    pub pool: BrowserPool,
    /// How environments behave.
    pub options: EnvOptions,
    /// The sentence model of the search's policy (`None`: n-grams only). Replays, which
    /// need no priors, go without.
    pub model: Option<Arc<crate::model::SentenceModel>>,
}

impl crate::factory::EnvFactory for ChromiumFactory {
    type Env = ChromiumEnv;

    fn goal_embedder(&self) -> crate::memory::GoalEmbedder {
        match &self.model {
            Some(model) => crate::memory::GoalEmbedder::Model(model.clone()),
            None => crate::memory::GoalEmbedder::Ngram,
        }
    }

    fn set_write_claims(env: &mut ChromiumEnv, claims: crate::claims::WriteClaims) {
        env.set_write_claims(claims);
    }

    fn create(&self, task: &TaskSpec, for_replay: bool) -> Result<ChromiumEnv, EnvError> {
        let mut options = self.options.clone();
        if for_replay {
            // A reproduction starts from nothing: no page reuse.
            options.reuse_pages = false;
        }
        let model = if for_replay { None } else { self.model.clone() };
        ChromiumEnv::with_policy(
            self.pool.clone(),
            Arc::new(task.clone()),
            options,
            Arc::new(DefaultPolicy::with_model(model)),
        )
    }

    fn step_info(
        env: &ChromiumEnv,
        before: Fingerprint,
        after: Fingerprint,
    ) -> forager_protocol::wire::PageInfo {
        let page = env.page(&after);
        let heal = env.healed(&before, &after);
        forager_protocol::wire::PageInfo {
            url: page.map(|p| p.url.clone()).unwrap_or_default(),
            title: page.map(|p| p.title.clone()).unwrap_or_default(),
            verdict: env.verdict(&before, &after).cloned(),
            healed_locator: heal.map(|h| h.index),
            healed_by: heal.map(|h| h.locator.clone()),
            family: page.map(|p| p.family),
            heading: page.and_then(|p| p.heading.clone()),
            cost_ms: 0,
            value_hint: 0.0,
            why: None,
        }
    }

    fn why(
        env: &ChromiumEnv,
        action: &Action,
        after: Fingerprint,
    ) -> Option<forager_protocol::result::StepWhy> {
        env.why(crate::embed::action_key(&action.label()), &after)
            .cloned()
    }

    fn counters(env: &ChromiumEnv) -> forager_protocol::wire::BranchCounters {
        let stats = env.stats();
        // A walk back through history is part of a hit, not a restore of its own.
        forager_protocol::wire::BranchCounters {
            cache_hits: stats.cache_hits,
            cache_misses: stats.cache_misses,
            pages_read: stats.pages_read,
            reading_us: stats.reading_us,
            ..Default::default()
        }
    }

    fn take_model_usage(env: &ChromiumEnv) -> forager_protocol::llm::ModelUsage {
        env.take_model_usage()
    }

    async fn extract_answer(env: &mut ChromiumEnv) -> Option<String> {
        env.extract_answer().await
    }

    fn network(env: &ChromiumEnv) -> forager_protocol::result::NetworkSummary {
        env.take_network().summary()
    }

    async fn screenshot(env: &ChromiumEnv) -> Option<Vec<u8>> {
        env.screenshot()
            .await
            .inspect_err(|error| tracing::warn!(%error, "no screenshot of this step"))
            .ok()
    }

    fn evidence(env: &ChromiumEnv, after: Fingerprint) -> Option<WriteEvidence> {
        env.evidence(&after).cloned()
    }

    async fn after_check(env: &mut ChromiumEnv, check: &AfterCheck) -> Result<bool, EnvError> {
        env.after_check(check).await
    }

    async fn reset_site(env: &mut ChromiumEnv) -> Result<(), EnvError> {
        env.reset_site().await
    }
}
