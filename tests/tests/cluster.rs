//! The cluster end to end: `forager queen`, `forager node` and `forager submit` as real
//! processes on 127.0.0.1 with real Chromium; and, in process, peers that misbehave (no cluster
//! key, bad gossip, a faked success) and a node that joins late.

use forager_node::index::Replica;
use forager_node::net::{Network, NetworkConfig, NodeIdentity, Role, format_cluster_key};
use forager_node::worker::WorkerConfig;
use forager_protocol::digest::Digest32;
use forager_protocol::result::{RunResult, Status};
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::trajectory::{Cost, VECTOR_DIM};
use forager_protocol::wire::{
    Announcement, FoundPath, KnownLocation, KnownState, Message, ProgressReport, RefusalReason,
    StepSeen, SyncRequest, TaskId, TaskState,
};
use forager_queen::cluster::{loopback, spawn_node, spawn_queen, wait_for_peers};
use forager_queen::config::QueenConfig;
use forager_simulations::cluster::{SimFactory, sim_task};
use forager_simulations::site::SiteParams;
use forager_tests::sites;
use forager_tests::{assert_no_chromium_left, forager_binary, unique_prefix};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

const LIMIT: Duration = Duration::from_secs(300);

/// A peer process and what it printed about itself.
struct Peer {
    child: Child,
    id: String,
    address: String,
    data: PathBuf,
    /// Its metrics endpoint (`--metrics`), if it serves one.
    metrics: Option<String>,
}

async fn spawn_peer(kind: &str, data: &Path, key: &Path, extra: &[&str], prefix: &str) -> Peer {
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build");
    let mut command = Command::new(binary);
    command
        .arg(kind)
        .arg("--data")
        .arg(data)
        .arg("--cluster-key")
        .arg(key)
        .args(extra)
        .env("FORAGER_PROFILE_PREFIX", prefix);
    let started = forager_tests::start_peer(command, kind).await;
    Peer {
        child: started.child,
        id: started.id,
        address: started.address,
        data: data.to_path_buf(),
        metrics: started.metrics,
    }
}

fn journal_lines(queen_data: &Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(queen_data.join("tasks")) else {
        return out;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("events.jsonl")) {
            out.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
        }
    }
    out
}

async fn submit(
    queen: &str,
    key: &Path,
    out: &Path,
    args: &[&str],
) -> (Option<i32>, Option<RunResult>, String) {
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build");
    let mut command = Command::new(binary);
    command
        .arg("submit")
        .arg("--queen")
        .arg(queen)
        .arg("--cluster-key")
        .arg(key)
        .arg("--out")
        .arg(out)
        .arg("--json")
        .args(args);
    let (code, stdout, stderr) = forager_tests::finish(command, LIMIT).await;
    (code, serde_json::from_slice(&stdout).ok(), stderr)
}

struct Cluster {
    dir: tempfile::TempDir,
    key: PathBuf,
    queen: Peer,
    nodes: Vec<Peer>,
    prefix: String,
}

async fn cluster(test: &str, nodes: usize) -> Cluster {
    cluster_with(test, nodes, &[]).await
}

/// A cluster whose queen and nodes all get `extra` flags.
async fn cluster_with(test: &str, nodes: usize, extra: &[&str]) -> Cluster {
    let prefix = unique_prefix(test);
    let dir = tempfile::tempdir().expect("temp dir");
    let key = dir.path().join("cluster.key");
    std::fs::write(&key, format_cluster_key(&[42u8; 32])).expect("key");
    let queen = spawn_peer("queen", &dir.path().join("queen"), &key, extra, &prefix).await;
    let mut peers = Vec::new();
    for i in 0..nodes {
        let data = dir.path().join(format!("node{i}"));
        let mut flags = vec!["--bootstrap", queen.address.as_str()];
        flags.extend_from_slice(extra);
        let node = spawn_peer("node", &data, &key, &flags, &prefix).await;
        peers.push(node);
    }
    Cluster {
        dir,
        key,
        queen,
        nodes: peers,
        prefix,
    }
}

impl Cluster {
    async fn stop(mut self) {
        for peer in self
            .nodes
            .iter_mut()
            .chain(std::iter::once(&mut self.queen))
        {
            // SIGTERM: nodes shut their browsers down cleanly.
            if let Some(pid) = peer.child.id() {
                let _ = Command::new("kill")
                    .arg("-TERM")
                    .arg(pid.to_string())
                    .status()
                    .await;
            }
            let _ = tokio::time::timeout(Duration::from_secs(20), peer.child.wait()).await;
            let _ = peer.child.start_kill();
            forager_node::browser::reap_stale_browsers(&peer.data.join("browsers"));
        }
        assert_no_chromium_left(&self.prefix);
        drop(self.dir);
    }
}

