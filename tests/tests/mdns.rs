//! mDNS discovery, end to end, inside a network namespace this test creates (mDNS multicasts
//! on every non-loopback interface, so it never runs on the machine's own network): a queen
//! and a node started with `--mdns` and no bootstrap address find and identify each other over
//! a veth pair; a node started without `--mdns` in the same namespace stays alone.
//!
//! Creating a namespace needs CAP_SYS_ADMIN (`unshare -n`); where that is refused the test
//! says so on stderr and returns.

use forager_tests::forager_binary;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead};
use tokio::process::{Child, Command};

const QUEEN_IP: &str = "10.211.0.1";
const NODE_IP: &str = "10.211.0.2";

/// Everything a process printed, line by line, collected in the background.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<String>>>);

impl Output {
    fn collect(&self, stream: impl AsyncRead + Unpin + Send + 'static) {
        let lines = self.0.clone();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stream).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Ok(mut lines) = lines.lock() {
                    lines.push(line);
                }
            }
        });
    }

    fn any(&self, predicate: impl Fn(&str) -> bool) -> bool {
        self.0
            .lock()
            .map(|lines| lines.iter().any(|l| predicate(l)))
            .unwrap_or(false)
    }

    fn text(&self) -> String {
        self.0.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

/// Whether this machine lets the test build its namespace: `unshare -n` (CAP_SYS_ADMIN), a
/// veth pair inside it (`ip`), and `nsenter` to run peers there.
fn namespaces_allowed() -> bool {
    let works = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    works(
        "unshare",
        &[
            "-n", "ip", "link", "add", "probe0", "type", "veth", "peer", "name", "probe1",
        ],
    ) && works("nsenter", &["--version"])
}

/// A process holding a fresh network namespace with a veth pair, both ends up.
async fn namespace() -> Child {
    let setup = format!(
        "ip link set lo up && ip link add fgv0 type veth peer name fgv1 && \
         ip addr add {QUEEN_IP}/24 dev fgv0 && ip addr add {NODE_IP}/24 dev fgv1 && \
         ip link set fgv0 up && ip link set fgv1 up && echo ready && exec sleep 300"
    );
    let mut holder = Command::new("unshare")
        .args(["-n", "--", "sh", "-c", &setup])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("unshare starts");
    let stdout = holder.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
    assert!(
        matches!(ready, Ok(Ok(Some(ref l))) if l == "ready"),
        "the namespace was not set up: {ready:?}"
    );
    holder
}

/// `forager <args>` inside the namespace held by `holder`, with stdout and stderr collected.
fn spawn_inside(holder: &Child, binary: &Path, args: &[&str]) -> (Child, Output) {
    let pid = holder.id().expect("the namespace holder runs").to_string();
    let mut child = Command::new("nsenter")
        .args(["--target", &pid, "--net", "--"])
        .arg(binary)
        .args(args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("nsenter starts");
    let output = Output::default();
    output.collect(child.stdout.take().expect("stdout"));
    output.collect(child.stderr.take().expect("stderr"));
    (child, output)
}

fn peer_args<'a>(kind: &'a str, data: &'a Path, key: &'a Path, ip: &str) -> Vec<String> {
    vec![
        kind.to_owned(),
        "--data".into(),
        data.display().to_string(),
        "--cluster-key".into(),
        key.display().to_string(),
        "--listen".into(),
        format!("/ip4/{ip}/tcp/0"),
    ]
}

fn peer_id(output: &Output, kind: &str) -> Option<String> {
    output.0.lock().ok().and_then(|lines| {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{kind} ")).map(str::to_owned))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_started_with_mdns_find_each_other_and_others_do_not() {
    let missing = (!namespaces_allowed())
        .then(|| "unshare -n, ip or nsenter refused to build a network namespace".to_owned());
    if !forager_tests::require(
        "netns",
        "peers_started_with_mdns_find_each_other_and_others_do_not",
        missing,
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let key = dir.path().join("cluster.key");
    std::fs::write(&key, "ab".repeat(32)).expect("key");
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build");
    let holder = namespace().await;

    let queen_args = peer_args("queen", &dir.path().join("queen"), &key, QUEEN_IP);
    let mut queen_args: Vec<&str> = queen_args.iter().map(String::as_str).collect();
    queen_args.push("--mdns");
    let (mut queen, queen_out) = spawn_inside(&holder, &binary, &queen_args);

    let node_args = peer_args("node", &dir.path().join("node"), &key, NODE_IP);
    let mut node_args: Vec<&str> = node_args.iter().map(String::as_str).collect();
    node_args.extend(["--sim", "1", "--mdns"]);
    let (mut node, node_out) = spawn_inside(&holder, &binary, &node_args);

    let loner_args = peer_args("node", &dir.path().join("loner"), &key, NODE_IP);
    let mut loner_args: Vec<&str> = loner_args.iter().map(String::as_str).collect();
    loner_args.extend(["--sim", "1"]);
    let (mut loner, loner_out) = spawn_inside(&holder, &binary, &loner_args);

    // Both sides identify the other: the node sees a queen, the queen sees this node.
    let started = Instant::now();
    let mut found = false;
    while started.elapsed() < Duration::from_secs(45) {
        let node_id = peer_id(&node_out, "node");
        let queen_id = peer_id(&queen_out, "queen");
        if let (Some(node_id), Some(queen_id)) = (node_id, queen_id) {
            let node_sees_queen = node_out.any(|l| {
                l.contains("peer identified") && l.contains(&queen_id) && l.contains("Queen")
            });
            let queen_sees_node = queen_out.any(|l| {
                l.contains("peer identified") && l.contains(&node_id) && l.contains("Node")
            });
            if node_sees_queen && queen_sees_node {
                found = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The loner had the same time, and more, to be found; it must not have been.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for child in [&mut queen, &mut node, &mut loner] {
        let _ = child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    }
    assert!(
        found,
        "mDNS peers did not find each other in 45 s\nqueen:\n{}\nnode:\n{}",
        queen_out.text(),
        node_out.text()
    );
    assert!(
        node_out.any(|l| l.contains("discovered by mDNS"))
            || queen_out.any(|l| l.contains("discovered by mDNS")),
        "the connection did not come from mDNS:\n{}\n{}",
        queen_out.text(),
        node_out.text()
    );
    assert!(
        !loner_out.any(|l| l.contains("peer identified") || l.contains("discovered by mDNS")),
        "a node without --mdns was found or found others:\n{}",
        loner_out.text()
    );
    drop(holder);
}
