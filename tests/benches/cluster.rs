//! Cluster benchmarks, a bench program (`cargo bench -p forager-tests --bench cluster`).
//!
//! - `gossip`: propagation latency (p50, p99) and bytes per vector across 2, 4 and 8 peer
//!   processes on 127.0.0.1 (this program re-executes itself as the peers).
//! - `index`: HNSW recall@10 against brute force, and queries per second, at 10k and 100k
//!   vectors.
//! - `speedup`: wall-clock time to solve simulated sites with 50 ms actions, with 1, 2, 4 and 8
//!   nodes of an embedded cluster (same libp2p code path as separate processes).
//! - `work`: the actions the same cluster spends to solve simulated sites without latency, per
//!   node count: the extra work of parallel decisions, which bounds the speedup.
//!
//! Arguments after `--`: any of `gossip`, `index`, `speedup` (default: these three), `work`;
//! `--reps N` (sites); `--nodes 1,2,4,8` (node counts of `speedup` and `work`); `--delay MS`
//! (`speedup` with MS ± MS/4 on every node's link to the queen, through a delaying relay:
//! `forager_tests::delay`, as this kernel has no netem).

use forager_node::index::Replica;
use forager_node::net::{Network, NetworkConfig, NetworkEvent, NodeIdentity, Role};
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::trajectory::{Cost, TrajectoryVector, VECTOR_DIM};
use forager_protocol::wire::{Announcement, Message, TaskId, TaskState};
use forager_queen::cluster::{loopback, spawn_queen, wait_for_peers};
use forager_queen::config::QueenConfig;
use forager_simulations::cluster::{SimFactory, sim_task};
use forager_simulations::site::SiteParams;
use forager_tests::delay::{Delay, DelayRelay};
use rand::{RngExt, SeedableRng};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEY: [u8; 32] = [77; 32];

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return f64::NAN;
    }
    let index = ((values.len() - 1) as f64 * p).round() as usize;
    values[index]
}

fn median(values: &mut [f64]) -> f64 {
    percentile(values, 0.5)
}

fn loopback_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/net/dev").unwrap_or_default();
    text.lines()
        .find(|l| l.trim_start().starts_with("lo:"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|rx| rx.parse().ok())
        .unwrap_or(0)
}

fn unit(rng: &mut rand::rngs::ChaCha8Rng) -> Vec<f32> {
    let values: Vec<f32> = (0..VECTOR_DIM)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    TrajectoryVector::normalise(values)
        .map(Vec::from)
        .unwrap_or_else(|_| vec![0.0; VECTOR_DIM])
}

