//! The queen: accepts tasks, keeps the top of each task's tree (the start state's actions, one
//! branch each), assigns branches to nodes by the production-aware score with virtual loss,
//! re-balances as reports arrive, reassigns the work of a node that dies or misses its
//! deadline, has a different node reproduce any success before it wins, and writes the result.
//!
//! One task (the actor) owns every task's state; requests to nodes run as spawned futures that
//! report back on an internal channel. Every decision is appended to the task's journal
//! (`<data>/tasks/<task id>/events.jsonl`), from which a restarted queen resumes.

use crate::artifacts::{Evidence, KeptReport};
use crate::journal::{Journal, JournalEvent, JournalTree, JournalTreeNode, Recovered, TaskDir};
use ed25519_dalek::SigningKey;
use forager_node::net::identity::peer_id_of;
use forager_node::net::{Network, NetworkEvent, Responder, Role};
use forager_node::search::Widening;
use forager_protocol::artifact::{Attestation, Digest32};
use forager_protocol::result::{
    ApprovalNeeded, MemoryUse, Metrics, NetworkSummary, RESULT_VERSION, ResultStep, RunError,
    RunResult, Status, StepVerification,
};
use forager_protocol::score::{ScoreInputs, uct_score};
use forager_protocol::signing::Domain;
use forager_protocol::trajectory::Cost;
use forager_protocol::wire::{
    BranchAssignment, BranchCounters, BranchId, ClusterOverview, ExpandRequest, FileChunk,
    FoundPath, KnownLocation, KnownState, MAX_CHUNK_BYTES, MAX_NODE_ADDRESSES, MAX_OVERVIEW_NODES,
    MAX_OVERVIEW_TASKS, MAX_PRUNE_REASONS, MAX_TASK_FILES, Message, NodeOverview, PageInfo,
    ProgressReport, Refusal, RefusalReason, ReplayReport, ReplayRequest, TaskFile, TaskId,
    TaskOverview, TaskPhase, TaskState, TreeSnapshot, TreeStatus, WireCandidate, branch_candidates,
    judge_reproduction, verified_pages,
};
use forager_protocol::workflow::WORKFLOW_FILE;
use forager_protocol::{Action, FailureReason, Fingerprint, PruneReason, RiskClass, TaskSpec};
use libp2p::PeerId;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// How the queen works.
#[derive(Debug, Clone)]
pub struct QueenConfig {
    /// Where journals and results go.
    pub data: PathBuf,
    /// Actions per assignment: small enough to re-balance often, large enough to amortise.
    pub chunk_actions: u32,
    /// How long a node may take for one assignment before its branch is reassigned.
    pub assignment_deadline: Duration,
    /// Progressive widening at the top of the tree, over the search iterations the branches
    /// reported (plus those in flight): the same rule and defaults as a node's own tree, so the
    /// queen's root opens branches as fast as a single search's root would.
    pub widening: Widening,
    /// The queen's identity key: it signs each winning trajectory (none written without it).
    pub signing_key: Option<SigningKey>,
    /// Keep every finished trajectory (every path the searches reached), as the nodes signed
    /// them, in `rollouts.json` beside the result.
    pub keep_all: bool,
    /// What the queen counts for `--metrics` (clones share the counters).
    pub metrics: crate::metrics::QueenMetrics,
    /// Ended tasks kept in memory (the newest), for `status`, the overview and the nodes'
    /// distrust; older ones are answered from their folders on disk.
    pub ended_in_memory: usize,
    /// The workflow memory: verified passes are kept there, and a task of the same kind is
    /// tried first as a remembered workflow with its own values (`None`: neither).
    pub memory: Option<crate::memory::WorkflowMemory>,
}

impl QueenConfig {
    /// Defaults, with journals under `data`.
    pub fn new(data: PathBuf) -> QueenConfig {
        QueenConfig {
            data,
            chunk_actions: 20,
            assignment_deadline: Duration::from_secs(180),
            widening: Widening::default(),
            signing_key: None,
            keep_all: false,
            metrics: crate::metrics::QueenMetrics::default(),
            ended_in_memory: DEFAULT_ENDED_IN_MEMORY,
            memory: None,
        }
    }
}

/// Ended tasks a queen keeps in memory by default: a few KB each.
pub const DEFAULT_ENDED_IN_MEMORY: usize = 256;

enum Command {
    Submit {
        task: Box<TaskSpec>,
        reply: oneshot::Sender<Result<TaskId, Refusal>>,
    },
    Status {
        task: TaskId,
        reply: oneshot::Sender<TaskState>,
    },
    Overview {
        reply: oneshot::Sender<ClusterOverview>,
    },
    Cancel {
        task: TaskId,
        reply: oneshot::Sender<Result<TaskState, Refusal>>,
    },
    Shutdown {
        done: oneshot::Sender<()>,
    },
}

/// A handle on the queen's task.
#[derive(Debug, Clone)]
pub struct Queen {
    commands: mpsc::Sender<Command>,
}

impl Queen {
    /// Submits a task; returns its id, or why the queen refused it
    /// ([`RefusalReason::InvalidTask`], [`RefusalReason::Storage`],
    /// [`RefusalReason::Stopping`]).
    pub async fn submit(&self, task: TaskSpec) -> Result<TaskId, Refusal> {
        let stopped = || Refusal::new(RefusalReason::Stopping, "the queen has stopped");
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Submit {
                task: Box::new(task),
                reply,
            })
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Where a task stands.
    pub async fn status(&self, task: TaskId) -> TaskState {
        let (reply, answer) = oneshot::channel();
        if self
            .commands
            .send(Command::Status { task, reply })
            .await
            .is_err()
        {
            return TaskState::Unknown;
        }
        answer.await.unwrap_or(TaskState::Unknown)
    }

    /// The queen's nodes and tasks (`None` when it has stopped).
    pub async fn overview(&self) -> Option<ClusterOverview> {
        crate_ask(&self.commands, |reply| Command::Overview { reply }).await
    }

    /// Cancels a running task: it ends `failing` with `cancelled` (its result and journal
    /// written as for any other end). A finished task stays as it ended. Answers the task's
    /// state, or why not ([`RefusalReason::UnknownTask`], [`RefusalReason::Stopping`]).
    pub async fn cancel(&self, task: TaskId) -> Result<TaskState, Refusal> {
        crate_ask(&self.commands, |reply| Command::Cancel { task, reply })
            .await
            .unwrap_or_else(|| {
                Err(Refusal::new(
                    RefusalReason::Stopping,
                    "the queen has stopped",
                ))
            })
    }

    /// Stops the queen: requests in flight are dropped, and the artifacts of finished tasks
    /// are written before this returns (waiting at most a minute).
    pub async fn shutdown(&self) {
        let (done, stopped) = oneshot::channel();
        if self.commands.send(Command::Shutdown { done }).await.is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(60), stopped).await;
        }
    }
}

/// Sends a command and waits for its answer; `None` when the actor is gone.
async fn crate_ask<T>(
    commands: &mpsc::Sender<Command>,
    make: impl FnOnce(oneshot::Sender<T>) -> Command,
) -> Option<T> {
    let (reply, answer) = oneshot::channel();
    commands.send(make(reply)).await.ok()?;
    answer.await.ok()
}

enum Internal {
    Expanded {
        task: TaskId,
        node: PeerId,
        result: Result<Message, RequestFailed>,
    },
    Reported {
        task: TaskId,
        node: PeerId,
        branch: BranchId,
        result: Result<Message, RequestFailed>,
        /// When the assignment was sent.
        sent: Instant,
    },
    Replayed {
        task: TaskId,
        node: PeerId,
        pending: Box<Pending>,
        result: Result<Message, RequestFailed>,
    },
    /// A node's answer to [`Message::Release`].
    Released {
        node: PeerId,
        result: Result<Message, RequestFailed>,
    },
}

/// The queen's view of a branch: a child of the task's root, searched on nodes.
#[derive(Debug, Clone)]
struct Branch {
    id: BranchId,
    /// Actions before the branch's own, from the start page: empty for a start-page branch;
    /// a consent's prefix for the branch that resumes at an approved action.
    lead: Vec<Action>,
    candidate: WireCandidate,
    prefix_fingerprints: Vec<Fingerprint>,
    assignments: u32,
    /// Sum of the values backed up to the branch root, over `visits` iterations: the branch's
    /// mean value is what a single search's root child would hold.
    value_sum: f64,
    /// Search iterations below the branch root.
    visits: u32,
    /// Assignments in flight, and the actions they were given (virtual loss).
    in_flight: u32,
    in_flight_actions: u32,
    exhausted: bool,
    /// The node that searched it last: it keeps the branch's tree, so it gets it again.
    holder: Option<PeerId>,
    /// A remembered workflow's branch.
    memory: Option<MemoryBranch>,
    /// A found success without its detour (`crate::shortcut`): replayed like a workflow,
    /// assigned once, never picked by the search.
    shortcut: bool,
}

/// Where the task's shortcut stands (`crate::shortcut`): at most one per task, for the
/// first success that has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shortcut {
    /// None tried yet.
    Untried,
    /// Its branch, not answered yet (assigned or not).
    Pending(BranchId),
    /// Answered, or none will be tried.
    Done,
}

/// A branch of remembered steps.
#[derive(Debug, Clone, Copy)]
struct MemoryBranch {
    /// The workflow's id.
    id: Digest32,
    /// Whether a node reported on it yet.
    reported: bool,
    /// A whole workflow (its outcome is noted on its record), or a shared prefix (which
    /// says nothing of its workflow's worth). Either is tried first and alone: no other
    /// branch until its first report.
    whole: bool,
}

impl Branch {
    /// A branch nobody searched yet: `lead` then `candidate` from the start page.
    fn new(id: BranchId, lead: Vec<Action>, candidate: WireCandidate) -> Branch {
        Branch {
            id,
            lead,
            candidate,
            prefix_fingerprints: Vec::new(),
            assignments: 0,
            value_sum: 0.0,
            visits: 0,
            in_flight: 0,
            in_flight_actions: 0,
            exhausted: false,
            holder: None,
            memory: None,
            shortcut: false,
        }
    }

    /// The actions from the start page to the branch's root.
    fn path(&self) -> Vec<Action> {
        let mut path = self.lead.clone();
        path.push(self.candidate.action.clone());
        path
    }
}

/// A success waiting to be reproduced.
#[derive(Debug, Clone)]
struct Pending {
    path: FoundPath,
    finder: PeerId,
    /// Nodes that failed to answer a replay of it (not asked again).
    tried: HashSet<PeerId>,
    /// Replays that answered and did not reproduce it.
    failed_replays: u32,
    /// Replays the verifier could not carry out for a reason of its own (a timeout, a
    /// crash): not counted against the path, at most [`TRANSIENT_RETRIES`].
    transient_failures: u32,
    /// The finder's signed report holding the path.
    claim: Option<Attestation>,
    /// The finder's screenshots of the path's pages past a write, per step (empty where it
    /// sent none): the pictures of the attested steps.
    shots: Vec<Vec<u8>>,
}

/// A reproduced success, ready to be published.
#[derive(Debug)]
struct ReproducedPass {
    steps: Vec<(Action, Fingerprint, RiskClass)>,
    verification: Vec<StepVerification>,
    finder: PeerId,
    verifier: PeerId,
    pages: Vec<PageInfo>,
    evidence: Option<Evidence>,
    /// The answer the reproducer extracted on the final page (a task with an answer schema).
    answer: Option<forager_protocol::llm::JsonAnswer>,
}

/// Replays a success gets before it is rejected and its finder distrusted: a real site (or a
/// simulated one) can glitch once; a lie fails every time.
const REPRODUCTION_ATTEMPTS: u32 = 2;

/// Replays a verifier could not carry out (an operation timed out, its browser crashed) that
/// a success gets on top of [`REPRODUCTION_ATTEMPTS`]: a slow server is no lying finder.
const TRANSIENT_RETRIES: u32 = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Expanding,
    Searching,
    Done,
}

/// The owner of the start page's location: no branch (every assignment learns it).
const ROOT_OWNER: BranchId = BranchId(u64::MAX);

