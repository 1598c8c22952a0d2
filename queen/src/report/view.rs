//! The report's view model: what the journal and the result say about a run, gathered into
//! plain data for the templates (no HTML here). The search tree is merged from the journal's
//! per-report tree deltas under the queen's branches, each node's state mapped once from the
//! journal's names into [`NodeState`]; the winning path is marked on it; the peers, branches,
//! phases and problems are counted for the time section.

use crate::journal::{Entry, JournalEvent, JournalTreeNode};
use forager_protocol::result::{RunResult, Status};
use forager_protocol::wire::branch_candidates;
use forager_protocol::{PruneReason, RiskClass, TaskSpec};
use std::collections::{BTreeMap, HashMap};

/// `text` cut to at most `max` characters, an ellipsis marking the cut.
pub(super) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// A peer id shortened for display (its last 8 characters).
pub(super) fn short_peer(peer: &str) -> String {
    let n = peer.chars().count();
    peer.chars().skip(n.saturating_sub(8)).collect()
}

/// Where a node of the tree picture stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NodeState {
    /// The start page.
    Root,
    /// A branch the queen opened that no node searched.
    Unexplored,
    /// Searchable.
    Open,
    /// Its state satisfied the success predicates.
    Success,
    /// Everything below it was explored or pruned.
    Exhausted,
    /// Cut; the reason's snake_case name (`no_progress`, `approval_required`, …, as
    /// `PruneReason::kind` names it).
    Pruned(String),
}

impl NodeState {
    /// The state a journal tree node's `status` names (`TreeStatus::kind`: `open`, `success`,
    /// `exhausted`, or the prune reason's kind). The one place journal names become states.
    pub(super) fn from_journal(status: &str) -> NodeState {
        match status {
            "open" => NodeState::Open,
            "success" => NodeState::Success,
            "exhausted" => NodeState::Exhausted,
            reason => NodeState::Pruned(reason.to_owned()),
        }
    }

    /// A branch cut for its risk: above the ceiling, never executed.
    fn approval_required(risk: RiskClass) -> NodeState {
        NodeState::Pruned(
            PruneReason::ApprovalRequired { class: risk }
                .kind()
                .to_owned(),
        )
    }

    /// Its snake_case name (the journal's, or `root` and `unexplored`).
    pub(super) fn name(&self) -> &str {
        match self {
            NodeState::Root => "root",
            NodeState::Unexplored => "unexplored",
            NodeState::Open => "open",
            NodeState::Success => "success",
            NodeState::Exhausted => "exhausted",
            NodeState::Pruned(reason) => reason,
        }
    }

