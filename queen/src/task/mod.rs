//! One task's life at the queen, as rules without I/O: the top of its tree (the start page's
//! actions, one branch each), which branch goes to which node, what a report or a replay
//! changes, when the task ends and what it leaves. The actor (`crate::actor`) hands each event
//! to [`TaskRun`] (a scheduling pass, a node's answer, a write claimed, a cancellation) and
//! carries out what the rules decided: the requests they put in an [`Outbox`], the journal
//! entries they recorded ([`TaskRun::take_journaled`]), the artifacts to write
//! ([`ArtifactJob`]). The rules never send, write, spawn or wait; they read the clock
//! (`tokio::time::Instant`), so they are tested here with no network and in paused time.
//!
//! Every decision is a journal entry (`<data>/tasks/<task id>/events.jsonl`), appended by the
//! actor before it answers or sends anything more, from which a restarted queen resumes
//! ([`TaskRun::replay_event`]). The rules are split by concern:
//!
//! - [`assignment`]: opening the start page, the branches, which node gets which (the
//!   production-aware score with virtual loss, a branch's holder first), lost assignments;
//! - [`reports`]: what a node's signed progress report adds (its numbers bounded on arrival);
//! - [`verification`]: a success reproduced by a node other than its finder before it wins,
//!   distrust of a finder whose success never reproduces, the shortcut of a detour;
//! - [`writes`]: the writes granted to nodes, each once per task, a resumed queen included;
//! - [`finishing`]: when the task is over, its result, and the artifacts written off the actor.
//!
//! Tested in `tests.rs` with signed answers from fixed keys and the clock paused, and by property
//! tests: no branch on two nodes at once, no more actions given than the budget, no pass without
//! a reproduction by a node other than its finder.

mod assignment;
mod finishing;
mod reports;
#[cfg(test)]
mod tests;
mod verification;
mod writes;

pub(crate) use finishing::{ArtifactJob, Ending};
pub(crate) use verification::Pending;

use crate::artifacts::KeptReport;
use crate::config::QueenConfig;
use crate::journal::{JournalEvent, JournalTreeNode, TaskDir};
use ed25519_dalek::SigningKey;
use forager_node::net::identity::peer_id_of;
use forager_protocol::artifact::Digest32;
use forager_protocol::result::{MemoryUse, NetworkSummary, RunResult, Status};
use forager_protocol::trajectory::Cost;
use forager_protocol::wire::{
    BranchCounters, BranchId, FoundPath, Message, TaskId, TaskOverview, TaskPhase, WireCandidate,
};
use forager_protocol::{Action, Fingerprint, TaskSpec};
use libp2p::PeerId;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;
use tokio::time::Instant;
use verification::ReproducedPass;

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    Expanding,
    Searching,
    Done,
}

/// The owner of the start page's location: no branch (every assignment learns it).
const ROOT_OWNER: BranchId = BranchId(u64::MAX);

pub(crate) struct TaskRun {
    pub(crate) id: TaskId,
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
    pub(crate) started: Instant,
    pub(crate) phase: Phase,
    /// The task's folder: the actor writes its journal and result there, the artifact job
    /// the rest.
    pub(crate) dir: TaskDir,
    /// Journal entries decided and not yet written: the actor appends them, in order, before
    /// it answers or sends anything more (`take_journaled`).
    journaled: Vec<JournalEvent>,
    branches: Vec<Branch>,
    approvals: Vec<FoundPath>,
    pub(crate) actions: u32,
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
    pub(crate) assigned: HashMap<PeerId, (BranchId, u32)>,
    pub(crate) verifying: Option<PeerId>,
    /// The writes granted to nodes (`Message::ClaimWrite`): each runs once per task.
    writes_claimed: HashSet<u64>,
    pub(crate) expanding: Option<PeerId>,
    /// Nodes that took part.
    contributors: HashSet<PeerId>,
    /// Whether they were told the task ended ([`Message::Release`]).
    released: bool,
    /// Ended early (a cancel, the user's stop) while assignments ran: how, and until when
    /// their answers are awaited so that the result counts what they did.
    pub(crate) stopping: Option<(Ending, Instant)>,
    pub(crate) result: Option<RunResult>,
    /// Artifacts to write now that the result stands (taken by the actor at once).
    pub(crate) artifacts: Option<ArtifactJob>,
    /// Whether they are being written: the task is reported done only after.
    pub(crate) writing: bool,
    failures: u32,
    network: NetworkSummary,
    /// The nodes' counters, summed over their reports (each bounded on arrival).
    counters: BranchCounters,
    /// Nodes whose reported success could not be reproduced: no more work of this task.
    pub(crate) distrusted: HashSet<PeerId>,
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

/// What remains of a task once it ended and nothing of it is in flight: what `status`, the
/// overview and the distrust count need. The rest (trees, branches, transpositions) is on
/// disk in its journal and dropped from memory.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) result: RunResult,
    pub(crate) overview: TaskOverview,
    pub(crate) started: Instant,
    pub(crate) distrusted: Vec<PeerId>,
    pub(crate) dir: PathBuf,
}

