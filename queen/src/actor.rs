//! The queen's actor: accepts tasks from clients and nodes, runs each task's rules
//! ([`crate::task`]) on every event, sends the requests they decide, and hands each answer
//! back to the task it is for. It owns every task's state; requests to nodes run as spawned
//! futures bounded by the assignment deadline that report back on an internal channel, and
//! artifacts are written on blocking threads. The actor is the only part of the queen that
//! touches the network: what a task decides is tested without it (`task/tests.rs`).
//!
//! The actor writes each task's journal (`<data>/tasks/<task id>/events.jsonl`): what a task
//! decided is appended after every event handed to it, before anything more is answered or
//! sent, and a restarted queen resumes from it ([`start`] reads every unfinished journal
//! first).
//!
//! Three `JoinSet`s own the actor's work: the requests to nodes, the artifact writes (a task is
//! reported done only after its files are written) and the reads of a finished task's files for a
//! client (`forager result`: plain names only, 512 KiB chunks). `Queen::shutdown` drops the
//! requests in flight, lets those reads answer and waits for the writes. A task that ended with
//! nothing in flight (`TaskRun::settled`) leaves the live table for the ended ones (the newest
//! `QueenConfig::ended_in_memory`); older ones are answered from `result.json` in their folders,
//! so `status`, `result` and a resubmission of the same task work after a restart too, and the
//! queen's memory does not grow with every task it ran.