struct TaskRun {
    id: TaskId,
    task: TaskSpec,
    /// The queen's key, which signs the trajectory.
    key: Option<SigningKey>,
    /// Whether every finished trajectory is kept (`rollouts.json`).
    keep_all: bool,
    /// With `keep_all`, the signed reports whose trees hold them.
    kept_reports: Vec<KeptReport>,
    /// What the journal already holds of each tree (node, branch, tree instance → node id →
    /// node as journaled), so that reports journal only what changed.
    journaled_trees: HashMap<(PeerId, u64, u64), HashMap<u32, JournalTreeNode>>,
    started: Instant,
    phase: Phase,
    journal: Journal,
    branches: Vec<Branch>,
    approvals: Vec<FoundPath>,
    actions: u32,
    replayed: u64,
    cost: Cost,
    /// Successes waiting for a second node.
    unverified: VecDeque<Pending>,
    /// A reproduced success held back while a shorter one waits for its reproduction: the
    /// workflow is replayed for good, so a step fewer is worth a second replay. Published when
    /// no shorter success is left to try (or the time is up).
    held: Option<ReproducedPass>,
    rejected_paths: HashSet<Vec<Action>>,
    /// Node → the branch it works on for this task.
    /// Assignments in flight: node → (branch, actions given).
    assigned: HashMap<PeerId, (BranchId, u32)>,
    verifying: Option<PeerId>,
    /// The writes granted to nodes (`Message::ClaimWrite`): each runs once per task.
    writes_claimed: HashSet<u64>,
    expanding: Option<PeerId>,
    /// Nodes that took part.
    contributors: HashSet<PeerId>,
    /// Whether they were told the task ended ([`Message::Release`]).
    released: bool,
    result: Option<RunResult>,
    /// Artifacts to write now that the result stands (taken by the actor at once).
    artifacts: Option<ArtifactJob>,
    /// Whether they are being written: the task is reported done only after.
    writing: bool,
    failures: u32,
    network: NetworkSummary,
    /// The nodes' counters, summed over their reports (each bounded on arrival).
    counters: BranchCounters,
    /// Nodes whose reported success could not be reproduced: no more work of this task.
    distrusted: HashSet<PeerId>,
    /// Every location the task's searches reached, with the fewest actions from the start URL
    /// and the branch that reached it so: the cluster-wide transposition set. An assignment
    /// carries the locations other branches own (a branch whose tree was dropped re-explores
    /// its own).
    locations: HashMap<u64, (u32, BranchId)>,
    /// State fingerprint → the fewest actions it was reached in and the branch that owns it
    /// (the start page: [`ROOT_OWNER`]); assignments carry the other branches' states, the
    /// in-place analogue of `locations`.
    states: HashMap<Fingerprint, (u32, BranchId)>,
    /// Nodes that failed to open the start page (asked again only when no other is left).
    expand_failed: HashSet<PeerId>,
    /// Nodes that reported the start page itself as unusable.
    start_failures: HashSet<PeerId>,
    /// The workflow memory (the queen's).
    memory: Option<crate::memory::WorkflowMemory>,
    /// The remembered workflow tried first, bound to this task's values.
    recalled: Option<crate::memory::Recalled>,
    /// How it fared, for the result.
    memory_use: Option<MemoryUse>,
    /// The shortcut of a success that took a detour.
    shortcut: Shortcut,
}

/// Starts the queen's task. It owns the network's events from now on.
pub fn start(network: Network, events: mpsc::Receiver<NetworkEvent>, config: QueenConfig) -> Queen {
    let (commands, inbox) = mpsc::channel(64);
    let (internal, internal_inbox) = mpsc::channel(256);
    let actor = Actor {
        network,
        config,
        nodes: HashSet::new(),
        seen: HashMap::new(),
        listening: HashMap::new(),
        started: Instant::now(),
        tasks: HashMap::new(),
        ended: EndedTasks::default(),
        internal,
    };
    // Fire-and-forget by design: the actor ends on `Queen::shutdown` (which waits for it to
    // finish writing) or when every handle is dropped.
    tokio::spawn(actor.run(events, inbox, internal_inbox));
    Queen { commands }
}

struct Actor {
    network: Network,
    config: QueenConfig,
    nodes: HashSet<PeerId>,
    /// Per node: the address it connected from, and when it last answered or connected.
    seen: HashMap<PeerId, (Option<libp2p::Multiaddr>, Instant)>,
    /// Per node: where it listens (what a joining node is told to dial).
    listening: HashMap<PeerId, Vec<libp2p::Multiaddr>>,
    /// When the queen started (its uptime in the overview).
    started: Instant,
    /// Tasks still running, or ended with files, releases or node requests still out.
    tasks: HashMap<TaskId, TaskRun>,
    /// Tasks ended and settled, newest last (bounded by `ended_in_memory`).
    ended: EndedTasks,
    internal: mpsc::Sender<Internal>,
}

/// What remains of a task once it ended and nothing of it is in flight: what `status`, the
/// overview and the distrust count need. The rest (trees, branches, transpositions) is on
/// disk in its journal and dropped from memory.
#[derive(Debug)]
struct Ended {
    result: RunResult,
    overview: TaskOverview,
    started: Instant,
    distrusted: Vec<PeerId>,
    dir: PathBuf,
}

/// The ended tasks kept in memory: the newest by start, as the overview lists them; the
/// oldest is dropped first.
#[derive(Debug, Default)]
struct EndedTasks {
    tasks: HashMap<TaskId, Ended>,
    /// Oldest start first.
    order: VecDeque<(Instant, TaskId)>,
}

impl EndedTasks {
    fn insert(&mut self, id: TaskId, ended: Ended, capacity: usize) {
        let started = ended.started;
        if self.tasks.insert(id, ended).is_none() {
            insert_by_start(&mut self.order, started, id);
        }
        while self.order.len() > capacity {
            if let Some((_, oldest)) = self.order.pop_front() {
                self.tasks.remove(&oldest);
            }
        }
    }
}

/// Puts a task where its start belongs in `order` (oldest first), not at the end: tasks settle
/// in any order (one whose last node request comes back late settles after tasks started
/// after it), and the settling order would keep an old task over a newer one.
fn insert_by_start(order: &mut VecDeque<(Instant, TaskId)>, started: Instant, id: TaskId) {
    let at = order.partition_point(|(other, _)| *other <= started);
    order.insert(at, (started, id));
}

/// Logs an answer read from disk that panicked (a finished one needs nothing more).
fn log_answer_panic(done: Result<(), tokio::task::JoinError>) {
    if let Err(error) = done
        && error.is_panic()
    {
        tracing::error!(%error, "reading a task's files for a client panicked");
    }
}

/// The largest `result.json` read back from disk.
const MAX_RESULT_BYTES: u64 = 16 << 20;

impl Actor {
    async fn run(
        mut self,
        mut events: mpsc::Receiver<NetworkEvent>,
        mut inbox: mpsc::Receiver<Command>,
        mut internal: mpsc::Receiver<Internal>,
    ) {
        self.resume_journals();
        // Every request to a node, every artifact job and every answer read from disk is owned
        // here: awaited, its panic logged; when the queen stops the requests are dropped, the
        // writes finished and the answers sent.
        let mut requests: JoinSet<()> = JoinSet::new();
        let mut writers: JoinSet<TaskId> = JoinSet::new();
        let mut answers: JoinSet<()> = JoinSet::new();
        let mut tick = tokio::time::interval(Duration::from_millis(200));
        let stopped = loop {
            tokio::select! {
                biased;
                command = inbox.recv() => match command {
                    Some(Command::Shutdown { done }) => break Some(done),
                    None => break None,
                    Some(command) => self.on_command(command),
                },
                Some(message) = internal.recv() => self.on_internal(message),
                Some(written) = writers.join_next() => self.on_written(written),
                Some(done) = requests.join_next() => {
                    if let Err(error) = done && error.is_panic() {
                        tracing::error!(%error, "a request to a node panicked");
                    }
                }
                Some(done) = answers.join_next() => log_answer_panic(done),
                event = events.recv() => match event {
                    Some(event) => self.on_network(event, &mut answers).await,
                    None => break None,
                },
                _ = tick.tick() => {}
            }
            self.schedule(&mut requests);
            self.start_writing(&mut writers);
            self.retire_settled();
        };
        requests.shutdown().await;
        // A client reading a finished task's files (`forager result`) gets the listing or
        // chunk it asked for: one directory or one bounded chunk, read while the network is
        // still up.
        while let Some(done) = answers.join_next().await {
            log_answer_panic(done);
        }
        // Nothing is lost on a stop: the artifacts of finished tasks are written first.
        self.start_writing(&mut writers);
        while let Some(written) = writers.join_next().await {
            self.on_written(written);
        }
        if let Some(done) = stopped {
            let _ = done.send(());
        }
    }

    /// Hands the artifact jobs of tasks that just finished to blocking threads.
    fn start_writing(&mut self, writers: &mut JoinSet<TaskId>) {
        for run in self.tasks.values_mut() {
            if let Some(job) = run.artifacts.take() {
                run.writing = true;
                writers.spawn_blocking(move || job.write());
            }
        }
    }

    fn on_written(&mut self, written: Result<TaskId, tokio::task::JoinError>) {
        match written {
            Ok(id) => {
                if let Some(run) = self.tasks.get_mut(&id) {
                    run.writing = false;
                }
            }
            Err(error) => {
                // A panic while writing: the files stand as far as they got; the result is
                // on disk already, so the tasks are reported done.
                tracing::error!(%error, "writing a task's artifacts panicked");
                for run in self.tasks.values_mut() {
                    if run.writing && run.artifacts.is_none() {
                        run.writing = false;
                    }
                }
            }
        }
    }

    /// Moves the tasks that ended and have nothing in flight (files written, nodes released,
    /// no request out) out of the live table: memory does not grow with every task run.
    fn retire_settled(&mut self) {
        let settled: Vec<TaskId> = self
            .tasks
            .values()
            .filter(|run| run.settled())
            .map(|run| run.id)
            .collect();
        for id in settled {
            let Some(run) = self.tasks.remove(&id) else {
                continue;
            };
            let Some(ended) = run.into_ended() else {
                continue;
            };
            self.ended
                .insert(id, ended, self.config.ended_in_memory.max(1));
        }
    }

    /// The folder of a task, known or not.
    fn task_dir(&self, task: TaskId) -> PathBuf {
        self.config.data.join("tasks").join(task.to_string())
    }

