//! A real application with server state (the admin fixture: SQLite, a login with a CSRF
//! token, "Recent actions" with timestamps, a unique name): a success whose path writes is
//! verified without writing again (the write attested by the finder's evidence, the effect
//! checked read-only), or, with a reset command, by executing everything again after the
//! reset; a claimed write that did not happen is refused; logging out is pruned.

use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions};
use forager_node::environment::Environment;
use forager_node::net::{Network, NetworkConfig, NodeIdentity, Role};
use forager_protocol::digest::Digest32;
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::result::{RunResult, Status, StepVerification};
use forager_protocol::task::AfterCheck;
use forager_protocol::wire::{FoundPath, StepSeen, TaskState};
use forager_protocol::{Action, Fingerprint, RiskClass, TaskSpec};
use forager_queen::cluster::{loopback, spawn_node, spawn_queen, wait_for_peers};
use forager_queen::config::QueenConfig;
use forager_tests::app::{AdminApp, PASSWORD, USERNAME};
use forager_tests::{assert_no_chromium_left, forager, run_forager, unique_prefix};
use std::sync::Arc;
use std::time::{Duration, Instant};

const GOAL: &str = "log in and add a new group named \"editors\"";

/// Three nodes are three Chromiums: on two cores, two such clusters at once starve each
/// other's browsers of their launch time. The tests of this file take turns.
static ONE_CLUSTER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The task's flags on `app`, as a user would give them.
fn task_flags(app: &AdminApp) -> Vec<String> {
    [
        "--url",
        &app.url("/admin/"),
        "--goal",
        GOAL,
        "--input",
        &format!("username={USERNAME}"),
        "--input",
        &format!("password={PASSWORD}"),
        "--success-text",
        "was added successfully",
        "--nodes",
        "3",
        "--budget",
        "100",
        "--no-memory",
    ]
    .map(String::from)
    .to_vec()
}

/// The journal's events of one kind.
fn journal_event(journal: &str, event: &str) -> Vec<serde_json::Value> {
    journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == event)
        .collect()
}

