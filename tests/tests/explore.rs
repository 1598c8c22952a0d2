//! `forager explore` and `forager demo` end to end: the real binary, real headless Chromium,
//! fixture sites on real HTTP servers on 127.0.0.1.

use forager_protocol::result::{RunResult, Status};
use forager_tests::sites::{self, Fixture};
use forager_tests::{Run, forager, forager_binary};

fn passed(run: &Run) -> &RunResult {
    run.passed()
}

fn only_own_origin(result: &RunResult, fixture: &Fixture) {
    assert_eq!(result.network.allowed_origins, vec![fixture.base.clone()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shop_finds_a_product_page() {
    let shop = sites::serve(sites::shop()).await;
    let run = forager(
        "shop-product",
        &[
            "--url",
            &shop.url("/"),
            "--goal",
            "Open the product page of the ThinkPad X1 Carbon",
            "--success-url",
            "/product/x1-carbon$",
            "--budget",
            "60",
        ],
    )
    .await;
    let result = passed(&run);
    assert!(result.steps.len() <= 3, "{:?}", result.steps);
    assert!(
        result
            .steps
            .last()
            .is_some_and(|s| s.url.ends_with("/product/x1-carbon"))
    );
    only_own_origin(result, &shop);
    // Every step says why the policy chose it: its rank, its prior, the signals behind it; and
    // the report shows it.
    for step in &result.steps {
        let why = step.why.as_ref().expect("each step says why it was taken");
        assert!(why.rank >= 1 && why.rank <= why.candidates, "{why:?}");
        assert!(why.prior > 0.0 && why.prior <= 1.0, "{why:?}");
        assert!(!why.signals.is_empty(), "{why:?}");
    }
    assert!(result.first_choice_path().is_some());
    let report = std::fs::read_to_string(run.out.join("report.html")).expect("report.html");
    assert!(
        report.contains("why: the policy"),
        "the step view shows the why"
    );
    assert_verifies_and_resists_tampering(&run).await;
}

/// `forager verify DIR`: exit status and stdout.
fn verify(dir: &std::path::Path) -> (Option<i32>, String) {
    let output = std::process::Command::new(forager_binary())
        .arg("verify")
        .arg(dir)
        .output()
        .expect("forager verify runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// A passing run's directory verifies; no byte of any of its files can change unnoticed; the
/// binary names the file and the check (exit 1) or says it cannot read (exit 2).
async fn assert_verifies_and_resists_tampering(run: &Run) {
    let dir = run.out.clone();
    let (code, stdout) = tokio::task::spawn_blocking(move || verify(&dir))
        .await
        .expect("verify");
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.starts_with("verified:"), "{stdout}");
    let verified = forager_queen::artifacts::verify_run_dir(&run.out).expect("verifies");
    assert_ne!(
        verified.found_by, verified.reproduced_by,
        "a second node reproduced the path"
    );
    // The reproducer's screenshot of every step, as a JPEG file the trajectory names.
    let mut names = vec![
        "events.jsonl".to_owned(),
        "result.json".to_owned(),
        "workflow.json".to_owned(),
        "report.html".to_owned(),
    ];
    for step in 1..=verified.steps {
        let name = format!("step-{step:02}.jpg");
        let bytes = std::fs::read(run.out.join(&name)).expect("a screenshot per step");
        assert!(bytes.starts_with(&[0xff, 0xd8]), "{name} is a JPEG");
        names.push(name);
    }
    assert_eq!(verified.files, names);

    // Flip one byte at a time, in every file, across the whole file (every byte of the first
    // 256, then evenly spaced): each flip must fail verification, and restoring it must pass.
    for name in [
        "trajectory.json",
        "events.jsonl",
        "result.json",
        "workflow.json",
        "report.html",
        "step-01.jpg",
    ] {
        let path = run.out.join(name);
        let original = std::fs::read(&path).expect("artifact");
        let stride = (original.len() / 400).max(1);
        let positions = (0..original.len().min(256)).chain((256..original.len()).step_by(stride));
        let mut flips = 0;
        for position in positions {
            let mut tampered = original.clone();
            tampered[position] ^= 0x01;
            std::fs::write(&path, &tampered).expect("write");
            let outcome = forager_queen::artifacts::verify_run_dir(&run.out);
            assert!(
                outcome.is_err(),
                "{name}: flipping byte {position} ({:?}) went unnoticed",
                original[position] as char
            );
            flips += 1;
        }
        std::fs::write(&path, &original).expect("restore");
        assert!(flips >= 256.min(original.len()));
    }
    forager_queen::artifacts::verify_run_dir(&run.out).expect("verifies again once restored");

    // The binary names the file and the check, exit 1; an unreadable directory is exit 2.
    let result = run.out.join("result.json");
    let original = std::fs::read(&result).expect("result");
    let mut tampered = original.clone();
    let last = tampered.len() - 2;
    tampered[last] ^= 0x01;
    std::fs::write(&result, &tampered).expect("write");
    let dir = run.out.clone();
    let (code, stdout) = tokio::task::spawn_blocking(move || verify(&dir))
        .await
        .expect("verify");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("result.json: digest failed"), "{stdout}");
    std::fs::remove_file(&result).expect("remove");
    let dir = run.out.clone();
    let (code, stdout) = tokio::task::spawn_blocking(move || verify(&dir))
        .await
        .expect("verify");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("result.json: presence failed"), "{stdout}");
    let missing = run.out.join("no-such-run");
    let (code, _) = tokio::task::spawn_blocking(move || verify(&missing))
        .await
        .expect("verify");
    assert_eq!(code, Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_stops_at_approval_and_places_no_order() {
    let shop = sites::serve(sites::shop()).await;
    let url = shop.url("/");
    let mut args = vec!["--url", url.as_str()];
    args.extend(sites::SHOP_PURCHASE);
    let run = forager("shop-checkout", &args).await;
    let result = run.result.as_ref().expect("a result document");
    assert_eq!(result.status, Status::Failing, "{}", run.stderr);
    assert_eq!(run.code, Some(1));
    let error = result.error.as_ref().expect("a named reason");
    assert_eq!(error.reason.as_str(), "approval_required", "{error:?}");
    assert!(
        result
            .approval_required
            .iter()
            .any(|a| a.label.contains("Place order") && a.risk.level() == 5),
        "{:?}",
        result.approval_required
    );
    assert_eq!(shop.orders(), 0, "no order may be placed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_documentation_site_past_decoys() {
    let docs = sites::serve(sites::docs()).await;
    let run = forager(
        "docs",
        &[
            "--url",
            &docs.url("/docs"),
            "--goal",
            "Find how to configure the frobnicator timeout",
            "--success-url",
            "/docs/configuration/frobnicator/timeout$",
            "--budget",
            "150",
        ],
    )
    .await;
    let result = passed(&run);
    assert_eq!(result.steps.len(), 3, "{:?}", result.steps);
    // The nodes' own counters reach the result: every branch restores its root at least once,
    // and the trees grew below the queen's branches.
    let metrics = &result.metrics;
    assert!(
        metrics.cache_hits + metrics.cache_misses > 0,
        "no restore counted: {metrics:?}"
    );
    assert!(metrics.nodes > 1, "{metrics:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_gated_area() {
    let site = sites::serve(sites::gated()).await;
    let run = forager(
        "login",
        &[
            "--url",
            &site.url("/"),
            "--goal",
            "Open my invoices",
            "--success-text",
            "Invoice #1042",
            "--input",
            "username=ada",
            "--input",
            "password=correct-horse",
            "--budget",
            "60",
        ],
    )
    .await;
    let result = passed(&run);
    let login = result
        .steps
        .iter()
        .find(|s| s.label.contains("Password"))
        .expect("a login step");
    // The password stays a reference to the input, never its value.
    assert!(
        !serde_json::to_string(result)
            .expect("json")
            .contains("correct-horse")
    );
    assert_eq!(login.risk.level(), 2);
}

/// A success reached by a detour off the start page (a help page with the same login form)
/// is tried again without it, and the shorter path, reproduced, is the one published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_s_detour_off_the_start_page_is_cut_before_it_is_published() {
    let site = sites::serve(sites::detour()).await;
    let run = forager(
        "detour",
        &[
            "--url",
            &site.url("/"),
            "--goal",
            "Log in as alice",
            "--success-text",
            "Welcome alice",
            "--input",
            "username=alice",
            "--input",
            "password=s3cret",
            "--budget",
            "40",
        ],
    )
    .await;
    let result = passed(&run);
    let journal = std::fs::read_to_string(run.out.join("events.jsonl")).expect("journal");
    let events: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).expect("a journal line"))
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["event"] == kind).collect()
    };
    // The search's first success took a detour: the start page ranks the help link and the
    // form's bare button (a click that reaches the login page) above the filled form, and
    // the two nodes take those two branches first…
    let first = of("success")
        .first()
        .map(|e| e["actions"].clone())
        .expect("a success");
    assert_eq!(first.as_array().map(Vec::len), Some(2), "{first}");
    assert!(first[0].to_string().starts_with("\"click "), "{first}");
    // …its shortcut was tried (the start page's own form), found, and reproduced.
    let shortcuts = of("shortcut");
    assert_eq!(shortcuts.len(), 1, "{journal}");
    assert_eq!(shortcuts[0]["steps"].as_array().map(Vec::len), Some(1));
    assert!(
        of("verified")
            .iter()
            .any(|e| e["actions"].as_array().map(Vec::len) == Some(1)),
        "{journal}"
    );
    let labels: Vec<&str> = result.steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert!(labels[0].contains("Password"), "{labels:?}");
    // The workflow published is the short one too.
    let workflow = std::fs::read_to_string(run.out.join("workflow.json")).expect("workflow");
    let workflow: serde_json::Value = serde_json::from_str(&workflow).expect("json");
    assert_eq!(
        workflow["steps"].as_array().map(Vec::len),
        Some(1),
        "{workflow}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_wizard_with_validation() {
    let site = sites::serve(sites::wizard()).await;
    let run = forager(
        "wizard",
        &[
            "--url",
            &site.url("/"),
            "--goal",
            "Apply for the \"Pro\" plan",
            "--success-text",
            "Application saved for the pro plan",
            "--input",
            "name=Ada Lovelace",
            "--input",
            "email=ada@example.org",
            "--input",
            "postcode=10115",
            "--budget",
            "80",
        ],
    )
    .await;
    let result = passed(&run);
    // The form steps got a validator verdict.
    assert!(
        result.steps.iter().any(|s| s.verdict.is_some()),
        "{:?}",
        result.steps
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_content_is_made_repeatable_by_the_seed() {
    let site = sites::serve(sites::random()).await;
    let args = [
        "--url",
        &site.url("/"),
        "--goal",
        "Find the treasure",
        "--success-url",
        "/treasure$",
        "--seed",
        "11",
        "--budget",
        "40",
        // One node: with several, whichever success reaches the queen first wins, so two
        // runs may return different (valid) paths. The seed's promise is about one search.
        "--nodes",
        "1",
    ];
    let first = forager("random-1", &args).await;
    let second = forager("random-2", &args).await;
    let (a, b) = (passed(&first), passed(&second));
    let fingerprints = |r: &RunResult| r.steps.iter().map(|s| s.fingerprint).collect::<Vec<_>>();
    let labels = |r: &RunResult| r.steps.iter().map(|s| s.label.clone()).collect::<Vec<_>>();
    assert_eq!(
        labels(a),
        labels(b),
        "the same seed gives the same trajectory"
    );
    assert_eq!(fingerprints(a), fingerprints(b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_injection_reaches_no_other_origin() {
    let canary = sites::serve(sites::canary()).await;
    let site = sites::serve(sites::hostile(canary.base.clone())).await;
    let run = forager(
        "inject",
        &[
            "--url",
            &site.url("/inject"),
            "--goal",
            "Read the privacy policy",
            "--success-text",
            "We never sell your data",
            "--budget",
            "30",
        ],
    )
    .await;
    let result = passed(&run);
    assert_eq!(canary.hits(), 0, "the other origin was reached");
    only_own_origin(result, &site);
    assert!(
        result.network.blocked_requests >= 1,
        "the image to the canary was blocked"
    );
    assert!(
        result
            .network
            .blocked_urls
            .iter()
            .all(|u| u.starts_with(&canary.base)),
        "{:?}",
        result.network.blocked_urls
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_loop_is_a_navigation_failure() {
    let canary = sites::serve(sites::canary()).await;
    let site = sites::serve(sites::hostile(canary.base.clone())).await;
    let run = forager(
        "loop",
        &[
            "--url",
            &site.url("/loop/a"),
            "--goal",
            "Anything",
            "--success-text",
            "never",
        ],
    )
    .await;
    let result = run.result.as_ref().expect("a result document");
    assert_eq!(run.code, Some(1));
    let error = result.error.as_ref().expect("a reason");
    assert_eq!(error.reason.as_str(), "navigation_failed");
    assert!(error.detail.contains("REDIRECT"), "{}", error.detail);
    assert_eq!(canary.hits(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alert_storm_does_not_block() {
    let canary = sites::serve(sites::canary()).await;
    let site = sites::serve(sites::hostile(canary.base.clone())).await;
    let run = forager(
        "alerts",
        &[
            "--url",
            &site.url("/alerts"),
            "--goal",
            "Continue",
            "--success-text",
            "Calm again",
            "--budget",
            "20",
        ],
    )
    .await;
    only_own_origin(passed(&run), &site);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_thousand_elements() {
    let canary = sites::serve(sites::canary()).await;
    let site = sites::serve(sites::hostile(canary.base.clone())).await;
    let run = forager(
        "huge",
        &[
            "--url",
            &site.url("/huge"),
            "--goal",
            "Find the way out",
            "--success-text",
            "Made it out",
            "--budget",
            "20",
        ],
    )
    .await;
    only_own_origin(passed(&run), &site);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_finishes_loading() {
    let canary = sites::serve(sites::canary()).await;
    let site = sites::serve(sites::hostile(canary.base.clone())).await;
    let run = forager(
        "slow",
        &[
            "--url",
            &site.url("/slow"),
            "--goal",
            "Exit",
            "--success-text",
            "Out of the slow page",
            "--budget",
            "20",
            "--timeout",
            "120",
        ],
    )
    .await;
    only_own_origin(passed(&run), &site);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_passes() {
    let run = forager("demo", &["demo"]).await;
    let result = passed(&run);
    assert_eq!(result.steps.len(), 5, "{:?}", result.steps);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_exits_2_before_any_browser() {
    let cases: &[(&[&str], &str)] = &[
        (&["--goal", "x", "--success-text", "y"], "--url"),
        (
            &["--url", "http://127.0.0.1:9/", "--success-text", "y"],
            "--goal",
        ),
        (
            &[
                "--url",
                "ftp://127.0.0.1/",
                "--goal",
                "x",
                "--success-text",
                "y",
            ],
            "start_url",
        ),
        (
            &[
                "--url",
                "http://127.0.0.1:9/",
                "--goal",
                "x",
                "--success-url",
                "(",
            ],
            "success[0]",
        ),
        (&["--url", "http://127.0.0.1:9/", "--goal", "x"], "success"),
        (
            &[
                "--url",
                "http://127.0.0.1:9/",
                "--goal",
                "x",
                "--success-text",
                "y",
                "--input",
                "novalue",
            ],
            "NAME=VALUE",
        ),
        (
            &["--task", "/nonexistent/task.toml"],
            "/nonexistent/task.toml",
        ),
    ];
    for (args, named) in cases {
        let run = forager("bad-input", args).await;
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(named),
            "{args:?} should name {named}: {}",
            run.stderr
        );
        assert!(run.result.is_none());
    }
}

/// Runs `forager explore` with its own profile prefix, watching which process groups its
/// browsers lead; after `signal_after` (if given) sends it that signal. Returns the exit code,
/// the groups seen, and every process still in them the moment the command has returned.
async fn explore_and_count_leftovers(
    test: &str,
    args: &[&str],
    signal: Option<(&str, std::time::Duration)>,
) -> (Option<i32>, usize, Vec<(u32, String)>, std::path::PathBuf) {
    let prefix = forager_tests::unique_prefix(test);
    explore_in(&prefix, &std::env::temp_dir(), args, signal).await
}

/// [`explore_and_count_leftovers`] with a given profile prefix and temporary directory.
async fn explore_in(
    prefix: &str,
    tmp: &std::path::Path,
    args: &[&str],
    signal: Option<(&str, std::time::Duration)>,
) -> (Option<i32>, usize, Vec<(u32, String)>, std::path::PathBuf) {
    let out = std::env::temp_dir().join(format!("{prefix}out"));
    let _ = std::fs::remove_dir_all(&out);
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build helper");
    let mut child = std::process::Command::new(binary)
        .arg("explore")
        .args(args)
        .arg("--no-memory")
        .arg("--out")
        .arg(&out)
        .env("FORAGER_PROFILE_PREFIX", prefix)
        .env("TMPDIR", tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("forager starts");
    let started = std::time::Instant::now();
    let mut groups = std::collections::BTreeSet::new();
    let mut signalled = false;
    // The signal's delay counts from the first browser: on a loaded machine, starting the
    // cluster took 6.5 of 8 s, and the search had not begun when the signal came.
    let mut browsing: Option<std::time::Instant> = None;
    let code = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break status.code();
        }
        groups.extend(forager_tests::chromium_groups(prefix));
        if !groups.is_empty() && browsing.is_none() {
            browsing = Some(std::time::Instant::now());
        }
        if let Some((name, after)) = signal
            && !signalled
            && browsing.is_some_and(|at| at.elapsed() >= after)
        {
            let sent = std::process::Command::new("kill")
                .args([format!("-{name}"), child.id().to_string()])
                .status()
                .expect("kill runs");
            assert!(sent.success());
            signalled = true;
        }
        assert!(
            started.elapsed() < forager_tests::LIMIT,
            "forager did not finish"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    // Counted at once: a program that owns browsers waits for them before it exits.
    let left = forager_tests::processes_in_groups(&groups);
    forager_tests::assert_no_chromium_left(prefix);
    (code, groups.len(), left, out)
}

/// A task on the documentation site that runs until stopped (nothing says its text).
fn endless_task(url: &str) -> [&str; 8] {
    [
        "--url",
        url,
        "--goal",
        "Find the page that does not exist",
        "--success-text",
        "no page says this",
        "--budget",
        "5000",
    ]
}

/// The documentation site's three-step task, from `url` (its `/docs`).
fn frobnicator_task(url: &str) -> [&str; 6] {
    [
        "--url",
        url,
        "--goal",
        "Find how to configure the frobnicator timeout",
        "--success-url",
        "/docs/configuration/frobnicator/timeout$",
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_browser_outlives_explore() {
    let docs = sites::serve(sites::docs()).await;
    let url = docs.url("/docs");
    let (code, groups, left, _) =
        explore_and_count_leftovers("leftovers", &frobnicator_task(&url), None).await;
    assert_eq!(code, Some(0));
    // A browser per node of the embedded cluster, each with a crash handler of its own.
    assert!(groups >= 2, "{groups} process groups seen");
    assert_eq!(
        left,
        Vec::new(),
        "Chromium processes left when explore returned"
    );
}

/// Stopped by a signal, explore ends its task at the queen: no browser is left, and the
/// result (and the journal's last entry) keeps what the search did until then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_browser_outlives_an_interrupted_explore() {
    let docs = sites::serve(sites::docs()).await;
    let url = docs.url("/docs");
    for (signal, after) in [("TERM", 8), ("INT", 3)] {
        let (code, groups, left, out) = explore_and_count_leftovers(
            &format!("interrupted-{signal}"),
            &endless_task(&url),
            Some((signal, std::time::Duration::from_secs(after))),
        )
        .await;
        assert_eq!(code, Some(1), "SIG{signal}");
        assert!(groups >= 1, "SIG{signal}");
        assert_eq!(left, Vec::new(), "SIG{signal}: processes left");
        let result: RunResult = serde_json::from_slice(
            &std::fs::read(out.join("result.json")).expect("a result, interrupted or not"),
        )
        .expect("a result document");
        let error = result.error.expect("an interrupted run is failing");
        assert_eq!(error.reason.as_str(), "interrupted", "SIG{signal}");
        // The queen's own result, written when the task ended: the journal ends with it.
        let journal = std::fs::read_to_string(out.join("events.jsonl")).expect("the journal");
        let last = journal.lines().last().expect("a journal entry");
        let finished: serde_json::Value = serde_json::from_str(last).expect("a journal entry");
        assert_eq!(finished["event"], "finished", "SIG{signal}: {last}");
        assert_eq!(
            finished["result"]["metrics"]["actions"],
            serde_json::json!(result.metrics.actions),
            "SIG{signal}"
        );
        if signal == "TERM" {
            // Eight seconds after its first browser, it had done something, and says so.
            assert!(
                result.metrics.actions > 0,
                "SIG{signal}: {:?}",
                result.metrics
            );
            assert!(
                result.metrics.nodes > 1,
                "SIG{signal}: {:?}",
                result.metrics
            );
        }
    }
}

/// SIGKILL gives forager no chance to clean up: its browsers die with it all the same (they
/// start with a parent-death signal, and Chromium's helpers follow their main process), and
/// what it could not remove (profiles, Chromium's socket folders) the next run removes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_browser_outlives_a_killed_explore_and_the_next_run_clears_its_folders() {
    let docs = sites::serve(sites::docs()).await;
    let url = docs.url("/docs");
    let prefix = forager_tests::unique_prefix("killed");
    let tmp = std::env::temp_dir().join(format!("{prefix}tmp"));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("a temporary directory for the runs");
    let (code, groups, _, _) = explore_in(
        &prefix,
        &tmp,
        &endless_task(&url),
        Some(("KILL", std::time::Duration::from_secs(3))),
    )
    .await;
    assert_eq!(code, None, "killed by a signal");
    assert!(groups >= 1, "browsers ran before the kill");
    // `explore_in` waited (10 s at most) until no process named the prefix: every browser
    // and helper died with forager. Its folders are still there.
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.iter().any(|name| name.starts_with(&prefix)),
        "a killed forager leaves its profiles: {left:?}"
    );
    let (code, _, _, _) = explore_in(&prefix, &tmp, &frobnicator_task(&url), None).await;
    assert_eq!(code, Some(0));
    forager_tests::assert_left_empty(&tmp);
}

/// `forager plan` reads a goal before any search: a two-condition goal's plan names both
/// conditions; a login the goal asks for with no credentials and no capsule is an unmet
/// precondition (exit 1), and `explore` says so before a browser starts
/// (`precondition_unmet`, no action).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_names_its_conditions_and_an_unmet_login_before_any_search() {
    let goal = "Log in as alice and report a new bug called \"Export fails\" with urgent priority";
    let planned = forager(
        "plan-unmet",
        &[
            "plan",
            "--url",
            "http://127.0.0.1:9/tracker/",
            "--goal",
            goal,
        ],
    )
    .await;
    assert_eq!(planned.code, Some(1), "{}", planned.stderr);
    let report: forager_protocol::plan::PlanReport = serde_json::from_str(
        &std::fs::read_to_string(&planned.out).expect("the plan report written"),
    )
    .expect("a plan report");
    assert_eq!(report.plan.act, forager_protocol::plan::Act::Create);
    let conditions: Vec<String> = report
        .plan
        .conditions
        .iter()
        .map(|c| c.describe())
        .collect();
    assert_eq!(conditions, ["title = Export fails", "priority = urgent"]);
    assert_eq!(report.preconditions.len(), 1);
    assert_eq!(report.preconditions[0].met, Some(false));
    assert!(
        report.preconditions[0]
            .how
            .contains("no credentials and no capsule")
    );
    // With the credentials, the same plan is ready.
    let ready = forager(
        "plan-ready",
        &[
            "plan",
            "--url",
            "http://127.0.0.1:9/tracker/",
            "--goal",
            goal,
            "--input",
            "username=alice",
            "--input",
            "password=tulip",
        ],
    )
    .await;
    assert_eq!(ready.code, Some(0), "{}", ready.stderr);
    // Two filters of a listing, both named.
    let listing = forager(
        "plan-two",
        &[
            "plan",
            "--url",
            "http://127.0.0.1:9/world/countries",
            "--goal",
            "Which Asian countries have more than 100 million people? Show just those",
        ],
    )
    .await;
    assert_eq!(listing.code, Some(0), "{}", listing.stderr);
    let report: forager_protocol::plan::PlanReport =
        serde_json::from_str(&std::fs::read_to_string(&listing.out).expect("written"))
            .expect("a plan report");
    let conditions: Vec<String> = report
        .plan
        .conditions
        .iter()
        .map(|c| c.describe())
        .collect();
    assert_eq!(
        conditions,
        ["people > 100000000", "? = Asian"],
        "{conditions:?}"
    );
    // explore stops before its search, and says why.
    let started = std::time::Instant::now();
    let run = forager(
        "plan-explore",
        &[
            "--url",
            "http://127.0.0.1:9/tracker/",
            "--goal",
            goal,
            "--success-text",
            "Export fails",
        ],
    )
    .await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let result = run.result.as_ref().expect("a result document");
    let error = result.error.as_ref().expect("an error");
    assert_eq!(
        error.reason,
        forager_protocol::FailureReason::PreconditionUnmet
    );
    assert!(
        error.detail.contains("needs a login as alice"),
        "{}",
        error.detail
    );
    assert_eq!(result.metrics.actions, 0);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "no search was run"
    );
}

/// `forager plan --read-start` looks at the start page once: a tracker whose page asks for
/// a password makes a read that names no login need one, unmet without credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_page_that_asks_to_log_in_is_read_before_any_search() {
    let site = sites::serve(sites::records()).await;
    let url = site.url("/tracker");
    let planned = forager(
        "plan-start",
        &[
            "plan",
            "--url",
            &url,
            "--goal",
            "Show me the open issues",
            "--read-start",
        ],
    )
    .await;
    assert_eq!(planned.code, Some(1), "{}", planned.stderr);
    let report: forager_protocol::plan::PlanReport =
        serde_json::from_str(&std::fs::read_to_string(&planned.out).expect("written"))
            .expect("a plan report");
    let start = report.start_page.expect("the start page read");
    assert!(start.asks_to_log_in, "{start:?}");
    assert_eq!(
        report.preconditions[0].met,
        Some(false),
        "{:?}",
        report.preconditions
    );
}
