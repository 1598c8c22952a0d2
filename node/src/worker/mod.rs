//! A node's work: answering the queen (open a task's start page, search a branch, reproduce a
//! path), serving and syncing the replica, and gossiping every finished rollout.
//!
//! ```text
//! network events ──▶ worker loop ──spawns──▶ expand / branch search / replay (own env each)
//!                         │                        │ rollouts
//!                         ▼                        ▼
//!                   replica inserter ◀── accepted ── publisher (signs, gossips, inserts)
//! ```
//!
//! Branch searches are kept per (task, branch) between assignments, so a node given the same
//! branch again continues its tree instead of starting over.
//!
//! The loop owns its tasks in `JoinSet`s. A request that needs a worker takes a permit before its
//! task is spawned (`WorkerConfig::concurrency`); when none is free it is refused `busy`. Before
//! an expansion or a branch search the task's goal is embedded and its memory recalled on a
//! blocking thread. `Release` drops every branch search of an ended task. The jobs: `expand.rs`
//! (the start page), `branch_search.rs` and `branches.rs` (a branch), `replay.rs` (a
//! reproduction), `publish.rs` (gossip), `consent.rs` (what is checked before acting).

mod branch_search;
mod branches;
mod consent;
mod expand;
mod publish;
mod replay;

use crate::environment::Environment;
use crate::factory::EnvFactory;
use crate::index::Replica;
use crate::memory::{GoalEmbedder, ReplayMemory, TaskMemory};
use crate::net::{Network, NetworkEvent, NodeIdentity, Role};
use branch_search::{Remembered, search_branch};
use branches::Branches;
use expand::expand;
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::trajectory::TrajectoryVector;
use forager_protocol::wire::{
    Announcement, BranchAssignment, ExpandRequest, Message, Refusal, RefusalReason, ReplayRequest,
    SyncRequest,
};
use forager_protocol::{Action, TaskSpec};
use publish::Publisher;
use replay::replay;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

/// How a worker behaves.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Branch searches run at once (each in its own environment).
    pub concurrency: usize,
    /// Gossip every finished rollout.
    pub gossip: bool,
    /// What the worker counts for `--metrics` (clones share the counters).
    pub metrics: crate::metrics::WorkerMetrics,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            concurrency: 2,
            gossip: true,
            metrics: crate::metrics::WorkerMetrics::default(),
        }
    }
}

