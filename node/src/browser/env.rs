//! Headless Chromium as an [`Environment`].
//!
//! Each environment is one worker's view of the node's browser: it owns tabs (an isolated
//! context and page each), one of which is current, and keeps live tabs at the states it
//! reached (the page cache, bounded, least recently used evicted). A restore walks the cheapest
//! live tab: history back to the common ancestor (only over steps that loaded a document),
//! verified by fingerprint, then forward by replay; only when no tab can get there does it take
//! a fresh context (a spare opened in the background) and replay the prefix from the start
//! URL, checking every fingerprint. A prefix that contains a write (risk class 3 or more) is
//! never replayed unless the task declares the site resettable: the server would see the write
//! twice; a tab holding the only copy of such a state is never walked back past the write and
//! is evicted last.
//!
//! Every act and restore races a watch on the browser's process (`DEATH_WATCH`, 250 ms), so a
//! killed browser fails the step at once as `Crashed`, and `recover` lets go of the dead tabs
//! without asking the dead browser to close them. A page that offers "Log out" is logged in
//! (`StateInfo::logged_in`); a step that loses that is `session_lost`. A click that changes
//! only how the page looks (a theme the goal does not ask for) or which fields are marked
//! invalid is no progress: the tab stays at its state.
//!
//! `factory.rs` makes the worker's environments ([`ChromiumFactory`]); `writes.rs` keeps the
//! evidence of writes and claims them from the queen; the model tier's help is `assist.rs`.

mod factory;
mod writes;
use super::assist::ModelAssist;
use super::pool::BrowserPool;
use super::steps::{Heal, Performed, Predicates, perform_gated};
use super::tab::{NetworkLog, OriginGuard, Tab, Timeouts};
use crate::environment::{Candidate, EnvError, Environment, StateInfo, Step};
use crate::policy::{DefaultPolicy, Policy, Proposals, TaskContext, location_of};
use chromiumoxide::Browser;
pub use factory::ChromiumFactory;
use forager_protocol::observation::Observation;
use forager_protocol::submit::is_submit_shaped;
use forager_protocol::trajectory::Cost;
use forager_protocol::verdict::{Verdict, VerdictOutcome, pre_pass};
use forager_protocol::{Action, Fingerprint, RiskClass, TaskSpec};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use writes::posts_form;

/// The validator's second tier: asked only when the deterministic pre-pass is inconclusive
/// (a model behind an OpenAI-compatible endpoint, say). Its answer must be a verdict or
/// nothing; a tier that cannot decide returns `None` and the pre-pass verdict stands.
pub trait ModelValidator: Send + Sync {
    /// A verdict on `action`, which took the page from `before` to `after`.
    fn judge(&self, action: &Action, before: &Observation, after: &Observation) -> Option<Verdict>;
}

/// How an environment behaves.
#[derive(Clone)]
pub struct EnvOptions {
    /// Live tabs kept besides the current one.
    pub cache_capacity: usize,
    /// Time limits.
    pub timeouts: Timeouts,
    /// JavaScript added to every document before its own scripts (`--init-script`).
    pub init_script: Option<String>,
    /// Reuse live pages to restore states (walking them back and forth, or keeping them in
    /// the cache). Off: every restore opens a fresh context and replays from the start.
    pub reuse_pages: bool,
    /// The validator's model tier; none configured by default.
    pub model: Option<Arc<dyn ModelValidator>>,
    /// Where the language-model tier keeps its answers (a task with `model`); `None`: the
    /// per-user data folder's `model-cache/`.
    pub model_cache: Option<std::path::PathBuf>,
    /// Whether a task's reset command (`TaskSpec::reset_cmd`) may run on this machine: off by
    /// default for nodes (a task would run a shell command there), on for `forager explore`.
    pub allow_reset: bool,
    /// Keep the browser session of the first state where the success predicates hold
    /// ([`ChromiumEnv::take_captured`]): how `forager capsule capture` logs in once.
    pub capture_session: bool,
}

impl std::fmt::Debug for EnvOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvOptions")
            .field("cache_capacity", &self.cache_capacity)
            .field("timeouts", &self.timeouts)
            .field("reuse_pages", &self.reuse_pages)
            .field("model", &self.model.is_some())
            .field("allow_reset", &self.allow_reset)
            .field("capture_session", &self.capture_session)
            .finish()
    }
}

impl Default for EnvOptions {
    fn default() -> Self {
        EnvOptions {
            cache_capacity: 6,
            timeouts: Timeouts::default(),
            init_script: None,
            reuse_pages: true,
            model: None,
            model_cache: None,
            allow_reset: false,
            capture_session: false,
        }
    }
}

/// What an environment did, for reports and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EnvStats {
    /// Restores served by a kept live tab.
    pub cache_hits: u64,
    /// Restores that replayed from the start URL.
    pub cache_misses: u64,
    /// Actions executed while replaying.
    pub replayed_actions: u64,
    /// Actions executed for the search.
    pub acts: u64,
    /// Tabs (contexts) opened.
    pub tabs_opened: u64,
    /// Restores refused because the prefix contains a write.
    pub replays_refused: u64,
    /// Restores served by going back in the current tab's history (verified by fingerprint).
    pub back_hits: u64,
    /// History-back attempts that reached another state (then replayed).
    pub back_misses: u64,
    /// Observations the policy proposed from.
    pub pages_read: u64,
    /// Times the task's reset command ran.
    pub resets: u64,
    /// Microseconds the policy spent preparing them (embedding their texts).
    pub reading_us: u64,
}

/// A page after a write, as the step that wrote left it.
pub use crate::environment::WriteEvidence;

