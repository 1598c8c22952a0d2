//! The memory that pays, end to end: a run's successes kept on disk, recalled by the next
//! run's goal, voting for the actions they took; and the reader a run falls back to without
//! a model.

use forager_tests::{forager, forager_env, sites};

/// The fixture's deep page, past decoys, and a goal for it.
const TARGET: &str = "/docs/configuration/frobnicator/timeout$";

fn args<'a>(url: &'a str, goal: &'a str, memory: &'a str) -> Vec<&'a str> {
    vec![
        "--url",
        url,
        "--goal",
        goal,
        "--success-url",
        TARGET,
        "--budget",
        "150",
        "--memory",
        memory,
        // The memory does not depend on the reader; n-grams keep this test fast.
        "--embedder",
        "ngram",
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_recalls_the_first_runs_success_and_follows_it() {
    let docs = sites::serve(sites::docs()).await;
    let memory = tempfile::tempdir().expect("a memory folder");
    let memory_path = memory.path().display().to_string();
    let url = docs.url("/docs");

    let first = forager(
        "memory-first",
        &args(
            &url,
            "Find how to configure the frobnicator timeout",
            &memory_path,
        ),
    )
    .await;
    let first_result = first.passed();
    assert_eq!(first_result.metrics.remembered, 0, "nothing to recall yet");
    // Kept on disk, in the n-gram reader's own folder.
    let logs: Vec<_> = std::fs::read_dir(memory.path())
        .expect("the memory folder exists")
        .filter_map(Result::ok)
        .map(|e| e.path().join("index.log"))
        .filter(|log| log.metadata().is_ok_and(|m| m.len() > 0))
        .collect();
    assert_eq!(logs.len(), 1, "one reader, one memory: {logs:?}");
    assert!(
        logs[0]
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n.to_string_lossy().starts_with("ngram-")),
        "{logs:?}"
    );

    // Another process, the same need in other words: the memory votes along the way.
    let second = forager(
        "memory-second",
        &args(&url, "frobnicator timeout configuration", &memory_path),
    )
    .await;
    let second_result = second.passed();
    assert!(
        second_result.metrics.remembered > 0,
        "the memory never voted: {:?}",
        second_result.metrics
    );
    // The remembered route was followed: in the tree that found the success, every step
    // below the branch carries the memory's vote and was its parent's first child. (Action
    // counts are no measure here: the nodes' parallel workers spend what timing gives them.)
    let journal = std::fs::read_to_string(second.out.join("events.jsonl")).expect("journal");
    let mut nodes = std::collections::BTreeMap::new();
    for event in journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "report")
    {
        let tree = &event["tree"];
        for node in tree["nodes"].as_array().into_iter().flatten() {
            let key = (
                event["node"].to_string(),
                event["branch"].as_u64(),
                tree["instance"].as_u64(),
            );
            nodes.insert((key, node["id"].as_u64()), node.clone());
        }
    }
    let (success_key, _) = nodes
        .iter()
        .find(|(_, n)| n["status"] == "success")
        .expect("the success is in a reported tree");
    let tree = success_key.0.clone();
    let mut at = success_key.1;
    let mut followed = 0;
    while let Some(node) = nodes.get(&(tree.clone(), at)) {
        let Some(parent) = node["parent"].as_u64() else {
            break;
        };
        assert!(
            node["replay"].as_f64().is_some_and(|r| r > 0.0),
            "a step of the winning path without the memory's vote: {node}"
        );
        let first_child = nodes
            .iter()
            .filter(|((t, _), n)| *t == tree && n["parent"].as_u64() == Some(parent))
            .filter_map(|((_, id), _)| *id)
            .min();
        assert_eq!(
            first_child, at,
            "the remembered action was tried first: {node}"
        );
        followed += 1;
        at = Some(parent);
    }
    assert!(
        followed >= 1,
        "the path below the branch follows the memory"
    );
    // The report shows it: the votes as R on the tree, and the count of pages.
    let report = std::fs::read_to_string(second.out.join("report.html")).expect("a report");
    assert!(report.contains("memory vote R"), "no vote in the tree");
    assert!(report.contains("pages where the memory voted"));

    // Without the memory, nothing is recalled.
    let mut without = args(&url, "frobnicator timeout configuration", &memory_path);
    without.truncate(without.len() - 4);
    without.extend(["--no-memory", "--embedder", "ngram"]);
    let control = forager("memory-none", &without).await;
    assert_eq!(control.passed().metrics.remembered, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_forager_says_so_once_and_reads_with_ngrams() {
    let docs = sites::serve(sites::docs()).await;
    let missing = tempfile::tempdir().expect("an empty folder");
    let missing = missing.path().join("no-model-here");
    let url = docs.url("/docs");
    let run = forager_env(
        "no-model",
        &[
            "--url",
            &url,
            "--goal",
            "Find how to configure the frobnicator timeout",
            "--success-url",
            TARGET,
            "--budget",
            "150",
            "--no-memory",
        ],
        &[("FORAGER_MODEL_DIR", &missing.display().to_string())],
    )
    .await;
    run.passed();
    let said = run
        .stderr
        .lines()
        .filter(|l| l.contains("reading pages with n-grams"))
        .count();
    assert_eq!(said, 1, "{}", run.stderr);
    assert!(run.stderr.contains("install-model"), "{}", run.stderr);
    // A folder named on the command line that holds no model is the user's error.
    let named = forager_env(
        "no-model-named",
        &[
            "--url",
            &url,
            "--goal",
            "anything",
            "--success-url",
            "/anywhere",
            "--embedder",
            &missing.display().to_string(),
        ],
        &[],
    )
    .await;
    assert_eq!(named.code, Some(2), "{}", named.stderr);
    assert!(named.stderr.contains("--embedder"), "{}", named.stderr);
}

/// `forager memory …` with this test's memory folder, n-grams; its stdout.
fn memory_command(args: &[&str], memory: &str) -> std::process::Output {
    let mut all = vec!["memory"];
    all.extend_from_slice(args);
    all.extend(["--memory", memory, "--embedder", "ngram"]);
    forager_tests::run_forager(&all, std::time::Duration::from_secs(60))
}

fn delivery_args<'a>(
    url: &'a str,
    item: &'a str,
    goal: &'a str,
    memory: &'a [&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "--url",
        url,
        "--goal",
        goal,
        "--success-text",
        item,
        "--input",
        "postcode=10115",
        "--budget",
        "80",
        "--embedder",
        "ngram",
    ];
    args.extend_from_slice(memory);
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verified_pass_is_tried_first_with_another_tasks_values_here_and_after_an_import() {
    let site = sites::serve(sites::workshop()).await;
    let url = site.url("/");
    let memory = tempfile::tempdir().expect("a memory folder");
    let memory_path = memory.path().display().to_string();
    let with = ["--memory", memory_path.as_str()];

    // The original task: found by search, reproduced, remembered with its parameters.
    let original = forager(
        "wf-memory-original",
        &delivery_args(
            &url,
            "Delivery of Walnut desk",
            "Check delivery of the \"Walnut desk\" to my postcode",
            &with,
        ),
    )
    .await;
    let original = original.passed();
    assert!(original.metrics.memory.is_none(), "nothing to recall yet");
    let listed = memory_command(&["list", "--json"], &memory_path);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(
        listed[0]["template"], "Check delivery of the \"{0}\" to my postcode",
        "{listed}"
    );
    assert_eq!(listed[0]["parameters"][1]["kind"], "input", "{listed}");

    // Another item of the same room: the workflow with the new value, tried first and alone,
    // reaches the success in its own steps.
    let lamp = "Check delivery of the \"Reading lamp\" to my postcode";
    let variant = forager(
        "wf-memory-variant",
        &delivery_args(&url, "Delivery of Reading lamp", lamp, &with),
    )
    .await;
    let variant_result = variant.passed();
    let used = variant_result
        .metrics
        .memory
        .clone()
        .expect("the memory was used");
    assert!(used.worked, "{used:?}");
    assert_eq!((used.steps, used.reached), (3, 3), "{used:?}");
    assert_eq!(
        variant_result.metrics.actions, 3,
        "{:?}",
        variant_result.metrics
    );
    let report = std::fs::read_to_string(variant.out.join("report.html")).expect("a report");
    assert!(
        report.contains("R: remembered workflow"),
        "the tree shows the memory's branch"
    );
    assert!(
        report.contains("id=\"memory\""),
        "the header says the memory was used"
    );

    // An item of another room: the workflow's second step is not on the page it reaches, so
    // the search goes on from there (the room), not from the start page, and still passes.
    let bench = forager(
        "wf-memory-diverges",
        &delivery_args(
            &url,
            "Delivery of Bench",
            "Check delivery of the \"Bench\" to my postcode",
            &with,
        ),
    )
    .await;
    let bench = bench.passed();
    let used = bench.metrics.memory.clone().expect("the memory was tried");
    assert!(!used.worked, "{used:?}");
    assert_eq!(used.reached, 1, "{used:?}");

    // A second installation imports the first one's signed memory and gains the same.
    let key_dir = tempfile::tempdir().expect("a key folder");
    let key = key_dir.path().join("user.key");
    let bundle = key_dir.path().join("team.memory");
    let made = forager_tests::run_forager(
        &["key", "--user", "--out", &key.display().to_string()],
        std::time::Duration::from_secs(30),
    );
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let exported = memory_command(
        &[
            "export",
            "--key",
            &key.display().to_string(),
            "--out",
            &bundle.display().to_string(),
        ],
        &memory_path,
    );
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let text = std::fs::read_to_string(&bundle).expect("the bundle");
    assert!(
        !forager_tests::holds_value(&text, "10115"),
        "an input's value in the bundle"
    );
    let fresh = tempfile::tempdir().expect("another installation");
    let fresh_path = fresh.path().display().to_string();
    let tampered = key_dir.path().join("tampered.memory");
    std::fs::write(&tampered, text.replacen("Walnut desk", "Oak table", 1)).expect("write");
    let refused = memory_command(&["import", &tampered.display().to_string()], &fresh_path);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("signature"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let imported = memory_command(&["import", &bundle.display().to_string()], &fresh_path);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let there = forager(
        "wf-memory-imported",
        &delivery_args(
            &url,
            "Delivery of Oak chair",
            "Check delivery of the \"Oak chair\" to my postcode",
            &["--memory", fresh_path.as_str()],
        ),
    )
    .await;
    let there = there.passed();
    let used = there
        .metrics
        .memory
        .clone()
        .expect("the imported memory was used");
    assert!(used.worked, "{used:?}");
    assert_eq!(there.metrics.actions, 3, "{:?}", there.metrics);
}

/// A remembered task the next goal begins with ("Log in as alice" of "Log in as alice and
/// show me the issues assigned to me") is that goal's way in: its workflow is tried first and
/// alone, and the search goes on from the page it leads to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remembered_task_the_goal_begins_with_is_its_way_in() {
    let site = sites::serve(sites::detour()).await;
    let url = site.url("/");
    let memory = tempfile::tempdir().expect("a memory folder");
    let memory_path = memory.path().display().to_string();
    let args = |goal: &'static str, text: &'static str| -> Vec<String> {
        [
            "--url",
            &url,
            "--goal",
            goal,
            "--success-text",
            text,
            "--input",
            "username=alice",
            "--input",
            "password=s3cret",
            "--budget",
            "40",
            "--memory",
            &memory_path,
            "--embedder",
            "ngram",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let login = args("Log in as alice", "Welcome alice");
    let login: Vec<&str> = login.iter().map(String::as_str).collect();
    let first = forager("part-login", &login).await;
    assert!(
        first.passed().metrics.memory.is_none(),
        "nothing to recall yet"
    );

    let mine = args(
        "Log in as alice and show me the issues assigned to me",
        "Issues assigned to alice",
    );
    let mine: Vec<&str> = mine.iter().map(String::as_str).collect();
    let run = forager("part-mine", &mine).await;
    let result = run.passed();
    let used = result
        .metrics
        .memory
        .clone()
        .expect("the login was recalled");
    assert_eq!(used.matched, "part", "{used:?}");
    assert_eq!((used.steps, used.reached), (1, 1), "{used:?}");
    let labels: Vec<&str> = result.steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(
        labels[0].contains("Password"),
        "the login's form: {labels:?}"
    );
    assert!(labels[1].contains("Your issues"), "{labels:?}");
    let report = std::fs::read_to_string(run.out.join("report.html")).expect("a report");
    assert!(
        report.contains("the goal's first part"),
        "the tree names the way in"
    );
}

/// A goal that names its record by another description, in other words, reuses the workflow
/// of a goal of the same plan's shape: "hand the dark mode request over to bob" after "hand
/// the duplex printing crash over to carol". The remembered steps are re-aimed at the issue
/// the new goal describes (whose title neither goal says) and given bob; the old issue keeps
/// carol, and each goal's save lands once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_described_in_other_words_reuses_the_workflow_of_the_same_plan() {
    let (router, assignees) = sites::handover();
    let site = sites::serve(router).await;
    let url = site.url("/issues");
    let memory = tempfile::tempdir().expect("a memory folder");
    let memory_path = memory.path().display().to_string();
    let args = |goal: &'static str, text: &'static str| -> Vec<String> {
        [
            "--url",
            &url,
            "--goal",
            goal,
            "--success-text",
            text,
            "--risk-ceiling",
            "4",
            "--budget",
            "60",
            "--memory",
            &memory_path,
            "--embedder",
            "ngram",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let first = args(
        "hand the duplex printing crash over to carol",
        "Duplex printing crashes the driver is now assigned to carol",
    );
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let original = forager("shape-original", &first).await;
    assert!(
        original.passed().metrics.memory.is_none(),
        "nothing to recall yet"
    );
    assert_eq!(assignees.of(1), "carol");
    // The search may have saved other issues on its way (a live tracker, writes allowed).
    let before: Vec<String> = (1..=5).map(|n| assignees.of(n)).collect();
    let saves = site
        .counters
        .orders
        .load(std::sync::atomic::Ordering::SeqCst);

    let second = args(
        "hand the dark mode request over to bob",
        "Dark mode makes the sidebar unreadable is now assigned to bob",
    );
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let variant = forager("shape-variant", &second).await;
    let result = variant.passed();
    let used = result.metrics.memory.clone().expect("the memory was used");
    assert_eq!(used.matched, "shape", "{used:?}");
    assert!(used.worked, "{used:?}");
    assert_eq!(used.reached, used.steps, "{used:?}");
    assert_eq!(
        result.metrics.actions, used.steps,
        "the workflow's steps and nothing else: {:?}",
        result.metrics
    );
    let after: Vec<String> = (1..=5).map(|n| assignees.of(n)).collect();
    let mut expected = before.clone();
    expected[1] = "bob".into();
    assert_eq!(
        after, expected,
        "the described issue went to bob, and no other changed (the old one kept carol)"
    );
    let landed = site
        .counters
        .orders
        .load(std::sync::atomic::Ordering::SeqCst)
        - saves;
    assert_eq!(landed, 1, "the variant's save landed once");
}