/// The node's main loop. Runs until the network stops; then its tasks are stopped and awaited.
///
/// Every task it starts is owned by one of its `JoinSet`s (a panic is logged, not lost): the
/// rollout publisher and the replica inserter (`service`), catch-up syncs (`syncs`) and the
/// answers to requests (`requests`). A request that needs a worker takes its permit before
/// its task is spawned; with none free it is refused as `busy` at once, so waiting work never
/// piles up (the queen gives each node one piece of work at a time).
pub async fn run_worker<F: EnvFactory>(
    identity: NodeIdentity,
    network: Network,
    mut events: mpsc::Receiver<NetworkEvent>,
    replica: Arc<Replica>,
    factory: Arc<F>,
    config: WorkerConfig,
) {
    let permits = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let embedder = factory.goal_embedder();
    if embedder.id() != *replica.embedder() {
        tracing::error!(
            reader = %embedder.id(),
            replica = %replica.embedder(),
            "the replica holds another embedder's vectors: this node's rollouts will not be \
             remembered"
        );
    }
    let branches: Arc<std::sync::Mutex<Branches<F::Env>>> = Arc::new(std::sync::Mutex::new(
        Branches::new(config.metrics.kept_branches.clone()),
    ));
    let publisher = Arc::new(Publisher {
        identity: identity.clone(),
        network: network.clone(),
        replica: replica.clone(),
        sequence: AtomicU64::new(now_nanos()),
    });
    let mut service = JoinSet::new();
    let mut syncs = JoinSet::new();
    let mut requests = JoinSet::new();
    let (rollouts, inserts) = spawn_services(&mut service, &publisher, &replica, config.gossip);
    let mut synced_from: Vec<libp2p::PeerId> = Vec::new();
    loop {
        let event = tokio::select! {
            event = events.recv() => match event {
                Some(event) => event,
                None => break,
            },
            Some(done) = requests.join_next() => { report_panic("request", done); continue; }
            Some(done) = syncs.join_next() => { report_panic("sync", done); continue; }
            Some(done) = service.join_next() => { report_panic("service", done); continue; }
        };
        match event {
            NetworkEvent::Announcement(accepted) => {
                let _ = inserts.send(accepted).await;
            }
            NetworkEvent::PeerIdentified { peer, role, .. } => {
                // Catch up on what the cluster learned before this node joined (once per peer).
                if matches!(role, Role::Node) && !synced_from.contains(&peer) {
                    synced_from.push(peer);
                    syncs.spawn(sync_from(network.clone(), replica.clone(), peer));
                }
                // A queen knows the other nodes: dial them (they are synced from as above).
                if matches!(role, Role::Queen) {
                    syncs.spawn(dial_nodes_of(network.clone(), peer));
                }
            }
            NetworkEvent::Request {
                peer,
                message,
                responder,
            } => {
                let network = network.clone();
                let work = match work_of(*message, &replica, &branches, peer) {
                    Ok(work) => work,
                    Err(answer) => {
                        let _ = network.respond(responder, *answer).await;
                        continue;
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    let refusal = Refusal::new(RefusalReason::Busy, "every worker is busy");
                    let _ = network.respond(responder, refusal.into()).await;
                    continue;
                };
                let context = WorkContext {
                    factory: factory.clone(),
                    identity: identity.clone(),
                    branches: branches.clone(),
                    rollouts: rollouts.clone(),
                    memory: replica.clone(),
                    embedder: embedder.clone(),
                    queen: peer,
                    network: network.clone(),
                    metrics: config.metrics.clone(),
                };
                requests.spawn(async move {
                    let answer = context.answer(work).await;
                    // Free before answering: the queen may give more work the moment it reads.
                    drop(permit);
                    let _ = network.respond(responder, answer).await;
                });
            }
            NetworkEvent::PeerGone(_) | NetworkEvent::Listening(_) => {}
        }
    }
    // The network has stopped: nobody can read an answer any more.
    drop(rollouts);
    drop(inserts);
    requests.shutdown().await;
    syncs.shutdown().await;
    // The publisher and the inserter end once their queues are closed and drained.
    while let Some(done) = service.join_next().await {
        report_panic("service", done);
    }
}

/// The work a request asks of a worker, or the answer to give at once (a sync page, a
/// release, a refusal of what nodes do not serve).
fn work_of<E: Environment<Action = Action>>(
    message: Message,
    replica: &Replica,
    branches: &std::sync::Mutex<Branches<E>>,
    peer: libp2p::PeerId,
) -> Result<Work, Box<Message>> {
    match message {
        Message::Sync(request) => {
            let answer = if request.embedder == *replica.embedder() {
                Message::SyncPage(replica.page(&request))
            } else {
                Refusal::new(
                    RefusalReason::OtherEmbedder,
                    format!(
                        "this node's memory is embedded with {}, the request's \
                             with {}",
                        replica.embedder(),
                        request.embedder
                    ),
                )
                .into()
            };
            Err(Box::new(answer))
        }
        Message::Release(task) => {
            // Any cluster member may say so; a false word only costs this node a
            // restore by replay when the task's branches come back.
            let dropped = match branches.lock() {
                Ok(mut map) => map.release(task),
                Err(poisoned) => poisoned.into_inner().release(task),
            };
            tracing::debug!(%peer, %task, branches = dropped.len(), "task released");
            // Their environments (browser contexts and pages) close as they drop.
            drop(dropped);
            Err(Box::new(Message::Accepted(task)))
        }
        Message::Expand(request) => Ok(Work::Expand(request)),
        Message::Assign(assignment) => Ok(Work::Assign(assignment)),
        Message::Replay(request) => Ok(Work::Replay(request)),
        other => {
            tracing::debug!(%peer, ?other, "request not for a node");
            let refusal =
                Refusal::new(RefusalReason::NotServed, "nodes do not answer this request");
            Err(Box::new(refusal.into()))
        }
    }
}

/// Starts the rollout publisher (when gossiping) and the replica's inserter; returns their
/// queues.
fn spawn_services(
    service: &mut JoinSet<()>,
    publisher: &Arc<Publisher>,
    replica: &Arc<Replica>,
    gossip: bool,
) -> (
    mpsc::Sender<Announcement>,
    mpsc::Sender<Box<crate::net::Accepted>>,
) {
    let (rollouts, mut rollout_queue) = mpsc::channel::<Announcement>(256);
    if gossip {
        let publisher = publisher.clone();
        service.spawn(async move {
            while let Some(announcement) = rollout_queue.recv().await {
                publisher.publish(announcement).await;
            }
        });
    }
    let (inserts, mut insert_queue) = mpsc::channel::<Box<crate::net::Accepted>>(1024);
    let inserting = replica.clone();
    service.spawn(async move {
        while let Some(accepted) = insert_queue.recv().await {
            let replica = inserting.clone();
            // HNSW insertion is CPU work: keep it off the async threads.
            let _ = tokio::task::spawn_blocking(move || {
                if let Err(error) = replica.insert(accepted.signed, accepted.vector) {
                    tracing::warn!(%error, "cannot store an announcement");
                }
            })
            .await;
        }
    });
    (rollouts, inserts)
}

/// A request that takes a worker.
enum Work {
    Expand(Box<ExpandRequest>),
    Assign(Box<BranchAssignment>),
    Replay(Box<ReplayRequest>),
}

/// What a request's task needs from the worker.
struct WorkContext<F: EnvFactory> {
    factory: Arc<F>,
    identity: NodeIdentity,
    branches: Arc<std::sync::Mutex<Branches<F::Env>>>,
    rollouts: mpsc::Sender<Announcement>,
    memory: Arc<Replica>,
    embedder: GoalEmbedder,
    queen: libp2p::PeerId,
    network: Network,
    metrics: crate::metrics::WorkerMetrics,
}

/// What the memory knows for a task: its goal's vector (`None` when it cannot be embedded)
/// and the successes recalled for it. The embedding is CPU work: on a blocking thread.
async fn task_memory(
    replica: Arc<Replica>,
    embedder: GoalEmbedder,
    task: &TaskSpec,
) -> (Option<TrajectoryVector>, TaskMemory) {
    let (goal, family) = (task.goal.clone(), task.family());
    let recalled = tokio::task::spawn_blocking(move || match embedder.embed(&goal) {
        Ok(vector) => {
            let memory = TaskMemory::recall(&*replica, &family, &vector);
            (Some(vector), memory)
        }
        Err(error) => {
            tracing::warn!(%error, "the goal cannot be embedded; no memory for this task");
            (None, TaskMemory::default())
        }
    })
    .await;
    recalled.unwrap_or_default()
}

impl<F: EnvFactory> WorkContext<F> {
    async fn answer(self, work: Work) -> Message {
        match work {
            Work::Expand(request) => {
                self.metrics.expansions.inc();
                let (_, memory) =
                    task_memory(self.memory.clone(), self.embedder.clone(), &request.task).await;
                expand(&*self.factory, &self.identity, *request, &memory).await
            }
            Work::Replay(request) => {
                self.metrics.reproductions.inc();
                replay(&*self.factory, &self.identity, *request).await
            }
            Work::Assign(assignment) => {
                let span = tracing::info_span!(
                    "branch",
                    task = %assignment.task_id,
                    branch = assignment.branch.0,
                    queen = %self.queen
                );
                let (goal, memory) =
                    task_memory(self.memory.clone(), self.embedder.clone(), &assignment.task).await;
                let goal = goal.map(|vector| (vector, self.memory.embedder().clone()));
                let memory: Arc<dyn ReplayMemory + Send + Sync> = Arc::new(memory);
                let claims = crate::claims::WriteClaims::new(
                    self.network.clone(),
                    self.queen,
                    assignment.task_id,
                );
                let answer = tracing::Instrument::instrument(
                    search_branch(
                        &*self.factory,
                        &self.identity,
                        &self.branches,
                        *assignment,
                        Remembered { memory, goal },
                        self.rollouts,
                        claims,
                    ),
                    span,
                )
                .await;
                if let Message::Progress(progress) = &answer {
                    let report = &progress.report.value;
                    self.metrics
                        .add_branch(report.actions, report.replayed, &report.counters);
                }
                answer
            }
        }
    }
}

/// Logs a task that panicked (its work is lost; the queen reassigns it after its deadline).
fn report_panic(kind: &'static str, done: Result<(), tokio::task::JoinError>) {
    if let Err(error) = done
        && error.is_panic()
    {
        tracing::error!(kind, %error, "a worker task panicked");
    }
}

fn now_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Asks a queen where its other nodes listen, and dials them (a node already connected is
/// not dialled again by libp2p).
async fn dial_nodes_of(network: Network, queen: libp2p::PeerId) {
    use forager_protocol::wire::{MAX_NODE_ADDRESSES, MAX_OVERVIEW_NODES};
    let addresses = match network.request(queen, Message::Nodes).await {
        Ok(Message::NodeAddresses(addresses)) => addresses,
        Ok(other) => {
            tracing::debug!(%queen, ?other, "the queen did not list its nodes");
            return;
        }
        Err(error) => {
            tracing::debug!(%queen, %error, "cannot ask the queen for its nodes");
            return;
        }
    };
    let own = network.local_peer_id().to_string();
    for address in addresses
        .iter()
        .take(MAX_OVERVIEW_NODES * MAX_NODE_ADDRESSES)
    {
        if address.ends_with(&own) {
            continue;
        }
        let Ok(address) = address.parse::<libp2p::Multiaddr>() else {
            tracing::debug!(%address, "the queen listed an address that does not parse");
            continue;
        };
        if let Err(error) = network.dial(address.clone()).await {
            tracing::debug!(%address, %error, "cannot dial a node the queen listed");
        }
    }
}

/// Pages through a peer's replica from the start, inserting what is missing.
pub async fn sync_from(network: Network, replica: Arc<Replica>, peer: libp2p::PeerId) {
    let mut after = 0;
    loop {
        let request = Message::Sync(SyncRequest {
            after,
            limit: crate::index::SYNC_PAGE,
            embedder: replica.embedder().clone(),
        });
        let page = match network.request(peer, request).await {
            Ok(Message::SyncPage(page)) => page,
            Ok(Message::Refused { reason, detail }) => {
                tracing::warn!(%peer, %reason, %detail, "the peer refused to share its memory");
                return;
            }
            Ok(_) | Err(_) => return,
        };
        for signed in page.entries {
            // The same checks as gossip: a peer's replica is not trusted more than its gossip.
            if signed.verify(Domain::Announcement).is_err() || replica.contains(&signed) {
                continue;
            }
            if signed.value.embedder != *replica.embedder() {
                continue;
            }
            let Ok(vector) = TrajectoryVector::with_dimension(
                signed.value.vector.clone(),
                replica.embedder().dim as usize,
            ) else {
                continue;
            };
            if !(0.0..=1.0).contains(&signed.value.reward) {
                continue;
            }
            let replica = replica.clone();
            let _ = tokio::task::spawn_blocking(move || replica.insert(signed, vector)).await;
        }
        match page.next {
            Some(next) => after = next,
            None => return,
        }
    }
}

fn sign<T: serde::Serialize>(identity: &NodeIdentity, value: T) -> Result<Signed<T>, Refusal> {
    Signed::new(identity.signing_key(), Domain::Report, value)
        .map_err(|e| Refusal::new(RefusalReason::Signing, e.to_string()))
}
