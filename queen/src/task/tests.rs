//! The rules of one task, driven as the actor drives them (a scheduling pass, then the answers
//! to what it sent), with no network: signed answers from fixed keys, a real journal in a
//! temporary folder, and the clock paused where time matters.

use super::*;
use crate::journal::Journal;
use crate::metrics::QueenMetrics;
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::result::NetworkSummary;
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::wire::{
    ExpandReport, ProgressAnswer, ProgressReport, Refusal, RefusalReason, ReplayAnswer,
    ReplayReport, TreeSnapshot,
};
use forager_protocol::{FailureReason, RiskClass};
use proptest::prelude::*;

/// A node of the test cluster: its key signs its answers.
struct Node {
    key: SigningKey,
    peer: PeerId,
}

fn node(seed: u8) -> Node {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let peer = peer_id_of(&key.verifying_key()).expect("an ed25519 key names a peer");
    Node { key, peer }
}

/// One task at a queen with `nodes` nodes, as the actor holds it.
struct Queen {
    _dir: tempfile::TempDir,
    config: QueenConfig,
    metrics: QueenMetrics,
    nodes: Vec<Node>,
    run: TaskRun,
    /// What the task journaled so far (the actor would have appended it).
    journaled: Vec<JournalEvent>,
}

fn queen(nodes: u8, budget: u32) -> Queen {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut task = TaskSpec::new(
        "http://127.0.0.1:9/",
        "reach the end",
        vec![SuccessPredicate::TextPresent("the end".into())],
    );
    task.budget.actions = budget;
    task.budget.wall_time_secs = 60;
    let id = TaskId::of(&task).expect("a task id");
    let config = QueenConfig::new(dir.path().to_path_buf());
    let journal = Journal::create(&dir.path().join(id.to_string()), &task).expect("a journal");
    let run = TaskRun::new(id, task, journal.task_dir(), &config);
    let mut nodes: Vec<Node> = (1..=nodes).map(node).collect();
    nodes.sort_by_key(|n| n.peer);
    Queen {
        _dir: dir,
        metrics: config.metrics.clone(),
        config,
        nodes,
        run,
        journaled: Vec::new(),
    }
}

fn action(i: usize) -> Action {
    Action::Navigate {
        url: format!("http://127.0.0.1:9/{i}"),
    }
}

fn candidates(n: usize) -> Vec<WireCandidate> {
    (0..n)
        .map(|i| WireCandidate {
            action: action(i),
            prior: 1.0 / (i as f64 + 2.0),
            risk: RiskClass::ReadOnly,
            key: i as u64,
            target: None,
        })
        .collect()
}

/// A read-only path of `steps` actions.
fn path(first: usize, steps: usize) -> FoundPath {
    FoundPath::new(
        (first..first + steps).map(action).collect(),
        (0..steps).map(|i| Fingerprint([i as u8; 16])).collect(),
        vec![RiskClass::ReadOnly; steps],
    )
}

fn progress(task: TaskId, branch: BranchId, actions: u32) -> ProgressReport {
    ProgressReport {
        task,
        branch,
        prefix_fingerprints: Vec::new(),
        visits: actions,
        value_sum: 0.1 * f64::from(actions),
        best_value: 0.1,
        actions,
        replayed: 0,
        cost: Cost::default(),
        successes: Vec::new(),
        approvals: Vec::new(),
        exhausted: false,
        error: None,
        network: NetworkSummary::default(),
        counters: BranchCounters::default(),
        locations: Vec::new(),
        states: Vec::new(),
        tree: TreeSnapshot::default(),
        session_ended: false,
    }
}

fn replay_report(task: TaskId, steps: usize, success: bool) -> ReplayReport {
    ReplayReport {
        task,
        fingerprints: (0..steps).map(|i| Fingerprint([i as u8; 16])).collect(),
        pages: Vec::new(),
        success,
        divergence: None,
        divergence_detail: None,
        executed: steps as u32,
        after_check: None,
        error: (!success).then(|| "the success predicates did not hold".into()),
        transient: false,
        network: NetworkSummary::default(),
        screenshots: Vec::new(),
        model: Default::default(),
        answer: None,
    }
}

impl Queen {
    fn peer(&self, i: usize) -> PeerId {
        self.nodes[i].peer
    }

    fn key(&self, peer: PeerId) -> &SigningKey {
        &self
            .nodes
            .iter()
            .find(|n| n.peer == peer)
            .expect("a node")
            .key
    }

    fn cluster(&self) -> HashSet<PeerId> {
        self.nodes.iter().map(|n| n.peer).collect()
    }

    /// One scheduling pass over the whole cluster.
    fn pass(&mut self) -> Vec<Send> {
        let cluster = self.cluster();
        self.pass_over(&cluster)
    }

    /// One scheduling pass with `cluster` connected: what the task sends.
    fn pass_over(&mut self, cluster: &HashSet<PeerId>) -> Vec<Send> {
        let busy: HashSet<PeerId> = self
            .run
            .assigned
            .keys()
            .copied()
            .chain(self.run.verifying)
            .chain(self.run.expanding)
            .collect();
        let idle = cluster
            .iter()
            .filter(|n| !busy.contains(n))
            .copied()
            .collect();
        let mut outbox = Outbox::new(idle, busy);
        self.run.schedule(cluster, &self.config, &mut outbox);
        outbox.sends
    }

