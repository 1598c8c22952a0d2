//! The bundled demo site: a small city library with a catalogue search, book pages, and a
//! two-step reservation form (a required library card number, then a pickup branch) ending on
//! a confirmation page. Served by axum on 127.0.0.1, inside the `forager` binary.

use axum::Router;
use axum::extract::{Form, Path, Query};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use forager_queen::http::LoopbackServer;
use forager_queen::report::escape;
use std::collections::HashMap;

const BOOKS: &[(&str, &str, &str)] = &[
    (
        "rust-book",
        "The Rust Programming Language",
        "Steve Klabnik and Carol Nichols",
    ),
    (
        "rust-workbook",
        "The Rust Programming Language Workbook",
        "J. Doe",
    ),
    ("rust-atomics", "Rust Atomics and Locks", "Mara Bos"),
    (
        "zero-to-prod",
        "Zero To Production In Rust",
        "Luca Palmieri",
    ),
    (
        "sicp",
        "Structure and Interpretation of Computer Programs",
        "Abelson and Sussman",
    ),
    ("taocp", "The Art of Computer Programming", "Donald Knuth"),
    ("pragmatic", "The Pragmatic Programmer", "Hunt and Thomas"),
    (
        "ddia",
        "Designing Data-Intensive Applications",
        "Martin Kleppmann",
    ),
    (
        "go-lang",
        "The Go Programming Language",
        "Donovan and Kernighan",
    ),
    (
        "c-lang",
        "The C Programming Language",
        "Kernighan and Ritchie",
    ),
    (
        "gardening",
        "The Vegetable Gardener's Bible",
        "Edward C. Smith",
    ),
    ("baking", "The Bread Baker's Apprentice", "Peter Reinhart"),
];

const BRANCHES: &[&str] = &["Riverside", "Central", "Hilltop", "Harbour"];

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} · City Library</title>
<style>body{{font-family:sans-serif;max-width:48rem;margin:2rem auto;line-height:1.5}}
nav a{{margin-right:1rem}} .error{{color:#b00}} label{{display:block;margin-top:.5rem}}</style></head>
<body><nav><a href="/">Home</a><a href="/hours">Opening hours</a><a href="/events">Events</a><a href="/about">About us</a></nav>
<h1>{title}</h1>{body}</body></html>"#,
        title = escape(title)
    ))
}

async fn home() -> Html<String> {
    page(
        "City Library",
        r#"<p>Welcome! Borrow books, reserve copies for pickup, join our events.</p>
<form action="/search" method="get" role="search" name="catalogue-search">
<label for="q">Search the catalogue</label>
<input id="q" name="q" type="search" placeholder="Title or author">
<button type="submit">Search</button></form>
<h2>Also here</h2><ul><li><a href="/digital">Digital resources</a></li><li><a href="/kids">Kids' corner</a></li></ul>"#,
    )
}

async fn info(Path(what): Path<String>) -> Response {
    let body = match what.as_str() {
        "hours" => "<p>Monday to Saturday, 9:00 to 18:00.</p>",
        "events" => "<p>Reading club every Thursday. <a href=\"/events/club\">Reading club</a></p>",
        "about" => "<p>A public library since 1902.</p>",
        "digital" => "<p>E-books and audiobooks for members.</p>",
        "kids" => "<p>Story time on Saturdays.</p>",
        _ => return (axum::http::StatusCode::NOT_FOUND, page("Not found", "")).into_response(),
    };
    page(&what.replace('-', " "), body).into_response()
}

async fn search(Query(query): Query<HashMap<String, String>>) -> Html<String> {
    let q = query
        .get("q")
        .map(|s| s.trim().to_lowercase())
        .unwrap_or_default();
    let hits: Vec<String> = BOOKS
        .iter()
        .filter(|(_, title, author)| {
            !q.is_empty()
                && (title.to_lowercase().contains(&q) || author.to_lowercase().contains(&q))
        })
        .map(|(id, title, author)| {
            format!(
                "<li><a href=\"/book/{id}\">{}</a> by {}</li>",
                escape(title),
                escape(author)
            )
        })
        .collect();
    let body = if hits.is_empty() {
        format!("<p role=\"status\">No results for “{}”.</p>", escape(&q))
    } else {
        format!(
            "<p role=\"status\">{} results for “{}”.</p><ul>{}</ul>",
            hits.len(),
            escape(&q),
            hits.join("")
        )
    };
    page("Search results", &body)
}