/// A peer process: `--child send|recv [BOOTSTRAP]`.
fn child(role: &str, bootstrap: Option<String>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let identity = NodeIdentity::generate();
        let config = NetworkConfig {
            listen: vec![loopback()],
            bootstrap: bootstrap
                .into_iter()
                .filter_map(|b| b.parse().ok())
                .collect(),
            ..NetworkConfig::new(Role::Node, KEY)
        };
        let (network, mut events) = Network::start(&identity, config).expect("network");
        let address = network
            .wait_listening(Duration::from_secs(10))
            .await
            .expect("listens")[0]
            .clone()
            .with(libp2p::multiaddr::Protocol::P2p(network.local_peer_id()));
        println!("addr {address}");
        let _ = std::io::stdout().flush();
        if role == "recv" {
            while let Some(event) = events.recv().await {
                if let NetworkEvent::Announcement(accepted) = event {
                    println!("recv {} {}", accepted.signed.value.sequence, now_nanos());
                    let _ = std::io::stdout().flush();
                }
            }
            return;
        }
        tokio::spawn(async move { while events.recv().await.is_some() {} });
        // The sender: wait for "go <receivers>" on stdin, then publish.
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        let receivers: usize = line
            .trim()
            .strip_prefix("go ")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        // Until the mesh has every receiver, publishing may reach only some: give it time.
        let started = Instant::now();
        while network.peers().await.map(|p| p.len()).unwrap_or(0) < receivers
            && started.elapsed() < Duration::from_secs(20)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(1);
        for sequence in 0..200u64 {
            let announcement = Announcement {
                task: TaskId([1; 16]),
                family: "bench".into(),
                embedder: forager_node::memory::ngram_id(),
                vector: unit(&mut rng),
                trace: Vec::new(),
                reward: 1.0,
                success: true,
                cost: Cost::default(),
                steps: 4,
                sequence,
            };
            let signed = Signed::new(identity.signing_key(), Domain::Announcement, announcement)
                .expect("signs");
            let frame = Message::Announce(signed).encode().expect("encodes");
            let size = frame.len();
            let sent = now_nanos();
            if network.publish(frame).await.is_ok() {
                println!("sent {sequence} {sent} {size}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = std::io::stdout().flush();
        tokio::time::sleep(Duration::from_secs(2)).await;
        println!("done");
        let _ = std::io::stdout().flush();
    });
}

fn gossip(peers: usize) {
    let exe = std::env::current_exe().expect("exe");
    let spawn = |role: &str, bootstrap: Option<&str>| {
        let mut command = std::process::Command::new(&exe);
        command.arg("--child").arg(role);
        if let Some(b) = bootstrap {
            command.arg(b);
        }
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("child starts")
    };
    let mut sender = spawn("send", None);
    let mut sender_out = std::io::BufReader::new(sender.stdout.take().expect("stdout"));
    let mut first = String::new();
    sender_out.read_line(&mut first).expect("address");
    let address = first
        .trim()
        .strip_prefix("addr ")
        .expect("addr line")
        .to_owned();
    // Synchronous reader threads, one line per peer and round: small by construction.
    #[allow(clippy::disallowed_methods)]
    let (lines_tx, lines_rx) = std::sync::mpsc::channel::<String>();
    let mut receivers = Vec::new();
    for _ in 1..peers {
        let mut child = spawn("recv", Some(&address));
        let out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let tx = lines_tx.clone();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        receivers.push(child);
    }
    let before = loopback_bytes();
    if let Some(stdin) = sender.stdin.as_mut() {
        let _ = writeln!(stdin, "go {}", peers - 1);
    }
    let mut sent = std::collections::HashMap::new();
    let mut size = 0usize;
    for line in sender_out.lines().map_while(Result::ok) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["sent", seq, nanos, bytes] => {
                sent.insert(
                    seq.parse::<u64>().unwrap_or(0),
                    nanos.parse::<u128>().unwrap_or(0),
                );
                size = bytes.parse().unwrap_or(0);
            }
            ["done"] => break,
            _ => {}
        }
    }
    let after = loopback_bytes();
    let mut latencies = Vec::new();
    while let Ok(line) = lines_rx.recv_timeout(Duration::from_millis(500)) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let ["recv", seq, nanos] = parts.as_slice()
            && let (Ok(seq), Ok(nanos)) = (seq.parse::<u64>(), nanos.parse::<u128>())
            && let Some(sent_at) = sent.get(&seq)
        {
            latencies.push((nanos.saturating_sub(*sent_at)) as f64 / 1e6);
        }
    }
    for mut child in receivers.into_iter().chain(std::iter::once(sender)) {
        let _ = child.kill();
        let _ = child.wait();
    }
    let deliveries = latencies.len();
    let expected = sent.len() * (peers - 1);
    let wire = (after.saturating_sub(before)) as f64 / deliveries.max(1) as f64;
    println!(
        "  {peers} peers: {deliveries}/{expected} deliveries, latency p50 {:.2} ms, p99 {:.2} ms; \
         {size} B per announcement, {:.0} B on loopback per delivery",
        percentile(&mut latencies.clone(), 0.5),
        percentile(&mut latencies, 0.99),
        wire
    );
}