    /// The prune reason, for a pruned node.
    pub(super) fn prune_reason(&self) -> Option<&str> {
        match self {
            NodeState::Pruned(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether it was pruned.
    pub(super) fn is_pruned(&self) -> bool {
        self.prune_reason().is_some()
    }
}

/// One node of the tree picture.
#[derive(Debug, Clone)]
pub(super) struct Vertex {
    /// The action's label (the start page's URL at the root).
    pub(super) label: String,
    pub(super) state: NodeState,
    /// A prior, a failure's message or why it was never executed.
    pub(super) detail: Option<String>,
    /// Mean value, in [0, 1].
    pub(super) value: f64,
    /// The memory's vote for the action (the replay bonus), 0 when it did not vote.
    pub(super) replay: f64,
    pub(super) visits: u32,
    /// Index into the run's peers, for the outline colour.
    pub(super) peer: Option<usize>,
    /// Indices into the vertices.
    pub(super) children: Vec<usize>,
    /// On the winning path.
    pub(super) winner: bool,
    /// 0 for the start page, 1 for a branch.
    pub(super) depth: u32,
}

impl Vertex {
    fn new(label: String, state: NodeState, depth: u32) -> Vertex {
        Vertex {
            label,
            state,
            detail: None,
            value: 0.0,
            replay: 0.0,
            visits: 0,
            peer: None,
            children: Vec::new(),
            winner: false,
            depth,
        }
    }
}

/// A merged tree of one peer on one branch (the journal holds deltas).
#[derive(Debug, Default)]
struct MergedTree {
    nodes: BTreeMap<u32, JournalTreeNode>,
    omitted: u32,
}

/// What the journal says about the run, gathered for drawing.
#[derive(Debug, Default)]
pub(super) struct RunView {
    pub(super) task: Option<TaskSpec>,
    /// Every peer that took part, in order of appearance (its index picks its colour).
    pub(super) peers: Vec<String>,
    /// The tree picture; the start page first.
    pub(super) vertices: Vec<Vertex>,
    /// The queen's branches, in the order it opened them.
    pub(super) branches: Vec<BranchView>,
    /// Start-page actions above the risk ceiling.
    pub(super) approvals: usize,
    /// Tree nodes the peers left out of their reports.
    pub(super) omitted: u32,
    pub(super) expander: Option<String>,
    pub(super) finder: Option<String>,
    pub(super) verifier: Option<String>,
    pub(super) per_peer: BTreeMap<String, PeerView>,
    pub(super) problems: Vec<String>,
    /// The run's phases and their durations in milliseconds.
    pub(super) phases: Vec<(String, u64)>,
}

/// One of the queen's branches: its label and its reports' sums.
#[derive(Debug, Default, Clone)]
pub(super) struct BranchView {
    pub(super) label: String,
    pub(super) visits: u32,
    pub(super) value_sum: f64,
    pub(super) actions: u32,
    pub(super) exhausted: bool,
    pub(super) peers: Vec<String>,
    /// Its vertex in the picture.
    pub(super) vertex: usize,
    /// Tree nodes drawn under it.
    pub(super) nodes: usize,
}

impl BranchView {
    /// The reports' mean value (0 before any report).
    pub(super) fn mean(&self) -> f64 {
        if self.visits > 0 {
            self.value_sum / f64::from(self.visits)
        } else {
            0.0
        }
    }
}

/// What one peer did.
#[derive(Debug, Default, Clone)]
pub(super) struct PeerView {
    pub(super) assignments: u32,
    pub(super) actions: u32,
    pub(super) replayed: u64,
    pub(super) browser_ms: u64,
    pub(super) roles: Vec<&'static str>,
}

impl RunView {
    fn peer(&mut self, peer: &str) -> usize {
        match self.peers.iter().position(|p| p == peer) {
            Some(i) => i,
            None => {
                self.peers.push(peer.to_owned());
                self.peers.len() - 1
            }
        }
    }

    fn role(&mut self, peer: &str, role: &'static str) {
        let view = self.per_peer.entry(peer.to_owned()).or_default();
        if !view.roles.contains(&role) {
            view.roles.push(role);
        }
    }

    /// A peer's index among the run's peers.
    pub(super) fn peer_index(&self, peer: &str) -> Option<usize> {
        self.peers.iter().position(|p| p == peer)
    }

    /// The pruned vertices counted by reason, reasons in name order.
    pub(super) fn pruned_by_reason(&self) -> BTreeMap<&str, usize> {
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for v in &self.vertices {
            if let Some(reason) = v.state.prune_reason() {
                *reasons.entry(reason).or_default() += 1;
            }
        }
        reasons
    }

    /// Adds a branch of the queen's root to the picture.
    fn add_branch(&mut self, label: String, state: NodeState, detail: Option<String>) {
        let vertex = self.vertices.len();
        let mut v = Vertex::new(label.clone(), state, 1);
        v.detail = detail;
        self.vertices.push(v);
        self.vertices[0].children.push(vertex);
        self.branches.push(BranchView {
            label,
            vertex,
            ..BranchView::default()
        });
    }

    /// The queen's branches, as it numbers them: the start page's actions within the ceiling
    /// (and those above it, drawn apart), resumptions at approved actions, then a remembered
    /// workflow or shared prefix (R).
    fn start_page_branches(
        &mut self,
        node: &str,
        candidates: &[forager_protocol::wire::WireCandidate],
        recalled: Option<&(String, usize, crate::memory::Match)>,
    ) {
        self.expander = Some(node.to_owned());
        self.peer(node);
        self.role(node, "opened the start page");
        let ceiling = self
            .task
            .as_ref()
            .map_or(RiskClass::DEFAULT_CEILING, |t| t.risk_ceiling);
        let consents = self.task.as_ref().map(|t| t.consents.clone());
        let (branches, approvals) = branch_candidates(candidates.to_vec(), ceiling, |c| {
            consents
                .iter()
                .flatten()
                .any(|s| s.value.permits(&[], c.key, c.risk))
        });
        self.approvals = approvals.len();
        for candidate in branches {
            self.add_branch(
                candidate.action.label(),
                NodeState::Unexplored,
                Some(format!("prior {:.2}", candidate.prior)),
            );
        }
        let resumes: Vec<String> = self
            .task
            .iter()
            .flat_map(|t| &t.consents)
            .filter(|c| !c.value.prefix.is_empty())
            .map(|c| format!("resume at {}", c.value.action.action.label()))
            .collect();
        for label in resumes {
            self.add_branch(label, NodeState::Unexplored, None);
        }
        if let Some((workflow, steps, matched)) = recalled {
            let short = workflow.get(..12).unwrap_or(workflow);
            let (label, detail) = match matched {
                crate::memory::Match::Prefix => (
                    format!("R: the way in of remembered workflow {short}"),
                    format!("{steps} steps the site's successes began with"),
                ),
                crate::memory::Match::Part => (
                    format!("R: remembered workflow {short}, the goal's first part"),
                    format!("{steps} steps of a remembered task the goal begins with"),
                ),
                _ => (
                    format!("R: remembered workflow {short}"),
                    format!("{steps} steps from memory, tried first"),
                ),
            };
            self.add_branch(label, NodeState::Unexplored, Some(detail));
        }
        for candidate in approvals {
            let vertex = self.vertices.len();
            let mut v = Vertex::new(
                candidate.action.label(),
                NodeState::approval_required(candidate.risk),
                1,
            );
            v.detail = Some(format!(
                "risk class {} is above the ceiling: never executed",
                candidate.risk.level()
            ));
            self.vertices.push(v);
            self.vertices[0].children.push(vertex);
        }
    }

    /// Gathers the journal's entries and the result.
    pub(super) fn build(entries: &[Entry], result: &RunResult) -> RunView {
        let mut view = RunView::default();
        let mut trees: BTreeMap<(u64, usize, u64), MergedTree> = BTreeMap::new();
        let mut marks: Vec<(&'static str, u64)> = Vec::new();
        view.vertices.push(Vertex::new(
            format!("start page {}", result.start_url),
            NodeState::Root,
            0,
        ));
        let mut recalled: Option<(String, usize, crate::memory::Match)> = None;
        for entry in entries {
            match &entry.event {
                JournalEvent::Recalled {
                    workflow,
                    steps,
                    matched,
                    ..
                } => recalled = Some((workflow.clone(), steps.len(), *matched)),
                JournalEvent::Submitted { task } => {
                    view.task = Some((**task).clone());
                    marks.push(("submitted", entry.at_ms));
                }
                JournalEvent::Branches {
                    node, candidates, ..
                } => {
                    marks.push(("start page opened", entry.at_ms));
                    view.start_page_branches(node, candidates, recalled.as_ref());
                }
                JournalEvent::WriteClaimed { node, .. } => {
                    view.peer(node);
                    view.role(node, "wrote");
                }
                JournalEvent::Assigned { node, branch, .. } => {
                    view.peer(node);
                    view.role(node, "searched branches");
                    let peer = view.per_peer.entry(node.clone()).or_default();
                    peer.assignments += 1;
                    if let Some(b) = view.branches.get_mut(*branch as usize)
                        && !b.peers.contains(node)
                    {
                        b.peers.push(node.clone());
                    }
                }
                JournalEvent::Report {
                    node,
                    branch,
                    visits,
                    value_sum,
                    actions,
                    exhausted,
                    replayed,
                    cost_ms,
                    tree,
                    error,
                    ..
                } => {
                    let index = view.peer(node);
                    let peer = view.per_peer.entry(node.clone()).or_default();
                    peer.actions += actions;
                    peer.replayed += replayed;
                    peer.browser_ms += cost_ms;
                    if let Some(b) = view.branches.get_mut(*branch as usize) {
                        b.visits += visits;
                        b.value_sum += value_sum.clamp(0.0, f64::from(*visits));
                        b.actions += actions;
                        b.exhausted |= exhausted;
                    }
                    if let Some(error) = error {
                        view.problems
                            .push(format!("branch {branch} on …{}: {error}", short_peer(node)));
                    }
                    if let Some(tree) = tree {
                        let merged = trees.entry((*branch, index, tree.instance)).or_default();
                        merged.omitted = tree.omitted;
                        for n in &tree.nodes {
                            merged.nodes.insert(n.id, n.clone());
                        }
                    }
                }
                JournalEvent::Reassigned {
                    node,
                    branch,
                    reason,
                } => view.problems.push(format!(
                    "branch {branch} taken from …{}: {reason}",
                    short_peer(node)
                )),
                JournalEvent::Success { finder, .. } => {
                    if !marks.iter().any(|(m, _)| *m == "first success") {
                        marks.push(("first success", entry.at_ms));
                    }
                    view.peer(finder);
                    view.role(finder, "found a success");
                }
                JournalEvent::Verified {
                    finder, verifier, ..
                } => {
                    // A success reproduced while a shorter one waited was held back: the
                    // last one reproduced is the winner.
                    if !marks.iter().any(|(m, _)| *m == "reproduced") {
                        marks.push(("reproduced", entry.at_ms));
                    }
                    view.finder = Some(finder.clone());
                    view.verifier = Some(verifier.clone());
                    view.peer(verifier);
                }
                JournalEvent::NotReproduced {
                    finder,
                    verifier,
                    reason,
                    ..
                } => view.problems.push(format!(
                    "a success of …{} was not reproduced by …{}: {reason}",
                    short_peer(finder),
                    short_peer(verifier)
                )),
                JournalEvent::Problem { what } => view.problems.push(what.clone()),
                JournalEvent::Finished { .. } => marks.push(("finished", entry.at_ms)),
                // A success's detour off the start page, tried without it.
                JournalEvent::Shortcut { .. } => marks.push(("shortcut tried", entry.at_ms)),
                JournalEvent::Verifying { .. } | JournalEvent::Resumed { .. } => {}
            }
        }
        if let (Some(finder), Some(verifier)) = (view.finder.clone(), view.verifier.clone()) {
            view.role(&finder, "found the winner");
            view.role(&verifier, "reproduced the winner");
        }
        view.settle_branches();
        view.attach_trees(&trees);
        view.mark_winner(result);
        view.phases_between(&marks);
        view
    }

    /// Each searched branch's vertex takes its visits, mean value and state.
    fn settle_branches(&mut self) {
        for b in &mut self.branches {
            if b.visits > 0 {
                let v = &mut self.vertices[b.vertex];
                v.visits = b.visits;
                v.value = b.value_sum / f64::from(b.visits);
                v.state = if b.exhausted {
                    NodeState::Exhausted
                } else {
                    NodeState::Open
                };
            }
        }
    }

    /// The run's phases: from each mark to the next.
    fn phases_between(&mut self, marks: &[(&'static str, u64)]) {
        for pair in marks.windows(2) {
            let name = match pair[1].0 {
                "start page opened" => "opening the start page",
                "first success" => "searching",
                "reproduced" => "reproducing",
                "finished" if pair[0].0 == "reproduced" => "writing artifacts",
                "finished" => "searching",
                other => other,
            };
            self.phases
                .push((name.to_owned(), pair[1].1.saturating_sub(pair[0].1)));
        }
    }

    /// Draws the reported trees under their branches.
    fn attach_trees(&mut self, trees: &BTreeMap<(u64, usize, u64), MergedTree>) {
        for ((branch, peer, _), tree) in trees {
            self.omitted += tree.omitted;
            let Some(b) = self.branches.get(*branch as usize) else {
                continue;
            };
            let anchor = b.vertex;
            let mut ids: HashMap<u32, usize> = HashMap::new();
            ids.insert(0, anchor);
            let mut added = 0;
            for n in tree.nodes.values() {
                let Some(parent) = n.parent.and_then(|p| ids.get(&p).copied()) else {
                    continue;
                };
                let vertex = self.vertices.len();
                let depth = self.vertices[parent].depth + 1;
                let mut v = Vertex::new(
                    n.label.clone().unwrap_or_default(),
                    NodeState::from_journal(&n.status),
                    depth,
                );
                v.value = n.value;
                v.replay = n.replay;
                v.visits = n.visits;
                v.peer = Some(*peer);
                v.detail = n.detail.clone();
                self.vertices.push(v);
                self.vertices[parent].children.push(vertex);
                ids.insert(n.id, vertex);
                added += 1;
            }
            if let Some(b) = self.branches.get_mut(*branch as usize) {
                b.nodes += added;
            }
        }
    }

    /// Highlights the winning path: the branch whose action is the first step, then in its
    /// trees the child whose label is the next step (in the finder's tree when it has one).
    fn mark_winner(&mut self, result: &RunResult) {
        if result.status != Status::Pass || result.steps.is_empty() {
            return;
        }
        let finder = self.finder.as_deref().and_then(|f| self.peer_index(f));
        self.vertices[0].winner = true;
        let mut at = 0;
        for step in &result.steps {
            let children = &self.vertices[at].children;
            let matching: Vec<usize> = children
                .iter()
                .copied()
                .filter(|&c| self.vertices[c].label == step.label)
                .collect();
            let Some(&next) = matching
                .iter()
                .find(|&&c| self.vertices[c].peer.is_some() && self.vertices[c].peer == finder)
                .or(matching.first())
            else {
                break;
            };
            self.vertices[next].winner = true;
            at = next;
        }
    }
}