/// URL, title and status of a state, for the result document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageSummary {
    /// The URL.
    pub url: String,
    /// The title.
    pub title: String,
    /// The HTTP status, when known.
    pub http_status: Option<u16>,
    /// The fingerprint family (see `forager_protocol::fingerprint::family`).
    pub family: Fingerprint,
    /// The main heading, if the page has one.
    pub heading: Option<String>,
}

impl PageSummary {
    /// The summary of an observation.
    pub fn of(observation: &Observation) -> PageSummary {
        let snapshot = observation.snapshot.join("\n");
        PageSummary {
            url: observation.url.clone(),
            title: observation.title.clone(),
            http_status: observation.http_status,
            family: forager_protocol::fingerprint::family(
                &observation.url,
                &snapshot,
                &observation.forms,
            ),
            heading: forager_protocol::fingerprint::main_heading(&snapshot),
        }
    }
}

struct Live {
    tab: Tab,
    prefix: Vec<(Action, Fingerprint)>,
    /// Per step of `prefix`: whether it loaded a new document (so history back undoes it).
    documents: Vec<bool>,
    observation: Observation,
    state: StateInfo,
    proposals: Proposals,
    dirty: bool,
}

/// Headless Chromium as an environment. See the module documentation.
pub struct ChromiumEnv {
    pool: BrowserPool,
    browser: Option<(Arc<Browser>, u64)>,
    task: Arc<TaskSpec>,
    context: TaskContext,
    predicates: Predicates,
    failures: Predicates,
    guard: Arc<OriginGuard>,
    policy: Arc<dyn Policy>,
    options: EnvOptions,
    network: Arc<Mutex<NetworkLog>>,
    current: Option<Live>,
    cache: Vec<Live>,
    risks: HashMap<Action, RiskClass>,
    /// Actions the network gate caught sending more than their class allows, by what they
    /// tried to send: proposed again at that class (so above the ceiling, an approval).
    rerated: HashMap<u64, RiskClass>,
    pages: HashMap<Fingerprint, PageSummary>,
    verdicts: HashMap<(Fingerprint, Fingerprint), Verdict>,
    heals: HashMap<(Fingerprint, Fingerprint), Heal>,
    /// Why each action executed here was chosen, by the action's key and the state it
    /// reached: its rank among its page's candidates and its top signals.
    whys: HashMap<(u64, Fingerprint), forager_protocol::result::StepWhy>,
    /// Pages past a write, as the step left them (oldest first, at most
    /// [`MAX_EVIDENCE`]): what a verification that does not repeat the write attests.
    evidence: std::collections::VecDeque<(Fingerprint, WriteEvidence)>,
    stats: EnvStats,
    root: Option<Fingerprint>,
    /// Where the task's writes are claimed before they run (a branch searched for a queen).
    claims: Option<crate::claims::WriteClaims>,
    /// A tab being opened in the background, so that a restore need not wait for one.
    spare: Option<tokio::task::JoinHandle<Result<Tab, EnvError>>>,
    /// The session at the first success, with [`EnvOptions::capture_session`].
    captured: Option<forager_protocol::capsule::SessionState>,
    /// The model tier's help, when the task asks a model.
    assist: Option<ModelAssist>,
}

/// What opening a tab for a task takes (owned, so a spare can open in the background).
#[derive(Clone)]
struct TabOpening {
    browser: Arc<Browser>,
    guard: Arc<OriginGuard>,
    network: Arc<Mutex<NetworkLog>>,
    task: Arc<TaskSpec>,
    init: Option<String>,
    timeouts: Timeouts,
}

impl TabOpening {
    /// A tab with forager's guards and scripts, logged in by the task's capsule session (if
    /// any) before its first request.
    async fn open(self) -> Result<Tab, EnvError> {
        let tab = Tab::open(
            self.browser,
            self.guard,
            self.network,
            self.task.seed,
            self.init.as_deref(),
            self.timeouts,
        )
        .await?;
        if let Some(session) = &self.task.session {
            tab.mount(session).await?;
        }
        Ok(tab)
    }
}

/// How many history entries a restore may go back before replaying instead.
const MAX_BACK_STEPS: usize = 3;

impl ChromiumEnv {
    /// An environment for a (validated) task on the pool's browser, with the default policy.
    pub fn new(
        pool: BrowserPool,
        task: Arc<TaskSpec>,
        options: EnvOptions,
    ) -> Result<ChromiumEnv, EnvError> {
        ChromiumEnv::with_policy(pool, task, options, Arc::new(DefaultPolicy::default()))
    }

    /// The same with another policy.
    pub fn with_policy(
        pool: BrowserPool,
        task: Arc<TaskSpec>,
        options: EnvOptions,
        policy: Arc<dyn Policy>,
    ) -> Result<ChromiumEnv, EnvError> {
        let origins: Vec<&str> = std::iter::once(task.start_url.as_str())
            .chain(task.allowed_origins.iter().map(String::as_str))
            .collect();
        let guard = Arc::new(OriginGuard::new(origins.iter().copied()));
        let allowed_origins = origins
            .iter()
            .filter_map(|u| url::Url::parse(u).ok())
            .map(|u| u.origin().ascii_serialization())
            .collect();
        let context = TaskContext {
            area: crate::policy::Area::of(&task.start_url),
            goal: task.goal.clone(),
            inputs: task
                .inputs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            allowed_origins,
        };
        let cache = options
            .model_cache
            .clone()
            .or_else(crate::llm::default_cache_dir);
        let assist = crate::llm::ModelTier::for_task(&task, cache)
            .map_err(|e| EnvError::Other(format!("the model tier: {e}")))?
            .map(|tier| {
                ModelAssist::new(tier, task.goal.clone(), &task.start_url, task.risk_ceiling)
            });
        Ok(ChromiumEnv {
            predicates: Predicates::of(&task)?,
            failures: Predicates::failures_of(&task)?,
            pool,
            browser: None,
            task,
            context,
            guard,
            policy,
            options,
            network: Arc::new(Mutex::new(NetworkLog::default())),
            current: None,
            cache: Vec::new(),
            risks: HashMap::new(),
            rerated: HashMap::new(),
            pages: HashMap::new(),
            verdicts: HashMap::new(),
            heals: HashMap::new(),
            whys: HashMap::new(),
            evidence: std::collections::VecDeque::new(),
            stats: EnvStats::default(),
            root: None,
            spare: None,
            claims: None,
            captured: None,
            assist,
        })
    }

