//! `forager simulate` end to end: the real binary, its JSON, its files and its exit codes.

use forager_tests::run_forager;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

#[test]
fn json_summary_has_the_promised_fields() {
    let out = run_forager(
        &[
            "simulate",
            "--sites",
            "12",
            "--seed",
            "7",
            "--strategy",
            "mcts",
            "--budget",
            "500",
            "--json",
        ],
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    for field in [
        "success_rate",
        "median_actions",
        "median_optimal_actions",
        "unsafe_actions",
        "iterations_per_sec",
    ] {
        assert!(summary.get(field).is_some(), "missing {field}: {summary}");
    }
    assert_eq!(summary["unsafe_actions"], 0);
    assert_eq!(summary["sites"], 12);
    assert!(summary["success_rate"].as_f64().is_some_and(|r| r > 0.5));
}

#[test]
fn all_strategies_side_by_side() {
    let out = run_forager(
        &["simulate", "--sites", "6", "--strategy", "all", "--json"],
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = doc["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["strategy"].as_str())
        .collect();
    assert_eq!(names, ["mcts", "random", "bfs", "greedy"]);
}

#[test]
fn a_quick_sweep_writes_csv_svg_and_the_best_weights() {
    let dir = std::env::temp_dir().join(format!("forager-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = run_forager(
        &[
            "simulate",
            "--sweep",
            "--quick",
            "--sites",
            "3",
            "--out",
            dir.to_str().expect("utf-8 temp dir"),
        ],
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).expect("csv written");
    // Header plus one row per grid point (3·3·2·2·2 = 72).
    assert_eq!(csv.lines().count(), 73);
    let svg = std::fs::read_to_string(dir.join("sweep.svg")).expect("svg written");
    assert!(svg.starts_with("<svg") && svg.contains("success rate vs C"));
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("best.json")).expect("best"))
            .expect("JSON");
    assert!(best["best"]["weights"]["exploration"].is_number());
    assert!(
        best["command"]
            .as_str()
            .is_some_and(|c| c.contains("--sweep"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_2_with_a_named_error() {
    let cases: &[(&[&str], &str)] = &[
        (&["simulate", "--nondeterminism", "1.5"], "nondeterminism"),
        (&["simulate", "--pages", "1"], "pages"),
        (&["simulate", "--exploration=-1"], "exploration"),
        (&["simulate", "--sites", "0"], "--sites"),
        (&["simulate", "--strategy", "dfs"], "--strategy"),
        (&["simulate", "--sweep"], "--out"),
        (
            &["simulate", "--site-params", "/nonexistent/params.json"],
            "/nonexistent/params.json",
        ),
    ];
    for (args, named) in cases {
        let out = run_forager(args, LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(named),
            "{args:?} should name {named}: {stderr}"
        );
    }
}

#[test]
fn help_teaches() {
    let out = run_forager(&["simulate", "--help"], LIMIT);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--sweep",
        "--strategy",
        "forager simulate --sites 200",
        "bfs",
    ] {
        assert!(help.contains(needle), "help lacks {needle}");
    }
}
