//! The messages forager peers exchange, version [`crate::codec::WIRE_VERSION`].
//!
//! Gossip carries [`Announcement`]s (signed trajectory vectors); request-response carries the
//! rest. Every message travels as one [`Message`] inside a codec frame, so one size limit and
//! one version check guard them all. Receivers decide on the signed numeric fields (rewards,
//! fingerprints, costs), never on text a page or a peer wrote.
//!
//! The verification rules the queen and `forager verify` both apply are here too:
//! [`FoundPath::reproducible_steps`] (every step on a site that replays writes, else those before
//! the first write, by the higher of the finder's class and `risk::classify_action`),
//! [`judge_reproduction`] (pages of the same family, the success predicates after a full
//! reproduction; past the first write, the finder's evidence and the after-check) and
//! [`verified_pages`]. A success path carries what its finder saw per step ([`StepSeen`]); the
//! screenshots travel beside the signed report ([`ProgressAnswer`]). See `docs/verification.md`.

use crate::action::Action;
use crate::codec::{self, CodecError};
use crate::digest::Digest32;
use crate::fingerprint::Fingerprint;
use crate::outcome::PruneReason;
use crate::result::{NetworkSummary, RunResult, StepWhy};
use crate::risk::RiskClass;
use crate::signing::Signed;
use crate::task::TaskSpec;
use crate::trajectory::Cost;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Largest gossip message, in bytes (gossipsub's default maximum).
pub const MAX_GOSSIP_BYTES: usize = 64 * 1024;

/// Identity of a task: a hash of its canonical encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskId(pub [u8; 16]);

impl TaskId {
    /// The id of a task: a hash of its canonical encoding with input values redacted
    /// ([`TaskSpec::redacted`]), so that artifacts, which carry only the redacted task, name
    /// the same id, and without its consents and capsule, so that a run given consents (or a
    /// refreshed capsule) is the run that asked for them.
    pub fn of(task: &TaskSpec) -> Result<TaskId, CodecError> {
        let mut task = task.redacted();
        task.consents.clear();
        task.capsule = None;
        let digest = Sha256::digest(codec::canonical_bytes(&task)?);
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        Ok(TaskId(id))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // All 16 bytes, everywhere (directories, logs, result, trajectory, workflow).
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaskId({self})")
    }
}

/// Identity of a branch within a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BranchId(pub u64);

/// Which text embedder made a vector: peers whose embedders differ cannot compare vectors,
/// so they refuse each other's (by dimension, then by this identity).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EmbedderId {
    /// A name for people (`all-MiniLM-L6-v2`, `ngram`).
    pub name: String,
    /// What identifies it: the SHA-256 of the model's weights, or of the n-gram scheme's name.
    pub digest: Digest32,
    /// The vectors' dimension.
    pub dim: u32,
}

impl std::fmt::Display for EmbedderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}-d, {})",
            self.name,
            self.dim,
            &self.digest.to_hex()[..12]
        )
    }
}

/// Most steps an announcement's trace carries.
pub const MAX_TRACE_STEPS: usize = 64;

/// One step of a rollout as the memory keeps it: where it was, and what it did there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceStep {
    /// The location of the page acted on (its URL without the fragment, hashed).
    pub location: u64,
    /// Its fingerprint family (the kind of page), hashed to 64 bits.
    pub page_family: u64,
    /// The action's stable key (of its label).
    pub key: u64,
}

/// A finished rollout, announced to every peer (signed by its origin).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Announcement {
    /// The task the rollout belongs to.
    pub task: TaskId,
    /// The task family, grouping trajectories for the replay bonus.
    pub family: String,
    /// The embedder of `vector`.
    pub embedder: EmbedderId,
    /// The trajectory vector's raw values (the embedding of the task's goal); receivers
    /// validate them into a [`crate::trajectory::TrajectoryVector`] of their own embedder's
    /// dimension and count each kind of fault.
    pub vector: Vec<f32>,
    /// Where the rollout went and what it did at each page, from the start URL (at most
    /// [`MAX_TRACE_STEPS`]); a success's trace is what the memory votes with.
    pub trace: Vec<TraceStep>,
    /// Reward of the rollout's last state, in [0, 1].
    pub reward: f32,
    /// Whether the success predicates held.
    pub success: bool,
    /// What the rollout cost.
    pub cost: Cost,
    /// Number of steps.
    pub steps: u32,
    /// Per-origin sequence number; a repeat is a replayed message.
    pub sequence: u64,
}

/// An action as a node proposes it, for the queen's top of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireCandidate {
    /// The action.
    pub action: Action,
    /// The policy's prior.
    pub prior: f64,
    /// Its risk class.
    pub risk: RiskClass,
    /// Stable key of its description (replay bonus).
    pub key: u64,
    /// Where it leads, when known before acting.
    pub target: Option<u64>,
}

/// The start state's candidates as the queen's root holds them: the branches (within the risk
/// ceiling or consented to, in descending prior order, which is their numbering) and the
/// actions that need approval.
pub fn branch_candidates(
    candidates: Vec<WireCandidate>,
    ceiling: RiskClass,
    consented: impl Fn(&WireCandidate) -> bool,
) -> (Vec<WireCandidate>, Vec<WireCandidate>) {
    let (mut branches, approvals): (Vec<_>, Vec<_>) = candidates
        .into_iter()
        .partition(|c| c.risk <= ceiling || consented(c));
    // Unvisited branches are tried in prior order (stable: equal priors keep the node's order).
    branches.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    (branches, approvals)
}

/// The queen asks a node to open the start URL and propose the first actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpandRequest {
    /// The task.
    pub task: TaskSpec,
}

/// The start state and its candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpandReport {
    /// The task.
    pub task: TaskId,
    /// The start state's fingerprint.
    pub root: Fingerprint,
    /// Whether the start state already satisfies the task.
    pub success: bool,
    /// The start state's value hint.
    pub value_hint: f64,
    /// The task mounts a session capsule and the start page asks to log in on one of its
    /// origins: the session no longer holds.
    pub session_expired: bool,
    /// The actions possible there.
    pub candidates: Vec<WireCandidate>,
    /// What the model tier was asked and spent opening the start page.
    #[serde(default)]
    pub model: crate::llm::ModelUsage,
}

/// The queen gives a node a branch to search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchAssignment {
    /// The task (nodes need it whole: predicates, inputs, budgets, weights).
    pub task: TaskSpec,
    /// Its id.
    pub task_id: TaskId,
    /// The branch.
    pub branch: BranchId,
    /// Actions from the start URL to the branch's root.
    pub prefix: Vec<Action>,
    /// Fingerprints expected after each prefix action, as far as known.
    pub expected: Vec<Fingerprint>,
    /// Actions the node may execute for this assignment.
    pub actions: u32,
    /// Milliseconds from receipt until the report is due.
    pub deadline_ms: u64,
    /// Locations the cluster has reached so far in this task: links to them are skipped below
    /// the branch as they would be in one search's tree (the state lives in another branch).
    pub known_locations: Vec<KnownLocation>,
    /// States other branches (or the start page) reached, by fingerprint: reached again at
    /// the same depth or deeper below this branch, they are transpositions, as in one tree.
    /// What locations are to pages that links lead to, states are to pages that change in
    /// place (forms, tabs, widgets).
    pub known_states: Vec<KnownState>,
    /// The prefix is a remembered workflow tried with this task's values: where one of its
    /// steps cannot be taken or changes nothing, the branch's root is the last page reached
    /// (the search goes on from there), not an error.
    pub workflow: bool,
}

/// A page state (its fingerprint) and the fewest actions from the start URL it was reached in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownState {
    /// The state's fingerprint.
    pub fingerprint: Fingerprint,
    /// Actions from the start URL.
    pub depth: u32,
}

/// A location (the hash of a URL without query and fragment, as
/// `forager_node::environment::StateInfo::location`) and the fewest actions from the start URL
/// it was reached in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownLocation {
    /// The location's hash.
    pub location: u64,
    /// Actions from the start URL.
    pub depth: u32,
}

