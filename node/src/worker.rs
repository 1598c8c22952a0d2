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

use crate::embed::action_key;
use crate::environment::{EnvError, Environment, StateInfo, Step};
use crate::index::Replica;
use crate::memory::{GoalEmbedder, ReplayMemory, TaskMemory, raise_priors};
use crate::net::{Network, NetworkEvent, NodeIdentity, Role};
use crate::search::{self, Finish, NodeStatus, Search, SearchConfig, SearchEvent, SearchObserver};
use forager_protocol::artifact::Digest32;
use forager_protocol::result::NetworkSummary;
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::task::AfterCheck;
use forager_protocol::trajectory::Cost;
use forager_protocol::trajectory::TrajectoryVector;
use forager_protocol::wire::{
    Announcement, BranchAssignment, BranchCounters, BranchId, ExpandReport, ExpandRequest,
    FoundPath, KnownLocation, KnownState, MAX_SEEN_TEXT, MAX_TREE_NODES, Message, PageInfo,
    ProgressAnswer, ProgressReport, Refusal, RefusalReason, ReplayAnswer, ReplayReport,
    ReplayRequest, StepSeen, SyncRequest, TaskId, TraceStep, TreeNode, TreeSnapshot, TreeStatus,
    WireCandidate,
};
use forager_protocol::{Action, FailureReason, Fingerprint, PruneReason, TaskSpec};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

/// Makes environments for tasks: Chromium contexts in production, simulated sites in
/// cluster-scale runs.
pub trait EnvFactory: Send + Sync + 'static {
    /// The environment.
    type Env: Environment<Action = Action> + Send + 'static;
    /// A fresh environment for a task. `for_replay`: the environment must reproduce a path
    /// from scratch (no reuse of live pages).
    fn create(&self, task: &TaskSpec, for_replay: bool) -> Result<Self::Env, EnvError>;
    /// Has the environment claim every write from the task's queen before it runs (an
    /// environment that cannot write, a simulation's, ignores it).
    fn set_write_claims(_env: &mut Self::Env, _claims: crate::claims::WriteClaims) {}
    /// How goals are embedded for the memory: the same reader the environments' policy
    /// uses (hashed n-grams unless a sentence model is loaded).
    fn goal_embedder(&self) -> GoalEmbedder {
        GoalEmbedder::Ngram
    }
    /// What the environment saw at the step from `before` to `after`: URL, title, validator
    /// verdict, healed locator.
    fn step_info(env: &Self::Env, before: Fingerprint, after: Fingerprint) -> PageInfo;
    /// Why the environment's policy chose `action` where it led to `after`, when it says.
    fn why(
        _env: &Self::Env,
        _action: &Action,
        _after: Fingerprint,
    ) -> Option<forager_protocol::result::StepWhy> {
        None
    }
    /// What the environment's network did (origins reached, requests blocked).
    fn network(env: &Self::Env) -> NetworkSummary;
    /// What the environment counted since it was created: restores served from a kept page
    /// and replayed from the start, pages read and the time reading them (the other fields
    /// are the search's and stay 0).
    fn counters(env: &Self::Env) -> BranchCounters;
    /// What the model tier was asked and spent in the environment since the last call
    /// (nothing where no model is asked).
    fn take_model_usage(_env: &Self::Env) -> forager_protocol::llm::ModelUsage {
        forager_protocol::llm::ModelUsage::default()
    }
    /// The current page's answer in the task's answer schema, as JSON text (nothing where no
    /// model is asked).
    fn extract_answer(_env: &mut Self::Env) -> impl Future<Output = Option<String>> + Send {
        async { None }
    }
    /// A screenshot (JPEG) of the environment's current page, when it has pixels to show.
    fn screenshot(env: &Self::Env) -> impl Future<Output = Option<Vec<u8>>> + Send;
    /// What the page looked like right after a step that wrote (or came after a write) on a
    /// site whose writes must not be repeated, captured when the step ran: the evidence a
    /// verification attests the step by. `None` when nothing was captured for that state.
    fn evidence(env: &Self::Env, after: Fingerprint) -> Option<WriteEvidence>;
    /// Loads the task's after-check page in the environment's current context (whose session
    /// the reproduced steps established) and says whether it shows the text.
    fn after_check(
        env: &mut Self::Env,
        check: &AfterCheck,
    ) -> impl Future<Output = Result<bool, EnvError>> + Send;
    /// Restores the site before a replay that executes writes: runs the task's reset command,
    /// when it has one (an error when this node may not run it, or it fails).
    fn reset_site(env: &mut Self::Env) -> impl Future<Output = Result<(), EnvError>> + Send;
}

/// A page after a write, as the step that wrote left it.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteEvidence {
    /// SHA-256 of the page as read (URL and accessibility snapshot).
    pub page_digest: Digest32,
    /// Its screenshot (JPEG), when it has pixels.
    pub screenshot: Option<Vec<u8>>,
}

/// Screenshot bytes of write evidence a progress answer carries at most.
const EVIDENCE_BUDGET: usize = 384 * 1024;

/// Screenshot bytes a replay answer carries at most (they travel in one frame).
const SCREENSHOT_BUDGET: usize = 640 * 1024;

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

/// An environment restored at a branch's root first, so that the search below it sees the
/// branch root as its start.
struct Branch<E> {
    inner: E,
    prefix: Vec<(Action, Fingerprint)>,
}

impl<E: Environment<Action = Action>> Environment for Branch<E> {
    type Action = Action;

    async fn observe(&mut self) -> Result<StateInfo, EnvError> {
        self.inner.observe().await
    }

    async fn candidates(&mut self) -> Result<Vec<crate::Candidate<Action>>, EnvError> {
        self.inner.candidates().await
    }

    async fn act(&mut self, action: &Action) -> Result<Step, EnvError> {
        self.inner.act(action).await
    }

    async fn restore(&mut self, prefix: &[(Action, Fingerprint)]) -> Result<Step, EnvError> {
        let mut full = self.prefix.clone();
        full.extend_from_slice(prefix);
        // The search numbers its steps from the branch's root: a divergence is told in its
        // numbers (before, the node pruned was the branch prefix's length deeper than the one
        // that diverged, and that one stayed open to fail again).
        self.inner
            .restore(&full)
            .await
            .map_err(|error| match error {
                EnvError::Diverged {
                    step,
                    expected,
                    found,
                } => match step.checked_sub(self.prefix.len()) {
                    Some(step) => EnvError::Diverged {
                        step,
                        expected,
                        found,
                    },
                    None => EnvError::RootDiverged { expected, found },
                },
                other => other,
            })
    }