    /// Opens the start page on the node the pass chose, with `n` candidates.
    fn expand(&mut self, n: usize) {
        let sends = self.pass();
        assert_eq!(sends.len(), 1, "one node opens the start page: {sends:?}");
        assert!(matches!(sends[0].awaited, Awaited::Expansion));
        let node = sends[0].node;
        let answer = self.expanded(node, candidates(n));
        self.run
            .on_expand_answer(node, Ok(answer), self.nodes.len());
        assert_eq!(self.run.phase, Phase::Searching);
    }

    fn expanded(&self, node: PeerId, candidates: Vec<WireCandidate>) -> Message {
        let report = ExpandReport {
            task: self.run.id,
            root: Fingerprint([9; 16]),
            success: false,
            value_hint: 0.0,
            session_expired: false,
            candidates,
            model: Default::default(),
        };
        Message::Expanded(Signed::new(self.key(node), Domain::Report, report).expect("signs"))
    }

    /// `node`'s signed answer to an assignment.
    fn progress_answer(&self, node: PeerId, report: ProgressReport) -> Message {
        let report = Signed::new(self.key(node), Domain::Report, report).expect("signs");
        Message::Progress(Box::new(ProgressAnswer {
            report,
            screenshots: Vec::new(),
        }))
    }

    /// `node` reports `actions` on `branch`, with `successes`.
    fn report(&mut self, node: PeerId, branch: BranchId, actions: u32, successes: Vec<FoundPath>) {
        let mut report = progress(self.run.id, branch, actions);
        report.successes = successes;
        let answer = self.progress_answer(node, report);
        self.run
            .on_assignment_answer(node, branch, Ok(answer), &self.metrics);
    }

    /// `node` answers a replay: reproduced or not.
    fn replayed(&mut self, node: PeerId, pending: Pending, report: ReplayReport) {
        let report = Signed::new(self.key(node), Domain::Report, report).expect("signs");
        let answer = Message::Replayed(Box::new(ReplayAnswer {
            report,
            screenshots: Vec::new(),
        }));
        let cluster = self.cluster();
        self.run
            .on_replay_answer(node, pending, Ok(answer), &cluster, &self.metrics);
    }

    /// Everything the task journaled so far.
    fn events(&mut self) -> Vec<JournalEvent> {
        self.journaled.extend(self.run.take_journaled());
        self.journaled.clone()
    }

    /// The task as a restarted queen has it back from its journal.
    fn resumed(&mut self) -> TaskRun {
        let task = self.run.task.clone();
        let dir = self.config.data.join("resumed");
        let journal = Journal::create(&dir, &task).expect("a journal");
        let mut resumed = TaskRun::new(self.run.id, task, journal.task_dir(), &self.config);
        for event in self.events() {
            resumed.replay_event(event);
        }
        resumed
    }

    fn failure(&self) -> Option<FailureReason> {
        self.run
            .result
            .as_ref()
            .and_then(|r| r.error.as_ref())
            .map(|e| e.reason)
    }
}

/// The assignments among `sends`: node, branch, actions given.
fn assignments(sends: &[Send]) -> Vec<(PeerId, BranchId, u32)> {
    sends
        .iter()
        .filter_map(|s| match (&s.awaited, &s.request) {
            (Awaited::Assignment { branch, .. }, Message::Assign(a)) => {
                assert_eq!(
                    *branch, a.branch,
                    "the answer is awaited for the branch sent"
                );
                Some((s.node, *branch, a.actions))
            }
            _ => None,
        })
        .collect()
}

/// The replays among `sends`: verifier and the success it reproduces.
fn replays(sends: Vec<Send>) -> Vec<(PeerId, Pending)> {
    sends
        .into_iter()
        .filter_map(|s| match s.awaited {
            Awaited::Replay(pending) => Some((s.node, *pending)),
            _ => None,
        })
        .collect()
}

#[test]
fn one_idle_node_opens_the_start_page_and_its_candidates_become_branches() {
    let mut q = queen(3, 100);
    let sends = q.pass();
    assert_eq!(sends.len(), 1);
    assert_eq!(
        sends[0].node,
        q.peer(0),
        "the first idle node in a stable order"
    );
    assert!(matches!(sends[0].request, Message::Expand(_)));
    assert!(q.pass().is_empty(), "one expansion at a time");
    let answer = q.expanded(q.peer(0), candidates(4));
    q.run.on_expand_answer(q.peer(0), Ok(answer), 3);
    assert_eq!(q.run.phase, Phase::Searching);
    assert_eq!(q.run.branch_count(), 4);
    assert!(
        q.events().iter().any(
            |e| matches!(e, JournalEvent::Branches { candidates, .. } if candidates.len() == 4)
        )
    );
}

#[test]
fn a_node_that_fails_to_open_the_start_page_is_not_asked_again_first() {
    let mut q = queen(3, 100);
    let first = q.pass()[0].node;
    q.run
        .on_expand_answer(first, Err(RequestFailed::Silent(Duration::from_secs(1))), 3);
    let second = q.pass();
    assert_eq!(second.len(), 1);
    assert_ne!(second[0].node, first, "another node opens it");
    assert_eq!(q.run.phase, Phase::Expanding);
    assert_eq!(q.run.failures, 1);
}