fn index(count: usize) {
    // Clustered data, as trajectories of a task family are: 200 centres, small noise.
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(count as u64);
    let centres: Vec<Vec<f32>> = (0..200).map(|_| unit(&mut rng)).collect();
    let noisy = |rng: &mut rand::rngs::ChaCha8Rng| {
        let centre = &centres[rng.random_range(0..centres.len())];
        let values: Vec<f32> = centre
            .iter()
            .map(|c| c + rng.random_range(-0.05..0.05))
            .collect();
        TrajectoryVector::normalise(values).expect("valid")
    };
    let identity = NodeIdentity::generate();
    let replica = Replica::in_memory(count, forager_node::memory::ngram_id());
    let vectors: Vec<TrajectoryVector> = (0..count).map(|_| noisy(&mut rng)).collect();
    let started = Instant::now();
    for (i, vector) in vectors.iter().enumerate() {
        let announcement = Announcement {
            task: TaskId([0; 16]),
            family: "bench".into(),
            embedder: forager_node::memory::ngram_id(),
            vector: vector.as_slice().to_vec(),
            trace: Vec::new(),
            reward: 1.0,
            success: true,
            cost: Cost::default(),
            steps: 1,
            sequence: i as u64,
        };
        let signed =
            Signed::new(identity.signing_key(), Domain::Announcement, announcement).expect("signs");
        replica.insert(signed, vector.clone()).expect("inserts");
    }
    let build = started.elapsed().as_secs_f64();
    let queries: Vec<TrajectoryVector> = (0..200).map(|_| noisy(&mut rng)).collect();
    let started = Instant::now();
    let results: Vec<Vec<u64>> = queries
        .iter()
        .map(|q| {
            replica
                .nearest(q.as_slice(), 10, 64)
                .into_iter()
                .map(|(id, _)| id)
                .collect()
        })
        .collect();
    let qps = queries.len() as f64 / started.elapsed().as_secs_f64();
    let mut recall = 0.0;
    for (q, found) in queries.iter().zip(&results) {
        let mut exact: Vec<(usize, f32)> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (i + 1, q.cosine(v)))
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let truth: std::collections::HashSet<u64> =
            exact.iter().take(10).map(|(i, _)| *i as u64).collect();
        recall += found.iter().filter(|id| truth.contains(id)).count() as f64 / 10.0;
    }
    recall /= queries.len() as f64;
    println!(
        "  {count} vectors: recall@10 {recall:.3}, {qps:.0} queries/s (ef 64), built in {build:.1} s ({:.0} inserts/s)",
        count as f64 / build
    );
}

/// What one solve took: wall seconds to a reproduced winner (NaN: not solved), and the
/// actions the queen counted.
#[derive(Debug, Clone, Copy)]
struct Solve {
    seconds: f64,
    actions: u32,
}

/// The queen's first address with its TCP port replaced by a delaying relay's.
async fn delayed(
    queen: &[libp2p::Multiaddr],
    delay: Delay,
) -> (Vec<libp2p::Multiaddr>, DelayRelay) {
    use libp2p::multiaddr::Protocol;
    let address = queen.first().expect("the queen listens").clone();
    let port = address
        .iter()
        .find_map(|p| match p {
            Protocol::Tcp(port) => Some(port),
            _ => None,
        })
        .expect("a TCP address");
    let relay = DelayRelay::start(([127, 0, 0, 1], port).into(), delay, 7)
        .await
        .expect("relay");
    let relayed = address
        .iter()
        .map(|p| match p {
            Protocol::Tcp(_) => Protocol::Tcp(relay.address.port()),
            other => other,
        })
        .collect();
    (vec![relayed], relay)
}

