//! The language-model tier: any OpenAI-compatible endpoint ([`client`]) asked for the
//! decisions the rules are unsure of ([`router`]): ranking a flat shortlist of candidates,
//! judging a page when the task has no success predicate, proposing steps when the search is
//! stuck ([`prompts`]). Answers are kept on disk ([`cache`]) so that a question asked before
//! costs nothing.
//!
//! One [`ModelTier`] serves every environment of a task in a process ([`ModelTier::for_task`]):
//! it holds the clients, the cache and the task's budget (tokens and money spent so far by this
//! process). Each environment keeps its own [`ModelUsage`] ledger, which travels to the queen
//! in its branch's counters. A server that is down, slow or answers nonsense costs the run only
//! the model's help: after [`MAX_FAILURES_IN_A_ROW`] failed calls, or once a budget is spent,
//! the tier stops asking and says why (`fell_back`), and the rules decide alone.
//!
//! Input values never leave the machine: every prompt is masked ([`prompts::mask`]) before it
//! is sent or hashed for the cache.

pub mod cache;
pub mod client;
pub mod prompts;
pub mod router;

use cache::{AnswerCache, Cached};
use client::{ChatClient, LlmError, Question};
use forager_protocol::llm::{ModelSettings, ModelUsage, ModelUse, Tier};
use forager_protocol::{TaskSpec, wire::TaskId};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Failed calls in a row after which the tier stops asking for the rest of the task.
pub const MAX_FAILURES_IN_A_ROW: u32 = 3;
/// Questions whose answers are kept in memory (and shared with askers waiting for them)
/// before the answered ones are dropped; the disk cache keeps them all.
const MAX_ASKED: usize = 4096;

/// An answer being asked for, or had: `None` inside when the call failed.
type AskedCell = Arc<tokio::sync::OnceCell<Option<Value>>>;

/// The model tier of one task in this process.
#[derive(Debug)]
pub struct ModelTier {
    settings: ModelSettings,
    small: ChatClient,
    large: Option<ChatClient>,
    cache: Option<AnswerCache>,
    /// `(value, placeholder)` of every input, longest value first.
    secrets: Vec<(String, String)>,
    spent_tokens: AtomicU64,
    /// Money spent, in millionths.
    spent_micros: AtomicU64,
    failures_in_a_row: AtomicU32,
    stopped: Mutex<Option<String>>,
    /// Questions asked in this process, by cache key.
    asked: Mutex<HashMap<String, AskedCell>>,
    /// The pages the task's last actions in this process reached (digests, most recent
    /// last): what tells a stuck search, whichever browser context acted.
    acts: Mutex<std::collections::VecDeque<u64>>,
    recoveries: AtomicU32,
}

/// Tiers alive in this process, by task: the environments of one task share one.
fn registry() -> &'static Mutex<HashMap<TaskId, Weak<ModelTier>>> {
    static TIERS: std::sync::OnceLock<Mutex<HashMap<TaskId, Weak<ModelTier>>>> =
        std::sync::OnceLock::new();
    TIERS.get_or_init(Default::default)
}

/// The variable naming the folder of kept answers.
pub const CACHE_VARIABLE: &str = "FORAGER_MODEL_CACHE";

/// The default folder of kept answers: `$FORAGER_MODEL_CACHE`, else the per-user data
/// folder's `model-cache/`.
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os(CACHE_VARIABLE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::model::user_data_dir().map(|d| d.join("model-cache")))
}

