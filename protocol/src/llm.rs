//! The language-model tier's vocabulary: which OpenAI-compatible endpoints a task may ask
//! (a small tier for priors, a large one for recovery and the final verdict), what their tokens
//! cost, the budgets that bound them, and what a run spent (`result.json`'s `model`). No I/O:
//! the client lives in the node.
//!
//! These types cross the wire in bincode (a task, a branch's counters): no field may be
//! skipped when serialising.
//!
//! An API key is never part of a task: each process reads it from its own environment
//! ([`ModelEndpoint::api_key_env`]), so a task file, a journal or a peer never holds one.
//!
//! [`ModelSettings`] (`TaskSpec::model`) names the small and large tiers, their prices, the token
//! and money budgets and the call timeout; [`ModelUsage`] (in `Metrics::model` and in every
//! branch's, expansion's and reproduction's counters) says per tier and per use what was asked,
//! cached, failed and spent, and `fell_back` why the tier stopped; [`Judge`] says whether a
//! result was judged by predicates or by the model. A task without a success predicate is valid
//! only with a model.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Longest model name or URL accepted, in bytes.
pub const MAX_ENDPOINT_BYTES: usize = 512;

/// One OpenAI-compatible endpoint (`POST {url}/chat/completions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEndpoint {
    /// The API's base URL, up to and including its version (`http://127.0.0.1:8080/v1`).
    pub url: String,
    /// The model's name, as the server lists it.
    pub model: String,
    /// The environment variable holding the API key (sent as a bearer token), if any.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Price of 1,000 prompt tokens, in the user's currency (0 for a local model).
    #[serde(default)]
    pub prompt_price_per_1k: f64,
    /// Price of 1,000 completion tokens.
    #[serde(default)]
    pub completion_price_per_1k: f64,
}

impl ModelEndpoint {
    /// What `tokens` cost at this endpoint's prices.
    pub fn price(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.prompt_price_per_1k
            + completion_tokens as f64 * self.completion_price_per_1k)
            / 1000.0
    }
}

/// The model tier of a task: which endpoints, and how much they may spend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    /// The small tier: ranks a flat shortlist of candidates, judges pages when the task has
    /// no success predicate.
    pub small: ModelEndpoint,
    /// The large tier: recovery when the search is stuck, the final verdict. Without it the
    /// small tier does both.
    #[serde(default)]
    pub large: Option<ModelEndpoint>,
    /// Most tokens (prompt and completion, every tier, every node) the task may spend; the
    /// model is then no longer asked and the rules decide alone.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Most money (at the endpoints' prices) the task may spend.
    #[serde(default)]
    pub max_cost: Option<f64>,
    /// Seconds one call may take before it counts as failed.
    #[serde(default = "default_call_timeout")]
    pub call_timeout_secs: u32,
    /// What the tier is asked for ([`ModelUse::DEFAULT`] unless told). A task without a
    /// success predicate is always judged by the model, whatever this says.
    #[serde(default = "default_uses")]
    pub uses: Vec<ModelUse>,
    /// A JSON Schema (its text) the final page's answer is extracted into (`--answer-schema`):
    /// the large tier reads the page the reproduction ends on, and the answer, when it passes
    /// the meaningful-output check, is the result's `answer`.
    #[serde(default)]
    pub answer_schema: Option<String>,
}

/// Longest answer schema accepted, in bytes.
pub const MAX_ANSWER_SCHEMA_BYTES: usize = 16 * 1024;

/// A JSON value carried as its text: the JSON itself in a document (`result.json`), a string
/// on the wire (bincode cannot carry a self-describing value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonAnswer(pub String);

impl Serialize for JsonAnswer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable()
            && let Ok(value) = serde_json::from_str::<serde_json::Value>(&self.0)
        {
            return value.serialize(serializer);
        }
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for JsonAnswer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let value = serde_json::Value::deserialize(deserializer)?;
            Ok(JsonAnswer(value.to_string()))
        } else {
            String::deserialize(deserializer).map(JsonAnswer)
        }
    }
}

fn default_uses() -> Vec<ModelUse> {
    ModelUse::DEFAULT.to_vec()
}

fn default_call_timeout() -> u32 {
    30
}

impl ModelSettings {
    /// Whether the tier is asked for `model_use`.
    pub fn asks(&self, model_use: ModelUse) -> bool {
        self.uses.contains(&model_use)
    }

    /// The endpoint of a tier (the large tier falls back to the small one).
    pub fn endpoint(&self, tier: Tier) -> &ModelEndpoint {
        match tier {
            Tier::Small => &self.small,
            Tier::Large => self.large.as_ref().unwrap_or(&self.small),
        }
    }