fn docs_args(base: &str) -> Vec<String> {
    [
        "--url",
        &format!("{base}/docs"),
        "--goal",
        "Find how to configure the frobnicator timeout",
        "--success-url",
        "/docs/configuration/frobnicator/timeout$",
        "--budget",
        "300",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queen_and_three_node_processes_pass_with_a_reproduced_winner() {
    let docs = sites::serve(sites::docs()).await;
    let cluster = cluster("three-nodes", 3).await;
    let out = cluster.dir.path().join("out");
    let args = docs_args(&docs.base);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, result, stderr) = submit(&cluster.queen.address, &cluster.key, &out, &args).await;
    let result = result.unwrap_or_else(|| panic!("no result: {stderr}"));
    assert_eq!(result.status, Status::Pass, "{:?} {stderr}", result.error);
    assert_eq!(code, Some(0));
    assert_eq!(result.steps.len(), 3);
    let journal = journal_lines(&cluster.queen.data);
    let verified = journal
        .iter()
        .find(|e| e["event"] == "verified")
        .expect("a verified success");
    assert_ne!(
        verified["finder"], verified["verifier"],
        "reproduced by a second node"
    );
    let node_ids: Vec<&str> = cluster.nodes.iter().map(|n| n.id.as_str()).collect();
    assert!(node_ids.contains(&verified["verifier"].as_str().unwrap_or("")));
    // The queen's task directory is a run directory `forager verify` accepts, naming the same
    // finder, reproducer and queen.
    let task_dir = std::fs::read_dir(cluster.queen.data.join("tasks"))
        .expect("tasks")
        .flatten()
        .next()
        .expect("one task")
        .path();
    let trajectory =
        forager_queen::artifacts::verify_run_dir(&task_dir).expect("the trajectory verifies");
    assert_eq!(
        trajectory.found_by,
        verified["finder"].as_str().unwrap_or("")
    );
    assert_eq!(
        trajectory.reproduced_by,
        verified["verifier"].as_str().unwrap_or("")
    );
    assert_eq!(trajectory.queen, cluster.queen.id);
    assert_eq!(trajectory.steps, 3);
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_mid_task_loses_its_branch_to_another() {
    let docs = sites::serve(sites::docs()).await;
    let mut cluster = cluster("killed-node", 3).await;
    let out = cluster.dir.path().join("out");
    let args = docs_args(&docs.base);
    let queen_data = cluster.queen.data.clone();
    let queen_address = cluster.queen.address.clone();
    let key = cluster.key.clone();
    let submission = tokio::spawn(async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        submit(&queen_address, &key, &out, &args).await
    });
    // Kill the first node that gets an assignment, while it works on it.
    let started = Instant::now();
    let victim = loop {
        let journal = journal_lines(&queen_data);
        if let Some(assigned) = journal.iter().find(|e| e["event"] == "assigned") {
            let node = assigned["node"].as_str().unwrap_or("").to_owned();
            if let Some(i) = cluster.nodes.iter().position(|n| n.id == node) {
                break i;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no assignment seen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let killed = cluster.nodes.remove(victim);
    let mut killed_child = killed.child;
    killed_child.start_kill().expect("SIGKILL");
    let _ = killed_child.wait().await;
    // Its browser outlives it (a killed process cleans nothing up); a restarted node would
    // reap it, so does the test.
    forager_node::browser::reap_stale_browsers(&killed.data.join("browsers"));

    let (code, result, stderr) = submission.await.expect("submit task");
    let result = result.unwrap_or_else(|| panic!("no result: {stderr}"));
    assert_eq!(result.status, Status::Pass, "{:?} {stderr}", result.error);
    assert_eq!(code, Some(0));
    let journal = journal_lines(&queen_data);
    assert!(
        journal
            .iter()
            .any(|e| e["event"] == "reassigned" && e["node"] == killed.id.as_str()),
        "the killed node's branch was reassigned: {journal:#?}"
    );
    cluster.stop().await;
}

/// The processes whose command line names `path`.
fn naming(path: &Path) -> Vec<(u32, String)> {
    forager_tests::processes_with(&path.display().to_string())
}

/// A node killed with SIGKILL takes its browser with it, and a node restarted on the same data
/// removes the profiles the killed one left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_leaves_no_browser_and_its_restart_clears_its_profiles() {
    let mut cluster = cluster("killed-node-browsers", 1).await;
    let node = cluster.nodes.remove(0);
    let profiles = node.data.join("browsers");
    // A node starts its browser before it says it listens.
    assert!(!naming(&profiles).is_empty(), "the node's browser runs");
    let mut child = node.child;
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !naming(&profiles).is_empty() {
        assert!(
            Instant::now() < deadline,
            "Chromium outlived its killed node: {:?}",
            naming(&profiles)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before: Vec<_> = std::fs::read_dir(&profiles)
        .expect("profiles")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        !before.is_empty(),
        "a killed node leaves its profile behind"
    );
    let restarted = spawn_peer(
        "node",
        &node.data,
        &cluster.key,
        &["--bootstrap", cluster.queen.address.as_str()],
        &cluster.prefix,
    )
    .await;
    let after: Vec<_> = std::fs::read_dir(&profiles)
        .expect("profiles")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        before.iter().all(|old| !after.contains(old)),
        "the restarted node removed {before:?}, has {after:?}"
    );
    assert_eq!(after.len(), 1, "its own profile only: {after:?}");
    cluster.nodes.push(restarted);
    cluster.stop().await;
}

/// A `forager` command against the cluster's queen (`status`, `cancel`, `result`).
async fn operator(
    cluster: &Cluster,
    command: &str,
    args: &[&str],
) -> (Option<i32>, String, String) {
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build");
    let mut run = Command::new(binary);
    run.arg(command)
        .arg("--queen")
        .arg(&cluster.queen.address)
        .arg("--cluster-key")
        .arg(&cluster.key)
        .args(args);
    let (code, stdout, stderr) = forager_tests::finish(run, LIMIT).await;
    (code, String::from_utf8_lossy(&stdout).into_owned(), stderr)
}

/// GET of a metrics endpoint (`http://127.0.0.1:PORT/metrics`), its body.
async fn scrape(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("an http url");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut stream = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect(host),
    )
    .await
    .expect("connects in time")
    .expect("connects");
    stream
        .write_all(format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .expect("request sent");
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        stream.read_to_string(&mut response),
    )
    .await
    .expect("answered in time")
    .expect("an answer");
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// Fails unless the sample `name` of Prometheus text `text` has the value `value`.
fn expect_sample(text: &str, name: &str, value: f64) {
    assert_eq!(sample(text, name), Some(value), "{name} in\n{text}");
}

/// The value of a sample line of Prometheus text (`name{labels} value`).
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sees_cancels_fetches_and_scrapes_a_running_cluster() {
    let docs = sites::serve(sites::docs()).await;
    let cluster = cluster_with("operator", 2, &["--metrics", "127.0.0.1:0"]).await;
    let queen_metrics = cluster
        .queen
        .metrics
        .clone()
        .expect("the queen serves metrics");

    // A task that cannot succeed (its text is on no page) runs until it is cancelled.
    let hopeless_out = cluster.dir.path().join("hopeless");
    let queen_address = cluster.queen.address.clone();
    let key = cluster.key.clone();
    let base = docs.base.clone();
    let hopeless = tokio::spawn(async move {
        let url = format!("{base}/docs");
        let args = [
            "--url",
            url.as_str(),
            "--goal",
            "Find the page about quantum frobnication",
            "--success-text",
            "no page says this 7f3a",
            "--budget",
            "100000",
        ];
        submit(&queen_address, &key, &hopeless_out, &args).await
    });

    // `status` shows the two nodes (from 127.0.0.1) and the task, searching.
    let started = Instant::now();
    let (overview, task) = loop {
        let (code, stdout, stderr) = operator(&cluster, "status", &["--json"]).await;
        assert_eq!(code, Some(0), "{stderr}");
        let overview: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        let searching = overview["tasks"]
            .as_array()
            .and_then(|tasks| tasks.first())
            .filter(|t| t["state"] == "searching" && t["actions"].as_u64() > Some(0))
            .cloned();
        if let Some(task) = searching {
            break (overview, task);
        }
        assert!(started.elapsed() < LIMIT, "no task searching: {stdout}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let nodes = overview["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 2, "{overview:#}");
    for node in nodes {
        assert!(
            cluster
                .nodes
                .iter()
                .any(|n| n.id == node["peer"].as_str().unwrap_or("")),
            "{node}"
        );
        assert!(
            node["address"]
                .as_str()
                .unwrap_or("")
                .starts_with("/ip4/127.0.0.1/tcp/"),
            "{node}"
        );
    }
    assert_eq!(task["budget"], 100000);
    let id = task["id"].as_str().expect("an id").to_owned();
    let (code, text, _) = operator(&cluster, "status", &[]).await;
    assert_eq!(code, Some(0));
    assert!(text.contains(&id) && text.contains("searching"), "{text}");

    // The queen's metrics while it runs.
    let metrics = scrape(&queen_metrics).await;
    expect_sample(&metrics, "forager_queen_nodes", 2.0);
    expect_sample(&metrics, "forager_queen_tasks{state=\"searching\"}", 1.0);
    assert!(
        sample(&metrics, "forager_queen_assignments_total") >= Some(1.0),
        "{metrics}"
    );

    // A result is not there before the task ends; an unknown task is bad input.
    let (code, _, stderr) = operator(&cluster, "result", &[&id]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("has not finished"), "{stderr}");
    let unknown = "0".repeat(32);
    let (code, _, stderr) = operator(&cluster, "cancel", &[&unknown]).await;
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = operator(&cluster, "cancel", &["not-a-task"]).await;
    assert_eq!(code, Some(2), "{stderr}");

    // Cancelled: the waiting `submit` gets the result, failing with `cancelled`.
    let (code, _, stderr) = operator(&cluster, "cancel", &[&id]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let (code, result, stderr) = hopeless.await.expect("the submission");
    let result = result.unwrap_or_else(|| panic!("no result: {stderr}"));
    assert_eq!(code, Some(1));
    assert_eq!(
        result.error.as_ref().map(|e| e.reason),
        Some(forager_protocol::FailureReason::Cancelled)
    );

    // A task that passes: its folder fetched and verified; the cancelled one fetched too.
    let out = cluster.dir.path().join("out");
    let args = docs_args(&docs.base);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, passed, stderr) = submit(&cluster.queen.address, &cluster.key, &out, &args).await;
    assert_eq!(code, Some(0), "{stderr}");
    let passed = passed.expect("a result");
    let (code, stdout, _) = operator(&cluster, "status", &["--json"]).await;
    assert_eq!(code, Some(0));
    let overview: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let passed_id = overview["tasks"]
        .as_array()
        .and_then(|tasks| tasks.iter().find(|t| t["state"] == "passed"))
        .and_then(|t| t["id"].as_str())
        .expect("the passed task is listed")
        .to_owned();
    let fetched = cluster.dir.path().join("fetched");
    let fetched_arg = fetched.to_string_lossy().into_owned();
    let (code, _, stderr) =
        operator(&cluster, "result", &[&passed_id, "--out", &fetched_arg]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("verified"), "{stderr}");
    let task_dir = cluster.queen.data.join("tasks").join(&passed_id);
    for file in std::fs::read_dir(&task_dir)
        .expect("the task folder")
        .flatten()
    {
        let name = file.file_name();
        assert_eq!(
            std::fs::read(file.path()).expect("queen's file"),
            std::fs::read(fetched.join(&name)).expect("fetched file"),
            "{name:?} fetched whole"
        );
    }
    let verified = forager_queen::artifacts::verify_run_dir(&fetched).expect("verifies");
    assert_eq!(verified.steps, passed.steps.len());
    let cancelled_dir = cluster.dir.path().join("cancelled");
    let cancelled_arg = cancelled_dir.to_string_lossy().into_owned();
    let (code, _, stderr) = operator(&cluster, "result", &[&id, "--out", &cancelled_arg]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cancelled"), "{stderr}");

    // Counters after the work: the queen's and the nodes'.
    let metrics = scrape(&queen_metrics).await;
    expect_sample(&metrics, "forager_queen_cancelled_total", 1.0);
    expect_sample(&metrics, "forager_queen_submitted_total", 2.0);
    expect_sample(&metrics, "forager_queen_tasks{state=\"passed\"}", 1.0);
    assert!(
        sample(
            &metrics,
            "forager_queen_reproductions_total{verdict=\"reproduced\"}"
        ) >= Some(1.0),
        "{metrics}"
    );
    let mut node_actions = 0.0;
    for node in &cluster.nodes {
        let url = node.metrics.clone().expect("each node serves metrics");
        let text = scrape(&url).await;
        node_actions += sample(&text, "forager_node_actions_total").expect("actions");
        assert!(
            sample(&text, "forager_node_replica_entries") >= Some(1.0),
            "{text}"
        );
        assert!(
            sample(&text, "forager_node_gossip_accepted_total").is_some(),
            "{text}"
        );
        expect_sample(&text, "forager_node_browser_restarts_total", 0.0);
    }
    assert!(node_actions >= 1.0);
    // Both tasks ended: the queen told the nodes, and they dropped the branch searches (and
    // the browser pages) they kept for them.
    let started = Instant::now();
    for node in &cluster.nodes {
        let url = node.metrics.clone().expect("each node serves metrics");
        loop {
            let text = scrape(&url).await;
            if sample(&text, "forager_node_kept_branches") == Some(0.0) {
                break;
            }
            assert!(started.elapsed() < LIMIT, "branches still kept: {text}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // The queen counts the reports it took (not those that came after a task ended).
    assert!(
        sample(&metrics, "forager_queen_actions_total") >= Some(1.0),
        "{metrics}"
    );
    cluster.stop().await;
}

// ---------------------------------------------------------------------------------------------
// In process.

fn config(role: Role, key: [u8; 32], bootstrap: Vec<libp2p::Multiaddr>) -> NetworkConfig {
    NetworkConfig {
        listen: vec![loopback()],
        bootstrap,
        ..NetworkConfig::new(role, key)
    }
}

async fn listening(network: &Network) -> libp2p::Multiaddr {
    let address = network
        .wait_listening(Duration::from_secs(10))
        .await
        .expect("listens")[0]
        .clone();
    address.with(libp2p::multiaddr::Protocol::P2p(network.local_peer_id()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_without_the_cluster_key_cannot_connect() {
    let (member, _events) = Network::start(
        &NodeIdentity::generate(),
        config(Role::Node, [1; 32], vec![]),
    )
    .expect("starts");
    let address = listening(&member).await;
    let (stranger, _s) = Network::start(
        &NodeIdentity::generate(),
        config(Role::Node, [2; 32], vec![]),
    )
    .expect("starts");
    let dialed =
        tokio::time::timeout(Duration::from_secs(20), stranger.dial(address.clone())).await;
    assert!(matches!(dialed, Ok(Err(_))), "{dialed:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(member.peers().await.expect("peers").is_empty());
    // With the key, the same dial works.
    let (friend, _f) = Network::start(
        &NodeIdentity::generate(),
        config(Role::Node, [1; 32], vec![]),
    )
    .expect("starts");
    tokio::time::timeout(Duration::from_secs(20), friend.dial(address))
        .await
        .expect("in time")
        .expect("connects");
    for n in [member, stranger, friend] {
        n.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_off_the_allow_list_is_disconnected() {
    let friend_identity = NodeIdentity::generate();
    let (member, _events) = Network::start(
        &NodeIdentity::generate(),
        NetworkConfig {
            allow: Some([friend_identity.peer_id()].into_iter().collect()),
            ..config(Role::Node, [4; 32], vec![])
        },
    )
    .expect("starts");
    let address = listening(&member).await;
    // It has the cluster key, but it is not on the list.
    let (stranger, _s) = Network::start(
        &NodeIdentity::generate(),
        config(Role::Node, [4; 32], vec![]),
    )
    .expect("starts");
    let _ = tokio::time::timeout(Duration::from_secs(20), stranger.dial(address.clone())).await;
    let (friend, _f) =
        Network::start(&friend_identity, config(Role::Node, [4; 32], vec![])).expect("starts");
    tokio::time::timeout(Duration::from_secs(20), friend.dial(address))
        .await
        .expect("in time")
        .expect("connects");
    // The friend is identified; the stranger never is.
    let started = Instant::now();
    loop {
        let peers = member.peers().await.expect("peers");
        assert!(
            !peers.contains_key(&stranger.local_peer_id()),
            "the stranger stayed connected"
        );
        if peers.contains_key(&friend_identity.peer_id()) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the friend was not identified"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let peers = member.peers().await.expect("peers");
    assert!(!peers.contains_key(&stranger.local_peer_id()));
    assert!(
        !stranger
            .peers()
            .await
            .expect("peers")
            .contains_key(&member.local_peer_id()),
        "the connection was closed on the stranger's side too"
    );
    for n in [member, stranger, friend] {
        n.shutdown().await;
    }
}

fn unit_vector(axis: usize) -> Vec<f32> {
    let mut v = vec![0.0; VECTOR_DIM];
    v[axis % VECTOR_DIM] = 1.0;
    v
}

fn announcement(sequence: u64, vector: Vec<f32>, reward: f32) -> Announcement {
    Announcement {
        task: TaskId([3; 16]),
        family: "test".into(),
        embedder: forager_node::memory::ngram_id(),
        vector,
        trace: Vec::new(),
        reward,
        success: true,
        cost: Cost::default(),
        steps: 2,
        sequence,
    }
}

fn frame(identity: &NodeIdentity, value: Announcement) -> Vec<u8> {
    let signed = Signed::new(identity.signing_key(), Domain::Announcement, value).expect("signs");
    Message::Announce(signed).encode().expect("encodes")
}

/// An attacker peer connected to `victim`.
async fn attacker(key: [u8; 32], victim: &libp2p::Multiaddr) -> (NodeIdentity, Network) {
    let identity = NodeIdentity::generate();
    let (network, mut events) =
        Network::start(&identity, config(Role::Node, key, vec![victim.clone()])).expect("starts");
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    (identity, network)
}

/// Publishes once the victim's subscription is known (publishing fails until then).
async fn publish_when_possible(network: &Network, data: Vec<u8>) {
    let started = Instant::now();
    while network.publish(data.clone()).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no gossip peer"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_gossip_is_rejected_counted_and_costs_the_sender() {
    let key = [9; 32];
    let (victim, mut victim_events) =
        Network::start(&NodeIdentity::generate(), config(Role::Node, key, vec![])).expect("starts");
    let address = listening(&victim).await;
    tokio::spawn(async move { while victim_events.recv().await.is_some() {} });
    let stranger = NodeIdentity::generate();
    let mut nan = unit_vector(2);
    nan[9] = f32::NAN;
    let mut oversized = announcement(6, unit_vector(6), 1.0);
    // Just over the 64 KiB gossip limit (gossipsub itself refuses anything much larger).
    oversized.family = "x".repeat(65_000);
    // One attacker per fault: after a rejection, gossipsub's peer score ignores the sender.
    type Fault = Box<dyn Fn(&NodeIdentity) -> Vec<u8>>;
    let faults: Vec<(&str, Fault)> = vec![
        (
            "bad_signature",
            Box::new(|id| {
                let mut forged = frame(id, announcement(1, unit_vector(1), 1.0));
                let last = forged.len() - 1;
                forged[last] ^= 1;
                forged
            }),
        ),
        (
            "signer_mismatch",
            Box::new(move |_| frame(&stranger, announcement(2, unit_vector(2), 1.0))),
        ),
        (
            "wrong_dimension",
            Box::new(|id| frame(id, announcement(3, vec![1.0; 3], 1.0))),
        ),
        (
            "not_finite",
            Box::new(move |id| frame(id, announcement(4, nan.clone(), 1.0))),
        ),
        (
            // Same dimension, another model: vectors of two spaces cannot be compared.
            "other_embedder",
            Box::new(|id| {
                let mut other = announcement(7, unit_vector(7), 1.0);
                other.embedder.name = "another-model".into();
                other.embedder.digest = forager_protocol::digest::Digest32([7; 32]);
                frame(id, other)
            }),
        ),
        (
            "reward_out_of_range",
            Box::new(|id| frame(id, announcement(5, unit_vector(5), 7.0))),
        ),
        (
            "too_large",
            Box::new(move |id| {
                Message::Announce(
                    Signed::new(id.signing_key(), Domain::Announcement, oversized.clone())
                        .expect("signs"),
                )
                .encode()
                .expect("encodes")
            }),
        ),
    ];
    for (reason, make) in &faults {
        let (identity, network) = attacker(key, &address).await;
        publish_when_possible(&network, make(&identity)).await;
        let started = Instant::now();
        loop {
            let counters = victim.counters().await.expect("counters");
            if counters.rejected.get(reason).is_some_and(|&n| n >= 1) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{reason} not counted: {:?}",
                counters.rejected
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if *reason == "bad_signature" {
            // A few more invalid messages sink its peer score below the graylist threshold:
            // after that, even a valid announcement from it is ignored unseen.
            for sequence in [11, 12] {
                let mut forged = frame(&identity, announcement(sequence, unit_vector(1), 1.0));
                let last = forged.len() - 1;
                forged[last] ^= 1;
                let _ = network.publish(forged).await;
            }
            tokio::time::sleep(Duration::from_millis(700)).await;
            let _ = network
                .publish(frame(&identity, announcement(10, unit_vector(10), 1.0)))
                .await;
            tokio::time::sleep(Duration::from_millis(1000)).await;
            let counters = victim.counters().await.expect("counters");
            assert_eq!(counters.accepted, 0, "{counters:?}");
        }
        network.shutdown().await;
    }
    // A replay: the same origin and sequence as an accepted one, other content.
    let (identity, network) = attacker(key, &address).await;
    publish_when_possible(
        &network,
        frame(&identity, announcement(20, unit_vector(20), 1.0)),
    )
    .await;
    network
        .publish(frame(&identity, announcement(20, unit_vector(21), 0.5)))
        .await
        .expect("sent");
    let started = Instant::now();
    loop {
        let counters = victim.counters().await.expect("counters");
        if counters.accepted == 1 && counters.rejected.get("replayed") == Some(&1) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{counters:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    network.shutdown().await;
    victim.shutdown().await;
}

async fn sim_cluster(
    nodes: usize,
    key: [u8; 32],
    queen_data: &Path,
    realtime: bool,
) -> (
    forager_queen::cluster::QueenHandle,
    Vec<forager_queen::cluster::NodeHandle>,
    Arc<SimFactory>,
) {
    let queen = spawn_queen(
        &NodeIdentity::generate(),
        config(Role::Queen, key, vec![]),
        QueenConfig::new(queen_data.to_path_buf()),
    )
    .await
    .expect("queen");
    // A small site: these tests are about the cluster, not about search difficulty.
    let params = SiteParams {
        pages: 150,
        links_per_page: 8,
        ..SiteParams::default()
    };
    let factory = Arc::new(SimFactory::new(&params, 5, 0, realtime).expect("site"));
    let handles =
        forager_tests::spawn_sim_nodes(nodes, key, queen.addresses.clone(), &factory).await;
    (queen, handles, factory)
}

async fn wait_done(queen: &forager_queen::actor::Queen, id: TaskId) -> RunResult {
    let started = Instant::now();
    loop {
        if let TaskState::Done(result) = queen.status(id).await {
            return *result;
        }
        assert!(started.elapsed() < LIMIT, "no result");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_faking_a_success_does_not_win() {
    let key = [5; 32];
    let data = tempfile::tempdir().expect("dir");
    // Honest actions take their simulated time, so that the liar's instant claim is always
    // in before an honest success (otherwise the honest one may win before the lie is tried).
    let (queen, honest, factory) = sim_cluster(2, key, data.path(), true).await;
    // A liar: a real peer with the key, which claims a success on every assignment.
    let liar_id = NodeIdentity::generate();
    let (liar, liar_events) =
        Network::start(&liar_id, config(Role::Node, key, queen.addresses.clone())).expect("starts");
    let liar_peer = liar_id.peer_id().to_string();
    let _liar_task =
        forager_tests::answer_as_liar(liar_id, liar.clone(), liar_events, |assignment| {
            let mut fake = assignment.prefix.clone();
            fake.extend(assignment.prefix.iter().cloned());
            // Another path (one the queen has not seen), ending in a claimed write.
            let mut written = fake.clone();
            written.extend(assignment.prefix.iter().cloned());
            let successes = vec![
                FoundPath::new(
                    fake.clone(),
                    vec![forager_protocol::Fingerprint([7; 16]); fake.len()],
                    vec![forager_protocol::RiskClass::ReadOnly; fake.len()],
                ),
                // A claimed write at the end, "evidence" and all: what it says of
                // the pages before the write is checked, and is false.
                FoundPath {
                    seen: written
                        .iter()
                        .map(|_| StepSeen {
                            family: Some(forager_protocol::Fingerprint([9; 16])),
                            heading: Some("Made up".into()),
                            url: "sim://made-up".into(),
                            title: "Made up".into(),
                            page_digest: Some(Digest32([1; 32])),
                            screenshot: None,
                            why: None,
                        })
                        .collect(),
                    ..FoundPath::new(
                        written.clone(),
                        vec![forager_protocol::Fingerprint([8; 16]); written.len()],
                        written
                            .iter()
                            .enumerate()
                            .map(|(i, _)| {
                                if i + 1 == written.len() {
                                    forager_protocol::RiskClass::DraftWrite
                                } else {
                                    forager_protocol::RiskClass::ReadOnly
                                }
                            })
                            .collect(),
                    )
                },
            ];
            ProgressReport {
                // Claims to have reached far more than one action can.
                locations: (0..1000)
                    .map(|location| KnownLocation { location, depth: 1 })
                    .collect(),
                // And far more states, which would hide them from the honest nodes.
                states: (0..1000u32)
                    .map(|n| KnownState {
                        fingerprint: forager_protocol::Fingerprint::of_bytes(
                            "lie",
                            &n.to_le_bytes(),
                        ),
                        depth: 1,
                    })
                    .collect(),
                ..forager_tests::claiming(assignment, successes)
            }
        });
    wait_for_peers(&queen.network, Role::Node, 3, Duration::from_secs(20))
        .await
        .expect("three nodes");
    let task = sim_task(factory.site(), 400);
    let id = queen.queen.submit(task).await.expect("accepted");
    let result = wait_done(&queen.queen, id).await;
    assert_eq!(result.status, Status::Pass, "{:?}", result.error);
    let journal = std::fs::read_to_string(
        data.path()
            .join("tasks")
            .join(id.to_string())
            .join("events.jsonl"),
    )
    .expect("journal");
    assert!(
        journal
            .lines()
            .any(|l| l.contains("not_reproduced") && l.contains(&liar_peer)),
        "the fake success was tried and refused: {}",
        journal
            .lines()
            .map(|l| l.chars().take(160).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for line in journal.lines().filter(|l| l.contains(&liar_peer)) {
        let event: serde_json::Value = serde_json::from_str(line).expect("journal line");
        if event["event"] == "report" {
            for claims in ["locations", "states"] {
                let kept = event[claims].as_array().map_or(0, Vec::len);
                assert!(
                    kept <= 2,
                    "one action's report keeps at most 2 {claims}, not {kept}"
                );
            }
        }
    }
    assert!(
        journal.lines().any(|l| l.contains("not_reproduced")
            && l.contains(&liar_peer)
            && l.contains("family differs at step 1")),
        "the claimed write's made-up pages were compared by family and refused: {:?}",
        journal
            .lines()
            .filter(|l| l.contains("not_reproduced"))
            .map(|l| l.chars().take(400).collect::<String>())
            .collect::<Vec<_>>()
    );
    assert!(
        !journal
            .lines()
            .any(|l| l.contains("\"verified\"")
                && l.contains(&format!("\"finder\":\"{liar_peer}\""))),
        "the liar never wins"
    );
    for node in &honest {
        node.network.shutdown().await;
    }
    liar.shutdown().await;
    queen.network.shutdown().await;
}

/// A simulated cluster of `nodes` that has searched one task: its replicas hold what it
/// gossiped.
async fn cluster_after_one_task(
    nodes: usize,
    key: [u8; 32],
    queen_data: &Path,
) -> (
    forager_queen::cluster::QueenHandle,
    Vec<forager_queen::cluster::NodeHandle>,
    Arc<SimFactory>,
) {
    let (queen, handles, factory) = sim_cluster(nodes, key, queen_data, false).await;
    wait_for_peers(&queen.network, Role::Node, nodes, Duration::from_secs(20))
        .await
        .expect("the nodes connect");
    let id = queen
        .queen
        .submit(sim_task(factory.site(), 200))
        .await
        .expect("accepted");
    wait_done(&queen.queen, id).await;
    (queen, handles, factory)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_joining_node_converges_to_the_same_replica() {
    let key = [6; 32];
    let data = tempfile::tempdir().expect("dir");
    let (queen, nodes, factory) = cluster_after_one_task(2, key, data.path()).await;
    let first = nodes[0].replica.clone();
    assert!(first.len() > 10, "rollouts were gossiped: {}", first.len());
    // Gossip settles.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let late = spawn_node(
        &NodeIdentity::generate(),
        config(Role::Node, key, nodes[0].addresses.clone()),
        Arc::new(Replica::in_memory(10_000, forager_node::memory::ngram_id())),
        factory.clone(),
        WorkerConfig::default(),
    )
    .await
    .expect("late node");
    let started = Instant::now();
    loop {
        let (a, b, c) = (first.len(), nodes[1].replica.len(), late.replica.len());
        if a == b && b == c {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "replicas did not converge: {a} {b} {c}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for node in nodes.iter().chain(std::iter::once(&late)) {
        node.network.shutdown().await;
    }
    queen.network.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_with_another_embedder_is_refused_by_name() {
    let key = [4; 32];
    let data = tempfile::tempdir().expect("dir");
    let (queen, nodes, factory) = cluster_after_one_task(1, key, data.path()).await;
    assert!(!nodes[0].replica.is_empty(), "rollouts were remembered");
    // A node whose memory holds a 384-dimensional model's vectors joins the n-gram cluster.
    let model = forager_protocol::wire::EmbedderId {
        name: "all-MiniLM-L6-v2".into(),
        digest: forager_protocol::digest::Digest32([1; 32]),
        dim: 384,
    };
    let late = spawn_node(
        &NodeIdentity::generate(),
        config(Role::Node, key, nodes[0].addresses.clone()),
        Arc::new(Replica::in_memory(1_000, model.clone())),
        factory.clone(),
        WorkerConfig::default(),
    )
    .await
    .expect("late node");
    // Its catch-up request is refused, with the reason named.
    let started = Instant::now();
    let answer = loop {
        let asked = late
            .network
            .request(
                nodes[0].peer,
                Message::Sync(SyncRequest {
                    after: 0,
                    limit: 16,
                    embedder: model.clone(),
                }),
            )
            .await;
        match asked {
            Ok(answer) => break answer,
            Err(error) => {
                assert!(started.elapsed() < Duration::from_secs(20), "{error}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    assert!(
        matches!(
            answer,
            Message::Refused {
                reason: RefusalReason::OtherEmbedder,
                ..
            }
        ),
        "{answer:?}"
    );
    // Whatever the cluster gossips or syncs, none of it enters the other space.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(late.replica.len(), 0);
    late.network.shutdown().await;
    nodes[0].network.shutdown().await;
    queen.network.shutdown().await;
}

/// Nodes on `factory`'s site, bootstrapped to `queen`, once it sees them all.
async fn sim_nodes(
    count: usize,
    key: [u8; 32],
    queen: &forager_queen::cluster::QueenHandle,
    factory: &Arc<SimFactory>,
) -> Vec<forager_queen::cluster::NodeHandle> {
    let nodes = forager_tests::spawn_sim_nodes(count, key, queen.addresses.clone(), factory).await;
    wait_for_peers(&queen.network, Role::Node, count, Duration::from_secs(20))
        .await
        .expect("nodes connect");
    nodes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_queen_resumes_its_task_from_the_journal() {
    let key = [9; 32];
    let data = tempfile::tempdir().expect("dir");
    let journal_path = |id: TaskId| {
        data.path()
            .join("tasks")
            .join(id.to_string())
            .join("events.jsonl")
    };
    // Actions take 50 ms, so the first assignment (20 actions) is still running when the
    // queen goes down.
    let params = SiteParams {
        pages: 150,
        links_per_page: 8,
        latency_ms: 50,
        latency_jitter_ms: 0,
        ..SiteParams::default()
    };
    let factory = Arc::new(SimFactory::new(&params, 5, 0, true).expect("site"));
    let first = spawn_queen(
        &NodeIdentity::generate(),
        config(Role::Queen, key, vec![]),
        QueenConfig::new(data.path().to_path_buf()),
    )
    .await
    .expect("queen");
    let nodes = sim_nodes(1, key, &first, &factory).await;
    let task = sim_task(factory.site(), 400);
    let id = first.queen.submit(task).await.expect("accepted");
    let started = Instant::now();
    while !std::fs::read_to_string(journal_path(id))
        .unwrap_or_default()
        .contains("\"assigned\"")
    {
        assert!(started.elapsed() < LIMIT, "no branch was assigned");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The queen goes down mid-task (its nodes with it: they were bootstrapped to it).
    first.queen.shutdown().await;
    first.network.shutdown().await;
    for node in &nodes {
        node.network.shutdown().await;
    }
    let before = std::fs::read_to_string(journal_path(id)).expect("journal");
    assert!(
        !before.contains("\"finished\""),
        "the task ended too early to test a restart"
    );

    // A new queen on the same data directory, and new nodes.
    let second = spawn_queen(
        &NodeIdentity::generate(),
        config(Role::Queen, key, vec![]),
        QueenConfig::new(data.path().to_path_buf()),
    )
    .await
    .expect("queen");
    assert!(
        matches!(second.queen.status(id).await, TaskState::Running { .. }),
        "the task is known again before any node joins"
    );
    let nodes = sim_nodes(2, key, &second, &factory).await;
    let result = wait_done(&second.queen, id).await;
    assert_eq!(result.status, Status::Pass, "{:?}", result.error);
    let journal = std::fs::read_to_string(journal_path(id)).expect("journal");
    let count = |event: &str| {
        journal
            .lines()
            .filter(|l| l.contains(&format!("\"event\":\"{event}\"")))
            .count()
    };
    assert_eq!(count("resumed"), 1, "{journal}");
    assert_eq!(
        count("branches"),
        1,
        "the branches came from the journal, not a second expansion"
    );
    assert_eq!(count("submitted"), 1);
    assert!(
        journal.starts_with(&before),
        "the journal was appended to, not rewritten"
    );
    assert!(
        data.path()
            .join("tasks")
            .join(id.to_string())
            .join("result.json")
            .exists()
    );
    for node in &nodes {
        node.network.shutdown().await;
    }
    second.queen.shutdown().await;
    second.network.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build");
    let mut child = Command::new(binary)
        .args(["-v", "--log-format", "json", "queen", "--data"])
        .arg(dir.path().join("queen"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let mut objects = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            // Lines for people (the key notice) are not log records; records are JSON.
            if line.starts_with('{') {
                let record: serde_json::Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not one JSON object: {line}: {e}"));
                objects.push(record);
                break;
            }
        }
    })
    .await;
    let _ = child.kill().await;
    let record = objects.first().expect("an info record within 30 s");
    for field in ["timestamp", "level", "target", "fields"] {
        assert!(record.get(field).is_some(), "{field} missing: {record}");
    }
    assert_eq!(record["level"], "INFO");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ended_tasks_leave_the_queens_memory_and_are_answered_from_disk() {
    let key = [12; 32];
    let data = tempfile::tempdir().expect("dir");
    let params = SiteParams {
        pages: 150,
        links_per_page: 8,
        ..SiteParams::default()
    };
    let factory = Arc::new(SimFactory::new(&params, 5, 0, false).expect("site"));
    let queen_config = || QueenConfig {
        ended_in_memory: 2,
        ..QueenConfig::new(data.path().to_path_buf())
    };
    let queen = spawn_queen(
        &NodeIdentity::generate(),
        config(Role::Queen, key, vec![]),
        queen_config(),
    )
    .await
    .expect("queen");
    let nodes = sim_nodes(2, key, &queen, &factory).await;
    // Four tasks, one after the other (budgets differ, so each is a task of its own).
    let tasks: Vec<_> = (0..4).map(|i| sim_task(factory.site(), 300 + i)).collect();
    let mut results = Vec::new();
    for task in &tasks {
        let id = queen.queen.submit(task.clone()).await.expect("accepted");
        results.push((id, wait_done(&queen.queen, id).await));
    }
    // Settled tasks leave the live table; two stay in memory, the newest.
    let started = Instant::now();
    let listed = loop {
        let overview = queen.queen.overview().await.expect("overview");
        let ids: Vec<TaskId> = overview.tasks.iter().map(|t| t.id).collect();
        if ids.len() == 2 {
            break ids;
        }
        assert!(started.elapsed() < LIMIT, "still listed: {ids:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(listed, vec![results[3].0, results[2].0], "newest first");
    // The oldest is answered from its folder, as it ended.
    let (first, first_result) = &results[0];
    let TaskState::Done(from_disk) = queen.queen.status(*first).await else {
        panic!("the first task is unknown once out of memory");
    };
    assert_eq!(from_disk.status, first_result.status);
    assert_eq!(from_disk.steps.len(), first_result.steps.len());
    assert_eq!(from_disk.metrics.actions, first_result.metrics.actions);
    // Submitted again, it is the same task: no second run, one journal that ends once.
    let again = queen
        .queen
        .submit(tasks[0].clone())
        .await
        .expect("accepted");
    assert_eq!(again, *first);
    assert!(matches!(
        queen.queen.status(*first).await,
        TaskState::Done(_)
    ));
    let journal = std::fs::read_to_string(
        data.path()
            .join("tasks")
            .join(first.to_string())
            .join("events.jsonl"),
    )
    .expect("journal");
    let count = |event: &str| {
        journal
            .lines()
            .filter(|l| l.contains(&format!("\"event\":\"{event}\"")))
            .count()
    };
    assert_eq!((count("submitted"), count("finished")), (1, 1), "{journal}");
    // Cancelling an ended task leaves it as it ended.
    assert!(matches!(
        queen.queen.cancel(*first).await,
        Ok(TaskState::Done(result)) if result.status == first_result.status
    ));
    for node in &nodes {
        node.network.shutdown().await;
    }
    queen.queen.shutdown().await;
    queen.network.shutdown().await;

    // A restarted queen knows the tasks that ended before it (they are not resumed).
    let restarted = spawn_queen(
        &NodeIdentity::generate(),
        config(Role::Queen, key, vec![]),
        queen_config(),
    )
    .await
    .expect("queen");
    for (id, result) in &results {
        match restarted.queen.status(*id).await {
            TaskState::Done(known) => assert_eq!(known.status, result.status),
            other => panic!("task {id} after a restart: {other:?}"),
        }
    }
    assert!(matches!(
        restarted.queen.status(TaskId([3; 16])).await,
        TaskState::Unknown
    ));
    restarted.queen.shutdown().await;
    restarted.network.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queen_stays_out_of_the_memorys_gossip() {
    let key = [13; 32];
    // Nodes that read goals with a sentence model (384 dimensions): the queen reads none.
    let model = forager_protocol::wire::EmbedderId {
        name: "all-MiniLM-L6-v2".into(),
        digest: Digest32([7; 32]),
        dim: 384,
    };
    let node_config = |bootstrap| NetworkConfig {
        embedder: model.clone(),
        ..config(Role::Node, key, bootstrap)
    };
    let (queen, mut queen_events) =
        Network::start(&NodeIdentity::generate(), config(Role::Queen, key, vec![]))
            .expect("starts");
    tokio::spawn(async move { while queen_events.recv().await.is_some() {} });
    let queen_address = listening(&queen).await;
    let (first, mut first_events) = Network::start(
        &NodeIdentity::generate(),
        node_config(vec![queen_address.clone()]),
    )
    .expect("starts");
    tokio::spawn(async move { while first_events.recv().await.is_some() {} });
    let first_address = listening(&first).await;
    let author = NodeIdentity::generate();
    let (second, mut second_events) =
        Network::start(&author, node_config(vec![queen_address, first_address])).expect("starts");
    tokio::spawn(async move { while second_events.recv().await.is_some() {} });
    let mut vector = vec![0.0f32; 384];
    vector[5] = 1.0;
    let value = Announcement {
        embedder: model.clone(),
        ..announcement(1, vector, 1.0)
    };
    publish_when_possible(&second, frame(&author, value)).await;
    let started = Instant::now();
    while first.counters().await.expect("counters").accepted == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the other node never got it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Gossip settles; the queen neither took nor refused anything.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let at_queen = queen.counters().await.expect("counters");
    assert_eq!(at_queen.accepted, 0);
    assert!(at_queen.rejected.is_empty(), "{:?}", at_queen.rejected);
    for network in [&first, &second, &queen] {
        network.shutdown().await;
    }
}

/// The shortest read-only way from `from` to the goal page of `site`, as action ids.
fn read_only_path(
    site: &forager_simulations::site::Site,
    from: forager_simulations::site::SimState,
) -> Option<Vec<u32>> {
    use forager_protocol::RiskClass;
    use forager_simulations::cluster::to_action;
    let mut came_from = HashMap::from([(from, None)]);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(state) = queue.pop_front() {
        if site.is_success(state) {
            let mut path = Vec::new();
            let mut at = state;
            while let Some(Some((before, action))) = came_from.get(&at).copied() {
                path.push(action);
                at = before;
            }
            path.reverse();
            return Some(path);
        }
        for &action in &site.pages[state.page as usize].actions {
            let read_only = site.actions[action as usize].risk == RiskClass::ReadOnly
                && forager_protocol::risk::classify_action(&to_action(site, action))
                    == RiskClass::ReadOnly;
            if let Some(next) = site.transition(state, action).filter(|_| read_only)
                && !came_from.contains_key(&next)
            {
                came_from.insert(next, Some((state, action)));
                queue.push_back(next);
            }
        }
    }
    None
}

/// `ids` as a found path, its fingerprints read by walking it on the site.
async fn walked(factory: &SimFactory, task: &forager_protocol::TaskSpec, ids: &[u32]) -> FoundPath {
    use forager_node::environment::Environment;
    use forager_node::factory::EnvFactory;
    let site = factory.site();
    let mut browser = factory.create(task, false).expect("a session");
    let mut actions = Vec::new();
    let mut fingerprints = Vec::new();
    for &id in ids {
        let action = forager_simulations::cluster::to_action(site, id);
        let step = browser.act(&action).await.expect("the path walks");
        actions.push(action);
        fingerprints.push(step.state.fingerprint);
    }
    let risks = vec![forager_protocol::RiskClass::ReadOnly; actions.len()];
    FoundPath::new(actions, fingerprints, risks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shorter_success_found_while_a_longer_one_is_reproduced_wins() {
    let key = [6; 32];
    let data = tempfile::tempdir().expect("dir");
    let queen = spawn_queen(
        &NodeIdentity::generate(),
        config(Role::Queen, key, vec![]),
        QueenConfig::new(data.path().to_path_buf()),
    )
    .await
    .expect("queen");
    let params = SiteParams {
        pages: 150,
        links_per_page: 8,
        nondeterminism: 0.0,
        ..SiteParams::default()
    };
    // Every action of the honest node takes 300 ms: its reproduction of the long path lasts
    // seconds, and its own search finds nothing first.
    let factory = Arc::new(
        SimFactory::new(&params, 5, 0, false)
            .expect("site")
            .with_pace(Duration::from_millis(300)),
    );
    let site = factory.site().clone();
    let task = sim_task(&site, 400);
    let short_ids = read_only_path(&site, site.start()).expect("a read-only way");
    // A detour: a first step off the shortest way, then the shortest way from there.
    let long_ids = site.pages[0]
        .actions
        .iter()
        .filter_map(|&first| {
            let next = site.transition(site.start(), first)?;
            let mut ids = vec![first];
            ids.extend(read_only_path(&site, next)?);
            Some(ids)
        })
        .filter(|ids| {
            ids.len() >= short_ids.len() + 2
                && ids.iter().all(|&id| {
                    site.actions[id as usize].risk == forager_protocol::RiskClass::ReadOnly
                })
        })
        .min_by_key(Vec::len)
        .expect("a longer read-only way");
    let unpaced = SimFactory::new(&params, 5, 0, false).expect("site");
    let short = walked(&unpaced, &task, &short_ids).await;
    let long = walked(&unpaced, &task, &long_ids).await;

    let _honest = forager_tests::spawn_sim_nodes(1, key, queen.addresses.clone(), &factory).await;
    // The long finder answers at once; the short one when the long path's reproduction has
    // begun on another node.
    let long_id = NodeIdentity::generate();
    let long_peer = long_id.peer_id().to_string();
    let (long_net, long_events) =
        Network::start(&long_id, config(Role::Node, key, queen.addresses.clone())).expect("starts");
    let long_path = long.clone();
    let _long_task =
        forager_tests::scripted_peer(long_id, long_net.clone(), long_events, move |assignment| {
            let path = long_path.clone();
            async move { forager_tests::claiming(&assignment, vec![path]) }
        });
    let short_id = NodeIdentity::generate();
    let short_peer = short_id.peer_id().to_string();
    let (short_net, short_events) =
        Network::start(&short_id, config(Role::Node, key, queen.addresses.clone()))
            .expect("starts");
    let journal_dir = data.path().join("tasks");
    let short_path = short.clone();
    let waiting_peer = short_peer.clone();
    let _short_task = forager_tests::scripted_peer(
        short_id,
        short_net.clone(),
        short_events,
        move |assignment| {
            let path = short_path.clone();
            let journal = journal_dir
                .join(assignment.task_id.to_string())
                .join("events.jsonl");
            let me = waiting_peer.clone();
            async move {
                let started = Instant::now();
                while started.elapsed() < Duration::from_secs(60) {
                    let reproducing = std::fs::read_to_string(&journal).is_ok_and(|text| {
                        text.lines().any(|l| {
                            l.contains("\"event\":\"verifying\"")
                                && !l.contains(&format!("\"node\":\"{me}\""))
                        })
                    });
                    if reproducing {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                forager_tests::claiming(&assignment, vec![path])
            }
        },
    );
    wait_for_peers(&queen.network, Role::Node, 3, Duration::from_secs(20))
        .await
        .expect("three nodes");
    let id = queen.queen.submit(task).await.expect("accepted");
    let result = wait_done(&queen.queen, id).await;
    assert_eq!(result.status, Status::Pass, "{:?}", result.error);
    let journal: Vec<serde_json::Value> = std::fs::read_to_string(
        data.path()
            .join("tasks")
            .join(id.to_string())
            .join("events.jsonl"),
    )
    .expect("journal")
    .lines()
    .map(|l| serde_json::from_str(l).expect("journal line"))
    .collect();
    let verified: Vec<(String, usize)> = journal
        .iter()
        .filter(|e| e["event"] == "verified")
        .map(|e| {
            (
                e["finder"].as_str().unwrap_or_default().to_owned(),
                e["actions"].as_array().map_or(0, Vec::len),
            )
        })
        .collect();
    // The long path was reproduced first, held, and the short one published.
    assert_eq!(
        verified.first(),
        Some(&(long_peer.clone(), long_ids.len())),
        "{verified:?}"
    );
    let events: Vec<String> = journal
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["event"],
                e["node"]
                    .as_str()
                    .or(e["finder"].as_str())
                    .unwrap_or_default(),
                e["actions"].as_array().map_or(0, Vec::len)
            )
        })
        .collect();
    assert_eq!(
        result.steps.len(),
        short_ids.len(),
        "{events:#?} {:?}",
        result.steps.iter().map(|s| &s.label).collect::<Vec<_>>()
    );
    assert!(
        verified
            .last()
            .is_some_and(|(_, steps)| *steps == short_ids.len()),
        "{verified:?}"
    );
    long_net.shutdown().await;
    short_net.shutdown().await;
    queen.network.shutdown().await;
}