    /// The session captured at the first success ([`EnvOptions::capture_session`]), once.
    pub fn take_captured(&mut self) -> Option<forager_protocol::capsule::SessionState> {
        self.captured.take()
    }

    /// What the model tier was asked and spent here since the last call (empty without a
    /// model).
    pub fn take_model_usage(&self) -> forager_protocol::llm::ModelUsage {
        self.assist
            .as_ref()
            .map(ModelAssist::take_usage)
            .unwrap_or_default()
    }

    /// The current page's answer in the task's answer schema (`None` without one, or when the
    /// model gives nothing meaningful).
    pub async fn extract_answer(&mut self) -> Option<String> {
        let observation = self.current.as_ref()?.observation.clone();
        self.assist.as_mut()?.extract(&observation).await
    }

    fn take_model_tokens(&mut self) -> u64 {
        self.assist.as_mut().map_or(0, ModelAssist::take_tokens)
    }

    /// Counters.
    pub fn stats(&self) -> EnvStats {
        self.stats
    }

    /// What the network saw (requests let through, blocked).
    pub fn network(&self) -> NetworkLog {
        self.network.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// What the browser's network saw since the last time this was taken: each report
    /// carries its own part, which the queen adds up (a kept branch's environment reports
    /// many times).
    pub fn take_network(&self) -> NetworkLog {
        self.network
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default()
    }

    /// URL and title of a state this environment saw.
    pub fn page(&self, fingerprint: &Fingerprint) -> Option<&PageSummary> {
        self.pages.get(fingerprint)
    }

    /// The validator's verdict on the submit-shaped step from `before` to `after`.
    pub fn verdict(&self, before: &Fingerprint, after: &Fingerprint) -> Option<&Verdict> {
        self.verdicts.get(&(*before, *after))
    }

    /// Which locator of the chain resolved the step from `before` to `after`, when it was not
    /// the first (a healed step).
    pub fn healed(&self, before: &Fingerprint, after: &Fingerprint) -> Option<&Heal> {
        self.heals.get(&(*before, *after))
    }

    /// Why the action with this key, executed here, that reached `after` was chosen.
    pub fn why(&self, key: u64, after: &Fingerprint) -> Option<&forager_protocol::result::StepWhy> {
        self.whys.get(&(key, *after))
    }

    /// Notes why `action`, taken on a page with these proposals, was chosen: its rank among
    /// the candidates the search could take there (not refused, not above the ceiling) and
    /// its top signals.
    fn note_why(&mut self, proposals: &Proposals, action: &Action, after: Fingerprint) {
        let ceiling = self.task.risk_ceiling;
        let takeable: Vec<&Candidate<Action>> = proposals
            .candidates
            .iter()
            .filter(|c| c.refused.is_none() && c.risk <= ceiling)
            .collect();
        let Some(chosen) = takeable.iter().find(|c| c.action == *action) else {
            return;
        };
        let rank = 1 + takeable.iter().filter(|c| c.prior > chosen.prior).count();
        let why = forager_protocol::result::StepWhy {
            rank: rank as u32,
            candidates: takeable.len() as u32,
            prior: chosen.prior,
            signals: chosen
                .why
                .top(forager_protocol::result::MAX_WHY_SIGNALS)
                .into_iter()
                .map(|(signal, lift)| forager_protocol::result::SignalLift {
                    signal: signal.to_owned(),
                    lift,
                })
                .collect(),
        };
        tracing::debug!(
            action = %action,
            rank,
            of = takeable.len(),
            prior = chosen.prior,
            why = ?chosen.why.top(forager_protocol::result::MAX_WHY_SIGNALS),
            "chosen"
        );
        self.whys.insert(
            (crate::embed::action_key(&action.label()), after),
            why.bounded(),
        );
    }

    /// The current observation.
    pub fn observation(&self) -> Option<&Observation> {
        self.current.as_ref().map(|l| &l.observation)
    }

    /// A JPEG screenshot of the current page.
    pub async fn screenshot(&self) -> Result<Vec<u8>, EnvError> {
        match &self.current {
            Some(live) => live.tab.screenshot().await,
            None => Err(EnvError::Other("no page".into())),
        }
    }

    /// Closes every tab.
    pub async fn close(&mut self) {
        if let Some(spare) = self.spare.take() {
            spare.abort();
            if let Ok(Ok(mut tab)) = spare.await {
                tab.close().await;
            }
        }
        if let Some(mut live) = self.current.take() {
            live.tab.close().await;
        }
        for mut live in self.cache.drain(..) {
            live.tab.close().await;
        }
    }

    async fn browser(&mut self) -> Result<Arc<Browser>, EnvError> {
        if let Some((browser, _)) = &self.browser {
            return Ok(browser.clone());
        }
        let (browser, generation) = self
            .pool
            .browser()
            .await
            .map_err(|e| EnvError::Crashed(e.to_string()))?;
        self.browser = Some((browser.clone(), generation));
        Ok(browser)
    }

    /// A fresh tab: the spare one opened in the background if it is ready, else a new one;
    /// either way the next spare starts opening.
    async fn open_tab(&mut self) -> Result<Tab, EnvError> {
        let browser = self.browser().await?;
        let spare = match self.spare.take() {
            Some(handle) => match handle.await {
                Ok(Ok(tab)) if !tab.crashed() => Some(tab),
                _ => None,
            },
            None => None,
        };
        let opening = TabOpening {
            browser,
            guard: self.guard.clone(),
            network: self.network.clone(),
            task: self.task.clone(),
            init: self.options.init_script.clone(),
            timeouts: self.options.timeouts,
        };
        let tab = match spare {
            Some(tab) => tab,
            None => {
                self.stats.tabs_opened += 1;
                opening.clone().open().await?
            }
        };
        self.stats.tabs_opened += 1;
        self.spare = Some(tokio::spawn(opening.open()));
        Ok(tab)
    }

    /// Moves a live tab along the tree to `prefix`: back to the common ancestor (history
    /// back, verified by fingerprint), then forward by replaying the missing actions (each
    /// verified). On failure the tab is marked dirty and the error returned.
    async fn walk(
        &mut self,
        live: &mut Live,
        prefix: &[(Action, Fingerprint)],
        common: usize,
    ) -> Result<(), EnvError> {
        let back = live.prefix.len() - common;
        if back > 0 {
            let expected = match common {
                0 => self.root,
                n => Some(prefix[n - 1].1),
            };
            for _ in 0..back {
                live.tab.back().await?;
                live.tab.settle().await?;
            }
            let (observation, state, proposals) = self.look(&live.tab).await?;
            if Some(observation.fingerprint) != expected {
                self.stats.back_misses += 1;
                let expected = expected.unwrap_or(Fingerprint([0; 16]));
                let found = observation.fingerprint;
                return Err(match common.checked_sub(1) {
                    Some(step) => EnvError::Diverged {
                        step,
                        expected,
                        found,
                    },
                    // Back at the first page, and it is not the one the search started on.
                    None => EnvError::RootDiverged { expected, found },
                });
            }
            self.stats.back_hits += 1;
            live.prefix.truncate(common);
            live.documents.truncate(common);
            live.observation = observation;
            live.state = state;
            live.proposals = proposals;
        }
        for (i, (action, expected)) in prefix.iter().enumerate().skip(common) {
            self.stats.replayed_actions += 1;
            let page = live.observation.url.clone();
            let performed = self.execute(&live.tab, &page, action).await?;
            let (observation, state, proposals) = self.look(&live.tab).await?;
            if observation.fingerprint != *expected {
                return Err(EnvError::Diverged {
                    step: i,
                    expected: *expected,
                    found: observation.fingerprint,
                });
            }
            self.note_why(&live.proposals, action, observation.fingerprint);
            live.prefix.push((action.clone(), observation.fingerprint));
            live.documents.push(performed.new_document);
            live.observation = observation;
            live.state = state;
            live.proposals = proposals;
        }
        Ok(())
    }

    /// The generation of the browser this environment uses (0 before it has one).
    fn generation(&self) -> u64 {
        self.browser.as_ref().map_or(0, |(_, g)| *g)
    }

    /// A failed operation on a dead browser is a crash, whatever the error said.
    async fn crash_aware(&mut self, error: EnvError) -> EnvError {
        if matches!(error, EnvError::Crashed(_)) {
            return error;
        }
        let generation = self.generation();
        if generation > 0 && !self.pool.alive(generation).await {
            return EnvError::Crashed(format!("the browser died ({error})"));
        }
        error
    }

    fn risk_of(&self, action: &Action) -> RiskClass {
        // Not proposed here (a prefix from another node): classify from the action alone.
        self.risks
            .get(action)
            .copied()
            .unwrap_or_else(|| forager_protocol::risk::classify_action(action))
    }

    /// Carries out one action on a tab.
    async fn execute(&self, tab: &Tab, page: &str, action: &Action) -> Result<Performed, EnvError> {
        perform_gated(
            tab,
            action,
            self.risk_of(action),
            page,
            &self.task.inputs,
            &self.guard,
        )
        .await
    }

    /// Looks at a tab: observation, success predicates, proposals, state.
    async fn look(&mut self, tab: &Tab) -> Result<(Observation, StateInfo, Proposals), EnvError> {
        let observation = tab.observation().await?;
        // The policy's heavy part (embedding the page's texts) runs on a blocking thread
        // while the browser answers the predicates.
        let prepared = {
            let (policy, observation, context) = (
                Arc::clone(&self.policy),
                observation.clone(),
                self.context.clone(),
            );
            tokio::task::spawn_blocking(move || {
                let started = Instant::now();
                policy.prepare(&observation, &context);
                started.elapsed()
            })
        };
        let mut success = self.predicates.hold(tab, &observation).await?;
        if let Some(assist) = &mut self.assist {
            if self.root.is_none() {
                // An environment's first look is at the start page (`start`).
                assist.saw_start(&observation);
            }
            if self.task.success.is_empty() {
                // No predicate: the model's verdict is the task's success.
                success = assist.verdict(&observation).await;
            }
        }
        if success && self.options.capture_session && self.captured.is_none() {
            // A login task: the session is taken where the predicates say "logged in".
            self.captured = Some(tab.capture_session().await?);
        }
        let dead_end = !success && self.failures.any_holds(tab, &observation).await?;
        match prepared.await {
            Ok(took) => {
                self.stats.pages_read += 1;
                self.stats.reading_us += took.as_micros() as u64;
            }
            Err(error) => {
                tracing::warn!(%error, "preparing the proposals failed; proposing without")
            }
        }
        let proposals = self.propose(&observation, success).await;
        let state = self.state_of(&observation, success, dead_end, proposals.value_hint);
        Ok((observation, state, proposals))
    }

    /// The policy's proposals for a page, with what the environment knows on top: classes
    /// raised by what an action was seen to send, the session's own end refused unless the
    /// goal asks for it, the model tier's ranking where the rules are unsure (not on a page
    /// that is the goal).
    async fn propose(&mut self, observation: &Observation, success: bool) -> Proposals {
        let mut proposals = self.policy.propose(observation, &self.context);
        let goal_ends_session = crate::policy::goal_ends_session(&self.task.goal);
        for candidate in &mut proposals.candidates {
            if let Some(&class) = self.rerated.get(&candidate.key) {
                candidate.risk = candidate.risk.max(class);
            }
            // Nothing may end the session the search stands on unless the goal asks.
            let ends = candidate.action.target().is_some_and(|t| {
                let url = match &t.sends {
                    forager_protocol::Sends::Get { url }
                    | forager_protocol::Sends::Post { url } => Some(url.as_str()),
                    forager_protocol::Sends::Unknown => None,
                };
                crate::policy::would_end_session(&t.name, url)
            });
            if ends && !goal_ends_session {
                candidate.refused = Some(forager_protocol::PruneReason::EndsSession);
            }
        }
        if let Some(assist) = &mut self.assist
            && !success
        {
            // The router: the rules' order where it is clear, the model's where it is flat.
            // (A page that is the goal needs no next step.)
            assist.rank(observation, &mut proposals).await;
        }
        if tracing::enabled!(tracing::Level::TRACE) {
            let mut ranked: Vec<_> = proposals.candidates.iter().collect();
            ranked.sort_by(|a, b| b.prior.total_cmp(&a.prior));
            let top: Vec<String> = ranked
                .iter()
                .take(12)
                .map(|c| {
                    let why: Vec<String> = c
                        .why
                        .top(3)
                        .iter()
                        .map(|(s, l)| format!("{s} {l:+.2}"))
                        .collect();
                    format!("{:.3} {} [{}]", c.prior, c.action.label(), why.join(", "))
                })
                .collect();
            tracing::trace!(
                url = %observation.url,
                fingerprint = %observation.fingerprint,
                value_hint = proposals.value_hint,
                candidates = proposals.candidates.len(),
                ?top,
                "proposed"
            );
        }
        for candidate in &proposals.candidates {
            let risk = self
                .risks
                .entry(candidate.action.clone())
                .or_insert(candidate.risk);
            *risk = (*risk).max(candidate.risk);
        }
        proposals
    }

    /// What the search needs to know of a page: its state, with what the page says of the
    /// session (a login asked, a logout offered, a capsule's session expired).
    fn state_of(
        &mut self,
        observation: &Observation,
        success: bool,
        dead_end: bool,
        value_hint: f64,
    ) -> StateInfo {
        let password = observation
            .elements
            .iter()
            .any(|e| e.input_type == "password");
        let auth = if matches!(observation.http_status, Some(401 | 403)) || password {
            1.0
        } else if observation
            .forms
            .iter()
            .any(|f| f.to_lowercase().contains("login") || f.to_lowercase().contains("logout"))
        {
            0.5
        } else {
            0.0
        };
        let offers_logout = observation
            .elements
            .iter()
            .any(|e| crate::policy::ends_session(&e.name));
        // A login form where a mounted capsule should have logged us in: it no longer does.
        // (A page that still offers to log out is logged in: a password change form.)
        let session_expired = !success
            && password
            && !offers_logout
            && self.task.session.is_some()
            && self.task.capsule.as_ref().is_some_and(|capsule| {
                forager_protocol::capsule::origin_of(&observation.url)
                    .is_some_and(|origin| capsule.origins.contains(&origin))
            });
        let transient = observation.http_status.is_some_and(|s| s >= 500)
            || observation.url.starts_with("chrome-error://");
        let state = StateInfo {
            fingerprint: observation.fingerprint,
            success,
            dead_end,
            hidden_change: false,
            rolled: false,
            wordless: wordless(observation),
            value_hint,
            auth,
            location: location_of(&observation.url),
            page_family: 0,
            logged_in: offers_logout,
            session_lost: false,
            session_expired,
            transient,
        };
        let summary = self
            .pages
            .entry(observation.fingerprint)
            .or_insert_with(|| PageSummary::of(observation));
        StateInfo {
            page_family: crate::memory::page_family_key(&summary.family),
            ..state
        }
    }

    /// Keeps a live tab in the cache (most recent last), closing the oldest beyond capacity.
    async fn park(&mut self, live: Live) {
        let mut live = live;
        if live.dirty || self.options.cache_capacity == 0 || !self.options.reuse_pages {
            live.tab.close().await;
            return;
        }
        self.cache.retain(|l| l.prefix != live.prefix);
        self.cache.push(live);
        while self.cache.len() > self.options.cache_capacity {
            // Evict the oldest tab that replay can recreate; the only copies of states past a
            // write go last.
            let victim = self
                .cache
                .iter()
                .position(|l| !self.writes(&l.prefix))
                .unwrap_or(0);
            let mut evicted = self.cache.remove(victim);
            evicted.tab.close().await;
        }
    }

    async fn start(&mut self) -> Result<Live, EnvError> {
        let tab = self.open_tab().await?;
        let started = async {
            tab.navigate(&self.task.start_url).await?;
            tab.settle().await?;
            Ok::<(), EnvError>(())
        }
        .await;
        let mut tab = tab;
        if let Err(e) = started {
            tab.close().await;
            return Err(e);
        }
        match self.look(&tab).await {
            Ok((observation, state, proposals)) => {
                self.root.get_or_insert(observation.fingerprint);
                Ok(Live {
                    tab,
                    prefix: Vec::new(),
                    documents: Vec::new(),
                    observation,
                    state,
                    proposals,
                    dirty: false,
                })
            }
            Err(e) => {
                tab.close().await;
                Err(e)
            }
        }
    }
}

/// The "no current tab" case of a route that was computed from the current tab.
fn unreachable_live() -> Result<Live, EnvError> {
    Err(EnvError::Other("no current page to walk".into()))
}

/// What a step cost: the browser's time since `started`, and the model tokens it spent.
fn cost_since(started: Instant, tokens: u64) -> Cost {
    Cost {
        browser_ms: started.elapsed().as_millis() as u64,
        tokens,
    }
}

impl ChromiumEnv {
    async fn act_inner(&mut self, action: &Action) -> Result<Step, EnvError> {
        let started = Instant::now();
        let Some(mut live) = self.current.take() else {
            return Err(EnvError::Other("no current page: restore first".into()));
        };
        if let Err(error) = self.claim_write(&live.observation.url, action).await {
            // Nothing was done: the page stays as it was.
            self.current = Some(live);
            return Err(error);
        }
        self.stats.acts += 1;
        let effects_before = live.tab.input_effects().await.unwrap_or_default();
        let result = self.execute(&live.tab, &live.observation.url, action).await;
        let performed = match result {
            Ok(performed) => performed,
            Err(error) => {
                if let EnvError::RiskUnderestimated { class, .. } = &error {
                    let key = crate::embed::action_key(&action.label());
                    let class = (*class).max(self.rerated.get(&key).copied().unwrap_or(*class));
                    self.rerated.insert(key, class);
                    self.risks.insert(action.clone(), class);
                }
                // The page may be half-way through the action: never reuse it.
                live.dirty = true;
                self.current = Some(live);
                return Err(error);
            }
        };
        let looked = self.look(&live.tab).await;
        let (observation, mut state, proposals) = match looked {
            Ok(look) => look,
            Err(error) => {
                live.dirty = true;
                self.current = Some(live);
                return Err(error);
            }
        };
        let before = live.observation.fingerprint;
        if let Some(assist) = &mut self.assist {
            assist.acted(observation.fingerprint);
        }
        self.note_why(&live.proposals, action, observation.fingerprint);
        if is_submit_shaped(
            action.shape(),
            action.target().map_or("", |t| t.name.as_str()),
        ) {
            let mut verdict = pre_pass(&live.observation, &observation, &self.predicates.texts);
            if verdict.outcome == VerdictOutcome::Inconclusive
                && let Some(model) = &self.options.model
                && let Some(judged) = model.judge(action, &live.observation, &observation)
            {
                verdict = judged;
            }
            if verdict.outcome == VerdictOutcome::Inconclusive
                && let Some(assist) = &mut self.assist
                && let Some(judged) = assist
                    .submission(&action.label(), &live.observation, &observation)
                    .await
            {
                verdict = judged;
            }
            tracing::debug!(action = %action, ?verdict.outcome, ?verdict.tier, "validator");
            self.verdicts
                .insert((before, observation.fingerprint), verdict);
        }
        if let Some(heal) = performed.heal {
            self.heals.insert((before, observation.fingerprint), heal);
        }
        let same = observation.fingerprint == before && !performed.new_document;
        if !same
            && !performed.new_document
            && self.only_presentation(&live.observation, &observation, action)
        {
            // The page changed only how it looks (a theme) or which fields it marks invalid
            // after an empty submission: no progress. The tab stays at its state.
            live.observation = observation;
            live.proposals = proposals;
            let state = live.state;
            self.current = Some(live);
            return Ok(Step {
                state,
                cost: cost_since(started, self.take_model_tokens()),
                executed: 1,
            });
        }
        // Logged out (by its control, or landed on a login form), unless the goal asks for it.
        let login_form = observation
            .elements
            .iter()
            .any(|e| e.input_type == "password");
        let by_logout = action
            .target()
            .is_some_and(|t| crate::policy::ends_session(&t.name));
        state.session_lost = live.state.logged_in
            && !state.logged_in
            && (by_logout || login_form)
            && !crate::policy::goal_ends_session(&self.task.goal);
        if !same && self.past_write(&live.prefix, action) {
            self.witness_write(&live.tab, &observation).await;
        }
        if same {
            // Nothing the fingerprint sees changed. If no handler of the page ran either, the
            // page is where it was (a click on a text field, on plain text): the tab stays at
            // its state, so that state can still be restored from it. If one ran, the change
            // is in the page's script (a button that must be pressed first): a hidden change.
            // Typing a value a field already holds is never a hidden change, whatever the
            // page's input handlers did (an autocomplete redraws the same suggestions); nor is
            // moving a slider to where it stood (its keys ran handlers on the way there and
            // back; where it stands is in the fingerprint).
            let typed_only = matches!(
                action,
                Action::Fill { enter: false, .. } | Action::Select { .. } | Action::Slide { .. }
            );
            let effects_after = live.tab.input_effects().await.unwrap_or(effects_before);
            if effects_after.handled == effects_before.handled || typed_only {
                live.observation = observation;
                live.proposals = proposals;
                self.current = Some(live);
                return Ok(Step {
                    state,
                    cost: cost_since(started, self.take_model_tokens()),
                    executed: 1,
                });
            }
            state.hidden_change = true;
            state.rolled = effects_after.drawn > effects_before.drawn;
        }
        live.prefix.push((action.clone(), observation.fingerprint));
        live.documents.push(performed.new_document);
        live.observation = observation;
        live.state = state;
        live.proposals = proposals;
        self.current = Some(live);
        Ok(Step {
            state,
            cost: cost_since(started, self.take_model_tokens()),
            executed: 1,
        })
    }

