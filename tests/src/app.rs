//! A fixture web application that behaves like a real admin interface (modelled on Django's
//! admin): a login with CSRF tokens and session cookies, a dashboard with recent actions, and
//! a list, add, change and delete pages for groups. Its state lives in a SQLite file that every
//! request opens afresh, so copying the snapshot taken at start over it between requests
//! ([`AdminApp::reset_command`]) resets the application — the way forager resets a sandbox.
//! Only the count of POSTs to the add-group form lives in memory, so a test can see what a run
//! tried even after a reset.
//!
//! Routes: `/`, `/about/`, `/blog/` (the public site, "View site"); `/admin/login/` (GET, POST),
//! `/admin/logout/` (POST); and, behind the login (else a 302 to `/admin/login/?next=…`):
//! `/admin/` (the dashboard, with "Recent actions"), `/admin/auth/`, `/admin/auth/group/`
//! (`?q=` searches), `/admin/auth/group/add/`, `/admin/auth/group/<id>/change/` and
//! `/admin/auth/group/<id>/delete/` (GET, POST), `/admin/auth/user/`, `/admin/auth/user/add/`,
//! `/admin/password_change/` (GET, POST) and its `done/`. Anything else is a 404. Every POST needs
//! its form's `csrfmiddlewaretoken` to match the `csrftoken` cookie (else a 403, "CSRF
//! verification failed"). As in Django's stylesheet, some labels are capitalised by CSS only:
//! the markup says "View site", "Change password", "Log out", "Add group", "Save"; a browser
//! shows (and `innerText` reads) "VIEW SITE", "CHANGE PASSWORD", "LOG OUT", "ADD GROUP", "SAVE".
//!
//! Pages are plain HTML forms built with `format!`; every value from the database or the
//! request goes through [`escape`]. Failures a request can cause are pages (403, 404, and a
//! database error is a 500 with its text), never panics.

use axum::Router;
use axum::extract::{Form, FromRequest, FromRequestParts, Path, Query, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use forager_queen::http::LoopbackServer;
use forager_queen::report::escape;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The staff user's name.
pub const USERNAME: &str = "admin";
/// The staff user's password, as the application starts (and after a reset).
pub const PASSWORD: &str = "correct horse";

/// The admin application, served on 127.0.0.1 until stopped or dropped.
pub struct AdminApp {
    server: LoopbackServer,
    base: String,
    database: PathBuf,
    snapshot: PathBuf,
    shared: Arc<Shared>,
}

impl AdminApp {
    /// Creates `dir/app.sqlite` (schema, the user `admin` with password `correct horse`, three
    /// groups "staff", "support", "billing", a few recent actions with timestamps), copies it to
    /// `dir/snapshot.sqlite`, and serves the app on 127.0.0.1 (ephemeral port).
    pub async fn start(dir: &std::path::Path) -> AdminApp {
        let database = dir.join("app.sqlite");
        let snapshot = dir.join("snapshot.sqlite");
        std::fs::create_dir_all(dir).expect("the fixture's directory can be created");
        let _ = std::fs::remove_file(&database);
        create(&database).unwrap_or_else(|e| panic!("creating {}: {e}", database.display()));
        std::fs::copy(&database, &snapshot).expect("the snapshot is written");
        let shared = Arc::new(Shared {
            database: database.clone(),
            add_posts: AtomicU64::new(0),
        });
        let server = LoopbackServer::start(router(shared.clone()))
            .await
            .expect("a loopback port");
        AdminApp {
            base: format!("http://{}", server.address),
            server,
            database,
            snapshot,
            shared,
        }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The SQLite file the application reads and writes.
    pub fn database(&self) -> &std::path::Path {
        &self.database
    }

    /// The copy of the database taken at start.
    pub fn snapshot(&self) -> &std::path::Path {
        &self.snapshot
    }

    /// A shell command that restores the snapshot: `cp 'SNAPSHOT' 'DB'`.
    pub fn reset_command(&self) -> String {
        format!("cp {} {}", quote(&self.snapshot), quote(&self.database))
    }

    /// Rows of the group table with this exact name, read from the SQLite file.
    pub fn groups_named(&self, name: &str) -> usize {
        let db = Connection::open_with_flags(&self.database, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the database opens");
        let count: i64 = db
            .query_row(
                "SELECT COUNT(*) FROM auth_group WHERE name = ?1",
                [name],
                |row| row.get(0),
            )
            .expect("the group table is readable");
        usize::try_from(count).unwrap_or(0)
    }

    /// How many POSTs to the add-group form the server received, successful or not (counted in
    /// memory: a reset leaves it alone).
    pub fn add_posts(&self) -> u64 {
        self.shared.add_posts.load(Ordering::SeqCst)
    }

    /// Stops serving and waits until open connections are done.
    pub async fn stop(self) {
        self.server.stop().await;
    }
}

/// What the handlers share.
struct Shared {
    database: PathBuf,
    add_posts: AtomicU64,
}

type App = State<Arc<Shared>>;

/// A page: reads its request and a connection of its own, answers.
type Page = fn(&Connection, &Req) -> Result<Response, Failure>;

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(public))
        .route("/about/", get(public))
        .route("/blog/", get(public))
        .route("/admin", get(|| async { found("/admin/") }))
        .route("/admin/", get(page(index)))
        .route("/admin/login/", get(page(login)).post(page(login_post)))
        .route("/admin/logout/", post(page(logout)))
        .route(
            "/admin/password_change/",
            get(page(password_change)).post(page(password_change_post)),
        )
        .route("/admin/password_change/done/", get(page(password_done)))
        .route("/admin/auth/", get(page(app_index)))
        .route("/admin/auth/group/", get(page(group_list)))
        .route(
            "/admin/auth/group/add/",
            get(page(group_add)).post(|app: App, req: Req| {
                app.add_posts.fetch_add(1, Ordering::SeqCst);
                run(app, req, group_add_post)
            }),
        )
        .route(
            "/admin/auth/group/{id}/change/",
            get(page(group_change)).post(page(group_change_post)),
        )
        .route(
            "/admin/auth/group/{id}/delete/",
            get(page(group_delete)).post(page(group_delete_post)),
        )
        .route("/admin/auth/user/", get(page(user_list)))
        .route("/admin/auth/user/add/", get(page(user_add)))
        .fallback(page(missing))
        .with_state(shared)
}

/// An axum handler for a page.
fn page(
    page: Page,
) -> impl Fn(App, Req) -> std::pin::Pin<Box<dyn Future<Output = Response> + Send>>
+ Clone
+ Send
+ Sync
+ 'static {
    move |app, req| Box::pin(run(app, req, page))
}