    async fn recover(&mut self) -> Result<(), EnvError> {
        self.inner.recover().await
    }

    fn describe(&self, action: &Action) -> String {
        self.inner.describe(action)
    }
}

struct BranchState<E: Environment<Action = Action>> {
    env: Branch<E>,
    search: Option<Search<Action>>,
    /// Which tree `search` is, in reports (a new one when the search starts over).
    tree: u64,
}

/// Branch searches kept between assignments, with when each was last used (a counter). An
/// assignment checks its branch out (the search owns it, no lock is held while it runs) and
/// back in when it is done; a branch checked out is not in `kept`, so it is never dropped.
struct Branches<E: Environment<Action = Action>> {
    kept: HashMap<(TaskId, BranchId), (BranchState<E>, u64)>,
    out: HashSet<(TaskId, BranchId)>,
    clock: u64,
    /// Tasks the queen said have ended (the latest [`MAX_RELEASED`]): a branch of theirs that
    /// is checked in is dropped, not kept.
    released: std::collections::VecDeque<TaskId>,
    /// How many are kept, for the operator's metrics.
    gauge: prometheus_client::metrics::gauge::Gauge,
}

/// Ended tasks remembered, for the assignments still running when their task ended.
const MAX_RELEASED: usize = 256;

/// What checking a branch out found.
enum Checkout<E: Environment<Action = Action>> {
    /// The kept search, now owned by the caller.
    Kept(Box<BranchState<E>>),
    /// Not searched here before: the caller starts it.
    New,
    /// Another assignment of this node is searching it (the queen gives a branch one holder,
    /// so this is a confused or hostile queen).
    Busy,
}

impl<E: Environment<Action = Action>> Branches<E> {
    fn new(gauge: prometheus_client::metrics::gauge::Gauge) -> Self {
        Branches {
            kept: HashMap::new(),
            out: HashSet::new(),
            clock: 0,
            released: std::collections::VecDeque::new(),
            gauge,
        }
    }

    fn count(&self) {
        self.gauge
            .set(i64::try_from(self.kept.len()).unwrap_or(i64::MAX));
    }

    /// Forgets an ended task: returns its kept branches, for the caller to drop outside the
    /// lock; its branches still checked out are dropped when they come back.
    fn release(&mut self, task: TaskId) -> Vec<BranchState<E>> {
        if !self.released.contains(&task) {
            if self.released.len() == MAX_RELEASED {
                self.released.pop_front();
            }
            self.released.push_back(task);
        }
        let keys: Vec<(TaskId, BranchId)> = self
            .kept
            .keys()
            .filter(|(t, _)| *t == task)
            .copied()
            .collect();
        let dropped = keys
            .into_iter()
            .filter_map(|key| self.kept.remove(&key).map(|(state, _)| state))
            .collect();
        self.count();
        dropped
    }

    fn check_out(&mut self, key: (TaskId, BranchId)) -> Checkout<E> {
        if !self.out.insert(key) {
            return Checkout::Busy;
        }
        let found = self.kept.remove(&key);
        self.count();
        match found {
            Some((state, _)) => Checkout::Kept(Box::new(state)),
            None => Checkout::New,
        }
    }

    /// Puts a branch back and returns the least recently used ones beyond `max`, for the
    /// caller to drop outside the lock (their environments close with them).
    fn check_in(
        &mut self,
        key: (TaskId, BranchId),
        state: Option<BranchState<E>>,
        max: usize,
    ) -> Vec<BranchState<E>> {
        self.out.remove(&key);
        self.clock += 1;
        let mut dropped = Vec::new();
        if let Some(state) = state {
            if self.released.contains(&key.0) {
                dropped.push(state);
            } else {
                self.kept.insert(key, (state, self.clock));
            }
        }
        while self.kept.len() > max {
            let Some(oldest) = self
                .kept
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| *key)
            else {
                break;
            };
            if let Some((state, _)) = self.kept.remove(&oldest) {
                dropped.push(state);
            }
        }
        self.count();
        dropped
    }
}

/// Signs and gossips rollouts; inserts them into the local replica too.
struct Publisher {
    identity: NodeIdentity,
    network: Network,
    replica: Arc<Replica>,
    sequence: AtomicU64,
}

impl Publisher {
    async fn publish(&self, announcement: Announcement) {
        let sequence = self.sequence.fetch_add(1, Ordering::SeqCst);
        let announcement = Announcement {
            sequence,
            ..announcement
        };
        let Ok(vector) =
            forager_protocol::trajectory::TrajectoryVector::try_from(announcement.vector.clone())
        else {
            return;
        };
        let Ok(signed) = Signed::new(
            self.identity.signing_key(),
            Domain::Announcement,
            announcement,
        ) else {
            return;
        };
        if let Err(error) = self.replica.insert(signed.clone(), vector) {
            tracing::warn!(%error, "cannot store an own announcement");
        }
        let Ok(frame) = Message::Announce(signed).encode() else {
            return;
        };
        if let Err(error) = self.network.publish(frame).await {
            // No peer subscribed yet is normal at the start and in one-node clusters.
            tracing::debug!(%error, "gossip not sent");
        }
    }
}

/// Collects finished rollouts of a branch search for gossip.
struct RolloutObserver {
    task: TaskId,
    family: String,
    /// The goal's vector and its embedder; `None`: nothing is gossiped (the goal could not
    /// be embedded).
    goal: Option<(TrajectoryVector, forager_protocol::wire::EmbedderId)>,
    /// The branch prefix's steps, from the start URL.
    prefix: Vec<TraceStep>,
    rollouts: mpsc::Sender<Announcement>,
}

