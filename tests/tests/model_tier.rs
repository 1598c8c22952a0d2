//! The language-model tier end to end: the real binary and Chromium against a real local
//! model (`scripts/local-model`: node-llama-cpp with SmolLM2-135M, from the package
//! registries) speaking the OpenAI wire format on 127.0.0.1; and the client against loopback
//! servers that behave like the ones in the field (no structured output, overloaded, down).
//!
//! A 135M model's judgement is near chance: these tests check the protocol, the routing and
//! the accounting, never its wisdom.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use forager_node::llm::client::{ChatClient, LlmError, Question};
use forager_protocol::llm::{Judge, ModelUse, Tier};
use forager_protocol::result::{RunResult, Status};
use forager_tests::local_model::{LocalModel, MODEL_NAME};
use forager_tests::sites::{self, Counters};
use forager_tests::{Run, forager_env};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A page that greets whoever fills its form: the name a user gave as `--input` shows on the
/// page the model judges.
fn greeter() -> axum::Router<Arc<Counters>> {
    axum::Router::new()
        .route(
            "/",
            get(|| async {
                Html(
                    "<!doctype html><title>Greeter</title><h1>Greeter</h1>\
                     <form action=/hello><label for=n>Your name</label><input id=n name=name>\
                     <button>Say hello</button></form><p><a href=/about>About</a></p>",
                )
            }),
        )
        .route(
            "/about",
            get(|| async { Html("<!doctype html><title>About</title><p>A greeter.</p>") }),
        )
        .route(
            "/hello",
            get(|params: axum::extract::Query<std::collections::HashMap<String, String>>| async move {
                let name = params.get("name").cloned().unwrap_or_default();
                let name: String = name.chars().filter(|c| c.is_alphanumeric() || *c == ' ').collect();
                Html(format!(
                    "<!doctype html><title>Hello</title><h1>Hello, {name}!</h1>\
                     <p>Nice to meet you, {name}.</p>"
                ))
            }),
        )
}

/// A hall whose buttons, named alike, reload the hall, but for the last, which opens the
/// prize room: a search that tries them in turn keeps landing where it was (stuck) until it
/// reaches the last one.
fn maze() -> axum::Router<Arc<Counters>> {
    const BUTTONS: usize = 16;
    axum::Router::new()
        .route(
            "/",
            get(|| async {
                let buttons: String = (1..=BUTTONS)
                    .map(|i| {
                        let to = if i == BUTTONS { "/prize" } else { "/" };
                        format!("<button onclick=\"location.href='{to}'\">Option {i}</button>")
                    })
                    .collect();
                Html(format!(
                    "<!doctype html><title>Hall</title><h1>Hall</h1><p>Choose.</p>{buttons}"
                ))
            }),
        )
        .route(
            "/prize",
            get(|| async {
                Html("<!doctype html><title>Prize</title><h1>You found the prize</h1>")
            }),
        )
}

/// The docs fixture's task (a page whose links the rules mostly rank clearly), as flags.
fn docs_task(docs: &sites::Fixture, budget: u32) -> Vec<String> {
    vec![
        "--url".into(),
        docs.url("/docs"),
        "--goal".into(),
        "Find how to configure the frobnicator timeout".into(),
        "--success-url".into(),
        "/docs/configuration/frobnicator/timeout$".into(),
        "--budget".into(),
        budget.to_string(),
    ]
}

fn model_args(model: &LocalModel) -> Vec<String> {
    model.explore_args()
}

async fn explore(test: &str, args: &[String], cache: &std::path::Path) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    forager_env(
        test,
        &args,
        &[("FORAGER_MODEL_CACHE", cache.to_str().expect("utf-8 path"))],
    )
    .await
}

