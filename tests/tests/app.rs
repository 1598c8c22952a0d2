//! The admin fixture (`forager_tests::app`) driven over real HTTP on loopback, without a
//! browser: the login and its CSRF rules, adding a group (and adding it again), the dashboard's
//! recent actions, logout, changing and deleting, the password change, and the reset command
//! that copies the snapshot back. The client is a few lines of HTTP/1.1 over a `TcpStream`
//! (`Connection: close`, so a response ends where the stream does); every connect and read is
//! bounded by a timeout.

use forager_tests::app::{AdminApp, PASSWORD, USERNAME};
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long one request (connect, write, read to the end) may take.
const LIMIT: Duration = Duration::from_secs(10);

/// A response.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn location(&self) -> &str {
        self.header("location").unwrap_or("")
    }

    /// The cookies it sets: name → value (empty when it deletes one).
    fn set_cookies(&self) -> HashMap<String, String> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
            .filter_map(|(_, v)| {
                let pair = v.split(';').next()?;
                let (name, value) = pair.split_once('=')?;
                let deleted = v.contains("Max-Age=0");
                let value = if deleted { "" } else { value.trim_matches('"') };
                Some((name.trim().to_owned(), value.to_owned()))
            })
            .collect()
    }

    /// The body's text without tags, as a reader sees it (entities left alone).
    fn text(&self) -> String {
        let mut text = String::new();
        let mut in_tag = false;
        for c in self.body.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        text
    }

    /// The value of the first hidden `csrfmiddlewaretoken` field.
    fn token(&self) -> String {
        let marker = "name=\"csrfmiddlewaretoken\" value=\"";
        let start = self.body.find(marker).expect("the page has a CSRF field") + marker.len();
        let end = self.body[start..].find('"').expect("the value ends") + start;
        self.body[start..end].to_owned()
    }
}

fn form_encode(fields: &[(&str, &str)]) -> String {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    char::from(b).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    fields
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// One HTTP/1.1 exchange with the app.
async fn exchange(
    app: &AdminApp,
    method: &str,
    path: &str,
    cookies: &str,
    body: Option<String>,
) -> Reply {
    let url = app.url("");
    let address = url.trim_start_matches("http://").to_owned();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nUser-Agent: test\r\n"
    );
    if !cookies.is_empty() {
        request.push_str(&format!("Cookie: {cookies}\r\n"));
    }
    if let Some(body) = &body {
        request.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body.as_deref().unwrap_or(""));
    let raw = tokio::time::timeout(LIMIT, async {
        let mut stream = tokio::net::TcpStream::connect(&address).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        std::io::Result::Ok(raw)
    })
    .await
    .unwrap_or_else(|_| panic!("{method} {path} took longer than {LIMIT:?}"))
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete response");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

/// A client with a cookie jar.
struct Client<'a> {
    app: &'a AdminApp,
    jar: HashMap<String, String>,
}