impl SearchObserver<Action> for RolloutObserver {
    fn on_event(&mut self, tree: &Search<Action>, event: &SearchEvent) {
        let SearchEvent::NodeAdded(id) = event else {
            return;
        };
        let nodes: Vec<_> = tree.nodes().collect();
        let Some(node) = nodes.get(*id as usize) else {
            return;
        };
        if !matches!(node.status, NodeStatus::Open | NodeStatus::Success) {
            return;
        }
        let Some((vector, embedder)) = &self.goal else {
            return;
        };
        // The path from the start URL: the branch prefix, then the tree path, each step the
        // page acted on (the parent's state) and the action's key.
        let mut steps = Vec::new();
        let mut cursor = Some(node.id);
        while let Some(c) = cursor {
            let n = &nodes[c as usize];
            if let (Some(_), Some(parent)) = (n.action, n.parent) {
                let at = &nodes[parent as usize];
                steps.push(TraceStep {
                    location: at.location,
                    page_family: at.page_family,
                    key: n.key,
                });
            }
            cursor = n.parent;
        }
        steps.reverse();
        let mut trace = self.prefix.clone();
        trace.extend(steps);
        let length = trace.len() as u32;
        let success = *node.status == NodeStatus::Success;
        let announcement = Announcement {
            task: self.task,
            family: self.family.clone(),
            embedder: embedder.clone(),
            vector: vector.as_slice().to_vec(),
            trace: crate::index::bounded_trace(trace),
            reward: if success { 1.0 } else { node.mean_value as f32 },
            success,
            cost: Cost::default(),
            steps: length,
            sequence: 0,
        };
        // Gossip is best effort: a full queue drops the rollout rather than slowing the search.
        let _ = self.rollouts.try_send(announcement);
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

async fn expand<F: EnvFactory>(
    factory: &F,
    identity: &NodeIdentity,
    request: ExpandRequest,
    memory: &TaskMemory,
) -> Message {
    let task_id = match TaskId::of(&request.task) {
        Ok(id) => id,
        Err(e) => return Refusal::new(RefusalReason::InvalidTask, e.to_string()).into(),
    };
    if let Err(e) = request.task.validate() {
        return Refusal::new(RefusalReason::InvalidTask, e.to_string()).into();
    }
    if let Err(detail) = check_capsule(&request.task) {
        return Refusal::new(RefusalReason::InvalidTask, detail).into();
    }
    let mut env = match factory.create(&request.task, false) {
        Ok(env) => env,
        Err(e) => {
            return Refusal::new(
                RefusalReason::NoEnvironment,
                format!("cannot create an environment: {e}"),
            )
            .into();
        }
    };
    let result = async {
        env.restore(&[]).await?;
        let state = env.observe().await?;
        let candidates = env.candidates().await?;
        Ok::<_, EnvError>((state, candidates))
    }
    .await;
    match result {
        Ok((state, mut candidates)) => {
            // The start page's actions the memory votes for come first at the queen's root.
            // Traces name the start page by the task's start URL (the node that searched a
            // branch never saw the page the start URL redirected to): both are this page.
            let mut votes = memory.votes(&state);
            let by_start_url = StateInfo {
                location: crate::policy::location_of(&request.task.start_url),
                ..state
            };
            for (key, vote) in memory.votes(&by_start_url) {
                let kept = votes.entry(key).or_default();
                *kept = kept.max(vote);
            }
            let votes = raise_priors(&mut candidates, &votes);
            if !votes.is_empty() {
                tracing::info!(votes = votes.len(), "the memory votes at the start page");
            }
            let report = ExpandReport {
                model: F::take_model_usage(&env),
                task: task_id,
                root: state.fingerprint,
                success: state.success,
                value_hint: state.value_hint,
                session_expired: state.session_expired,
                candidates: candidates
                    .into_iter()
                    // Refused outright (it would end the session): never a branch.
                    .filter(|c| {
                        let keep = c.refused.is_none();
                        if !keep {
                            tracing::info!(action = %c.action.label(), "refused at the start page: it would end the session");
                        }
                        keep
                    })
                    .map(|c| WireCandidate {
                        action: c.action,
                        prior: c.prior,
                        risk: c.risk,
                        key: c.key,
                        target: c.target,
                    })
                    .collect(),
            };
            match sign(identity, report) {
                Ok(signed) => Message::Expanded(signed),
                Err(refusal) => refusal.into(),
            }
        }
        Err(e) => Refusal::new(RefusalReason::StartPage, format!("start page: {e}")).into(),
    }
}

/// What a branch search gets from the memory: the votes, and the goal's vector (with its
/// embedder) for the rollouts it gossips.
struct Remembered {
    memory: Arc<dyn ReplayMemory + Send + Sync>,
    goal: Option<(TrajectoryVector, forager_protocol::wire::EmbedderId)>,
}

/// Whether the task's session capsule may be mounted here: not expired, not revoked on this
/// machine (read now, so a capsule revoked while the node runs stops the next request).
fn check_capsule(task: &TaskSpec) -> Result<(), String> {
    let Some(capsule) = &task.capsule else {
        return Ok(());
    };
    let now = crate::consent::unix_now();
    if now >= capsule.expires_at {
        return Err(format!(
            "capsule {}: expired at {} (now {now})",
            capsule.id.to_hex(),
            capsule.expires_at
        ));
    }
    let Some(revocations) = revocations() else {
        return Err("capsule: this machine's revocations cannot be read".into());
    };
    let Some(signer) = capsule.signer_key() else {
        return Err("capsule: its record names no valid signer".into());
    };
    if let Some(at) = forager_protocol::consent::revoked_at(&signer, &capsule.id, &revocations) {
        return Err(format!("capsule {}: revoked at {at}", capsule.id.to_hex()));
    }
    Ok(())
}

/// The revocations this machine knows of, read now (a consent revoked while the node runs
/// stops the next search); `None` when they cannot be read (then no consent is trusted).
fn revocations() -> Option<Vec<forager_protocol::consent::SignedRevocation>> {
    match crate::consent::RevocationStore::for_user().map(|s| s.load()) {
        Some(Ok(revocations)) => Some(revocations),
        Some(Err(error)) => {
            tracing::warn!(%error, "revocations unreadable; consents ignored");
            None
        }
        None => Some(Vec::new()),
    }
}

/// The first step of the branch's prefix above the ceiling that no consent covers (with the
/// revocations unreadable, no consent counts).
/// A branch prefix's step `at` sent more than its class allows and the network gate refused
/// it: pruned as the tree prunes such a child (`risk_underestimated`), the branch exhausted,
/// and, above the ceiling, the step offered for approval at the class of what it sent.
fn refused_at_the_network(
    report: &mut ProgressReport,
    task: &TaskSpec,
    prefix: &[Action],
    at: usize,
    class: forager_protocol::RiskClass,
    request: &str,
) {
    report.error = Some(format!(
        "the branch's step {} ({}) tried to send {request}: refused at the network",
        at + 1,
        prefix[at].label()
    ));
    report.counters.pruned.insert(
        PruneReason::RiskUnderestimated { class }.kind().to_owned(),
        1,
    );
    if class > task.risk_ceiling {
        let actions = prefix[..=at].to_vec();
        let mut risks = crate::consent::prefix_risks(task, &actions);
        if let Some(last) = risks.last_mut() {
            *last = class;
        }
        report
            .approvals
            .push(FoundPath::new(actions, Vec::new(), risks));
    }
    report.exhausted = true;
}

fn unconsented_prefix(task: &TaskSpec, assignment: &BranchAssignment) -> Option<usize> {
    let now = crate::consent::unix_now();
    let id = &assignment.task_id;
    let prefix = &assignment.prefix;
    // A start page's branch (one action) was classified with its page by the node that
    // opened the page; a longer prefix is a consent's resumption, checked here.
    if prefix.len() <= 1 {
        return None;
    }
    if task.consents.is_empty() {
        return crate::consent::unconsented_in_prefix(task, id, prefix, now, &[]);
    }
    match revocations() {
        Some(revocations) => {
            crate::consent::unconsented_in_prefix(task, id, prefix, now, &revocations)
        }
        None => {
            let mut bare = task.clone();
            bare.consents.clear();
            crate::consent::unconsented_in_prefix(&bare, id, prefix, now, &[])
        }
    }
}

/// What the task's consents permit below this branch, checked against the revocations this
/// machine knows of, now.
fn consented_for(task: &TaskSpec, assignment: &BranchAssignment) -> Vec<crate::search::Consented> {
    if task.consents.is_empty() {
        return Vec::new();
    }
    let Some(revocations) = revocations() else {
        return Vec::new();
    };
    crate::consent::consented_below(
        task,
        &assignment.task_id,
        &assignment.prefix,
        crate::consent::unix_now(),
        &revocations,
    )
}

async fn search_branch<F: EnvFactory>(
    factory: &F,
    identity: &NodeIdentity,
    branches: &std::sync::Mutex<Branches<F::Env>>,
    assignment: BranchAssignment,
    remembered: Remembered,
    rollouts: mpsc::Sender<Announcement>,
    claims: crate::claims::WriteClaims,
) -> Message {
    if let Err(detail) = check_capsule(&assignment.task) {
        return Refusal::new(RefusalReason::InvalidTask, detail).into();
    }
    let key = (assignment.task_id, assignment.branch);
    let checked_out = match branches.lock() {
        Ok(mut map) => map.check_out(key),
        Err(poisoned) => poisoned.into_inner().check_out(key),
    };
    let mut state = match checked_out {
        Checkout::Kept(state) => *state,
        Checkout::Busy => {
            return Refusal::new(
                RefusalReason::Busy,
                format!("branch {} is being searched here", assignment.branch.0),
            )
            .into();
        }
        Checkout::New => match factory.create(&assignment.task, false) {
            Ok(env) => BranchState {
                env: Branch {
                    inner: env,
                    prefix: Vec::new(),
                },
                search: None,
                tree: 0,
            },
            Err(e) => {
                check_in(branches, key, None);
                return Refusal::new(
                    RefusalReason::NoEnvironment,
                    format!("cannot create an environment: {e}"),
                )
                .into();
            }
        },
    };
    // Should the search panic, the branch is checked in empty (searched afresh next time).
    let guard = CheckedOut {
        branches,
        key,
        returned: false,
    };
    F::set_write_claims(&mut state.env.inner, claims);
    let before = F::counters(&state.env.inner);
    let mut report = run_branch(&mut state, &assignment, remembered, rollouts).await;
    let mut screenshots = Vec::new();
    for path in &mut report.successes {
        path.seen = seen_along::<F>(&state.env.inner, path, &mut screenshots);
    }
    report.network = F::network(&state.env.inner);
    let after = F::counters(&state.env.inner);
    let counters = &mut report.counters;
    counters.cache_hits = after.cache_hits.saturating_sub(before.cache_hits);
    counters.cache_misses = after.cache_misses.saturating_sub(before.cache_misses);
    counters.pages_read = after.pages_read.saturating_sub(before.pages_read);
    counters.reading_us = after.reading_us.saturating_sub(before.reading_us);
    // Taken, not diffed: what expansions and replays in between asked rides along here.
    counters.model = F::take_model_usage(&state.env.inner);
    guard.check_in(state);
    match sign(identity, report) {
        Ok(report) => Message::Progress(Box::new(ProgressAnswer {
            report,
            screenshots,
        })),
        Err(refusal) => refusal.into(),
    }
}

/// What the finder saw along a success path: each page's kind (what a reproduction compares)
/// and, past a write, the evidence captured when the step ran; screenshots go to `shots`
/// (within [`EVIDENCE_BUDGET`]), named by their digest.
fn seen_along<F: EnvFactory>(
    env: &F::Env,
    path: &FoundPath,
    shots: &mut Vec<Vec<u8>>,
) -> Vec<StepSeen> {
    let mut before = Fingerprint([0; 16]);
    let mut seen = Vec::with_capacity(path.fingerprints.len());
    for (i, &after) in path.fingerprints.iter().enumerate() {
        let page = F::step_info(env, before, after);
        let why = path
            .actions
            .get(i)
            .and_then(|action| F::why(env, action, after));
        let evidence = F::evidence(env, after);
        let used: usize = shots.iter().map(Vec::len).sum();
        let screenshot = evidence
            .as_ref()
            .and_then(|e| e.screenshot.as_ref())
            .filter(|bytes| used + bytes.len() <= EVIDENCE_BUDGET)
            .map(|bytes| {
                shots.push(bytes.clone());
                Digest32::of(bytes)
            });
        seen.push(StepSeen {
            family: page.family,
            heading: page.heading.map(|h| bounded(&h)),
            url: bounded(&page.url),
            title: bounded(&page.title),
            page_digest: evidence.map(|e| e.page_digest),
            screenshot,
            why,
        });
        before = after;
    }
    seen
}

/// Whether step `i` of a reproduction reached another kind of page than the finder's, and
/// what differed. Pages are compared by family where the finder said it (live regions,
/// timestamps and tokens change the fingerprint, not the family), else by fingerprint.
fn differs(path: &FoundPath, i: usize, reached: Fingerprint, page: &PageInfo) -> Option<String> {
    let step = i + 1;
    match (path.seen.get(i), page.family) {
        (
            Some(
                seen @ StepSeen {
                    family: Some(family),
                    ..
                },
            ),
            Some(found),
        ) => {
            if *family == found {
                return None;
            }
            let own_path = url_path(&page.url);
            let what = if seen.heading != page.heading {
                format!(
                    "heading {:?} vs {:?}",
                    seen.heading.as_deref().unwrap_or(""),
                    page.heading.as_deref().unwrap_or("")
                )
            } else if url_path(&seen.url) != own_path {
                format!("path {:?} vs {:?}", url_path(&seen.url), own_path)
            } else {
                "headings or forms".to_owned()
            };
            Some(format!("family differs at step {step}: {what}"))
        }
        _ => (path.fingerprints.get(i) != Some(&reached))
            .then(|| format!("fingerprint differs at step {step}")),
    }
}

/// A text cut to [`MAX_SEEN_TEXT`] bytes at a character boundary.
fn bounded(text: &str) -> String {
    let mut end = text.len().min(MAX_SEEN_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The path of a URL (`/admin/auth/group/`), or the text itself when it does not parse.
fn url_path(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.path().to_owned())
}

/// Branch searches kept between assignments (each holds an environment: browser contexts).
const MAX_BRANCHES: usize = 8;

/// A branch checked out by a running assignment; dropped without [`CheckedOut::check_in`]
/// (a panic), it frees the branch without its search.
struct CheckedOut<'a, E: Environment<Action = Action>> {
    branches: &'a std::sync::Mutex<Branches<E>>,
    key: (TaskId, BranchId),
    returned: bool,
}

impl<E: Environment<Action = Action>> CheckedOut<'_, E> {
    fn check_in(mut self, state: BranchState<E>) {
        self.returned = true;
        check_in(self.branches, self.key, Some(state));
    }
}

impl<E: Environment<Action = Action>> Drop for CheckedOut<'_, E> {
    fn drop(&mut self) {
        if !self.returned {
            check_in(self.branches, self.key, None);
        }
    }
}

