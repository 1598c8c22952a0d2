//! A tab: one isolated browser context holding one page, with forager's guards installed.
//!
//! Every tab gets, before its first document: the determinism script (seeded `Math.random`,
//! fixed-epoch `Date`, non-blocking dialogs) and any user init script; request interception
//! that lets through only the task's origins (everything else fails with `BlockedByClient`
//! before it leaves the browser, and is logged); listeners for console errors, exceptions,
//! dialogs and renderer crashes. Every CDP call runs under a timeout.
//!
//! The network gate (`network.rs`): [`Tab::begin_action`] opens it to the class of the action
//! about to run and [`Tab::end_action`] closes it, so between actions no write leaves.
//! [`Tab::input_effects`] reads what real input set going (handler runs, random draws): an action
//! that ran handlers but changed nothing visible is told apart from one that reached nothing.
//! [`Tab::settle`] waits for the document, its element count, the images it is loading (not lazy
//! ones) and the timers real input set that are due within a second (`init.js`), within the
//! settle limit. [`Tab::mount`] puts a capsule's session into the context and
//! [`Tab::capture_session`] takes one. Input is in `input.rs`; roles and names from the
//! accessibility tree in `accessibility.rs`.

mod accessibility;
mod input;
mod network;

use crate::environment::EnvError;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams as FetchEnable, EventRequestPaused, FailRequestParams,
    FulfillRequestParams, HeaderEntry, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    CookieParam, CookieSameSite, ErrorReason, ResourceType, TimeSinceEpoch,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CaptureScreenshotFormat, EventJavascriptDialogOpening,
    HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::browser_protocol::storage::{
    GetCookiesParams as StorageGetCookies, SetCookiesParams as StorageSetCookies,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use chromiumoxide::error::CdpError;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::types::MethodId;
use chromiumoxide::{Browser, Page};
use chromiumoxide::{Command, Method};
use forager_protocol::capsule::{OriginStorage, SessionCookie, SessionState};
use forager_protocol::observation::{Dialog, Element, Observation};
use futures::StreamExt;
pub use network::{BACKGROUND_HEADER, NetworkLog, OriginGuard, Refused};
use network::{MAX_REFUSED_KEPT, WriteGate, handler_of, writes};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PRELUDE: &str = include_str!("js/prelude.js");
const OBSERVE: &str = include_str!("js/observe.js");
const ACT: &str = include_str!("js/act.js");
const SETTLE: &str = include_str!("js/settle.js");
const PREDICATES: &str = include_str!("js/predicates.js");
const INIT: &str = include_str!("js/init.js");

/// The `sessionStorage` key that says a tab's storage was filled from a capsule (so the page's
/// own changes are not overwritten on the next document).
const STORAGE_MARKER: &str = "forager.capsule.mounted";

/// A capsule's cookie as CDP sets it: a host-only cookie by URL (a `domain` would widen it to
/// subdomains), a domain cookie by domain.
fn cookie_param(cookie: &SessionCookie) -> CookieParam {
    let mut param = CookieParam::new(cookie.name.clone(), cookie.value.clone());
    if cookie.domain.starts_with('.') {
        param.domain = Some(cookie.domain.clone());
    } else {
        let scheme = if cookie.secure { "https" } else { "http" };
        param.url = Some(format!("{scheme}://{}{}", cookie.domain, cookie.path));
    }
    param.path = Some(cookie.path.clone());
    param.secure = Some(cookie.secure);
    param.http_only = Some(cookie.http_only);
    param.same_site = cookie.same_site.as_deref().and_then(|s| match s {
        "Strict" => Some(CookieSameSite::Strict),
        "Lax" => Some(CookieSameSite::Lax),
        "None" => Some(CookieSameSite::None),
        _ => None,
    });
    param.expires = cookie.expires.map(|e| TimeSinceEpoch::new(e as f64));
    param
}

/// Time limits of a tab's operations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// Any single CDP call.
    pub call: Duration,
    /// A navigation to be committed.
    pub navigation: Duration,
    /// Waiting for a page to settle after an action.
    pub settle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            call: Duration::from_secs(10),
            navigation: Duration::from_secs(15),
            settle: Duration::from_secs(3),
        }
    }
}

#[derive(Debug, Default)]
struct TabEvents {
    console_errors: Vec<String>,
    dialogs: Vec<Dialog>,
    crashed: bool,
}

/// What `observe.js` returns; its elements are already in the protocol's shape.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RawObservation {
    pub url: String,
    pub title: String,
    pub http_status: Option<u16>,
    pub elements: Vec<Element>,
    pub text_excerpt: String,
    pub snapshot: Vec<String>,
    pub forms: Vec<String>,
    pub validation_errors: Vec<String>,
    #[serde(default)]
    pub values: Vec<forager_protocol::observation::PageValue>,
    #[serde(default)]
    pub tables: Vec<forager_protocol::observation::Table>,
    #[serde(default)]
    pub scrollables: Vec<forager_protocol::observation::Scrollable>,
    #[serde(default)]
    pub terminals: Vec<forager_protocol::observation::Terminal>,
    /// A random name of the document, the same for every look at it.
    #[serde(default)]
    pub document: String,
}