    async fn restore_inner(&mut self, prefix: &[(Action, Fingerprint)]) -> Result<Step, EnvError> {
        let started = Instant::now();
        if !self.options.reuse_pages {
            return self.restore_fresh(prefix, started).await;
        }
        if let Some(live) = &self.current
            && !live.dirty
            && live.prefix == prefix
        {
            return Ok(Step {
                state: live.state,
                cost: Cost::default(),
                executed: 0,
            });
        }
        // The cheapest live tab to walk there: back to the common ancestor, forward the rest.
        let common = |live: &Live| {
            live.prefix
                .iter()
                .zip(prefix)
                .take_while(|(a, b)| a == b)
                .count()
        };
        // A tab whose state lies past a write is the only copy of that state (replay would
        // repeat the write): never walk it back, not even over the steps after the write. And
        // history back undoes only steps that loaded a document: a click that changed the page
        // in place (a tab, a menu, generated content) is not a history entry, so a tab past
        // one can only go forward.
        let route = |live: &Live| -> Option<(usize, usize)> {
            let c = common(live);
            let back = live.prefix.len() - c;
            let precious = back > 0 && self.writes(&live.prefix);
            // Nor does it undo a posted form: the cookies a login set stay, and the page
            // walked back to would ask to log in no more.
            let undoable = live.documents[c..].iter().all(|&document| document)
                && !live.prefix[c..]
                    .iter()
                    .any(|(action, _)| posts_form(action));
            (!live.dirty && !precious && undoable && back <= MAX_BACK_STEPS)
                .then_some((back + (prefix.len() - c), c))
        };
        let mut best: Option<(Option<usize>, usize, usize)> = None; // (cache index, cost, common)
        if let Some((cost, c)) = self.current.as_ref().and_then(route) {
            best = Some((None, cost, c));
        }
        for (i, live) in self.cache.iter().enumerate() {
            if let Some((cost, c)) = route(live)
                && best.is_none_or(|(_, b, _)| cost < b)
            {
                best = Some((Some(i), cost, c));
            }
        }
        // A fresh tab costs about two actions more than walking a live one.
        if let Some((index, _cost, c)) = best.filter(|(_, cost, _)| *cost < prefix.len() + 2)
            && self.check_replay(&prefix[c..]).is_ok()
        {
            let mut live = match index {
                Some(i) => {
                    let live = self.cache.remove(i);
                    if let Some(previous) = self.current.take() {
                        self.park(previous).await;
                    }
                    live
                }
                None => match self.current.take() {
                    Some(live) => live,
                    None => unreachable_live()?,
                },
            };
            let executed = (prefix.len() - c) as u32;
            match self.walk(&mut live, prefix, c).await {
                Ok(()) => {
                    let state = live.state;
                    self.current = Some(live);
                    self.stats.cache_hits += 1;
                    return Ok(Step {
                        state,
                        cost: cost_since(started, self.take_model_tokens()),
                        executed,
                    });
                }
                Err(EnvError::Crashed(reason)) => {
                    live.tab.close().await;
                    return Err(EnvError::Crashed(reason));
                }
                Err(error) => {
                    tracing::debug!(%error, "walking a live tab failed; replaying from the start");
                    live.tab.close().await;
                }
            }
        }
        self.restore_fresh(prefix, started).await
    }

