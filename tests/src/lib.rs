//! Helpers for forager's end-to-end tests: finding (and if need be building) the `forager`
//! binary of the current profile, and running it with a timeout.
//!
//! # Layout
//!
//! - [`sites`]: fixture websites, each a real HTTP server on 127.0.0.1, with counters the tests
//!   read.
//! - [`app`]: a fixture admin application (login, CSRF, a SQLite state reset between runs).
//! - [`mail`]: a web mail behind a login and a TOTP second factor, for the capsule tests.
//! - [`local_model`]: the local model server (`scripts/local-model`) as a test's child process.
//! - [`delay`]: a TCP relay that delays what it forwards (link delay without `tc netem`).
//! - [`netns`]: hosts as network namespaces, with links that can be cut, delayed and lossy.
//! - [`bench`]: what the bench programs share: their command-line flags and medians.
//! - [`sweep`]: a sweep of the eyes' signal weights on a split, and its report.
//!
//! The tests themselves are in `tests/tests/` (one binary, `e2e`: each file a module), the
//! benches in `tests/benches/`; `tests/tests/module_graph.rs` checks the shape of every
//! crate's source (no import cycles, complete `# Layout` sections).
//!
//! Also here: [`require`] (a test that needs what the machine lacks fails with the reason, unless
//! [`SKIP_VARIABLE`] names the capability: no test passes by returning early),
//! [`assert_no_chromium_left`] (no Chromium process, live or zombie, with a test's profile
//! prefix), and the lying node the cluster tests set against the queen ([`answer_as_liar`],
//! [`claiming`]). [`forager`] gives each run of the binary its own `TMPDIR`, and finds it empty
//! and no Chromium left afterwards.
// These helpers are synchronous (they wait for processes on the test thread): a blocking
// sleep is their poll interval.
#![allow(clippy::disallowed_methods)]

use forager_protocol::result::RunResult;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The variable naming a `forager` binary already built for the tests (`scripts/test` builds
/// it with the test binaries, in one build, and sets it).
pub const BINARY_VARIABLE: &str = "FORAGER_BIN";

/// The `forager` binary: the one [`BINARY_VARIABLE`] names, else the one built with the same
/// profile as the running test, building it first if it is missing or stale (as when only
/// this package's tests were asked for). Cargo is asked once per test process: the tests of
/// one binary run in parallel and would otherwise queue on cargo's build lock, each inside its
/// own time limit.
pub fn forager_binary() -> PathBuf {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(find_or_build_forager).clone()
}

fn find_or_build_forager() -> PathBuf {
    if let Some(binary) = std::env::var_os(BINARY_VARIABLE) {
        let binary = PathBuf::from(binary);
        assert!(
            binary.is_file(),
            "{BINARY_VARIABLE}={} is not a file",
            binary.display()
        );
        return binary;
    }
    build_forager()
}

fn build_forager() -> PathBuf {
    // target/<profile>/deps/<test binary> → target/<profile>/forager
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("tests run from target/<profile>/deps")
        .to_path_buf();
    let binary = profile_dir.join("forager");
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "-p", "forager-cli", "--bin", "forager"]);
    if release {
        build.arg("--release");
    }
    // Always ask cargo: it is a no-op when the binary is fresh, and a stale one would test
    // old code.
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building forager failed");
    binary
}

/// The variable that lists the capabilities whose tests may be skipped on this machine
/// (comma-separated, e.g. `FORAGER_TEST_SKIP=netns`). CI never sets it.
pub const SKIP_VARIABLE: &str = "FORAGER_TEST_SKIP";

/// Gates a test on a capability of the machine (`netns`: network namespaces with veth pairs).
/// Where the capability is missing (`missing` says why), the test fails with that reason,
/// unless [`SKIP_VARIABLE`] names the capability: then it says on stderr that it was skipped
/// and the caller returns. So a green suite means every test ran, unless someone said
/// otherwise, and the output says so.
///
/// Returns `true` when the test should run.
pub fn require(capability: &str, test: &str, missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    let skipped = std::env::var(SKIP_VARIABLE).is_ok_and(|list| skip_listed(&list, capability));
    assert!(
        skipped,
        "{test} needs {capability}, which this machine lacks: {why}. Set \
         {SKIP_VARIABLE}={capability} to skip this test explicitly."
    );
    eprintln!("SKIPPED {test}: {capability} unavailable ({why}); {SKIP_VARIABLE} names it");
    false
}

