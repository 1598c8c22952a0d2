//! The cluster across hosts: the queen, each node and the submitting client each in a network
//! namespace of their own, joined by a bridge (`forager_tests::netns`); the nodes search a
//! simulated site at a slow pace (`--sim-pace`), so that faults land in the middle of a task:
//! a link cut for 30 s, a node killed, the queen killed and restarted on its data, a node that
//! joins late, and delay and loss on every link (netem where the kernel has it; otherwise
//! loss by nftables and a relay that delays the queen's links). Each test ends
//! with every task accounted for (one result each, reported once) and every passing result
//! checked by `forager verify`. Where the machine refuses namespaces, each test says so on
//! stderr and returns.

use forager_protocol::result::{RunResult, Status};
use forager_simulations::cluster::{SimFactory, sim_task};
use forager_simulations::site::SiteParams;
use forager_tests::delay::Delay;
use forager_tests::netns::Lab;
use forager_tests::{StartedPeer, forager_binary, start_peer, terminate};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(300);

/// The simulated site every node searches (batch seed, site index).
const SEED: u64 = 11;
const SITE: u64 = 0;

/// Real milliseconds per simulated action: a 20-action assignment takes seconds.
const PACE_MS: &str = "250";

/// Every peer listens on this port of its own host.
const PORT: u16 = 4001;

/// A lab. Where the machine cannot make one, the test fails with the reason, unless
/// `FORAGER_TEST_SKIP=netns` says to skip it: then `None` (said on stderr) and the test returns.
fn lab(hosts: usize, test: &str) -> Option<Lab> {
    match Lab::create(hosts) {
        Ok(lab) => Some(lab),
        Err(why) => {
            forager_tests::require("netns", test, Some(why));
            None
        }
    }
}

struct Cluster {
    lab: Lab,
    dir: tempfile::TempDir,
    key: PathBuf,
    binary: PathBuf,
}

