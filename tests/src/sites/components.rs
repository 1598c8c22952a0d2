//! Pages whose controls live where a `document.querySelectorAll` does not reach: inside open
//! shadow roots (a web component, one nested in another) and inside a same-origin frame set
//! off from the top-left corner by margins, borders and padding (so a click at the frame's
//! own coordinates would miss). Each task's success is a `GET` navigation of the top page, so
//! a URL predicate tells whether the controls were really typed into and clicked.

use super::{Counters, page};
use axum::Router;
use axum::extract::Query;
use axum::response::Html;
use axum::routing::get;
use forager_queen::report::escape;
use std::collections::HashMap;
use std::sync::Arc;

/// The components fixture: `/shadow` (a search box inside a web component inside another),
/// `/frame` (a sign-up form inside a same-origin frame), `/named` (names only the accessibility
/// tree computes), `/cities` (a table whose rows are known by a city's name), and the page
/// each leads to.
pub fn components() -> Router<Arc<Counters>> {
    Router::new()
        .route("/shadow", get(shadow))
        .route("/frame", get(framed))
        .route("/frame/inner", get(frame_inner))
        .route("/named", get(named))
        .route("/cities", get(cities))
        .route("/group", get(group))
        .route("/found", get(found))
}

/// A shell component whose shadow root holds a heading and a search component, whose own
/// shadow root holds a labelled field, a checkbox and a button. The button navigates the top
/// page to `/found?q=…&exact=…`.
async fn shadow() -> Html<String> {
    page(
        "Catalogue",
        r#"<p>Search the catalogue below.</p>
<app-shell></app-shell>
<script>
class SearchBox extends HTMLElement {
  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = `
      <style>div { padding: 12px; border: 1px solid #888; margin: 8px }</style>
      <div>
        <label for="term">Search term</label>
        <input id="term" type="text">
        <label><input id="exact" type="checkbox"> Exact match</label>
        <button id="go" type="button">Search</button>
      </div>`;
    root.getElementById("go").addEventListener("click", () => {
      const term = root.getElementById("term").value;
      const exact = root.getElementById("exact").checked ? "1" : "0";
      location.href = "/found?q=" + encodeURIComponent(term) + "&exact=" + exact;
    });
  }
}
class AppShell extends HTMLElement {
  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = `<section><h2>Find a part</h2><search-box></search-box></section>`;
  }
}
customElements.define("search-box", SearchBox);
customElements.define("app-shell", AppShell);
</script>"#,
    )
}

/// The top page: a frame placed away from the corner, with a border and padding.
async fn framed() -> Html<String> {
    page(
        "Newsletter",
        r#"<p>Sign up in the form below.</p>
<div style="margin: 120px 0 0 160px">
<iframe src="/frame/inner" title="Sign-up form" width="420" height="260"
  style="border: 9px solid #333; padding: 17px"></iframe>
</div>"#,
    )
}

/// Inside the frame: an email field, a consent checkbox that enables the button, and a `GET`
/// form that navigates the top page.
async fn frame_inner() -> Html<String> {
    Html(
        r#"<!doctype html><html><head><meta charset=utf-8><title>Sign-up</title></head>
<body style="margin: 25px">
<form action="/found" method="get" target="_top">
  <p><label for="email">Email address</label> <input id="email" name="q" type="text"></p>
  <p><label><input id="agree" name="exact" value="1" type="checkbox"> I agree to the terms</label></p>
  <p><button id="join" type="submit" disabled>Join</button></p>
</form>
<script>
document.getElementById("agree").addEventListener("change", (e) => {
  document.getElementById("join").disabled = !e.target.checked;
});
</script>
</body></html>"#
            .to_owned(),
    )
}

/// Controls whose accessible names the page script cannot compute alone: a button named by
/// CSS generated content (its class words say "icon next"), a close button whose glyph is
/// hidden from the tree and whose words are only for screen readers, a number field (a
/// spin button to the tree). "Continue" navigates to `/found?q=continued`.
async fn named() -> Html<String> {
    page(
        "Order",
        r#"<style>
.icon-next::before { content: "Continue" }
.for-readers { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0) }
</style>
<p><label for="qty">Quantity</label> <input id="qty" type="number" value="1"></p>
<p><button type="button" class="close"><span aria-hidden="true">&#x2715;</span><span class="for-readers">Close dialog</span></button></p>
<p><button type="button" class="icon-next" onclick="location.href='/found?q=continued'"></button></p>"#,
    )
}

/// A table of cities, each row an id link, the city's name and a link to its country's page
/// (`/found?q=<code>`); "Springfield" is in two rows, so it names no row.
async fn cities() -> Html<String> {
    let rows = [
        (1, "Mombasa", "Kenya", "KE"),
        (2, "Springfield", "United States", "US"),
        (3, "Hamburg", "Germany", "DE"),
        (4, "Springfield", "Australia", "AU"),
        (5, "Perth", "Australia", "AU"),
    ];
    let body: String = rows
        .iter()
        .map(|(id, city, country, code)| {
            format!(
                "<tr><td><a href=\"/found?q=city{id}\">{id}</a></td><td>{city}</td>\
                 <td><a href=\"/found?q={code}\">{country}</a></td></tr>"
            )
        })
        .collect();
    page(
        "Cities",
        &format!(
            "<table><thead><tr><th>id</th><th>name</th><th>country</th></tr></thead>\
             <tbody>{body}</tbody></table>"
        ),
    )
}

/// A form as Django's admin writes "Add group": a hidden token, a named "Name:", and the
/// permission list's filter box, which has no name and so is not sent; beside it a form that
/// a script handles, none of whose fields has a name. "Save" posts to `/found?q=saved`.
async fn group() -> Html<String> {
    page(
        "Add group",
        r#"<form method="post" action="/found?q=saved" id="group_form">
<input type="hidden" name="csrfmiddlewaretoken" value="token">
<p><label for="id_name">Name:</label> <input id="id_name" name="name"></p>
<p><input id="id_permissions_input" placeholder="Filter the available permissions"></p>
<p><input type="submit" value="Save"></p>
</form>
<form id="lookup" onsubmit="return false">
<p><label for="q">Look up</label> <input id="q"> <button>Go</button></p>
</form>"#,
    )
}

/// Where both tasks end: says what was asked.
async fn found(Query(query): Query<HashMap<String, String>>) -> Html<String> {
    let term = query.get("q").map(String::as_str).unwrap_or("");
    let exact = query.get("exact").map(String::as_str).unwrap_or("0") == "1";
    page(
        "Results",
        &format!(
            "<p>Results for {} ({})</p>",
            escape(term),
            if exact { "exact" } else { "any" }
        ),
    )
}
