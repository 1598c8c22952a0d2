//! Starting peers: a node (network + replica + worker) and a queen (network + actor).
//! `forager node` and `forager queen` start one each; `forager explore --nodes N` starts a
//! queen and N nodes in one process, on 127.0.0.1, over the very same libp2p code path.

use crate::actor::{self, Queen};
use crate::config::QueenConfig;
use forager_node::factory::EnvFactory;
use forager_node::index::Replica;
use forager_node::net::{NetError, Network, NetworkConfig, NodeIdentity, Role};
use forager_node::worker::{WorkerConfig, run_worker};
use libp2p::{Multiaddr, PeerId};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A running node.
#[derive(Debug)]
pub struct NodeHandle {
    /// Its network.
    pub network: Network,
    /// Its peer id.
    pub peer: PeerId,
    /// Where it listens (with `/p2p/<peer id>`).
    pub addresses: Vec<Multiaddr>,
    /// Its replica.
    pub replica: Arc<Replica>,
    /// The worker's task: it ends when the network stops.
    pub worker: tokio::task::JoinHandle<()>,
}

impl NodeHandle {
    /// Stops the node's network and waits (at most `limit`) for its worker to wind down.
    pub async fn shutdown(self, limit: Duration) {
        self.network.shutdown().await;
        let mut worker = self.worker;
        if tokio::time::timeout(limit, &mut worker).await.is_err() {
            tracing::warn!(peer = %self.peer, "the worker did not stop in time; aborted");
            worker.abort();
        }
    }
}

/// A running queen.
#[derive(Debug)]
pub struct QueenHandle {
    /// The queen's actor.
    pub queen: Queen,
    /// Its network.
    pub network: Network,
    /// Its peer id.
    pub peer: PeerId,
    /// Where it listens (with `/p2p/<peer id>`).
    pub addresses: Vec<Multiaddr>,
}

fn with_peer(addresses: Vec<Multiaddr>, peer: PeerId) -> Vec<Multiaddr> {
    addresses
        .into_iter()
        .map(|a| a.with(libp2p::multiaddr::Protocol::P2p(peer)))
        .collect()
}

/// Starts a node: network, replica, worker.
pub async fn spawn_node<F: EnvFactory>(
    identity: &NodeIdentity,
    config: NetworkConfig,
    replica: Arc<Replica>,
    factory: Arc<F>,
    worker: WorkerConfig,
) -> Result<NodeHandle, NetError> {
    // Gossip is checked against the memory's embedder.
    let config = NetworkConfig {
        embedder: replica.embedder().clone(),
        ..config
    };
    let (network, events) = Network::start(identity, config)?;
    let addresses = network.wait_listening(Duration::from_secs(10)).await?;
    let peer = network.local_peer_id();
    let worker = tokio::spawn(run_worker(
        identity.clone(),
        network.clone(),
        events,
        replica.clone(),
        factory,
        worker,
    ));
    Ok(NodeHandle {
        network,
        peer,
        addresses: with_peer(addresses, peer),
        replica,
        worker,
    })
}

/// Starts a queen: network and actor.
pub async fn spawn_queen(
    identity: &NodeIdentity,
    config: NetworkConfig,
    queen: QueenConfig,
) -> Result<QueenHandle, NetError> {
    let (network, events) = Network::start(identity, config)?;
    let addresses = network.wait_listening(Duration::from_secs(10)).await?;
    let peer = network.local_peer_id();
    // The queen signs winning trajectories with its identity key (unless told otherwise).
    let queen = QueenConfig {
        signing_key: queen
            .signing_key
            .or_else(|| Some(identity.signing_key().clone())),
        ..queen
    };
    let actor = actor::start(network.clone(), events, queen);
    Ok(QueenHandle {
        queen: actor,
        network,
        peer,
        addresses: with_peer(addresses, peer),
    })
}

/// Waits (bounded) until a network sees at least `count` peers of `role`.
pub async fn wait_for_peers(
    network: &Network,
    role: Role,
    count: usize,
    limit: Duration,
) -> Result<(), NetError> {
    let started = Instant::now();
    loop {
        let peers = network.peers().await?;
        if peers.values().filter(|r| **r == role).count() >= count {
            return Ok(());
        }
        if started.elapsed() > limit {
            return Err(NetError::Start(format!(
                "only {} of {count} {role:?} peers connected within {} s",
                peers.values().filter(|r| **r == role).count(),
                limit.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A fresh random cluster key.
pub fn random_cluster_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    rand::fill(&mut key);
    key
}

/// A loopback listen address on an ephemeral port.
pub fn loopback() -> Multiaddr {
    "/ip4/127.0.0.1/tcp/0"
        .parse()
        .unwrap_or_else(|_| Multiaddr::empty())
}