    /// The first bad field, by name.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (field, endpoint) in [
            ("model.small", Some(&self.small)),
            ("model.large", self.large.as_ref()),
        ] {
            let Some(endpoint) = endpoint else { continue };
            let url = url::Url::parse(&endpoint.url)
                .map_err(|e| (field, format!("url {:?}: {e}", endpoint.url)))?;
            if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
                return Err((
                    field,
                    format!("url {:?} must be http(s) with a host", endpoint.url),
                ));
            }
            if endpoint.url.len() > MAX_ENDPOINT_BYTES
                || endpoint.model.trim().is_empty()
                || endpoint.model.len() > MAX_ENDPOINT_BYTES
            {
                return Err((
                    field,
                    "the url and the model name must be 1 to 512 bytes".into(),
                ));
            }
            let prices = [
                endpoint.prompt_price_per_1k,
                endpoint.completion_price_per_1k,
            ];
            if prices.iter().any(|p| !p.is_finite() || *p < 0.0) {
                return Err((field, "prices must be finite and not negative".into()));
            }
        }
        if self.max_cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            return Err(("model.max_cost", "must be finite and not negative".into()));
        }
        if let Some(schema) = &self.answer_schema {
            if schema.len() > MAX_ANSWER_SCHEMA_BYTES {
                return Err((
                    "model.answer_schema",
                    format!("{} bytes, at most {MAX_ANSWER_SCHEMA_BYTES}", schema.len()),
                ));
            }
            match serde_json::from_str::<serde_json::Value>(schema) {
                Ok(serde_json::Value::Object(_)) => {}
                Ok(_) => return Err(("model.answer_schema", "must be a JSON object".into())),
                Err(e) => return Err(("model.answer_schema", format!("not JSON: {e}"))),
            }
        }
        if self.uses.len() > 8 {
            return Err(("model.uses", "at most 8 uses".into()));
        }
        if self.call_timeout_secs == 0 || self.call_timeout_secs > 600 {
            return Err(("model.call_timeout_secs", "must be 1 to 600".into()));
        }
        Ok(())
    }
}

/// A tier of the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Cheap, frequent decisions.
    Small,
    /// Rare, hard ones.
    Large,
}

impl Tier {
    /// Its name in documents.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Small => "small",
            Tier::Large => "large",
        }
    }
}

/// What the model tier is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelUse {
    /// Rank a flat shortlist of a page's candidates.
    Priors,
    /// Judge whether a page achieves the goal (tasks without a success predicate).
    Verdict,
    /// Propose steps when the search is stuck.
    Recovery,
    /// Say how far a page is from the goal (blended into its value hint). Off by default: a
    /// call per new page.
    Value,
}

impl ModelUse {
    /// The uses a model tier has unless told otherwise.
    pub const DEFAULT: [ModelUse; 3] = [ModelUse::Priors, ModelUse::Verdict, ModelUse::Recovery];

    /// A use by its name.
    pub fn parse(name: &str) -> Option<ModelUse> {
        match name.trim() {
            "priors" => Some(ModelUse::Priors),
            "verdict" => Some(ModelUse::Verdict),
            "recovery" => Some(ModelUse::Recovery),
            "value" => Some(ModelUse::Value),
            _ => None,
        }
    }
}

impl ModelUse {
    /// Its name in documents.
    pub fn name(self) -> &'static str {
        match self {
            ModelUse::Priors => "priors",
            ModelUse::Verdict => "verdict",
            ModelUse::Recovery => "recovery",
            ModelUse::Value => "value",
        }
    }
}

/// What one tier spent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TierUsage {
    /// Calls answered by the server.
    pub calls: u64,
    /// Questions answered from the on-disk cache (no tokens).
    pub cached: u64,
    /// Calls that failed (timeout, refused, unusable answer): the rules decided.
    pub failed: u64,
    /// Prompt tokens, as the server reported them.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Money, at the endpoint's prices.
    pub cost: f64,
    /// Milliseconds spent waiting for answers.
    pub wait_ms: u64,
}

impl TierUsage {
    /// Adds another count.
    pub fn add(&mut self, other: &TierUsage) {
        self.calls += other.calls;
        self.cached += other.cached;
        self.failed += other.failed;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cost += other.cost;
        self.wait_ms += other.wait_ms;
    }

    /// Prompt and completion tokens.
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

/// What the model tier spent and decided in a run (or one branch of it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// Per tier (`small`, `large`).
    pub tiers: BTreeMap<Tier, TierUsage>,
    /// Questions asked, per use (`priors`, `verdict`, `recovery`), cached ones included.
    pub uses: BTreeMap<ModelUse, u64>,
    /// Decisions the router left to the rules because they were confident.
    pub rules_decided: u64,
    /// Decisions where the model's answer changed what the rules would have chosen.
    pub model_decided: u64,
    /// Answers refused: a choice outside the candidates offered, or not in the shape asked
    /// for. Page text is data, so a model steered by it can only pick among what the rules
    /// offered; what else it answers is not used.
    #[serde(default)]
    pub rejected: u64,
    /// Why the model stopped being asked, when it did (`budget: max_tokens reached`,
    /// `unreachable: …`); the rules decided from then on.
    #[serde(default)]
    pub fell_back: Option<String>,
}

