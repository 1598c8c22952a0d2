//! An issue tracker whose issues are handed over by their page's "Assigned to" list and
//! "Save": the fixture of a workflow reused for a record another goal *describes* ("the dark
//! mode request" after "the duplex printing crash"), so that the record's real title is in no
//! goal. Each save is a `POST` the fixture counts (`Counters::orders`); [`Assignees`] tells a
//! test who holds each issue.

use super::{Counters, not_found, page};
use axum::Router;
use axum::extract::{Form, Path, State};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use forager_queen::report::escape;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The issues' titles, from issue 1; a decoy shares a word with a description.
const ISSUES: &[&str] = &[
    "Duplex printing crashes the driver",
    "Dark mode makes the sidebar unreadable",
    "CSV export drops the last row",
    "Login page times out on slow networks",
    "Printing preview shows blank pages",
];
/// Who an issue can be given to.
const PEOPLE: &[&str] = &["nobody", "alice", "bob", "carol", "dave"];

/// Who holds each issue (from issue 1), shared by the handlers and the test.
#[derive(Debug, Clone)]
pub struct Assignees(Arc<Mutex<Vec<String>>>);

impl Assignees {
    /// Who holds issue `n` (from 1).
    pub fn of(&self, n: usize) -> String {
        self.0
            .lock()
            .ok()
            .and_then(|a| a.get(n.wrapping_sub(1)).cloned())
            .unwrap_or_default()
    }
}

/// The fixture: `/issues` (the list), `/issues/<n>` (an issue, its form; `POST` saves the
/// assignee), and who holds what.
pub fn handover() -> (Router<Arc<Counters>>, Assignees) {
    let assignees = Assignees(Arc::new(Mutex::new(vec![
        "nobody".to_owned();
        ISSUES.len()
    ])));
    let (listed, shown, saved) = (assignees.clone(), assignees.clone(), assignees.clone());
    let router = Router::new()
        .route("/issues", get(move || list(listed.clone())))
        .route(
            "/issues/{n}",
            get(move |Path(n): Path<usize>| issue(shown.clone(), n, None)).post(
                move |State(counters): State<Arc<Counters>>,
                      Path(n): Path<usize>,
                      Form(form): Form<HashMap<String, String>>| {
                    save(saved.clone(), counters, n, form)
                },
            ),
        );
    (router, assignees)
}

async fn list(assignees: Assignees) -> Html<String> {
    let rows: String = ISSUES
        .iter()
        .enumerate()
        .map(|(i, title)| {
            format!(
                "<tr><td>{n}</td><td><a href=\"/issues/{n}\">{title}</a></td><td>{who}</td></tr>",
                n = i + 1,
                title = escape(title),
                who = escape(&assignees.of(i + 1)),
            )
        })
        .collect();
    page(
        "Issues",
        &format!(
            "<table><thead><tr><th>#</th><th>Title</th><th>Assigned to</th></tr></thead>\
             <tbody>{rows}</tbody></table>"
        ),
    )
}

async fn issue(assignees: Assignees, n: usize, status: Option<String>) -> Response {
    let Some(title) = n.checked_sub(1).and_then(|i| ISSUES.get(i)) else {
        return not_found();
    };
    let holder = assignees.of(n);
    let options: String = PEOPLE
        .iter()
        .map(|p| {
            let selected = if *p == holder { " selected" } else { "" };
            format!("<option value={p}{selected}>{p}</option>")
        })
        .collect();
    let status = status
        .map(|s| format!("<p role=status>{}</p>", escape(&s)))
        .unwrap_or_default();
    page(
        title,
        &format!(
            "{status}<p><a href=\"/issues\">All issues</a></p><p>Assigned to: {who}</p>\
             <form method=post action=\"/issues/{n}\"><label for=who>Assigned to</label> \
             <select id=who name=assignee>{options}</select> <button>Save</button></form>",
            who = escape(&holder)
        ),
    )
    .into_response()
}

async fn save(
    assignees: Assignees,
    counters: Arc<Counters>,
    n: usize,
    form: HashMap<String, String>,
) -> Response {
    let Some(title) = n.checked_sub(1).and_then(|i| ISSUES.get(i)) else {
        return not_found();
    };
    let Some(who) = form
        .get("assignee")
        .filter(|w| PEOPLE.contains(&w.as_str()))
    else {
        return issue(assignees, n, Some("Choose someone to assign.".into())).await;
    };
    if let Ok(mut all) = assignees.0.lock()
        && let Some(slot) = all.get_mut(n - 1)
    {
        *slot = who.clone();
    }
    counters.orders.fetch_add(1, Ordering::SeqCst);
    issue(
        assignees,
        n,
        Some(format!("{title} is now assigned to {who}.")),
    )
    .await
}