    /// Restores by opening a fresh context and replaying the whole prefix.
    async fn restore_fresh(
        &mut self,
        prefix: &[(Action, Fingerprint)],
        started: Instant,
    ) -> Result<Step, EnvError> {
        self.stats.cache_misses += 1;
        self.check_replay(prefix)?;
        if self.task.reset_cmd.is_some()
            && prefix
                .iter()
                .any(|(a, _)| self.risk_of(a) >= RiskClass::DraftWrite)
        {
            self.reset_site().await?;
        }
        if let Some(previous) = self.current.take() {
            self.park(previous).await;
        }
        let mut live = self.start().await?;
        if let Err(error) = self.walk(&mut live, prefix, 0).await {
            live.tab.close().await;
            return Err(error);
        }
        let state = live.state;
        self.current = Some(live);
        Ok(Step {
            state,
            cost: cost_since(started, self.take_model_tokens()),
            executed: prefix.len() as u32,
        })
    }
}

impl Environment for ChromiumEnv {
    type Action = Action;

    async fn observe(&mut self) -> Result<StateInfo, EnvError> {
        match &self.current {
            Some(live) if !live.dirty => Ok(live.state),
            _ => Err(EnvError::Other("no current page: restore first".into())),
        }
    }

    async fn candidates(&mut self) -> Result<Vec<Candidate<Action>>, EnvError> {
        match &self.current {
            Some(live) if !live.dirty => Ok(live.proposals.candidates.clone()),
            _ => Err(EnvError::Other("no current page: restore first".into())),
        }
    }