use crate::config::QueenConfig;
use crate::journal::{Journal, JournalEvent, Recovered};
use crate::task::{Awaited, Ended, Ending, Outbox, RequestFailed, Send, TaskRun};
use forager_node::net::{Network, NetworkEvent, Responder, Role};
use forager_protocol::TaskSpec;
use forager_protocol::result::RunResult;
use forager_protocol::wire::{
    ClusterOverview, FileChunk, MAX_CHUNK_BYTES, MAX_NODE_ADDRESSES, MAX_OVERVIEW_NODES,
    MAX_OVERVIEW_TASKS, MAX_TASK_FILES, Message, NodeOverview, Refusal, RefusalReason, TaskFile,
    TaskId, TaskOverview, TaskState,
};
use libp2p::PeerId;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::Instant;

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
        ending: Ending,
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
        self.end_early(task, Ending::Cancelled).await
    }

    /// Ends a running task because the user stopped the run that submitted it: it ends
    /// `failing` with `interrupted`, its result keeping what it did so far, and its files are
    /// written as for any other end. Answers as [`Queen::cancel`].
    pub async fn interrupt(&self, task: TaskId) -> Result<TaskState, Refusal> {
        self.end_early(task, Ending::Interrupted).await
    }

    async fn end_early(&self, task: TaskId, ending: Ending) -> Result<TaskState, Refusal> {
        crate_ask(&self.commands, |reply| Command::Cancel {
            task,
            ending,
            reply,
        })
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

/// A node's answer (or why none came) to a request a task decided, with what it was for.
struct Answer {
    task: TaskId,
    node: PeerId,
    awaited: Awaited,
    result: Result<Message, RequestFailed>,
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
        journals: HashMap::new(),
        ended: EndedTasks::default(),
        internal,
    };
    // Fire-and-forget by design: the actor ends on `Queen::shutdown` (which waits for it to
    // finish writing) or when every handle is dropped.
    forager_node::actor::spawn_detached("queen", actor.run(events, inbox, internal_inbox));
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
    /// Their journals, which the actor alone writes.
    journals: HashMap<TaskId, Journal>,
    /// Tasks ended and settled, newest last (bounded by `ended_in_memory`).
    ended: EndedTasks,
    internal: mpsc::Sender<Answer>,
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
        mut internal: mpsc::Receiver<Answer>,
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
                Some(answer) = internal.recv() => self.on_answer(answer),
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
            self.journals.remove(&id);
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
                mut journal,
                events,
            } = recovered;
            let Ok(id) = TaskId::of(&task) else { continue };
            let mut run = TaskRun::new(id, task, journal.task_dir(), &self.config);
            for event in events {
                run.replay_event(event);
            }
            // What replaying decides is on disk already.
            run.take_journaled();
            tracing::info!(task = %id, branches = run.branch_count(), actions = run.actions, "resumed a task from its journal");
            journal.append(&JournalEvent::Resumed {
                actions: run.actions,
            });
            self.tasks.insert(id, run);
            self.journals.insert(id, journal);
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
            Command::Cancel {
                task,
                ending,
                reply,
            } => {
                let _ = reply.send(self.end_early(task, ending));
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

    fn end_early(&mut self, task: TaskId, ending: Ending) -> Result<TaskState, Refusal> {
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
        if run.end_early(ending) && ending == Ending::Cancelled {
            self.config.metrics.cancelled.inc();
        }
        write_journal(&mut self.journals, run);
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
        let run = TaskRun::new(id, task, journal.task_dir(), &self.config);
        self.tasks.insert(id, run);
        self.journals.insert(id, journal);
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
            Message::Cancel(id) => match self.end_early(id, Ending::Cancelled) {
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
        let granted = run.claim_write(peer, key);
        write_journal(&mut self.journals, run);
        Message::WriteClaimed(granted)
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
        Ok(run.dir.dir().to_path_buf())
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

    /// Runs every task's rules once and sends the requests they decided.
    fn schedule(&mut self, requests: &mut JoinSet<()>) {
        let busy = self.busy();
        let idle: Vec<PeerId> = self
            .nodes
            .iter()
            .filter(|n| !busy.contains(n))
            .copied()
            .collect();
        let mut outbox = Outbox::new(idle, busy);
        let limit = self.config.assignment_deadline + Duration::from_secs(10);
        for (id, run) in &mut self.tasks {
            run.schedule(&self.nodes, &self.config, &mut outbox);
            write_journal(&mut self.journals, run);
            for send in outbox.sends.drain(..) {
                spawn_request(requests, &self.network, &self.internal, limit, *id, send);
            }
        }
    }

    /// Hands an answer to the task it is for (a late one for a settled task is dropped).
    fn on_answer(&mut self, answer: Answer) {
        let Answer {
            task,
            node,
            awaited,
            result,
        } = answer;
        if let Awaited::Assignment { sent, .. } = &awaited {
            self.config
                .metrics
                .assignment_seconds
                .observe(sent.elapsed().as_secs_f64());
        }
        if result.is_ok() {
            self.saw(node);
        }
        if let Awaited::Release = awaited {
            if !matches!(result, Ok(Message::Accepted(_))) {
                tracing::debug!(%node, ?result, "a node did not take a release");
            }
            return;
        }
        let cluster = &self.nodes;
        let Some(run) = self.tasks.get_mut(&task) else {
            return;
        };
        match awaited {
            Awaited::Expansion => run.on_expand_answer(node, result, cluster.len()),
            Awaited::Assignment { branch, .. } => {
                run.on_assignment_answer(node, branch, result, &self.config.metrics);
            }
            Awaited::Replay(pending) => {
                run.on_replay_answer(node, *pending, result, cluster, &self.config.metrics);
            }
            Awaited::Release => {}
        }
        write_journal(&mut self.journals, run);
    }
}

/// Appends what a task decided to its journal, and its result once it ended.
fn write_journal(journals: &mut HashMap<TaskId, Journal>, run: &mut TaskRun) {
    let decided = run.take_journaled();
    let Some(journal) = journals.get_mut(&run.id) else {
        return;
    };
    for event in decided {
        journal.append(&event);
        if let JournalEvent::Finished { result } = &event {
            journal.write_result(result);
        }
    }
}

/// Sends a request in the background; its answer comes back on `internal`. The assignment
/// deadline bounds every request: a silent node loses its work.
fn spawn_request(
    requests: &mut JoinSet<()>,
    network: &Network,
    internal: &mpsc::Sender<Answer>,
    limit: Duration,
    task: TaskId,
    send: Send,
) {
    let network = network.clone();
    let internal = internal.clone();
    let Send {
        node,
        request,
        awaited,
    } = send;
    requests.spawn(async move {
        let result = match tokio::time::timeout(limit, network.request(node, request)).await {
            Ok(Ok(message)) => Ok(message),
            Ok(Err(error)) => Err(RequestFailed::from(error)),
            Err(_) => Err(RequestFailed::Silent(limit)),
        };
        let answer = Answer {
            task,
            node,
            awaited,
            result,
        };
        let _ = internal.send(answer).await;
    });
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
}
