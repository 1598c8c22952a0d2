//! A CMS admin as such screens really are: pages listed with an icon link known only by its
//! `aria-label` and a kebab menu ("More options for 'Old news'") whose items appear only once
//! it is opened; an editor with a title field, a rich-text body (`contenteditable`, as
//! ProseMirror, Draftail or TinyMCE make one) and a split button ("Save draft", its arrow
//! revealing "Publish"); and a confirmation page after "Delete". State lives in memory; every
//! write is a `POST` the fixture counts (`Counters::orders`).

use super::{Counters, page};
use axum::Router;
use axum::extract::{Form, Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use forager_queen::report::escape;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// One page of the CMS.
#[derive(Debug, Clone)]
struct CmsPage {
    title: String,
    body: String,
    live: bool,
}

/// The pages, shared by the handlers.
#[derive(Debug, Clone)]
struct Pages(Arc<Mutex<Vec<CmsPage>>>);

/// The fixture: `/admin/pages` (the list), `/admin/pages/new` (the editor, `POST` creates),
/// `/admin/pages/<n>/edit` (a page's own editor, read only here), `/admin/pages/<n>/delete`
/// (the confirmation, `POST` deletes), `/reset` (`POST`: the pages as they started).
pub fn cms() -> Router<Arc<Counters>> {
    let pages = Pages(Arc::new(Mutex::new(seed())));
    let list_pages = pages.clone();
    let new_pages = pages.clone();
    let confirm_pages = pages.clone();
    let edit_pages = pages.clone();
    let reset_pages = pages.clone();
    let delete_pages = pages;
    Router::new()
        .route("/admin/pages", get(move || list(list_pages.clone())))
        .route(
            "/admin/pages/new",
            get(editor).post(
                move |State(counters): State<Arc<Counters>>,
                      Form(form): Form<HashMap<String, String>>| {
                    create(new_pages.clone(), counters, form)
                },
            ),
        )
        .route(
            "/reset",
            axum::routing::post(move || reset(reset_pages.clone())),
        )
        .route(
            "/admin/pages/{n}/edit",
            get(move |Path(n): Path<usize>| editing(edit_pages.clone(), n)),
        )
        .route(
            "/admin/pages/{n}/delete",
            get(move |Path(n): Path<usize>| confirm(confirm_pages.clone(), n)).post(
                move |State(counters): State<Arc<Counters>>, Path(n): Path<usize>| {
                    delete(delete_pages.clone(), counters, n)
                },
            ),
        )
}

const PENCIL: &str = r#"<svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true"><path d="M2 12l8-8 2 2-8 8H2z"/></svg>"#;

async fn list(pages: Pages) -> Html<String> {
    let rows: String = pages
        .0
        .lock()
        .map(|p| p.clone())
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(n, p)| {
            let title = escape(&p.title);
            let state = if p.live { "live" } else { "draft" };
            format!(
                "<tr><td class=title>{title}</td><td class=status>{state}</td><td class=body>{body}</td>\
                 <td><a class=icon href=\"/admin/pages/{n}/edit\" aria-label=\"Edit '{title}'\">{PENCIL}</a>\
                 <div class=dropdown><button type=button class=kebab aria-haspopup=menu aria-expanded=false \
                 aria-label=\"More options for '{title}'\">⋮</button>\
                 <ul class=menu role=menu hidden><li><a role=menuitem href=\"/admin/pages/{n}/delete\">Delete</a></li>\
                 <li><a role=menuitem href=\"/admin/pages\">Copy</a></li></ul></div></td></tr>",
                body = escape(&p.body)
            )
        })
        .collect();
    page(
        "Pages",
        &format!(
            r#"<p><a href="/admin/pages/new">Add child page</a></p>
<table class=listing><thead><tr><th>Title</th><th>Status</th><th>Body</th><th>Actions</th></tr></thead>
<tbody>{rows}</tbody></table>
<script>
for (const button of document.querySelectorAll(".kebab")) {{
  button.addEventListener("click", () => {{
    const menu = button.nextElementSibling;
    menu.hidden = !menu.hidden;
    button.setAttribute("aria-expanded", String(!menu.hidden));
  }});
}}
</script>"#
        ),
    )
}