/// Checks a branch back in; the searches it evicts close here, outside the lock.
fn check_in<E: Environment<Action = Action>>(
    branches: &std::sync::Mutex<Branches<E>>,
    key: (TaskId, BranchId),
    state: Option<BranchState<E>>,
) {
    let dropped = match branches.lock() {
        Ok(mut map) => map.check_in(key, state, MAX_BRANCHES),
        Err(poisoned) => poisoned.into_inner().check_in(key, state, MAX_BRANCHES),
    };
    drop(dropped);
}

async fn run_branch<E: Environment<Action = Action>>(
    state: &mut BranchState<E>,
    assignment: &BranchAssignment,
    remembered: Remembered,
    rollouts: mpsc::Sender<Announcement>,
) -> ProgressReport {
    let Remembered { memory, goal } = remembered;
    let mut report = empty_report(assignment);
    let deadline = Duration::from_millis(assignment.deadline_ms);
    let search = match state.search.take() {
        Some(mut search) => {
            search.extend(assignment.actions);
            search.set_deadline(Some(deadline));
            search
        }
        None => match open_branch(state, assignment, memory, &mut report).await {
            Some(search) => search,
            None => return report,
        },
    };
    explore_branch(state, assignment, search, goal, rollouts, report).await
}

/// A report that says nothing yet.
fn empty_report(assignment: &BranchAssignment) -> ProgressReport {
    ProgressReport {
        task: assignment.task_id,
        branch: assignment.branch,
        prefix_fingerprints: Vec::new(),
        visits: 0,
        value_sum: 0.0,
        best_value: 0.0,
        actions: 0,
        replayed: 0,
        cost: Cost::default(),
        successes: Vec::new(),
        approvals: Vec::new(),
        exhausted: false,
        error: None,
        network: NetworkSummary::default(),
        counters: Default::default(),
        locations: Vec::new(),
        states: Vec::new(),
        tree: TreeSnapshot::default(),
        session_ended: false,
    }
}

