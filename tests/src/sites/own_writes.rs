//! Pages that write on their own, as admin screens and single-page applications do: a 500 ms
//! heartbeat `POST`, an autosave of what is typed, a menu whose opening `PATCH`es a
//! "dismissible" flag, a "Show more" whose handler `fetch`es a `POST` (a write hidden behind a
//! read's words), and a single-page notes application that `PUT`s the list of its open notes
//! on every click. Every write that reaches the server is counted (`Counters::orders`): the
//! network gate refuses them all, so a test expects none.

use super::{Counters, page};
use axum::Router;
use axum::extract::State;
use axum::response::Html;
use axum::routing::{get, post};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The fixture: `/editor` (heartbeat, autosave, a menu that saves its state, "Show more" that
/// posts), `/editor/archive` (where the menu's link leads), `/notes` (the single-page
/// application), and the handlers the pages write to.
pub fn own_writes() -> Router<Arc<Counters>> {
    Router::new()
        .route("/editor", get(editor))
        .route("/editor/archive", get(archive))
        .route("/editor/ping", post(written))
        .route("/editor/autosave", post(written))
        .route("/editor/dismissibles", post(written).patch(written))
        .route("/editor/more", post(written))
        .route("/notes", get(notes))
        .route("/notes/state", post(written).put(written))
}

/// Any write that reaches the server.
async fn written(State(counters): State<Arc<Counters>>) -> &'static str {
    counters.orders.fetch_add(1, Ordering::SeqCst);
    "ok"
}

async fn editor() -> Html<String> {
    page(
        "Edit page: Old news",
        r#"<p>Editing the page "Old news". Changes are saved as you type.</p>
<label for=body>Body</label> <textarea id=body name=body></textarea>
<div class=actions>
  <button type=button id=menu aria-haspopup=true aria-expanded=false>More options</button>
  <ul id=items hidden><li><a href="/editor/archive">Archive list</a></li></ul>
</div>
<div id=entries><p>Entry one.</p></div>
<button type=button id=more>Show more entries</button>
<script>
// The editing session's heartbeat, as an admin keeps an editor's lock: at once, then every
// 500 ms.
const ping = () => fetch("/editor/ping", { method: "POST" }).catch(() => {});
ping();
setInterval(ping, 500);
// Autosave, 300 ms after the last key.
let pending = null;
document.getElementById("body").addEventListener("input", () => {
  clearTimeout(pending);
  pending = setTimeout(() => fetch("/editor/autosave", { method: "POST", body: document.getElementById("body").value }).catch(() => {}), 300);
});
// The menu remembers that it was opened.
document.getElementById("menu").addEventListener("click", (event) => {
  const items = document.getElementById("items");
  items.hidden = !items.hidden;
  event.target.setAttribute("aria-expanded", String(!items.hidden));
  fetch("/editor/dismissibles", { method: "PATCH", body: JSON.stringify({ menu_seen: true }) }).catch(() => {});
});
// "Show more" reads by its words, but it posts.
document.getElementById("more").addEventListener("click", () => {
  fetch("/editor/more", { method: "POST" }).then(() => {
    document.getElementById("entries").insertAdjacentHTML("beforeend", "<p>Entry two, posted.</p>");
  }).catch(() => {});
});
</script>"#,
    )
}

async fn archive() -> Html<String> {
    page("Archive", "<p>The archive list: Old news, Older news.</p>")
}

/// A notes application in one page: clicking a note's title shows it and saves the list of
/// open notes to the server (its view, not the notes).
async fn notes() -> Html<String> {
    page(
        "Notes",
        r#"<nav id=list>
  <button type=button class=note data-id=groceries>Groceries</button>
  <button type=button class=note data-id=cabin>Cabin trip</button>
  <button type=button class=note data-id=books>Books to read</button>
</nav>
<main id=shown><p>Choose a note.</p></main>
<script>
const bodies = {
  groceries: "Milk, bread, apples.",
  cabin: "Cabin Wi-Fi password: pine-needle-77. Key under the mat.",
  books: "Middlemarch, Moby Dick.",
};
const open = [];
for (const button of document.querySelectorAll(".note")) {
  button.addEventListener("click", () => {
    const id = button.dataset.id;
    if (!open.includes(id)) open.push(id);
    document.getElementById("shown").innerHTML = "<h2>" + button.textContent + "</h2><p>" + bodies[id] + "</p>";
    fetch("/notes/state", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ open }) }).catch(() => {});
  });
}
</script>"#,
    )
}