/// One scheduling pass's outbox: the requests the rules decided to send, and the nodes they
/// may still give work to. The actor sends the requests and hands each answer back with what
/// it [`Awaited`].
#[derive(Debug)]
pub(crate) struct Outbox {
    /// Nodes with nothing in flight, in a stable order.
    pub(crate) idle: Vec<PeerId>,
    /// Nodes with something in flight (given work in this pass included).
    pub(crate) busy: HashSet<PeerId>,
    /// The requests, in the order decided.
    pub(crate) sends: Vec<Send>,
}

/// A request for a node.
#[derive(Debug)]
pub(crate) struct Send {
    pub(crate) node: PeerId,
    pub(crate) request: Message,
    pub(crate) awaited: Awaited,
}

/// What the answer to a request is for.
#[derive(Debug)]
pub(crate) enum Awaited {
    /// The start page's candidates ([`Message::Expand`]).
    Expansion,
    /// A progress report on `branch`, assigned at `sent`.
    Assignment { branch: BranchId, sent: Instant },
    /// The reproduction of a waiting success.
    Replay(Box<Pending>),
    /// A node's acknowledgement that the task ended ([`Message::Release`]).
    Release,
}

impl Outbox {
    /// An outbox for a pass with `idle` and `busy` nodes.
    pub(crate) fn new(mut idle: Vec<PeerId>, busy: HashSet<PeerId>) -> Outbox {
        idle.sort();
        Outbox {
            idle,
            busy,
            sends: Vec::new(),
        }
    }

    fn send(&mut self, node: PeerId, request: Message, awaited: Awaited) {
        self.sends.push(Send {
            node,
            request,
            awaited,
        });
    }

    /// Takes the idle node at `index`: it is busy from now on.
    fn take(&mut self, index: usize) -> PeerId {
        let node = self.idle.remove(index);
        self.busy.insert(node);
        node
    }
}

/// Why a request to a node brought no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestFailed {
    /// The network could not carry it (peer gone, connection closed, bad frame).
    #[error(transparent)]
    Network(#[from] forager_node::net::NetError),
    /// The node did not answer within the assignment deadline.
    #[error("no answer within {} s", .0.as_secs())]
    Silent(Duration),
}

impl TaskRun {
    pub(crate) fn new(id: TaskId, task: TaskSpec, dir: TaskDir, config: &QueenConfig) -> TaskRun {
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
            dir,
            journaled: Vec::new(),
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
            stopping: None,
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
    pub(crate) fn replay_event(&mut self, event: JournalEvent) {
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

    /// Decides a journal entry: written by the actor before anything else happens.
    fn record(&mut self, event: JournalEvent) {
        self.journaled.push(event);
    }

    /// The journal entries decided since the last call, oldest first.
    pub(crate) fn take_journaled(&mut self) -> Vec<JournalEvent> {
        std::mem::take(&mut self.journaled)
    }

    /// How many branches the task's root has.
    pub(crate) fn branch_count(&self) -> usize {
        self.branches.len()
    }

    /// Whether it ended and nothing of it is in flight: its files written, its nodes told,
    /// no request out (a late answer then finds no task, and is dropped).
    pub(crate) fn settled(&self) -> bool {
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
    pub(crate) fn into_ended(self) -> Option<Ended> {
        let overview = self.overview();
        let mut distrusted: Vec<PeerId> = self.distrusted.into_iter().collect();
        distrusted.sort();
        Some(Ended {
            result: self.result?,
            overview,
            started: self.started,
            distrusted,
            dir: self.dir.dir().to_path_buf(),
        })
    }

    /// The task in one line of `forager status`.
    pub(crate) fn overview(&self) -> TaskOverview {
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
}

pub(crate) fn signed_by(key: &ed25519_dalek::VerifyingKey, node: PeerId) -> bool {
    peer_id_of(key) == Some(node)
}