#[test]
fn an_expansion_signed_by_another_node_is_no_expansion() {
    let mut q = queen(2, 100);
    let first = q.pass()[0].node;
    // The answer comes from `first`'s connection, signed with the other node's key.
    let forged = q.expanded(q.peer(1), candidates(3));
    q.run.on_expand_answer(first, Ok(forged), 2);
    assert_eq!(
        q.run.phase,
        Phase::Expanding,
        "no branches from a forged report"
    );
    assert_eq!(q.run.branch_count(), 0);
    assert!(q.run.expand_failed.contains(&first));
}

fn start_page_refused(q: &mut Queen, node: PeerId) {
    let refusal = Refusal::new(RefusalReason::StartPage, "connection refused");
    q.run
        .on_expand_answer(node, Ok(refusal.into()), q.nodes.len());
}

#[test]
fn one_node_saying_the_start_page_is_down_is_not_enough_two_are() {
    let mut q = queen(3, 100);
    let first = q.pass()[0].node;
    start_page_refused(&mut q, first);
    assert_eq!(
        q.run.phase,
        Phase::Expanding,
        "one node's word is not enough"
    );
    let second = q.pass()[0].node;
    assert_ne!(second, first);
    start_page_refused(&mut q, second);
    assert_eq!(q.run.phase, Phase::Done);
    assert_eq!(q.failure(), Some(FailureReason::NavigationFailed));
    assert!(
        q.run.artifacts.is_some(),
        "a failing run leaves its files too"
    );
}

#[test]
fn a_one_node_cluster_gives_up_on_its_only_nodes_word() {
    let mut q = queen(1, 100);
    let only = q.pass()[0].node;
    start_page_refused(&mut q, only);
    assert_eq!(q.failure(), Some(FailureReason::NavigationFailed));
}

#[test]
fn a_start_page_that_already_satisfies_the_task_passes_with_no_steps() {
    let mut q = queen(2, 100);
    let node = q.pass()[0].node;
    let report = ExpandReport {
        task: q.run.id,
        root: Fingerprint([9; 16]),
        success: true,
        value_hint: 1.0,
        session_expired: false,
        candidates: candidates(2),
        model: Default::default(),
    };
    let answer =
        Message::Expanded(Signed::new(q.key(node), Domain::Report, report).expect("signs"));
    q.run.on_expand_answer(node, Ok(answer), 2);
    let result = q.run.result.as_ref().expect("a result");
    assert_eq!(result.status, Status::Pass);
    assert!(result.steps.is_empty());
}

#[test]
fn a_start_page_of_only_actions_above_the_ceiling_fails_approval_required() {
    let mut q = queen(1, 100);
    let node = q.pass()[0].node;
    let mut risky = candidates(2);
    for c in &mut risky {
        c.risk = RiskClass::Financial;
    }
    let answer = q.expanded(node, risky);
    q.run.on_expand_answer(node, Ok(answer), 1);
    assert_eq!(q.failure(), Some(FailureReason::ApprovalRequired));
    let result = q.run.result.as_ref().expect("a result");
    assert_eq!(
        result.approval_required.len(),
        2,
        "the blocked actions are named"
    );
}

#[test]
fn a_start_page_with_no_actions_fails_search_exhausted() {
    let mut q = queen(1, 100);
    let node = q.pass()[0].node;
    let answer = q.expanded(node, Vec::new());
    q.run.on_expand_answer(node, Ok(answer), 1);
    assert_eq!(q.failure(), Some(FailureReason::SearchExhausted));
}

#[test]
fn idle_nodes_get_different_branches_one_holder_at_a_time() {
    let mut q = queen(3, 200);
    q.expand(3);
    let given = assignments(&q.pass());
    assert_eq!(given.len(), 3, "every idle node gets work: {given:?}");
    let branches: HashSet<BranchId> = given.iter().map(|(_, b, _)| *b).collect();
    assert_eq!(branches.len(), 3, "no branch twice at once");
    for (_, _, actions) in &given {
        assert_eq!(*actions, q.config.chunk_actions);
    }
    assert!(q.pass().is_empty(), "busy nodes get nothing more");
}

#[test]
fn a_branch_is_never_given_to_two_nodes_at_once() {
    let mut q = queen(3, 200);
    q.expand(1);
    let given = assignments(&q.pass());
    assert_eq!(
        given.len(),
        1,
        "a second node would repeat the first's search"
    );
    assert_eq!(q.run.branches[0].in_flight, 1);
}

#[test]
fn the_branches_holder_gets_it_back_to_continue_its_tree() {
    let mut q = queen(2, 200);
    q.expand(1);
    // Only the first node is connected when the branch is given.
    let alone: HashSet<PeerId> = [q.peer(0)].into();
    let given = assignments(&q.pass_over(&alone));
    assert_eq!(given, vec![(q.peer(0), BranchId(0), 20)]);
    q.report(q.peer(0), BranchId(0), 20, Vec::new());
    // Both idle now: the holder, not the default (the last idle node), continues.
    let again = assignments(&q.pass());
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].0, q.peer(0));
}