    async fn act(&mut self, action: &Action) -> Result<Step, EnvError> {
        let death = browser_death(self.pool.clone(), self.generation());
        let result = tokio::select! {
            result = self.act_inner(action) => result,
            died = death => Err(died),
        };
        match result {
            Ok(step) => Ok(step),
            Err(error) => Err(self.crash_aware(error).await),
        }
    }

    async fn restore(&mut self, prefix: &[(Action, Fingerprint)]) -> Result<Step, EnvError> {
        let death = browser_death(self.pool.clone(), self.generation());
        let result = tokio::select! {
            result = self.restore_inner(prefix) => result,
            died = death => Err(died),
        };
        match result {
            Ok(step) => Ok(step),
            Err(error) => Err(self.crash_aware(error).await),
        }
    }

    async fn recover(&mut self) -> Result<(), EnvError> {
        // The tabs belong to a dead browser or renderer: forget them.
        if let Some(spare) = self.spare.take() {
            spare.abort();
        }
        // Their browser is gone (or its renderer is): nothing to close, only to let go of.
        if let Some(mut live) = self.current.take() {
            live.tab.abandon();
        }
        for mut live in self.cache.drain(..) {
            live.tab.abandon();
        }
        let seen = self.browser.take().map_or(0, |(_, g)| g);
        let (browser, generation) = self
            .pool
            .restart(seen)
            .await
            .map_err(|e| EnvError::Crashed(e.to_string()))?;
        self.browser = Some((browser, generation));
        Ok(())
    }