/// Runs a page on a blocking thread with a connection opened for this request only (so a file
/// copied over the database between requests is what the next one reads).
async fn run(State(app): App, req: Req, page: Page) -> Response {
    let answered = tokio::task::spawn_blocking(move || {
        let db = Connection::open_with_flags(&app.database, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        page(&db, &req)
    })
    .await;
    match answered {
        Ok(Ok(response)) => response,
        Ok(Err(failure)) => failure.into_response(),
        Err(join) => Failure(join.to_string()).into_response(),
    }
}

/// A failure of the server's own (the database's): a 500 page with its text.
struct Failure(String);

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Failure {
        Failure(error.to_string())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let body = format!("<pre>{}</pre>", escape(&self.0));
        plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Server Error (500)",
            &body,
        )
    }
}

type Answer = Result<Response, Failure>;

/// The current time as the database stores it: `2026-11-23T19:01:05.123Z` (UTC).
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

// ---------------------------------------------------------------------------------------------
// Requests

/// What a page reads of its request. Extracting it never fails: a body that is not a form is
/// an empty form (which then fails the CSRF check, as in Django).
struct Req {
    /// Path and query as asked (`/admin/auth/group/?q=st`), for `next`.
    target: String,
    /// The route's `{id}`, if it has one.
    id: String,
    query: HashMap<String, String>,
    cookies: HashMap<String, String>,
    /// A POST's fields.
    form: HashMap<String, String>,
}

impl Req {
    fn field(&self, name: &str) -> &str {
        self.form.get(name).map_or("", String::as_str)
    }

    fn param(&self, name: &str) -> &str {
        self.query.get(name).map_or("", String::as_str)
    }
}