#[test]
fn a_silent_node_loses_its_branch_to_another() {
    let mut q = queen(2, 200);
    q.expand(1);
    let (lost, branch, _) = assignments(&q.pass())[0];
    q.run.on_assignment_answer(
        lost,
        branch,
        Err(RequestFailed::Silent(Duration::from_secs(190))),
        &q.metrics,
    );
    assert!(q.run.assigned.is_empty());
    assert_eq!(
        q.run.branches[0].holder, None,
        "its tree may be gone with it"
    );
    assert!(
        q.events().iter().any(
            |e| matches!(e, JournalEvent::Reassigned { node, .. } if *node == lost.to_string())
        )
    );
    let others: HashSet<PeerId> = q.cluster().into_iter().filter(|n| *n != lost).collect();
    let given = assignments(&q.pass_over(&others));
    assert_eq!(given.len(), 1);
    assert_ne!(given[0].0, lost);
    assert_eq!(given[0].1, branch);
}

#[test]
fn an_answer_that_is_no_report_frees_the_branch_and_counts_nothing() {
    let mut q = queen(1, 200);
    q.expand(1);
    let (node, branch, _) = assignments(&q.pass())[0];
    q.run
        .on_assignment_answer(node, branch, Ok(Message::Accepted(q.run.id)), &q.metrics);
    assert_eq!(q.run.actions, 0);
    assert_eq!(q.run.branches[0].in_flight, 0);
    assert!(
        q.events()
            .iter()
            .any(|e| matches!(e, JournalEvent::Reassigned { reason, .. } if reason == "no report"))
    );
}

#[test]
fn a_report_signed_by_another_node_or_for_another_branch_counts_nothing() {
    let mut q = queen(2, 200);
    q.expand(2);
    let given = assignments(&q.pass());
    let (a, branch_a, _) = given[0];
    let (b, branch_b, _) = given[1];
    // `a` sends a report signed with `b`'s key.
    let forged = q.progress_answer(b, progress(q.run.id, branch_a, 20));
    q.run
        .on_assignment_answer(a, branch_a, Ok(forged), &q.metrics);
    // `b` signs its own report, but for `a`'s branch.
    let misdirected = q.progress_answer(b, progress(q.run.id, branch_a, 20));
    q.run
        .on_assignment_answer(b, branch_b, Ok(misdirected), &q.metrics);
    assert_eq!(q.run.actions, 0, "neither report counts");
    assert!(q.run.branches.iter().all(|b| b.visits == 0));
}

#[test]
fn a_nodes_numbers_are_bounded_on_arrival() {
    let mut q = queen(1, 200);
    q.expand(1);
    let (node, branch, _) = assignments(&q.pass())[0];
    let mut report = progress(q.run.id, branch, 2);
    report.value_sum = 1e9;
    report.locations = (0..1000)
        .map(|i| forager_protocol::wire::KnownLocation {
            location: i,
            depth: 1,
        })
        .collect();
    let answer = q.progress_answer(node, report);
    q.run
        .on_assignment_answer(node, branch, Ok(answer), &q.metrics);
    let b = &q.run.branches[0];
    assert!(
        b.value_sum <= f64::from(b.visits),
        "a mean value of at most 1"
    );
    // The start page, and at most one location per action (plus the branch's root).
    assert!(q.run.locations.len() <= 1 + 3, "{}", q.run.locations.len());
    assert!(q.run.overview().best_value <= 1.0);
}

#[test]
fn the_budget_spent_ends_the_task_budget_exhausted() {
    let mut q = queen(2, 30);
    q.expand(2);
    let given = assignments(&q.pass());
    let total: u32 = given.iter().map(|(_, _, a)| a).sum();
    assert_eq!(
        total, 30,
        "no more actions are given than the budget holds: {given:?}"
    );
    for (node, branch, actions) in given {
        q.report(node, branch, actions, Vec::new());
    }
    assert!(q.pass().is_empty());
    assert_eq!(q.failure(), Some(FailureReason::BudgetExhausted));
}

#[test]
fn actions_that_need_approval_explain_a_spent_budget() {
    let mut q = queen(1, 20);
    q.expand(1);
    let (node, branch, actions) = assignments(&q.pass())[0];
    let mut report = progress(q.run.id, branch, actions);
    report.approvals = vec![path(5, 2)];
    let answer = q.progress_answer(node, report);
    q.run
        .on_assignment_answer(node, branch, Ok(answer), &q.metrics);
    q.pass();
    assert_eq!(q.failure(), Some(FailureReason::ApprovalRequired));
}

#[test]
fn every_branch_exhausted_ends_the_task_search_exhausted() {
    let mut q = queen(1, 200);
    q.expand(1);
    let (node, branch, _) = assignments(&q.pass())[0];
    let mut report = progress(q.run.id, branch, 5);
    report.exhausted = true;
    let answer = q.progress_answer(node, report);
    q.run
        .on_assignment_answer(node, branch, Ok(answer), &q.metrics);
    q.pass();
    assert_eq!(q.failure(), Some(FailureReason::SearchExhausted));
}