    fn describe(&self, action: &Action) -> String {
        action.label()
    }
}

/// How often a step in flight checks that its browser still lives.
const DEATH_WATCH: std::time::Duration = std::time::Duration::from_millis(250);

/// Resolves when the browser of `generation` has died (never for generation 0, none yet): a
/// step raced against it fails at once instead of waiting out its calls' timeouts (20 s per
/// step measured on a killed browser before).
async fn browser_death(pool: BrowserPool, generation: u64) -> EnvError {
    if generation == 0 {
        return std::future::pending().await;
    }
    loop {
        tokio::time::sleep(DEATH_WATCH).await;
        if !pool.alive(generation).await {
            return EnvError::Crashed("the browser died during the step".into());
        }
    }
}

/// Controls without words needed before a page counts as wordless: fewer are icons beside text.
const WORDLESS_MIN_CONTROLS: usize = 4;

/// Whether most of the page's controls (two in three, at least [`WORDLESS_MIN_CONTROLS`]) show
/// no text of their own and are no fields, checkboxes or options, whose words are their labels:
/// a board's squares, told apart by place alone (`StateInfo::wordless`).
fn wordless(observation: &Observation) -> bool {
    let labelled = |role: &str| {
        matches!(
            role,
            "textbox"
                | "searchbox"
                | "combobox"
                | "listbox"
                | "spinbutton"
                | "slider"
                | "checkbox"
                | "radio"
                | "option"
                | "switch"
                | "menuitemcheckbox"
                | "menuitemradio"
        )
    };
    let controls: Vec<_> = observation
        .elements
        .iter()
        .filter(|e| !labelled(&e.role) && !e.disabled)
        .collect();
    let silent = controls.iter().filter(|e| e.text.trim().is_empty()).count();
    silent >= WORDLESS_MIN_CONTROLS && silent * 3 >= controls.len() * 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::action::{FieldValue, Sends};
    use forager_protocol::{FillValue, Target};

    fn target(sends: Sends) -> Target {
        Target {
            locators: vec![],
            role: "button".into(),
            name: "Login".into(),
            sends,
        }
    }

    #[test]
    fn a_board_of_squares_without_words_is_wordless_and_a_search_page_is_not() {
        let page = |elements| crate::testing::page("http://127.0.0.1:1/", elements);
        // Nine squares named from their ids, no text: a board.
        let square = |i: usize| {
            let mut square = crate::testing::control("clickable", &format!("ttt {i}"), "");
            square.text.clear();
            square
        };
        assert!(wordless(&page((0..9).map(square).collect())));
        // A search form and its results: words on every control but the box.
        let mut results = vec![crate::testing::control("textbox", "", "")];
        results.extend(
            ["Search", "Leonie", "Michel", "2", "3", ">"]
                .map(|name| crate::testing::control("link", name, "")),
        );
        assert!(!wordless(&page(results)));
        // Checkboxes show no text of their own; their words are their labels.
        let checkbox = |_| {
            let mut checkbox = crate::testing::control("checkbox", "", "");
            checkbox.nearby_text = "Option".into();
            checkbox
        };
        assert!(!wordless(&page((0..9).map(checkbox).collect())));
        // Three icons are too few to call a page wordless.
        assert!(!wordless(&page((0..3).map(square).collect())));
    }

    #[test]
    fn a_posted_form_is_not_walked_back_over_and_a_get_one_is() {
        let post = Sends::Post {
            url: "http://127.0.0.1:1/login".into(),
        };
        let get = Sends::Get {
            url: "http://127.0.0.1:1/search".into(),
        };
        let fill = |sends: Sends| Action::FillForm {
            fields: vec![FieldValue {
                target: target(sends.clone()),
                value: FillValue::Input("password".into()),
                select: false,
            }],
            submit: Some(target(sends)),
        };
        assert!(posts_form(&fill(post.clone())));
        assert!(!posts_form(&fill(get)));
        assert!(posts_form(&Action::Click {
            target: target(post.clone())
        }));
        // Typing into a field of a posted form sends nothing until Enter.
        let typed = |enter| Action::Fill {
            target: target(post.clone()),
            value: FillValue::Literal("alice".into()),
            enter,
        };
        assert!(!posts_form(&typed(false)));
        assert!(posts_form(&typed(true)));
    }
}