    /// The result of an ended task no longer in memory, from its folder (a small file; the
    /// tasks this old are seldom asked for, so the actor reads it itself).
    fn result_on_disk(&self, task: TaskId) -> Option<RunResult> {
        let path = self.task_dir(task).join(crate::journal::RESULT_FILE);
        let file = std::fs::File::open(&path).ok()?;
        if file.metadata().ok()?.len() > MAX_RESULT_BYTES {
            tracing::warn!(path = %path.display(), "result too large to read back");
            return None;
        }
        match serde_json::from_reader(std::io::BufReader::new(file)) {
            Ok(result) => Some(result),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "unreadable result");
                None
            }
        }
    }

    fn resume_journals(&mut self) {
        let dir = self.config.data.join("tasks");
        for recovered in Journal::recover_all(&dir) {
            let Recovered {
                task,
                journal,
                events,
            } = recovered;
            let Ok(id) = TaskId::of(&task) else { continue };
            let mut run = TaskRun::new(id, task, journal, &self.config);
            for event in events {
                run.replay_event(event);
            }
            tracing::info!(task = %id, branches = run.branches.len(), actions = run.actions, "resumed a task from its journal");
            run.journal.append(&JournalEvent::Resumed {
                actions: run.actions,
            });
            self.tasks.insert(id, run);
        }
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Submit { task, reply } => {
                let _ = reply.send(self.submit(*task));
            }
            Command::Status { task, reply } => {
                let _ = reply.send(self.task_state(task));
            }
            Command::Overview { reply } => {
                let _ = reply.send(self.overview());
            }
            Command::Cancel { task, reply } => {
                let _ = reply.send(self.cancel(task));
            }
            Command::Shutdown { .. } => {}
        }
    }

    /// Where a task stands: done only once its files are written.
    fn task_state(&self, task: TaskId) -> TaskState {
        match self.tasks.get(&task) {
            None => match self.ended.tasks.get(&task) {
                Some(ended) => TaskState::Done(Box::new(ended.result.clone())),
                None => match self.result_on_disk(task) {
                    Some(result) => TaskState::Done(Box::new(result)),
                    None => TaskState::Unknown,
                },
            },
            Some(run) => match &run.result {
                Some(result) if !run.writing && run.artifacts.is_none() => {
                    TaskState::Done(Box::new(result.clone()))
                }
                _ => TaskState::Running {
                    actions: run.actions,
                    nodes: run.assigned.len() as u32,
                },
            },
        }
    }

    fn cancel(&mut self, task: TaskId) -> Result<TaskState, Refusal> {
        let Some(run) = self.tasks.get_mut(&task) else {
            // An ended task stays as it ended.
            if let state @ TaskState::Done(_) = self.task_state(task) {
                return Ok(state);
            }
            return Err(Refusal::new(
                RefusalReason::UnknownTask,
                format!("the queen does not know task {task}"),
            ));
        };
        if run.phase != Phase::Done {
            tracing::info!(task = %task, actions = run.actions, "task cancelled by an operator");
            self.config.metrics.cancelled.inc();
            run.finish_failing_with(
                FailureReason::Cancelled,
                format!("cancelled by an operator after {} actions", run.actions),
            );
        }
        Ok(self.task_state(task))
    }

    fn overview(&self) -> ClusterOverview {
        let mut load: HashMap<PeerId, u32> = HashMap::new();
        let mut distrusted: HashMap<PeerId, u32> = HashMap::new();
        for run in self.tasks.values() {
            for node in run
                .assigned
                .keys()
                .chain(run.verifying.iter())
                .chain(run.expanding.iter())
            {
                *load.entry(*node).or_default() += 1;
            }
            for node in &run.distrusted {
                *distrusted.entry(*node).or_default() += 1;
            }
        }
        for ended in self.ended.tasks.values() {
            for node in &ended.distrusted {
                *distrusted.entry(*node).or_default() += 1;
            }
        }
        let mut nodes: Vec<NodeOverview> = self
            .nodes
            .iter()
            .map(|peer| {
                let (address, last) = self.seen.get(peer).cloned().unwrap_or((None, self.started));
                NodeOverview {
                    peer: peer.to_string(),
                    address: address.map(|a| a.to_string()),
                    load: load.get(peer).copied().unwrap_or(0),
                    distrusted_in: distrusted.get(peer).copied().unwrap_or(0),
                    last_seen_secs: last.elapsed().as_secs(),
                }
            })
            .collect();
        nodes.sort_by(|a, b| a.peer.cmp(&b.peer));
        nodes.truncate(MAX_OVERVIEW_NODES);
        let mut runs: Vec<(Instant, TaskOverview)> = self
            .tasks
            .values()
            .map(|run| (run.started, run.overview()))
            .chain(self.ended.tasks.values().map(|ended| {
                let mut overview = ended.overview.clone();
                overview.age_secs = ended.started.elapsed().as_secs();
                (ended.started, overview)
            }))
            .collect();
        // Newest first.
        runs.sort_by_key(|(started, overview)| (started.elapsed(), overview.id));
        let more_tasks = runs.len().saturating_sub(MAX_OVERVIEW_TASKS) as u32;
        let tasks = runs
            .into_iter()
            .take(MAX_OVERVIEW_TASKS)
            .map(|(_, overview)| overview)
            .collect();
        ClusterOverview {
            uptime_secs: self.started.elapsed().as_secs(),
            nodes,
            tasks,
            more_tasks,
        }
    }

    /// A node answered or connected now.
    fn saw(&mut self, node: PeerId) {
        let now = Instant::now();
        self.seen
            .entry(node)
            .and_modify(|(_, last)| *last = now)
            .or_insert((None, now));
    }

    fn submit(&mut self, task: TaskSpec) -> Result<TaskId, Refusal> {
        let invalid =
            |e: &dyn std::fmt::Display| Refusal::new(RefusalReason::InvalidTask, e.to_string());
        task.validate().map_err(|e| invalid(&e))?;
        let id = TaskId::of(&task).map_err(|e| invalid(&e))?;
        if !task.consents.is_empty() {
            let revocations = forager_node::consent::RevocationStore::for_user()
                .map(|store| store.load())
                .transpose()
                .map_err(|e| Refusal::new(RefusalReason::Storage, e.to_string()))?
                .unwrap_or_default();
            forager_node::consent::check_consents(
                &task,
                &id,
                forager_node::consent::unix_now(),
                &revocations,
            )
            .map_err(|(n, e)| invalid(&format!("consent {n}: {e}")))?;
        }
        // The same task again is the one already run (or running): its id answers.
        if self.tasks.contains_key(&id)
            || self.ended.tasks.contains_key(&id)
            || self.result_on_disk(id).is_some()
        {
            return Ok(id);
        }
        let dir = self.task_dir(id);
        let journal = Journal::create(&dir, &task)
            .map_err(|e| Refusal::new(RefusalReason::Storage, e.to_string()))?;
        tracing::info!(task = %id, goal = %task.goal, "task accepted");
        self.config.metrics.submitted.inc();
        self.tasks
            .insert(id, TaskRun::new(id, task, journal, &self.config));
        Ok(id)
    }

    /// Handles one network event; an answer read from disk is spawned into `answers`.
    async fn on_network(&mut self, event: NetworkEvent, answers: &mut JoinSet<()>) {
        match event {
            NetworkEvent::PeerIdentified {
                peer,
                role: Role::Node,
                address,
                listen,
            } => {
                tracing::info!(%peer, "node joined");
                self.nodes.insert(peer);
                self.seen.insert(peer, (address, Instant::now()));
                self.listening.insert(peer, listen);
            }
            NetworkEvent::PeerGone(peer) => {
                if self.nodes.remove(&peer) {
                    tracing::warn!(%peer, "node left");
                }
                self.seen.remove(&peer);
                self.listening.remove(&peer);
            }
            NetworkEvent::Request {
                peer,
                message,
                responder,
            } => self.on_request(peer, *message, responder, answers).await,
            NetworkEvent::PeerIdentified { .. }
            | NetworkEvent::Announcement(_)
            | NetworkEvent::Listening(_) => {}
        }
    }

    async fn on_request(
        &mut self,
        peer: PeerId,
        message: Message,
        responder: Responder,
        answers: &mut JoinSet<()>,
    ) {
        let answer = match message {
            Message::Submit(task) => match self.submit(*task) {
                Ok(id) => Message::Accepted(id),
                Err(refusal) => refusal.into(),
            },
            Message::Status(id) => Message::State(Box::new(self.task_state(id))),
            Message::Overview => Message::ClusterState(Box::new(self.overview())),
            Message::Nodes => {
                let mut others: Vec<_> = self
                    .listening
                    .iter()
                    .filter(|(node, _)| **node != peer && self.nodes.contains(node))
                    .collect();
                others.sort_by_key(|(node, _)| **node);
                Message::NodeAddresses(
                    others
                        .into_iter()
                        .take(MAX_OVERVIEW_NODES)
                        .flat_map(|(_, addresses)| addresses.iter().take(MAX_NODE_ADDRESSES))
                        .map(|a| a.to_string())
                        .collect(),
                )
            }
            Message::ClaimWrite { task, key } => self.claim_write(peer, task, key),
            Message::Cancel(id) => match self.cancel(id) {
                Ok(state) => Message::State(Box::new(state)),
                Err(refusal) => refusal.into(),
            },
            Message::ListFiles(id) => match self.finished_dir(id) {
                Ok(dir) => {
                    // Reading a folder is I/O: off the actor, answered from there.
                    let network = self.network.clone();
                    answers.spawn(async move {
                        let answer = match list_task_files(dir).await {
                            Ok(files) => Message::Files(files),
                            Err(refusal) => refusal.into(),
                        };
                        let _ = network.respond(responder, answer).await;
                    });
                    return;
                }
                Err(refusal) => refusal.into(),
            },
            Message::ReadFile { task, name, offset } => match self.finished_dir(task) {
                Ok(dir) => {
                    let network = self.network.clone();
                    answers.spawn(async move {
                        let answer = match read_task_file(dir, &name, offset).await {
                            Ok(chunk) => Message::Chunk(chunk),
                            Err(refusal) => refusal.into(),
                        };
                        let _ = network.respond(responder, answer).await;
                    });
                    return;
                }
                Err(refusal) => refusal.into(),
            },
            other => {
                tracing::debug!(%peer, ?other, "request not for a queen");
                Refusal::new(
                    RefusalReason::NotServed,
                    "the queen does not answer this request",
                )
                .into()
            }
        };
        let _ = self.network.respond(responder, answer).await;
    }

    /// A node asks for a write of a task: granted to the first to ask, once (journaled
    /// first, so a restarted queen grants it no more); refused to a peer that is not one of
    /// this queen's nodes and for a task that is not running here.
    fn claim_write(&mut self, peer: PeerId, task: TaskId, key: u64) -> Message {
        if !self.nodes.contains(&peer) {
            return Refusal::new(RefusalReason::NotServed, "writes are claimed by nodes").into();
        }
        let Some(run) = self.tasks.get_mut(&task) else {
            return Message::WriteClaimed(false);
        };
        if run.writes_claimed.contains(&key) {
            tracing::info!(task = %task, node = %peer, key, "a write another branch holds is refused");
            return Message::WriteClaimed(false);
        }
        run.journal.append(&JournalEvent::WriteClaimed {
            node: peer.to_string(),
            key,
        });
        run.writes_claimed.insert(key);
        tracing::info!(task = %task, node = %peer, key, "write granted");
        Message::WriteClaimed(true)
    }

    /// The folder of a task whose files are all written.
    fn finished_dir(&self, task: TaskId) -> Result<PathBuf, Refusal> {
        if let Some(ended) = self.ended.tasks.get(&task) {
            return Ok(ended.dir.clone());
        }
        let Some(run) = self.tasks.get(&task) else {
            return match self.result_on_disk(task) {
                Some(_) => Ok(self.task_dir(task)),
                None => Err(Refusal::new(
                    RefusalReason::UnknownTask,
                    format!("the queen does not know task {task}"),
                )),
            };
        };
        if run.result.is_none() || run.writing || run.artifacts.is_some() {
            return Err(Refusal::new(
                RefusalReason::NotFinished,
                format!("task {task} has not finished"),
            ));
        }
        Ok(run.journal.dir().to_path_buf())
    }

    fn busy(&self) -> HashSet<PeerId> {
        self.tasks
            .values()
            .flat_map(|t| {
                t.assigned
                    .keys()
                    .copied()
                    .chain(t.verifying)
                    .chain(t.expanding)
            })
            .collect()
    }

    fn schedule(&mut self, requests: &mut JoinSet<()>) {
        let busy = self.busy();
        let mut idle: Vec<PeerId> = self
            .nodes
            .iter()
            .filter(|n| !busy.contains(n))
            .copied()
            .collect();
        idle.sort();
        let mut dispatch = Dispatch {
            requests,
            network: &self.network,
            internal: &self.internal,
            limit: self.config.assignment_deadline + Duration::from_secs(10),
            idle,
            busy,
        };
        let ids: Vec<TaskId> = self.tasks.keys().copied().collect();
        for id in ids {
            let Some(run) = self.tasks.get_mut(&id) else {
                continue;
            };
            run.publish_held();
            if run.phase == Phase::Done {
                run.release(id, &mut dispatch);
                continue;
            }
            if run.ends_now(&self.nodes) {
                continue;
            }
            match run.phase {
                Phase::Expanding => run.expand_next(id, &mut dispatch),
                Phase::Searching => run.search_next(id, &self.nodes, &self.config, &mut dispatch),
                Phase::Done => {}
            }
        }
    }
}

/// One scheduling pass's outbox: where its requests go, and the nodes it may still give
/// work to.
struct Dispatch<'a> {
    requests: &'a mut JoinSet<()>,
    network: &'a Network,
    internal: &'a mpsc::Sender<Internal>,
    /// How long a request may go unanswered.
    limit: Duration,
    /// Nodes with nothing in flight, in a stable order.
    idle: Vec<PeerId>,
    /// Nodes with something in flight (given work in this pass included).
    busy: HashSet<PeerId>,
}

impl Dispatch<'_> {
    fn send(&mut self, node: PeerId, request: Message, wrap: Wrap) {
        spawn_request(
            self.requests,
            self.network,
            self.internal,
            self.limit,
            node,
            request,
            wrap,
        );
    }

    /// Takes the idle node at `index`: it is busy from now on.
    fn take(&mut self, index: usize) -> PeerId {
        let node = self.idle.remove(index);
        self.busy.insert(node);
        node
    }
}

impl TaskRun {
    /// Tells the nodes that took part that the task ended, once: they drop its branch
    /// searches (browser pages) kept for a next assignment that will not come.
    fn release(&mut self, id: TaskId, dispatch: &mut Dispatch<'_>) {
        if self.released {
            return;
        }
        self.released = true;
        let mut nodes: Vec<PeerId> = self.contributors.iter().copied().collect();
        nodes.sort();
        for node in nodes {
            dispatch.send(
                node,
                Message::Release(id),
                Box::new(move |result| Internal::Released { node, result }),
            );
        }
    }

    /// Ends the task if its budget or time is up, or if every node of the cluster is
    /// distrusted and nothing is in flight; whether it ended.
    fn ends_now(&mut self, nodes: &HashSet<PeerId>) -> bool {
        if let Some(reason) = self.over() {
            self.finish_failing(reason);
            return true;
        }
        let idle_run = self.assigned.is_empty()
            && self.verifying.is_none()
            && self.unverified.is_empty()
            && self.expanding.is_none();
        if idle_run && !nodes.is_empty() && nodes.is_subset(&self.distrusted) {
            self.finish_failing_with(
                FailureReason::NotReproduced,
                "every node's success failed to reproduce; no node is left to search".into(),
            );
            return true;
        }
        false
    }