impl<'a> Client<'a> {
    fn new(app: &'a AdminApp) -> Client<'a> {
        Client {
            app,
            jar: HashMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        self.jar
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn keep(&mut self, reply: &Reply) {
        for (name, value) in reply.set_cookies() {
            if value.is_empty() {
                self.jar.remove(&name);
            } else {
                self.jar.insert(name, value);
            }
        }
    }

    async fn get(&mut self, path: &str) -> Reply {
        let reply = exchange(self.app, "GET", path, &self.cookie_header(), None).await;
        self.keep(&reply);
        reply
    }

    async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Reply {
        let body = Some(form_encode(fields));
        let reply = exchange(self.app, "POST", path, &self.cookie_header(), body).await;
        self.keep(&reply);
        reply
    }

    /// GETs `path` and posts its form back with these fields and the page's CSRF token.
    async fn submit(&mut self, path: &str, fields: &[(&str, &str)]) -> Reply {
        let token = self.get(path).await.token();
        let mut all = vec![("csrfmiddlewaretoken", token.as_str())];
        all.extend_from_slice(fields);
        self.post(path, &all).await
    }

    async fn log_in(&mut self) {
        let reply = self
            .submit(
                "/admin/login/",
                &[
                    ("username", USERNAME),
                    ("password", PASSWORD),
                    ("next", "/admin/"),
                ],
            )
            .await;
        assert_eq!(reply.status, 302, "{}", reply.body);
        assert_eq!(reply.location(), "/admin/");
        assert!(self.jar.contains_key("sessionid"));
    }
}

fn fixture_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// Runs the app's reset command with `sh -c`, bounded.
async fn reset(app: &AdminApp) {
    let status = tokio::time::timeout(
        LIMIT,
        tokio::process::Command::new("sh")
            .arg("-c")
            .arg(app.reset_command())
            .kill_on_drop(true)
            .status(),
    )
    .await
    .expect("the reset finishes in time")
    .expect("sh runs");
    assert!(status.success(), "{} failed", app.reset_command());
}

#[tokio::test]
async fn login_requires_a_matching_csrf_token() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    assert!(app.database().exists() && app.snapshot().exists());
    let mut client = Client::new(&app);

    // Without a session, the admin sends to the login, and back after.
    let reply = client.get("/admin/auth/group/").await;
    assert_eq!(reply.status, 302);
    assert_eq!(reply.location(), "/admin/login/?next=/admin/auth/group/");

    let login = client.get("/admin/login/?next=/admin/auth/group/").await;
    assert_eq!(login.status, 200);
    assert!(login.body.contains("<title>Log in"));
    assert!(login.body.contains("<h1>Log in</h1>"));
    assert!(login.text().contains("Username:") && login.text().contains("Password:"));
    assert!(login.body.contains("type=\"password\" name=\"password\""));
    assert!(login.body.contains("value=\"Log in\""));
    let secret = client
        .jar
        .get("csrftoken")
        .cloned()
        .expect("a csrftoken cookie");
    let token = login.token();
    // The field is masked anew on every visit; the cookie stays.
    let again = client.get("/admin/login/").await;
    assert_ne!(again.token(), token);
    assert_eq!(client.jar.get("csrftoken"), Some(&secret));

    let credentials = [("username", USERNAME), ("password", PASSWORD)];
    // No cookie at all.
    let fields = [
        credentials.as_slice(),
        &[("csrfmiddlewaretoken", token.as_str())],
    ]
    .concat();
    let reply = exchange(
        &app,
        "POST",
        "/admin/login/",
        "",
        Some(form_encode(&fields)),
    )
    .await;
    assert_eq!(reply.status, 403);
    assert!(reply.text().contains("CSRF verification failed"));
    // A cookie but no field.
    let reply = client.post("/admin/login/", &credentials).await;
    assert_eq!(reply.status, 403);
    assert!(reply.text().contains("CSRF token missing"));
    // A field made for another secret.
    let other = "a".repeat(32);
    let fields = [
        credentials.as_slice(),
        &[("csrfmiddlewaretoken", other.as_str())],
    ]
    .concat();
    let reply = client.post("/admin/login/", &fields).await;
    assert_eq!(reply.status, 403);
    assert!(reply.text().contains("CSRF verification failed"));
    assert!(!client.jar.contains_key("sessionid"));

    // A wrong password: the form again, no session.
    let fields = [
        ("csrfmiddlewaretoken", token.as_str()),
        ("username", USERNAME),
        ("password", "wrong"),
    ];
    let reply = client.post("/admin/login/", &fields).await;
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .text()
            .contains("Please enter the correct username and password.")
    );
    assert!(reply.body.contains("value=\"admin\""));
    assert!(!client.jar.contains_key("sessionid"));

    // The raw secret is accepted as well as a masked token; `next` is followed.
    let fields = [
        ("csrfmiddlewaretoken", secret.as_str()),
        ("username", USERNAME),
        ("password", PASSWORD),
        ("next", "/admin/auth/group/"),
    ];
    let reply = client.post("/admin/login/", &fields).await;
    assert_eq!(reply.status, 302, "{}", reply.body);
    assert_eq!(reply.location(), "/admin/auth/group/");
    assert!(client.jar.get("sessionid").is_some_and(|s| s.len() == 32));

    let list = client.get("/admin/auth/group/").await;
    assert_eq!(list.status, 200);
    assert!(list.text().contains("Welcome, admin."));
    assert!(list.body.contains("<h1>Select group to change</h1>"));
    assert!(list.text().contains("3 groups"));
    for name in ["staff", "support", "billing"] {
        assert!(list.text().contains(name));
    }
    // A login page visited while logged in goes on.
    let reply = client.get("/admin/login/").await;
    assert_eq!((reply.status, reply.location()), (302, "/admin/"));
    app.stop().await;
}

#[tokio::test]
async fn adding_a_group_shows_in_the_list_and_the_dashboard_until_reset() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    let mut client = Client::new(&app);
    client.log_in().await;
    assert_eq!(app.groups_named("editors"), 0);
    let before = client.get("/admin/").await;
    assert_eq!(before.status, 200);
    assert!(before.body.contains("<h1>Site administration</h1>"));
    assert!(before.text().contains("Recent actions"));
    assert!(before.text().contains("Added group “staff”"));
    assert!(!before.text().contains("editors"));