async fn solve(
    nodes: usize,
    batch: u64,
    site_index: u64,
    latency_ms: u32,
    delay: Option<Delay>,
) -> Solve {
    // FORAGER_BENCH_KEEP=DIR keeps each solve's queen folder (journals) for a look afterwards.
    let temp = tempfile::tempdir().expect("dir");
    let data = match std::env::var_os("FORAGER_BENCH_KEEP") {
        Some(dir) => {
            let kept = std::path::PathBuf::from(dir).join(format!(
                "b{batch}-s{site_index}-n{nodes}-{latency_ms}ms{}",
                if delay.is_some() { "-delayed" } else { "" }
            ));
            let _ = std::fs::remove_dir_all(&kept);
            std::fs::create_dir_all(&kept).expect("a folder to keep");
            kept
        }
        None => temp.path().to_path_buf(),
    };
    let queen = spawn_queen(
        &NodeIdentity::generate(),
        NetworkConfig {
            listen: vec![loopback()],
            ..NetworkConfig::new(Role::Queen, KEY)
        },
        QueenConfig::new(data.clone()),
    )
    .await
    .expect("queen");
    let params = SiteParams {
        latency_ms,
        latency_jitter_ms: 0,
        ..SiteParams::default()
    };
    let factory = Arc::new(SimFactory::new(&params, batch, site_index, true).expect("site"));
    // With a delay, every node reaches the queen through its own relay (nodes reach each
    // other directly).
    let mut relays = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..nodes {
        let bootstrap = match delay {
            Some(delay) => {
                let (address, relay) = delayed(&queen.addresses, delay).await;
                relays.push(relay);
                address
            }
            None => queen.addresses.clone(),
        };
        handles.extend(forager_tests::spawn_sim_nodes(1, KEY, bootstrap, &factory).await);
    }
    wait_for_peers(&queen.network, Role::Node, nodes, Duration::from_secs(20))
        .await
        .expect("nodes");
    let started = Instant::now();
    let task = sim_task(factory.site(), 500);
    let id: TaskId = queen.queen.submit(task.clone()).await.expect("accepted");
    // The task's own wall-time budget ends it; this bound only guards the bench itself.
    let limit = Duration::from_secs(u64::from(task.budget.wall_time_secs) + 60);
    let solved = loop {
        if let TaskState::Done(result) = queen.queen.status(id).await {
            let actions = result.metrics.actions;
            if result.status == forager_protocol::result::Status::Pass {
                break Solve {
                    seconds: started.elapsed().as_secs_f64(),
                    actions,
                };
            }
            let reason = result
                .error
                .map(|e| format!("{:?}: {}", e.reason, e.detail));
            println!("    site {site_index}, {nodes} node(s): not solved ({reason:?})");
            break Solve {
                seconds: f64::NAN,
                actions,
            };
        }
        if started.elapsed() > limit {
            println!("    site {site_index}, {nodes} node(s): no result within {limit:?}");
            break Solve {
                seconds: f64::NAN,
                actions: 0,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for node in &handles {
        node.network.shutdown().await;
    }
    queen.queen.shutdown().await;
    queen.network.shutdown().await;
    solved
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Wall-clock speedup over one node, on batch 3's sites with 50 ms actions (and with `delay` on
/// every node's link to the queen).
fn speedup(reps: usize, counts: &[usize], delay: Option<Delay>) {
    let runtime = runtime();
    let mut times: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for site in 0..reps as u64 {
        // Interleaved: every node count on the same site before the next site.
        for &nodes in counts {
            let t = runtime.block_on(solve(nodes, 3, site, 50, delay)).seconds;
            times.entry(nodes).or_default().push(t);
        }
    }
    let Some(ones) = times.get(&1).cloned() else {
        println!("  (no 1-node runs to compare with)");
        return;
    };
    let base = median(
        &mut ones
            .iter()
            .copied()
            .filter(|t| t.is_finite())
            .collect::<Vec<_>>(),
    );
    for (nodes, values) in &times {
        let solved: Vec<f64> = values.iter().copied().filter(|t| t.is_finite()).collect();
        let m = median(&mut solved.clone());
        // Per site ratio against one node, then the median of ratios.
        let mut ratios: Vec<f64> = values
            .iter()
            .zip(&ones)
            .filter(|(t, b)| t.is_finite() && b.is_finite())
            .map(|(t, b)| b / t)
            .collect();
        println!(
            "  {nodes} node(s): solved {}/{}, median {m:.1} s, speedup (median of per-site ratios) {:.2}x, ratio of medians {:.2}x; times {:?}",
            solved.len(),
            values.len(),
            median(&mut ratios),
            base / m,
            values
                .iter()
                .map(|t| (t * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        );
    }
}

/// The work behind the speedup, without latency: actions the cluster spends to solve each of
/// batch 7's sites. `nodes × actions(1 node) / actions(n nodes)` bounds the speedup.
fn work(reps: usize, counts: &[usize]) {
    let runtime = runtime();
    let mut rows: std::collections::BTreeMap<usize, Vec<Solve>> = Default::default();
    for site in 0..reps as u64 {
        for &nodes in counts {
            let solved = runtime.block_on(solve(nodes, 7, site, 0, None));
            rows.entry(nodes).or_default().push(solved);
        }
    }
    let Some(ones) = rows.get(&1).cloned() else {
        println!("  (no 1-node runs to compare with)");
        return;
    };
    for (nodes, solves) in &rows {
        let solved = solves.iter().filter(|s| s.seconds.is_finite()).count();
        // Over the sites both solved: the extra work parallel decisions cost.
        let pairs: Vec<(f64, f64)> = solves
            .iter()
            .zip(&ones)
            .filter(|(s, o)| s.seconds.is_finite() && o.seconds.is_finite())
            .map(|(s, o)| (f64::from(s.actions), f64::from(o.actions)))
            .collect();
        let mine: f64 = pairs.iter().map(|p| p.0).sum::<f64>() / pairs.len().max(1) as f64;
        let one: f64 = pairs.iter().map(|p| p.1).sum::<f64>() / pairs.len().max(1) as f64;
        println!(
            "  {nodes} node(s): solved {solved}/{}, mean actions {mine:.0} (1 node {one:.0} on the same sites, ratio {:.2}), speedup bound {:.2}x; actions {:?}",
            solves.len(),
            mine / one,
            *nodes as f64 * one / mine,
            solves
                .iter()
                .map(|s| if s.seconds.is_finite() {
                    i64::from(s.actions)
                } else {
                    -1
                })
                .collect::<Vec<_>>()
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(
            args.get(i + 1).map_or("recv", String::as_str),
            args.get(i + 2).cloned(),
        );
        return;
    }
    let reps: usize = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let counts: Vec<usize> = args
        .iter()
        .position(|a| a == "--nodes")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 8]);
    let wanted: Vec<&str> = ["gossip", "index", "speedup", "work"]
        .into_iter()
        .filter(|w| args.iter().any(|a| a == w))
        .collect();
    let all = wanted.is_empty();
    if all || wanted.contains(&"gossip") {
        println!("gossip propagation (200 announcements, 20 ms apart, one publisher):");
        for peers in [2, 4, 8] {
            gossip(peers);
        }
    }
    if all || wanted.contains(&"index") {
        println!("HNSW replica (M 16, ef_construction 100, dot product on unit vectors):");
        for count in [10_000, 100_000] {
            index(count);
        }
    }
    if all || wanted.contains(&"speedup") {
        let delay = args
            .iter()
            .position(|a| a == "--delay")
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|ms| Delay {
                base: Duration::from_millis(ms),
                jitter: Duration::from_millis(ms / 4),
            });
        match delay {
            Some(d) => println!(
                "cluster speedup, simulated sites with 50 ms actions, {reps} sites, {:?} ± {:?} \
                 on each node's link to the queen:",
                d.base, d.jitter
            ),
            None => println!("cluster speedup, simulated sites with 50 ms actions, {reps} sites:"),
        }
        speedup(reps, &counts, delay);
    }
    if wanted.contains(&"work") {
        println!("actions to solve, simulated sites without latency, {reps} sites:");
        work(reps, &counts);
    }
}