/// Most reasons a [`ModelUsage`] from a peer may carry, and their length.
pub const MAX_FALLBACK_BYTES: usize = 512;

impl ModelUsage {
    /// Adds another usage (a branch's) into this one.
    pub fn add(&mut self, other: &ModelUsage) {
        for (tier, usage) in &other.tiers {
            self.tiers.entry(*tier).or_default().add(usage);
        }
        for (model_use, n) in &other.uses {
            *self.uses.entry(*model_use).or_default() += n;
        }
        self.rules_decided += other.rules_decided;
        self.model_decided += other.model_decided;
        self.rejected += other.rejected;
        if self.fell_back.is_none() {
            self.fell_back = other.fell_back.clone();
        }
    }

    /// Every tier's tokens.
    pub fn tokens(&self) -> u64 {
        self.tiers.values().map(TierUsage::tokens).sum()
    }

    /// Every tier's money.
    pub fn cost(&self) -> f64 {
        self.tiers.values().map(|t| t.cost).sum()
    }

    /// Calls answered by a server, every tier.
    pub fn calls(&self) -> u64 {
        self.tiers.values().map(|t| t.calls).sum()
    }

    /// Whether nothing was asked.
    pub fn is_empty(&self) -> bool {
        self.tiers.is_empty() && self.uses.is_empty() && self.fell_back.is_none()
    }
}

/// How a run's success was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judge {
    /// The task's success predicates held (checked mechanically).
    #[default]
    Predicates,
    /// The model tier's verdict (the task has no predicate): weaker than a predicate.
    Model,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> ModelEndpoint {
        ModelEndpoint {
            url: "http://127.0.0.1:8080/v1".into(),
            model: "m".into(),
            api_key_env: None,
            prompt_price_per_1k: 0.5,
            completion_price_per_1k: 1.5,
        }
    }

    #[test]
    fn price_is_per_thousand_tokens() {
        assert!((endpoint().price(2000, 1000) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn bad_settings_are_named() {
        let mut settings = ModelSettings {
            small: endpoint(),
            large: None,
            max_tokens: None,
            max_cost: None,
            call_timeout_secs: 30,
            uses: ModelUse::DEFAULT.to_vec(),
            answer_schema: None,
        };
        assert!(settings.validate().is_ok());
        settings.answer_schema = Some("[1]".into());
        assert_eq!(
            settings.validate().map_err(|e| e.0),
            Err("model.answer_schema")
        );
        settings.answer_schema = Some(r#"{"type": "object"}"#.into());
        assert!(settings.validate().is_ok());
        settings.small.url = "ftp://x".into();
        assert_eq!(settings.validate().map_err(|e| e.0), Err("model.small"));
        settings.small = endpoint();
        settings.max_cost = Some(f64::NAN);
        assert_eq!(settings.validate().map_err(|e| e.0), Err("model.max_cost"));
        settings.max_cost = None;
        settings.large = Some(ModelEndpoint {
            prompt_price_per_1k: -1.0,
            ..endpoint()
        });
        assert_eq!(settings.validate().map_err(|e| e.0), Err("model.large"));
    }

    #[test]
    fn an_answer_is_json_in_documents_and_text_on_the_wire() {
        let answer = JsonAnswer(r#"{"city":"Lima","n":5}"#.into());
        let json = serde_json::to_value(&answer).expect("serialises");
        assert_eq!(json, serde_json::json!({"city": "Lima", "n": 5}));
        let back: JsonAnswer = serde_json::from_value(json).expect("reads back");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&back.0).ok(),
            serde_json::from_str::<serde_json::Value>(&answer.0).ok()
        );
        let bytes = crate::codec::canonical_bytes(&answer).expect("encodes");
        let wire: JsonAnswer = crate::codec::decode_body(&bytes).expect("decodes");
        assert_eq!(wire, answer);
    }

    #[test]
    fn usages_add_up() {
        let mut a = ModelUsage::default();
        let mut b = ModelUsage::default();
        b.tiers.insert(
            Tier::Small,
            TierUsage {
                calls: 2,
                prompt_tokens: 100,
                completion_tokens: 10,
                cost: 0.1,
                ..Default::default()
            },
        );
        b.uses.insert(ModelUse::Priors, 3);
        b.fell_back = Some("budget".into());
        a.add(&b);
        a.add(&b);
        assert_eq!(a.tokens(), 220);
        assert_eq!(a.calls(), 4);
        assert_eq!(a.uses[&ModelUse::Priors], 6);
        assert_eq!(a.fell_back.as_deref(), Some("budget"));
        assert!((a.cost() - 0.2).abs() < 1e-12);
    }
}