#[tokio::test(start_paused = true)]
async fn the_wall_time_ends_the_task_even_with_work_in_flight() {
    let mut q = queen(2, 500);
    q.expand(2);
    let given = assignments(&q.pass());
    tokio::time::advance(Duration::from_secs(59)).await;
    assert!(q.pass().is_empty());
    assert_eq!(q.run.phase, Phase::Searching, "not yet");
    tokio::time::advance(Duration::from_secs(1)).await;
    let told = q.pass();
    assert!(
        told.iter().any(|s| matches!(s.awaited, Awaited::Release)),
        "the nodes are told to stop"
    );
    assert_eq!(
        q.failure(),
        None,
        "a grace for the running searches' reports"
    );
    tokio::time::advance(super::finishing::STOP_GRACE).await;
    q.pass();
    assert_eq!(q.failure(), Some(FailureReason::Timeout));
    // A report after the end changes nothing: the result stands, the journal is closed.
    let journaled = q.events().len();
    let (node, branch, actions) = given[0];
    q.report(node, branch, actions, vec![path(0, 1)]);
    assert_eq!(q.run.actions, 0);
    assert!(q.run.unverified.is_empty());
    assert_eq!(q.events().len(), journaled);
    assert!(
        !q.run.assigned.is_empty(),
        "the other node's branch is still out"
    );
}

/// A run whose time is up keeps what its running searches did: their reports within the
/// grace are counted (a bench run ended by its limit said 0 actions after 150 s of search).
#[tokio::test(start_paused = true)]
async fn a_timed_out_task_keeps_the_reports_of_its_running_searches() {
    let mut q = queen(2, 500);
    q.expand(2);
    let given = assignments(&q.pass());
    assert_eq!(given.len(), 2);
    tokio::time::advance(Duration::from_secs(60)).await;
    let _ = q.pass();
    for (node, branch, _) in &given {
        q.report(*node, *branch, 9, Vec::new());
    }
    let _ = q.pass();
    assert_eq!(q.failure(), Some(FailureReason::Timeout));
    let result = q.run.result.clone().expect("a result");
    assert_eq!(
        result.metrics.actions, 18,
        "both searches' actions are kept"
    );
    let error = result.error.expect("failing");
    assert!(
        error
            .detail
            .contains("wall-clock limit of 60 s passed after 18 actions"),
        "{}",
        error.detail
    );
}

#[test]
fn the_nodes_that_took_part_are_released_once_the_task_ended() {
    let mut q = queen(3, 40);
    q.expand(2);
    let given = assignments(&q.pass());
    for (node, branch, actions) in &given {
        q.report(*node, *branch, *actions, Vec::new());
    }
    assert!(
        q.pass().is_empty(),
        "the pass that ends the task sends nothing"
    );
    assert_eq!(q.run.phase, Phase::Done);
    let released: HashSet<PeerId> = q
        .pass()
        .iter()
        .filter(|s| matches!(s.awaited, Awaited::Release))
        .map(|s| s.node)
        .collect();
    // The node that opened the start page and the two that searched: here all three.
    assert_eq!(released, q.run.contributors);
    assert!(q.pass().is_empty(), "once");
    q.run.artifacts = None;
    assert!(q.run.settled());
    assert!(q.run.into_ended().is_some());
}

#[test]
fn a_success_is_reproduced_by_another_node_and_then_passes() {
    let mut q = queen(2, 200);
    q.expand(2);
    let given = assignments(&q.pass());
    let (finder, branch, _) = given[0];
    q.report(finder, branch, 10, vec![path(0, 2)]);
    let sends = q.pass();
    assert!(
        assignments(&sends).is_empty(),
        "no new branches while a success waits"
    );
    let mut asked = replays(sends);
    assert_eq!(asked.len(), 1);
    let (verifier, pending) = asked.remove(0);
    assert_ne!(verifier, finder, "a finder does not verify itself");
    // The verifier may be busy: nodes run a replay beside a search.
    let id = q.run.id;
    q.replayed(verifier, pending, replay_report(id, 2, true));
    let result = q.run.result.as_ref().expect("a result");
    assert_eq!(result.status, Status::Pass);
    assert_eq!(result.steps.len(), 2);
    assert!(q.run.artifacts.is_some(), "the trajectory is to be written");
    assert!(
        q.events()
            .iter()
            .any(|e| matches!(e, JournalEvent::Verified { .. }))
    );
}

#[test]
fn a_one_node_cluster_reproduces_its_own_success() {
    let mut q = queen(1, 200);
    q.expand(1);
    let (finder, branch, _) = assignments(&q.pass())[0];
    q.report(finder, branch, 10, vec![path(0, 1)]);
    let (verifier, pending) = replays(q.pass()).remove(0);
    assert_eq!(verifier, finder);
    let id = q.run.id;
    q.replayed(verifier, pending, replay_report(id, 1, true));
    assert_eq!(q.run.result.as_ref().map(|r| r.status), Some(Status::Pass));
}

#[test]
fn the_shortest_waiting_success_is_reproduced_first() {
    let mut q = queen(2, 200);
    q.expand(2);
    let (finder, branch, _) = assignments(&q.pass())[0];
    q.report(finder, branch, 10, vec![path(0, 3), path(0, 1), path(1, 1)]);
    let (_, pending) = replays(q.pass()).remove(0);
    assert_eq!(
        pending.path,
        path(0, 1),
        "the shortest, the earliest of those"
    );
}

#[test]
fn a_reproduced_success_waits_while_a_shorter_one_is_reproduced() {
    let mut q = queen(3, 200);
    q.expand(2);
    let given = assignments(&q.pass());
    let id = q.run.id;
    // The long one first, alone.
    q.report(given[0].0, given[0].1, 10, vec![path(0, 3)]);
    let (verifier, long) = replays(q.pass()).remove(0);
    // A shorter one arrives while the long one is replayed.
    q.report(given[1].0, given[1].1, 10, vec![path(1, 1)]);
    q.replayed(verifier, long, replay_report(id, 3, true));
    assert!(q.run.held.is_some(), "held: a shorter success waits");
    assert_eq!(q.run.phase, Phase::Searching);
    let (verifier, short) = replays(q.pass()).remove(0);
    q.replayed(verifier, short, replay_report(id, 1, true));
    let result = q.run.result.as_ref().expect("a result");
    assert_eq!(result.steps.len(), 1, "the shorter one is published");
}

