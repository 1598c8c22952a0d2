//! A compiled workflow run without search (`forager replay`): open the start URL in a fresh
//! context with the workflow's seed, carry out each step (targets resolved along their locator
//! chains; a fallback locator that found one is recorded as the step's heal), check the step's
//! post-condition (URL path, text, fingerprint family), and after the last step the success
//! predicates. The first step that cannot be carried out or leaves another page ends the run,
//! with a screenshot of where it stopped.

use super::pool::BrowserPool;
use super::steps::{Heal, Predicates, perform_gated};
use super::tab::{NetworkLog, OriginGuard, Tab, Timeouts};
use crate::environment::EnvError;
use forager_protocol::observation::Observation;
use forager_protocol::submit::is_submit_shaped;
use forager_protocol::verdict::{Verdict, pre_pass};
use forager_protocol::workflow::{PostCondition, Workflow};
use forager_protocol::{FailureReason, Fingerprint};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How a workflow is replayed.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Time limits of the browser's operations.
    pub timeouts: Timeouts,
    /// JavaScript added to every document before its own scripts.
    pub init_script: Option<String>,
    /// Take a screenshot after every step (one is always taken where a step fails).
    pub screenshots: bool,
    /// A capsule's session (restricted to its origins), mounted before the first request.
    pub session: Option<forager_protocol::capsule::SessionState>,
}

/// What one step did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedStep {
    /// 1-based position.
    pub index: u32,
    /// URL reached.
    pub url: String,
    /// Title reached.
    pub title: String,
    /// Fingerprint of the state reached.
    pub fingerprint: Fingerprint,
    /// The fallback locator that found a target, if one did.
    pub heal: Option<Heal>,
    /// The validator's verdict, for submit-shaped steps.
    pub verdict: Option<Verdict>,
    /// Browser milliseconds the step took (action, settling, observation, checks).
    pub cost_ms: u64,
    /// A JPEG of the page after the step, when asked for.
    pub screenshot: Option<Vec<u8>>,
}

/// Why a replay failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayFailure {
    /// Chromium could not be started, or died.
    Browser(String),
    /// The start URL did not load.
    Start(EnvError),
    /// A step could not be carried out.
    Action {
        /// The step (1-based).
        step: u32,
        /// What went wrong.
        error: EnvError,
    },
    /// A step left another page than its post-condition expects.
    PostCondition {
        /// The step (1-based).
        step: u32,
        /// Which check: `url_path`, `family` or `text`.
        check: &'static str,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// Every step ran, but the success predicates do not hold after the last.
    NotReached,
}

impl ReplayFailure {
    /// The result document's named reason.
    pub fn reason(&self) -> FailureReason {
        match self {
            ReplayFailure::Browser(_) => FailureReason::BrowserCrashed,
            ReplayFailure::Start(_) => FailureReason::NavigationFailed,
            ReplayFailure::Action {
                error: EnvError::Crashed(_),
                ..
            } => FailureReason::BrowserCrashed,
            ReplayFailure::Action { .. } => FailureReason::ActionFailed,
            ReplayFailure::PostCondition { .. } | ReplayFailure::NotReached => {
                FailureReason::PostconditionFailed
            }
        }
    }