/// A node reports on a branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressReport {
    /// The task.
    pub task: TaskId,
    /// The branch.
    pub branch: BranchId,
    /// Fingerprints after each action of the branch prefix, as observed.
    pub prefix_fingerprints: Vec<Fingerprint>,
    /// Visits completed below the branch root during this assignment.
    pub visits: u32,
    /// Sum of their backed-up values (as seen from the branch root).
    pub value_sum: f64,
    /// The best mean value of any state below the branch root so far, in [0, 1].
    pub best_value: f64,
    /// Actions executed.
    pub actions: u32,
    /// Actions replayed to restore states.
    pub replayed: u64,
    /// What they cost.
    pub cost: Cost,
    /// Successful paths found, from the start URL.
    pub successes: Vec<FoundPath>,
    /// Actions offered below the branch that need approval (labels of the path, the action).
    pub approvals: Vec<FoundPath>,
    /// Whether the branch is exhausted (nothing more to find below it).
    pub exhausted: bool,
    /// Why the assignment could not be carried out, if it could not.
    pub error: Option<String>,
    /// What the node's browser touched meanwhile.
    pub network: NetworkSummary,
    /// What the search and its environment counted during this assignment.
    pub counters: BranchCounters,
    /// Locations first reached by this assignment (not among those it was given), with their
    /// depth from the start URL.
    pub locations: Vec<KnownLocation>,
    /// States this branch owns (not among those it was given), with their depth from the
    /// start URL.
    pub states: Vec<KnownState>,
    /// The branch's search tree as it stands (bounded): for the run's report, and with
    /// `--keep-all`, the finished trajectories (every path from the start URL to one of its
    /// nodes), signed with the report.
    pub tree: TreeSnapshot,
    /// The branch's root, replayed from the start URL with the task's mounted session, asks to
    /// log in where it did not before: the server ended the session every branch shares. The
    /// queen ends the run `session_expired` at once.
    #[serde(default)]
    pub session_ended: bool,
}

/// Counts a node keeps while searching a branch, for the result's metrics. The queen bounds
/// them (a peer's word): see its report handling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BranchCounters {
    /// Restores served by a live page kept near the state (walked there, or history back).
    pub cache_hits: u64,
    /// Restores that replayed from the start URL.
    pub cache_misses: u64,
    /// Nodes added to the branch's tree.
    pub nodes: u64,
    /// Pages the policy read (observations proposed from).
    pub pages_read: u64,
    /// Microseconds spent reading them (embedding their texts, cache included).
    pub reading_us: u64,
    /// Pages at which the memory voted for some of the actions.
    pub remembered: u64,
    /// Children pruned, by reason name (`no_progress`, `loop`, ...).
    pub pruned: std::collections::BTreeMap<String, u32>,
    /// What the model tier was asked and spent.
    #[serde(default)]
    pub model: crate::llm::ModelUsage,
}

/// Most pruning reasons a [`BranchCounters`] may name (there are fewer).
pub const MAX_PRUNE_REASONS: usize = 16;

/// Most nodes a [`TreeSnapshot`] carries.
pub const MAX_TREE_NODES: usize = 300;

/// A branch's search tree below the branch root, as the node holding it reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TreeSnapshot {
    /// Which tree (random per tree the node builds): node ids are stable within one tree, and a
    /// branch searched again from scratch (on another node, or after its tree was dropped) gets
    /// another.
    pub instance: u64,
    /// The nodes, parents before children; the branch root is id 0. When the tree is larger
    /// than [`MAX_TREE_NODES`], the paths to successes and the most visited nodes (with their
    /// ancestors) are kept.
    pub nodes: Vec<TreeNode>,
    /// Nodes left out.
    pub omitted: u32,
}

/// One node of a search tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeNode {
    /// Its id in the tree.
    pub id: u32,
    /// Its parent's id (none at the branch root).
    pub parent: Option<u32>,
    /// The action from the parent (none at the branch root).
    pub action: Option<Action>,
    /// The state reached (none for children that were never executed).
    pub fingerprint: Option<Fingerprint>,
    /// Where it stands.
    pub status: TreeStatus,
    /// Search iterations through it.
    pub visits: u32,
    /// Their mean backed-up value, in [0, 1].
    pub mean_value: f64,
    /// The action's risk class.
    pub risk: RiskClass,
    /// What executing the action cost, in browser milliseconds.
    pub cost_ms: u64,
    /// The memory's vote for the action (the replay bonus R), in [0, 1].
    pub replay: f64,
}

/// Where a tree node stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeStatus {
    /// Searchable.
    Open,
    /// Its state satisfies the success predicates.
    Success,
    /// Everything below it was explored or pruned.
    Exhausted,
    /// Cut, with the reason.
    Pruned(PruneReason),
}

impl TreeStatus {
    /// A short snake_case name: `open`, `success`, `exhausted`, or the prune reason's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            TreeStatus::Open => "open",
            TreeStatus::Success => "success",
            TreeStatus::Exhausted => "exhausted",
            TreeStatus::Pruned(reason) => reason.kind(),
        }
    }
}

/// A path and the fingerprints it passed through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundPath {
    /// The actions.
    pub actions: Vec<Action>,
    /// Fingerprint after each action.
    pub fingerprints: Vec<Fingerprint>,
    /// Risk class of each action.
    pub risks: Vec<RiskClass>,
    /// What the finder saw after each action (empty when it does not say: then a
    /// reproduction compares fingerprints, and writes cannot be attested).
    #[serde(default)]
    pub seen: Vec<StepSeen>,
}

impl FoundPath {
    /// A path with nothing said about its pages.
    pub fn new(
        actions: Vec<Action>,
        fingerprints: Vec<Fingerprint>,
        risks: Vec<RiskClass>,
    ) -> FoundPath {
        FoundPath {
            actions,
            fingerprints,
            risks,
            seen: Vec::new(),
        }
    }

    /// How many leading steps a reproduction may execute again: all of them when the task's
    /// site replays writes; else those before the first write, judged by the finder's class
    /// or the action's own reading, whichever is higher (a finder cannot talk a write into a
    /// read).
    pub fn reproducible_steps(&self, task: &TaskSpec) -> usize {
        if task.replays_writes() {
            return self.actions.len();
        }
        self.actions
            .iter()
            .enumerate()
            .position(|(i, action)| {
                let claimed = self.risks.get(i).copied().unwrap_or(RiskClass::ReadOnly);
                claimed.max(crate::risk::classify_action(action)) >= RiskClass::DraftWrite
            })
            .unwrap_or(self.actions.len())
    }
}

/// What a node saw after one step of a path it reports: the kind of page (what a reproduction
/// compares, so that live regions, timestamps and tokens do not count as divergence) and, after
/// a write, the evidence a verification that does not repeat the write attests it by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSeen {
    /// The page's fingerprint family (URL path pattern, headings, form names).
    pub family: Option<Fingerprint>,
    /// Its main heading (for divergence messages), at most [`MAX_SEEN_TEXT`] bytes.
    pub heading: Option<String>,
    /// Its URL, at most [`MAX_SEEN_TEXT`] bytes.
    pub url: String,
    /// Its title, at most [`MAX_SEEN_TEXT`] bytes.
    pub title: String,
    /// After a write: SHA-256 of the page as the node read it (URL and accessibility snapshot).
    pub page_digest: Option<Digest32>,
    /// After a write: SHA-256 of the screenshot, whose bytes travel beside the signed report
    /// ([`ProgressAnswer::screenshots`]).
    pub screenshot: Option<Digest32>,
    /// Why the finder's policy chose the step's action (bounded: [`StepWhy::bounded`]).
    #[serde(default)]
    pub why: Option<StepWhy>,
}

impl StepSeen {
    /// The page as a result step shows it, for a step that was not executed again.
    pub fn page(&self) -> PageInfo {
        PageInfo {
            url: self.url.clone(),
            title: self.title.clone(),
            family: self.family,
            heading: self.heading.clone(),
            why: self.why.clone(),
            ..PageInfo::default()
        }
    }
}