async fn editor() -> Html<String> {
    page(
        "New page",
        r#"<form method=post action="/admin/pages/new" id=edit>
<label for=title>Title</label> <input id=title name=title required>
<label id=body-label>Body</label>
<div id=body class="ProseMirror rich-text" contenteditable=true role=textbox aria-multiline=true aria-labelledby=body-label></div>
<input type=hidden name=body id=body-input>
<input type=hidden name=action id=action value=draft>
<div class=split>
  <button type=submit>Save draft</button>
  <button type=button class=toggle aria-haspopup=menu aria-expanded=false aria-label="More actions">▾</button>
  <ul class=menu role=menu hidden><li><button type=submit role=menuitem id=publish>Publish</button></li></ul>
</div>
</form>
<script>
const form = document.getElementById("edit");
document.querySelector(".toggle").addEventListener("click", (event) => {
  const menu = event.target.nextElementSibling;
  menu.hidden = !menu.hidden;
  event.target.setAttribute("aria-expanded", String(!menu.hidden));
});
document.getElementById("publish").addEventListener("click", () => {
  document.getElementById("action").value = "publish";
});
form.addEventListener("submit", () => {
  document.getElementById("body-input").value = document.getElementById("body").innerText.trim();
});
</script>"#,
    )
}

async fn create(pages: Pages, counters: Arc<Counters>, form: HashMap<String, String>) -> Response {
    counters.orders.fetch_add(1, Ordering::SeqCst);
    let title = form.get("title").cloned().unwrap_or_default();
    if title.trim().is_empty() {
        return page(
            "New page",
            "<p role=alert>The page could not be saved: a title is required.</p>",
        )
        .into_response();
    }
    if let Ok(mut pages) = pages.0.lock() {
        pages.push(CmsPage {
            title,
            body: form.get("body").cloned().unwrap_or_default(),
            live: form.get("action").is_some_and(|a| a == "publish"),
        });
    }
    Redirect::to("/admin/pages").into_response()
}

async fn confirm(pages: Pages, n: usize) -> Html<String> {
    let title = pages
        .0
        .lock()
        .ok()
        .and_then(|p| p.get(n).map(|p| p.title.clone()));
    match title {
        Some(title) => page(
            &format!("Delete {title}"),
            &format!(
                "<p>Are you sure you want to delete '{t}'?</p><form method=post><button type=submit>Yes, delete it</button></form>\
                 <p><a href=\"/admin/pages\">No, don't delete it</a></p>",
                t = escape(&title)
            ),
        ),
        None => page("Not found", "<p>No such page.</p>"),
    }
}

/// The pages as the fixture started (a sandbox's reset: `POST /reset`, not counted).
fn seed() -> Vec<CmsPage> {
    vec![
        CmsPage {
            title: "Old news".into(),
            body: "Last year's notice.".into(),
            live: true,
        },
        CmsPage {
            title: "About us".into(),
            body: "Who we are.".into(),
            live: true,
        },
    ]
}

async fn reset(pages: Pages) -> &'static str {
    if let Ok(mut pages) = pages.0.lock() {
        *pages = seed();
    }
    "reset"
}

async fn editing(pages: Pages, n: usize) -> Html<String> {
    match pages.0.lock().ok().and_then(|p| p.get(n).cloned()) {
        Some(p) => page(
            &format!("Editing {}", p.title),
            &format!("<p>{}</p>", escape(&p.body)),
        ),
        None => page("Not found", "<p>No such page.</p>"),
    }
}

async fn delete(pages: Pages, counters: Arc<Counters>, n: usize) -> Response {
    counters.orders.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut pages) = pages.0.lock()
        && n < pages.len()
    {
        pages.remove(n);
    }
    Redirect::to("/admin/pages").into_response()
}