#[derive(Debug, Deserialize)]
struct SettleState {
    ready: String,
    nodes: u64,
    #[serde(default)]
    loading_images: u64,
    new_document: bool,
    url: String,
}

/// A CDP command sent by name with a lenient response (`serde_json::Value`): a newer
/// Chromium's unknown enum values, which chromiumoxide's typed responses reject, cannot break
/// it. `params` is serialized as the command's parameters.
#[derive(Debug, Clone, Serialize)]
struct Raw<P: Serialize> {
    #[serde(skip)]
    method: &'static str,
    #[serde(flatten)]
    params: P,
}

impl<P: Serialize> Method for Raw<P> {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl<P: Serialize> Command for Raw<P> {
    type Response = serde_json::Value;
}

/// The parameters of `Runtime.evaluate` forager uses.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct EvaluateParams {
    expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_id: Option<i64>,
    return_by_value: bool,
    await_promise: bool,
    timeout: f64,
    /// The group the returned object handles belong to (released together).
    #[serde(skip_serializing_if = "Option::is_none")]
    object_group: Option<&'static str>,
}

/// Which locator of a target's chain resolved it.
pub type LocatorIndex = usize;

/// What real input set going in a document, counted by the determinism script
/// ([`Tab::input_effects`]); two readings taken around an action say what the action did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputEffects {
    /// Runs of the page's own element handlers for trusted input.
    pub handled: u64,
    /// Random numbers those handlers drew (`Math.random`).
    pub drawn: u64,
}

/// A browser context with one page and forager's guards.
pub struct Tab {
    browser: Arc<Browser>,
    context: chromiumoxide::cdp::browser_protocol::browser::BrowserContextId,
    page: Page,
    events: Arc<Mutex<TabEvents>>,
    gate: Arc<Mutex<WriteGate>>,
    /// The environment's network log, shared by its tabs.
    network: Arc<Mutex<NetworkLog>>,
    listeners: Vec<tokio::task::JoinHandle<()>>,
    timeouts: Timeouts,
    closed: bool,
    /// The accessibility tree's readings of the current document's elements (see
    /// [`accessibility`]).
    names: Mutex<accessibility::NameCache>,
}

impl std::fmt::Debug for Tab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tab")
            .field("context", &self.context)
            .finish()
    }
}

/// Runs a CDP future under a timeout, mapping failures to named errors.
async fn timed<T>(
    operation: &'static str,
    limit: Duration,
    future: impl Future<Output = Result<T, CdpError>>,
) -> Result<T, EnvError> {
    match tokio::time::timeout(limit, future).await {
        Ok(Ok(value)) => Ok(value),
        // A dead connection means a dead browser.
        Ok(Err(
            error @ (CdpError::ChannelSendError(_) | CdpError::Ws(_) | CdpError::NoResponse),
        )) => Err(EnvError::Crashed(format!("{operation}: {error}"))),
        Ok(Err(error)) => Err(EnvError::Other(format!("{operation}: {error}"))),
        Err(_) => Err(EnvError::Timeout {
            operation,
            after_ms: limit.as_millis() as u64,
        }),
    }
}