    /// The step it happened at, if any.
    pub fn step(&self) -> Option<u32> {
        match self {
            ReplayFailure::Action { step, .. } | ReplayFailure::PostCondition { step, .. } => {
                Some(*step)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for ReplayFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayFailure::Browser(reason) => write!(f, "the browser failed: {reason}"),
            ReplayFailure::Start(error) => write!(f, "the start page did not load: {error}"),
            ReplayFailure::Action { step, error } => write!(f, "step {step}: {error}"),
            ReplayFailure::PostCondition {
                step,
                check,
                expected,
                found,
            } => write!(
                f,
                "step {step}: post-condition {check} failed: expected {expected}, found {found}"
            ),
            ReplayFailure::NotReached => write!(
                f,
                "every step ran, but the success predicates do not hold after the last"
            ),
        }
    }
}

/// What a replay did.
#[derive(Debug, Clone, Default)]
pub struct ReplayRun {
    /// The steps carried out and checked, in order (the failing one included when it was
    /// carried out).
    pub steps: Vec<ReplayedStep>,
    /// Why it failed, if it did.
    pub failure: Option<ReplayFailure>,
    /// A JPEG of the page where it failed.
    pub failure_screenshot: Option<Vec<u8>>,
    /// What the browser's network did.
    pub network: NetworkLog,
}

/// Which check of a post-condition fails on this observation, if any.
fn check_post_condition(
    expect: &PostCondition,
    observation: &Observation,
    text_present: bool,
) -> Option<(&'static str, String, String)> {
    let path = url::Url::parse(&observation.url)
        .map(|u| u.path().to_owned())
        .unwrap_or_default();
    let path_ok = regex::RegexBuilder::new(&expect.url_path)
        .size_limit(1 << 20)
        .build()
        .is_ok_and(|re| re.is_match(&path));
    if !path_ok {
        return Some(("url_path", expect.url_path.clone(), observation.url.clone()));
    }
    if let Some(family) = expect.family {
        let snapshot = observation.snapshot.join("\n");
        let found =
            forager_protocol::fingerprint::family(&observation.url, &snapshot, &observation.forms);
        if found != family {
            let heading = forager_protocol::fingerprint::main_heading(&snapshot)
                .unwrap_or_else(|| "no heading".into());
            return Some((
                "family",
                format!("family {family}"),
                format!(
                    "family {found} (heading {heading:?}, title {:?})",
                    observation.title
                ),
            ));
        }
    }
    if let Some(text) = &expect.text
        && !text_present
    {
        return Some(("text", format!("{text:?} on the page"), "it is not".into()));
    }
    None
}

/// Replays `workflow` with `inputs` (checked against its parameters by the caller) on the
/// pool's browser. Never panics; every failure is in the returned run.
pub async fn replay_workflow(
    pool: &BrowserPool,
    workflow: &Workflow,
    inputs: &BTreeMap<String, String>,
    options: &ReplayOptions,
) -> ReplayRun {
    let mut run = ReplayRun::default();
    let task = workflow.task(inputs.clone());
    let predicates = match Predicates::of(&task) {
        Ok(p) => p,
        Err(error) => {
            run.failure = Some(ReplayFailure::Start(error));
            return run;
        }
    };
    let browser = match pool.browser().await {
        Ok((browser, _)) => browser,
        Err(error) => {
            run.failure = Some(ReplayFailure::Browser(error.to_string()));
            return run;
        }
    };
    let origins: Vec<&str> = std::iter::once(workflow.start_url.as_str())
        .chain(workflow.allowed_origins.iter().map(String::as_str))
        .collect();
    let guard = Arc::new(OriginGuard::new(origins.iter().copied()));
    let network = Arc::new(Mutex::new(NetworkLog::default()));
    let mut tab = match Tab::open(
        browser,
        guard.clone(),
        network.clone(),
        workflow.seed,
        options.init_script.as_deref(),
        options.timeouts,
    )
    .await
    {
        Ok(tab) => tab,
        Err(error) => {
            run.failure = Some(ReplayFailure::Browser(error.to_string()));
            return run;
        }
    };
    if let Some(session) = &options.session
        && let Err(error) = tab.mount(session).await
    {
        tab.close().await;
        run.failure = Some(ReplayFailure::Browser(format!(
            "mounting the capsule: {error}"
        )));
        return run;
    }
    let walked = walk(
        &tab,
        workflow,
        &task.inputs,
        &guard,
        &predicates,
        options,
        &mut run,
    )
    .await;
    if let Err(failure) = walked {
        tracing::info!(%failure, "the replay failed");
        run.failure_screenshot = tab.screenshot().await.ok();
        run.failure = Some(failure);
    }
    tab.close().await;
    run.network = network.lock().map(|l| l.clone()).unwrap_or_default();
    run
}

async fn walk(
    tab: &Tab,
    workflow: &Workflow,
    inputs: &BTreeMap<String, String>,
    guard: &OriginGuard,
    predicates: &Predicates,
    options: &ReplayOptions,
    run: &mut ReplayRun,
) -> Result<(), ReplayFailure> {
    tab.navigate(&workflow.start_url)
        .await
        .map_err(ReplayFailure::Start)?;
    tab.settle().await.map_err(ReplayFailure::Start)?;
    let mut before = tab.observation().await.map_err(ReplayFailure::Start)?;
    for step in &workflow.steps {
        let started = Instant::now();
        let failed = |error: EnvError| ReplayFailure::Action {
            step: step.index,
            error,
        };
        let class = step
            .risk
            .max(forager_protocol::risk::classify_action(&step.action));
        let heal = perform_gated(tab, &step.action, class, &before.url, inputs, guard)
            .await
            .map_err(failed)?
            .heal;
        let after = tab.observation().await.map_err(failed)?;
        let text_present = match &step.expect.text {
            Some(text) => tab
                .check_dom(std::slice::from_ref(text), &[])
                .await
                .map_err(failed)?
                .0
                .first()
                .copied()
                .unwrap_or(false),
            None => true,
        };
        let verdict = is_submit_shaped(
            step.action.shape(),
            step.action.target().map_or("", |t| t.name.as_str()),
        )
        .then(|| pre_pass(&before, &after, &predicates.texts));
        if let Some(heal) = &heal {
            tracing::info!(step = step.index, locator = %heal.locator, "healed by a fallback locator");
        }
        let screenshot = if options.screenshots {
            tab.screenshot().await.ok()
        } else {
            None
        };
        run.steps.push(ReplayedStep {
            index: step.index,
            url: after.url.clone(),
            title: after.title.clone(),
            fingerprint: after.fingerprint,
            heal,
            verdict,
            cost_ms: started.elapsed().as_millis() as u64,
            screenshot,
        });
        if let Some((check, expected, found)) =
            check_post_condition(&step.expect, &after, text_present)
        {
            return Err(ReplayFailure::PostCondition {
                step: step.index,
                check,
                expected,
                found,
            });
        }
        before = after;
    }
    let reached = predicates
        .hold(tab, &before)
        .await
        .map_err(|error| ReplayFailure::Action {
            step: workflow.steps.len() as u32,
            error,
        })?;
    if reached {
        Ok(())
    } else {
        Err(ReplayFailure::NotReached)
    }
}