    let form = client.get("/admin/auth/group/add/").await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains("<h1>Add group</h1>"));
    assert!(
        form.text()
            .contains("Home › Authentication and Authorization › Groups › Add group")
    );
    assert!(form.body.contains("name=\"_save\"") && form.body.contains("name=\"_addanother\""));
    assert!(form.body.contains("maxlength=\"150\""));

    // Added: a redirect to the list, a row in the database, a message shown once.
    let reply = client
        .submit(
            "/admin/auth/group/add/",
            &[("name", "editors"), ("_save", "Save")],
        )
        .await;
    assert_eq!(reply.status, 302, "{}", reply.body);
    assert_eq!(reply.location(), "/admin/auth/group/");
    assert_eq!(app.groups_named("editors"), 1);
    assert_eq!(app.add_posts(), 1);
    let list = client.get("/admin/auth/group/").await;
    assert!(
        list.text()
            .contains("The group “editors” was added successfully.")
    );
    assert!(list.text().contains("4 groups"));
    let list = client.get("/admin/auth/group/").await;
    assert!(!list.text().contains("was added successfully"));

    // The same name again: the form with the error, nothing added.
    let reply = client
        .submit(
            "/admin/auth/group/add/",
            &[("name", "editors"), ("_save", "Save")],
        )
        .await;
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .text()
            .contains("Group with this Name already exists.")
    );
    assert!(reply.body.contains("value=\"editors\""));
    assert_eq!(app.groups_named("editors"), 1);
    // No name: required.
    let reply = client
        .submit(
            "/admin/auth/group/add/",
            &[("name", "  "), ("_save", "Save")],
        )
        .await;
    assert_eq!(reply.status, 200);
    assert!(reply.text().contains("This field is required."));
    // Without a token it is refused, and still counted.
    let reply = client
        .post("/admin/auth/group/add/", &[("name", "x")])
        .await;
    assert_eq!(reply.status, 403);
    assert_eq!(app.add_posts(), 4);

    // "Save and add another" comes back to the form, with the message there.
    let reply = client
        .submit(
            "/admin/auth/group/add/",
            &[
                ("name", "<b>auditors</b>"),
                ("_addanother", "Save and add another"),
            ],
        )
        .await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/auth/group/add/")
    );
    let form = client.get("/admin/auth/group/add/").await;
    assert!(form.body.contains("&lt;b&gt;auditors&lt;/b&gt;"));
    assert!(!form.body.contains("<b>auditors"));
    assert!(form.text().contains("You may add another group below."));

    // The dashboard lists the additions, newest first.
    let after = client.get("/admin/").await;
    let text = after.text();
    let editors = text.find("Added group “editors”").expect("listed");
    let auditors = text.find("Added group “&lt;b&gt;auditors").expect("listed");
    assert!(auditors < editors && editors < text.find("Added group “staff”").unwrap_or(0));
    // The newest timestamp is the time of the last write, not the seeded one.
    let newest = |reply: &Reply| {
        let start = reply.body.find("<time datetime=\"").expect("a timestamp") + 16;
        reply.body[start..start + 24].to_owned()
    };
    assert!(
        newest(&after) > newest(&before),
        "{} {}",
        newest(&after),
        newest(&before)
    );

    // The reset restores the snapshot: the group and the session are gone; the count stays.
    reset(&app).await;
    assert_eq!(app.groups_named("editors"), 0);
    assert_eq!(app.groups_named("staff"), 1);
    assert_eq!(app.add_posts(), 5);
    let reply = client.get("/admin/").await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/login/?next=/admin/")
    );
    client.log_in().await;
    let dashboard = client.get("/admin/").await;
    assert!(!dashboard.text().contains("editors"));
    app.stop().await;
}