fn js_string(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

impl Tab {
    /// Opens a fresh context and page, installs the guards and scripts.
    pub async fn open(
        browser: Arc<Browser>,
        guard: Arc<OriginGuard>,
        network: Arc<Mutex<NetworkLog>>,
        seed: u64,
        user_init: Option<&str>,
        timeouts: Timeouts,
    ) -> Result<Tab, EnvError> {
        let limit = timeouts.call;
        let context = timed(
            "create browser context",
            limit,
            browser.create_browser_context(CreateBrowserContextParams::default()),
        )
        .await?;
        let params = CreateTargetParams::builder()
            .url("about:blank")
            .browser_context_id(context.clone())
            .build()
            .map_err(EnvError::Other)?;
        let page = match timed("create page", limit, browser.new_page(params)).await {
            Ok(page) => page,
            Err(e) => {
                let _ = timed(
                    "dispose context",
                    limit,
                    browser.dispose_browser_context(context),
                )
                .await;
                return Err(e);
            }
        };
        let events = Arc::new(Mutex::new(TabEvents::default()));
        let mut tab = Tab {
            browser,
            context,
            page,
            events,
            gate: Arc::new(Mutex::new(WriteGate::default())),
            network: network.clone(),
            listeners: Vec::new(),
            timeouts,
            closed: false,
            names: Mutex::default(),
        };
        if let Err(e) = tab.install(guard, network, seed, user_init).await {
            tab.close().await;
            return Err(e);
        }
        Ok(tab)
    }

    async fn install(
        &mut self,
        guard: Arc<OriginGuard>,
        network: Arc<Mutex<NetworkLog>>,
        seed: u64,
        user_init: Option<&str>,
    ) -> Result<(), EnvError> {
        self.guard_requests(guard, network).await?;
        self.listen_to_page().await?;
        self.add_scripts_and_intercept(seed, user_init).await
    }

    /// The request guard and the network gate: decides every request before it leaves the
    /// browser (another origin is blocked; a write passes only while an action that may
    /// write runs), and logs what it decided.
    async fn guard_requests(
        &mut self,
        guard: Arc<OriginGuard>,
        network: Arc<Mutex<NetworkLog>>,
    ) -> Result<(), EnvError> {
        let limit = self.timeouts.call;
        let page = self.page.clone();
        let mut paused = timed(
            "listen to requests",
            limit,
            page.event_listener::<EventRequestPaused>(),
        )
        .await?;
        let guard_page = page.clone();
        let gate = self.gate.clone();
        self.listeners.push(tokio::spawn(async move {
            while let Some(event) = paused.next().await {
                let url = &event.request.url;
                let method = event.request.method.as_str();
                let to_allowed_origin = guard.allows(url);
                // The network gate: a write leaves only while an action that may write runs;
                // one the page sends on its own never.
                let document = matches!(event.resource_type, ResourceType::Document);
                let marked = event
                    .request
                    .headers
                    .inner()
                    .as_object()
                    .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case(BACKGROUND_HEADER)));
                let beacon = matches!(event.resource_type, ResourceType::Ping);
                // A session refresh keeps the login the browser has: never refused.
                let keeps_session = forager_protocol::risk::keeps_session(method, url);
                let own = writes(method)
                    && !keeps_session
                    && gate
                        .lock()
                        .map(|g| g.sent_on_its_own(method, url, marked, beacon))
                        .unwrap_or(true);
                // What a write does, by its handler and body, read once.
                let does = writes(method)
                    .then(|| forager_protocol::risk::class_of_write(url, &body_of(&event.request)))
                    .flatten();
                let refused_write = to_allowed_origin
                    && !keeps_session
                    && (own
                        || !gate
                            .lock()
                            .map(|g| g.lets_through(method, url, document, does))
                            .unwrap_or(false));
                let allowed = to_allowed_origin && !refused_write;
                if let Ok(mut log) = network.lock() {
                    if allowed {
                        log.allowed += 1;
                        if let Ok(parsed) = url::Url::parse(url) {
                            log.allowed_origins
                                .insert(parsed.origin().ascii_serialization());
                        }
                    } else if refused_write {
                        log.refused_writes += 1;
                        if log.refused_write_requests.len() < 100 {
                            log.refused_write_requests.push(format!("{method} {url}"));
                        }
                        if own {
                            log.background_refused += 1;
                            if log.background_requests.len() < 100 {
                                log.background_requests.push(format!("{method} {url}"));
                            }
                        }
                    } else {
                        log.blocked += 1;
                        if log.blocked_urls.len() < 100 {
                            log.blocked_urls.push(url.clone());
                        }
                    }
                }
                if refused_write && let Ok(mut g) = gate.lock() {
                    if own {
                        // Marked, a beacon or between actions: its handler is the page's own
                        // from now on (a heartbeat's next beat while an action runs).
                        if (marked || beacon || !g.acting) && g.background.len() < 64 {
                            g.background.insert(handler_of(method, url));
                        }
                    } else if g.refused.len() < MAX_REFUSED_KEPT {
                        let refused = Refused {
                            method: method.to_owned(),
                            url: url.clone(),
                            does,
                            elsewhere: g.elsewhere(url),
                        };
                        g.refused.push(refused);
                    }
                }
                let id = event.request_id.clone();
                let sent = if allowed {
                    guard_page
                        .execute(ContinueRequestParams::new(id))
                        .await
                        .map(|_| ())
                } else {
                    if refused_write && own {
                        tracing::debug!(%method, %url, "the network gate refused a write the page sent on its own");
                    } else if refused_write {
                        tracing::info!(%method, %url, "the network gate refused a write");
                    } else {
                        tracing::info!(%url, "blocked a request to another origin");
                    }
                    if refused_write && !document {
                        // A script's write is answered, not cut off: a page that waits on
                        // its answer (a session refresh at start) goes on as a refused
                        // request lets it, where a network error left it waiting forever.
                        let mut refusal = FulfillRequestParams::new(id, 403);
                        refusal.response_headers =
                            Some(vec![HeaderEntry::new("Content-Type", "text/plain")]);
                        refusal.response_phrase = Some("Forbidden".into());
                        guard_page.execute(refusal).await.map(|_| ())
                    } else {
                        guard_page
                            .execute(FailRequestParams::new(id, ErrorReason::BlockedByClient))
                            .await
                            .map(|_| ())
                    }
                };
                if let Err(error) = sent {
                    tracing::debug!(%error, "request guard reply failed");
                }
            }
        }));

        Ok(())
    }

    /// Listens to the page's console errors, exceptions, dialogs (dismissed at once) and
    /// crashes.
    async fn listen_to_page(&mut self) -> Result<(), EnvError> {
        let limit = self.timeouts.call;
        let page = self.page.clone();
        let mut console = timed(
            "listen to console",
            limit,
            page.event_listener::<EventConsoleApiCalled>(),
        )
        .await?;
        let events = self.events.clone();
        self.listeners.push(tokio::spawn(async move {
            while let Some(event) = console.next().await {
                let text: String = event
                    .args
                    .iter()
                    .filter_map(|a| {
                        a.value
                            .as_ref()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let kind = format!("{:?}", event.r#type).to_lowercase();
                if let Ok(mut e) = events.lock() {
                    if let Some(rest) = text.strip_prefix("[forager:dialog:") {
                        let (kind, message) = rest.split_once("] ").unwrap_or((rest, ""));
                        if e.dialogs.len() < 50 {
                            e.dialogs.push(Dialog {
                                kind: kind.to_owned(),
                                message: message.to_owned(),
                            });
                        }
                    } else if kind == "error" && e.console_errors.len() < 50 {
                        e.console_errors.push(text.chars().take(300).collect());
                    }
                }
            }
        }));
        let mut exceptions = timed(
            "listen to exceptions",
            limit,
            page.event_listener::<EventExceptionThrown>(),
        )
        .await?;
        let events = self.events.clone();
        self.listeners.push(tokio::spawn(async move {
            while let Some(event) = exceptions.next().await {
                let details = &event.exception_details;
                let text = details
                    .exception
                    .as_ref()
                    .and_then(|e| e.description.clone())
                    .unwrap_or_else(|| details.text.clone());
                if let Ok(mut e) = events.lock()
                    && e.console_errors.len() < 50
                {
                    e.console_errors.push(text.chars().take(300).collect());
                }
            }
        }));
        let mut dialogs = timed(
            "listen to dialogs",
            limit,
            page.event_listener::<EventJavascriptDialogOpening>(),
        )
        .await?;
        let events = self.events.clone();
        let dialog_page = page.clone();
        self.listeners.push(tokio::spawn(async move {
            while let Some(event) = dialogs.next().await {
                if let Ok(mut e) = events.lock()
                    && e.dialogs.len() < 50
                {
                    e.dialogs.push(Dialog {
                        kind: format!("{:?}", event.r#type).to_lowercase(),
                        message: event.message.chars().take(300).collect(),
                    });
                }
                // Never leave a page blocked on a dialog: dismiss it.
                let _ = dialog_page
                    .execute(HandleJavaScriptDialogParams::new(false))
                    .await;
            }
        }));
        let mut crashes = timed(
            "listen to crashes",
            limit,
            page.event_listener::<EventTargetCrashed>(),
        )
        .await?;
        let events = self.events.clone();
        self.listeners.push(tokio::spawn(async move {
            if crashes.next().await.is_some()
                && let Ok(mut e) = events.lock()
            {
                e.crashed = true;
            }
        }));

        Ok(())
    }

    /// Adds forager's init script (seeded randomness, the virtual clock) and the user's to
    /// every new document, then turns request interception on.
    async fn add_scripts_and_intercept(
        &mut self,
        seed: u64,
        user_init: Option<&str>,
    ) -> Result<(), EnvError> {
        let limit = self.timeouts.call;
        let page = self.page.clone();
        let epoch_ms: u64 = 1_767_225_600_000 + (seed % 1_000) * 86_400_000;
        let init = format!(
            "const FORAGER_SEED = {}; const FORAGER_EPOCH_MS = {epoch_ms};\n{INIT}",
            seed as u32
        );
        timed(
            "add init script",
            limit,
            page.execute(AddScriptToEvaluateOnNewDocumentParams::new(init)),
        )
        .await?;
        if let Some(script) = user_init {
            timed(
                "add user init script",
                limit,
                page.execute(AddScriptToEvaluateOnNewDocumentParams::new(script)),
            )
            .await?;
        }
        let pattern = RequestPattern::builder().url_pattern("*").build();
        timed(
            "enable request interception",
            limit,
            page.execute(FetchEnable::builder().pattern(pattern).build()),
        )
        .await?;
        Ok(())
    }

    /// Opens the network gate to the class of the action about to run on the page at
    /// `page` (its URL); returns the writes it refused since the last action ended (the
    /// page's own).
    pub fn begin_action(&self, class: forager_protocol::RiskClass, page: &str) -> Vec<Refused> {
        match self.gate.lock() {
            Ok(mut gate) => {
                gate.class = class;
                gate.acting = true;
                page.clone_into(&mut gate.page);
                std::mem::take(&mut gate.refused)
            }
            Err(_) => Vec::new(),
        }
    }

    /// Closes the network gate (read-only between actions); returns the writes the action
    /// caused that it refused (not those the page sent on its own).
    pub fn end_action(&self) -> Vec<Refused> {
        match self.gate.lock() {
            Ok(mut gate) => {
                gate.class = forager_protocol::RiskClass::ReadOnly;
                gate.acting = false;
                std::mem::take(&mut gate.refused)
            }
            Err(_) => Vec::new(),
        }
    }

    /// Counts writes refused as saving only the page's own view (see
    /// `steps::perform_gated`).
    pub fn count_view_state(&self, writes: usize) {
        if let Ok(mut log) = self.network.lock() {
            log.view_state_refused += writes as u64;
        }
    }

    /// Whether the renderer crashed.
    pub fn crashed(&self) -> bool {
        self.events.lock().map(|e| e.crashed).unwrap_or(true)
    }

    fn check_alive(&self) -> Result<(), EnvError> {
        if self.crashed() {
            Err(EnvError::Crashed("the page's renderer crashed".into()))
        } else {
            Ok(())
        }
    }

    /// Console errors and dialogs since the last call.
    pub fn drain_events(&self) -> (Vec<String>, Vec<Dialog>) {
        match self.events.lock() {
            Ok(mut e) => (
                std::mem::take(&mut e.console_errors),
                std::mem::take(&mut e.dialogs),
            ),
            Err(_) => (Vec::new(), Vec::new()),
        }
    }

    /// Evaluates a script and returns its JSON value. `isolated`: in the utility world (the
    /// page's own scripts cannot interfere), else in the page's world.
    pub async fn evaluate(
        &self,
        expression: String,
        isolated: bool,
    ) -> Result<serde_json::Value, EnvError> {
        self.check_alive()?;
        let limit = self.timeouts.call;
        let context_id = if isolated {
            self.isolated_context().await?
        } else {
            None
        };
        let command = Raw {
            method: "Runtime.evaluate",
            params: EvaluateParams {
                expression,
                context_id,
                return_by_value: true,
                await_promise: true,
                timeout: limit.as_millis() as f64,
                object_group: None,
            },
        };
        let response = timed("evaluate", limit, self.page.execute(command)).await?;
        let body = response.result;
        if let Some(details) = body.get("exceptionDetails") {
            let text = details
                .pointer("/exception/description")
                .or_else(|| details.get("text"))
                .and_then(|v| v.as_str())
                .unwrap_or("script threw");
            return Err(EnvError::Other(format!(
                "script error: {}",
                text.chars().take(300).collect::<String>()
            )));
        }
        Ok(body
            .pointer("/result/value")
            .cloned()
            .unwrap_or(serde_json::Value::Null))
    }

    /// The utility world of the current document (`None` when it never showed up).
    async fn isolated_context(&self) -> Result<Option<i64>, EnvError> {
        let mut id = None;
        // The utility world of a fresh document appears shortly after it.
        for _ in 0..20 {
            id = timed(
                "find the isolated world",
                self.timeouts.call,
                self.page.secondary_execution_context(),
            )
            .await?;
            if id.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(id.map(|id| *id.inner()))
    }

    /// What real input has set going in the current document so far (counted by the
    /// determinism script; zeros when it cannot be read): how often the page's own element
    /// handlers ran, and how many random numbers they drew.
    pub async fn input_effects(&self) -> Result<InputEffects, EnvError> {
        let value = self
            .evaluate(
                "[window[Symbol.for('forager.handled')] || 0, window[Symbol.for('forager.drawn')] || 0]"
                    .into(),
                false,
            )
            .await?;
        let count = |index: usize| value.get(index).and_then(|v| v.as_u64()).unwrap_or(0);
        Ok(InputEffects {
            handled: count(0),
            drawn: count(1),
        })
    }

    /// How long until the next timer that real input caused runs, if one is due within a
    /// second (read from the determinism script; `None` when none is or it cannot be read).
    async fn soon(&self) -> Option<Duration> {
        let value = self
            .evaluate("(window[Symbol.for('forager.soon')] ?? -1)".into(), false)
            .await
            .ok()?;
        let left = value
            .as_f64()
            .filter(|left| left.is_finite() && *left >= 0.0)?;
        Some(Duration::from_secs_f64(left.min(1000.0) / 1000.0))
    }

    /// Observes the page (raw form): the page script's walk, then each element's role and
    /// name from Chromium's accessibility tree where it has them (see [`accessibility`]).
    pub(crate) async fn observe_raw(&self) -> Result<RawObservation, EnvError> {
        let mut raw = self.observe_dom().await?;
        self.name_from_accessibility(&raw.document, &mut raw.elements)
            .await;
        Ok(raw)
    }

    /// Observes the page with the page script's names and roles only: what the browser bench
    /// compares the accessibility tree's cost against.
    pub async fn observation_without_accessibility(&self) -> Result<Observation, EnvError> {
        let raw = self.observe_dom().await?;
        let (console_errors, dialogs) = self.drain_events();
        Ok(to_observation(raw, console_errors, dialogs))
    }

    async fn observe_dom(&self) -> Result<RawObservation, EnvError> {
        let script = format!("(() => {{\n{PRELUDE}\n{OBSERVE}\n}})()");
        let value = self.evaluate(script, true).await?;
        serde_json::from_value(value)
            .map_err(|e| EnvError::Other(format!("observation did not parse: {e}")))
    }

    /// Observes the page: elements, snapshot, fingerprint, console errors and dialogs since the
    /// last look.
    pub async fn observation(&self) -> Result<Observation, EnvError> {
        let raw = self.observe_raw().await?;
        let (console_errors, dialogs) = self.drain_events();
        Ok(to_observation(raw, console_errors, dialogs))
    }

    /// Evaluates text and selector predicates.
    pub async fn check_dom(
        &self,
        texts: &[String],
        selectors: &[String],
    ) -> Result<(Vec<bool>, Vec<bool>), EnvError> {
        let script = format!(
            "(() => {{ const TEXTS = {}; const SELECTORS = {};\n{PRELUDE}\n{PREDICATES}\n}})()",
            js_string(&texts),
            js_string(&selectors)
        );
        let value = self.evaluate(script, true).await?;
        let list = |key: &str| -> Vec<bool> {
            value
                .get(key)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().map(|b| b.as_bool().unwrap_or(false)).collect())
                .unwrap_or_default()
        };
        Ok((list("texts"), list("selectors")))
    }

    /// Starts a navigation and waits for it to commit. Fails with the browser's error text
    /// (`net::ERR_TOO_MANY_REDIRECTS`, `net::ERR_BLOCKED_BY_CLIENT`, …).
    ///
    /// Chromium answers `Page.navigate` only when the document has loaded, which for a page
    /// that never finishes loading is never; so the command runs in the background and the
    /// navigation counts as committed as soon as a new document appears in the page.
    pub async fn navigate(&self, url: &str) -> Result<(), EnvError> {
        self.check_alive()?;
        let settle_script = format!("(() => {{\n{SETTLE}\n}})()");
        // Mark the current document, so that a new one can be told apart.
        let _ = self.evaluate(settle_script.clone(), true).await;
        let page = self.page.clone();
        let command = Raw {
            method: "Page.navigate",
            params: serde_json::json!({ "url": url }),
        };
        let (answer, mut answered) = tokio::sync::oneshot::channel();
        let limit = self.timeouts.navigation;
        // Fire-and-forget: bounded by `limit`; the answer is polled below.
        crate::actor::spawn_detached("navigation", async move {
            let response = tokio::time::timeout(limit, page.execute(command)).await;
            let _ = answer.send(response.ok().map(|r| r.map(|r| r.result)));
        });
        let started = Instant::now();
        loop {
            match answered.try_recv() {
                Ok(Some(Ok(result))) => {
                    if let Some(error) = result.get("errorText").and_then(|e| e.as_str())
                        && !error.is_empty()
                    {
                        return Err(EnvError::NavigationBlocked(format!("{url}: {error}")));
                    }
                    return Ok(());
                }
                Ok(Some(Err(error))) => {
                    return Err(EnvError::Other(format!("navigate: {error}")));
                }
                Ok(None) | Err(tokio::sync::oneshot::error::TryRecvError::Closed) => break,
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
            }
            if let Ok(value) = self.evaluate(settle_script.clone(), true).await
                && let Ok(state) = serde_json::from_value::<SettleState>(value)
                && state.new_document
                && !state.url.starts_with("about:blank")
            {
                if !state.url.starts_with("chrome-error:") {
                    return Ok(());
                }
                // An error page: its error code is on it (the command's answer may follow).
                let code = self
                    .evaluate(
                        "(document.body && document.body.innerText.match(/ERR_[A-Z_]+/) || [''])[0]"
                            .into(),
                        true,
                    )
                    .await
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .filter(|c| !c.is_empty());
                if let Some(code) = code {
                    return Err(EnvError::NavigationBlocked(format!("{url}: net::{code}")));
                }
            }
            if started.elapsed() >= limit {
                break;
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        let _ = timed(
            "stop loading",
            self.timeouts.call,
            self.page.execute(Raw {
                method: "Page.stopLoading",
                params: serde_json::json!({}),
            }),
        )
        .await;
        Err(EnvError::Timeout {
            operation: "navigate",
            after_ms: limit.as_millis() as u64,
        })
    }

    /// History back.
    pub async fn back(&self) -> Result<(), EnvError> {
        self.evaluate("history.back(); true".into(), true).await?;
        Ok(())
    }

    /// Waits until the page looks settled: the document has loaded (or the settle limit passed)
    /// and its element count stopped changing. Returns whether a new document appeared.
    pub async fn settle(&self) -> Result<bool, EnvError> {
        let started = Instant::now();
        let mut last_nodes = None;
        let mut new_document = false;
        let script = format!("(() => {{\n{SETTLE}\n}})()");
        // Give a click's navigation a moment to start before the first look.
        tokio::time::sleep(Duration::from_millis(15)).await;
        loop {
            match self.evaluate(script.clone(), true).await {
                Ok(value) => {
                    if let Ok(state) = serde_json::from_value::<SettleState>(value) {
                        new_document |= state.new_document;
                        let stable = last_nodes == Some(state.nodes);
                        if state.ready == "complete" && stable && state.loading_images == 0 {
                            // A timer the action caused is about to run (an autocomplete's
                            // delay): wait for it, within the settle limit.
                            match self.soon().await {
                                Some(left) if started.elapsed() + left < self.timeouts.settle => {
                                    tokio::time::sleep(
                                        left.min(Duration::from_millis(250))
                                            + Duration::from_millis(10),
                                    )
                                    .await;
                                    last_nodes = None;
                                    continue;
                                }
                                _ => return Ok(new_document),
                            }
                        }
                        last_nodes = Some(state.nodes);
                    }
                }
                // Mid-navigation the world can vanish; look again.
                Err(EnvError::Other(_)) => {}
                Err(other) => return Err(other),
            }
            if started.elapsed() >= self.timeouts.settle {
                return Ok(new_document);
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// A JPEG screenshot of the viewport (quality 70: a few tens of kilobytes, enough to see
    /// what a step did).
    pub async fn screenshot(&self) -> Result<Vec<u8>, EnvError> {
        let params = ScreenshotParams::builder()
            .format(CaptureScreenshotFormat::Jpeg)
            .quality(70)
            .build();
        timed(
            "screenshot",
            self.timeouts.call,
            self.page.screenshot(params),
        )
        .await
    }

    /// Mounts a session (a capsule's, already restricted to its origins) into this tab's
    /// context before its first request: the cookies into the context's cookie jar (HttpOnly
    /// ones included), the web storage by a script that fills an origin's storage the first
    /// time a document of that origin loads in this tab.
    pub async fn mount(&self, session: &SessionState) -> Result<(), EnvError> {
        let limit = self.timeouts.call;
        let cookies: Vec<CookieParam> = session.cookies.iter().map(cookie_param).collect();
        if !cookies.is_empty() {
            let params = StorageSetCookies::builder()
                .cookies(cookies)
                .browser_context_id(self.context.clone())
                .build()
                .map_err(EnvError::Other)?;
            timed("mount cookies", limit, self.browser.execute(params)).await?;
        }
        let storage: serde_json::Map<String, serde_json::Value> = session
            .storage
            .iter()
            .map(|s| {
                (
                    s.origin.clone(),
                    serde_json::json!({ "local": s.local, "session": s.session }),
                )
            })
            .collect();
        if !storage.is_empty() {
            let script = format!(
                "(() => {{ const seeds = {}; const seed = seeds[location.origin]; if (!seed) return;\n\
                 try {{ if (sessionStorage.getItem({marker})) return;\n\
                 for (const [k, v] of seed.local) localStorage.setItem(k, v);\n\
                 for (const [k, v] of seed.session) sessionStorage.setItem(k, v);\n\
                 sessionStorage.setItem({marker}, '1'); }} catch (e) {{}} }})();",
                serde_json::Value::Object(storage),
                marker = js_string(&STORAGE_MARKER),
            );
            timed(
                "mount storage",
                limit,
                self.page
                    .execute(AddScriptToEvaluateOnNewDocumentParams::new(script)),
            )
            .await?;
        }
        Ok(())
    }

    /// The session this tab's context holds now: every cookie of the context, and the web
    /// storage of the page's origin. The caller restricts it to the origins it may keep.
    pub async fn capture_session(&self) -> Result<SessionState, EnvError> {
        self.check_alive()?;
        let limit = self.timeouts.call;
        let params = StorageGetCookies::builder()
            .browser_context_id(self.context.clone())
            .build();
        let response = timed("read cookies", limit, self.browser.execute(params)).await?;
        let cookies = response
            .result
            .cookies
            .iter()
            .map(|c| SessionCookie {
                name: c.name.clone(),
                value: c.value.clone(),
                domain: c.domain.clone(),
                path: c.path.clone(),
                expires: (!c.session && c.expires > 0.0).then_some(c.expires as u64),
                http_only: c.http_only,
                secure: c.secure,
                same_site: c.same_site.as_ref().map(|s| s.as_ref().to_owned()),
            })
            .collect();
        let script = format!(
            "(() => {{ const skip = {marker}; const items = (s) => {{ const out = []; \
             for (let i = 0; i < s.length; i++) {{ const k = s.key(i); \
             if (k !== skip) out.push([k, s.getItem(k)]); }} return out; }};\n\
             try {{ return {{ origin: location.origin, local: items(localStorage), \
             session: items(sessionStorage) }}; }} catch (e) {{ return null; }} }})()",
            marker = js_string(&STORAGE_MARKER)
        );
        let storage = match self.evaluate(script, true).await? {
            serde_json::Value::Null => Vec::new(),
            value => {
                let storage: OriginStorage = serde_json::from_value(value)
                    .map_err(|e| EnvError::Other(format!("reading web storage: {e}")))?;
                if storage.local.is_empty() && storage.session.is_empty() {
                    Vec::new()
                } else {
                    vec![storage]
                }
            }
        };
        Ok(SessionState { cookies, storage })
    }

    /// Closes the page and disposes its context.
    pub async fn close(&mut self) {
        if self.closed {
            return;
        }
        self.abandon();
        let limit = Duration::from_secs(3);
        let _ = tokio::time::timeout(limit, self.page.clone().close()).await;
        let _ = tokio::time::timeout(
            limit,
            self.browser.dispose_browser_context(self.context.clone()),
        )
        .await;
    }

    /// Lets go of a tab whose browser died: its listeners stop and nothing is asked of the
    /// browser (closing it would wait out two timeouts per tab for a process that is gone).
    pub fn abandon(&mut self) {
        self.closed = true;
        for listener in self.listeners.drain(..) {
            listener.abort();
        }
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        for listener in self.listeners.drain(..) {
            listener.abort();
        }
        if !self.closed {
            // Dispose the context in the background; the browser outlives the tab.
            let browser = self.browser.clone();
            let context = self.context.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(3),
                        browser.dispose_browser_context(context),
                    )
                    .await;
                });
            }
        }
    }
}

fn to_observation(
    raw: RawObservation,
    console_errors: Vec<String>,
    dialogs: Vec<Dialog>,
) -> Observation {
    let fingerprint =
        forager_protocol::fingerprint::fingerprint(&raw.url, &raw.snapshot.join("\n"), &raw.forms);
    Observation {
        url: raw.url,
        title: raw.title,
        http_status: raw.http_status,
        elements: raw.elements,
        text_excerpt: raw.text_excerpt,
        console_errors,
        dialogs,
        snapshot: raw.snapshot,
        forms: raw.forms,
        validation_errors: raw.validation_errors,
        values: raw.values,
        tables: raw.tables,
        scrollables: raw.scrollables,
        terminals: raw.terminals,
        fingerprint,
    }
}

/// Most bytes of a write's body the network gate reads.
const BODY_READ: usize = 16 * 1024;

/// A request's body as text (its first [`BODY_READ`] bytes), from the entries CDP hands over
/// in base64; empty when it has none or CDP left it out (too long).
fn body_of(request: &chromiumoxide::cdp::browser_protocol::network::Request) -> String {
    use base64::Engine as _;
    let mut body = Vec::new();
    for entry in request.post_data_entries.iter().flatten() {
        if let Some(bytes) = &entry.bytes
            && let Ok(decoded) =
                base64::engine::general_purpose::STANDARD.decode(AsRef::<str>::as_ref(bytes))
        {
            body.extend_from_slice(&decoded);
        }
        if body.len() >= BODY_READ {
            body.truncate(BODY_READ);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_guard() {
        let guard = OriginGuard::new(["http://127.0.0.1:8080/start", "https://a.example"]);
        assert!(guard.allows("http://127.0.0.1:8080/other?q=1"));
        assert!(guard.allows("https://a.example/x"));
        assert!(guard.allows("data:text/plain,hi"));
        assert!(!guard.allows("http://127.0.0.1:9090/"));
        assert!(!guard.allows("http://127.0.0.2:8080/"));
        assert!(!guard.allows("https://127.0.0.1:8080/"));
        assert!(!guard.allows("ws://127.0.0.1:8080/"));
        assert!(!guard.allows("not a url"));
        assert!(!guard.allows("file:///etc/passwd"));
    }
}