    /// Asks an idle node to open the start page, if none is at it: one that did not fail
    /// at it yet, else (every idle one failed once) the last, starting over.
    fn expand_next(&mut self, id: TaskId, dispatch: &mut Dispatch<'_>) {
        if self.expanding.is_some() || dispatch.idle.is_empty() {
            return;
        }
        let fresh = dispatch
            .idle
            .iter()
            .position(|n| !self.expand_failed.contains(n));
        if fresh.is_none() {
            self.expand_failed.clear();
        }
        let node = dispatch.take(fresh.unwrap_or(dispatch.idle.len() - 1));
        self.expanding = Some(node);
        let request = Message::Expand(Box::new(ExpandRequest {
            task: self.task.clone(),
        }));
        dispatch.send(
            node,
            request,
            Box::new(move |result| Internal::Expanded {
                task: id,
                node,
                result,
            }),
        );
    }

    /// Gives the searching task's work to idle nodes: a waiting success's reproduction
    /// first (it ends the task), a shortcut beside it, and, when no success waits, branches
    /// to every idle trusted node.
    fn search_next(
        &mut self,
        id: TaskId,
        nodes: &HashSet<PeerId>,
        config: &QueenConfig,
        dispatch: &mut Dispatch<'_>,
    ) {
        if let Some((verifier, request, pending)) = self.next_verification(nodes, &dispatch.busy) {
            dispatch.idle.retain(|n| *n != verifier);
            dispatch.busy.insert(verifier);
            let pending = Box::new(pending);
            dispatch.send(
                verifier,
                request,
                Box::new(move |result| Internal::Replayed {
                    task: id,
                    node: verifier,
                    pending,
                    result,
                }),
            );
        }
        let deadline_ms = config.assignment_deadline.as_millis() as u64;
        let assign = |run: &mut TaskRun, dispatch: &mut Dispatch<'_>, index, branch, actions| {
            let node = dispatch.take(index);
            let request = run.assign(node, branch, actions, deadline_ms);
            config.metrics.assignments.inc();
            let sent = Instant::now();
            dispatch.send(
                node,
                request,
                Box::new(move |result| Internal::Reported {
                    task: id,
                    node,
                    branch,
                    result,
                    sent,
                }),
            );
        };
        // A shortcut goes beside the reproduction of the success it shortens.
        if let Some((branch, actions)) = self.shortcut_to_assign()
            && let Some(index) = dispatch
                .idle
                .iter()
                .position(|n| !self.distrusted.contains(n))
        {
            assign(self, dispatch, index, branch, actions);
        }
        // A success waiting for its reproduction may end the task: no new work.
        let waiting =
            self.verifying.is_some() || !self.unverified.is_empty() || self.held.is_some();
        while !waiting && !dispatch.idle.is_empty() {
            let idle = &dispatch.idle;
            let trusted: Vec<usize> = (0..idle.len())
                .filter(|&i| !self.distrusted.contains(&idle[i]))
                .collect();
            let Some(&last) = trusted.last() else {
                break;
            };
            let Some((branch, actions)) = self.pick_branch(config.chunk_actions, config.widening)
            else {
                break;
            };
            // The branch's last holder keeps its tree: it continues where it stopped
            // instead of another node starting the subtree over.
            let holder = self.branches[branch.0 as usize].holder;
            let index = trusted
                .iter()
                .copied()
                .find(|&i| Some(idle[i]) == holder)
                .unwrap_or(last);
            assign(self, dispatch, index, branch, actions);
        }
    }
}

type Wrap = Box<dyn FnOnce(Result<Message, RequestFailed>) -> Internal + Send>;

/// Why a request to a node brought no answer.
#[derive(Debug, thiserror::Error)]
enum RequestFailed {
    /// The network could not carry it (peer gone, connection closed, bad frame).
    #[error(transparent)]
    Network(#[from] forager_node::net::NetError),
    /// The node did not answer within the assignment deadline.
    #[error("no answer within {} s", .0.as_secs())]
    Silent(Duration),
}

/// Sends a request in the background; its answer comes back as an internal message. The
/// assignment deadline bounds every request: a silent node loses its work.
fn spawn_request(
    requests: &mut JoinSet<()>,
    network: &Network,
    internal: &mpsc::Sender<Internal>,
    limit: Duration,
    node: PeerId,
    request: Message,
    wrap: Wrap,
) {
    let network = network.clone();
    let internal = internal.clone();
    {
        requests.spawn(async move {
            let result = match tokio::time::timeout(limit, network.request(node, request)).await {
                Ok(Ok(message)) => Ok(message),
                Ok(Err(error)) => Err(RequestFailed::from(error)),
                Err(_) => Err(RequestFailed::Silent(limit)),
            };
            let _ = internal.send(wrap(result)).await;
        });
    }
}

impl Actor {
    fn on_internal(&mut self, message: Internal) {
        match message {
            Internal::Released { node, result } => match result {
                Ok(Message::Accepted(_)) => self.saw(node),
                other => tracing::debug!(%node, ?other, "a node did not take a release"),
            },
            Internal::Expanded { task, node, result } => self.on_expand_answer(task, node, result),
            Internal::Reported {
                task,
                node,
                branch,
                result,
                sent,
            } => self.on_progress_answer(task, node, branch, result, sent),
            Internal::Replayed {
                task,
                node,
                pending,
                result,
            } => self.on_replay_answer(task, node, *pending, result),
        }
    }

    /// A node's answer to `Expand`: the start page's candidates, or why not.
    fn on_expand_answer(
        &mut self,
        task: TaskId,
        node: PeerId,
        result: Result<Message, RequestFailed>,
    ) {
        if result.is_ok() {
            self.saw(node);
        }
        let Some(run) = self.tasks.get_mut(&task) else {
            return;
        };
        run.expanding = None;
        match result {
            Ok(Message::Expanded(signed)) if signed_by(&signed.signer, node) => {
                match signed.verify(Domain::Report) {
                    Ok(report) => run.on_expanded(report.clone(), node),
                    Err(_) => run.note_failure("expand report with a bad signature"),
                }
            }
            Ok(Message::Refused { reason, detail }) => {
                run.expand_failed.insert(node);
                run.note_failure(&format!(
                    "node {node} could not open the start page ({reason}): {detail}"
                ));
                // One node's word is not enough to give up (it may be broken or
                // lying): two, or every node of a smaller cluster.
                if reason == RefusalReason::StartPage {
                    run.start_failures.insert(node);
                    if run.start_failures.len() >= self.nodes.len().clamp(1, 2) {
                        run.finish_failing_with(FailureReason::NavigationFailed, detail);
                    }
                }
            }
            Ok(_) => {
                run.expand_failed.insert(node);
                run.note_failure("unexpected answer to expand");
            }
            Err(reason) => {
                run.expand_failed.insert(node);
                run.note_failure(&format!("expand on {node} failed: {reason}"));
            }
        }
    }

    /// A node's answer to an assignment: its signed progress report, or a lost assignment.
    fn on_progress_answer(
        &mut self,
        task: TaskId,
        node: PeerId,
        branch: BranchId,
        result: Result<Message, RequestFailed>,
        sent: Instant,
    ) {
        let metrics = &self.config.metrics;
        metrics
            .assignment_seconds
            .observe(sent.elapsed().as_secs_f64());
        if result.is_ok() {
            self.saw(node);
        }
        let metrics = &self.config.metrics;
        let Some(run) = self.tasks.get_mut(&task) else {
            return;
        };
        let given = run.assigned.remove(&node).map_or(0, |(_, actions)| actions);
        if run.shortcut == Shortcut::Pending(branch) {
            // Tried once: a success it found is verified like any other; a lost answer is
            // not tried again (the longer success stands).
            run.shortcut = Shortcut::Done;
        }
        let reported = matches!(result, Ok(Message::Progress(_)));
        if let Some(b) = run.branches.get_mut(branch.0 as usize) {
            b.in_flight = b.in_flight.saturating_sub(1);
            b.in_flight_actions = b.in_flight_actions.saturating_sub(given);
            if !reported && b.holder == Some(node) {
                // Its tree may be gone with it: any node may take the branch.
                b.holder = None;
            }
        }
        if run.phase == Phase::Done {
            // A late report: the result stands and the journal is closed.
            return;
        }
        match result {
            Ok(Message::Progress(answer)) if signed_by(&answer.report.signer, node) => {
                let signed = &answer.report;
                match signed.verify(Domain::Report) {
                    Ok(report) if report.task == task && report.branch == branch => {
                        metrics.actions.inc_by(u64::from(report.actions));
                        let restores = &metrics.restores;
                        restores
                            .get_or_create(&crate::metrics::label("how", "kept"))
                            .inc_by(report.counters.cache_hits);
                        restores
                            .get_or_create(&crate::metrics::label("how", "fresh"))
                            .inc_by(report.counters.cache_misses);
                        // What stands behind a success in the trajectory (and with
                        // --keep-all, every finished rollout), as signed.
                        let claim = if report.successes.is_empty() && !run.keep_all {
                            None
                        } else {
                            Attestation::of(signed, node.to_string()).ok()
                        };
                        run.on_report(report.clone(), node, claim, &answer.screenshots);
                    }
                    _ => run.note_failure("progress report with a bad signature"),
                }
            }
            Ok(other) => {
                metrics
                    .reassigned
                    .get_or_create(&crate::metrics::label("reason", "no_report"))
                    .inc();
                run.note_failure(&format!("node {node} did not report: {other:?}"));
                run.journal.append(&JournalEvent::Reassigned {
                    node: node.to_string(),
                    branch: branch.0,
                    reason: "no report".into(),
                });
            }
            Err(reason) => {
                let why = match reason {
                    RequestFailed::Network(_) => "network",
                    RequestFailed::Silent(_) => "silent",
                };
                metrics
                    .reassigned
                    .get_or_create(&crate::metrics::label("reason", why))
                    .inc();
                tracing::warn!(%node, branch = branch.0, %reason, "assignment lost; reassigning");
                run.journal.append(&JournalEvent::Reassigned {
                    node: node.to_string(),
                    branch: branch.0,
                    reason: reason.to_string(),
                });
            }
        }
    }