/// How a branch root was reached: the prefix with its fingerprints, or why not.
enum Reached {
    /// At the branch root.
    Root(Vec<(Action, Fingerprint)>),
    /// A login page where the session held: `true` when the start page itself asks (the
    /// server ended the mounted session).
    LoggedOut(bool),
    /// The branch's action changed nothing, or ended the task.
    Nothing,
}

/// Reaches the branch root (replays what is known, executes the rest) and starts a search
/// there; `None` with the report saying why when it cannot.
async fn open_branch<E: Environment<Action = Action>>(
    state: &mut BranchState<E>,
    assignment: &BranchAssignment,
    memory: Arc<dyn ReplayMemory + Send + Sync>,
    report: &mut ProgressReport,
) -> Option<Search<Action>> {
    let task = &assignment.task;
    if let Some(i) = unconsented_prefix(task, assignment) {
        report.error = Some(format!(
            "the branch's step {} ({}) is above the task's ceiling and no consent covers it",
            i + 1,
            assignment.prefix[i].label()
        ));
        report.exhausted = true;
        return None;
    }
    let known: Vec<(Action, Fingerprint)> = assignment
        .prefix
        .iter()
        .cloned()
        .zip(assignment.expected.iter().copied())
        .collect();
    let reached = reach_branch_root(&mut state.env.inner, assignment, &known, report).await;
    let prefix = match reached {
        Ok(Reached::Root(prefix)) => prefix,
        Ok(Reached::LoggedOut(ended)) => {
            report.error = Some(
                "the branch lands on a login page: the mounted session no longer holds".into(),
            );
            report.session_ended = ended && task.session.is_some();
            report
                .counters
                .pruned
                .insert(PruneReason::SessionExpired.kind().to_owned(), 1);
            report.exhausted = true;
            return None;
        }
        Ok(Reached::Nothing) => {
            report.error = Some("the branch's action changed nothing, or ended the task".into());
            report.exhausted = true;
            return None;
        }
        Err(EnvError::RiskUnderestimated { class, request }) => {
            let at = (known.len() + report.actions as usize)
                .min(assignment.prefix.len().saturating_sub(1));
            refused_at_the_network(report, task, &assignment.prefix, at, class, &request);
            return None;
        }
        Err(e) => {
            report.error = Some(format!("cannot reach the branch: {e}"));
            report.exhausted = !matches!(e, EnvError::Crashed(_) | EnvError::Timeout { .. });
            return None;
        }
    };
    state.env.prefix = prefix;
    let deadline = Duration::from_millis(assignment.deadline_ms);
    let config = SearchConfig {
        action_budget: assignment.actions.saturating_sub(report.actions).max(1),
        max_depth: task
            .budget
            .max_depth
            .saturating_sub(assignment.prefix.len() as u32)
            .max(1),
        deadline: Some(deadline),
        consented: consented_for(task, assignment),
        ..SearchConfig::for_task(task)
    };
    // The env is at the branch root: its restore(&[]) is a no-op there.
    match search::start(&mut state.env, config, Some(memory)).await {
        Ok(search) => {
            state.tree = now_nanos();
            Some(search)
        }
        Err(e) => {
            report.error = Some(e.to_string());
            None
        }
    }
}