impl ModelTier {
    /// The tier of a task (shared with the task's other environments in this process), or none
    /// when the task asks no model. `cache`: where answers are kept (`None`: not kept).
    pub fn for_task(
        task: &TaskSpec,
        cache: Option<PathBuf>,
    ) -> Result<Option<Arc<ModelTier>>, LlmError> {
        let Some(settings) = &task.model else {
            return Ok(None);
        };
        let id = TaskId::of(task).map_err(|e| LlmError::Malformed(e.to_string()))?;
        let mut tiers = registry().lock().unwrap_or_else(|e| e.into_inner());
        tiers.retain(|_, tier| tier.strong_count() > 0);
        if let Some(tier) = tiers.get(&id).and_then(Weak::upgrade) {
            return Ok(Some(tier));
        }
        let mut secrets: Vec<(String, String)> = task
            .inputs
            .iter()
            .map(|(name, value)| (value.clone(), format!("<input {name}>")))
            .collect();
        if let Some(session) = &task.session {
            for cookie in &session.cookies {
                secrets.push((cookie.value.clone(), "<session secret>".into()));
            }
        }
        // As typed, and as a URL carries it (a GET form's query).
        let encoded: Vec<(String, String)> = secrets
            .iter()
            .flat_map(|(value, placeholder)| {
                let plus: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
                let percent = plus.replace('+', "%20");
                [(plus, placeholder.clone()), (percent, placeholder.clone())]
            })
            .collect();
        secrets.extend(encoded);
        secrets.retain(|(value, _)| value.len() >= 2);
        secrets.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        let tier = Arc::new(ModelTier::new(settings.clone(), cache, secrets)?);
        tiers.insert(id, Arc::downgrade(&tier));
        Ok(Some(tier))
    }

    /// A tier for these settings.
    pub fn new(
        settings: ModelSettings,
        cache: Option<PathBuf>,
        secrets: Vec<(String, String)>,
    ) -> Result<ModelTier, LlmError> {
        let timeout = Duration::from_secs(u64::from(settings.call_timeout_secs));
        let client = |endpoint: &forager_protocol::llm::ModelEndpoint| {
            let key = endpoint
                .api_key_env
                .as_deref()
                .and_then(|var| std::env::var(var).ok());
            ChatClient::new(&endpoint.url, &endpoint.model, key, timeout)
        };
        Ok(ModelTier {
            small: client(&settings.small)?,
            large: settings.large.as_ref().map(client).transpose()?,
            settings,
            cache: cache.map(AnswerCache::new),
            secrets,
            spent_tokens: AtomicU64::new(0),
            spent_micros: AtomicU64::new(0),
            failures_in_a_row: AtomicU32::new(0),
            stopped: Mutex::new(None),
            asked: Mutex::new(HashMap::new()),
            acts: Mutex::new(std::collections::VecDeque::new()),
            recoveries: AtomicU32::new(0),
        })
    }

    /// Its settings.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// Whether a large tier of its own is configured (else the small one stands in).
    pub fn has_large(&self) -> bool {
        self.large.is_some()
    }

    /// Notes the page an action of the task reached (restores are not counted: they revisit
    /// pages by design).
    pub fn acted(&self, page: u64) {
        let mut acts = self.acts.lock().unwrap_or_else(|e| e.into_inner());
        acts.push_back(page);
        if acts.len() > 2 * router::STUCK_LOOKS {
            acts.pop_front();
        }
    }