    /// A node's answer to a replay: a reproduction's signed report, or none.
    fn on_replay_answer(
        &mut self,
        task: TaskId,
        node: PeerId,
        mut pending: Pending,
        result: Result<Message, RequestFailed>,
    ) {
        if result.is_ok() {
            self.saw(node);
        }
        let Some(run) = self.tasks.get_mut(&task) else {
            return;
        };
        run.verifying = None;
        if run.phase == Phase::Done {
            return;
        }
        let verified = match result {
            Ok(Message::Replayed(answer)) if signed_by(&answer.report.signer, node) => {
                let signed = &answer.report;
                signed
                    .verify(Domain::Report)
                    .ok()
                    .cloned()
                    .filter(|report| screenshots_match(report, &answer.screenshots))
                    .zip(Attestation::of(signed, node.to_string()).ok())
                    .map(|(report, attestation)| (report, attestation, answer.screenshots))
            }
            _ => None,
        };
        match verified {
            Some((report, attestation, screenshots)) => {
                run.on_replayed(report, attestation, screenshots, pending, node);
                let verdict = if run.phase == Phase::Done {
                    "reproduced"
                } else {
                    "not_reproduced"
                };
                self.config
                    .metrics
                    .reproductions
                    .get_or_create(&crate::metrics::label("verdict", verdict))
                    .inc();
            }
            None => {
                // The verifier gave no valid answer: another node will be asked.
                run.note_failure(&format!("replay on {node} gave no valid answer"));
                pending.tried.insert(node);
                let left = self
                    .nodes
                    .iter()
                    .any(|n| *n != pending.finder && !pending.tried.contains(n));
                if left {
                    run.unverified.push_back(pending);
                } else {
                    run.note_failure("no node left to reproduce a success");
                    run.rejected_paths.insert(pending.path.actions);
                }
            }
        }
    }
}

/// The plain files of a finished task's folder (its journal, result, trajectory, workflow,
/// report, screenshots), by name.
async fn list_task_files(dir: PathBuf) -> Result<Vec<TaskFile>, Refusal> {
    let storage = |e: std::io::Error| {
        Refusal::new(
            RefusalReason::Storage,
            format!("cannot read {}: {e}", dir.display()),
        )
    };
    let mut entries = tokio::fs::read_dir(&dir).await.map_err(storage)?;
    let mut files = Vec::new();
    while let Some(entry) = entries.next_entry().await.map_err(storage)? {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(meta) = entry.metadata().await else {
            continue;
        };
        if meta.is_file() && forager_protocol::wire::is_task_file_name(&name) {
            files.push(TaskFile {
                name,
                bytes: meta.len(),
            });
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    files.truncate(MAX_TASK_FILES);
    Ok(files)
}

/// Up to [`MAX_CHUNK_BYTES`] of one file of a finished task's folder, from `offset`.
async fn read_task_file(dir: PathBuf, name: &str, offset: u64) -> Result<FileChunk, Refusal> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let missing = || {
        Refusal::new(
            RefusalReason::NoSuchFile,
            format!("the task's folder has no file {name:?}"),
        )
    };
    if !forager_protocol::wire::is_task_file_name(name) {
        return Err(missing());
    }
    let path = dir.join(name);
    let mut file = tokio::fs::File::open(&path).await.map_err(|_| missing())?;
    let meta = file.metadata().await.map_err(|_| missing())?;
    if !meta.is_file() {
        return Err(missing());
    }
    let total = meta.len();
    let offset = offset.min(total);
    file.seek(std::io::SeekFrom::Start(offset))
        .await
        .map_err(|e| Refusal::new(RefusalReason::Storage, e.to_string()))?;
    let want = (total - offset).min(MAX_CHUNK_BYTES as u64) as usize;
    let mut bytes = vec![0; want];
    file.read_exact(&mut bytes)
        .await
        .map_err(|e| Refusal::new(RefusalReason::Storage, e.to_string()))?;
    Ok(FileChunk {
        offset,
        total,
        bytes,
    })
}

/// Whether the screenshots beside a replay report are the ones it signed.
fn screenshots_match(report: &ReplayReport, screenshots: &[Vec<u8>]) -> bool {
    report.screenshots.len() == screenshots.len()
        && report
            .screenshots
            .iter()
            .zip(screenshots)
            .all(|(digest, bytes)| match digest {
                Some(d) => *d == Digest32::of(bytes),
                None => bytes.is_empty(),
            })
}

fn signed_by(key: &ed25519_dalek::VerifyingKey, node: PeerId) -> bool {
    peer_id_of(key) == Some(node)
}

impl TaskRun {
    fn new(id: TaskId, task: TaskSpec, journal: Journal, config: &QueenConfig) -> TaskRun {
        // The start page is the queen's root, reached at depth 0 by no branch: a link back to
        // it leads nowhere new for any of them.
        let start = forager_node::policy::location_of(&task.start_url);
        TaskRun {
            id,
            task,
            key: config.signing_key.clone(),
            keep_all: config.keep_all,
            kept_reports: Vec::new(),
            journaled_trees: HashMap::new(),
            started: Instant::now(),
            phase: Phase::Expanding,
            journal,
            branches: Vec::new(),
            approvals: Vec::new(),
            actions: 0,
            replayed: 0,
            cost: Cost::default(),
            unverified: VecDeque::new(),
            held: None,
            rejected_paths: HashSet::new(),
            assigned: HashMap::new(),
            verifying: None,
            writes_claimed: HashSet::new(),
            expanding: None,
            contributors: HashSet::new(),
            released: false,
            result: None,
            artifacts: None,
            writing: false,
            failures: 0,
            network: NetworkSummary::default(),
            counters: BranchCounters::default(),
            distrusted: HashSet::new(),
            locations: HashMap::from([(start, (0, ROOT_OWNER))]),
            states: HashMap::new(),
            expand_failed: HashSet::new(),
            start_failures: HashSet::new(),
            memory: config.memory.clone(),
            recalled: None,
            memory_use: None,
            shortcut: Shortcut::Untried,
        }
    }

    /// Rebuilds state from a journal entry (resuming after a restart).
    fn replay_event(&mut self, event: JournalEvent) {
        match event {
            JournalEvent::WriteClaimed { key, .. } => {
                self.writes_claimed.insert(key);
            }
            JournalEvent::Recalled {
                workflow,
                matched,
                steps,
                support,
            } => {
                if let Some(id) = Digest32::from_hex(&workflow) {
                    self.recall(crate::memory::Recalled {
                        id,
                        matched,
                        steps,
                        support,
                    });
                }
            }
            JournalEvent::Branches {
                candidates, root, ..
            } => {
                self.states.insert(root, (0, ROOT_OWNER));
                self.set_branches(candidates);
            }
            JournalEvent::Shortcut { steps } => self.add_shortcut(steps),
            JournalEvent::Report {
                branch,
                visits,
                value_sum,
                actions,
                exhausted,
                prefix_fingerprints,
                locations,
                states,
                ..
            } => {
                self.actions += actions;
                self.learn_locations(BranchId(branch), &locations);
                self.learn_states(BranchId(branch), &states);
                if let Some(b) = self.branches.get_mut(branch as usize) {
                    b.assignments += 1;
                    b.visits += visits;
                    b.value_sum += value_sum.clamp(0.0, f64::from(visits));
                    b.exhausted |= exhausted;
                    if !prefix_fingerprints.is_empty() {
                        b.prefix_fingerprints = prefix_fingerprints;
                    }
                    if let Some(m) = &mut b.memory {
                        m.reported = true;
                    }
                }
                if self.shortcut == Shortcut::Pending(BranchId(branch)) {
                    self.shortcut = Shortcut::Done;
                }
            }
            JournalEvent::Success {
                path,
                finder,
                claim,
                ..
            } => {
                if let Ok(finder) = finder.parse() {
                    self.unverified.push_back(Pending {
                        path,
                        finder,
                        tried: HashSet::new(),
                        failed_replays: 0,
                        transient_failures: 0,
                        claim,
                        // Not journaled: attested steps of a resumed task go without pictures.
                        shots: Vec::new(),
                    });
                }
            }
            JournalEvent::NotReproduced {
                actions, rejected, ..
            } => {
                let same = |p: &Pending| {
                    p.path.actions.iter().map(Action::label).collect::<Vec<_>>() == actions
                };
                if rejected {
                    self.unverified.retain(|p| !same(p));
                } else if let Some(p) = self.unverified.iter_mut().find(|p| same(p)) {
                    p.failed_replays += 1;
                }
            }
            _ => {}
        }
    }

    /// The waiting success to reproduce next, if no reproduction runs: the shortest (the
    /// earliest of those: it makes the better workflow), by any node but its finder and those
    /// that tried it (nodes run two jobs at once, so a busy one can take it; the finder only
    /// in a one-node cluster). Marks it in flight and journals it.
    fn next_verification(
        &mut self,
        nodes: &HashSet<PeerId>,
        busy: &HashSet<PeerId>,
    ) -> Option<(PeerId, Message, Pending)> {
        if self.verifying.is_some() {
            return None;
        }
        let index = self
            .unverified
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (p.path.actions.len(), *i))
            .map(|(i, _)| i)?;
        let pending = self.unverified.get(index)?.clone();
        let mut candidates: Vec<PeerId> = nodes.iter().copied().collect();
        candidates.sort();
        let others = candidates.len() > 1;
        let verifier = candidates
            .iter()
            .filter(|n| (!others || **n != pending.finder) && !pending.tried.contains(n))
            .min_by_key(|n| busy.contains(n))
            .copied()?;
        self.unverified.remove(index);
        self.verifying = Some(verifier);
        let path = &pending.path;
        self.journal.append(&JournalEvent::Verifying {
            node: verifier.to_string(),
            finder: pending.finder.to_string(),
            actions: path.actions.iter().map(Action::label).collect(),
        });
        let request = Message::Replay(Box::new(ReplayRequest {
            task: self.task.clone(),
            task_id: self.id,
            reproduce: path.reproducible_steps(&self.task) as u32,
            path: path.clone(),
        }));
        Some((verifier, request, pending))
    }

    /// Gives `branch` to `node` for `actions` actions: marks it in flight (virtual loss, its
    /// holder), journals it, and builds the assignment.
    fn assign(
        &mut self,
        node: PeerId,
        branch: BranchId,
        actions: u32,
        deadline_ms: u64,
    ) -> Message {
        self.assigned.insert(node, (branch, actions));
        self.contributors.insert(node);
        let b = &mut self.branches[branch.0 as usize];
        b.in_flight += 1;
        b.in_flight_actions += actions;
        b.holder = Some(node);
        let prefix = b.path();
        let expected = b.prefix_fingerprints.clone();
        let workflow = b.memory.is_some() || b.shortcut;
        self.journal.append(&JournalEvent::Assigned {
            node: node.to_string(),
            branch: branch.0,
            action: prefix
                .iter()
                .map(Action::label)
                .collect::<Vec<_>>()
                .join(" → "),
            actions,
        });
        Message::Assign(Box::new(BranchAssignment {
            task: self.task.clone(),
            task_id: self.id,
            branch,
            prefix,
            expected,
            actions,
            deadline_ms,
            known_locations: self
                .locations
                .iter()
                .filter(|(_, (_, owner))| *owner != branch)
                .map(|(&location, &(depth, _))| KnownLocation { location, depth })
                .collect(),
            known_states: self.known_states(branch),
            workflow,
        }))
    }

    /// Takes a remembered workflow as the task's first branch (see `set_branches`).
    fn recall(&mut self, recalled: crate::memory::Recalled) {
        self.memory_use = Some(MemoryUse {
            workflow: recalled.id.to_hex(),
            matched: recalled.matched.as_str().into(),
            steps: recalled.steps.len() as u32,
            reached: 0,
            worked: false,
        });
        self.recalled = Some(recalled);
    }

    fn set_branches(&mut self, candidates: Vec<WireCandidate>) {
        // The consents were checked when the task was accepted; here they are matched.
        let task = &self.task;
        let (branches, approvals) = branch_candidates(candidates, task.risk_ceiling, |c| {
            task.consents
                .iter()
                .any(|s| s.value.permits(&[], c.key, c.risk))
        });
        for candidate in approvals {
            self.approvals.push(FoundPath::new(
                vec![candidate.action.clone()],
                Vec::new(),
                vec![candidate.risk],
            ));
        }
        // A consent for an action past the start page resumes there: a branch whose prefix is
        // the approved path and the approved action, tried first (its prior is above any
        // other's). Numbered after the start page's branches, which keep their order.
        let resumes: Vec<(Vec<Action>, WireCandidate)> = self
            .task
            .consents
            .iter()
            .filter(|c| !c.value.prefix.is_empty())
            .map(|c| {
                let consent = &c.value;
                (
                    consent.prefix.iter().map(|s| s.action.clone()).collect(),
                    WireCandidate {
                        action: consent.action.action.clone(),
                        prior: 2.0,
                        risk: consent.risk,
                        key: consent.action.key,
                        target: None,
                    },
                )
            })
            .collect();
        self.branches = branches
            .into_iter()
            .map(|candidate| (Vec::new(), candidate))
            .chain(resumes)
            .enumerate()
            .map(|(i, (lead, candidate))| Branch::new(BranchId(i as u64), lead, candidate))
            .collect();
        // A remembered workflow with this task's values: one branch whose prefix is its
        // steps, tried first and alone (numbered last, so the others keep their numbers).
        if let Some(recalled) = &self.recalled
            && let Some(((last, _), lead)) = recalled.steps.split_last()
        {
            let risk = recalled
                .steps
                .iter()
                .map(|(_, r)| *r)
                .max()
                .unwrap_or(RiskClass::ReadOnly);
            let mut branch = Branch::new(
                BranchId(self.branches.len() as u64),
                lead.iter().map(|(a, _)| a.clone()).collect(),
                WireCandidate {
                    action: last.clone(),
                    // A workflow: above any start-page action's (their priors sum to 1) and a
                    // consent's resumption (2), tried first. A way in (a shared prefix, a
                    // first part's workflow): above the start page's too, higher the more
                    // verified successes began so.
                    prior: if recalled.matched.is_way_in() {
                        1.0 + 0.1 * f64::from(recalled.support)
                    } else {
                        3.0
                    },
                    risk,
                    key: forager_node::embed::action_key(&last.label()),
                    target: None,
                },
            );
            branch.memory = Some(MemoryBranch {
                id: recalled.id,
                reported: false,
                whole: !recalled.matched.is_way_in(),
            });
            self.branches.push(branch);
        }
        self.phase = Phase::Searching;
    }

    fn on_expanded(&mut self, report: forager_protocol::wire::ExpandReport, node: PeerId) {
        self.contributors.insert(node);
        // One page read: a verdict, a ranking and a recovery at most.
        self.counters
            .model
            .add(&bounded_model_usage(&report.model, 1));
        if !report.success
            && let Some(memory) = &self.memory
            && let Some(recalled) = memory.recall(&self.task)
        {
            tracing::info!(task = %self.id, workflow = %recalled.id.to_hex(), steps = recalled.steps.len(), "a remembered workflow is tried first");
            self.journal.append(&JournalEvent::Recalled {
                workflow: recalled.id.to_hex(),
                matched: recalled.matched,
                steps: recalled.steps.clone(),
                support: recalled.support,
            });
            self.recall(recalled);
        }
        self.journal.append(&JournalEvent::Branches {
            node: node.to_string(),
            root: report.root,
            candidates: report.candidates.clone(),
        });
        self.states.insert(report.root, (0, ROOT_OWNER));
        if report.session_expired && !report.success {
            self.finish_failing(FailureReason::SessionExpired);
            return;
        }
        if report.success {
            // The start page already satisfies the task: an empty path, trivially reproduced.
            self.finish_pass(ReproducedPass {
                steps: Vec::new(),
                verification: Vec::new(),
                finder: node,
                verifier: node,
                pages: Vec::new(),
                evidence: None,
                answer: None,
            });
            return;
        }
        self.set_branches(report.candidates);
        if self.branches.is_empty() {
            let reason = if self.approvals.is_empty() {
                FailureReason::SearchExhausted
            } else {
                FailureReason::ApprovalRequired
            };
            self.finish_failing(reason);
        }
    }

    fn remaining(&self) -> u32 {
        let in_flight: u32 = self.assigned.values().map(|(_, actions)| actions).sum();
        self.task
            .budget
            .actions
            .saturating_sub(self.actions + in_flight)
    }

    /// The next branch to assign and how many actions to give it: the queen's root is searched
    /// like a node's tree root — the production-aware score over the branches' reported
    /// iterations and mean values, virtual loss for the actions in flight, progressive widening
    /// opening unvisited branches in prior order.
    fn pick_branch(&self, chunk: u32, widening: Widening) -> Option<(BranchId, u32)> {
        let remaining = self.remaining();
        if remaining == 0 {
            return None;
        }
        // A remembered workflow, or a shared way in, is tried first, alone: the others wait
        // for its report. A whole chunk: the page it leads to is its branch's alone (another
        // branch that reaches it stops there), and a search that opens the other branches
        // first comes back to a visited one only when their allowance is spent (measured on
        // the Roundup sequence: with 6 actions past the login, `new-bug` failed).
        if let Some(b) = self
            .branches
            .iter()
            .find(|b| b.memory.is_some_and(|m| !m.reported) && !b.exhausted)
        {
            return (b.in_flight == 0).then(|| (b.id, chunk.min(remaining).max(1)));
        }
        let visits = |b: &Branch| f64::from(b.visits) + f64::from(b.in_flight_actions);
        let parent: f64 = self.branches.iter().map(visits).sum();
        let opened = self
            .branches
            .iter()
            .filter(|b| b.assignments > 0 || b.in_flight > 0)
            .count();
        let allowance = widening.allowed(parent as u32);
        let mut best: Option<(BranchId, f64)> = None;
        // One holder at a time: a node's search is a deterministic function of the branch, so
        // a second node on the same branch would only repeat the first one's work (a node
        // left idle is the next success's reproducer).
        for b in self
            .branches
            .iter()
            .filter(|b| !b.exhausted && b.in_flight == 0 && !b.shortcut)
        {
            let fresh = b.assignments == 0 && b.in_flight == 0;
            if fresh && opened >= allowance && best.is_some() {
                continue;
            }
            let score = if fresh || b.visits == 0 && b.in_flight_actions == 0 {
                // Unvisited: by prior, above any visited branch while the allowance lasts.
                1e6 + b.candidate.prior
            } else {
                uct_score(
                    &self.task.weights,
                    &ScoreInputs {
                        value_sum: b.value_sum,
                        visits: f64::from(b.visits),
                        virtual_visits: f64::from(b.in_flight_actions),
                        parent_visits: parent,
                        replay_similarity: 0.0,
                        risk: b.candidate.risk.normalised(),
                        cost: 0.0,
                        auth: 0.0,
                    },
                )
            };
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((b.id, score));
            }
        }
        best.map(|(id, _)| (id, chunk.min(remaining).max(1)))
    }