impl Cluster {
    async fn new(lab: Lab) -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let key = dir.path().join("cluster.key");
        std::fs::write(&key, forager_node::net::format_cluster_key(&[7u8; 32])).expect("key");
        let binary = tokio::task::spawn_blocking(forager_binary)
            .await
            .expect("build");
        Cluster {
            lab,
            dir,
            key,
            binary,
        }
    }

    /// A lab of `hosts` hosts with a queen and `nodes` nodes; `None` (said on stderr) only
    /// where the machine cannot make one and `FORAGER_TEST_SKIP=netns` allows skipping.
    async fn up(
        hosts: usize,
        nodes: usize,
        test: &str,
    ) -> Option<(Cluster, StartedPeer, Vec<StartedPeer>)> {
        Some(Cluster::start(lab(hosts, test)?, nodes).await)
    }

    /// Waits until the node `id` is assigned a branch.
    async fn wait_for_assignment(&self, id: &str) {
        self.wait_for(&format!("an assignment to {id}"), |e| {
            e["event"] == "assigned" && e["node"] == id
        })
        .await;
    }

    /// Waits until the node `id` loses a branch to another.
    async fn wait_for_reassignment(&self, id: &str) {
        self.wait_for(&format!("{id}'s branch reassigned"), |e| {
            e["event"] == "reassigned" && e["node"] == id
        })
        .await;
    }

    /// A queen on host 0 and `nodes` nodes on hosts 1..=nodes.
    async fn start(lab: Lab, nodes: usize) -> (Cluster, StartedPeer, Vec<StartedPeer>) {
        let cluster = Cluster::new(lab).await;
        let queen = cluster.queen(0, &[]).await;
        let mut started = Vec::with_capacity(nodes);
        for host in 1..=nodes {
            started.push(cluster.node(host, &queen).await);
        }
        (cluster, queen, started)
    }

    /// SIGTERM to every peer still running, the queen last.
    async fn stop(queen: &mut StartedPeer, nodes: &mut [StartedPeer]) {
        for node in nodes {
            terminate(node).await;
        }
        terminate(queen).await;
    }

    fn data(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    async fn queen(&self, host: usize, extra: &[&str]) -> StartedPeer {
        let mut command = self.lab.peer_command(
            host,
            &self.binary,
            "queen",
            &self.data("queen"),
            &self.key,
            PORT,
        );
        // The cluster's mechanics under test, not the memory: a second task of the same
        // kind would otherwise be a remembered workflow's, which one node runs alone.
        command
            .args(["--assignment-deadline", "4", "--no-memory"])
            .args(extra);
        start_peer(command, "queen").await
    }

    async fn node(&self, host: usize, queen: &StartedPeer) -> StartedPeer {
        self.node_via(host, &queen.address).await
    }

    /// A node bootstrapped to `bootstrap` (the queen's address, or a relay's in front of it).
    async fn node_via(&self, host: usize, bootstrap: &str) -> StartedPeer {
        let data = self.data(&format!("node{host}"));
        let mut command = self
            .lab
            .peer_command(host, &self.binary, "node", &data, &self.key, PORT);
        command
            .arg("--bootstrap")
            .arg(bootstrap)
            .args(["--sim", &SEED.to_string(), "--sim-site", &SITE.to_string()])
            .args(["--sim-pace", PACE_MS]);
        start_peer(command, "node").await
    }

    /// A task file for the simulated site (tasks differ by their budget).
    fn task_file(&self, budget: u32) -> PathBuf {
        let factory = SimFactory::new(&SiteParams::default(), SEED, SITE, false).expect("site");
        let task = sim_task(factory.site(), budget);
        let path = self.data(&format!("task-{budget}.json"));
        std::fs::write(&path, serde_json::to_vec(&task).expect("json")).expect("task file");
        path
    }

    /// `forager submit` from `host`, in the background; its exit code, result and stderr.
    fn submit(
        &self,
        host: usize,
        queen: &StartedPeer,
        budget: u32,
    ) -> tokio::task::JoinHandle<(Option<i32>, Option<RunResult>, String)> {
        let mut command = self.lab.command(host, &self.binary);
        command
            .arg("submit")
            .arg("--queen")
            .arg(&queen.address)
            .arg("--cluster-key")
            .arg(&self.key)
            .arg("--task")
            .arg(self.task_file(budget))
            .arg("--out")
            .arg(self.data(&format!("out-{budget}")))
            .arg("--json");
        tokio::spawn(async move {
            let (code, stdout, stderr) = forager_tests::finish(command, LIMIT).await;
            (code, serde_json::from_slice(&stdout).ok(), stderr)
        })
    }

    /// Every event of every task's journal on the queen.
    fn journal(&self) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let Ok(tasks) = std::fs::read_dir(self.data("queen").join("tasks")) else {
            return out;
        };
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("events.jsonl")) {
                out.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
            }
        }
        out
    }

    /// Waits until some journal event satisfies `wanted`.
    async fn wait_for(&self, what: &str, wanted: impl Fn(&serde_json::Value) -> bool) {
        let started = Instant::now();
        while !self.journal().iter().any(&wanted) {
            assert!(started.elapsed() < LIMIT, "never saw {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Every task the queen knows ended once, with a result; every pass verifies.
    fn account_for_every_task(&self, expected_tasks: usize) {
        let tasks: Vec<PathBuf> = std::fs::read_dir(self.data("queen").join("tasks"))
            .expect("the queen's tasks")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(tasks.len(), expected_tasks, "{tasks:?}");
        for task in tasks {
            let journal = std::fs::read_to_string(task.join("events.jsonl")).expect("journal");
            let finished = journal
                .lines()
                .filter(|l| l.contains("\"event\":\"finished\""))
                .count();
            assert_eq!(finished, 1, "one end per task: {journal}");
            let result: RunResult = serde_json::from_slice(
                &std::fs::read(task.join("result.json")).expect("result.json"),
            )
            .expect("a result document");
            assert_eq!(result.status, Status::Pass, "{:?}", result.error);
            let verified = forager_tests::run_forager(
                &["verify", &task.to_string_lossy()],
                Duration::from_secs(60),
            );
            assert!(
                verified.status.success(),
                "forager verify: {}",
                String::from_utf8_lossy(&verified.stdout)
            );
        }
    }
}

fn passed(outcome: &(Option<i32>, Option<RunResult>, String)) -> &RunResult {
    let (code, result, stderr) = outcome;
    let result = result
        .as_ref()
        .unwrap_or_else(|| panic!("no result: {stderr}"));
    assert_eq!(result.status, Status::Pass, "{:?} {stderr}", result.error);
    assert_eq!(*code, Some(0));
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_pass_with_delay_and_loss_on_every_link() {
    let test = "tasks_pass_with_delay_and_loss_on_every_link";
    let netem = Lab::netem_available();
    let Some(lab) = lab(4, test) else { return };
    let delay = Delay {
        base: Duration::from_millis(40),
        jitter: Duration::from_millis(10),
    };
    // Without netem (this kernel has no sch_netem): 1% random loss on every link by nftables,
    // both ways, and each node reaches the queen through a relay on the queen's host that
    // delays every chunk, each way.
    let relay = match netem {
        Ok(()) => {
            for host in 0..4 {
                lab.netem(host, 40, 10, 1.0).expect("netem on every link");
            }
            None
        }
        Err(why) => {
            match Lab::loss_available() {
                Ok(()) => {
                    for host in 0..4 {
                        lab.loss(host, 10).expect("loss on every link");
                    }
                    eprintln!(
                        "{test}: {why}; 1% loss on every link by nftables, and the queen's \
                         links delayed by 40 ms ± 10 ms each way through a relay"
                    );
                }
                Err(no_loss) => eprintln!(
                    "{test}: {why}; {no_loss}; the queen's links are delayed by 40 ms ± 10 ms \
                     each way through a relay instead, without loss"
                ),
            }
            let target = std::net::SocketAddr::from((Lab::address(0), PORT));
            Some(
                lab.delay_relay(0, target, delay)
                    .expect("a relay on the queen's host"),
            )
        }
    };
    let cluster = Cluster::new(lab).await;
    let mut queen = cluster.queen(0, &[]).await;
    let bootstrap = match &relay {
        Some(relay) => queen.address.replace(
            &format!("/tcp/{PORT}/"),
            &format!("/tcp/{}/", relay.address.port()),
        ),
        None => queen.address.clone(),
    };
    let mut nodes = Vec::new();
    for host in 1..=2 {
        nodes.push(cluster.node_via(host, &bootstrap).await);
    }
    let first = cluster.submit(3, &queen, 400);
    let second = cluster.submit(3, &queen, 401);
    passed(&first.await.expect("first"));
    passed(&second.await.expect("second"));
    cluster.account_for_every_task(2);
    // Where the loss is nftables', its counters show it happened.
    let lost: u64 = (0..4)
        .filter_map(|host| cluster.lab.lost_packets(host).ok())
        .sum();
    if relay.is_some() && Lab::loss_available().is_ok() {
        assert!(lost > 0, "no packet was dropped");
        eprintln!("{test}: {lost} packets dropped");
    }
    Cluster::stop(&mut queen, &mut nodes).await;
    drop(relay);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_cut_for_30_s_loses_the_branch_and_the_node_rejoins() {
    let Some((cluster, mut queen, mut nodes)) = Cluster::up(
        4,
        2,
        "a_link_cut_for_30_s_loses_the_branch_and_the_node_rejoins",
    )
    .await
    else {
        return;
    };
    let cut_id = nodes[0].id.clone();
    let submission = cluster.submit(3, &queen, 400);
    // The cable of node 1 is cut while it holds a branch.
    cluster.wait_for_assignment(&cut_id).await;
    cluster.lab.set_link(1, false).expect("link down");
    let cut = Instant::now();
    cluster.wait_for_reassignment(&cut_id).await;
    tokio::time::sleep(Duration::from_secs(30).saturating_sub(cut.elapsed())).await;
    cluster.lab.set_link(1, true).expect("link up");
    passed(&submission.await.expect("submission"));

    // Node 1 is back: a second task gives it work again.
    let assignments_before = cluster
        .journal()
        .iter()
        .filter(|e| e["event"] == "assigned" && e["node"] == cut_id.as_str())
        .count();
    let second = cluster.submit(3, &queen, 401);
    passed(&second.await.expect("second"));
    let assignments_after = cluster
        .journal()
        .iter()
        .filter(|e| e["event"] == "assigned" && e["node"] == cut_id.as_str())
        .count();
    assert!(
        assignments_after > assignments_before,
        "the node that was cut off took work again"
    );
    cluster.account_for_every_task(2);
    Cluster::stop(&mut queen, &mut nodes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_loses_its_branch_and_a_killed_queen_resumes_on_its_data() {
    let Some((cluster, mut queen, mut nodes)) = Cluster::up(
        5,
        3,
        "a_killed_node_loses_its_branch_and_a_killed_queen_resumes_on_its_data",
    )
    .await
    else {
        return;
    };

    // SIGKILL of a node holding a branch: the branch goes to another node.
    let victim = nodes[0].id.clone();
    let submission = cluster.submit(4, &queen, 400);
    cluster.wait_for_assignment(&victim).await;
    nodes[0].child.start_kill().expect("SIGKILL");
    let _ = nodes[0].child.wait().await;
    cluster.wait_for_reassignment(&victim).await;
    passed(&submission.await.expect("submission"));

    // SIGKILL of the queen mid-task, and a new queen on the same data and address: the
    // nodes dial it again, the waiting client gets its result, the task is journaled once.
    let submission = cluster.submit(4, &queen, 401);
    let second_assignments =
        |journal: &[serde_json::Value]| journal.iter().filter(|e| e["event"] == "assigned").count();
    let before = second_assignments(&cluster.journal());
    let started = Instant::now();
    while second_assignments(&cluster.journal()) == before {
        assert!(
            started.elapsed() < LIMIT,
            "the second task got no assignment"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    queen.child.start_kill().expect("SIGKILL");
    let _ = queen.child.wait().await;
    let mut queen = cluster.queen(0, &[]).await;
    passed(&submission.await.expect("submission"));
    let resumed = cluster
        .journal()
        .iter()
        .filter(|e| e["event"] == "resumed")
        .count();
    assert_eq!(
        resumed, 1,
        "the unfinished task was resumed from its journal"
    );
    cluster.account_for_every_task(2);
    Cluster::stop(&mut queen, &mut nodes[1..]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_joins_late_syncs_the_replica_and_takes_work() {
    let Some((cluster, mut queen, mut nodes)) = Cluster::up(
        5,
        2,
        "a_node_that_joins_late_syncs_the_replica_and_takes_work",
    )
    .await
    else {
        return;
    };
    passed(&cluster.submit(4, &queen, 400).await.expect("first"));

    // What the early nodes hold now (nothing more is gossiped while no task runs).
    let log = |name: &str| {
        std::fs::metadata(
            cluster
                .data(name)
                .join("index")
                .join(forager_node::index::LOG_FILE),
        )
        .map(|m| m.len())
        .unwrap_or(0)
    };
    let held = log("node1");
    assert!(held > 0, "the first task left trajectories in the replicas");
    let mut late = cluster.node(3, &queen).await;
    let late_id = late.id.clone();
    // It pages through a peer's replica when it joins: the same records, the same bytes.
    let started = Instant::now();
    while log("node3") < held {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the late node synced {} of {held} bytes",
            log("node3")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    passed(&cluster.submit(4, &queen, 401).await.expect("second"));
    assert!(
        cluster
            .journal()
            .iter()
            .any(|e| e["event"] == "assigned" && e["node"] == late_id.as_str()),
        "the late node took work"
    );
    terminate(&mut late).await;
    let late_replica = forager_node::index::Replica::open(
        &cluster.data("node3").join("index"),
        100_000,
        forager_node::memory::ngram_id(),
    )
    .expect("the late node's replica");
    assert!(!late_replica.is_empty(), "its replica loads from disk");
    cluster.account_for_every_task(2);
    Cluster::stop(&mut queen, &mut nodes).await;
}
