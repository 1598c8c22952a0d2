//! A web mail behind a login, for the session-capsule tests: real HTTP on two loopback hosts.
//!
//! The mail (127.0.0.1): a login form with a CSRF token, then a TOTP second factor (RFC 6238,
//! the current or the previous 30-second step), a session in an HttpOnly cookie that the
//! server can expire at will ([`Mail::expire_sessions`]), a welcome page whose script keeps a
//! device name in `localStorage`, an inbox only a logged-in user sees (it shows the device
//! name from storage), and a compose form whose "Send" is class 4.
//!
//! The portal (127.0.0.2, another cookie domain): the login passes through its single
//! sign-on hop, which sets a first-party cookie there; its front page links to the inbox.
//! It records the `Cookie` header of every request it serves, so a test can tell what the
//! browser sent it.

use axum::Router;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use forager_queen::http::LoopbackServer;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The user.
pub const USERNAME: &str = "ada";
/// Her password.
pub const PASSWORD: &str = "analytical-engine-1843";
/// Her TOTP secret (base32).
pub const TOTP_SECRET: &str = "JBSWY3DPEHPK3PXPJBSWY3DP";
/// What the pages say once she is logged in.
pub const SIGNED_IN: &str = "Signed in as ada";

/// What the mail's server knows and counts.
#[derive(Debug, Default)]
pub struct MailState {
    csrf: HashSet<String>,
    pending: HashSet<String>,
    sessions: HashSet<String>,
    /// Every session id ever issued (the secrets a test looks for in artifacts).
    pub issued: Vec<String>,
    /// Every SSO cookie value the portal issued.
    pub sso_issued: Vec<String>,
    /// Password logins accepted.
    pub logins: u64,
    /// Messages sent.
    pub sent: u64,
    /// What was sent: (to, message).
    pub messages: Vec<(String, String)>,
    /// The `Cookie` headers the portal received.
    pub portal_cookies: Vec<String>,
    next: u64,
    portal: String,
    mail: String,
}

type Shared = State<Arc<Mutex<MailState>>>;

/// Both servers, running.
pub struct Mail {
    /// `http://127.0.0.1:port`
    pub base: String,
    /// `http://127.0.0.2:port`
    pub portal: String,
    /// The servers' state.
    pub state: Arc<Mutex<MailState>>,
    _servers: (LoopbackServer, LoopbackServer),
}

impl Mail {
    /// Starts both.
    pub async fn start() -> Mail {
        let state = Arc::new(Mutex::new(MailState::default()));
        let mail = LoopbackServer::start(mail_router().with_state(state.clone()))
            .await
            .expect("a loopback port");
        let portal = LoopbackServer::start_on(
            std::net::Ipv4Addr::new(127, 0, 0, 2),
            portal_router().with_state(state.clone()),
        )
        .await
        .expect("a port on 127.0.0.2");
        let base = format!("http://{}", mail.address);
        let portal_base = format!("http://{}", portal.address);
        {
            let mut s = state.lock().expect("state");
            s.mail = base.clone();
            s.portal = portal_base.clone();
        }
        Mail {
            base,
            portal: portal_base,
            state,
            _servers: (mail, portal),
        }
    }

    /// A URL on the mail.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Ends every session, as a server does when they time out.
    pub fn expire_sessions(&self) {
        self.lock().sessions.clear();
    }

    /// The state, locked.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, MailState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every secret value the servers issued: session ids and SSO cookies.
    pub fn secrets(&self) -> Vec<String> {
        let state = self.lock();
        state
            .issued
            .iter()
            .chain(&state.sso_issued)
            .cloned()
            .collect()
    }
}

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>\
         <body><h1>{title}</h1>{body}</body></html>"
    ))
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

fn token(state: &mut MailState, kind: &str) -> String {
    state.next += 1;
    // Unguessable enough for a fixture, and unique per server run.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{kind}{:x}{:08x}{}", state.next, nanos, std::process::id())
}

fn logged_in(state: &MailState, headers: &HeaderMap) -> bool {
    cookie(headers, "sid").is_some_and(|sid| state.sessions.contains(sid))
}