fn result(run: &Run) -> &RunResult {
    run.result
        .as_ref()
        .unwrap_or_else(|| panic!("no result document; stderr: {}", run.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_alone_is_refused_without_a_model() {
    let site = sites::serve(greeter()).await;
    let run = forager_env(
        "model-refused",
        &["--url", &site.url("/"), "--goal", "Say hello with my name"],
        &[],
    )
    .await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("--model-url") && run.stderr.contains("scripts/local-model"),
        "the refusal says how to add a model: {}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_alone_is_judged_by_the_model_and_no_input_reaches_it() {
    let Some(model) = LocalModel::start("model-verdict").await else {
        return;
    };
    let site = sites::serve(greeter()).await;
    let cache = tempfile::tempdir().expect("tempdir");
    let schema = cache.path().join("answer.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"greeting":{"type":"string","minLength":3}},"required":["greeting"]}"#,
    )
    .expect("schema file");
    let mut args = vec![
        "--answer-schema".into(),
        schema.to_str().expect("utf-8").into(),
        "--url".into(),
        site.url("/"),
        "--goal".into(),
        "Say hello with my name".into(),
        "--input".into(),
        "name=Zebediah Quux".into(),
        "--budget".into(),
        "12".into(),
    ];
    args.extend(model_args(&model));
    let run = explore("model-verdict", &args, cache.path()).await;
    let result = result(&run);
    eprintln!(
        "status {:?}, steps {:?}, model {:?}",
        result.status,
        result.steps.iter().map(|s| &s.action).collect::<Vec<_>>(),
        result.metrics.model
    );
    assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
    assert_eq!(
        result.judged_by,
        Judge::Model,
        "no predicate: the model judged"
    );
    let usage = &result.metrics.model;
    assert!(
        usage.uses.get(&ModelUse::Verdict).copied().unwrap_or(0) >= 1,
        "{usage:?}"
    );
    assert!(usage.tokens() > 0, "{usage:?}");
    assert_eq!(
        result.metrics.tokens,
        usage.tokens(),
        "tokens enter the cost"
    );
    if result.status == Status::Pass {
        assert!(!result.steps.is_empty());
        // The answer in the schema's shape, read on the final page (masked as it was sent).
        let answer = result
            .answer
            .as_ref()
            .expect("an answer in the schema's shape");
        let answer: Value = serde_json::from_str(&answer.0).expect("JSON");
        assert!(
            answer["greeting"].as_str().is_some_and(|g| g.len() >= 3),
            "{answer}"
        );
        assert!(!answer.to_string().contains("Zebediah"), "{answer}");
        let document: Value = serde_json::from_str(
            &std::fs::read_to_string(run.out.join("result.json")).expect("result.json"),
        )
        .expect("JSON");
        assert!(
            document["answer"].is_object(),
            "the answer is JSON in result.json"
        );
    }
    // The page that greets the user by name was described to the model, masked.
    let received = model.requests();
    assert!(
        site.requests().iter().any(|r| r.starts_with("GET /hello")),
        "the search submitted the form: {:?}",
        site.requests()
    );
    assert!(received.contains("<input name>"), "{received}");
    for secret in ["Zebediah", "Quux"] {
        assert!(
            !received.contains(secret),
            "{secret} reached the model: {received}"
        );
    }
    let report = std::fs::read_to_string(run.out.join("report.html")).expect("report.html");
    assert!(
        report.contains("model calls"),
        "the report shows the model's calls"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_asks_where_the_rules_are_unsure_and_a_second_run_costs_nothing() {
    let Some(model) = LocalModel::start("model-router").await else {
        return;
    };
    let docs = sites::serve(sites::docs()).await;
    let cache = tempfile::tempdir().expect("tempdir");
    let mut args = docs_task(&docs, 80);
    // One node: the same seed then walks the same pages, so the second run asks the same
    // questions.
    args.extend(["--seed", "3", "--nodes", "1"].map(String::from));
    args.extend(model_args(&model));
    let first = explore("model-router-1", &args, cache.path()).await;
    let first = first.passed().clone();
    let usage = &first.metrics.model;
    eprintln!(
        "first run: {} actions, model {usage:?}",
        first.metrics.actions
    );
    let asked = usage.uses.values().sum::<u64>();
    assert!(
        usage.uses.get(&ModelUse::Priors).copied().unwrap_or(0) >= 1,
        "{usage:?}"
    );
    assert!(
        usage.rules_decided >= 1,
        "the rules decide where they are clear: {usage:?}"
    );
    assert!(
        usage.calls() < u64::from(first.metrics.actions),
        "model calls {} < actions {}: {usage:?}",
        usage.calls(),
        first.metrics.actions
    );
    let small = &usage.tiers[&Tier::Small];
    assert!(
        small.prompt_tokens > 0 && small.completion_tokens > 0,
        "{small:?}"
    );
    assert_eq!(first.metrics.tokens, usage.tokens());
    assert!(asked >= usage.calls());
    // Every question offered the candidates it asked about, numbered; the answers chose
    // among them (checked by the client), and the request named the model.
    let received = model.requests();
    for line in received.lines() {
        let body: Value = serde_json::from_str(line).expect("each request is JSON");
        assert_eq!(body["model"], MODEL_NAME);
        assert_eq!(body["response_format"]["type"], "json_schema");
    }
    let requests_before = received.lines().count();

    let second = explore("model-router-2", &args, cache.path()).await;
    let second = second.passed();
    let again = &second.metrics.model;
    assert_eq!(
        again.tokens(),
        0,
        "every answer came from the cache: {again:?}"
    );
    assert_eq!(second.metrics.tokens, 0);
    assert!(again.tiers[&Tier::Small].cached >= 1, "{again:?}");
    assert_eq!(
        model.requests().lines().count(),
        requests_before,
        "no new request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_search_asks_the_large_tier_for_a_recovery() {
    let Some(model) = LocalModel::start("model-recovery").await else {
        return;
    };
    let site = sites::serve(maze()).await;
    let cache = tempfile::tempdir().expect("tempdir");
    let mut args = vec![
        "--url".into(),
        site.url("/"),
        "--goal".into(),
        "Find the prize".into(),
        "--success-url".into(),
        "/prize$".into(),
        "--budget".into(),
        "60".into(),
        // One node, one browser context: its actions are the ones the router watches.
        "--nodes".into(),
        "1".into(),
        // The large tier: the same server (it serves one model) as a tier of its own.
        "--planner-url".into(),
        model.url.clone(),
        "--planner".into(),
        MODEL_NAME.into(),
    ];
    args.extend(model_args(&model));
    let run = explore("model-recovery", &args, cache.path()).await;
    let result = result(&run);
    eprintln!(
        "status {:?}, model {:?}",
        result.status, result.metrics.model
    );
    let usage = &result.metrics.model;
    assert!(
        usage.uses.get(&ModelUse::Recovery).copied().unwrap_or(0) >= 1,
        "the search was stuck between two rooms and asked for a recovery: {usage:?}"
    );
    let large = usage
        .tiers
        .get(&Tier::Large)
        .expect("the large tier was asked");
    assert!(large.calls + large.cached + large.failed >= 1, "{large:?}");
    assert!(
        model.requests().contains("The agent is stuck"),
        "the recovery question reached the server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_server_that_dies_costs_the_run_only_its_help() {
    let Some(mut model) = LocalModel::start("model-dies").await else {
        return;
    };
    let docs = sites::serve(sites::docs()).await;
    let cache = tempfile::tempdir().expect("tempdir");
    let mut args = docs_task(&docs, 120);
    args.extend(model_args(&model));
    let log = model.log.clone();
    let run = tokio::spawn({
        let cache = cache.path().to_owned();
        async move { explore("model-dies", &args, &cache).await }
    });
    // Killed once it has answered a first question.
    let answered = async {
        while std::fs::read_to_string(&log).map_or(true, |t| t.is_empty()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), answered)
        .await
        .expect("the run asks the model a first question");
    model.kill().await;
    let run = run.await.expect("the run");
    let result = run.passed();
    let usage = &result.metrics.model;
    let small = &usage.tiers[&Tier::Small];
    assert!(
        small.failed >= 1 || usage.fell_back.is_some() || small.calls >= 1,
        "{usage:?}"
    );
    if let Some(reason) = &usage.fell_back {
        assert!(reason.starts_with("unreachable"), "{reason}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_endpoint_is_said_and_the_rules_decide() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let docs = sites::serve(sites::docs()).await;
    let cache = tempfile::tempdir().expect("tempdir");
    let mut args = docs_task(&docs, 120);
    let url = format!("http://127.0.0.1:{port}/v1");
    args.extend(["--model-url", &url, "--model", "none"].map(String::from));
    let run = explore("model-dead", &args, cache.path()).await;
    let result = run.passed();
    let usage = &result.metrics.model;
    let reason = usage.fell_back.as_deref().unwrap_or_default();
    assert!(reason.starts_with("unreachable"), "{usage:?}");
    let small = &usage.tiers[&Tier::Small];
    assert_eq!(small.calls, 0);
    assert!(small.failed >= 1, "{small:?}");
    assert_eq!(result.metrics.tokens, 0);
}

/// A server like many in the field: no `response_format`, prose around its JSON, no usage,
/// overloaded at first.
#[derive(Default)]
struct Plain {
    requests: AtomicU32,
    with_schema: AtomicU32,
}

async fn plain_server(
    State(state): State<Arc<Plain>>,
    Json(body): Json<Value>,
) -> impl IntoResponse {
    let n = state.requests.fetch_add(1, Ordering::SeqCst);
    if n == 0 {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            Json(json!({"error": {"message": "slow down"}})),
        );
    }
    if body.get("response_format").is_some() {
        state.with_schema.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": "response_format is not supported by this model"}})),
        );
    }
    (
        StatusCode::OK,
        Json(json!({
            "id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant",
                "content": "Sure! The best action is this one: {\"choice\": 1} Good luck."}}]
        })),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_retries_overload_asks_in_words_where_schemas_are_refused_and_repairs() {
    let state = Arc::new(Plain::default());
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(plain_server))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("address");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = ChatClient::new(
        &format!("http://{address}/v1"),
        "plain",
        Some("sk-test".into()),
        Duration::from_secs(5),
    )
    .expect("client");
    let question = Question {
        system: "s".into(),
        user: "pick".into(),
        schema_name: "choice",
        schema: json!({"type": "object"}),
        max_tokens: 10,
    };
    let answer = client
        .ask(&question)
        .await
        .expect("an answer after a retry");
    assert_eq!(answer.value, json!({"choice": 1}));
    assert!(
        answer.prompt_tokens > 0,
        "estimated when the server gives no usage"
    );
    assert_eq!(
        state.with_schema.load(Ordering::SeqCst),
        1,
        "asked with a schema once"
    );
    // Later questions go without the schema at once.
    client.ask(&question).await.expect("a second answer");
    assert_eq!(state.with_schema.load(Ordering::SeqCst), 1);
    assert_eq!(state.requests.load(Ordering::SeqCst), 4);
    server.abort();
    // The server gone (its port closed): a named error, not a hang.
    let _ = server.await;
    let gone = ChatClient::new(
        &format!("http://{address}/v1"),
        "plain",
        None,
        Duration::from_secs(5),
    )
    .expect("client");
    let error = gone.ask(&question).await.expect_err("no server");
    assert!(
        matches!(error, LlmError::Unreachable(_) | LlmError::Timeout(_)),
        "{error}"
    );
}