/// The pages of a verified path: the reproducer's for the `reproduced` steps it executed, the
/// finder's (as it said it saw them) past those.
pub fn verified_pages(replay: &ReplayReport, path: &FoundPath, reproduced: usize) -> Vec<PageInfo> {
    let mut pages: Vec<PageInfo> = replay.pages.iter().take(reproduced).cloned().collect();
    for i in pages.len()..path.actions.len() {
        pages.push(path.seen.get(i).map(StepSeen::page).unwrap_or_default());
    }
    // Why a step was taken is the finder's to say: the reproducer replays, it does not choose.
    for (page, seen) in pages.iter_mut().zip(&path.seen) {
        page.why = seen.why.clone().map(StepWhy::bounded);
    }
    pages
}

/// Whether a reproduction verifies a path whose first `reproducible` steps it was asked to
/// execute again: `Ok` with the after-check's answer, or why not. Executed steps must reach
/// pages of the finder's kinds; a full reproduction must end in success; a partial one
/// attests the rest by the finder's evidence (a page digest for every write and for the
/// final page) and, when the task has one, the after-check must hold.
pub fn judge_reproduction(
    task: &TaskSpec,
    path: &FoundPath,
    reproducible: usize,
    report: &ReplayReport,
) -> Result<Option<bool>, String> {
    // The first thing that went wrong: a divergence comes before any error after it.
    if let Some(step) = report.divergence {
        return Err(report
            .divergence_detail
            .clone()
            .unwrap_or_else(|| format!("diverged at step {}", step + 1)));
    }
    if let Some(error) = &report.error {
        return Err(error.clone());
    }
    if (report.executed as usize) < reproducible {
        return Err(format!(
            "the reproduction executed {} of {reproducible} steps",
            report.executed
        ));
    }
    let steps = path.actions.len();
    if reproducible == steps {
        return if report.success {
            Ok(None)
        } else {
            Err("the success predicates did not hold".into())
        };
    }
    if reproducible == 0 && task.verify.is_none() {
        // Nothing another node saw would stand behind it: that is no verification.
        return Err(format!(
            "its first step ({}) writes, nothing before it can be executed again, and the \
             task has no after-check (--verify-url): only the finder's word stands for it",
            path.actions[0].label()
        ));
    }
    for i in reproducible..steps {
        let writes = path.risks.get(i).copied().unwrap_or(RiskClass::ReadOnly)
            >= RiskClass::DraftWrite
            || crate::risk::classify_action(&path.actions[i]) >= RiskClass::DraftWrite;
        let evidence = path.seen.get(i).and_then(|s| s.page_digest);
        if (writes || i + 1 == steps) && evidence.is_none() {
            return Err(format!(
                "step {} ({}) is not executed again and its finder gave no evidence of it",
                i + 1,
                path.actions[i].label()
            ));
        }
    }
    match (&task.verify, report.after_check) {
        (Some(check), Some(false)) => Err(format!(
            "the after-check page {} does not show {:?}",
            check.url, check.text
        )),
        (Some(check), None) => Err(format!("the after-check page {} was not loaded", check.url)),
        (_, answer) => Ok(answer),
    }
}

/// Bytes a [`StepSeen`] text (heading, URL, title) may hold.
pub const MAX_SEEN_TEXT: usize = 2048;

/// A node's answer to an assignment: its signed report, and the screenshots of the writes on
/// its success paths that the report names ([`StepSeen::screenshot`]), in path order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressAnswer {
    /// The report, signed by the node.
    pub report: Signed<ProgressReport>,
    /// The screenshots' bytes, each one named by its digest in the report.
    pub screenshots: Vec<Vec<u8>>,
}

/// The queen asks a node to reproduce a path from the start URL, in a fresh context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRequest {
    /// The task.
    pub task: TaskSpec,
    /// Its id.
    pub task_id: TaskId,
    /// The path to reproduce.
    pub path: FoundPath,
    /// How many of its steps to execute again: all of them, or on a site whose writes must
    /// not be repeated, those before the first write (the rest is attested).
    pub reproduce: u32,
}

/// What a reproduction saw at one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageInfo {
    /// The URL.
    pub url: String,
    /// The title.
    pub title: String,
    /// The validator's verdict on the step, for submit-shaped actions.
    pub verdict: Option<Verdict>,
    /// Which locator of the target's chain resolved it, when not the first.
    pub healed_locator: Option<u32>,
    /// That locator, as text (`role=link[name="…"]`), when not the first.
    pub healed_by: Option<String>,
    /// The page's fingerprint family after the step (see `fingerprint::family`).
    pub family: Option<Fingerprint>,
    /// The page's main heading after the step, if it has one.
    pub heading: Option<String>,
    /// What the step cost, in browser milliseconds.
    pub cost_ms: u64,
    /// The state's value hint after the step, in [0, 1] (the result's `reward` for every
    /// step but the last).
    pub value_hint: f64,
    /// Why the finder's policy chose the step's action (bounded: [`StepWhy::bounded`]).
    pub why: Option<StepWhy>,
}

/// What a reproduction found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// The task.
    pub task: TaskId,
    /// Fingerprints observed after each action.
    pub fingerprints: Vec<Fingerprint>,
    /// URL and title after each action.
    pub pages: Vec<PageInfo>,
    /// Whether the success predicates held at the end.
    pub success: bool,
    /// The first step whose page differed (by family where the finder said it, else by
    /// fingerprint), if any.
    pub divergence: Option<u32>,
    /// What differed there (`family differs at step 2: heading "A" vs "B"`).
    pub divergence_detail: Option<String>,
    /// Steps executed again.
    pub executed: u32,
    /// Whether the task's read-only after-check held (loaded after the reproduced steps, when
    /// the rest of the path was not executed); `None` when none was asked or loaded.
    pub after_check: Option<bool>,
    /// Why it could not be carried out, if it could not.
    pub error: Option<String>,
    /// The error was the verifier's own (an operation timed out, its browser crashed, no
    /// environment could be made): the report says nothing of the path, which may be tried
    /// again.
    #[serde(default)]
    pub transient: bool,
    /// What the node's browser touched.
    pub network: NetworkSummary,
    /// SHA-256 of the screenshot taken after each action (the bytes travel beside the signed
    /// report, in [`ReplayAnswer::screenshots`]); `None` where none was taken.
    pub screenshots: Vec<Option<Digest32>>,
    /// What the model tier was asked and spent reproducing (a verdict at the end, say).
    #[serde(default)]
    pub model: crate::llm::ModelUsage,
    /// The answer extracted from the last page into the task's answer schema, when it has
    /// one and the path reproduced.
    #[serde(default)]
    pub answer: Option<crate::llm::JsonAnswer>,
}

/// A node's answer to a replay: its signed report, and the screenshots the report names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayAnswer {
    /// The report, signed by the node.
    pub report: Signed<ReplayReport>,
    /// Per step, the screenshot's bytes (empty where none was taken).
    pub screenshots: Vec<Vec<u8>>,
}

/// Where a submitted task stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskState {
    /// Still searching.
    Running {
        /// Actions spent so far.
        actions: u32,
        /// Nodes working on it.
        nodes: u32,
    },
    /// Finished.
    Done(Box<RunResult>),
    /// The queen does not know this task.
    Unknown,
}

/// Most tasks a [`ClusterOverview`] lists (the newest first); more are counted, not listed.
pub const MAX_OVERVIEW_TASKS: usize = 256;

/// Most nodes a [`ClusterOverview`] lists.
pub const MAX_OVERVIEW_NODES: usize = 256;

/// Most addresses [`Message::NodeAddresses`] gives per node.
pub const MAX_NODE_ADDRESSES: usize = 4;

/// Most bytes of one [`FileChunk`]: well inside a frame.
pub const MAX_CHUNK_BYTES: usize = 512 * 1024;