    /// The states owned elsewhere than `branch`, shallowest first (in a stable order).
    fn known_states(&self, branch: BranchId) -> Vec<KnownState> {
        let mut known: Vec<KnownState> = self
            .states
            .iter()
            .filter(|(_, (_, owner))| *owner != branch)
            .map(|(&fingerprint, &(depth, _))| KnownState { fingerprint, depth })
            .collect();
        known.sort_by_key(|k| (k.depth, k.fingerprint));
        known
    }

    fn learn_states(&mut self, branch: BranchId, states: &[KnownState]) {
        for k in states {
            let entry = self
                .states
                .entry(k.fingerprint)
                .or_insert((k.depth, branch));
            if k.depth < entry.0 {
                *entry = (k.depth, branch);
            }
        }
    }

    fn learn_locations(&mut self, branch: BranchId, locations: &[KnownLocation]) {
        for k in locations {
            let entry = self
                .locations
                .entry(k.location)
                .or_insert((k.depth, branch));
            if k.depth < entry.0 {
                *entry = (k.depth, branch);
            }
        }
    }

    fn merge_network(&mut self, network: &NetworkSummary) {
        let n = &mut self.network;
        n.allowed_requests += network.allowed_requests;
        n.blocked_requests += network.blocked_requests;
        for origin in &network.allowed_origins {
            if !n.allowed_origins.contains(origin) {
                n.allowed_origins.push(origin.clone());
            }
        }
        n.allowed_origins.sort();
        for url in &network.blocked_urls {
            if n.blocked_urls.len() < 100 && !n.blocked_urls.contains(url) {
                n.blocked_urls.push(url.clone());
            }
        }
        n.refused_writes += network.refused_writes;
        n.background_refused += network.background_refused;
        n.view_state_refused += network.view_state_refused;
        for request in &network.background_requests {
            if n.background_requests.len() < 100 && !n.background_requests.contains(request) {
                n.background_requests.push(request.clone());
            }
        }
        for request in &network.refused_write_requests {
            if n.refused_write_requests.len() < 100 && !n.refused_write_requests.contains(request) {
                n.refused_write_requests.push(request.clone());
            }
        }
    }

    /// Adds a report's counters, bounded by what its actions can have caused: a restore, a
    /// node or a prune per executed action (and the branch root), a few named reasons.
    fn merge_counters(&mut self, report: &ProgressReport) {
        let most = u64::from(report.actions) + report.prefix_fingerprints.len() as u64 + 1;
        let c = &report.counters;
        self.counters.cache_hits += c.cache_hits.min(most);
        self.counters.cache_misses += c.cache_misses.min(most);
        // A page read per executed action and restore at most, each within the request's
        // own time.
        let pages = c.pages_read.min(2 * most);
        self.counters.pages_read += pages;
        self.counters.reading_us += c.reading_us.min(pages * 60_000_000);
        self.counters.remembered += c.remembered.min(most);
        self.counters.nodes += c.nodes.min(most);
        let named = |reason: &str| {
            !reason.is_empty()
                && reason.len() <= 32
                && reason.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        };
        for (reason, count) in c
            .pruned
            .iter()
            .filter(|(r, _)| named(r))
            .take(MAX_PRUNE_REASONS)
        {
            let known = self.counters.pruned.len() < MAX_PRUNE_REASONS;
            if known || self.counters.pruned.contains_key(reason) {
                *self.counters.pruned.entry(reason.clone()).or_default() +=
                    (*count).min(u32::try_from(most).unwrap_or(u32::MAX));
            }
        }
        self.counters
            .model
            .add(&bounded_model_usage(&c.model, most));
    }