/// Replays the `known` part of the branch's prefix and executes the rest, counting what it
/// executes in `report`.
async fn reach_branch_root<E: Environment<Action = Action>>(
    env: &mut E,
    assignment: &BranchAssignment,
    known: &[(Action, Fingerprint)],
    report: &mut ProgressReport,
) -> Result<Reached, EnvError> {
    let mut here = env.restore(known).await?.state;
    if here.session_expired && !here.success {
        // Where the session held before, a login page: the server ended it.
        return Ok(Reached::LoggedOut(true));
    }
    let mut prefix = known.to_vec();
    for action in &assignment.prefix[known.len()..] {
        if assignment.workflow && here.success {
            // A remembered workflow's success came before its last steps.
            break;
        }
        let step = match env.act(action).await {
            Ok(step) => step,
            // A remembered workflow's step this page lacks: the search goes on from here.
            Err(
                e @ (EnvError::TargetMissing(_)
                | EnvError::TargetHidden(_)
                | EnvError::TargetCovered(_)
                | EnvError::NavigationBlocked(_)),
            ) if assignment.workflow => {
                tracing::info!(step = prefix.len() + 1, error = %e, "the remembered workflow diverges");
                break;
            }
            Err(e) => return Err(e),
        };
        report.actions += 1;
        let stayed = step.state.fingerprint == here.fingerprint
            && !step.state.success
            && !step.state.hidden_change;
        if stayed || step.state.dead_end {
            if !assignment.workflow {
                // As a node's tree prunes such a child: nothing below it is new.
                return Ok(Reached::Nothing);
            }
            tracing::info!(
                step = prefix.len() + 1,
                "the remembered workflow's step leads nowhere"
            );
            if step.state.dead_end {
                // Back to the last page the workflow reached.
                env.restore(&prefix).await?;
            }
            break;
        }
        if step.state.session_expired && !step.state.success {
            return Ok(Reached::LoggedOut(false));
        }
        prefix.push((action.clone(), step.state.fingerprint));
        here = step.state;
    }
    Ok(Reached::Root(prefix))
}

/// Runs the branch's search within its assignment and reports what it found.
async fn explore_branch<E: Environment<Action = Action>>(
    state: &mut BranchState<E>,
    assignment: &BranchAssignment,
    search: Search<Action>,
    goal: Option<(TrajectoryVector, forager_protocol::wire::EmbedderId)>,
    rollouts: mpsc::Sender<Announcement>,
    mut report: ProgressReport,
) -> ProgressReport {
    let task = &assignment.task;
    let mut search = search;
    // Depths on the wire count from the start URL; this tree's from the branch root.
    let below_root = state.env.prefix.len() as u32;
    // Another branch owns this branch's page (two first actions that lead to the same state,
    // as typing with and without Enter often do): everything below it is searched there.
    let root_succeeded = search
        .nodes()
        .next()
        .is_some_and(|root| matches!(root.status, NodeStatus::Success));
    if let Some((_, root)) = state.env.prefix.last()
        && !root_succeeded
        && assignment
            .known_states
            .iter()
            .any(|k| k.fingerprint == *root && k.depth <= below_root)
    {
        report.error = Some("another branch reaches this branch's page".into());
        report.exhausted = true;
        state.search = Some(search);
        return report;
    }
    search.learn_locations(
        assignment
            .known_locations
            .iter()
            .map(|k| (k.location, k.depth.saturating_sub(below_root))),
    );
    search.learn_states(
        assignment
            .known_states
            .iter()
            .map(|k| (k.fingerprint, k.depth.saturating_sub(below_root))),
    );
    report.prefix_fingerprints = state.env.prefix.iter().map(|(_, f)| *f).collect();
    let (visits_before, value_before) = root_stats(&search);
    // The prefix's pages are not seen here (the start page was opened by the expanding
    // node): the first is the start URL's location; deeper ones are unknown (0, matching
    // nothing).
    let start = crate::policy::location_of(&task.start_url);
    let mut observer = RolloutObserver {
        task: assignment.task_id,
        family: task.family(),
        goal,
        prefix: state
            .env
            .prefix
            .iter()
            .enumerate()
            .map(|(i, (action, _))| TraceStep {
                location: if i == 0 { start } else { 0 },
                page_family: 0,
                key: action_key(&action.label()),
            })
            .collect(),
        rollouts,
    };
    let actions_before = search.metrics().actions;
    let replayed_before = search.metrics().replayed_actions;
    let nodes_before = search.metrics().nodes;
    let remembered_before = search.metrics().remembered;
    let pruned_before = search.prunes().clone();
    let cost_before = search.metrics().cost;
    let (outcome, search) =
        search::run_from(std::slice::from_mut(&mut state.env), search, &mut observer).await;
    let (visits_after, value_after) = root_stats(&search);
    (report.locations, report.states) = newly_known(&search, assignment, &state.env.prefix);
    report.visits = visits_after.saturating_sub(visits_before);
    report.value_sum = value_after - value_before;
    report.best_value = search
        .nodes()
        .skip(1)
        .filter(|n| !matches!(n.status, NodeStatus::Pruned(_)))
        .map(|n| {
            if *n.status == NodeStatus::Success {
                1.0
            } else {
                n.mean_value
            }
        })
        .fold(0.0, f64::max);
    report.actions += outcome.metrics.actions - actions_before;
    report.replayed = outcome.metrics.replayed_actions - replayed_before;
    report.counters.nodes = outcome.metrics.nodes.saturating_sub(nodes_before);
    report.counters.remembered = outcome.metrics.remembered.saturating_sub(remembered_before);
    report.counters.pruned = outcome
        .prunes
        .iter()
        .filter_map(|(&reason, &count)| {
            let new = count.saturating_sub(pruned_before.get(reason).copied().unwrap_or(0));
            (new > 0).then(|| (reason.to_owned(), new))
        })
        .collect();
    report.cost = Cost {
        browser_ms: outcome.metrics.cost.browser_ms - cost_before.browser_ms,
        tokens: outcome.metrics.cost.tokens - cost_before.tokens,
    };
    (report.successes, report.approvals) = paths_found(task, &state.env.prefix, &search, &outcome);
    report.exhausted = matches!(
        outcome.finish,
        Finish::Failed(
            FailureReason::SearchExhausted
                | FailureReason::ApprovalRequired
                | FailureReason::NoProgress
                | FailureReason::Nondeterministic
        )
    );
    report.tree = tree_snapshot(&search, state.tree);
    state.search = Some(search);
    report
}