/// Whether a comma-separated skip list names `capability`.
fn skip_listed(list: &str, capability: &str) -> bool {
    list.split(',').any(|item| item.trim() == capability)
}

/// A `forager queen` or `forager node` process and what it printed about itself.
#[derive(Debug)]
pub struct StartedPeer {
    /// The process (killed when dropped).
    pub child: tokio::process::Child,
    /// Its peer id.
    pub id: String,
    /// Its first listen address, with `/p2p/<id>`.
    pub address: String,
    /// Its metrics endpoint (`--metrics`), if it serves one.
    pub metrics: Option<String>,
}

/// Starts a peer (`command` runs `forager queen|node …`) and reads what it prints about
/// itself, at most a minute; its output is drained after that.
pub async fn start_peer(mut command: tokio::process::Command, kind: &str) -> StartedPeer {
    use tokio::io::AsyncBufReadExt;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let mut id = String::new();
    let mut address = String::new();
    let mut metrics = None;
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(rest) = line.strip_prefix(&format!("{kind} ")) {
                id = rest.trim().to_owned();
            }
            if let Some(rest) = line.strip_prefix("metrics ") {
                metrics = Some(rest.trim().to_owned());
            }
            if let Some(rest) = line.strip_prefix("listening ") {
                address = rest.trim().to_owned();
                break;
            }
        }
    })
    .await;
    assert!(found.is_ok() && !address.is_empty(), "{kind} did not start");
    // Keep draining its output.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    StartedPeer {
        child,
        id,
        address,
        metrics,
    }
}

/// Stops a peer as an operator would: SIGTERM, up to 30 s to wind down (its browsers shut),
/// then SIGKILL.
pub async fn terminate(peer: &mut StartedPeer) {
    if let Some(pid) = peer.child.id() {
        let _ = tokio::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(30), peer.child.wait()).await;
    let _ = peer.child.start_kill();
}

