//! Writes claimed from the queen, over real libp2p on loopback: a write of a task is granted
//! to the first node that asks and to no other (nor to the same node again), another write of
//! the task is granted too, a peer that is not a node and a task that is not the queen's get
//! no grant, and the grants are journaled.

use forager_node::net::{Network, NetworkConfig, NetworkEvent, NodeIdentity, Role};
use forager_protocol::TaskSpec;
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::wire::{Message, RefusalReason, TaskId};
use forager_queen::cluster::{loopback, spawn_queen, wait_for_peers};
use forager_queen::config::QueenConfig;
use std::time::Duration;

/// A peer that joins and answers no request (the queen's expansion of the task waits on it
/// until its timeout, so the task keeps running while the test claims).
fn silent_peer(
    key: [u8; 32],
    role: Role,
    queen: Vec<libp2p::Multiaddr>,
) -> (Network, tokio::task::JoinHandle<()>) {
    let identity = NodeIdentity::generate();
    let (network, mut events) = Network::start(
        &identity,
        NetworkConfig {
            listen: vec![loopback()],
            bootstrap: queen,
            ..NetworkConfig::new(role, key)
        },
    )
    .expect("starts");
    let task = tokio::spawn(async move {
        let mut unanswered = Vec::new();
        while let Some(event) = events.recv().await {
            if let NetworkEvent::Request { responder, .. } = event {
                unanswered.push(responder);
            }
        }
    });
    (network, task)
}

async fn claim(network: &Network, queen: libp2p::PeerId, task: TaskId, key: u64) -> Message {
    tokio::time::timeout(
        Duration::from_secs(20),
        network.request(queen, Message::ClaimWrite { task, key }),
    )
    .await
    .expect("answered in time")
    .expect("answered")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_granted_once_per_task_and_only_to_a_node() {
    let dir = tempfile::tempdir().expect("dir");
    let key = [23; 32];
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
    let (first, first_task) = silent_peer(key, Role::Node, queen.addresses.clone());
    let (second, second_task) = silent_peer(key, Role::Node, queen.addresses.clone());
    let (client, client_task) = silent_peer(key, Role::Client, queen.addresses.clone());
    wait_for_peers(&queen.network, Role::Node, 2, Duration::from_secs(20))
        .await
        .expect("two nodes");
    // Port 9 (discard) on loopback: nothing answers there, and nothing needs to.
    let task = TaskSpec::new(
        "http://127.0.0.1:9/",
        "add a comment saying \"hello\"",
        vec![SuccessPredicate::TextPresent("hello".into())],
    );
    let id = queen.queen.submit(task).await.expect("accepted");

    assert_eq!(
        claim(&first, queen.peer, id, 7).await,
        Message::WriteClaimed(true)
    );
    assert_eq!(
        claim(&second, queen.peer, id, 7).await,
        Message::WriteClaimed(false),
        "another branch holds the write"
    );
    assert_eq!(
        claim(&first, queen.peer, id, 7).await,
        Message::WriteClaimed(false),
        "nor does the same node send it twice"
    );
    assert_eq!(
        claim(&second, queen.peer, id, 8).await,
        Message::WriteClaimed(true),
        "another write of the task is another claim"
    );
    assert_eq!(
        claim(&first, queen.peer, TaskId([9; 16]), 1).await,
        Message::WriteClaimed(false),
        "a task that is not the queen's"
    );
    match claim(&client, queen.peer, id, 9).await {
        Message::Refused { reason, .. } => assert_eq!(reason, RefusalReason::NotServed),
        other => panic!("a client claimed a write: {other:?}"),
    }

    let journal = std::fs::read_to_string(
        dir.path()
            .join("queen")
            .join("tasks")
            .join(id.to_string())
            .join("events.jsonl"),
    )
    .expect("journal");
    let granted: Vec<u64> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "write_claimed")
        .filter_map(|e| e["key"].as_u64())
        .collect();
    assert_eq!(granted, vec![7, 8], "{journal}");

    for (network, task) in [
        (first, first_task),
        (second, second_task),
        (client, client_task),
    ] {
        network.shutdown().await;
        task.abort();
    }
    queen.network.shutdown().await;
}