/// The locations and page states this branch's search reached first, or at a shallower depth
/// than the assignment knew them (depths from the start URL), its own page included.
fn newly_known(
    search: &Search<Action>,
    assignment: &BranchAssignment,
    prefix: &[(Action, Fingerprint)],
) -> (Vec<KnownLocation>, Vec<KnownState>) {
    let below_root = prefix.len() as u32;
    let given: std::collections::HashMap<u64, u32> = assignment
        .known_locations
        .iter()
        .map(|k| (k.location, k.depth))
        .collect();
    let locations: Vec<KnownLocation> = search
        .locations()
        .map(|(location, depth)| KnownLocation {
            location,
            depth: depth + below_root,
        })
        .filter(|k| given.get(&k.location).is_none_or(|&d| k.depth < d))
        .collect();
    let given: std::collections::HashMap<Fingerprint, u32> = assignment
        .known_states
        .iter()
        .map(|k| (k.fingerprint, k.depth))
        .collect();
    let mut states: Vec<KnownState> = search
        .states()
        .map(|(fingerprint, depth)| KnownState {
            fingerprint,
            depth: depth + below_root,
        })
        .filter(|k| given.get(&k.fingerprint).is_none_or(|&d| k.depth < d))
        .collect();
    // The branch's own page too (the tree lists what is below it), so that another branch
    // reaching the same page can leave it to this one.
    if let Some((_, root)) = prefix.last()
        && given.get(root).is_none_or(|&d| below_root < d)
    {
        states.push(KnownState {
            fingerprint: *root,
            depth: below_root,
        });
    }
    // Shallowest first (the queen keeps as many as the actions spent), in a stable order.
    states.sort_by_key(|k| (k.depth, k.fingerprint));
    (locations, states)
}

/// The successes and the actions awaiting approval this branch's search found, as paths
/// from the start URL.
fn paths_found(
    task: &TaskSpec,
    prefix: &[(Action, Fingerprint)],
    search: &Search<Action>,
    outcome: &crate::search::SearchReport<Action>,
) -> (Vec<FoundPath>, Vec<FoundPath>) {
    let (mut successes, mut approvals) = (Vec::new(), Vec::new());
    let full = |steps: Vec<(Action, Fingerprint, forager_protocol::RiskClass)>| {
        let mut path = FoundPath::new(
            prefix.iter().map(|(a, _)| a.clone()).collect(),
            prefix.iter().map(|(_, f)| *f).collect(),
            crate::consent::prefix_risks(
                task,
                &prefix.iter().map(|(a, _)| a.clone()).collect::<Vec<_>>(),
            ),
        );
        for (action, fingerprint, risk) in steps {
            path.actions.push(action);
            path.fingerprints.push(fingerprint);
            path.risks.push(risk);
        }
        path
    };
    if let Some(best) = &outcome.best {
        successes.push(full(
            best.iter()
                .map(|s| (s.action.clone(), s.fingerprint, s.risk))
                .collect(),
        ));
    } else if search
        .nodes()
        .next()
        .is_some_and(|root| *root.status == NodeStatus::Success)
    {
        successes.push(full(Vec::new()));
    }
    for approval in &outcome.approvals {
        let mut path = full(Vec::new());
        path.actions.extend(approval.prefix.iter().cloned());
        path.actions.push(approval.action.clone());
        path.risks.push(approval.class);
        approvals.push(path);
    }
    (successes, approvals)
}

/// The tree as a report carries it: all of it when it is small, else the paths to successes
/// and then the most visited nodes, each with its ancestors, up to [`MAX_TREE_NODES`].
fn tree_snapshot(search: &Search<Action>, instance: u64) -> TreeSnapshot {
    let nodes: Vec<_> = search.nodes().collect();
    let mut keep = vec![nodes.len() <= MAX_TREE_NODES; nodes.len()];
    if nodes.len() > MAX_TREE_NODES {
        let mut order: Vec<usize> = (0..nodes.len())
            .filter(|&i| *nodes[i].status == NodeStatus::Success)
            .collect();
        let mut by_visits: Vec<usize> = (0..nodes.len()).collect();
        by_visits.sort_by_key(|&i| std::cmp::Reverse(nodes[i].visits));
        order.extend(by_visits);
        let mut kept = 0;
        for id in order {
            let mut path = Vec::new();
            let mut cursor = Some(id);
            while let Some(c) = cursor.filter(|&c| !keep[c]) {
                path.push(c);
                cursor = nodes[c].parent.map(|p| p as usize);
            }
            if kept + path.len() > MAX_TREE_NODES {
                continue;
            }
            kept += path.len();
            for c in path {
                keep[c] = true;
            }
        }
    }
    let kept: Vec<TreeNode> = nodes
        .iter()
        .filter(|n| keep[n.id as usize])
        .map(|n| TreeNode {
            id: n.id,
            parent: n.parent,
            action: n.action.cloned(),
            fingerprint: n.fingerprint,
            status: match n.status {
                NodeStatus::Open => TreeStatus::Open,
                NodeStatus::Success => TreeStatus::Success,
                NodeStatus::Exhausted => TreeStatus::Exhausted,
                NodeStatus::Pruned(reason) => TreeStatus::Pruned(reason.clone()),
            },
            visits: n.visits,
            mean_value: n.mean_value,
            risk: n.risk,
            cost_ms: n.cost_ms,
            replay: n.replay,
        })
        .collect();
    TreeSnapshot {
        instance,
        omitted: (nodes.len() - kept.len()) as u32,
        nodes: kept,
    }
}

fn root_stats(search: &Search<Action>) -> (u32, f64) {
    search.nodes().next().map_or((0, 0.0), |root| {
        (root.visits, root.mean_value * f64::from(root.visits))
    })
}