fn book_of(id: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    BOOKS.iter().find(|(book, _, _)| *book == id)
}

async fn book(Path(id): Path<String>) -> Response {
    let Some((id, title, author)) = book_of(&id) else {
        return (axum::http::StatusCode::NOT_FOUND, page("Not found", "")).into_response();
    };
    page(
        title,
        &format!(
            "<p>By {}. 3 copies, 1 available.</p><p><a href=\"/reserve/{id}\">Reserve a copy</a></p>\
             <p><a href=\"/search?q=programming\">Similar books</a></p>",
            escape(author)
        ),
    )
    .into_response()
}

fn card_form(id: &str, title: &str, error: Option<&str>) -> Html<String> {
    let error = error.map_or(String::new(), |e| {
        format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e))
    });
    page(
        "Reserve a copy",
        &format!(
            r#"<p>Step 1 of 2: who is reserving <em>{}</em>?</p>{error}
<form method="post" action="/reserve/{id}/card" name="reservation-card">
<label for="card">Library card number</label>
<input id="card" name="card" required inputmode="numeric" placeholder="8 digits" aria-invalid="{}">
<button type="submit">Next</button></form>"#,
            escape(title),
            !error.is_empty()
        ),
    )
}

async fn reserve(Path(id): Path<String>) -> Response {
    match book_of(&id) {
        Some((id, title, _)) => card_form(id, title, None).into_response(),
        None => (axum::http::StatusCode::NOT_FOUND, page("Not found", "")).into_response(),
    }
}

async fn reserve_card(
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let Some((id, title, _)) = book_of(&id) else {
        return (axum::http::StatusCode::NOT_FOUND, page("Not found", "")).into_response();
    };
    let card = form.get("card").map(|c| c.trim()).unwrap_or("");
    if card.len() != 8 || !card.chars().all(|c| c.is_ascii_digit()) {
        return card_form(
            id,
            title,
            Some("Please enter a valid library card number (8 digits)."),
        )
        .into_response();
    }
    let options: String = BRANCHES
        .iter()
        .map(|b| format!("<option value=\"{}\">{b}</option>", b.to_lowercase()))
        .collect();
    page(
        "Choose a pickup branch",
        &format!(
            r#"<p>Step 2 of 2: where will you collect <em>{}</em>?</p>
<form method="post" action="/reserve/{id}/save" name="reservation-branch">
<input type="hidden" name="card" value="{card}">
<label for="branch">Pickup branch</label>
<select id="branch" name="branch"><option value="">Choose…</option>{options}</select>
<button type="submit">Save reservation</button></form>"#,
            escape(title)
        ),
    )
    .into_response()
}

async fn reserve_save(
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let branch = form.get("branch").cloned().unwrap_or_default();
    if book_of(&id).is_none() || !BRANCHES.iter().any(|b| b.to_lowercase() == branch) {
        return Redirect::to(&format!("/reserve/{id}")).into_response();
    }
    Redirect::to(&format!("/reservation/{id}/{branch}")).into_response()
}

async fn reservation(Path((id, branch)): Path<(String, String)>) -> Response {
    let Some((_, title, _)) = book_of(&id) else {
        return (axum::http::StatusCode::NOT_FOUND, page("Not found", "")).into_response();
    };
    page(
        "Reservation saved",
        &format!(
            "<p>Reservation saved: <em>{}</em>, pickup at the {} branch.</p>",
            escape(title),
            escape(&branch)
        ),
    )
    .into_response()
}

/// The router of the demo site.
pub fn router() -> Router {
    Router::new()
        .route("/", get(home))
        .route("/search", get(search))
        .route("/book/{id}", get(book))
        .route("/reserve/{id}", get(reserve))
        .route("/reserve/{id}/card", post(reserve_card))
        .route("/reserve/{id}/save", post(reserve_save))
        .route("/reservation/{id}/{branch}", get(reservation))
        .route("/{what}", get(info))
}

/// Serves the demo site on an ephemeral port of 127.0.0.1.
pub async fn serve() -> anyhow::Result<LoopbackServer> {
    Ok(LoopbackServer::start(router()).await?)
}