fn mail_router() -> Router<Arc<Mutex<MailState>>> {
    Router::new()
        .route("/", get(home))
        .route("/login", get(login_form).post(login))
        .route("/2fa", get(second_factor_form).post(second_factor))
        .route("/welcome", get(welcome))
        .route("/inbox", get(inbox))
        .route("/compose", get(compose_form).post(compose))
        .route("/sent", get(sent))
}

async fn sent(State(state): Shared, headers: HeaderMap) -> Response {
    let state = state.lock().unwrap_or_else(|p| p.into_inner());
    if !logged_in(&state, &headers) {
        return Redirect::to("/login").into_response();
    }
    let items: String = state
        .messages
        .iter()
        .map(|(to, message)| {
            format!(
                "<li>To {}: {}</li>",
                forager_queen::report::escape(to),
                forager_queen::report::escape(message)
            )
        })
        .collect();
    page("Sent", &format!("<ul>{items}</ul>")).into_response()
}

async fn home(State(state): Shared, headers: HeaderMap) -> Html<String> {
    let state = state.lock().unwrap_or_else(|p| p.into_inner());
    if logged_in(&state, &headers) {
        page(
            "Mail",
            &format!(
                "<p>{SIGNED_IN}</p><a href=\"/inbox\">Inbox</a> <a href=\"/compose\">Compose</a>"
            ),
        )
    } else {
        page("Mail", "<p>Welcome.</p><a href=\"/login\">Sign in</a>")
    }
}

async fn login_form(State(state): Shared) -> Html<String> {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let csrf = token(&mut state, "csrf");
    state.csrf.insert(csrf.clone());
    page(
        "Sign in",
        &format!(
            "<form method=post action=\"/login\" name=login>\
             <input type=hidden name=csrf value=\"{csrf}\">\
             <label for=u>Username</label><input id=u name=username autocomplete=username>\
             <label for=p>Password</label><input id=p name=password type=password>\
             <button>Sign in</button></form>"
        ),
    )
}

async fn login(State(state): Shared, Form(form): Form<HashMap<String, String>>) -> Response {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let csrf_ok = form.get("csrf").is_some_and(|t| state.csrf.remove(t));
    let user_ok = form.get("username").map(|u| u.trim()) == Some(USERNAME)
        && form.get("password").map(String::as_str) == Some(PASSWORD);
    if !csrf_ok {
        return page(
            "Sign in",
            "<p>The form expired. <a href=\"/login\">Sign in</a></p>",
        )
        .into_response();
    }
    if !user_ok {
        return page(
            "Sign in",
            "<p>Wrong username or password. <a href=\"/login\">Try again</a></p>",
        )
        .into_response();
    }
    state.logins += 1;
    let pending = token(&mut state, "pending");
    state.pending.insert(pending.clone());
    // Through the portal's single sign-on hop, as many logins go.
    let hop = format!("{}/sso?back={}/2fa", state.portal, state.mail);
    (
        [(
            header::SET_COOKIE,
            format!("pending={pending}; Path=/; HttpOnly; SameSite=Lax"),
        )],
        Redirect::to(&hop),
    )
        .into_response()
}

async fn second_factor_form() -> Html<String> {
    page(
        "Two-step verification",
        "<form method=post action=\"/2fa\" name=verification>\
         <label for=c>One-time code</label><input id=c name=code inputmode=numeric>\
         <button>Verify</button></form>",
    )
}

fn totp_accepts(code: &str) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    [now, now.saturating_sub(30)].iter().any(|t| {
        forager_protocol::capsule::totp(TOTP_SECRET, *t)
            .is_ok_and(|expected| expected == code.trim())
    })
}

async fn second_factor(
    State(state): Shared,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let pending = cookie(&headers, "pending").map(str::to_owned);
    let pending_ok = pending.as_ref().is_some_and(|p| state.pending.contains(p));
    if !pending_ok {
        return Redirect::to("/login").into_response();
    }
    if !form.get("code").is_some_and(|c| totp_accepts(c)) {
        return page(
            "Two-step verification",
            "<p>That code is not right. <a href=\"/2fa\">Try again</a></p>",
        )
        .into_response();
    }
    if let Some(p) = &pending {
        state.pending.remove(p);
    }
    let sid = token(&mut state, "sid");
    state.sessions.insert(sid.clone());
    state.issued.push(sid.clone());
    (
        [(
            header::SET_COOKIE,
            format!("sid={sid}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600"),
        )],
        Redirect::to("/welcome"),
    )
        .into_response()
}