async fn replay<F: EnvFactory>(
    factory: &F,
    identity: &NodeIdentity,
    request: ReplayRequest,
) -> Message {
    if let Err(detail) = check_capsule(&request.task) {
        return Refusal::new(RefusalReason::InvalidTask, detail).into();
    }
    let mut report = ReplayReport {
        task: request.task_id,
        fingerprints: Vec::new(),
        pages: Vec::new(),
        success: false,
        divergence: None,
        divergence_detail: None,
        executed: 0,
        after_check: None,
        error: None,
        transient: false,
        network: NetworkSummary::default(),
        screenshots: Vec::new(),
        model: Default::default(),
        answer: None,
    };
    let path = &request.path;
    let reproduce = (request.reproduce as usize).min(path.actions.len());
    let partial = reproduce < path.actions.len();
    // By the queen's rule: the finder's class or the action's own reading, the higher.
    let writes = path.actions[..reproduce]
        .iter()
        .enumerate()
        .any(|(i, action)| {
            let claimed = path
                .risks
                .get(i)
                .copied()
                .unwrap_or(forager_protocol::RiskClass::ReadOnly);
            claimed.max(forager_protocol::risk::classify_action(action))
                >= forager_protocol::RiskClass::DraftWrite
        });
    let mut screenshots: Vec<Vec<u8>> = Vec::new();
    match factory.create(&request.task, true) {
        Ok(mut env) => {
            let walked = async {
                if writes {
                    // The site's sandbox is restored before its writes are executed again.
                    F::reset_site(&mut env).await?;
                }
                env.restore(&[]).await?;
                let mut last = env.observe().await?;
                for (i, action) in path.actions[..reproduce].iter().enumerate() {
                    let before = last.fingerprint;
                    let step = env.act(action).await?;
                    last = step.state;
                    report.executed += 1;
                    report.fingerprints.push(step.state.fingerprint);
                    let mut page = F::step_info(&env, before, step.state.fingerprint);
                    page.cost_ms = step.cost.browser_ms;
                    page.value_hint = step.state.value_hint;
                    // What the page looked like, for the trajectory and the report; past the
                    // budget, later steps go without.
                    let used: usize = screenshots.iter().map(Vec::len).sum();
                    let shot = F::screenshot(&env)
                        .await
                        .filter(|bytes| used + bytes.len() <= SCREENSHOT_BUDGET);
                    report.screenshots.push(shot.as_deref().map(Digest32::of));
                    screenshots.push(shot.unwrap_or_default());
                    let diverged = differs(path, i, step.state.fingerprint, &page);
                    report.pages.push(page);
                    if let Some(detail) = diverged {
                        // Not the finder's page: what follows would act on another page.
                        report.divergence = Some(i as u32);
                        report.divergence_detail = Some(detail);
                        break;
                    }
                }
                if partial
                    && report.divergence.is_none()
                    && let Some(check) = &request.task.verify
                {
                    report.after_check = Some(F::after_check(&mut env, check).await?);
                }
                Ok::<_, EnvError>(last)
            }
            .await;
            match walked {
                Ok(last) => report.success = last.success,
                Err(e) => {
                    // The verifier's own trouble says nothing of the path.
                    report.transient = matches!(e, EnvError::Timeout { .. } | EnvError::Crashed(_));
                    report.error = Some(e.to_string());
                }
            }
            let wants_answer = request
                .task
                .model
                .as_ref()
                .is_some_and(|m| m.answer_schema.is_some());
            if report.success && !partial && report.divergence.is_none() && wants_answer {
                // The reproduction stands on the final page: the answer is read there.
                report.answer = F::extract_answer(&mut env)
                    .await
                    .map(forager_protocol::llm::JsonAnswer);
            }
            report.network = F::network(&env);
            report.model = F::take_model_usage(&env);
        }
        Err(e) => {
            report.transient = true;
            report.error = Some(format!("cannot create an environment: {e}"));
        }
    }
    match sign(identity, report) {
        Ok(signed) => Message::Replayed(Box::new(ReplayAnswer {
            report: signed,
            screenshots,
        })),
        Err(refusal) => refusal.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::action::Target;

    /// Replays diverge at `diverge_at` of the prefix it is given; nothing else is asked here.
    struct Diverging {
        diverge_at: usize,
    }

    impl Environment for Diverging {
        type Action = Action;
        async fn observe(&mut self) -> Result<StateInfo, EnvError> {
            Err(EnvError::Other("not asked".into()))
        }
        async fn candidates(&mut self) -> Result<Vec<crate::Candidate<Action>>, EnvError> {
            Err(EnvError::Other("not asked".into()))
        }
        async fn act(&mut self, _: &Action) -> Result<Step, EnvError> {
            Err(EnvError::Other("not asked".into()))
        }
        async fn restore(&mut self, prefix: &[(Action, Fingerprint)]) -> Result<Step, EnvError> {
            Err(EnvError::Diverged {
                step: self.diverge_at,
                expected: prefix[self.diverge_at].1,
                found: Fingerprint([0; 16]),
            })
        }
        async fn recover(&mut self) -> Result<(), EnvError> {
            Ok(())
        }
        fn describe(&self, action: &Action) -> String {
            action.label()
        }
    }

    fn click(name: &str, n: u8) -> (Action, Fingerprint) {
        let target = Target {
            locators: vec![],
            role: "button".into(),
            name: name.into(),
            sends: Default::default(),
        };
        (Action::Click { target }, Fingerprint([n; 16]))
    }

    /// A divergence is numbered from the branch's root, as the search below it numbers its
    /// steps; one inside the branch's own prefix is the root's.
    #[tokio::test]
    async fn a_divergence_below_a_branch_is_numbered_from_the_branchs_root() {
        let prefix = vec![click("START", 1), click("Inbox", 2)];
        let below = [click("Open", 3), click("Reply", 4)];
        let mut branch = Branch {
            inner: Diverging { diverge_at: 3 },
            prefix: prefix.clone(),
        };
        match branch.restore(&below).await {
            Err(EnvError::Diverged {
                step: 1, expected, ..
            }) => {
                assert_eq!(expected, Fingerprint([4; 16]))
            }
            other => panic!("{other:?}"),
        }
        branch.inner.diverge_at = 1;
        assert!(matches!(
            branch.restore(&below).await,
            Err(EnvError::RootDiverged { .. })
        ));
    }
}