#[tokio::test]
async fn logout_ends_the_session() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    let mut client = Client::new(&app);
    client.log_in().await;
    let session = client.jar.get("sessionid").cloned().expect("a session");
    let dashboard = client.get("/admin/").await;
    for link in [
        "href=\"/\">View site</a>",
        "href=\"/admin/password_change/\">Change password</a>",
        "action=\"/admin/logout/\"",
        "<button type=\"submit\">Log out</button>",
        "Toggle theme",
    ] {
        assert!(dashboard.body.contains(link), "{link}");
    }
    let token = dashboard.token();
    let reply = client
        .post("/admin/logout/", &[("csrfmiddlewaretoken", &token)])
        .await;
    assert_eq!(reply.status, 200);
    assert!(reply.body.contains("<h1>Logged out</h1>"));
    assert!(
        reply
            .body
            .contains("href=\"/admin/login/\">Log in again</a>")
    );
    assert!(!client.jar.contains_key("sessionid"));
    // The old session cookie no longer opens anything.
    let cookie = format!("sessionid={session}");
    let reply = exchange(&app, "GET", "/admin/", &cookie, None).await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/login/?next=/admin/")
    );
    app.stop().await;
}

#[tokio::test]
async fn a_group_can_be_changed_and_deleted() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    let mut client = Client::new(&app);
    client.log_in().await;
    let list = client.get("/admin/auth/group/").await;
    let at = list.body.find(">staff</a>").expect("staff is listed");
    let start = list.body[..at].rfind("href=\"").expect("a link") + "href=\"".len();
    let change = list.body[start..at - 1].to_owned();
    assert!(change.starts_with("/admin/auth/group/") && change.ends_with("/change/"));

    let form = client.get(&change).await;
    assert!(form.body.contains("<h1>Change group</h1>"));
    assert!(form.body.contains("value=\"staff\""));
    // Renaming onto an existing name is refused.
    let reply = client
        .submit(&change, &[("name", "billing"), ("_save", "Save")])
        .await;
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .text()
            .contains("Group with this Name already exists.")
    );
    let reply = client
        .submit(&change, &[("name", "team"), ("_save", "Save")])
        .await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/auth/group/")
    );
    assert_eq!(
        (app.groups_named("staff"), app.groups_named("team")),
        (0, 1)
    );
    let list = client.get("/admin/auth/group/").await;
    assert!(
        list.text()
            .contains("The group “team” was changed successfully.")
    );
    assert!(
        client
            .get("/admin/")
            .await
            .text()
            .contains("Changed group “team”")
    );

    let delete = change.replace("/change/", "/delete/");
    assert!(form.body.contains(&format!("href=\"{delete}\"")));
    let confirm = client.get(&delete).await;
    assert!(confirm.body.contains("value=\"Yes, I’m sure\""));
    let token = confirm.token();
    let reply = client
        .post(&delete, &[("csrfmiddlewaretoken", &token), ("post", "yes")])
        .await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/auth/group/")
    );
    assert_eq!(app.groups_named("team"), 0);
    assert!(
        client
            .get("/admin/auth/group/")
            .await
            .text()
            .contains("2 groups")
    );
    // The page of a group that is gone sends home with a warning.
    let reply = client.get(&change).await;
    assert_eq!((reply.status, reply.location()), (302, "/admin/"));
    assert!(client.get("/admin/").await.text().contains("doesn’t exist"));
    app.stop().await;
}