/// Most files a finished task's folder may list (a step screenshot each, the documents).
pub const MAX_TASK_FILES: usize = 512;

/// What a queen is doing: its nodes and its tasks, for `forager status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterOverview {
    /// Seconds since the queen started.
    pub uptime_secs: u64,
    /// The connected nodes, by peer id.
    pub nodes: Vec<NodeOverview>,
    /// The tasks the queen knows, newest first (at most [`MAX_OVERVIEW_TASKS`]).
    pub tasks: Vec<TaskOverview>,
    /// Tasks known but not listed.
    pub more_tasks: u32,
}

/// One node as the queen sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeOverview {
    /// Its peer id (text form).
    pub peer: String,
    /// The address its connection comes from, when known.
    pub address: Option<String>,
    /// Requests of the queen in flight on it (assignments, replays, expansions).
    pub load: u32,
    /// Tasks in which one of its successes failed to reproduce (it gets no more of their work).
    pub distrusted_in: u32,
    /// Seconds since it last answered or connected.
    pub last_seen_secs: u64,
}

/// Where a task stands, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskPhase {
    /// The start page is being opened.
    Expanding,
    /// Branches are being searched.
    Searching,
    /// A success is being reproduced by a second node.
    Verifying,
    /// Finished; its artifacts are being written.
    Writing,
    /// Finished and passed.
    Passed,
    /// Finished without a verified success (the result says why).
    Failing,
}

impl TaskPhase {
    /// The lower-case name used by `forager status` and the metrics.
    pub fn name(self) -> &'static str {
        match self {
            TaskPhase::Expanding => "expanding",
            TaskPhase::Searching => "searching",
            TaskPhase::Verifying => "verifying",
            TaskPhase::Writing => "writing",
            TaskPhase::Passed => "passed",
            TaskPhase::Failing => "failing",
        }
    }

    /// Every phase, in the order of a task's life.
    pub const ALL: [TaskPhase; 6] = [
        TaskPhase::Expanding,
        TaskPhase::Searching,
        TaskPhase::Verifying,
        TaskPhase::Writing,
        TaskPhase::Passed,
        TaskPhase::Failing,
    ];
}

/// One task as the queen sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOverview {
    /// The task.
    pub id: TaskId,
    /// Its goal, as submitted (cut to 120 characters).
    pub goal: String,
    /// Where it stands.
    pub phase: TaskPhase,
    /// Why it failed, when it did (a [`crate::FailureReason`] name).
    pub failure: Option<String>,
    /// Actions spent.
    pub actions: u32,
    /// Its action budget.
    pub budget: u32,
    /// The best mean value of a branch, in [0, 1].
    pub best_value: f64,
    /// Nodes working on it now.
    pub nodes: u32,
    /// Seconds since it was accepted (or resumed by a restarted queen).
    pub age_secs: u64,
}

/// A file of a finished task's folder on the queen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskFile {
    /// Its name (no folder: the folder is flat).
    pub name: String,
    /// Its size.
    pub bytes: u64,
}

/// Part of a file of a finished task's folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChunk {
    /// Where in the file the bytes start.
    pub offset: u64,
    /// The file's whole size.
    pub total: u64,
    /// At most [`MAX_CHUNK_BYTES`].
    pub bytes: Vec<u8>,
}

/// Whether a file name may be asked for: a plain name in a flat folder, no path, nothing
/// hidden.
pub fn is_task_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// A late-joining node asks for the announcements it lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRequest {
    /// Return entries after this watermark.
    pub after: u64,
    /// At most this many.
    pub limit: u32,
    /// The asking node's embedder: a peer with another refuses (`other_embedder`).
    pub embedder: EmbedderId,
}

/// One page of announcements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncPage {
    /// The entries, in watermark order.
    pub entries: Vec<Signed<Announcement>>,
    /// The watermark to ask after next, or `None` when complete.
    pub next: Option<u64>,
}

/// Every message forager peers exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Message {
    /// Gossip: a signed trajectory announcement.
    Announce(Signed<Announcement>),
    /// Queen → node: open the start URL, propose actions.
    Expand(Box<ExpandRequest>),
    /// Node → queen, signed by the node.
    Expanded(Signed<ExpandReport>),
    /// Queen → node: search a branch.
    Assign(Box<BranchAssignment>),
    /// Node → queen, signed by the node.
    Progress(Box<ProgressAnswer>),
    /// Queen → node: reproduce a path.
    Replay(Box<ReplayRequest>),
    /// Node → queen: the signed report and its screenshots.
    Replayed(Box<ReplayAnswer>),
    /// Node → peer: the announcements after a watermark.
    Sync(SyncRequest),
    /// Peer → node.
    SyncPage(SyncPage),
    /// Client → queen.
    Submit(Box<TaskSpec>),
    /// Queen → client.
    Accepted(TaskId),
    /// Client → queen: how is this task doing?
    Status(TaskId),
    /// Queen → client.
    State(Box<TaskState>),
    /// Node → queen: where the other nodes listen (a node that joins dials them, to sync its
    /// replica and gossip directly).
    Nodes,
    /// Queen → node: their addresses, each with `/p2p/<id>` (at most [`MAX_OVERVIEW_NODES`]
    /// nodes, [`MAX_NODE_ADDRESSES`] each).
    NodeAddresses(Vec<String>),
    /// Client → queen: the queen's nodes and tasks.
    Overview,
    /// Queen → client.
    ClusterState(Box<ClusterOverview>),
    /// Client → queen: stop this task now; it ends `failing` with `cancelled`. Answered
    /// with the task's [`Message::State`].
    Cancel(TaskId),
    /// Queen → node: the task has ended; drop what is kept of it (its branch searches and the
    /// browser pages they hold). Answered with [`Message::Accepted`].
    Release(TaskId),
    /// Client → queen: the files of a finished task's folder.
    ListFiles(TaskId),
    /// Queen → client.
    Files(Vec<TaskFile>),
    /// Client → queen: part of one of those files.
    ReadFile {
        /// The task.
        task: TaskId,
        /// A name [`Message::Files`] listed.
        name: String,
        /// From where.
        offset: u64,
    },
    /// Queen → client.
    Chunk(FileChunk),
    /// Node → queen: may this node execute this write of the task? `key` names the write
    /// (the action and the page it is taken on). On a site not declared resettable a write
    /// runs once per task: two branches that reach the same form would otherwise both send
    /// it. Answered with [`Message::WriteClaimed`].
    ClaimWrite {
        /// The task.
        task: TaskId,
        /// The write's key.
        key: u64,
    },
    /// Queen → node: whether the write is this node's to execute (`false`: another branch
    /// holds it, or the task is not the queen's).
    WriteClaimed(bool),
    /// Any → any: the request was refused: why, as a variant the caller acts on, and a
    /// detail for people.
    Refused {
        /// Why.
        reason: RefusalReason,
        /// What happened, for the log and the journal.
        detail: String,
    },
}

/// Why a peer refused a request. Callers decide on the variant, never on the detail's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RefusalReason {
    /// The task is malformed (its validation names the field).
    InvalidTask,
    /// The node could not create an environment for the task (its browser would not start).
    NoEnvironment,
    /// The node could not open or read the task's start page: evidence about the site.
    StartPage,
    /// The node could not sign its report.
    Signing,
    /// This peer does not answer this kind of request (a node asked as a queen, or the
    /// reverse).
    NotServed,
    /// The queen could not record the task (its journal could not be created).
    Storage,
    /// The queen is shutting down.
    Stopping,
    /// The node has no free worker for the request, or the branch is already being searched
    /// there.
    Busy,
    /// The peers embed text with different models (or dimensions): their memories cannot be
    /// shared.
    OtherEmbedder,
    /// The queen does not know this task.
    UnknownTask,
    /// The task has not finished: its files are not written yet.
    NotFinished,
    /// The task's folder has no such file (or the name is not a plain file name).
    NoSuchFile,
}