async fn welcome(State(state): Shared, headers: HeaderMap) -> Response {
    let state = state.lock().unwrap_or_else(|p| p.into_inner());
    if !logged_in(&state, &headers) {
        return Redirect::to("/login").into_response();
    }
    page(
        "Welcome",
        &format!(
            "<p>{SIGNED_IN}</p>\
             <script>localStorage.setItem('mail.device', 'trusted-laptop');</script>\
             <a href=\"/inbox\">Inbox</a>"
        ),
    )
    .into_response()
}

async fn inbox(State(state): Shared, headers: HeaderMap) -> Response {
    let state = state.lock().unwrap_or_else(|p| p.into_inner());
    if !logged_in(&state, &headers) {
        return Redirect::to("/login").into_response();
    }
    page(
        "Inbox of ada",
        &format!(
            "<p>{SIGNED_IN}</p><p>Device: <span id=device></span></p>\
             <script>document.getElementById('device').textContent = \
             localStorage.getItem('mail.device') || 'unknown';</script>\
             <ul><li>From Charles: The engine</li><li>From Mary: Lunch</li></ul>\
             <a href=\"/compose\">Compose</a>"
        ),
    )
    .into_response()
}

async fn compose_form(State(state): Shared, headers: HeaderMap) -> Response {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    if !logged_in(&state, &headers) {
        return Redirect::to("/login").into_response();
    }
    let csrf = token(&mut state, "csrf");
    state.csrf.insert(csrf.clone());
    page(
        "Compose",
        &format!(
            "<form method=post action=\"/compose\" name=compose>\
             <input type=hidden name=csrf value=\"{csrf}\">\
             <label for=t>To</label><input id=t name=to>\
             <label for=m>Message</label><textarea id=m name=message></textarea>\
             <button>Send</button></form>"
        ),
    )
    .into_response()
}

async fn compose(
    State(state): Shared,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    if !logged_in(&state, &headers) {
        return Redirect::to("/login").into_response();
    }
    if !form.get("csrf").is_some_and(|t| state.csrf.remove(t)) {
        return page("Compose", "<p>The form expired.</p>").into_response();
    }
    state.sent += 1;
    let to = form.get("to").cloned().unwrap_or_default();
    let message = form.get("message").cloned().unwrap_or_default();
    state
        .messages
        .push((to.trim().to_owned(), message.trim().to_owned()));
    page(
        "Message sent",
        &format!(
            "<p>Your message to {} was sent.</p>",
            forager_queen::report::escape(&to)
        ),
    )
    .into_response()
}

fn portal_router() -> Router<Arc<Mutex<MailState>>> {
    Router::new()
        .route("/", get(portal_home))
        .route("/sso", get(portal_sso))
}

fn record(state: &mut MailState, headers: &HeaderMap) {
    let cookies = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join("; ");
    state.portal_cookies.push(cookies);
}

async fn portal_home(State(state): Shared, headers: HeaderMap) -> Html<String> {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    record(&mut state, &headers);
    page(
        "Portal",
        &format!(
            "<p>Your services.</p><a href=\"{}/inbox\">Open mail</a>",
            state.mail
        ),
    )
}

async fn portal_sso(
    State(state): Shared,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    record(&mut state, &headers);
    let back = query.get("back").cloned().unwrap_or_default();
    if !back.starts_with(&state.mail) {
        return page("Portal", "<p>Unknown service.</p>").into_response();
    }
    let sso = token(&mut state, "sso");
    state.sso_issued.push(sso.clone());
    (
        [(
            header::SET_COOKIE,
            format!("portal_sso={sso}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600"),
        )],
        Redirect::to(&back),
    )
        .into_response()
}