fn verified_by_forager(out: &std::path::Path) {
    let verify = run_forager(
        &["verify", out.to_str().expect("utf-8 path")],
        Duration::from_secs(60),
    );
    assert!(
        verify.status.success(),
        "forager verify: {}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_on_a_live_application_is_attested_not_repeated() {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().expect("dir");
    let app = AdminApp::start(dir.path()).await;
    let mut flags = task_flags(&app);
    flags.extend(
        [
            "--verify-url",
            &app.url("/admin/auth/group/"),
            "--verify-text",
            "editors",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = forager("attested", &args).await;
    let result = run.passed();
    assert_eq!(
        app.groups_named("editors"),
        1,
        "the group exists exactly once"
    );
    let last = result.steps.last().expect("steps");
    assert!(last.risk >= RiskClass::DraftWrite, "{last:?}");
    let first_write = result
        .steps
        .iter()
        .position(|s| s.risk >= RiskClass::DraftWrite)
        .expect("a write");
    for (i, step) in result.steps.iter().enumerate() {
        let expected = if i < first_write {
            StepVerification::Reproduced
        } else {
            StepVerification::Attested
        };
        assert_eq!(step.verification, expected, "step {}", i + 1);
    }
    let journal = std::fs::read_to_string(run.out.join("events.jsonl")).expect("journal");
    let verified = journal_event(&journal, "verified");
    assert_eq!(verified.len(), 1);
    assert_eq!(verified[0]["after_check"], true, "{}", verified[0]);
    assert!(
        journal_event(&journal, "not_reproduced").is_empty(),
        "live content (recent actions, timestamps, tokens) is no divergence"
    );
    let report = std::fs::read_to_string(run.out.join("report.html")).expect("report");
    assert!(report.contains("attested: not executed again"));
    assert!(report.contains("reproduced: executed again by another node"));
    verified_by_forager(&run.out);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_reset_command_the_reproduction_executes_every_step() {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().expect("dir");
    let app = AdminApp::start(dir.path()).await;
    let mut flags = task_flags(&app);
    flags.extend(["--reset-cmd".to_owned(), app.reset_command()]);
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = forager("reset-cmd", &args).await;
    let result = run.passed();
    assert!(
        result
            .steps
            .iter()
            .all(|s| s.verification == StepVerification::Reproduced),
        "{:?}",
        result.steps
    );
    // The reproduction reset the database and wrote again: still exactly one.
    assert_eq!(app.groups_named("editors"), 1);
    verified_by_forager(&run.out);
    app.stop().await;
}

/// A peer that claims, on every assignment, a success whose only step is a write it says it
/// made, with made-up evidence. Its peer id sorts above `above`: the queen hands its first
/// branch to the highest idle peer, so the lie is in before the honest node's search can
/// exhaust the task.
async fn lying_peer(
    key: [u8; 32],
    queen: Vec<libp2p::Multiaddr>,
    above: libp2p::PeerId,
) -> (Network, libp2p::PeerId, tokio::task::JoinHandle<()>) {
    let identity = std::iter::repeat_with(NodeIdentity::generate)
        .find(|identity| identity.peer_id() > above)
        .expect("ids are random");
    let (network, events) = Network::start(
        &identity,
        NetworkConfig {
            listen: vec![loopback()],
            bootstrap: queen,
            ..NetworkConfig::new(Role::Node, key)
        },
    )
    .expect("starts");
    let peer = identity.peer_id();
    let task = forager_tests::answer_as_liar(identity, network.clone(), events, |assignment| {
        let save = Action::Click {
            target: forager_protocol::Target {
                role: "button".into(),
                name: "Save".into(),
                locators: vec![forager_protocol::Locator::Text("Save".into())],
                sends: Default::default(),
            },
        };
        let claim = FoundPath {
            seen: vec![StepSeen {
                family: Some(Fingerprint([3; 16])),
                heading: Some("Select group to change".into()),
                url: "http://127.0.0.1/admin/auth/group/".into(),
                title: "Groups".into(),
                page_digest: Some(Digest32([4; 32])),
                screenshot: None,
                why: None,
            }],
            ..FoundPath::new(
                vec![save],
                vec![Fingerprint([5; 16])],
                vec![RiskClass::DraftWrite],
            )
        };
        forager_tests::claiming(assignment, vec![claim])
    });
    (network, peer, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_write_the_after_check_does_not_show_is_refused() {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().expect("dir");
    let app = AdminApp::start(&dir.path().join("app")).await;
    let key = [11; 32];
    let queen = spawn_queen(
        &NodeIdentity::generate(),
        NetworkConfig {
            listen: vec![loopback()],
            ..NetworkConfig::new(Role::Queen, key)
        },
        QueenConfig::new(dir.path().join("queen")),
    )
    .await
    .expect("queen");
    // One honest node with a real browser: it reproduces; with a wrong password it can
    // never log in, so nothing it does can make the lie true.
    let prefix = unique_prefix("liar-write");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let honest = spawn_node(
        &NodeIdentity::generate(),
        NetworkConfig {
            listen: vec![loopback()],
            bootstrap: queen.addresses.clone(),
            ..NetworkConfig::new(Role::Node, key)
        },
        Arc::new(forager_node::index::Replica::in_memory(
            1_000,
            forager_node::memory::ngram_id(),
        )),
        Arc::new(forager_node::browser::ChromiumFactory {
            pool: pool.clone(),
            options: EnvOptions::default(),
            model: None,
        }),
        forager_node::worker::WorkerConfig::default(),
    )
    .await
    .expect("node");
    let (liar, liar_peer, liar_task) = lying_peer(key, queen.addresses.clone(), honest.peer).await;
    wait_for_peers(&queen.network, Role::Node, 2, Duration::from_secs(20))
        .await
        .expect("two nodes");
    let mut task = TaskSpec::new(
        app.url("/admin/"),
        GOAL,
        vec![SuccessPredicate::TextPresent(
            "was added successfully".into(),
        )],
    );
    task.inputs.insert("username".into(), USERNAME.into());
    task.inputs
        .insert("password".into(), "not the password".into());
    task.budget.actions = 20;
    task.verify = Some(AfterCheck {
        url: app.url("/admin/auth/group/"),
        text: "editors".into(),
    });
    let id = queen.queen.submit(task).await.expect("accepted");
    let started = Instant::now();
    let result: RunResult = loop {
        if let TaskState::Done(result) = queen.queen.status(id).await {
            break *result;
        }
        assert!(started.elapsed() < Duration::from_secs(240), "no result");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_ne!(result.status, Status::Pass, "{result:?}");
    let journal = std::fs::read_to_string(
        dir.path()
            .join("queen")
            .join("tasks")
            .join(id.to_string())
            .join("events.jsonl"),
    )
    .expect("journal");
    let refused = journal_event(&journal, "not_reproduced");
    assert!(
        refused.iter().any(|e| e["finder"] == liar_peer.to_string()
            && e["reason"]
                .as_str()
                .is_some_and(|r| r.contains("does not show \"editors\""))),
        "the after-check refused the claim: {refused:?}; {result:?}\n{}",
        journal
            .lines()
            .map(|l| l.chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(journal_event(&journal, "verified").is_empty());
    assert_eq!(app.groups_named("editors"), 0);
    liar_task.abort();
    liar.shutdown().await;
    honest.network.shutdown().await;
    pool.shutdown().await;
    queen.network.shutdown().await;
    assert_no_chromium_left(&prefix);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_out_is_a_lost_session_unless_the_goal_asks_for_it() {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().expect("dir");
    let app = AdminApp::start(dir.path()).await;
    let prefix = unique_prefix("session-lost");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    for (goal, lost) in [(GOAL, true), ("log in, then log out", false)] {
        let mut task = TaskSpec::new(
            app.url("/admin/"),
            goal,
            vec![SuccessPredicate::TextPresent("never shown".into())],
        );
        task.inputs.insert("username".into(), USERNAME.into());
        task.inputs.insert("password".into(), PASSWORD.into());
        let mut env =
            ChromiumEnv::new(pool.clone(), Arc::new(task), EnvOptions::default()).expect("env");
        env.restore(&[]).await.expect("start page");
        let login = env
            .candidates()
            .await
            .expect("candidates")
            .into_iter()
            .find(|c| matches!(c.action, Action::FillForm { .. }))
            .expect("the login form is proposed");
        let logged_in = env.act(&login.action).await.expect("logs in");
        assert!(logged_in.state.logged_in, "the dashboard offers to log out");
        let logout = env
            .candidates()
            .await
            .expect("candidates")
            .into_iter()
            .find(|c| {
                c.action
                    .target()
                    .is_some_and(|t| t.name.eq_ignore_ascii_case("log out"))
            })
            .expect("log out is proposed");
        let out = env.act(&logout.action).await.expect("logs out");
        assert_eq!(out.state.session_lost, lost, "goal {goal:?}");
        assert!(!out.state.logged_in);
        env.close().await;
    }
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_command_runs_only_where_allowed_and_its_failure_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let marker = dir.path().join("reset-ran");
    let env_for = |command: &str, allow_reset: bool| {
        let mut task = TaskSpec::new(
            "http://127.0.0.1:1/",
            "anything",
            vec![SuccessPredicate::TextPresent("x".into())],
        );
        task.reset_cmd = Some(command.into());
        // The pool launches Chromium only when a tab is opened: these calls open none.
        let pool = BrowserPool::new(BrowserOptions {
            profile_prefix: unique_prefix("reset"),
            ..BrowserOptions::default()
        });
        ChromiumEnv::new(
            pool,
            Arc::new(task),
            EnvOptions {
                allow_reset,
                ..EnvOptions::default()
            },
        )
        .expect("env")
    };
    let touch = format!("touch '{}'", marker.display());
    let refused = env_for(&touch, false).reset_site().await;
    assert!(
        matches!(&refused, Err(forager_node::environment::EnvError::ResetFailed(why)) if why.contains("--allow-reset-cmd")),
        "{refused:?}"
    );
    assert!(!marker.exists(), "a node that was not allowed ran it");
    env_for(&touch, true).reset_site().await.expect("runs");
    assert!(marker.exists());
    let failed = env_for("echo 'no snapshot here' >&2; exit 3", true)
        .reset_site()
        .await;
    assert!(
        matches!(&failed, Err(forager_node::environment::EnvError::ResetFailed(why))
            if why.contains("exit status: 3") && why.contains("no snapshot here")),
        "{failed:?}"
    );
}

#[test]
fn an_after_check_needs_both_flags_and_a_page_of_the_task() {
    let explore = |check: &[&str]| {
        let mut args = vec![
            "explore",
            "--url",
            "http://127.0.0.1:1/",
            "--goal",
            "g",
            "--success-text",
            "x",
        ];
        args.extend(check);
        let output = run_forager(&args, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stderr)
    };
    let (code, stderr) = explore(&["--verify-url", "http://127.0.0.1:1/list"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--verify-text"), "{stderr}");
    let (code, stderr) = explore(&[
        "--verify-url",
        "http://127.0.0.2:1/list",
        "--verify-text",
        "editors",
    ]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("verify.url"), "{stderr}");
}