impl RefusalReason {
    /// The snake_case name used in logs, the journal and error messages.
    pub fn name(self) -> &'static str {
        match self {
            RefusalReason::InvalidTask => "invalid_task",
            RefusalReason::NoEnvironment => "no_environment",
            RefusalReason::StartPage => "start_page",
            RefusalReason::Signing => "signing",
            RefusalReason::NotServed => "not_served",
            RefusalReason::Storage => "storage",
            RefusalReason::Stopping => "stopping",
            RefusalReason::Busy => "busy",
            RefusalReason::OtherEmbedder => "other_embedder",
            RefusalReason::UnknownTask => "unknown_task",
            RefusalReason::NotFinished => "not_finished",
            RefusalReason::NoSuchFile => "no_such_file",
        }
    }
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A refusal as a value: what [`Message::Refused`] carries, for APIs that return it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused ({reason}): {detail}")]
pub struct Refusal {
    /// Why.
    pub reason: RefusalReason,
    /// What happened.
    pub detail: String,
}

impl Refusal {
    /// A refusal with a detail.
    pub fn new(reason: RefusalReason, detail: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            detail: detail.into(),
        }
    }
}

impl From<Refusal> for Message {
    fn from(refusal: Refusal) -> Message {
        Message::Refused {
            reason: refusal.reason,
            detail: refusal.detail,
        }
    }
}