#[tokio::test]
async fn the_password_change_really_changes_it() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    let mut client = Client::new(&app);
    client.log_in().await;
    let path = "/admin/password_change/";
    let reply = client
        .submit(
            path,
            &[
                ("old_password", "nope"),
                ("new_password1", "a"),
                ("new_password2", "b"),
            ],
        )
        .await;
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .text()
            .contains("Your old password was entered incorrectly.")
    );
    assert!(
        reply
            .text()
            .contains("The two password fields didn’t match.")
    );
    let fields = [
        ("old_password", PASSWORD),
        ("new_password1", "battery staple"),
        ("new_password2", "battery staple"),
    ];
    let reply = client.submit(path, &fields).await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/password_change/done/")
    );
    let done = client.get("/admin/password_change/done/").await;
    assert!(done.body.contains("<h1>Password change successful</h1>"));

    let mut other = Client::new(&app);
    let old = [("username", USERNAME), ("password", PASSWORD)];
    let reply = other.submit("/admin/login/", &old).await;
    assert_eq!(reply.status, 200);
    let new = [("username", USERNAME), ("password", "battery staple")];
    let reply = other.submit("/admin/login/", &new).await;
    assert_eq!(reply.status, 302);
    // A reset brings the first password back.
    reset(&app).await;
    Client::new(&app).log_in().await;
    app.stop().await;
}

#[tokio::test]
async fn every_page_has_a_title_and_a_heading_and_unknown_paths_are_404() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    let mut client = Client::new(&app);
    let home = client.get("/").await;
    assert_eq!(home.status, 200);
    assert!(home.body.contains("href=\"/about/\"") && home.body.contains("href=\"/admin/\""));
    assert_eq!(client.get("/nowhere").await.status, 404);
    let reply = client.get("/admin/nowhere/").await;
    assert_eq!(
        (reply.status, reply.location()),
        (302, "/admin/login/?next=/admin/nowhere/")
    );
    client.log_in().await;
    assert_eq!(client.get("/admin/nowhere/").await.status, 404);
    for path in [
        "/",
        "/about/",
        "/blog/",
        "/admin/",
        "/admin/auth/",
        "/admin/auth/group/",
        "/admin/auth/group/?q=ST",
        "/admin/auth/group/add/",
        "/admin/auth/group/1/change/",
        "/admin/auth/group/1/delete/",
        "/admin/auth/user/",
        "/admin/auth/user/add/",
        "/admin/password_change/",
        "/admin/no-such-page/",
    ] {
        let reply = client.get(path).await;
        assert!(
            matches!(reply.status, 200 | 404),
            "{path}: {}",
            reply.status
        );
        assert!(reply.body.contains("<title>"), "{path} has no title");
        assert!(reply.body.contains("<h1>"), "{path} has no heading");
    }
    let search = client.get("/admin/auth/group/?q=ST").await;
    assert!(search.text().contains("1 result (3 total)"));
    let users = client.get("/admin/auth/user/").await;
    assert!(users.text().contains("3 users") && users.text().contains("alice"));
    app.stop().await;
}

#[tokio::test]
async fn a_missing_database_is_a_500_page_with_the_error() {
    let dir = fixture_dir();
    let app = AdminApp::start(dir.path()).await;
    std::fs::remove_file(app.database()).expect("the database can be removed");
    let reply = exchange(&app, "GET", "/admin/", "", None).await;
    assert_eq!(reply.status, 500);
    assert!(reply.body.contains("<h1>Server Error (500)</h1>"));
    assert!(
        reply.text().contains("unable to open database file"),
        "{}",
        reply.body
    );
    app.stop().await;
}