#[test]
fn a_verifier_with_no_valid_answer_is_replaced_and_none_left_rejects_the_path() {
    let mut q = queen(3, 200);
    q.expand(1);
    let (finder, branch, _) = assignments(&q.pass())[0];
    q.report(finder, branch, 10, vec![path(0, 1)]);
    let (first, pending) = replays(q.pass()).remove(0);
    let cluster = q.cluster();
    q.run.on_replay_answer(
        first,
        pending,
        Err(RequestFailed::Silent(Duration::from_secs(190))),
        &cluster,
        &q.metrics,
    );
    let (second, pending) = replays(q.pass()).remove(0);
    assert!(
        second != first && second != finder,
        "the third node is asked"
    );
    // It answers with a report signed by another key: no valid answer either.
    let id = q.run.id;
    let report =
        Signed::new(q.key(first), Domain::Report, replay_report(id, 1, true)).expect("signs");
    let forged = Message::Replayed(Box::new(ReplayAnswer {
        report,
        screenshots: Vec::new(),
    }));
    q.run
        .on_replay_answer(second, pending, Ok(forged), &cluster, &q.metrics);
    assert!(
        q.run.unverified.is_empty(),
        "no node is left to reproduce it"
    );
    assert!(q.run.rejected_paths.contains(&path(0, 1).actions));
    assert!(q.run.result.is_none(), "the search goes on");
}

#[test]
fn a_success_that_fails_to_reproduce_twice_distrusts_its_finder() {
    let mut q = queen(2, 200);
    q.expand(2);
    let given = assignments(&q.pass());
    let (finder, branch, _) = given[0];
    let id = q.run.id;
    q.report(finder, branch, 10, vec![path(0, 1)]);
    for attempt in 1..=2 {
        let (verifier, pending) = replays(q.pass()).remove(0);
        q.replayed(verifier, pending, replay_report(id, 1, false));
        let rejected = q
            .events()
            .iter()
            .any(|e| matches!(e, JournalEvent::NotReproduced { rejected: true, .. }));
        assert_eq!(rejected, attempt == 2, "attempt {attempt}");
    }
    assert!(q.run.distrusted.contains(&finder));
    // The other node's report frees it; the finder's branch comes back free too.
    q.report(given[1].0, given[1].1, 10, Vec::new());
    let again = assignments(&q.pass());
    assert!(!again.is_empty());
    assert!(
        again.iter().all(|(n, _, _)| *n != finder),
        "no work for the distrusted"
    );
}

#[test]
fn a_verifiers_own_trouble_is_retried_without_counting_against_the_path() {
    let mut q = queen(2, 200);
    q.expand(1);
    let (finder, branch, _) = assignments(&q.pass())[0];
    let id = q.run.id;
    q.report(finder, branch, 10, vec![path(0, 1)]);
    let (verifier, pending) = replays(q.pass()).remove(0);
    let mut crashed = replay_report(id, 1, false);
    crashed.transient = true;
    crashed.error = Some("the browser crashed".into());
    crashed.executed = 0;
    q.replayed(verifier, pending, crashed);
    let waiting = q.run.unverified.front().expect("tried again");
    assert_eq!((waiting.failed_replays, waiting.transient_failures), (0, 1));
    assert!(!q.run.distrusted.contains(&finder));
}

#[test]
fn when_every_node_is_distrusted_the_task_ends_not_reproduced() {
    let mut q = queen(1, 200);
    q.expand(1);
    let (node, branch, _) = assignments(&q.pass())[0];
    let id = q.run.id;
    q.report(node, branch, 10, vec![path(0, 1)]);
    for _ in 0..2 {
        let (verifier, pending) = replays(q.pass()).remove(0);
        q.replayed(verifier, pending, replay_report(id, 1, false));
    }
    assert!(q.pass().is_empty());
    assert_eq!(q.failure(), Some(FailureReason::NotReproduced));
}

#[test]
fn a_write_is_granted_once_and_a_resumed_queen_grants_it_no_more() {
    let mut q = queen(2, 200);
    let (a, b) = (q.peer(0), q.peer(1));
    assert!(q.run.claim_write(a, 7));
    assert!(!q.run.claim_write(b, 7), "another branch's node");
    assert!(!q.run.claim_write(a, 7), "the same node again");
    assert!(q.run.claim_write(b, 8));
    // A restarted queen replays the journal: the grants stand.
    let mut resumed = q.resumed();
    assert!(!resumed.claim_write(a, 7));
    assert!(
        q.events()
            .iter()
            .all(|e| !matches!(e, JournalEvent::WriteClaimed { key: 9, .. })),
        "a grant is journaled by the task that grants it"
    );
    assert!(!resumed.claim_write(b, 8));
    assert!(resumed.claim_write(a, 9));
    assert!(
        matches!(
            resumed.take_journaled().as_slice(),
            [JournalEvent::WriteClaimed { key: 9, .. }]
        ),
        "only the new grant is to be journaled"
    );
}