impl<S: Send + Sync> FromRequest<S> for Req {
    type Rejection = Infallible;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Req, Infallible> {
        let (mut parts, body) = request.into_parts();
        let id = Path::<HashMap<String, String>>::from_request_parts(&mut parts, state)
            .await
            .ok()
            .and_then(|Path(mut params)| params.remove("id"))
            .unwrap_or_default();
        let query = Query::<HashMap<String, String>>::try_from_uri(&parts.uri)
            .map(|Query(query)| query)
            .unwrap_or_default();
        let cookies = parts
            .headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
            .collect();
        let target = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let form = if parts.method == Method::POST {
            let request = axum::extract::Request::from_parts(parts, body);
            Form::<HashMap<String, String>>::from_request(request, state)
                .await
                .map(|Form(form)| form)
                .unwrap_or_default()
        } else {
            HashMap::new()
        };
        Ok(Req {
            target,
            id,
            query,
            cookies,
            form,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Responses

fn plain(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>{STYLE}</style></head><body><div id=\"content\" class=\"content\">\
         <h1>{t}</h1>{body}</div></body></html>",
        t = escape(title)
    );
    (status, Html(html)).into_response()
}

/// A 302 to `to`.
fn found(to: &str) -> Response {
    // Keep the header valid whatever `next` held.
    let location: String = to
        .bytes()
        .map(|b| match b {
            0x21..=0x7e => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// Percent-encodes a query value, keeping `/` (as Django does for `next`).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn quote(path: &std::path::Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', "'\\''"))
}

const STYLE: &str = "\
:root{--primary:#79aec8;--secondary:#417690;--accent:#f5dd5d;--fg:#333;--bg:#fff;\
--link:#447e9b;--border:#ccc;--darkened:#f8f8f8;--success:#dfd;--warning:#ffc;--error:#ba2121}\
html[data-theme=dark]{--fg:#eee;--bg:#121212;--link:#81d4fa;--border:#353535;--darkened:#212121;\
--success:#006b1b;--warning:#583305;--error:#e35f5f}\
@media (prefers-color-scheme:dark){html[data-theme=auto]{--fg:#eee;--bg:#121212;--link:#81d4fa;\
--border:#353535;--darkened:#212121;--success:#006b1b;--warning:#583305;--error:#e35f5f}}\
body{margin:0;font:14px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}\
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}\
#header{display:flex;justify-content:space-between;align-items:center;gap:20px;\
padding:10px 40px;background:var(--secondary);color:#ffc}\
#site-name{margin:0;font-size:22px}#site-name a{color:var(--accent)}\
#user-tools{font-size:11px;letter-spacing:.5px}\
#user-tools a,#logout-form button{color:#fff;text-transform:uppercase;\
border-bottom:1px solid #fff4}\
#logout-form{display:inline}#logout-form button,.theme-toggle{background:none;border:0;padding:0;\
font:inherit;cursor:pointer;color:#fff}.theme-toggle{margin-left:10px;border:1px solid #fff8;\
border-radius:4px;padding:0 6px}\
.breadcrumbs{background:var(--primary);padding:10px 40px;color:#c4dce8}.breadcrumbs a{color:#fff}\
.content{padding:20px 40px}h1{font-weight:300;font-size:20px;margin:0 0 20px}\
h2{font-size:16px;margin:10px 0}\
.module{border:1px solid var(--border);margin-bottom:30px;background:var(--bg)}\
.module caption,.module h2{background:var(--primary);color:#fff;text-align:left;padding:8px;\
margin:0;font-size:13px;font-weight:400}.module caption a{color:#fff}\
table{border-collapse:collapse;width:100%}th,td{padding:8px;text-align:left;\
border-bottom:1px solid var(--border)}thead th{background:var(--darkened);font-size:11px;\
text-transform:uppercase}\
#content-main{float:left;width:60%}#content-related{float:right;width:32%}\
#content:after{content:'';display:block;clear:both}\
.actionlist{list-style:none;padding:0 10px}.actionlist li{margin:8px 0}\
.module h3{margin:10px;font-size:13px}.mini{font-size:11px}.quiet{color:#999}\
.messagelist{list-style:none;margin:0 0 20px;padding:0}\
.messagelist li{padding:10px 20px;background:var(--success)}\
.messagelist li.warning{background:var(--warning)}\
.errornote{border:1px solid var(--error);color:var(--error);padding:10px}\
.errorlist{color:var(--error);list-style:none;padding:0;margin:0 0 5px}\
.object-tools{float:right;list-style:none;margin:-45px 0 0}\
.object-tools a{background:#888;color:#fff;border-radius:15px;padding:4px 12px;font-size:11px;\
text-transform:uppercase;letter-spacing:.5px}\
.form-row{padding:10px;border-bottom:1px solid var(--border)}.form-row label{display:inline-block;\
width:200px}label.required{font-weight:700}\
.submit-row{display:flex;gap:10px;align-items:center;padding:12px;background:var(--darkened);\
border:1px solid var(--border)}input[type=submit],.button{padding:8px 14px;border:0;\
border-radius:4px;background:var(--primary);color:#fff;cursor:pointer}\
input.default{background:var(--secondary);font-weight:700;text-transform:uppercase}\
.deletelink{margin-left:auto;color:var(--error)}\
.paginator{padding:8px;border-top:1px solid var(--border)}\
#toolbar{padding:8px;background:var(--darkened)}\
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}\
.skip-to-content-link{position:absolute;left:-999px}.skip-to-content-link:focus{left:10px}";

/// The theme: read back from localStorage before the page paints; "Toggle theme" cycles
/// auto → light → dark (presentation only).
const THEME: &str = "\
try{var t=localStorage.getItem('theme');if(t)document.documentElement.dataset.theme=t;}catch(e){}\
document.addEventListener('DOMContentLoaded',function(){\
document.querySelectorAll('.theme-toggle').forEach(function(button){\
button.addEventListener('click',function(){var order=['auto','light','dark'],\
now=document.documentElement.dataset.theme||'auto',next=order[(order.indexOf(now)+1)%3];\
document.documentElement.dataset.theme=next;\
try{localStorage.setItem('theme',next);}catch(e){}});});});";

/// An admin page: the header (`tools`: the user's links, or nothing before login), the
/// breadcrumbs, messages, the heading and the content.
fn frame(h1: &str, tools: &str, crumbs: &str, messages: &str, content: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en-us\" data-theme=\"auto\"><head><meta charset=\"utf-8\">\
         <title>{h} | Site admin</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">\
         <style>{STYLE}</style><script>{THEME}</script></head><body>\
         <a href=\"#content-start\" class=\"skip-to-content-link\">Skip to main content</a>\
         <div id=\"container\"><header id=\"header\"><div id=\"branding\"><div id=\"site-name\">\
         <a href=\"/admin/\">Site administration</a></div></div>{tools}</header>{crumbs}\
         <main id=\"main\"><div id=\"content-start\" class=\"content\">{messages}\
         <div id=\"content\"><h1>{h}</h1>{content}</div></div></main>\
         <footer id=\"footer\"></footer></div></body></html>",
        h = escape(h1)
    )
}

/// `Home › …links › here`; each link an (href, text) pair.
fn breadcrumbs(links: &[(&str, &str)], here: &str) -> String {
    let mut trail = String::from("<a href=\"/admin/\">Home</a>");
    for (href, text) in links {
        trail.push_str(&format!(" › <a href=\"{href}\">{}</a>", escape(text)));
    }
    trail.push_str(&format!(" › {}", escape(here)));
    format!("<nav aria-label=\"Breadcrumbs\"><div class=\"breadcrumbs\">{trail}</div></nav>")
}

const AUTH: (&str, &str) = ("/admin/auth/", "Authentication and Authorization");
const GROUPS: (&str, &str) = ("/admin/auth/group/", "Groups");
const USERS: (&str, &str) = ("/admin/auth/user/", "Users");

/// A page for a logged-in user: shows (and clears) the session's message, sets the CSRF
/// cookie the page's forms (the logout form at least) were made with, and is never cached.
fn admin_page(
    db: &Connection,
    user: &User,
    csrf: &Csrf,
    h1: &str,
    crumbs: &str,
    content: &str,
) -> Answer {
    let flash: Option<String> = db
        .query_row(
            "SELECT flash FROM django_session WHERE session_key = ?1",
            [&user.session],
            |row| row.get(0),
        )
        .optional()?
        .flatten();
    let messages = match flash {
        Some(message) => {
            db.execute(
                "UPDATE django_session SET flash = NULL WHERE session_key = ?1",
                [&user.session],
            )?;
            format!("<ul class=\"messagelist\">{message}</ul>")
        }
        None => String::new(),
    };
    let tools = format!(
        "<div id=\"user-tools\">Welcome, <strong>{name}</strong>. \
         <a href=\"/\">View site</a> / <a href=\"/admin/password_change/\">Change password</a> / \
         <form id=\"logout-form\" method=\"post\" action=\"/admin/logout/\">{token}\
         <button type=\"submit\">Log out</button></form>\
         <button type=\"button\" class=\"theme-toggle\">Toggle theme</button></div>",
        name = escape(&user.username),
        token = csrf.field()
    );
    Ok(admin_response(
        csrf,
        frame(h1, &tools, crumbs, &messages, content),
    ))
}

fn admin_response(csrf: &Csrf, html: String) -> Response {
    let mut response = with_cookie(Html(html).into_response(), &csrf.cookie());
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=0, no-cache, no-store, must-revalidate, private"),
    );
    response
}

/// Stores a message (HTML, its values escaped) for the session's next page.
fn flash(db: &Connection, user: &User, level: &str, html: &str) -> Result<(), Failure> {
    db.execute(
        "UPDATE django_session SET flash = ?1 WHERE session_key = ?2",
        [&format!("<li class=\"{level}\">{html}</li>"), &user.session],
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Sessions and CSRF

/// The logged-in user of a request.
struct User {
    id: i64,
    username: String,
    session: String,
}

fn current_user(db: &Connection, req: &Req) -> Result<Option<User>, Failure> {
    let Some(key) = req.cookies.get("sessionid") else {
        return Ok(None);
    };
    Ok(db
        .query_row(
            "SELECT u.id, u.username FROM django_session s JOIN auth_user u ON u.id = s.user_id \
             WHERE s.session_key = ?1",
            [key],
            |row| {
                Ok(User {
                    id: row.get(0)?,
                    username: row.get(1)?,
                    session: key.clone(),
                })
            },
        )
        .optional()?)
}

/// To the login page, coming back here after.
fn to_login(req: &Req) -> Response {
    found(&format!("/admin/login/?next={}", encode(&req.target)))
}

/// The logged-in user, or the redirect to the login page.
macro_rules! user_or_login {
    ($db:expr, $req:expr) => {
        match current_user($db, $req)? {
            Some(user) => user,
            None => return Ok(to_login($req)),
        }
    };
}

const ALPHABET: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// 32 random letters and digits.
fn random_string() -> String {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

fn position(b: u8) -> Option<usize> {
    ALPHABET.iter().position(|&a| a == b)
}

/// A CSRF secret: the `csrftoken` cookie (kept while the browser has a valid one, so pages
/// open in several tabs all stay submittable), new otherwise. Each form gets it masked with a
/// new random mask, as Django does, so the field differs on every visit.
struct Csrf(String);

impl Csrf {
    fn of(req: &Req) -> Csrf {
        Csrf(
            req.cookies
                .get("csrftoken")
                .filter(|secret| well_formed(secret))
                .cloned()
                .unwrap_or_else(random_string),
        )
    }

    fn field(&self) -> String {
        let mask = random_string();
        let masked: String = self
            .0
            .bytes()
            .zip(mask.bytes())
            .filter_map(|(s, m)| Some(ALPHABET[(position(s)? + position(m)?) % 62]))
            .map(char::from)
            .collect();
        format!("<input type=\"hidden\" name=\"csrfmiddlewaretoken\" value=\"{mask}{masked}\">")
    }

    fn cookie(&self) -> String {
        format!(
            "csrftoken={}; Max-Age=31449600; Path=/; SameSite=Lax",
            self.0
        )
    }
}

fn well_formed(secret: &str) -> bool {
    secret.len() == 32 && secret.bytes().all(|b| position(b).is_some())
}

/// The secret a form token carries: the token itself (32 characters), or a masked one (64).
fn unmask(token: &str) -> Option<String> {
    match token.len() {
        32 if well_formed(token) => Some(token.to_owned()),
        64 if token.is_ascii() => {
            let (mask, masked) = token.split_at(32);
            mask.bytes()
                .zip(masked.bytes())
                .map(|(m, c)| {
                    Some(char::from(
                        ALPHABET[(position(c)? + 62 - position(m)?) % 62],
                    ))
                })
                .collect()
        }
        _ => None,
    }
}

/// The 403 page of a POST whose `csrfmiddlewaretoken` does not match its `csrftoken` cookie.
fn csrf_failure(req: &Req) -> Option<Response> {
    let cookie = req.cookies.get("csrftoken").filter(|c| well_formed(c));
    let token = req
        .form
        .get("csrfmiddlewaretoken")
        .filter(|t| !t.is_empty());
    let reason = match (cookie, token) {
        (None, _) => "CSRF cookie not set.",
        (_, None) => "CSRF token missing.",
        (Some(secret), Some(token)) if unmask(token).as_ref() == Some(secret) => return None,
        (Some(_), Some(token)) if token.len() != 32 && token.len() != 64 => {
            "CSRF token from POST has incorrect length."
        }
        _ => "CSRF token from POST incorrect.",
    };
    Some(plain(
        StatusCode::FORBIDDEN,
        "Forbidden (403)",
        &format!(
            "<p>CSRF verification failed. Request aborted.</p>\
             <p>Reason given for failure:</p><pre>    {reason}</pre>"
        ),
    ))
}

/// Where to go after logging in: `next` if it is a path of this site.
fn safe_next(next: &str) -> &str {
    if next.starts_with('/') && !next.starts_with("//") && !next.contains('\\') {
        next
    } else {
        "/admin/"
    }
}

// ---------------------------------------------------------------------------------------------
// Login, logout, password change

fn login(db: &Connection, req: &Req) -> Answer {
    if current_user(db, req)?.is_some() {
        return Ok(found(safe_next(req.param("next"))));
    }
    Ok(login_page(&Csrf::of(req), "", "", req.param("next")))
}

fn login_page(csrf: &Csrf, error: &str, username: &str, next: &str) -> Response {
    let content = format!(
        "{error}<div id=\"content-main\"><form action=\"/admin/login/\" method=\"post\" \
         id=\"login-form\">{token}\
         <div class=\"form-row\"><label class=\"required\" for=\"id_username\">Username:</label> \
         <input type=\"text\" name=\"username\" autofocus autocapitalize=\"none\" \
         autocomplete=\"username\" maxlength=\"150\" required id=\"id_username\" value=\"{user}\">\
         </div><div class=\"form-row\"><label class=\"required\" for=\"id_password\">Password:\
         </label> <input type=\"password\" name=\"password\" autocomplete=\"current-password\" \
         required id=\"id_password\"><input type=\"hidden\" name=\"next\" value=\"{next}\"></div>\
         <div class=\"submit-row\"><input type=\"submit\" value=\"Log in\"></div></form></div>",
        token = csrf.field(),
        user = escape(username),
        next = escape(next),
    );
    admin_response(csrf, frame("Log in", "", "", "", &content))
}

fn login_post(db: &Connection, req: &Req) -> Answer {
    if let Some(denied) = csrf_failure(req) {
        return Ok(denied);
    }
    let user: Option<i64> = db
        .query_row(
            "SELECT id FROM auth_user WHERE username = ?1 AND password = ?2 AND is_staff = 1",
            [req.field("username"), req.field("password")],
            |row| row.get(0),
        )
        .optional()?;
    let Some(user) = user else {
        let error = "<p class=\"errornote\">Please enter the correct username and password. \
                     Note that both fields may be case-sensitive.</p>";
        return Ok(login_page(
            &Csrf::of(req),
            error,
            req.field("username"),
            req.field("next"),
        ));
    };
    let key = random_string();
    db.execute(
        &format!(
            "INSERT INTO django_session (session_key, user_id, created) VALUES (?1, ?2, {NOW})"
        ),
        rusqlite::params![key, user],
    )?;
    db.execute(
        &format!("UPDATE auth_user SET last_login = {NOW} WHERE id = ?1"),
        [user],
    )?;
    Ok(with_cookie(
        found(safe_next(req.field("next"))),
        &format!("sessionid={key}; HttpOnly; Path=/; SameSite=Lax"),
    ))
}

fn logout(db: &Connection, req: &Req) -> Answer {
    if let Some(denied) = csrf_failure(req) {
        return Ok(denied);
    }
    if let Some(key) = req.cookies.get("sessionid") {
        db.execute("DELETE FROM django_session WHERE session_key = ?1", [key])?;
    }
    let content = "<p>Thanks for spending some quality time with the web site today.</p>\
                   <p><a href=\"/admin/login/\">Log in again</a></p>";
    let html = frame(
        "Logged out",
        "",
        &breadcrumbs(&[], "Logged out"),
        "",
        content,
    );
    Ok(with_cookie(
        admin_response(&Csrf::of(req), html),
        "sessionid=\"\"; Max-Age=0; Path=/; SameSite=Lax",
    ))
}

const PASSWORD_FIELDS: [(&str, &str, &str); 3] = [
    ("old_password", "Old password:", "current-password"),
    ("new_password1", "New password:", "new-password"),
    (
        "new_password2",
        "New password confirmation:",
        "new-password",
    ),
];

fn password_change(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    password_form(db, &user, &Csrf::of(req), &HashMap::new())
}

fn password_form(
    db: &Connection,
    user: &User,
    csrf: &Csrf,
    errors: &HashMap<&str, &str>,
) -> Answer {
    let mut rows = String::new();
    for (name, label, autocomplete) in PASSWORD_FIELDS {
        let error = errors
            .get(name)
            .map(|e| format!("<ul class=\"errorlist\"><li>{e}</li></ul>"))
            .unwrap_or_default();
        rows.push_str(&format!(
            "<div class=\"form-row field-{name}\">{error}\
             <label class=\"required\" for=\"id_{name}\">{label}</label> \
             <input type=\"password\" name=\"{name}\" autocomplete=\"{autocomplete}\" \
             required id=\"id_{name}\"></div>"
        ));
    }
    let note = if errors.is_empty() {
        ""
    } else {
        "<p class=\"errornote\">Please correct the errors below.</p>"
    };
    let content = format!(
        "<div id=\"content-main\"><form method=\"post\" action=\"/admin/password_change/\">{token}\
         {note}<p>Please enter your old password, for security’s sake, and then enter your new \
         password twice so we can verify you typed it in correctly.</p>\
         <fieldset class=\"module aligned wide\">{rows}</fieldset><div class=\"submit-row\">\
         <input type=\"submit\" value=\"Change my password\" class=\"default\"></div></form></div>",
        token = csrf.field()
    );
    let crumbs = breadcrumbs(&[], "Password change");
    admin_page(db, user, csrf, "Password change", &crumbs, &content)
}

fn password_change_post(db: &Connection, req: &Req) -> Answer {
    if let Some(denied) = csrf_failure(req) {
        return Ok(denied);
    }
    let user = user_or_login!(db, req);
    let current: String = db.query_row(
        "SELECT password FROM auth_user WHERE id = ?1",
        [user.id],
        |row| row.get(0),
    )?;
    let mut errors = HashMap::new();
    for (name, _, _) in PASSWORD_FIELDS {
        if req.field(name).is_empty() {
            errors.insert(name, "This field is required.");
        }
    }
    if !req.field("old_password").is_empty() && req.field("old_password") != current {
        errors.insert(
            "old_password",
            "Your old password was entered incorrectly. Please enter it again.",
        );
    }
    if !req.field("new_password2").is_empty()
        && req.field("new_password1") != req.field("new_password2")
    {
        errors.insert("new_password2", "The two password fields didn’t match.");
    }
    if !errors.is_empty() {
        return password_form(db, &user, &Csrf::of(req), &errors);
    }
    db.execute(
        "UPDATE auth_user SET password = ?1 WHERE id = ?2",
        rusqlite::params![req.field("new_password1"), user.id],
    )?;
    // The other sessions of this user end, this one stays (Django's update_session_auth_hash).
    db.execute(
        "DELETE FROM django_session WHERE user_id = ?1 AND session_key != ?2",
        rusqlite::params![user.id, user.session],
    )?;
    Ok(found("/admin/password_change/done/"))
}

fn password_done(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let crumbs = breadcrumbs(&[], "Password change");
    let content = "<p>Your password was changed.</p>";
    admin_page(
        db,
        &user,
        &Csrf::of(req),
        "Password change successful",
        &crumbs,
        content,
    )
}

// ---------------------------------------------------------------------------------------------
// The dashboard and the application index

const APPS: &str = "<div class=\"app-auth module\"><table><caption>\
    <a href=\"/admin/auth/\" class=\"section\" \
    title=\"Models in the Authentication and Authorization application\">\
    Authentication and Authorization</a></caption><thead class=\"visually-hidden\"><tr>\
    <th scope=\"col\">Model name</th><td>Add link</td><td>Change or view list link</td></tr>\
    </thead><tbody><tr class=\"model-group\"><th scope=\"row\" id=\"auth-group\">\
    <a href=\"/admin/auth/group/\">Groups</a></th>\
    <td><a href=\"/admin/auth/group/add/\" class=\"addlink\">Add</a></td>\
    <td><a href=\"/admin/auth/group/\" class=\"changelink\">Change</a></td></tr>\
    <tr class=\"model-user\"><th scope=\"row\" id=\"auth-user\">\
    <a href=\"/admin/auth/user/\">Users</a></th>\
    <td><a href=\"/admin/auth/user/add/\" class=\"addlink\">Add</a></td>\
    <td><a href=\"/admin/auth/user/\" class=\"changelink\">Change</a></td></tr></tbody>\
    </table></div>";

fn index(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let mut statement = db.prepare(
        "SELECT a.action, a.object_repr, g.id, a.action_time FROM django_admin_log a \
         LEFT JOIN auth_group g ON g.id = a.object_id \
         ORDER BY a.action_time DESC, a.id DESC LIMIT 10",
    )?;
    let actions = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<i64>>(2)?,
                row.get::<_, String>(3)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut items = String::new();
    for (action, name, id, at) in &actions {
        let class = match action.as_str() {
            "Added" => "addlink",
            "Deleted" => "deletelink",
            _ => "changelink",
        };
        let name = match id {
            Some(id) if action != "Deleted" => {
                format!(
                    "<a href=\"/admin/auth/group/{id}/change/\">{}</a>",
                    escape(name)
                )
            }
            _ => escape(name),
        };
        items.push_str(&format!(
            "<li class=\"{class}\">{action} group “{name}”<br><span class=\"mini quiet\">\
             <time datetime=\"{iso}\" title=\"{iso}\">{human}</time></span></li>",
            action = escape(action),
            iso = escape(at),
            human = escape(&human_time(at)),
        ));
    }
    let list = if items.is_empty() {
        "<p>None available</p>".to_owned()
    } else {
        format!("<ul class=\"actionlist\">{items}</ul>")
    };
    let content = format!(
        "<div id=\"content-main\">{APPS}</div><div id=\"content-related\">\
         <div class=\"module\" id=\"recent-actions-module\"><h2>Recent actions</h2>\
         <h3>My actions</h3>{list}</div></div>"
    );
    admin_page(
        db,
        &user,
        &Csrf::of(req),
        "Site administration",
        "",
        &content,
    )
}

fn app_index(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let crumbs = breadcrumbs(&[], AUTH.1);
    let h1 = "Authentication and Authorization administration";
    let content = format!("<div id=\"content-main\">{APPS}</div>");
    admin_page(db, &user, &Csrf::of(req), h1, &crumbs, &content)
}

/// `2026-11-23T19:01:05.123Z` as Django shows it: `Nov. 23, 2026, 7:01 p.m.` (UTC).
fn human_time(iso: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.",
        "Dec.",
    ];
    let number = |from: usize, to: usize| iso.get(from..to).and_then(|s| s.parse::<usize>().ok());
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute)) = (
        number(0, 4),
        number(5, 7),
        number(8, 10),
        number(11, 13),
        number(14, 16),
    ) else {
        return iso.to_owned();
    };
    let Some(month) = month.checked_sub(1).and_then(|m| MONTHS.get(m)) else {
        return iso.to_owned();
    };
    let time = match (hour, minute) {
        (0, 0) => "midnight".to_owned(),
        (12, 0) => "noon".to_owned(),
        _ => {
            let twelve = if hour % 12 == 0 { 12 } else { hour % 12 };
            let half = if hour < 12 { "a.m." } else { "p.m." };
            if minute == 0 {
                format!("{twelve} {half}")
            } else {
                format!("{twelve}:{minute:02} {half}")
            }
        }
    };
    format!("{month} {day}, {year}, {time}")
}

// ---------------------------------------------------------------------------------------------
// Groups

fn group_list(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let q = req.param("q").trim();
    let total: i64 = db.query_row("SELECT COUNT(*) FROM auth_group", [], |row| row.get(0))?;
    let mut statement = db.prepare(
        "SELECT id, name FROM auth_group WHERE instr(lower(name), lower(?1)) > 0 ORDER BY name",
    )?;
    let groups = statement
        .query_map([q], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let rows: String = groups
        .iter()
        .map(|(id, name)| {
            format!(
                "<tr><th class=\"field-__str__\"><a href=\"/admin/auth/group/{id}/change/\">{}</a>\
                 </th></tr>",
                escape(name)
            )
        })
        .collect();
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let matching = if q.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"small quiet\">{} (<a href=\"?\">{total} total</a>)</span>",
            count(groups.len(), "result", "results")
        )
    };
    let content = format!(
        "<ul class=\"object-tools\"><li><a href=\"/admin/auth/group/add/\" class=\"addlink\">\
         Add group</a></li></ul><div id=\"content-main\"><div class=\"module\" id=\"changelist\">\
         <div id=\"toolbar\"><form id=\"changelist-search\" method=\"get\" role=\"search\">\
         <label for=\"searchbar\" class=\"visually-hidden\">Search</label>\
         <input type=\"text\" size=\"40\" name=\"q\" value=\"{q}\" id=\"searchbar\"> \
         <input type=\"submit\" value=\"Search\">{matching}</form></div>\
         <table id=\"result_list\"><thead><tr><th scope=\"col\">Group</th></tr></thead>\
         <tbody>{rows}</tbody></table><p class=\"paginator\">{n}</p></div></div>",
        q = escape(q),
        n = count(groups.len(), "group", "groups"),
    );
    let crumbs = breadcrumbs(&[AUTH], GROUPS.1);
    admin_page(
        db,
        &user,
        &Csrf::of(req),
        "Select group to change",
        &crumbs,
        &content,
    )
}

/// The add and change form: `error` under the name, `id` for the change form's delete link.
fn group_form(csrf: &Csrf, action: &str, name: &str, error: &str, id: Option<i64>) -> String {
    let (note, errors) = if error.is_empty() {
        (String::new(), String::new())
    } else {
        (
            "<p class=\"errornote\">Please correct the error below.</p>".to_owned(),
            format!("<ul class=\"errorlist\"><li>{}</li></ul>", escape(error)),
        )
    };
    let delete = id.map_or(String::new(), |id| {
        format!("<a href=\"/admin/auth/group/{id}/delete/\" class=\"deletelink\">Delete</a>")
    });
    format!(
        "<div id=\"content-main\"><form method=\"post\" action=\"{action}\" id=\"group_form\" \
         novalidate>{token}<div>{note}<fieldset class=\"module aligned\">\
         <div class=\"form-row field-name\">{errors}<label class=\"required\" for=\"id_name\">\
         Name:</label> <input type=\"text\" name=\"name\" value=\"{name}\" class=\"vTextField\" \
         maxlength=\"150\" required id=\"id_name\"></div></fieldset><div class=\"submit-row\">\
         <input type=\"submit\" value=\"Save\" class=\"default\" name=\"_save\">\
         <input type=\"submit\" value=\"Save and add another\" name=\"_addanother\">{delete}\
         </div></div></form></div>",
        token = csrf.field(),
        name = escape(name),
    )
}

/// What is wrong with a group name, if anything.
fn name_error(name: &str) -> &'static str {
    if name.is_empty() {
        "This field is required."
    } else if name.chars().count() > 150 {
        "Ensure this value has at most 150 characters."
    } else {
        ""
    }
}

fn duplicate(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(e, _)
        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
}

fn log(db: &Connection, user: &User, id: i64, name: &str, action: &str) -> Result<(), Failure> {
    db.execute(
        &format!(
            "INSERT INTO django_admin_log (action_time, user_id, object_id, object_repr, action) \
             VALUES ({NOW}, ?1, ?2, ?3, ?4)"
        ),
        rusqlite::params![user.id, id, name, action],
    )?;
    Ok(())
}

const EXISTS: &str = "Group with this Name already exists.";

fn group_add(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let csrf = Csrf::of(req);
    let content = group_form(&csrf, "/admin/auth/group/add/", "", "", None);
    let crumbs = breadcrumbs(&[AUTH, GROUPS], "Add group");
    admin_page(db, &user, &csrf, "Add group", &crumbs, &content)
}

fn group_add_post(db: &Connection, req: &Req) -> Answer {
    if let Some(denied) = csrf_failure(req) {
        return Ok(denied);
    }
    let user = user_or_login!(db, req);
    let name = req.field("name").trim();
    let again = |error: &str| {
        let csrf = Csrf::of(req);
        let content = group_form(&csrf, "/admin/auth/group/add/", name, error, None);
        let crumbs = breadcrumbs(&[AUTH, GROUPS], "Add group");
        admin_page(db, &user, &csrf, "Add group", &crumbs, &content)
    };
    let error = name_error(name);
    if !error.is_empty() {
        return again(error);
    }
    let transaction = db.unchecked_transaction()?;
    match transaction.execute("INSERT INTO auth_group (name) VALUES (?1)", [name]) {
        Err(e) if duplicate(&e) => {
            drop(transaction);
            return again(EXISTS);
        }
        inserted => inserted?,
    };
    let id = transaction.last_insert_rowid();
    log(&transaction, &user, id, name, "Added")?;
    let link = format!(
        "<a href=\"/admin/auth/group/{id}/change/\">{}</a>",
        escape(name)
    );
    if req.form.contains_key("_addanother") {
        let message = format!(
            "The group “{link}” was added successfully. You may add another group \
                     below."
        );
        flash(&transaction, &user, "success", &message)?;
        transaction.commit()?;
        return Ok(found("/admin/auth/group/add/"));
    }
    flash(
        &transaction,
        &user,
        "success",
        &format!("The group “{link}” was added successfully."),
    )?;
    transaction.commit()?;
    Ok(found("/admin/auth/group/"))
}

/// The group of the route's `{id}`, or the redirect Django answers for a missing one.
fn group_or_home(
    db: &Connection,
    req: &Req,
    user: &User,
) -> Result<Result<(i64, String), Response>, Failure> {
    let group = match req.id.parse::<i64>() {
        Ok(id) => db
            .query_row(
                "SELECT id, name FROM auth_group WHERE id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?,
        Err(_) => None,
    };
    match group {
        Some(group) => Ok(Ok(group)),
        None => {
            let message = format!(
                "Group with ID “{}” doesn’t exist. Perhaps it was deleted?",
                escape(&req.id)
            );
            flash(db, user, "warning", &message)?;
            Ok(Err(found("/admin/")))
        }
    }
}

fn change_page(
    db: &Connection,
    user: &User,
    csrf: &Csrf,
    (id, name): (i64, &str),
    typed: &str,
    error: &str,
) -> Answer {
    let form = group_form(
        csrf,
        &format!("/admin/auth/group/{id}/change/"),
        typed,
        error,
        Some(id),
    );
    let content = format!("<h2>{}</h2>{form}", escape(name));
    let crumbs = breadcrumbs(&[AUTH, GROUPS], name);
    admin_page(db, user, csrf, "Change group", &crumbs, &content)
}

fn group_change(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let (id, name) = match group_or_home(db, req, &user)? {
        Ok(group) => group,
        Err(redirect) => return Ok(redirect),
    };
    change_page(db, &user, &Csrf::of(req), (id, &name), &name, "")
}

fn group_change_post(db: &Connection, req: &Req) -> Answer {
    if let Some(denied) = csrf_failure(req) {
        return Ok(denied);
    }
    let user = user_or_login!(db, req);
    let (id, old) = match group_or_home(db, req, &user)? {
        Ok(group) => group,
        Err(redirect) => return Ok(redirect),
    };
    let name = req.field("name").trim();
    let error = name_error(name);
    if !error.is_empty() {
        return change_page(db, &user, &Csrf::of(req), (id, &old), name, error);
    }
    let transaction = db.unchecked_transaction()?;
    let updated = transaction.execute(
        "UPDATE auth_group SET name = ?1 WHERE id = ?2",
        rusqlite::params![name, id],
    );
    match updated {
        Err(e) if duplicate(&e) => {
            drop(transaction);
            return change_page(db, &user, &Csrf::of(req), (id, &old), name, EXISTS);
        }
        updated => updated?,
    };
    log(&transaction, &user, id, name, "Changed")?;
    let link = format!(
        "<a href=\"/admin/auth/group/{id}/change/\">{}</a>",
        escape(name)
    );
    let (message, next) = if req.form.contains_key("_addanother") {
        (
            format!(
                "The group “{link}” was changed successfully. You may add another group below."
            ),
            "/admin/auth/group/add/",
        )
    } else {
        (
            format!("The group “{link}” was changed successfully."),
            "/admin/auth/group/",
        )
    };
    flash(&transaction, &user, "success", &message)?;
    transaction.commit()?;
    Ok(found(next))
}

fn group_delete(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let (id, name) = match group_or_home(db, req, &user)? {
        Ok(group) => group,
        Err(redirect) => return Ok(redirect),
    };
    let csrf = Csrf::of(req);
    let content = format!(
        "<p>Are you sure you want to delete the group “{n}”? \
         All of the following related items \
         will be deleted:</p><h2>Summary</h2><ul><li>Groups: 1</li></ul><h2>Objects</h2>\
         <ul><li>Group: <a href=\"/admin/auth/group/{id}/change/\">{n}</a></li></ul>\
         <form method=\"post\" action=\"/admin/auth/group/{id}/delete/\">{token}<div>\
         <input type=\"hidden\" name=\"post\" value=\"yes\">\
         <input type=\"submit\" value=\"Yes, I’m sure\"> \
         <a href=\"/admin/auth/group/{id}/change/\" class=\"button cancel-link\">\
         No, take me back</a>\
         </div></form>",
        n = escape(&name),
        token = csrf.field()
    );
    let change = format!("/admin/auth/group/{id}/change/");
    let crumbs = breadcrumbs(&[AUTH, GROUPS, (change.as_str(), name.as_str())], "Delete");
    admin_page(db, &user, &csrf, "Are you sure?", &crumbs, &content)
}

fn group_delete_post(db: &Connection, req: &Req) -> Answer {
    if let Some(denied) = csrf_failure(req) {
        return Ok(denied);
    }
    let user = user_or_login!(db, req);
    let (id, name) = match group_or_home(db, req, &user)? {
        Ok(group) => group,
        Err(redirect) => return Ok(redirect),
    };
    let transaction = db.unchecked_transaction()?;
    transaction.execute("DELETE FROM auth_group WHERE id = ?1", [id])?;
    log(&transaction, &user, id, &name, "Deleted")?;
    let message = format!("The group “{}” was deleted successfully.", escape(&name));
    flash(&transaction, &user, "success", &message)?;
    transaction.commit()?;
    Ok(found("/admin/auth/group/"))
}

// ---------------------------------------------------------------------------------------------
// Users (a list only)

fn user_list(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let mut statement = db.prepare(
        "SELECT username, email, first_name, last_name, is_staff FROM auth_user ORDER BY username",
    )?;
    let users = statement
        .query_map([], |row| {
            Ok(format!(
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&row.get::<_, String>(0)?),
                escape(&row.get::<_, String>(1)?),
                escape(&row.get::<_, String>(2)?),
                escape(&row.get::<_, String>(3)?),
                if row.get::<_, bool>(4)? { "Yes" } else { "No" },
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let content = format!(
        "<ul class=\"object-tools\"><li><a href=\"/admin/auth/user/add/\" class=\"addlink\">\
         Add user</a></li></ul><div id=\"content-main\"><div class=\"module\" id=\"changelist\">\
         <table id=\"result_list\"><thead><tr><th scope=\"col\">Username</th>\
         <th scope=\"col\">Email address</th><th scope=\"col\">First name</th>\
         <th scope=\"col\">Last name</th><th scope=\"col\">Staff status</th></tr></thead>\
         <tbody>{}</tbody></table><p class=\"paginator\">{} user{}</p></div></div>",
        users.concat(),
        users.len(),
        if users.len() == 1 { "" } else { "s" },
    );
    let crumbs = breadcrumbs(&[AUTH], USERS.1);
    admin_page(
        db,
        &user,
        &Csrf::of(req),
        "Select user to change",
        &crumbs,
        &content,
    )
}

fn user_add(db: &Connection, req: &Req) -> Answer {
    let user = user_or_login!(db, req);
    let crumbs = breadcrumbs(&[AUTH, USERS], "Add user");
    let content = "<p>Adding users is not in this fixture.</p>";
    admin_page(db, &user, &Csrf::of(req), "Add user", &crumbs, content)
}

// ---------------------------------------------------------------------------------------------
// The public site and unknown paths

const SITE: &[(&str, &str, &str)] = &[
    (
        "/",
        "Example Co.",
        "We make examples. This is our small public site.",
    ),
    (
        "/about/",
        "About us",
        "Example Co. was founded to make examples for tests.",
    ),
    (
        "/blog/",
        "Blog",
        "No posts yet: the team is busy administering groups.",
    ),
];

async fn public(uri: Uri) -> Response {
    let Some((_, title, text)) = SITE.iter().find(|(path, _, _)| *path == uri.path()) else {
        return not_found();
    };
    let nav = "<nav><a href=\"/\">Home</a> · <a href=\"/about/\">About us</a> · \
               <a href=\"/blog/\">Blog</a> · <a href=\"/admin/\">Staff login</a></nav>";
    plain(StatusCode::OK, title, &format!("{nav}<p>{text}</p>"))
}

fn not_found() -> Response {
    plain(
        StatusCode::NOT_FOUND,
        "Not Found",
        "<p>The requested resource was not found on this server.</p>",
    )
}

/// An unknown path: under `/admin/`, the login first (as Django's admin does).
fn missing(db: &Connection, req: &Req) -> Answer {
    if req.target.starts_with("/admin/") && current_user(db, req)?.is_none() {
        return Ok(to_login(req));
    }
    Ok(not_found())
}

// ---------------------------------------------------------------------------------------------
// The database

fn create(path: &std::path::Path) -> rusqlite::Result<()> {
    let db = Connection::open(path)?;
    // A rollback journal (no -wal file): the database is this one file, which a copy restores.
    db.execute_batch(
        "PRAGMA journal_mode = DELETE;
         CREATE TABLE auth_user (
             id INTEGER PRIMARY KEY AUTOINCREMENT,
             username VARCHAR(150) NOT NULL UNIQUE,
             password TEXT NOT NULL, -- in clear: a fixture
             email TEXT NOT NULL DEFAULT '',
             first_name TEXT NOT NULL DEFAULT '',
             last_name TEXT NOT NULL DEFAULT '',
             is_staff BOOLEAN NOT NULL DEFAULT 0,
             last_login TEXT);
         CREATE TABLE auth_group (
             id INTEGER PRIMARY KEY AUTOINCREMENT,
             name VARCHAR(150) NOT NULL UNIQUE);
         CREATE TABLE django_session (
             session_key TEXT PRIMARY KEY,
             user_id INTEGER NOT NULL REFERENCES auth_user (id),
             flash TEXT, -- the message for the next page, HTML
             created TEXT NOT NULL);
         CREATE TABLE django_admin_log (
             id INTEGER PRIMARY KEY AUTOINCREMENT,
             action_time TEXT NOT NULL,
             user_id INTEGER NOT NULL REFERENCES auth_user (id),
             object_id INTEGER,
             object_repr TEXT NOT NULL,
             action TEXT NOT NULL); -- Added, Changed, Deleted
         INSERT INTO auth_group (name) VALUES ('staff'), ('support'), ('billing');",
    )?;
    db.execute(
        "INSERT INTO auth_user (username, password, email, is_staff) VALUES (?1, ?2, ?3, 1)",
        [USERNAME, PASSWORD, "admin@example.com"],
    )?;
    db.execute_batch(
        "INSERT INTO auth_user (username, password, email, first_name, last_name) VALUES
             ('alice', 'wonderland', 'alice@example.com', 'Alice', 'Liddell'),
             ('bob', 'the builder', 'bob@example.com', 'Bob', 'Builder');
         INSERT INTO django_admin_log (action_time, user_id, object_id, object_repr, action)
         VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3 days'), 1, 1, 'staff', 'Added'),
                (strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3 days', '+4 minutes'), 1, 2,
                 'support', 'Added'),
                (strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-2 days'), 1, 3, 'billing', 'Added'),
                (strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 days'), 1, 2, 'support', 'Changed');",
    )
}