    /// Whether the search is stuck and a recovery may be asked now (at most
    /// [`router::MAX_RECOVERIES`] per task and process): then the window starts afresh.
    pub fn stuck_now(&self) -> bool {
        let mut acts = self.acts.lock().unwrap_or_else(|e| e.into_inner());
        if !router::stuck(acts.make_contiguous())
            || self.recoveries.load(Ordering::Relaxed) >= router::MAX_RECOVERIES
        {
            return false;
        }
        acts.clear();
        self.recoveries.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// `text` with every input value masked.
    pub fn mask(&self, text: &str) -> String {
        prompts::mask(text, &self.secrets)
    }

    /// Why the tier no longer asks, if it stopped.
    pub fn stopped(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn stop(&self, reason: String) {
        let mut stopped = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        if stopped.is_none() {
            tracing::warn!(%reason, "the model tier stops; the rules decide alone");
            *stopped = Some(reason);
        }
    }

    fn over_budget(&self) -> Option<String> {
        let tokens = self.spent_tokens.load(Ordering::Relaxed);
        if let Some(most) = self.settings.max_tokens
            && tokens >= most
        {
            return Some(format!(
                "budget: {tokens} tokens spent, --max-tokens {most}"
            ));
        }
        let cost = self.spent_micros.load(Ordering::Relaxed) as f64 / 1e6;
        if let Some(most) = self.settings.max_cost
            && cost >= most
        {
            return Some(format!("budget: {cost:.4} spent, --max-cost {most}"));
        }
        None
    }

    /// Asks `question` of `tier` for `model_use`; the answer's JSON, or `None` (no model
    /// help: stopped, over budget, failed). Everything is counted in `usage`.
    pub async fn ask(
        &self,
        tier: Tier,
        model_use: ModelUse,
        question: Question,
        usage: &mut ModelUsage,
    ) -> Option<Value> {
        if let Some(reason) = self.stopped().or_else(|| self.over_budget()) {
            self.stop(reason.clone());
            usage.fell_back.get_or_insert(reason);
            return None;
        }
        let question = Question {
            system: self.mask(&question.system),
            user: self.mask(&question.user),
            ..question
        };
        let (client, endpoint) = match (tier, &self.large) {
            (Tier::Large, Some(large)) => (large, self.settings.endpoint(Tier::Large)),
            _ => (&self.small, &self.settings.small),
        };
        *usage.uses.entry(model_use).or_default() += 1;
        let counts = usage.tiers.entry(tier).or_default();
        let key = AnswerCache::key(
            &endpoint.url,
            &endpoint.model,
            &client.body(&question, true),
        );
        if let Some(kept) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            counts.cached += 1;
            return Some(kept.value);
        }
        // The same question asked by several environments at once (two nodes at the start
        // page) is sent once; the others wait for its answer.
        let cell = {
            let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            if asked.len() >= MAX_ASKED {
                asked.retain(|_, cell| cell.get().is_none());
            }
            Arc::clone(asked.entry(key.clone()).or_default())
        };
        let mut outcome = None;
        let started = Instant::now();
        let answer = cell
            .get_or_init(|| async {
                let answer = client.ask(&question).await;
                let value = answer.as_ref().ok().map(|a| a.value.clone());
                outcome = Some(answer);
                value
            })
            .await
            .clone();
        let Some(outcome) = outcome else {
            // Another environment asked it: answered once, counted there.
            match &answer {
                Some(_) => counts.cached += 1,
                None => counts.failed += 1,
            }
            return answer;
        };
        counts.wait_ms += started.elapsed().as_millis() as u64;
        match outcome {
            Ok(answer) => {
                self.failures_in_a_row.store(0, Ordering::Relaxed);
                let cost = endpoint.price(answer.prompt_tokens, answer.completion_tokens);
                counts.calls += 1;
                counts.prompt_tokens += answer.prompt_tokens;
                counts.completion_tokens += answer.completion_tokens;
                counts.cost += cost;
                self.spent_tokens.fetch_add(
                    answer.prompt_tokens + answer.completion_tokens,
                    Ordering::Relaxed,
                );
                self.spent_micros
                    .fetch_add((cost * 1e6).round() as u64, Ordering::Relaxed);
                if let Some(cache) = &self.cache {
                    cache.put(
                        &key,
                        &Cached {
                            value: answer.value.clone(),
                            prompt_tokens: answer.prompt_tokens,
                            completion_tokens: answer.completion_tokens,
                        },
                    );
                }
                Some(answer.value)
            }
            Err(error) => {
                // A failure is not kept: the question may be asked again.
                self.asked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                counts.failed += 1;
                tracing::warn!(%error, tier = tier.name(), model_use = model_use.name(), "a model call failed; the rules decide");
                let failures = self.failures_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
                if failures >= MAX_FAILURES_IN_A_ROW {
                    let reason =
                        format!("unreachable: {failures} calls failed in a row, the last: {error}");
                    self.stop(reason.clone());
                    usage.fell_back.get_or_insert(reason);
                }
                None
            }
        }
    }
}