    fn on_report(
        &mut self,
        report: ProgressReport,
        node: PeerId,
        claim: Option<Attestation>,
        screenshots: &[Vec<u8>],
    ) {
        self.merge_network(&report.network);
        self.merge_counters(&report);
        if report.session_ended && report.successes.is_empty() && self.task.capsule.is_some() {
            // Every branch stands on the one session the server ended: no branch can go on.
            tracing::warn!(%node, "a branch's root asks to log in again: the server ended the mounted session");
            self.actions += report.actions;
            self.finish_failing(FailureReason::SessionExpired);
            return;
        }
        self.actions += report.actions;
        self.replayed += report.replayed;
        self.cost = self.cost.plus(report.cost);
        if let Some(b) = self.branches.get_mut(report.branch.0 as usize) {
            b.assignments += 1;
            b.visits += report.visits;
            // A node's numbers are bounded here: a lie can only waste the liar's own branch.
            b.value_sum += report.value_sum.clamp(0.0, f64::from(report.visits));
            b.exhausted |= report.exhausted;
            if !report.prefix_fingerprints.is_empty() {
                b.prefix_fingerprints = report.prefix_fingerprints.clone();
            }
        }
        self.note_recalled(&report);
        // Each executed action reaches at most one new location: more is a lie, and lies here
        // could hide states from the other searches.
        let allowed = report.actions as usize + report.prefix_fingerprints.len() + 1;
        let locations: Vec<KnownLocation> =
            report.locations.iter().copied().take(allowed).collect();
        self.learn_locations(report.branch, &locations);
        // Each executed action reaches at most one state, too.
        let states: Vec<KnownState> = report.states.iter().copied().take(allowed).collect();
        self.learn_states(report.branch, &states);
        let tree = self.journal_tree(node, report.branch.0, &report.tree);
        if self.keep_all
            && let Some(attestation) = &claim
        {
            self.keep_report(attestation.clone(), node, &report);
        }
        let claim = claim.filter(|_| !report.successes.is_empty());
        self.journal.append(&JournalEvent::Report {
            node: node.to_string(),
            branch: report.branch.0,
            visits: report.visits,
            value_sum: report.value_sum,
            best_value: report.best_value,
            actions: report.actions,
            exhausted: report.exhausted,
            prefix_fingerprints: report.prefix_fingerprints.clone(),
            error: report.error.clone(),
            locations,
            states,
            replayed: report.replayed,
            cost_ms: report.cost.browser_ms,
            tree,
        });
        for approval in report.approvals {
            if !self.approvals.iter().any(|a| a.actions == approval.actions) {
                self.approvals.push(approval);
            }
        }
        for path in report.successes {
            if self.rejected_paths.contains(&path.actions)
                || self
                    .unverified
                    .iter()
                    .any(|p| p.path.actions == path.actions)
            {
                continue;
            }
            self.journal.append(&JournalEvent::Success {
                finder: node.to_string(),
                actions: path.actions.iter().map(Action::label).collect(),
                path: path.clone(),
                claim: claim.clone(),
            });
            // Each screenshot the report names by digest, at its step; any other is dropped.
            let shots = path
                .seen
                .iter()
                .map(|seen| {
                    seen.screenshot
                        .and_then(|d| screenshots.iter().find(|b| Digest32::of(b) == d))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            self.try_shortcut(&path);
            self.unverified.push_back(Pending {
                path,
                finder: node,
                tried: HashSet::new(),
                failed_replays: 0,
                transient_failures: 0,
                claim: claim.clone(),
                shots,
            });
        }
    }

    /// The first report on a remembered workflow's branch says how it fared: it worked when
    /// its own steps (all of them, or fewer) reached a success; otherwise the search went on
    /// from the last page they reached.
    fn note_recalled(&mut self, report: &ProgressReport) {
        let Some(b) = self.branches.get_mut(report.branch.0 as usize) else {
            return;
        };
        let Some(MemoryBranch {
            id,
            reported: false,
            whole,
        }) = b.memory
        else {
            return;
        };
        if let Some(m) = &mut b.memory {
            m.reported = true;
        }
        let steps = b.lead.len() + 1;
        let reached = report.prefix_fingerprints.len().min(steps);
        let worked = report
            .successes
            .iter()
            .any(|p| p.actions.len() <= steps && b.path().starts_with(&p.actions));
        if let Some(used) = &mut self.memory_use {
            used.reached = reached as u32;
            used.worked = worked;
        }
        tracing::info!(task = %self.id, workflow = %id.to_hex(), reached, steps, worked, "the remembered workflow reported");
        if let Some(memory) = &self.memory
            && whole
        {
            memory.note(&id, worked);
        }
    }

    fn on_replayed(
        &mut self,
        report: ReplayReport,
        attestation: Attestation,
        screenshots: Vec<Vec<u8>>,
        mut pending: Pending,
        verifier: PeerId,
    ) {
        let finder = pending.finder;
        self.contributors.insert(verifier);
        self.merge_network(&report.network);
        let most = u64::from(report.executed) + 1;
        self.counters
            .model
            .add(&bounded_model_usage(&report.model, most));
        let path = &pending.path;
        let steps = path.actions.len();
        let reproducible = path.reproducible_steps(&self.task);
        let verdict =
            judge_reproduction(&self.task, path, reproducible, &report).and_then(|after_check| {
                // Every picture the finder's report names must have come with it.
                match (reproducible..steps).find(|&i| {
                    path.seen.get(i).is_some_and(|s| s.screenshot.is_some())
                        && pending.shots.get(i).is_none_or(Vec::is_empty)
                }) {
                    Some(i) => Err(format!(
                        "the finder named a screenshot of step {} and did not send it",
                        i + 1
                    )),
                    None => Ok(after_check),
                }
            });
        if let Ok(after_check) = verdict {
            let path = pending.path;
            let verification: Vec<StepVerification> = (0..steps)
                .map(|i| {
                    if i < reproducible {
                        StepVerification::Reproduced
                    } else {
                        StepVerification::Attested
                    }
                })
                .collect();
            self.journal.append(&JournalEvent::Verified {
                finder: finder.to_string(),
                verifier: verifier.to_string(),
                actions: path.actions.iter().map(Action::label).collect(),
                steps: verification.clone(),
                after_check,
            });
            // The reproducer's pages and pictures where it went; the finder's past a write.
            let pages = verified_pages(&report, &path, reproducible);
            let mut screenshots = screenshots;
            screenshots.truncate(reproducible);
            for i in screenshots.len()..steps {
                screenshots.push(pending.shots.get(i).cloned().unwrap_or_default());
            }
            let pass = ReproducedPass {
                steps: path
                    .actions
                    .iter()
                    .cloned()
                    .zip(path.fingerprints.iter().copied())
                    .zip(path.risks.iter().copied())
                    .map(|((a, f), r)| (a, f, r))
                    .collect(),
                verification,
                finder,
                verifier,
                pages,
                evidence: pending.claim.map(|found_by| Evidence {
                    found_by,
                    reproduced_by: attestation,
                    screenshots,
                }),
                answer: report.answer.clone(),
            };
            if self.shorter_waiting(steps) {
                tracing::info!(
                    task = %self.id,
                    steps,
                    "a reproduced success is held while a shorter one is reproduced"
                );
                self.held = Some(pass);
            } else {
                // Shorter than any held one (else it would have waited): the held one goes.
                self.held = None;
                self.finish_pass(pass);
            }
        } else if let Err(reason) = verdict {
            if report.transient && pending.transient_failures < TRANSIENT_RETRIES {
                pending.transient_failures += 1;
                tracing::warn!(%finder, %verifier, %reason, "a success could not be replayed by its verifier: it is tried again");
                self.unverified.push_back(pending);
                return;
            }
            tracing::warn!(%finder, %verifier, %reason, "a success was not reproduced");
            pending.failed_replays += 1;
            let rejected = pending.failed_replays >= REPRODUCTION_ATTEMPTS;
            self.journal.append(&JournalEvent::NotReproduced {
                finder: finder.to_string(),
                verifier: verifier.to_string(),
                actions: pending.path.actions.iter().map(Action::label).collect(),
                reason,
                rejected,
            });
            if rejected {
                // Broken or lying, the finder gets no more of this task's work.
                self.distrusted.insert(finder);
                self.rejected_paths.insert(pending.path.actions);
            } else {
                self.unverified.push_back(pending);
            }
        }
    }

    /// The part of a reported tree the journal does not hold yet (new nodes, and nodes whose
    /// numbers or status changed).
    fn journal_tree(
        &mut self,
        node: PeerId,
        branch: u64,
        tree: &TreeSnapshot,
    ) -> Option<JournalTree> {
        if tree.nodes.is_empty() {
            return None;
        }
        let seen = self
            .journaled_trees
            .entry((node, branch, tree.instance))
            .or_default();
        let mut changed = Vec::new();
        for n in &tree.nodes {
            let entry = JournalTreeNode {
                id: n.id,
                parent: n.parent,
                label: n.action.as_ref().map(Action::label),
                status: n.status.kind().to_owned(),
                visits: n.visits,
                value: n.mean_value.clamp(0.0, 1.0),
                risk: n.risk.level(),
                cost_ms: n.cost_ms,
                replay: if n.replay.is_finite() {
                    n.replay.clamp(0.0, 1.0)
                } else {
                    0.0
                },
                detail: match &n.status {
                    TreeStatus::Pruned(forager_protocol::PruneReason::ActionFailed { reason }) => {
                        Some(reason.chars().take(200).collect())
                    }
                    _ => None,
                },
            };
            if seen.get(&n.id) != Some(&entry) {
                seen.insert(n.id, entry.clone());
                changed.push(entry);
            }
        }
        Some(JournalTree {
            instance: tree.instance,
            nodes: changed,
            omitted: tree.omitted,
        })
    }

    /// Keeps a signed report for `rollouts.json` when its tree holds a node no kept report of
    /// the same tree holds yet.
    fn keep_report(&mut self, attestation: Attestation, node: PeerId, report: &ProgressReport) {
        let known: HashSet<u32> = self
            .kept_reports
            .iter()
            .filter(|k| {
                k.node == node
                    && k.branch == report.branch.0
                    && k.tree.instance == report.tree.instance
            })
            .flat_map(|k| k.tree.nodes.iter().map(|n| n.id))
            .collect();
        if report.tree.nodes.iter().all(|n| known.contains(&n.id)) {
            return;
        }
        let prefix = self
            .branches
            .get(report.branch.0 as usize)
            .map(Branch::path)
            .unwrap_or_default();
        self.kept_reports.push(KeptReport {
            attestation,
            node,
            branch: report.branch.0,
            prefix,
            tree: report.tree.clone(),
        });
    }

    fn note_failure(&mut self, what: &str) {
        self.failures += 1;
        tracing::warn!(task = %self.id, "{what}");
        self.journal
            .append(&JournalEvent::Problem { what: what.into() });
    }

    /// Whether the task must stop now, and why.
    fn over(&self) -> Option<FailureReason> {
        if self.started.elapsed() >= Duration::from_secs(u64::from(self.task.budget.wall_time_secs))
        {
            return Some(FailureReason::Timeout);
        }
        if self.phase != Phase::Searching
            || !self.assigned.is_empty()
            || self.verifying.is_some()
            || !self.unverified.is_empty()
        {
            return None;
        }
        if self.remaining() == 0 {
            // Blocked actions explain a failure better than the budget: the search found a
            // way it may not take.
            return Some(if self.approvals.is_empty() {
                FailureReason::BudgetExhausted
            } else {
                FailureReason::ApprovalRequired
            });
        }
        if self.branches.iter().all(|b| b.exhausted) {
            return Some(if !self.rejected_paths.is_empty() {
                FailureReason::NotReproduced
            } else if self.approvals.is_empty() {
                FailureReason::SearchExhausted
            } else {
                FailureReason::ApprovalRequired
            });
        }
        None
    }

    fn base_result(&self) -> RunResult {
        RunResult {
            version: RESULT_VERSION,
            status: Status::Failing,
            task_id: self.id.to_string(),
            goal: self.task.goal.clone(),
            start_url: self.task.start_url.clone(),
            seed: self.task.seed,
            steps: Vec::new(),
            error: None,
            approval_required: self
                .approvals
                .iter()
                .filter_map(|a| {
                    let (last, prefix) = a.actions.split_last()?;
                    Some(ApprovalNeeded {
                        prefix: prefix.iter().map(Action::label).collect(),
                        label: last.label(),
                        risk: a.risks.last().copied().unwrap_or(RiskClass::Destructive),
                        actions: a.actions.clone(),
                    })
                })
                .collect(),
            metrics: Metrics {
                actions: self.actions,
                replayed_actions: self.replayed,
                browser_ms: self.cost.browser_ms,
                // The ledgers' count where a model was asked (it also holds what expansions
                // and reproductions asked, which no step's cost carries).
                tokens: if self.counters.model.is_empty() {
                    self.cost.tokens
                } else {
                    self.counters.model.tokens()
                },
                // The queen's root and its branches, then what the nodes grew below them.
                nodes: 1 + self.branches.len() as u64 + self.counters.nodes,
                iterations: self.branches.iter().map(|b| u64::from(b.visits)).sum(),
                wall_ms: self.started.elapsed().as_millis() as u64,
                workers: self.contributors.len() as u32,
                cache_hits: self.counters.cache_hits,
                cache_misses: self.counters.cache_misses,
                pages_read: self.counters.pages_read,
                reading_ms: self.counters.reading_us / 1000,
                remembered: self.counters.remembered,
                pruned: self.counters.pruned.clone(),
                model: self.counters.model.clone(),
                memory: self.memory_use.clone(),
            },
            network: self.network.clone(),
            answer: None,
            judged_by: if self.task.success.is_empty() {
                forager_protocol::llm::Judge::Model
            } else {
                forager_protocol::llm::Judge::Predicates
            },
        }
    }

    /// Whether a success shorter than `steps` actions waits for its reproduction, or a
    /// shortcut of fewer steps for its node's answer.
    fn shorter_waiting(&self, steps: usize) -> bool {
        let shortcut = match self.shortcut {
            Shortcut::Pending(b) => self
                .branches
                .get(b.0 as usize)
                .is_some_and(|b| b.lead.len() + 1 < steps),
            _ => false,
        };
        shortcut || self.unverified.iter().any(|p| p.path.actions.len() < steps)
    }

    /// Adds the shortcut of a success that took a detour off the start page, if it has one
    /// and none was tried: a branch replaying the shorter path, assigned beside the
    /// success's reproduction (`shortcut_to_assign`).
    fn try_shortcut(&mut self, path: &FoundPath) {
        if self.shortcut != Shortcut::Untried || self.remaining() == 0 {
            return;
        }
        let start: Vec<&WireCandidate> = self
            .branches
            .iter()
            .filter(|b| b.lead.is_empty() && b.memory.is_none() && !b.shortcut)
            .map(|b| &b.candidate)
            .collect();
        let Some(steps) = crate::shortcut::shortcut_of(&self.task, path, &start) else {
            return;
        };
        tracing::info!(
            task = %self.id,
            from = path.actions.len(),
            to = steps.len(),
            "a success took a detour off the start page: its shortcut is tried"
        );
        self.journal.append(&JournalEvent::Shortcut {
            steps: steps.clone(),
        });
        self.add_shortcut(steps);
    }

    /// The shortcut's branch: the shorter path as a workflow's lead and last step.
    fn add_shortcut(&mut self, steps: Vec<(Action, RiskClass)>) {
        let risk = steps
            .iter()
            .map(|(_, r)| *r)
            .max()
            .unwrap_or(RiskClass::ReadOnly);
        let mut actions: Vec<Action> = steps.into_iter().map(|(a, _)| a).collect();
        let Some(last) = actions.pop() else {
            return;
        };
        let id = BranchId(self.branches.len() as u64);
        let mut branch = Branch::new(
            id,
            actions,
            WireCandidate {
                key: forager_node::embed::action_key(&last.label()),
                action: last,
                prior: 0.0,
                risk,
                target: None,
            },
        );
        branch.shortcut = true;
        self.branches.push(branch);
        self.shortcut = Shortcut::Pending(id);
    }

    /// The shortcut's branch and its actions, while it waits for a node (it goes even while
    /// a success waits for its reproduction: that is when it is worth trying).
    fn shortcut_to_assign(&self) -> Option<(BranchId, u32)> {
        let Shortcut::Pending(id) = self.shortcut else {
            return None;
        };
        let b = self.branches.get(id.0 as usize)?;
        (b.in_flight == 0 && b.assignments == 0)
            .then(|| (id, (b.lead.len() as u32 + 1).min(self.remaining()).max(1)))
    }

    /// Publishes the held success if nothing shorter is left to reproduce, or if the time is
    /// up; whether it did.
    fn publish_held(&mut self) -> bool {
        let Some(held) = self
            .held
            .as_ref()
            .filter(|_| self.phase == Phase::Searching)
        else {
            return false;
        };
        let timed_out = self.started.elapsed()
            >= Duration::from_secs(u64::from(self.task.budget.wall_time_secs));
        let settled = self.verifying.is_none() && !self.shorter_waiting(held.steps.len());
        if !(timed_out || settled) {
            return false;
        }
        if let Some(pass) = self.held.take() {
            self.finish_pass(pass);
        }
        true
    }

    fn finish_pass(&mut self, pass: ReproducedPass) {
        let ReproducedPass {
            steps,
            verification,
            finder,
            verifier,
            pages,
            evidence,
            answer,
        } = pass;
        let mut result = self.base_result();
        result.status = Status::Pass;
        result.answer = answer;
        result.steps = steps
            .into_iter()
            .enumerate()
            .map(|(i, (action, fingerprint, risk))| {
                let page = pages.get(i);
                ResultStep {
                    index: i as u32 + 1,
                    label: action.label(),
                    action,
                    url: page.map(|p| p.url.clone()).unwrap_or_default(),
                    title: page.map(|p| p.title.clone()).unwrap_or_default(),
                    fingerprint,
                    risk,
                    reward: page.map_or(0.0, |p| p.value_hint.clamp(0.0, 1.0)),
                    cost_ms: page.map_or(0, |p| p.cost_ms),
                    verdict: page.and_then(|p| p.verdict.clone()),
                    healed_locator: page.and_then(|p| p.healed_locator),
                    healed_by: page.and_then(|p| p.healed_by.clone()),
                    verification: verification.get(i).copied().unwrap_or_default(),
                    why: page.and_then(|p| p.why.clone()),
                }
            })
            .collect();
        if let Some(last) = result.steps.last_mut() {
            last.reward = 1.0;
        }
        tracing::info!(task = %self.id, %finder, %verifier, steps = result.steps.len(), "pass");
        let steps = result.steps.clone();
        self.finish(result);
        self.artifacts = Some(self.artifact_job(Some(Passed {
            steps,
            pages,
            evidence,
            found_by: finder.to_string(),
            verified_by: verifier.to_string(),
        })));
    }

    /// What is left to write once the result stands, to be done off the actor.
    fn artifact_job(&mut self, passed: Option<Passed>) -> ArtifactJob {
        // A write was made in this task (a claim was granted) and the pass's own path sends
        // none: it found the page another branch's write left (that branch's path was not
        // reproduced). Its steps would not do the task again: no workflow is learned from it.
        let reads_another_write = passed
            .as_ref()
            .is_some_and(|p| reads_another_write(!self.writes_claimed.is_empty(), &p.steps));
        if reads_another_write && self.memory.is_some() {
            tracing::warn!(task = %self.id, "the pass reads what another branch wrote: not remembered as a workflow");
        }
        ArtifactJob {
            id: self.id,
            task: self.task.clone(),
            dir: self.journal.task_dir(),
            key: self.key.clone(),
            kept_reports: self
                .keep_all
                .then(|| std::mem::take(&mut self.kept_reports)),
            passed,
            memory: self
                .memory
                .clone()
                .filter(|_| !self.memory_use.as_ref().is_some_and(|u| u.worked))
                .filter(|_| !reads_another_write),
        }
    }

    /// Whether it ended and nothing of it is in flight: its files written, its nodes told,
    /// no request out (a late answer then finds no task, and is dropped).
    fn settled(&self) -> bool {
        self.phase == Phase::Done
            && self.result.is_some()
            && !self.writing
            && self.artifacts.is_none()
            && self.released
            && self.assigned.is_empty()
            && self.verifying.is_none()
            && self.expanding.is_none()
    }

    /// What stays in memory of a settled task.
    fn into_ended(self) -> Option<Ended> {
        let overview = self.overview();
        let mut distrusted: Vec<PeerId> = self.distrusted.into_iter().collect();
        distrusted.sort();
        Some(Ended {
            result: self.result?,
            overview,
            started: self.started,
            distrusted,
            dir: self.journal.dir().to_path_buf(),
        })
    }

    /// The task in one line of `forager status`.
    fn overview(&self) -> TaskOverview {
        let phase = match (&self.phase, &self.result) {
            (Phase::Expanding, _) => TaskPhase::Expanding,
            (Phase::Searching, _) if self.verifying.is_some() => TaskPhase::Verifying,
            (Phase::Searching, _) => TaskPhase::Searching,
            (Phase::Done, _) if self.writing || self.artifacts.is_some() => TaskPhase::Writing,
            (Phase::Done, Some(result)) if result.status == Status::Pass => TaskPhase::Passed,
            (Phase::Done, _) => TaskPhase::Failing,
        };
        let best_value = self
            .branches
            .iter()
            .filter(|b| b.visits > 0)
            .map(|b| b.value_sum / f64::from(b.visits))
            .fold(0.0, f64::max);
        TaskOverview {
            id: self.id,
            goal: self.task.goal.chars().take(120).collect(),
            phase,
            failure: self
                .result
                .as_ref()
                .and_then(|r| r.error.as_ref())
                .map(|e| e.reason.as_str().to_owned()),
            actions: self.actions,
            budget: self.task.budget.actions,
            best_value: if best_value.is_finite() {
                best_value.clamp(0.0, 1.0)
            } else {
                0.0
            },
            nodes: self.assigned.len() as u32,
            age_secs: self.started.elapsed().as_secs(),
        }
    }

    fn finish_failing(&mut self, reason: FailureReason) {
        // A search that ran out where the mounted session stopped holding failed because of
        // the session: that is what the user can fix.
        let expired = self
            .counters
            .pruned
            .get(PruneReason::SessionExpired.kind())
            .copied()
            .unwrap_or(0);
        let reason = match reason {
            FailureReason::SearchExhausted
            | FailureReason::BudgetExhausted
            | FailureReason::NoProgress
                if expired > 0 && self.task.capsule.is_some() =>
            {
                FailureReason::SessionExpired
            }
            other => other,
        };
        let detail = match reason {
            FailureReason::SessionExpired => format!(
                "the session capsule no longer logs in: {} page(s) of its origins asked for a \
                 login; capture it again (forager capsule refresh) or give the credentials",
                expired.max(1)
            ),
            FailureReason::BudgetExhausted => format!(
                "the cluster spent its {} actions without a reproduced success",
                self.task.budget.actions
            ),
            FailureReason::Timeout => format!(
                "the wall-clock limit of {} s passed",
                self.task.budget.wall_time_secs
            ),
            FailureReason::ApprovalRequired => {
                let spent = if self.remaining() == 0 {
                    format!(
                        " (the {} actions of the budget are spent)",
                        self.task.budget.actions
                    )
                } else {
                    String::new()
                };
                // The deepest one is the nearest to the goal the search got (a riskier one
                // near the start page is seldom on the way); the result lists them all.
                let others = match self.approvals.len() {
                    0 | 1 => String::new(),
                    n => format!(" (and {} more in result.json)", n - 1),
                };
                match self
                    .approvals
                    .iter()
                    .max_by_key(|a| (a.actions.len(), a.risks.last().copied()))
                    .and_then(|a| a.actions.last())
                {
                    Some(action) => format!(
                        "the way forward needs a human's approval: {}{others}{spent}",
                        action.label()
                    ),
                    None => format!("the way forward needs a human's approval{spent}"),
                }
            }
            FailureReason::NotReproduced => {
                "successes were reported but no second node could reproduce them".into()
            }
            other => other.as_str().replace('_', " "),
        };
        self.finish_failing_with(reason, detail);
    }

    fn finish_failing_with(&mut self, reason: FailureReason, detail: String) {
        let mut result = self.base_result();
        result.error = Some(RunError { reason, detail });
        self.finish(result);
        self.artifacts = Some(self.artifact_job(None));
    }

    fn finish(&mut self, result: RunResult) {
        self.journal.append(&JournalEvent::Finished {
            result: Box::new(result.clone()),
        });
        self.journal.write_result(&result);
        self.result = Some(result);
        self.phase = Phase::Done;
    }
}

/// What a passing task adds to its artifacts.
/// Whether a pass's `steps` send nothing to others while a write was made in its task
/// (`wrote`): the pass read what another branch wrote.
fn reads_another_write(wrote: bool, steps: &[ResultStep]) -> bool {
    wrote && steps.iter().all(|s| s.risk < RiskClass::ExternalSubmission)
}

struct Passed {
    steps: Vec<ResultStep>,
    pages: Vec<PageInfo>,
    evidence: Option<Evidence>,
    found_by: String,
    verified_by: String,
}

/// The files a finished task leaves besides its journal and result, written on a blocking
/// thread so the actor goes on serving other tasks: `rollouts.json` (with `--keep-all`), and
/// for a pass the workflow, the step screenshots, then the report, then the signed trajectory
/// that names all of their digests.
struct ArtifactJob {
    id: TaskId,
    task: TaskSpec,
    dir: TaskDir,
    key: Option<ed25519_dalek::SigningKey>,
    kept_reports: Option<Vec<KeptReport>>,
    passed: Option<Passed>,
    /// Where a pass is remembered as a parametrized workflow (`None` also when the pass is a
    /// remembered workflow's own steps: its record counted the success already).
    memory: Option<crate::memory::WorkflowMemory>,
}

impl ArtifactJob {
    fn write(mut self) -> TaskId {
        let id = self.id;
        let mut files = vec![crate::journal::JOURNAL_FILE, crate::journal::RESULT_FILE];
        if let Some(kept) = &self.kept_reports {
            match crate::artifacts::write_rollouts(&self.dir, &id, kept) {
                Ok(()) => files.push(crate::artifacts::ROLLOUTS_FILE),
                Err(error) => tracing::error!(task = %id, %error, "cannot write the rollouts"),
            }
        }
        let Some(Passed {
            steps,
            pages,
            evidence,
            found_by,
            verified_by,
        }) = self.passed.take()
        else {
            self.write_report();
            return id;
        };
        if let Some(memory) = &self.memory
            && !steps.is_empty()
        {
            let actions: Vec<(Action, RiskClass)> =
                steps.iter().map(|s| (s.action.clone(), s.risk)).collect();
            match memory.remember_pass(&self.task, &actions, found_by, verified_by) {
                Ok(workflow) => {
                    tracing::info!(task = %id, workflow = %workflow.to_hex(), "remembered as a workflow")
                }
                Err(error) => tracing::warn!(task = %id, %error, "not remembered"),
            }
        }
        if !steps.is_empty() {
            match forager_protocol::workflow::compile(&self.task, &steps, &pages)
                .map_err(|e| e.to_string())
                .and_then(|w| w.to_json().map_err(|e| e.to_string()))
            {
                Ok(bytes) => match self.dir.write_file(WORKFLOW_FILE, &bytes) {
                    Ok(()) => files.insert(2, WORKFLOW_FILE),
                    Err(error) => tracing::error!(task = %id, %error, "cannot write the workflow"),
                },
                Err(error) => tracing::error!(task = %id, %error, "cannot compile the workflow"),
            }
        }
        if let Some(evidence) = &evidence
            && let Err(error) =
                crate::artifacts::write_screenshots(&self.dir, &evidence.screenshots)
        {
            tracing::error!(task = %id, %error, "cannot write the screenshots");
        }
        self.write_report();
        if self.dir.dir().join(crate::report::REPORT_FILE).exists() {
            files.push(crate::report::REPORT_FILE);
        }
        match (evidence, &self.key) {
            (Some(evidence), Some(key)) => {
                let written = crate::artifacts::write_trajectory(
                    &self.dir, key, &self.task, steps, evidence, &files,
                );
                if let Err(error) = written {
                    tracing::error!(task = %id, %error, "cannot write the trajectory");
                }
            }
            // The start page itself passed (no node report stands behind an empty path), or
            // this queen has no key to sign with.
            _ => tracing::info!(task = %id, "no signed trajectory for this result"),
        }
        id
    }

    /// Writes `report.html` from the finished task's files.
    fn write_report(&self) {
        if let Err(error) = crate::report::write_run_report(self.dir.dir()) {
            tracing::error!(task = %self.id, %error, "cannot write the report");
        }
    }
}

/// A peer's model usage, bounded by what its `most` actions can have asked (a few questions
/// per page read: a verdict, a ranking, a recovery), with its fallback reason kept short.
fn bounded_model_usage(
    usage: &forager_protocol::llm::ModelUsage,
    most: u64,
) -> forager_protocol::llm::ModelUsage {
    let questions = 3 * 2 * most;
    let mut bounded = usage.clone();
    for tier in bounded.tiers.values_mut() {
        tier.calls = tier.calls.min(questions);
        tier.cached = tier.cached.min(questions);
        tier.failed = tier.failed.min(questions);
        if !tier.cost.is_finite() || tier.cost < 0.0 {
            tier.cost = 0.0;
        }
    }
    for count in bounded.uses.values_mut() {
        *count = (*count).min(questions);
    }
    bounded.rules_decided = bounded.rules_decided.min(questions);
    bounded.model_decided = bounded.model_decided.min(questions);
    if let Some(reason) = &mut bounded.fell_back
        && reason.len() > forager_protocol::llm::MAX_FALLBACK_BYTES
    {
        let mut end = forager_protocol::llm::MAX_FALLBACK_BYTES;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    bounded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_tasks_are_ordered_by_start_whatever_order_they_settle_in() {
        let now = Instant::now();
        let ids: Vec<TaskId> = (0..4u8).map(|i| TaskId([i; 16])).collect();
        let starts: Vec<Instant> = (0..4u64).map(|i| now + Duration::from_secs(i)).collect();
        let mut order = VecDeque::new();
        // Settled in the order 0, 2, 3, 1: task 1's last request came back late.
        for i in [0, 2, 3, 1] {
            insert_by_start(&mut order, starts[i], ids[i]);
        }
        let listed: Vec<TaskId> = order.iter().map(|(_, id)| *id).collect();
        assert_eq!(listed, ids);
    }

    #[test]
    fn a_pass_that_sends_nothing_after_a_write_of_its_task_read_that_write() {
        let step = |risk: RiskClass| ResultStep {
            index: 1,
            label: "click \"Show issue\"".into(),
            action: Action::Back,
            url: String::new(),
            title: String::new(),
            fingerprint: Fingerprint([0; 16]),
            risk,
            reward: 0.0,
            cost_ms: 0,
            verdict: None,
            healed_locator: None,
            healed_by: None,
            verification: Default::default(),
            why: None,
        };
        let reads = [step(RiskClass::ReadOnly), step(RiskClass::DraftWrite)];
        let writes = [
            step(RiskClass::ReadOnly),
            step(RiskClass::ExternalSubmission),
        ];
        assert!(reads_another_write(true, &reads));
        assert!(!reads_another_write(true, &writes), "its own write");
        assert!(!reads_another_write(false, &reads), "no write in the task");
    }
}