/// Runs a prepared command to its end, failing the test if it takes longer than `limit` (the
/// process is killed then): its exit code, standard output and standard error.
pub async fn finish(
    mut command: tokio::process::Command,
    limit: Duration,
) -> (Option<i32>, Vec<u8>, String) {
    let output = tokio::time::timeout(limit, command.kill_on_drop(true).output())
        .await
        .expect("finished in time")
        .expect("runs");
    (
        output.status.code(),
        output.stdout,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs `forager` with arguments, failing the test if it takes longer than `limit`.
pub fn run_forager(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(forager_binary())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("forager starts");
    let started = Instant::now();
    loop {
        match child.try_wait().expect("waitable") {
            Some(_) => break,
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("forager {args:?} did not finish within {limit:?}");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    child.wait_with_output().expect("output readable")
}

pub mod app;
pub mod bench;
pub mod delay;
pub mod local_model;
pub mod mail;
pub mod netns;
pub mod sites;
pub mod sweep;

/// The processes of this machine: (pid, /proc/<pid>).
fn processes() -> Vec<(u32, std::path::PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((pid, e.path()))
        })
        .collect()
}

/// Processes whose command line contains `needle` (Chromium's carry their profile path).
pub fn processes_with(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for (pid, path) in processes() {
        if pid == std::process::id() {
            continue;
        }
        let cmdline = std::fs::read(path.join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        if cmdline.contains(needle) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// The process group of a process, from `/proc/<pid>/stat`.
fn process_group(stat: &str) -> Option<u32> {
    // pid (comm) state ppid pgrp …
    let close = stat.rfind(')')?;
    stat[close + 1..].split_whitespace().nth(2)?.parse().ok()
}

/// The process groups of the Chromium processes whose command line carries `profile_prefix`
/// (each browser forager launches leads a group of its own).
pub fn chromium_groups(profile_prefix: &str) -> std::collections::BTreeSet<u32> {
    processes_with(profile_prefix)
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains("chrom"))
        .filter_map(|(pid, _)| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            process_group(&stat)
        })
        .collect()
}

/// Every process (zombies included) still in one of these process groups, right now.
pub fn processes_in_groups(groups: &std::collections::BTreeSet<u32>) -> Vec<(u32, String)> {
    processes()
        .into_iter()
        .filter_map(|(pid, path)| {
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            groups
                .contains(&process_group(&stat)?)
                .then(|| (pid, stat.trim().chars().take(80).collect()))
        })
        .collect()
}

/// Browsers a test killed on purpose (a simulated crash), which stay zombies until their pool
/// notices; the tests running beside it must not count them. The test that kills one checks
/// itself that it was reaped ([`assert_reaped`]).
static KILLED_ON_PURPOSE: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Records a browser a test is about to kill on purpose.
pub fn killing_on_purpose(pid: u32) {
    if let Ok(mut killed) = KILLED_ON_PURPOSE.lock() {
        killed.push(pid);
    }
}

/// Panics unless `pid` is gone, zombie or otherwise (waits up to 10 s).
pub fn assert_reaped(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "process {pid} was never reaped");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Zombie processes named like Chromium that are this process's children: a browser this
/// process launched and never reaped (except those killed on purpose). (Orphans that init
/// adopted are init's to reap; with tests running side by side, some are always dying.)
pub fn chromium_zombies() -> Vec<u32> {
    let on_purpose = KILLED_ON_PURPOSE
        .lock()
        .map(|killed| killed.clone())
        .unwrap_or_default();
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for (pid, path) in processes() {
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        // pid (comm) state ppid …
        if let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) {
            let comm = &stat[open + 1..close];
            let mut rest = stat[close + 1..].split_whitespace();
            let state = rest.next();
            let parent = rest.next();
            if state == Some("Z")
                && parent == Some(me.as_str())
                && comm.contains("chrom")
                && !on_purpose.contains(&pid)
            {
                found.push(pid);
            }
        }
    }
    found
}

/// Waits (up to 10 s) until no process carries `profile_prefix` and no Chromium zombie of
/// this process exists; panics with what is left otherwise.
pub fn assert_no_chromium_left(profile_prefix: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let live = processes_with(profile_prefix);
        let zombies = chromium_zombies();
        if live.is_empty() && zombies.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("Chromium left behind: live {live:?}, zombies {zombies:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Panics unless the temporary directory a `forager` command was given is empty (nothing
/// left of its browsers: profiles, Chromium's socket directories), then removes it.
pub fn assert_left_empty(tmp: &std::path::Path) {
    let left: Vec<String> = std::fs::read_dir(tmp)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        tmp.display()
    );
    let _ = std::fs::remove_dir(tmp);
}

/// Whether `text` holds `value` anywhere but inside a long run of hex digits: signatures,
/// digests and keys are written in hex, and any five digits turn up in them by chance (a
/// signed `rollouts.json` held "10115" inside a signature).
pub fn holds_value(text: &str, value: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !(word.len() >= 32 && word.chars().all(|c| c.is_ascii_hexdigit())))
        .any(|word| word.contains(value))
        || text.contains(&format!("\"{value}\""))
}

/// A profile prefix unique to one test.
pub fn unique_prefix(test: &str) -> String {
    format!("forager-test-{}-{test}-", std::process::id())
}

/// `count` nodes of an embedded cluster on 127.0.0.1, each searching `factory`'s site, each
/// bootstrapped to `bootstrap` and to the nodes started before it.
pub async fn spawn_sim_nodes(
    count: usize,
    cluster_key: [u8; 32],
    bootstrap: Vec<libp2p::Multiaddr>,
    factory: &std::sync::Arc<forager_simulations::cluster::SimFactory>,
) -> Vec<forager_queen::cluster::NodeHandle> {
    use forager_node::net::{NetworkConfig, NodeIdentity, Role};
    let mut bootstrap = bootstrap;
    let mut nodes = Vec::with_capacity(count);
    for _ in 0..count {
        let node = forager_queen::cluster::spawn_node(
            &NodeIdentity::generate(),
            NetworkConfig {
                listen: vec![forager_queen::cluster::loopback()],
                bootstrap: bootstrap.clone(),
                ..NetworkConfig::new(Role::Node, cluster_key)
            },
            std::sync::Arc::new(forager_node::index::Replica::in_memory(
                10_000,
                forager_node::memory::ngram_id(),
            )),
            factory.clone(),
            forager_node::worker::WorkerConfig::default(),
        )
        .await
        .expect("a node starts");
        bootstrap.extend(node.addresses.clone());
        nodes.push(node);
    }
    nodes
}

/// How long one `forager` command of an end-to-end test may take.
pub const LIMIT: Duration = Duration::from_secs(240);

/// What a `forager` command did.
pub struct Run {
    /// Its exit status.
    pub code: Option<i32>,
    /// The result document it printed (`--json`), if any.
    pub result: Option<RunResult>,
    /// Its standard error.
    pub stderr: String,
    /// Its run directory (`--out`).
    pub out: PathBuf,
    /// The Chromium profile prefix it was given: profiles and processes carry it.
    pub prefix: String,
}

impl Run {
    /// The result of a run that must have passed: exit 0, `result.json` and `events.jsonl`
    /// written; panics with the reason and stderr otherwise.
    pub fn passed(&self) -> &RunResult {
        let result = self
            .result
            .as_ref()
            .unwrap_or_else(|| panic!("no result document; stderr: {}", self.stderr));
        assert_eq!(
            result.status,
            forager_protocol::result::Status::Pass,
            "expected pass: {:?}\n{}",
            result.error,
            self.stderr
        );
        assert_eq!(self.code, Some(0));
        assert!(self.out.join("result.json").exists());
        assert!(self.out.join("events.jsonl").exists());
        result
    }
}

/// Runs `forager explore` (or another subcommand when `args[0]` is not a flag) with a unique
/// Chromium profile prefix, `--out` a fresh directory and `--json`, then checks that no
/// Chromium survived it.
pub async fn forager(test: &str, args: &[&str]) -> Run {
    forager_env(test, args, &[]).await
}

/// [`forager`] with extra environment variables.
pub async fn forager_env(test: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let prefix = unique_prefix(test);
    let out = std::env::temp_dir().join(format!("{prefix}out"));
    let _ = std::fs::remove_dir_all(&out);
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build helper");
    let mut command = tokio::process::Command::new(binary);
    if args.first().is_some_and(|a| a.starts_with("--")) {
        command.arg("explore");
    }
    // Each run its own data folder (memory, embedding cache), so tests neither see each
    // other's memory nor the user's; the installed model is still the one read.
    let data = std::env::temp_dir().join(format!("{prefix}data"));
    let _ = std::fs::remove_dir_all(&data);
    // Its own temporary directory too (its browsers' profiles, and whatever Chromium puts
    // there), which must be empty again when it is done.
    let tmp = std::env::temp_dir().join(format!("{prefix}tmp"));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("a temporary directory for the run");
    if let Some(model) = forager_node::model::SentenceModel::default_dir() {
        command.env("FORAGER_MODEL_DIR", model);
    }
    command
        .args(args)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .env("FORAGER_PROFILE_PREFIX", &prefix)
        .env("XDG_DATA_HOME", &data)
        .env("TMPDIR", &tmp)
        .envs(env.iter().copied())
        .kill_on_drop(true);
    let output = tokio::time::timeout(LIMIT, command.output())
        .await
        .unwrap_or_else(|_| panic!("forager {args:?} did not finish within {LIMIT:?}"))
        .expect("forager runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let result = serde_json::from_slice::<RunResult>(&output.stdout).ok();
    assert_no_chromium_left(&prefix);
    assert_left_empty(&tmp);
    Run {
        code: output.status.code(),
        result,
        stderr,
        out,
        prefix,
    }
}

/// A lying node for the cluster tests: a real peer with the cluster key that answers every
/// assignment with the report `claim` makes of it, signed with its own key, and refuses
/// everything else. Ends when its network does.
pub fn answer_as_liar(
    identity: forager_node::net::NodeIdentity,
    network: forager_node::net::Network,
    events: tokio::sync::mpsc::Receiver<forager_node::net::NetworkEvent>,
    claim: impl Fn(&forager_protocol::wire::BranchAssignment) -> forager_protocol::wire::ProgressReport
    + Send
    + Sync
    + 'static,
) -> tokio::task::JoinHandle<()> {
    scripted_peer(identity, network, events, move |assignment| {
        let report = claim(&assignment);
        async move { report }
    })
}

/// A scripted peer for the cluster tests: `on_assign` answers its assignments with a report
/// it signs with its own key (each request in its own task, so a slow answer holds up
/// nothing); anything else is refused. Ends when its network does.
pub fn scripted_peer<F, Fut>(
    identity: forager_node::net::NodeIdentity,
    network: forager_node::net::Network,
    mut events: tokio::sync::mpsc::Receiver<forager_node::net::NetworkEvent>,
    on_assign: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn(forager_protocol::wire::BranchAssignment) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = forager_protocol::wire::ProgressReport> + Send + 'static,
{
    use forager_protocol::signing::{Domain, Signed};
    use forager_protocol::wire::{Message, ProgressAnswer, Refusal, RefusalReason};
    let on_assign = std::sync::Arc::new(on_assign);
    let identity = std::sync::Arc::new(identity);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let forager_node::net::NetworkEvent::Request {
                message, responder, ..
            } = event
            else {
                continue;
            };
            let (network, identity, on_assign) =
                (network.clone(), identity.clone(), on_assign.clone());
            tokio::spawn(async move {
                let answer = match *message {
                    Message::Assign(assignment) => {
                        let report = on_assign(*assignment).await;
                        Message::Progress(Box::new(ProgressAnswer {
                            report: Signed::new(identity.signing_key(), Domain::Report, report)
                                .expect("signs"),
                            screenshots: Vec::new(),
                        }))
                    }
                    _ => Message::from(Refusal::new(RefusalReason::NotServed, "scripted")),
                };
                let _ = network.respond(responder, answer).await;
            });
        }
    })
}

/// A report on `assignment` that claims `successes` after one action and nothing else.
pub fn claiming(
    assignment: &forager_protocol::wire::BranchAssignment,
    successes: Vec<forager_protocol::wire::FoundPath>,
) -> forager_protocol::wire::ProgressReport {
    forager_protocol::wire::ProgressReport {
        task: assignment.task_id,
        branch: assignment.branch,
        prefix_fingerprints: Vec::new(),
        visits: 1,
        value_sum: 1.0,
        best_value: 1.0,
        actions: 1,
        replayed: 0,
        cost: Default::default(),
        successes,
        approvals: Vec::new(),
        exhausted: false,
        error: None,
        network: Default::default(),
        counters: Default::default(),
        locations: Vec::new(),
        states: Vec::new(),
        tree: Default::default(),
        session_ended: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_found_anywhere_but_inside_a_signature() {
        let signature = "d0414073a201a976e66e72f358ccb04410994566a80702f60f95a8419bd113fb";
        assert!(!holds_value(
            &format!("{{\"sig\":\"{signature}10115ac4\"}}"),
            "10115"
        ));
        assert!(holds_value("{\"value\":\"10115\"}", "10115"));
        assert!(holds_value("postcode=10115&x=1", "10115"));
        assert!(holds_value("at 10115 Berlin", "10115"));
    }

    #[test]
    fn a_skip_list_names_capabilities_exactly() {
        assert!(skip_listed("netns", "netns"));
        assert!(skip_listed("chromium, netns", "netns"));
        assert!(!skip_listed("netns2", "netns"));
        assert!(!skip_listed("", "netns"));
    }

    #[test]
    fn a_present_capability_runs_the_test() {
        assert!(require("anything", "a test", None));
    }

    #[test]
    #[should_panic(expected = "lacks: no such thing here")]
    fn a_missing_capability_fails_unless_skipped_by_name() {
        require(
            "a-capability-no-skip-list-names",
            "a test",
            Some("no such thing here".into()),
        );
    }
}