#[test]
fn a_resumed_task_has_its_branches_actions_and_waiting_success_back() {
    let mut q = queen(2, 200);
    q.expand(3);
    let given = assignments(&q.pass());
    q.report(given[0].0, given[0].1, 12, vec![path(0, 1)]);
    let resumed = q.resumed();
    assert_eq!(resumed.phase, Phase::Searching);
    assert_eq!(resumed.branch_count(), 3);
    assert_eq!(resumed.actions, 12);
    assert_eq!(
        resumed.unverified.len(),
        1,
        "the success still waits for a second node"
    );
    assert_eq!(resumed.branches[given[0].1.0 as usize].visits, 12);
}

#[test]
fn cancelling_ends_a_running_task_once() {
    let mut q = queen(1, 200);
    q.expand(1);
    assert!(q.run.end_early(super::Ending::Cancelled));
    assert_eq!(q.failure(), Some(FailureReason::Cancelled));
    assert!(
        !q.run.end_early(super::Ending::Cancelled),
        "an ended task stays as it ended"
    );
    assert_eq!(q.failure(), Some(FailureReason::Cancelled));
}

#[tokio::test(start_paused = true)]
async fn an_interrupted_task_waits_for_its_running_assignments_and_keeps_what_they_did() {
    let mut q = queen(2, 200);
    q.expand(2);
    let given = assignments(&q.pass());
    assert_eq!(given.len(), 2, "both nodes search");
    let (first, first_branch, _) = given[0];
    q.report(first, first_branch, 7, Vec::new());
    // The other node still searches: the task tells it to stop and waits for its report.
    assert!(q.run.end_early(super::Ending::Interrupted));
    assert!(!q.run.end_early(super::Ending::Cancelled), "once");
    let told = q.pass();
    assert!(
        told.iter().any(|s| matches!(s.awaited, Awaited::Release)),
        "the nodes are told the task ended"
    );
    assert!(assignments(&told).is_empty(), "no new work while stopping");
    assert_eq!(
        q.failure(),
        None,
        "still waiting for the running assignment"
    );
    let (second, second_branch, _) = given[1];
    q.report(second, second_branch, 4, Vec::new());
    let _ = q.pass();
    assert_eq!(q.failure(), Some(FailureReason::Interrupted));
    let result = q.run.result.clone().expect("a result");
    assert_eq!(
        result.metrics.actions, 11,
        "both assignments' actions are kept"
    );
    assert!(result.metrics.nodes > 1, "the tree grown before the stop");
    let error = result.error.expect("failing");
    assert!(
        error.detail.contains("after 11 actions"),
        "{}",
        error.detail
    );
    assert!(
        !q.run.end_early(super::Ending::Cancelled),
        "it stays as it ended"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stopping_task_ends_after_the_grace_without_a_silent_nodes_report() {
    let mut q = queen(2, 200);
    q.expand(2);
    let given = assignments(&q.pass());
    let (node, branch, _) = given[0];
    q.report(node, branch, 3, Vec::new());
    assert!(q.run.end_early(super::Ending::Cancelled));
    let _ = q.pass();
    tokio::time::advance(super::finishing::STOP_GRACE - Duration::from_millis(1)).await;
    let _ = q.pass();
    assert_eq!(q.failure(), None, "within the grace");
    tokio::time::advance(Duration::from_millis(1)).await;
    let _ = q.pass();
    assert_eq!(q.failure(), Some(FailureReason::Cancelled));
    assert_eq!(q.run.result.as_ref().map(|r| r.metrics.actions), Some(3));
}

#[test]
fn the_overview_names_the_phase() {
    let mut q = queen(2, 200);
    assert_eq!(q.run.overview().phase, TaskPhase::Expanding);
    q.expand(1);
    assert_eq!(q.run.overview().phase, TaskPhase::Searching);
    let (finder, branch, _) = assignments(&q.pass())[0];
    q.report(finder, branch, 10, vec![path(0, 1)]);
    let _asked = q.pass();
    assert_eq!(q.run.overview().phase, TaskPhase::Verifying);
    q.run.end_early(super::Ending::Cancelled);
    assert_eq!(q.run.overview().phase, TaskPhase::Writing);
}

#[test]
fn a_pass_that_sends_nothing_after_a_write_of_its_task_read_that_write() {
    use forager_protocol::result::ResultStep;
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
    assert!(finishing::reads_another_write(true, &reads));
    assert!(
        !finishing::reads_another_write(true, &writes),
        "its own write"
    );
    assert!(
        !finishing::reads_another_write(false, &reads),
        "no write in the task"
    );
}

/// What the cluster does to the task, one step at a time.
#[derive(Debug, Clone)]
enum Step {
    /// A scheduling pass.
    Pass,
    /// The answer to the `n`th request out: a report of `used` of its actions (at most
    /// those given), exhausted or not.
    Report {
        n: usize,
        used: u32,
        exhausted: bool,
    },
    /// The `n`th request out is lost.
    Lost { n: usize },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => Just(Step::Pass),
        3 => (0..8usize, 0..30u32, proptest::bool::weighted(0.2))
            .prop_map(|(n, used, exhausted)| Step::Report { n, used, exhausted }),
        1 => (0..8usize).prop_map(|n| Step::Lost { n }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the order of reports and losses: no branch is out on two nodes at once, the
    /// branches' in-flight counts are the assignments out, the actions given never pass the
    /// budget, and an ended task gives no more work.
    #[test]
    fn assignments_stay_within_the_budget_and_one_node_per_branch(
        nodes in 1..5u8,
        branches in 1..6usize,
        budget in 1..120u32,
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let mut q = queen(nodes, budget);
        q.expand(branches);
        let mut out: Vec<(PeerId, BranchId, u32)> = Vec::new();
        for step in steps {
            match step {
                Step::Pass => {
                    let sends = q.pass();
                    let given = assignments(&sends);
                    if q.run.phase == Phase::Done {
                        prop_assert!(given.is_empty(), "work for an ended task");
                    }
                    out.extend(given);
                }
                Step::Report { n, used, exhausted } if !out.is_empty() => {
                    let (node, branch, given) = out.remove(n % out.len());
                    let mut report = progress(q.run.id, branch, used.min(given));
                    report.exhausted = exhausted;
                    let answer = q.progress_answer(node, report);
                    q.run.on_assignment_answer(node, branch, Ok(answer), &q.metrics);
                }
                Step::Lost { n } if !out.is_empty() => {
                    let (node, branch, _) = out.remove(n % out.len());
                    let lost = Err(RequestFailed::Silent(Duration::from_secs(1)));
                    q.run.on_assignment_answer(node, branch, lost, &q.metrics);
                }
                _ => {}
            }
            let mut holders: HashMap<BranchId, u32> = HashMap::new();
            for (branch, _) in q.run.assigned.values() {
                *holders.entry(*branch).or_default() += 1;
            }
            prop_assert!(holders.values().all(|&n| n == 1), "a branch on two nodes: {holders:?}");
            for b in &q.run.branches {
                prop_assert_eq!(b.in_flight, holders.get(&b.id).copied().unwrap_or(0));
            }
            let given: u32 = q.run.assigned.values().map(|(_, a)| a).sum();
            prop_assert!(q.run.actions + given <= budget, "{} + {given} > {budget}", q.run.actions);
            prop_assert_eq!(q.run.assigned.len(), out.len());
        }
    }
}

/// What the cluster does to a task that finds successes.
#[derive(Debug, Clone)]
enum Found {
    /// A scheduling pass.
    Pass,
    /// The `n`th assignment out reports, with a success of `steps` actions or none.
    Report { n: usize, steps: Option<usize> },
    /// The `n`th replay out answers: reproduced, not, or the verifier's own trouble.
    Replay { n: usize, outcome: u8 },
}

fn found() -> impl Strategy<Value = Found> {
    prop_oneof![
        2 => Just(Found::Pass),
        2 => (0..4usize, proptest::option::of(1..4usize))
            .prop_map(|(n, steps)| Found::Report { n, steps }),
        2 => (0..4usize, 0..3u8).prop_map(|(n, outcome)| Found::Replay { n, outcome }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever nodes find and verifiers answer: a task passes only on a path its finder
    /// reported and a node other than the finder reproduced.
    #[test]
    fn a_success_wins_only_once_another_node_reproduced_it(
        nodes in 2..5u8,
        steps in proptest::collection::vec(found(), 1..50),
    ) {
        let mut q = queen(nodes, 400);
        q.expand(3);
        let id = q.run.id;
        let mut searching: Vec<(PeerId, BranchId)> = Vec::new();
        let mut replaying: Vec<(PeerId, Pending)> = Vec::new();
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Found::Pass => {
                    let sends = q.pass();
                    searching.extend(assignments(&sends).into_iter().map(|(n, b, _)| (n, b)));
                    replaying.extend(replays(sends));
                }
                Found::Report { n, steps } if !searching.is_empty() => {
                    let (node, branch) = searching.remove(n % searching.len());
                    let successes = steps.map(|s| vec![path(10 * i, s)]).unwrap_or_default();
                    q.report(node, branch, 5, successes);
                }
                Found::Replay { n, outcome } if !replaying.is_empty() => {
                    let (node, pending) = replaying.remove(n % replaying.len());
                    let steps = pending.path.actions.len();
                    let mut report = replay_report(id, steps, outcome == 0);
                    report.transient = outcome == 2;
                    q.replayed(node, pending, report);
                }
                _ => {}
            }
            if q.run.result.as_ref().is_some_and(|r| r.status == Status::Pass) {
                let events = q.events();
                // The last one verified: a longer one may have been held, then displaced.
                let verified = events.iter().rev().find_map(|e| match e {
                    JournalEvent::Verified { finder, verifier, actions, .. } => {
                        Some((finder.clone(), verifier.clone(), actions.clone()))
                    }
                    _ => None,
                });
                let (finder, verifier, actions) = verified.expect("a pass is verified");
                prop_assert_ne!(&finder, &verifier);
                let reported = events.iter().any(|e| matches!(e,
                    JournalEvent::Success { finder: f, actions: a, .. }
                        if *f == finder && *a == actions));
                prop_assert!(reported, "the finder reported the path it passes on");
                let steps: Vec<String> = q.run.result.as_ref().map(|r| {
                    r.steps.iter().map(|s| s.label.clone()).collect()
                }).unwrap_or_default();
                prop_assert_eq!(steps, actions);
                break;
            }
        }
    }
}
