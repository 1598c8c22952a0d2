//! What a run leaves behind, end to end, in real headless Chromium against the workshop
//! fixture: explore → verify → replay; a replay that heals after the site renamed its classes,
//! reordered its lists and renamed a button (and says which locator healed each step); replays
//! that fail with a named reason and a screenshot; bad workflows and inputs refused before any
//! browser starts; the report rendered in Chromium; `--keep-all`'s signed rollouts.

use forager_node::browser::{BrowserOptions, BrowserPool, NetworkLog, OriginGuard, Tab, Timeouts};
use forager_protocol::artifact::RolloutsDocument;
use forager_protocol::result::{ResultStep, Status};
use forager_protocol::workflow::Workflow;
use forager_tests::sites::{self, Fixture};
use forager_tests::{Run, assert_no_chromium_left, forager, forager_env, unique_prefix};
use std::sync::Arc;

async fn explore_workshop(test: &str, site: &Fixture, extra: &[&str]) -> Run {
    let mut args = vec![
        "--url".to_owned(),
        site.url("/"),
        "--goal".into(),
        "Check delivery of the \"Walnut desk\" to my postcode".into(),
        "--success-text".into(),
        "Delivery of Walnut desk".into(),
        "--input".into(),
        "postcode=10115".into(),
        "--budget".into(),
        "80".into(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = forager(test, &args).await;
    let result = run
        .result
        .as_ref()
        .unwrap_or_else(|| panic!("no result: {}", run.stderr));
    assert_eq!(
        result.status,
        Status::Pass,
        "{:?}\n{}",
        result.error,
        run.stderr
    );
    assert_eq!(result.steps.len(), 3, "{:?}", result.steps);
    run
}

async fn replay(test: &str, workflow: &std::path::Path, extra: &[&str]) -> Run {
    let workflow = workflow.to_string_lossy().into_owned();
    let mut args = vec!["replay", workflow.as_str()];
    args.extend_from_slice(extra);
    forager(test, &args).await
}

fn steps(run: &Run) -> &[ResultStep] {
    &run.result
        .as_ref()
        .unwrap_or_else(|| panic!("no result: {}", run.stderr))
        .steps
}

/// The run failed (exit 1) with this named reason and a detail starting so.
fn assert_failing(run: &Run, reason: &str, detail: &str) {
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let error = run
        .result
        .as_ref()
        .and_then(|r| r.error.clone())
        .expect("a reason");
    assert_eq!(error.reason.as_str(), reason, "{error:?}");
    assert!(error.detail.starts_with(detail), "{}", error.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_verify_replay_heal_and_fail() {
    let site = sites::serve(sites::workshop()).await;
    let run = explore_workshop("wf-explore", &site, &[]).await;
    forager_queen::artifacts::verify_run_dir(&run.out).expect("the run verifies");

    // The workflow: three steps, the postcode a parameter, never its value.
    let path = run.out.join("workflow.json");
    let bytes = std::fs::read(&path).expect("workflow.json");
    let workflow = Workflow::from_json(&bytes).expect("a valid workflow");
    assert_eq!(workflow.parameters, vec!["postcode".to_owned()]);
    assert_eq!(workflow.steps.len(), 3);
    assert!(!forager_tests::holds_value(
        &String::from_utf8_lossy(&bytes),
        "10115"
    ));
    assert_eq!(
        workflow.steps[2].expect.text.as_deref(),
        Some("Delivery estimate")
    );

    // The report, rendered by Chromium.
    report_renders_in_chromium(&run, 3).await;

    // Unchanged site: every step resolves by its first locator.
    let same = replay("wf-same", &path, &["--input", "postcode=10115"]).await;
    assert_eq!(same.code, Some(0), "{}", same.stderr);
    assert!(
        steps(&same).iter().all(|s| s.healed_by.is_none()),
        "{:?}",
        steps(&same)
    );
    assert!(same.out.join("report.html").exists());

    // Renamed classes, reordered lists, a renamed button: the chains heal every step, and the
    // result and the report say by which locator.
    site.set_variant(1);
    let healed = replay("wf-healed", &path, &["--input", "postcode=10115"]).await;
    assert_eq!(healed.code, Some(0), "{}", healed.stderr);
    let by: Vec<String> = steps(&healed)
        .iter()
        .map(|s| s.healed_by.clone().unwrap_or_default())
        .collect();
    assert_eq!(by[0], "role=link[name=\"Study\"]", "{by:?}");
    assert_eq!(by[1], "role=link[name=\"Walnut desk\"]", "{by:?}");
    assert_eq!(by[2], "near=\"Postcode\" button#1", "{by:?}");
    assert_eq!(steps(&healed)[2].healed_locator, Some(3));
    let html = std::fs::read_to_string(healed.out.join("report.html")).expect("report");
    assert!(
        html.contains("healed: the target was found by locator 4 of its chain, <code>near=&quot;Postcode&quot; button#1</code>"),
        "the report names the healing locator"
    );
    assert!(
        healed
            .stderr
            .contains("step 3 healed by near=\"Postcode\" button#1")
    );

    // The walnut desk is gone. Every locator of step 2 misses it; the relative one finds the
    // link now second under "Furniture" (another item), and the post-condition catches that:
    // named, with a screenshot. A wrong heal never passes silently.
    site.set_variant(2);
    let gone = replay("wf-gone", &path, &["--input", "postcode=10115"]).await;
    assert_failing(
        &gone,
        "postcondition_failed",
        "step 2: post-condition url_path failed",
    );
    assert_eq!(
        steps(&gone)[1].healed_by.as_deref(),
        Some("near=\"Furniture\" link#2")
    );
    let shot = std::fs::read(gone.out.join("failure.jpg")).expect("a failure screenshot");
    assert!(shot.starts_with(&[0xff, 0xd8]));
    let html = std::fs::read_to_string(gone.out.join("report.html")).expect("report");
    assert!(html.contains("id=\"failure-shot\""));

    // The last page is another kind of page: its post-condition fails, named.
    site.set_variant(3);
    let other = replay("wf-other", &path, &["--input", "postcode=10115"]).await;
    assert_failing(
        &other,
        "postcondition_failed",
        "step 3: post-condition family failed",
    );
    assert!(other.out.join("failure.jpg").exists());
}

/// Serves the run's report.html on a fixture origin, opens it in Chromium, screenshots it and
/// checks that the tree and the step rows are in the DOM, the screenshots decoded, and that the
/// page asked for nothing but itself.
async fn report_renders_in_chromium(run: &Run, steps: usize) {
    let html = std::fs::read_to_string(run.out.join("report.html")).expect("report.html");
    let server = sites::serve(axum::Router::new().route(
        "/report.html",
        axum::routing::get(move || {
            let html = html.clone();
            async move { axum::response::Html(html) }
        }),
    ))
    .await;
    let prefix = unique_prefix("report-render");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let (browser, _) = pool.browser().await.expect("Chromium starts");
    let url = server.url("/report.html");
    let network = Arc::new(std::sync::Mutex::new(NetworkLog::default()));
    let mut tab = Tab::open(
        browser,
        Arc::new(OriginGuard::new([url.as_str()])),
        network.clone(),
        1,
        None,
        Timeouts::default(),
    )
    .await
    .expect("a tab");
    tab.navigate(&url).await.expect("the report loads");
    tab.settle().await.expect("settles");
    let dom = tab
        .evaluate(
            "({ nodes: document.querySelectorAll('#search-tree .tree-node').length, \
                winners: document.querySelectorAll('#search-tree .tree-node.winner').length, \
                pruned: document.querySelectorAll('#search-tree .tree-node[data-status=no_progress], #search-tree .tree-node[data-status=transposition], #search-tree .tree-node[data-status=loop]').length, \
                rows: document.querySelectorAll('tr.step-row').length, \
                shots: Array.from(document.querySelectorAll('img.shot')).filter(i => i.complete && i.naturalWidth > 100).length, \
                status: document.getElementById('status').textContent, \
                treeWidth: document.getElementById('search-tree').getBoundingClientRect().width })"
                .into(),
            false,
        )
        .await
        .expect("the DOM answers");
    let count = |key: &str| dom.get(key).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
    assert!(count("nodes") > steps + 3, "{dom}");
    assert_eq!(
        count("winners"),
        steps + 1,
        "start page and every step: {dom}"
    );
    assert_eq!(count("rows"), steps, "{dom}");
    assert_eq!(count("shots"), steps, "every screenshot decoded: {dom}");
    assert_eq!(dom.get("status").and_then(|v| v.as_str()), Some("pass"));
    assert!(dom.get("treeWidth").and_then(|v| v.as_f64()).unwrap_or(0.0) >= 600.0);
    let picture = tab.screenshot().await.expect("a screenshot");
    assert!(picture.starts_with(&[0xff, 0xd8]) && picture.len() > 10_000);
    tab.close().await;
    pool.shutdown().await;
    let network = network.lock().map(|n| n.clone()).unwrap_or_default();
    assert_eq!(network.blocked, 0, "{network:?}");
    assert_eq!(
        network.allowed_origins.into_iter().collect::<Vec<_>>(),
        vec![server.base.clone()]
    );
    assert_no_chromium_left(&prefix);
}

/// A workflow with one parameter and one step, on `base`.
fn small_workflow(base: &str) -> Vec<u8> {
    use forager_protocol::action::{FieldValue, Locator, Target};
    use forager_protocol::predicate::SuccessPredicate;
    use forager_protocol::wire::PageInfo;
    use forager_protocol::{Action, FillValue, Fingerprint, RiskClass, TaskSpec};
    let task = TaskSpec::new(
        format!("{base}/item/walnut-desk"),
        "Check delivery",
        vec![SuccessPredicate::TextPresent("three working days".into())],
    );
    let target = |name: &str, css: &str| Target {
        locators: vec![Locator::Css(css.into())],
        role: "textbox".into(),
        name: name.into(),
        sends: Default::default(),
    };
    let action = Action::FillForm {
        fields: vec![FieldValue {
            target: target("Postcode", "#no-such-field"),
            value: FillValue::Input("postcode".into()),
            select: false,
        }],
        submit: None,
    };
    let step = ResultStep {
        index: 1,
        label: action.label(),
        action,
        url: format!("{base}/delivery"),
        title: "Delivery estimate".into(),
        fingerprint: Fingerprint([1; 16]),
        risk: RiskClass::ReadOnly,
        reward: 1.0,
        cost_ms: 1,
        verdict: None,
        healed_locator: None,
        healed_by: None,
        verification: Default::default(),
        why: None,
    };
    let page = PageInfo {
        url: step.url.clone(),
        title: step.title.clone(),
        verdict: None,
        healed_locator: None,
        healed_by: None,
        family: None,
        heading: Some("Delivery estimate".into()),
        cost_ms: 1,
        value_hint: 1.0,
        why: None,
    };
    forager_protocol::workflow::compile(&task, &[step], &[page])
        .and_then(|w| {
            w.to_json()
                .map_err(|e| forager_protocol::workflow::WorkflowError::Compile(e.to_string()))
        })
        .expect("compiles")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_workflows_and_inputs_are_refused_before_any_browser_starts() {
    let site = sites::serve(sites::workshop()).await;
    let dir = tempfile::tempdir().expect("dir");
    let workflow = dir.path().join("workflow.json");
    let bytes = small_workflow(&site.base);
    std::fs::write(&workflow, &bytes).expect("write");
    // A Chromium that leaves a mark when it is started.
    let marker = dir.path().join("chromium-started");
    let wrapper = dir.path().join("chromium");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec /usr/lib/chromium/chromium \"$@\"\n",
            marker.display()
        ),
    )
    .expect("wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("executable");
    let wrapper = wrapper.to_string_lossy().into_owned();
    let env = [("FORAGER_CHROMIUM", wrapper.as_str())];

    let text = String::from_utf8(bytes).expect("utf-8");
    let other_version = dir.path().join("v9.json");
    std::fs::write(
        &other_version,
        text.replacen("\"version\": 1", "\"version\": 9", 1),
    )
    .expect("write");
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"steps\": [").expect("write");
    let no_locator = dir.path().join("no-locator.json");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["steps"][0]["action"]["FillForm"]["fields"][0]["target"]["locators"] =
        serde_json::json!([]);
    std::fs::write(&no_locator, value.to_string()).expect("write");
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![path(&workflow)], "missing input: postcode"),
        (
            vec![
                path(&workflow),
                "--input".into(),
                "postcode=10115".into(),
                "--input".into(),
                "pin=1".into(),
            ],
            "unknown input: pin",
        ),
        (
            vec![path(&workflow), "--input".into(), "postcode".into()],
            "NAME=VALUE",
        ),
        (vec![path(&other_version)], "workflow version 9"),
        (vec![path(&garbage)], "not a workflow document"),
        (vec![path(&no_locator)], "steps[0].action"),
        (
            vec![path(&dir.path().join("absent.json"))],
            "cannot read workflow",
        ),
    ];
    for (args, named) in &cases {
        let mut all = vec!["replay"];
        all.extend(args.iter().map(String::as_str));
        let run = forager_env("wf-bad", &all, &env).await;
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(named),
            "{args:?} should say {named:?}: {}",
            run.stderr
        );
        assert!(run.result.is_none());
        assert!(!marker.exists(), "{args:?} started a browser");
    }
    // The control: with its input, the same workflow starts the (marking) browser, and fails
    // at its step with a named reason.
    let run = forager_env(
        "wf-control",
        &["replay", &path(&workflow), "--input", "postcode=10115"],
        &env,
    )
    .await;
    assert!(marker.exists(), "the wrapper marks a started browser");
    assert_failing(&run, "action_failed", "step 1: target not found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_all_keeps_every_finished_trajectory_signed() {
    let site = sites::serve(sites::workshop()).await;
    let run = explore_workshop("wf-keep-all", &site, &["--keep-all"]).await;
    let verified = forager_queen::artifacts::verify_run_dir(&run.out).expect("verifies");
    assert!(
        verified.files.contains(&"rollouts.json".to_owned()),
        "{:?}",
        verified.files
    );
    let bytes = std::fs::read(run.out.join("rollouts.json")).expect("rollouts.json");
    let document: RolloutsDocument = serde_json::from_slice(&bytes).expect("a rollouts document");
    let result = run.result.as_ref().expect("result");
    assert_eq!(document.task_id, result.task_id);
    assert!(!document.reports.is_empty());
    // More finished trajectories than the winning path's states, and the winner among them.
    assert!(
        document.rollouts.len() > result.steps.len(),
        "{}",
        document.rollouts.len()
    );
    assert!(document.rollouts.iter().any(|r| r.success));
    let winner: Vec<String> = result.steps.iter().map(|s| s.label.clone()).collect();
    assert!(document.rollouts.iter().any(|r| {
        let labels: Vec<String> = r
            .prefix
            .iter()
            .map(|a| a.label())
            .chain(r.steps.iter().map(|s| s.action.label()))
            .collect();
        labels == winner
    }));
    assert!(
        !forager_tests::holds_value(&String::from_utf8_lossy(&bytes), "10115"),
        "no input value"
    );
    // Any change is caught.
    let mut tampered = bytes.clone();
    let at = tampered.len() / 2;
    tampered[at] ^= 0x01;
    std::fs::write(run.out.join("rollouts.json"), &tampered).expect("write");
    assert!(forager_queen::artifacts::verify_run_dir(&run.out).is_err());
}