impl Message {
    /// Encodes into a frame.
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        codec::encode(self)
    }

    /// Decodes a frame of at most `limit` bytes.
    pub fn decode(frame: &[u8], limit: usize) -> Result<Message, CodecError> {
        codec::decode(frame, limit)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::task::AfterCheck;

    fn seen(family: u8, digest: bool) -> StepSeen {
        StepSeen {
            family: Some(Fingerprint([family; 16])),
            heading: None,
            url: format!("http://127.0.0.1:1/{family}"),
            title: String::new(),
            page_digest: digest.then_some(Digest32([family; 32])),
            screenshot: None,
            why: None,
        }
    }

    fn click(name: &str) -> Action {
        Action::Click {
            target: crate::action::Target {
                role: "button".into(),
                name: name.into(),
                locators: vec![crate::action::Locator::Text(name.into())],
                sends: Default::default(),
            },
        }
    }

    fn replayed(executed: u32, success: bool, after_check: Option<bool>) -> ReplayReport {
        ReplayReport {
            task: TaskId([0; 16]),
            fingerprints: Vec::new(),
            pages: Vec::new(),
            success,
            divergence: None,
            divergence_detail: None,
            executed,
            after_check,
            error: None,
            transient: false,
            network: NetworkSummary::default(),
            screenshots: Vec::new(),
            model: Default::default(),
            answer: None,
        }
    }

    #[test]
    fn a_write_is_attested_by_evidence_and_the_after_check_never_repeated() {
        let mut task = TaskSpec::new(
            "http://127.0.0.1:1/",
            "add a group",
            vec![SuccessPredicate::TextPresent("added".into())],
        );
        let path = FoundPath {
            seen: vec![seen(1, false), seen(2, true)],
            ..FoundPath::new(
                vec![click("Groups"), click("Save")],
                vec![Fingerprint([1; 16]), Fingerprint([2; 16])],
                vec![RiskClass::ReadOnly, RiskClass::DraftWrite],
            )
        };
        // Not resettable: the write is not executed again.
        assert_eq!(path.reproducible_steps(&task), 1);
        assert_eq!(
            judge_reproduction(&task, &path, 1, &replayed(1, false, None)),
            Ok(None)
        );
        // A finder that calls its write a read is not believed.
        let mut talked_down = path.clone();
        talked_down.risks[1] = RiskClass::ReadOnly;
        assert_eq!(talked_down.reproducible_steps(&task), 1);
        // No evidence of the write: refused, by name.
        let mut bare = path.clone();
        bare.seen[1].page_digest = None;
        let refused = judge_reproduction(&task, &bare, 1, &replayed(1, false, None));
        assert!(refused.is_err_and(|r| r.contains("step 2 (click \"Save\")")));
        // The after-check decides when the task has one.
        task.verify = Some(AfterCheck {
            url: "http://127.0.0.1:1/groups".into(),
            text: "editors".into(),
        });
        assert_eq!(
            judge_reproduction(&task, &path, 1, &replayed(1, false, Some(true))),
            Ok(Some(true))
        );
        assert!(judge_reproduction(&task, &path, 1, &replayed(1, false, Some(false))).is_err());
        assert!(judge_reproduction(&task, &path, 1, &replayed(1, false, None)).is_err());
        // A reproduction that stopped early, or diverged, is no reproduction.
        assert!(judge_reproduction(&task, &path, 1, &replayed(0, false, Some(true))).is_err());
        let mut diverged = replayed(1, false, Some(true));
        diverged.divergence = Some(0);
        diverged.divergence_detail =
            Some("family differs at step 1: heading \"A\" vs \"B\"".into());
        assert_eq!(
            judge_reproduction(&task, &path, 1, &diverged),
            Err("family differs at step 1: heading \"A\" vs \"B\"".into())
        );
        // A path that writes at once has nothing reproduced: only an after-check stands for it.
        let at_once = FoundPath {
            seen: vec![seen(2, true)],
            ..FoundPath::new(
                vec![click("Save")],
                vec![Fingerprint([2; 16])],
                vec![RiskClass::DraftWrite],
            )
        };
        assert_eq!(at_once.reproducible_steps(&task), 0);
        assert_eq!(
            judge_reproduction(&task, &at_once, 0, &replayed(0, false, Some(true))),
            Ok(Some(true))
        );
        let mut unchecked = task.clone();
        unchecked.verify = None;
        assert!(
            judge_reproduction(&unchecked, &at_once, 0, &replayed(0, false, None))
                .is_err_and(|r| r.contains("only the finder's word"))
        );
        // A sandbox: every step again, and the predicates must hold at the end.
        task.reset_cmd = Some("true".into());
        assert_eq!(path.reproducible_steps(&task), 2);
        assert_eq!(
            judge_reproduction(&task, &path, 2, &replayed(2, true, None)),
            Ok(None)
        );
        assert!(judge_reproduction(&task, &path, 2, &replayed(2, false, None)).is_err());
    }

    use super::*;
    use crate::action::{FillValue, Locator, Target};
    use crate::predicate::SuccessPredicate;
    use crate::score::ScoreWeights;
    use crate::signing::{Domain, SignatureError};
    use crate::task::Budget;
    use ed25519_dalek::SigningKey;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        "[ -~]{0,12}"
    }

    fn locator() -> impl Strategy<Value = Locator> {
        prop_oneof![
            text().prop_map(Locator::Css),
            (text(), text()).prop_map(|(role, name)| Locator::Role { role, name }),
            text().prop_map(Locator::Text),
            (text(), text(), any::<u32>()).prop_map(|(anchor, role, nth)| Locator::Near {
                anchor,
                role,
                nth
            }),
            (text(), text(), any::<u32>()).prop_map(|(key, role, nth)| Locator::InItem {
                key,
                role,
                nth
            }),
            (prop::collection::vec(text(), 0..4), text())
                .prop_map(|(words, role)| Locator::Described { words, role }),
        ]
    }

    fn target() -> impl Strategy<Value = Target> {
        (prop::collection::vec(locator(), 1..3), text(), text()).prop_map(
            |(locators, role, name)| Target {
                locators,
                role,
                name,
                sends: Default::default(),
            },
        )
    }

    pub(crate) fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            target().prop_map(|target| Action::Click { target }),
            (
                target(),
                prop_oneof![
                    text().prop_map(FillValue::Literal),
                    text().prop_map(FillValue::Input)
                ],
                any::<bool>()
            )
                .prop_map(|(target, value, enter)| Action::Fill {
                    target,
                    value,
                    enter
                }),
            (target(), text()).prop_map(|(target, option)| Action::Select { target, option }),
            (
                prop::collection::vec(
                    (target(), text(), any::<bool>()).prop_map(|(target, v, select)| {
                        crate::action::FieldValue {
                            target,
                            value: FillValue::Input(v),
                            select,
                        }
                    }),
                    0..3
                ),
                prop::option::of(target())
            )
                .prop_map(|(fields, submit)| Action::FillForm { fields, submit }),
            prop::collection::vec(target(), 1..4).prop_map(|targets| Action::Check { targets }),
            text().prop_map(|key| Action::Press { key }),
            text().prop_map(|url| Action::Navigate { url }),
            Just(Action::Back),
            Just(Action::Done),
            (target(), 2u32..40).prop_map(|(target, times)| Action::Repeat { target, times }),
            target().prop_map(|target| Action::Hover { target }),
            prop::collection::vec(
                (target(), text())
                    .prop_map(|(target, value)| crate::action::SliderMove { target, value }),
                1..4
            )
            .prop_map(|moves| Action::Slide { moves }),
            (target(), any::<bool>()).prop_map(|(target, bottom)| Action::Scroll {
                target,
                to: if bottom {
                    crate::action::ScrollEdge::Bottom
                } else {
                    crate::action::ScrollEdge::Top
                }
            }),
        ]
    }

    fn fingerprint() -> impl Strategy<Value = Fingerprint> {
        any::<[u8; 16]>().prop_map(Fingerprint)
    }

    fn task_id() -> impl Strategy<Value = TaskId> {
        any::<[u8; 16]>().prop_map(TaskId)
    }

    fn cost() -> impl Strategy<Value = Cost> {
        (any::<u64>(), any::<u64>()).prop_map(|(browser_ms, tokens)| Cost { browser_ms, tokens })
    }

    fn risk() -> impl Strategy<Value = RiskClass> {
        (1u8..=7).prop_map(|level| RiskClass::try_from(level).expect("1..=7"))
    }

    fn tree() -> impl Strategy<Value = TreeSnapshot> {
        let status = prop_oneof![
            Just(TreeStatus::Open),
            Just(TreeStatus::Success),
            Just(TreeStatus::Exhausted),
            Just(TreeStatus::Pruned(PruneReason::Loop)),
            text().prop_map(|reason| TreeStatus::Pruned(PruneReason::ActionFailed { reason })),
        ];
        let node = (
            (any::<u32>(), prop::option::of(any::<u32>())),
            prop::option::of(action()),
            prop::option::of(fingerprint()),
            status,
            (
                any::<u32>(),
                0.0f64..=1.0,
                risk(),
                any::<u64>(),
                0.0f64..=1.0,
            ),
        )
            .prop_map(
                |(
                    (id, parent),
                    action,
                    fingerprint,
                    status,
                    (visits, mean_value, risk, cost_ms, replay),
                )| {
                    TreeNode {
                        id,
                        parent,
                        action,
                        fingerprint,
                        status,
                        visits,
                        mean_value,
                        risk,
                        cost_ms,
                        replay,
                    }
                },
            );
        (
            any::<u64>(),
            prop::collection::vec(node, 0..3),
            any::<u32>(),
        )
            .prop_map(|(instance, nodes, omitted)| TreeSnapshot {
                instance,
                nodes,
                omitted,
            })
    }

    fn known_locations() -> impl Strategy<Value = Vec<KnownLocation>> {
        prop::collection::vec(
            (any::<u64>(), any::<u32>())
                .prop_map(|(location, depth)| KnownLocation { location, depth }),
            0..4,
        )
    }

    fn known_states() -> impl Strategy<Value = Vec<KnownState>> {
        prop::collection::vec(
            (fingerprint(), any::<u32>())
                .prop_map(|(fingerprint, depth)| KnownState { fingerprint, depth }),
            0..4,
        )
    }

    fn found_path() -> impl Strategy<Value = FoundPath> {
        (
            prop::collection::vec(action(), 0..4),
            prop::collection::vec(fingerprint(), 0..4),
            prop::collection::vec(risk(), 0..4),
            prop::collection::vec(
                (
                    prop::option::of(fingerprint()),
                    prop::option::of(text()),
                    text(),
                    prop::option::of(any::<[u8; 32]>()),
                ),
                0..3,
            ),
        )
            .prop_map(|(actions, fingerprints, risks, seen)| FoundPath {
                actions,
                fingerprints,
                risks,
                seen: seen
                    .into_iter()
                    .map(|(family, heading, url, digest)| StepSeen {
                        family,
                        heading,
                        title: url.chars().rev().collect(),
                        url,
                        page_digest: digest.map(Digest32),
                        screenshot: digest.map(|d| Digest32::of(&d)),
                        why: digest.map(|d| StepWhy {
                            rank: u32::from(d[0]),
                            candidates: u32::from(d[1]),
                            prior: f64::from(d[2]) / 255.0,
                            signals: vec![crate::result::SignalLift {
                                signal: format!("signal_{}", d[3]),
                                lift: f64::from(d[4]) - 128.0,
                            }],
                        }),
                    })
                    .collect(),
            })
    }

    fn embedder() -> impl Strategy<Value = EmbedderId> {
        (text(), any::<[u8; 32]>(), any::<u32>()).prop_map(|(name, digest, dim)| EmbedderId {
            name,
            digest: Digest32(digest),
            dim,
        })
    }

    fn announcement() -> impl Strategy<Value = Announcement> {
        (
            (task_id(), text(), embedder()),
            prop::collection::vec(any::<f32>(), 0..8),
            prop::collection::vec(
                (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
                    |(location, page_family, key)| TraceStep {
                        location,
                        page_family,
                        key,
                    },
                ),
                0..4,
            ),
            any::<f32>(),
            any::<bool>(),
            cost(),
            any::<u32>(),
            any::<u64>(),
        )
            .prop_map(
                |(
                    (task, family, embedder),
                    vector,
                    trace,
                    reward,
                    success,
                    cost,
                    steps,
                    sequence,
                )| Announcement {
                    task,
                    family,
                    embedder,
                    vector,
                    trace,
                    reward,
                    success,
                    cost,
                    steps,
                    sequence,
                },
            )
    }

    fn key() -> impl Strategy<Value = SigningKey> {
        any::<[u8; 32]>().prop_map(|secret| SigningKey::from_bytes(&secret))
    }

    fn signed<T: Serialize + std::fmt::Debug>(
        value: impl Strategy<Value = T>,
        domain: Domain,
    ) -> impl Strategy<Value = Signed<T>> {
        (key(), value).prop_map(move |(key, value)| {
            Signed::new(&key, domain, value).expect("small values encode")
        })
    }

    fn task() -> impl Strategy<Value = TaskSpec> {
        (
            text(),
            text(),
            prop::collection::vec(
                prop_oneof![
                    text().prop_map(SuccessPredicate::UrlMatches),
                    text().prop_map(SuccessPredicate::TextPresent),
                    text().prop_map(SuccessPredicate::SelectorPresent),
                    text().prop_map(SuccessPredicate::JavaScript),
                    text().prop_map(SuccessPredicate::Extraction),
                ],
                0..3,
            ),
            prop::collection::btree_map(text(), text(), 0..3),
            (any::<u32>(), any::<u32>(), any::<u32>(), any::<u64>()),
            1u8..=7,
            (0.0f64..10.0, any::<u64>(), any::<bool>()),
            (
                prop::option::of(text()),
                prop::option::of((text(), text())),
                prop::option::of(text()),
            ),
        )
            .prop_map(
                |(
                    url,
                    goal,
                    success,
                    inputs,
                    budget,
                    ceiling,
                    (c, seed, resettable),
                    (family, verify, reset_cmd),
                )| {
                    TaskSpec {
                        start_url: url,
                        goal,
                        failure: success.iter().rev().cloned().collect(),
                        success,
                        inputs,
                        budget: Budget {
                            actions: budget.0,
                            max_depth: budget.1,
                            wall_time_secs: budget.2,
                            cost_ms: budget.3,
                        },
                        risk_ceiling: RiskClass::try_from(ceiling).expect("1..=7"),
                        weights: ScoreWeights {
                            exploration: c,
                            ..ScoreWeights::DEFAULT
                        },
                        seed,
                        allowed_origins: vec![],
                        resettable,
                        family,
                        verify: verify.map(|(url, text)| crate::task::AfterCheck { url, text }),
                        reset_cmd,
                        // Some tasks carry a consent, so the codec sees signed values in them.
                        consents: if seed % 2 == 1 {
                            vec![signed_consent(seed)]
                        } else {
                            Vec::new()
                        },
                        // Some mount a session, so the codec sees one inside a task.
                        capsule: (seed % 3 == 0).then(|| crate::capsule::CapsuleRef {
                            id: crate::digest::Digest32([seed as u8; 32]),
                            signer: "ab".repeat(32),
                            origins: vec!["http://127.0.0.1:8080".into()],
                            expires_at: seed,
                        }),
                        session: (seed % 3 == 0).then(|| crate::capsule::SessionState {
                            cookies: vec![crate::capsule::SessionCookie {
                                name: "sid".into(),
                                value: format!("v{seed}"),
                                domain: "127.0.0.1".into(),
                                path: "/".into(),
                                expires: (seed % 2 == 0).then_some(seed),
                                http_only: true,
                                secure: false,
                                same_site: None,
                            }],
                            storage: vec![crate::capsule::OriginStorage {
                                origin: "http://127.0.0.1:8080".into(),
                                local: vec![("k".into(), "v".into())],
                                session: Vec::new(),
                            }],
                        }),
                        // Some ask a model tier, so the codec sees one inside a task.
                        model: (seed % 4 == 1).then(|| crate::llm::ModelSettings {
                            small: crate::llm::ModelEndpoint {
                                url: "http://127.0.0.1:8081/v1".into(),
                                model: format!("m{seed}"),
                                api_key_env: (seed % 8 == 1).then(|| "KEY".into()),
                                prompt_price_per_1k: 0.25,
                                completion_price_per_1k: 1.0,
                            },
                            large: None,
                            max_tokens: Some(seed),
                            max_cost: None,
                            call_timeout_secs: 30,
                            uses: crate::llm::ModelUse::DEFAULT.to_vec(),
                            answer_schema: (seed % 8 == 5).then(|| r#"{"type":"object"}"#.into()),
                        }),
                    }
                },
            )
    }

    fn signed_consent(seed: u64) -> crate::consent::SignedConsent {
        use rand::SeedableRng;
        let key = ed25519_dalek::SigningKey::generate(&mut rand::rngs::StdRng::seed_from_u64(seed));
        let step = |name: &str, key: u64| {
            let action = Action::Click {
                target: crate::action::Target {
                    locators: vec![crate::action::Locator::Css("#place".into())],
                    role: "button".into(),
                    name: name.into(),
                    sends: Default::default(),
                },
            };
            crate::consent::ConsentStep {
                label: action.label(),
                action,
                key,
            }
        };
        let consent = crate::consent::Consent {
            version: crate::consent::CONSENT_VERSION,
            task_id: format!("{seed:032x}"),
            origin: "http://127.0.0.1:8080".into(),
            prefix: vec![step("Checkout", seed)],
            action: step("Place order", seed ^ 1),
            risk: RiskClass::try_from(5).expect("a class"),
            issued_at: seed,
            expires_at: seed.saturating_add(3600),
        };
        crate::consent::sign_consent(&key, consent).expect("signed")
    }

    fn candidate() -> impl Strategy<Value = WireCandidate> {
        (
            action(),
            any::<f64>(),
            risk(),
            any::<u64>(),
            prop::option::of(any::<u64>()),
        )
            .prop_map(|(action, prior, risk, key, target)| WireCandidate {
                action,
                prior,
                risk,
                key,
                target,
            })
    }

    fn expand_report() -> impl Strategy<Value = ExpandReport> {
        (
            task_id(),
            fingerprint(),
            any::<bool>(),
            any::<f64>(),
            prop::collection::vec(candidate(), 0..3),
        )
            .prop_map(
                |(task, root, success, value_hint, candidates)| ExpandReport {
                    task,
                    root,
                    success,
                    value_hint,
                    session_expired: !success && value_hint > 0.5,
                    candidates,
                    model: Default::default(),
                },
            )
    }

    fn assignment() -> impl Strategy<Value = Message> {
        (
            task(),
            task_id(),
            any::<u64>(),
            prop::collection::vec(action(), 0..4),
            prop::collection::vec(fingerprint(), 0..4),
            (
                any::<u32>(),
                any::<u64>(),
                known_locations(),
                known_states(),
                any::<bool>(),
            ),
        )
            .prop_map(
                |(
                    task,
                    task_id,
                    branch,
                    prefix,
                    expected,
                    (actions, deadline_ms, known, known_states, workflow),
                )| {
                    Message::Assign(Box::new(BranchAssignment {
                        task,
                        task_id,
                        branch: BranchId(branch),
                        prefix,
                        expected,
                        actions,
                        deadline_ms,
                        known_locations: known,
                        known_states,
                        workflow,
                    }))
                },
            )
    }

    fn progress_report() -> impl Strategy<Value = ProgressReport> {
        (
            (
                task_id(),
                any::<u64>(),
                prop::collection::vec(fingerprint(), 0..3),
            ),
            (
                any::<u32>(),
                any::<f64>(),
                any::<u32>(),
                any::<u64>(),
                cost(),
            ),
            prop::collection::vec(found_path(), 0..2),
            prop::collection::vec(found_path(), 0..2),
            any::<bool>(),
            prop::option::of(text()),
            (known_locations(), known_states()),
            tree(),
            (
                any::<u64>(),
                any::<u64>(),
                any::<u64>(),
                prop::collection::btree_map(text(), any::<u32>(), 0..3),
                (any::<u64>(), any::<u64>(), any::<u64>()),
            ),
        )
            .prop_map(
                |(
                    (task, branch, prefix_fingerprints),
                    (visits, value_sum, actions, replayed, cost),
                    successes,
                    approvals,
                    exhausted,
                    error,
                    (locations, states),
                    tree,
                    (cache_hits, cache_misses, nodes, pruned, (pages_read, reading_us, remembered)),
                )| {
                    ProgressReport {
                        task,
                        branch: BranchId(branch),
                        prefix_fingerprints,
                        visits,
                        value_sum,
                        best_value: value_sum,
                        actions,
                        replayed,
                        cost,
                        successes,
                        approvals,
                        exhausted,
                        error,
                        network: NetworkSummary::default(),
                        counters: BranchCounters {
                            cache_hits,
                            cache_misses,
                            pages_read,
                            reading_us,
                            remembered,
                            nodes,
                            pruned,
                            model: Default::default(),
                        },
                        locations,
                        states,
                        tree,
                        session_ended: false,
                    }
                },
            )
    }

    fn replay_report() -> impl Strategy<Value = ReplayReport> {
        (
            task_id(),
            prop::collection::vec(fingerprint(), 0..4),
            prop::collection::vec(
                (
                    (text(), text(), prop::option::of(any::<u32>())),
                    (
                        prop::option::of(text()),
                        prop::option::of(fingerprint()),
                        prop::option::of(text()),
                        any::<u64>(),
                    ),
                )
                    .prop_map(
                        |((url, title, healed_locator), (healed_by, family, heading, cost_ms))| {
                            PageInfo {
                                url,
                                title,
                                verdict: None,
                                healed_locator,
                                healed_by,
                                family,
                                heading,
                                cost_ms,
                                value_hint: 0.5,
                                why: None,
                            }
                        },
                    ),
                0..3,
            ),
            any::<bool>(),
            prop::option::of(any::<u32>()),
            prop::option::of(text()),
        )
            .prop_map(|(task, fingerprints, pages, success, divergence, error)| {
                ReplayReport {
                    task,
                    fingerprints,
                    pages,
                    success,
                    divergence,
                    divergence_detail: divergence.map(|d| format!("step {d}")),
                    executed: 2,
                    after_check: Some(success),
                    transient: error.is_some(),
                    error,
                    network: NetworkSummary::default(),
                    screenshots: vec![None, Some(Digest32([3; 32]))],
                    model: Default::default(),
                    answer: None,
                }
            })
    }

    fn cluster_state() -> impl Strategy<Value = Message> {
        (
            any::<u64>(),
            text(),
            task_id(),
            any::<u32>(),
            0..6usize,
            prop::option::of(text()),
        )
            .prop_map(|(n, text, id, count, phase, failure)| {
                Message::ClusterState(Box::new(ClusterOverview {
                    uptime_secs: n,
                    nodes: vec![NodeOverview {
                        peer: text.clone(),
                        address: Some(text.clone()),
                        load: count,
                        distrusted_in: count / 2,
                        last_seen_secs: n / 3,
                    }],
                    tasks: vec![TaskOverview {
                        id,
                        goal: text,
                        phase: TaskPhase::ALL[phase],
                        failure,
                        actions: count,
                        budget: count / 3,
                        best_value: (n % 1000) as f64 / 1000.0,
                        nodes: count % 7,
                        age_secs: n / 5,
                    }],
                    more_tasks: count / 11,
                }))
            })
    }

    fn refusal() -> impl Strategy<Value = Message> {
        (0..12u8, text()).prop_map(|(reason, detail)| Message::Refused {
            reason: [
                RefusalReason::InvalidTask,
                RefusalReason::NoEnvironment,
                RefusalReason::StartPage,
                RefusalReason::Signing,
                RefusalReason::NotServed,
                RefusalReason::Storage,
                RefusalReason::Stopping,
                RefusalReason::Busy,
                RefusalReason::OtherEmbedder,
                RefusalReason::UnknownTask,
                RefusalReason::NotFinished,
                RefusalReason::NoSuchFile,
            ][reason as usize],
            detail,
        })
    }

    fn message() -> impl Strategy<Value = Message> {
        prop_oneof![
            signed(announcement(), Domain::Announcement).prop_map(Message::Announce),
            task().prop_map(|task| Message::Expand(Box::new(ExpandRequest { task }))),
            signed(expand_report(), Domain::Report).prop_map(Message::Expanded),
            assignment(),
            signed(progress_report(), Domain::Report).prop_map(|report| Message::Progress(
                Box::new(ProgressAnswer {
                    report,
                    screenshots: vec![vec![0xff, 0xd8, 9]],
                })
            )),
            (task(), task_id(), found_path(), any::<u32>()).prop_map(
                |(task, task_id, path, reproduce)| {
                    Message::Replay(Box::new(ReplayRequest {
                        task,
                        task_id,
                        path,
                        reproduce,
                    }))
                }
            ),
            signed(replay_report(), Domain::Report).prop_map(|report| Message::Replayed(Box::new(
                ReplayAnswer {
                    report,
                    screenshots: vec![Vec::new(), vec![0xff, 0xd8, 1, 2]],
                }
            ))),
            (any::<u64>(), any::<u32>(), embedder()).prop_map(|(after, limit, embedder)| {
                Message::Sync(SyncRequest {
                    after,
                    limit,
                    embedder,
                })
            }),
            (
                prop::collection::vec(signed(announcement(), Domain::Announcement), 0..3),
                prop::option::of(any::<u64>())
            )
                .prop_map(|(entries, next)| Message::SyncPage(SyncPage { entries, next })),
            task().prop_map(|t| Message::Submit(Box::new(t))),
            task_id().prop_map(Message::Accepted),
            task_id().prop_map(Message::Status),
            (any::<u32>(), any::<u32>()).prop_map(|(actions, nodes)| {
                Message::State(Box::new(TaskState::Running { actions, nodes }))
            }),
            Just(Message::State(Box::new(TaskState::Unknown))),
            Just(Message::Overview),
            Just(Message::Nodes),
            prop::collection::vec(text(), 0..4).prop_map(Message::NodeAddresses),
            cluster_state(),
            task_id().prop_map(Message::Cancel),
            task_id().prop_map(Message::Release),
            task_id().prop_map(Message::ListFiles),
            prop::collection::vec((text(), any::<u64>()), 0..4).prop_map(|files| {
                Message::Files(
                    files
                        .into_iter()
                        .map(|(name, bytes)| TaskFile { name, bytes })
                        .collect(),
                )
            }),
            (task_id(), text(), any::<u64>()).prop_map(|(task, name, offset)| Message::ReadFile {
                task,
                name,
                offset
            }),
            (
                any::<u64>(),
                any::<u64>(),
                prop::collection::vec(any::<u8>(), 0..64)
            )
                .prop_map(|(offset, total, bytes)| Message::Chunk(FileChunk {
                    offset,
                    total,
                    bytes
                })),
            refusal(),
        ]
    }

    /// Floats are compared by bits: NaN payloads must survive the round trip too.
    fn same(a: &Message, b: &Message) -> bool {
        codec::canonical_bytes(a).ok() == codec::canonical_bytes(b).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn every_message_round_trips(message in message()) {
            let frame = message.encode().expect("encodes");
            let back = Message::decode(&frame, codec::MAX_FRAME_BYTES).expect("decodes");
            prop_assert!(same(&message, &back), "{message:?} != {back:?}");
        }

        #[test]
        fn a_truncated_frame_never_decodes(message in message(), cut in any::<prop::sample::Index>()) {
            let frame = message.encode().expect("encodes");
            let cut = cut.index(frame.len());
            prop_assert!(Message::decode(&frame[..cut], codec::MAX_FRAME_BYTES).is_err());
        }

        #[test]
        fn random_bytes_give_an_error_not_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut frame = codec::MAGIC.to_vec();
            frame.extend_from_slice(&codec::WIRE_VERSION.to_be_bytes());
            frame.extend_from_slice(&bytes);
            let _ = Message::decode(&frame, codec::MAX_FRAME_BYTES);
        }

        /// Flip any single bit of an encoded signed announcement: the result either fails to
        /// decode or fails to verify. Nothing changed can pass as signed.
        #[test]
        fn any_changed_byte_breaks_the_signature(
            signed in signed(announcement(), Domain::Announcement),
            position in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let message = Message::Announce(signed);
            let mut frame = message.encode().expect("encodes");
            let at = codec::HEADER_BYTES + position.index(frame.len() - codec::HEADER_BYTES);
            frame[at] ^= 1 << bit;
            match Message::decode(&frame, codec::MAX_FRAME_BYTES) {
                Err(_) => {}
                Ok(Message::Announce(tampered)) => {
                    prop_assert_eq!(
                        tampered.verify(Domain::Announcement).err(),
                        Some(SignatureError::Invalid)
                    );
                }
                Ok(other) => prop_assert!(false, "decoded as another message: {other:?}"),
            }
        }
    }

    #[test]
    fn oversized_messages_are_refused_before_decoding() {
        let huge: Message =
            Refusal::new(RefusalReason::NotServed, "x".repeat(codec::MAX_FRAME_BYTES)).into();
        assert!(matches!(huge.encode(), Err(CodecError::TooLarge { .. })));
        let big: Message =
            Refusal::new(RefusalReason::NotServed, "x".repeat(MAX_GOSSIP_BYTES)).into();
        let frame = big.encode().expect("under the frame limit");
        assert!(matches!(
            Message::decode(&frame, MAX_GOSSIP_BYTES),
            Err(CodecError::TooLarge { .. })
        ));
    }

    #[test]
    fn task_ids_are_stable_and_distinct() {
        let a = TaskSpec::new("http://127.0.0.1/", "goal a", vec![]);
        let b = TaskSpec::new("http://127.0.0.1/", "goal b", vec![]);
        assert_eq!(TaskId::of(&a).ok(), TaskId::of(&a.clone()).ok());
        assert_ne!(TaskId::of(&a).ok(), TaskId::of(&b).ok());
    }
}
