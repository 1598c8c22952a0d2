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
