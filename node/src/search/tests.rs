//! Engine tests on small hand-built graphs, where the right answer is obvious.

use super::*;
use crate::embed::action_key;
use crate::environment::{Candidate, EnvError, Environment, StateInfo, Step};
use crate::memory::{FlatMemory, GoalEmbedder, ReplayMemory, TaskMemory};
use forager_protocol::trajectory::Cost;
use forager_protocol::wire::TraceStep;
use forager_protocol::{FailureReason, Fingerprint, PruneReason, RiskClass};
use std::collections::HashMap;
use std::sync::Arc;

/// An edge of a test graph.
#[derive(Clone)]
struct Edge {
    label: &'static str,
    to: u32,
    prior: f64,
    risk: RiskClass,
}

/// A directed graph of states; state `goal` is the success. Counts what it executes.
#[derive(Clone)]
struct Graph {
    edges: HashMap<u32, Vec<Edge>>,
    goal: u32,
    /// States that share a fingerprint with another state (no-progress tests).
    alias: HashMap<u32, u32>,
    state: u32,
    executed: Vec<&'static str>,
    above_ceiling: u32,
    ceiling: RiskClass,
    /// Crash on the n-th act (1-based), then behave.
    crash_on: Vec<u32>,
    acts: u32,
    /// Replays diverge this many times before succeeding.
    diverge_times: u32,
    /// Replays of a non-empty prefix never reach the start (a branch's prefix diverges).
    root_diverges: bool,
    /// Value hints by state (0 elsewhere).
    hints: HashMap<u32, f64>,
    /// Actions that write: prefixes containing one can only be restored from a kept page.
    writes: Vec<&'static str>,
    /// Prefixes with a kept live page (when `keep_pages`).
    kept: std::collections::HashSet<Vec<&'static str>>,
    keep_pages: bool,
    path: Vec<&'static str>,
    /// Whether candidates name the state they lead to (as a link's href does).
    targets: bool,
    /// States where the task has failed for good.
    dead_ends: Vec<u32>,
    /// States that ask to log in again (a mounted session no longer holds there).
    expired: Vec<u32>,
    /// States reached by an action whose only effect is in script (give them an alias too).
    hidden: Vec<u32>,
    /// Hidden states whose action drew random numbers (a roll of the page's dice).
    rolled: Vec<u32>,
    /// States no action reaches: an edge to one fails as a hidden target does.
    unreachable: Vec<u32>,
    /// States whose controls show words (all others are wordless, as a board is).
    worded: Vec<u32>,
}

impl Graph {
    fn new(goal: u32, edges: &[(u32, &'static str, u32, f64)]) -> Graph {
        let mut map: HashMap<u32, Vec<Edge>> = HashMap::new();
        for &(from, label, to, prior) in edges {
            map.entry(from).or_default().push(Edge {
                label,
                to,
                prior,
                risk: RiskClass::ReadOnly,
            });
        }
        Graph {
            edges: map,
            goal,
            alias: HashMap::new(),
            state: 0,
            executed: Vec::new(),
            above_ceiling: 0,
            ceiling: RiskClass::DEFAULT_CEILING,
            crash_on: Vec::new(),
            acts: 0,
            diverge_times: 0,
            root_diverges: false,
            hints: HashMap::new(),
            writes: Vec::new(),
            kept: Default::default(),
            keep_pages: false,
            path: Vec::new(),
            targets: false,
            dead_ends: Vec::new(),
            expired: Vec::new(),
            hidden: Vec::new(),
            rolled: Vec::new(),
            unreachable: Vec::new(),
            worded: Vec::new(),
        }
    }

    fn with_targets(mut self) -> Graph {
        self.targets = true;
        self
    }

    fn with_risk(mut self, label: &str, risk: RiskClass) -> Graph {
        for edges in self.edges.values_mut() {
            for edge in edges.iter_mut().filter(|e| e.label == label) {
                edge.risk = risk;
            }
        }
        self
    }

    fn fingerprint(&self, state: u32) -> Fingerprint {
        let identity = self.alias.get(&state).copied().unwrap_or(state);
        Fingerprint::of_bytes("test", &identity.to_le_bytes())
    }

    fn info(&self, state: u32) -> StateInfo {
        StateInfo {
            fingerprint: self.fingerprint(state),
            success: state == self.goal,
            dead_end: self.dead_ends.contains(&state),
            hidden_change: self.hidden.contains(&state),
            rolled: self.rolled.contains(&state),
            wordless: !self.worded.contains(&state),
            value_hint: self.hints.get(&state).copied().unwrap_or(0.0),
            auth: 0.0,
            location: u64::from(self.alias.get(&state).copied().unwrap_or(state)),
            page_family: 0,
            logged_in: false,
            session_lost: false,
            session_expired: self.expired.contains(&state),
            transient: false,
        }
    }

    fn edge(&self, label: &str) -> Option<&Edge> {
        self.edges
            .get(&self.state)?
            .iter()
            .find(|e| e.label == label)
    }
}

impl Environment for Graph {
    type Action = &'static str;

    async fn observe(&mut self) -> Result<StateInfo, EnvError> {
        Ok(self.info(self.state))
    }

    async fn candidates(&mut self) -> Result<Vec<Candidate<&'static str>>, EnvError> {
        Ok(self
            .edges
            .get(&self.state)
            .into_iter()
            .flatten()
            .map(|e| Candidate {
                action: e.label,
                prior: e.prior,
                risk: e.risk,
                key: action_key(e.label),
                target: self
                    .targets
                    .then(|| u64::from(self.alias.get(&e.to).copied().unwrap_or(e.to))),
                refused: None,
                why: Default::default(),
            })
            .collect())
    }

    async fn act(&mut self, action: &&'static str) -> Result<Step, EnvError> {
        self.acts += 1;
        if self.crash_on.contains(&self.acts) {
            return Err(EnvError::Crashed("test crash".into()));
        }
        let edge = self
            .edge(action)
            .cloned()
            .ok_or_else(|| EnvError::TargetMissing(action.to_string()))?;
        if edge.risk > self.ceiling {
            self.above_ceiling += 1;
        }
        if self.unreachable.contains(&edge.to) {
            return Err(EnvError::TargetHidden(format!(
                "{action} cannot take focus"
            )));
        }
        self.executed.push(edge.label);
        self.state = edge.to;
        self.path.push(edge.label);
        if self.keep_pages {
            self.kept.insert(self.path.clone());
        }
        Ok(Step {
            state: self.info(self.state),
            cost: Cost {
                browser_ms: 10,
                tokens: 0,
            },
            executed: 1,
        })
    }

    async fn restore(&mut self, prefix: &[(&'static str, Fingerprint)]) -> Result<Step, EnvError> {
        let labels: Vec<&'static str> = prefix.iter().map(|(a, _)| *a).collect();
        if labels.iter().any(|a| self.writes.contains(a)) && !self.kept.contains(&labels) {
            return Err(EnvError::ReplayUnsafe(format!("{labels:?} writes")));
        }
        if self.root_diverges && !prefix.is_empty() {
            return Err(EnvError::RootDiverged {
                expected: Fingerprint([1; 16]),
                found: Fingerprint([9; 16]),
            });
        }
        self.path = labels;
        self.state = 0;
        for (i, (action, expected)) in prefix.iter().enumerate() {
            let edge = self
                .edge(action)
                .cloned()
                .ok_or_else(|| EnvError::TargetMissing(action.to_string()))?;
            self.state = edge.to;
            let found = self.fingerprint(self.state);
            if self.diverge_times > 0 {
                self.diverge_times -= 1;
                return Err(EnvError::Diverged {
                    step: i,
                    expected: *expected,
                    found: Fingerprint([9; 16]),
                });
            }
            if found != *expected {
                return Err(EnvError::Diverged {
                    step: i,
                    expected: *expected,
                    found,
                });
            }
        }
        Ok(Step {
            state: self.info(self.state),
            cost: Cost::default(),
            executed: prefix.len() as u32,
        })
    }

    async fn recover(&mut self) -> Result<(), EnvError> {
        self.state = 0;
        Ok(())
    }

    fn describe(&self, action: &&'static str) -> String {
        action.to_string()
    }
}

fn search(
    graph: &mut Graph,
    config: SearchConfig,
) -> (SearchReport<&'static str>, Search<&'static str>) {
    futures::executor::block_on(run(
        std::slice::from_mut(graph),
        config,
        None,
        &mut NoObserver,
    ))
    .expect("the start state is observable")
}

fn labels(report: &SearchReport<&'static str>) -> Vec<&'static str> {
    report
        .best
        .iter()
        .flatten()
        .map(|step| step.action)
        .collect()
}

/// 0 -a-> 1 -b-> 2 -c-> 3 (goal), plus a decoy branch 0 -d-> 4 -e-> 5 with a higher prior.
fn chain_with_decoy() -> Graph {
    Graph::new(
        3,
        &[
            (0, "a", 1, 0.3),
            (0, "d", 4, 0.7),
            (1, "b", 2, 1.0),
            (2, "c", 3, 1.0),
            (4, "e", 5, 1.0),
        ],
    )
}

#[test]
fn finds_the_goal_past_a_decoy() {
    let mut graph = chain_with_decoy();
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["a", "b", "c"]);
    assert!(report.metrics.actions <= 6, "{:?}", report.metrics);
}

#[test]
fn the_budget_is_never_exceeded() {
    let mut graph = chain_with_decoy();
    let config = SearchConfig {
        action_budget: 2,
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut graph, config);
    assert_eq!(
        report.finish,
        Finish::Failed(FailureReason::BudgetExhausted)
    );
    assert_eq!(report.metrics.actions, 2);
    assert_eq!(graph.executed.len(), 2);
}

#[test]
fn loops_and_no_progress_are_pruned_with_their_reason() {
    // 0 -back-> 0 is no progress; 1 -home-> 0 is a loop; the goal is behind 1 -x-> 2.
    let mut graph = Graph::new(
        2,
        &[
            (0, "stay", 0, 0.9),
            (0, "go", 1, 0.1),
            (1, "home", 0, 0.9),
            (1, "x", 2, 0.1),
        ],
    );
    let (report, tree) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(report.prunes.get("no_progress"), Some(&1));
    assert_eq!(report.prunes.get("loop"), Some(&1));
    let pruned: Vec<(&str, &NodeStatus)> = tree
        .nodes()
        .filter(|n| matches!(n.status, NodeStatus::Pruned(_)))
        .map(|n| (*n.action.expect("not the root"), n.status))
        .collect();
    assert!(pruned.contains(&("stay", &NodeStatus::Pruned(PruneReason::NoProgress))));
    assert!(pruned.contains(&("home", &NodeStatus::Pruned(PruneReason::Loop))));
}

#[test]
fn a_short_detour_back_to_where_an_action_failed_is_kept_to_try_it_again() {
    // At 0 typing fails (focusing the field opens a popup); the popup (1) dismissed leads to
    // 3, which looks exactly like 0, but where the page lets the field be typed into now.
    let mut graph = Graph::new(
        2,
        &[
            (0, "type", 99, 0.6),
            (0, "focus", 1, 0.4),
            (1, "cancel", 3, 0.9),
            (1, "ok", 4, 0.1),
            (3, "type", 2, 0.9),
        ],
    );
    graph.unreachable.push(99);
    graph.alias.insert(3, 0);
    let (report, tree) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.prunes);
    assert_eq!(report.prunes.get("loop"), None);
    let success = tree
        .nodes()
        .find(|n| *n.status == NodeStatus::Success)
        .expect("a success");
    assert_eq!(success.depth, 3);

    // Without the failure the same return is a loop, as any other.
    let mut graph = Graph::new(
        2,
        &[
            (0, "focus", 1, 0.4),
            (1, "cancel", 3, 0.9),
            (1, "ok", 4, 0.1),
            (3, "type", 2, 0.9),
        ],
    );
    graph.alias.insert(3, 0);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.prunes.get("loop"), Some(&1));
    assert_ne!(report.finish, Finish::Solved);
}

#[test]
fn a_success_that_leaves_the_fingerprint_unchanged_is_still_a_success() {
    // 1 looks exactly like 0 (a page whose script set a reward, a field that took a value),
    // yet the predicates hold there: that is the goal, not a step without progress.
    let mut graph = Graph::new(1, &[(0, "yes", 1, 0.5), (0, "no", 2, 0.5)]);
    graph.alias.insert(1, 0);
    let (report, tree) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.prunes);
    assert_eq!(report.prunes.get("no_progress"), None);
    let success: Vec<&str> = tree
        .nodes()
        .filter(|n| *n.status == NodeStatus::Success)
        .map(|n| *n.action.expect("not the root"))
        .collect();
    assert_eq!(success, ["yes"]);
}

#[test]
fn a_change_only_the_script_holds_is_kept_a_few_times_in_a_row() {
    // "Press ONE, then TWO": ONE changes nothing the fingerprint sees (1 looks like 0), but
    // the page's handler ran; TWO before ONE is a dead end.
    let mut graph = Graph::new(
        3,
        &[
            (0, "two", 2, 0.6),
            (0, "one", 1, 0.4),
            (1, "two", 3, 0.6),
            (1, "one", 4, 0.4),
            (4, "one", 5, 0.4),
        ],
    );
    graph.alias.extend([(1, 0), (4, 0), (5, 0)]);
    graph.hidden.extend([1, 4, 5]);
    graph.dead_ends.push(2);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.prunes);
    let best = report.best.expect("a success");
    let labels: Vec<&str> = best.iter().map(|s| s.action).collect();
    assert_eq!(labels, ["one", "two"]);

    // Without handlers running, the same click is no progress.
    let mut graph = Graph::new(
        3,
        &[(0, "two", 2, 0.6), (0, "one", 1, 0.4), (1, "two", 3, 0.6)],
    );
    graph.alias.insert(1, 0);
    graph.dead_ends.push(2);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_ne!(report.finish, Finish::Solved);
    assert_eq!(report.prunes.get("no_progress"), Some(&1));

    // A chain of hidden changes is cut after MAX_HIDDEN_CHAIN.
    let mut graph = Graph::new(
        9,
        &[
            (0, "one", 1, 0.5),
            (1, "one", 4, 0.5),
            (4, "one", 5, 0.5),
            (5, "one", 6, 0.5),
        ],
    );
    graph.alias.extend([(1, 0), (4, 0), (5, 0), (6, 0)]);
    graph.hidden.extend([1, 4, 5, 6]);
    let (report, _) = search(&mut graph, SearchConfig::default());
    let ones = graph.executed.iter().filter(|a| **a == "one").count();
    assert!(
        ones <= tree::MAX_HIDDEN_CHAIN as usize + 1,
        "{:?} {:?}",
        graph.executed,
        report.prunes
    );
}

#[test]
fn rolls_of_the_page_dice_are_kept_longer_than_other_hidden_changes() {
    // "Generate a number greater than 4, then press submit": every "generate" shows a number
    // the fingerprint does not tell apart; the first four miss (submit is a dead end), the
    // fifth fits. Each generate drew random numbers.
    let mut edges = vec![(0, "generate", 1, 0.5)];
    for roll in 1..=5 {
        edges.push((roll, "submit", 10 + roll, 0.6));
        edges.push((roll, "generate", roll + 1, 0.5));
    }
    let build = |rolled: bool| {
        let mut graph = Graph::new(15, &edges);
        graph.alias.extend((2..=6).map(|state| (state, 1)));
        graph.hidden.extend(2..=6);
        if rolled {
            graph.rolled.extend(2..=6);
        }
        graph.dead_ends.extend(11..=14);
        graph
    };
    let (report, _) = search(&mut build(true), SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.prunes);
    let best = report.best.expect("a success");
    assert_eq!(best.len(), 6, "five generates and a submit");

    // The same page whose handler draws nothing is cut after MAX_HIDDEN_CHAIN.
    let (report, _) = search(&mut build(false), SearchConfig::default());
    assert_ne!(report.finish, Finish::Solved);
    assert_eq!(report.prunes.get("no_progress"), Some(&1));
}

#[test]
fn dead_ends_are_pruned_and_never_explored_past() {
    // 0 -wrong-> 1 is a dead end (a lost game); past it lies a decoy goal path the search must
    // not take. The real goal is behind the low-prior 0 -right-> 2 -go-> 3.
    let mut graph = Graph::new(
        3,
        &[
            (0, "wrong", 1, 0.9),
            (1, "restart", 3, 0.9),
            (0, "right", 2, 0.1),
            (2, "go", 3, 0.5),
        ],
    );
    graph.dead_ends.push(1);
    let (report, tree) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(report.prunes.get("dead_end"), Some(&1));
    assert!(!graph.executed.contains(&"restart"), "{:?}", graph.executed);
    let dead: Vec<&str> = tree
        .nodes()
        .filter(|n| *n.status == NodeStatus::Pruned(PruneReason::DeadEnd))
        .map(|n| *n.action.expect("not the root"))
        .collect();
    assert_eq!(dead, ["wrong"]);
}

#[test]
fn a_login_page_under_a_mounted_session_is_pruned_as_expired() {
    // 0 -inbox-> 1 asks to log in again (the session expired); past it a login would reach
    // the goal. The search cuts it, names it, and does not log in.
    let mut graph = Graph::new(3, &[(0, "inbox", 1, 0.9), (1, "sign in", 3, 0.9)]);
    graph.expired.push(1);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_ne!(report.finish, Finish::Solved);
    assert_eq!(report.prunes.get("session_expired"), Some(&1));
    assert!(!graph.executed.contains(&"sign in"), "{:?}", graph.executed);
    // A tree rooted on such a page (a branch whose prefix lands there) has nothing to search.
    let mut graph = Graph::new(3, &[(0, "sign in", 3, 0.9)]);
    graph.expired.push(0);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_ne!(report.finish, Finish::Solved);
    assert_eq!(report.prunes.get("session_expired"), Some(&1));
    assert!(graph.executed.is_empty(), "{:?}", graph.executed);
}

#[test]
fn a_state_reached_again_deeper_is_a_transposition() {
    // Two ways to 2: directly (0 -p-> 2) and through 1 (0 -q-> 1 -r-> 2). The goal is 3.
    let mut graph = Graph::new(
        3,
        &[
            (0, "p", 2, 0.6),
            (0, "q", 1, 0.4),
            (1, "r", 2, 1.0),
            (2, "s", 4, 1.0),
            (4, "t", 3, 1.0),
        ],
    );
    let config = SearchConfig {
        stop_at_first_success: false,
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut graph, config);
    assert_eq!(labels(&report), ["p", "s", "t"]);
    assert_eq!(report.prunes.get("transposition"), Some(&1));
}

#[test]
fn actions_that_find_only_known_states_cost_their_node_a_visit() {
    // A hub (0 -hub-> 1) whose eight actions all reach states the root reaches directly
    // (transpositions), beside a chain to the goal (0 -go-> 10 -> 11 -> 12 -> 13). Each
    // pruned action still counts as a visit of the hub, so the search does not pick the hub
    // again and again until it is empty before it follows the chain.
    const HUB: [&str; 8] = ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"];
    let mut edges = vec![
        (0, "hub", 1, 0.4),
        (0, "a", 2, 0.2),
        (0, "b", 3, 0.2),
        (0, "go", 10, 0.2),
        (10, "g1", 11, 1.0),
        (11, "g2", 12, 1.0),
        (12, "g3", 13, 1.0),
    ];
    for (i, label) in HUB.into_iter().enumerate() {
        edges.push((1, label, 2 + (i as u32 % 2), 1.0 - 0.1 * i as f64));
    }
    let mut graph = Graph::new(13, &edges);
    graph.hints = HashMap::from([
        (1, 0.5),
        (2, 0.3),
        (3, 0.3),
        (10, 0.5),
        (11, 0.5),
        (12, 0.5),
    ]);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["go", "g1", "g2", "g3"]);
    let in_hub = graph.executed.iter().filter(|l| HUB.contains(l)).count();
    assert!(in_hub < HUB.len(), "{:?}", graph.executed);
}

#[test]
fn a_child_that_did_better_is_followed_before_its_siblings_are_opened() {
    // The first action raises the value (0.2 → 0.6 → 0.8 → goal); six siblings are as
    // good as the start. Widening alone opens more root children at each new visit.
    let mut edges = vec![
        (0, "up", 1, 0.5),
        (1, "up2", 2, 0.5),
        (2, "up3", 3, 0.5),
        (1, "side1", 5, 0.4),
        (2, "side2", 6, 0.4),
    ];
    const SIBLINGS: [&str; 6] = ["s1", "s2", "s3", "s4", "s5", "s6"];
    for (i, label) in SIBLINGS.into_iter().enumerate() {
        edges.push((0, label, 10 + i as u32, 0.4 - 0.05 * i as f64));
    }
    let mut graph = Graph::new(3, &edges);
    graph.hints = HashMap::from([(0, 0.2), (1, 0.6), (2, 0.8), (5, 0.2), (6, 0.2)]);
    for i in 0..6 {
        graph.hints.insert(10 + i, 0.2);
    }
    let mut opened = Vec::new();
    for first_play_urgency in [true, false] {
        let mut g = graph.clone();
        let config = SearchConfig {
            first_play_urgency,
            ..SearchConfig::default()
        };
        let (report, _) = search(&mut g, config);
        assert_eq!(report.finish, Finish::Solved);
        assert_eq!(labels(&report), ["up", "up2", "up3"]);
        opened.push(g.executed.iter().filter(|l| SIBLINGS.contains(l)).count());
    }
    // With first-play urgency the better child is followed at once; without, the widening
    // opens root siblings on the way down.
    assert_eq!(opened[0], 0, "{opened:?}");
    assert!(opened[1] > 0, "{opened:?}");
}

#[test]
fn the_other_order_of_two_actions_the_tree_holds_is_tried_last() {
    // "a" and "b" commute (a star on two rows): 0 -a-> 1 -b-> 3 and 0 -b-> 2 -a-> 3. At 2,
    // "a" has the higher prior, but the tree holds a-then-b, so "c" (to the goal) goes first.
    let mut graph = Graph::new(
        4,
        &[
            (0, "a", 1, 0.6),
            (0, "b", 2, 0.4),
            (1, "b", 3, 1.0),
            (2, "a", 3, 0.9),
            (2, "c", 4, 0.1),
        ],
    );
    graph.hints = HashMap::from([(0, 0.2), (1, 0.6), (2, 0.4), (3, 0.3)]);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["b", "c"]);
    assert_eq!(
        report.prunes.get("transposition"),
        None,
        "{:?}",
        graph.executed
    );
    assert_eq!(report.metrics.commuted_later, 1);
}

/// An inbox of `rows` rows, each with a star beside it. A star changes the list and nothing
/// else: every row the starred list opens, the list opens too. The goal is behind the first
/// row's "forward", whose page the eyes value below the starred lists'.
fn inbox_with_stars(rows: u32) -> Graph {
    const ROW: [&str; 6] = ["row0", "row1", "row2", "row3", "row4", "row5"];
    const STAR: [&str; 6] = ["star0", "star1", "star2", "star3", "star4", "star5"];
    const STARRED_ROW: [&str; 6] = ["s-row0", "s-row1", "s-row2", "s-row3", "s-row4", "s-row5"];
    let goal = 100;
    let mut edges = Vec::new();
    let mut hints = HashMap::new();
    for r in 0..rows {
        let (row, starred) = (1 + r, 20 + r);
        edges.push((0, ROW[r as usize], row, 0.5));
        edges.push((0, STAR[r as usize], starred, 0.3));
        edges.push((row, "forward", 40 + r, 0.5));
        hints.insert(row, if r == 0 { 0.4 } else { 0.2 });
        hints.insert(starred, 0.35);
        hints.insert(40 + r, 0.1);
        for other in 0..rows {
            edges.push((starred, STARRED_ROW[other as usize], 1 + other, 0.5));
        }
    }
    edges.push((40, "fill", 50, 0.5));
    edges.push((50, "send", goal, 0.5));
    hints.insert(50, 0.5);
    let mut graph = Graph::new(goal, &edges);
    graph.hints = hints;
    graph
}

#[test]
fn a_node_whose_actions_reach_only_known_states_is_closed_as_a_copy() {
    let mut graph = inbox_with_stars(6);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["row0", "forward", "fill", "send"]);
    // Each starred list is left after two rows it opens are found known.
    let from_starred = graph
        .executed
        .iter()
        .filter(|l| l.starts_with("s-"))
        .count();
    let starred_lists = graph
        .executed
        .iter()
        .filter(|l| l.starts_with("star"))
        .count();
    assert!(
        from_starred <= 2 * starred_lists,
        "{from_starred} actions from {starred_lists} starred lists: {:?}",
        graph.executed
    );
    assert!(report.metrics.copies_closed >= 1, "{:?}", report.metrics);
}

#[test]
fn refinement_finds_the_shorter_path_after_the_first() {
    // The promising-looking route is long; a short route exists behind a low prior.
    let mut graph = Graph::new(
        9,
        &[
            (0, "long1", 1, 0.9),
            (1, "long2", 2, 1.0),
            (2, "long3", 3, 1.0),
            (3, "long4", 9, 1.0),
            (0, "short1", 5, 0.1),
            (5, "short2", 9, 1.0),
        ],
    );
    graph.hints = HashMap::from([(1, 0.9), (2, 0.9), (3, 0.9)]);
    let first = search(&mut graph.clone(), SearchConfig::default()).0;
    let refined = search(
        &mut graph,
        SearchConfig {
            stop_at_first_success: false,
            ..SearchConfig::default()
        },
    )
    .0;
    assert_eq!(labels(&first).len(), 4);
    assert_eq!(labels(&refined), ["short1", "short2"]);
}

#[test]
fn actions_above_the_ceiling_are_never_executed_and_are_reported() {
    // The only way to the goal is a class-5 action.
    let mut graph = Graph::new(2, &[(0, "browse", 1, 0.5), (1, "buy", 2, 0.9)])
        .with_risk("buy", RiskClass::Financial);
    let (report, tree) = search(&mut graph, SearchConfig::default());
    assert_eq!(
        report.finish,
        Finish::Failed(FailureReason::ApprovalRequired)
    );
    assert_eq!(graph.above_ceiling, 0);
    assert!(!graph.executed.contains(&"buy"));
    assert_eq!(report.approvals.len(), 1);
    assert_eq!(report.approvals[0].action, "buy");
    assert_eq!(report.approvals[0].prefix, ["browse"]);
    assert_eq!(report.approvals[0].class, RiskClass::Financial);
    assert!(tree.nodes().any(|n| n.status
        == &NodeStatus::Pruned(PruneReason::ApprovalRequired {
            class: RiskClass::Financial
        })));

    // Raising the ceiling lets it run.
    let mut graph = Graph::new(2, &[(0, "browse", 1, 0.5), (1, "buy", 2, 0.9)])
        .with_risk("buy", RiskClass::Financial);
    let config = SearchConfig {
        risk_ceiling: RiskClass::Financial,
        ..SearchConfig::default()
    };
    assert_eq!(search(&mut graph, config).0.finish, Finish::Solved);
}

#[test]
fn a_consent_lets_exactly_its_action_at_its_path_run() {
    // Two class-5 actions: "buy" after "browse" (consented) and "buy" straight from the
    // start (same action, another path: not consented).
    let graph = || {
        Graph::new(
            2,
            &[
                (0, "buy", 3, 0.9),
                (0, "browse", 1, 0.5),
                (1, "buy", 2, 0.9),
            ],
        )
        .with_risk("buy", RiskClass::Financial)
    };
    let consent = |path: Vec<u64>, risk| SearchConfig {
        consented: vec![Consented {
            path,
            key: action_key("buy"),
            risk,
        }],
        ..SearchConfig::default()
    };
    let mut allowed = graph();
    let (report, _) = search(
        &mut allowed,
        consent(vec![action_key("browse")], RiskClass::Financial),
    );
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(allowed.above_ceiling, 1, "only the consented buy ran");
    assert_eq!(report.approvals.len(), 1, "the other buy still asks");
    assert!(report.approvals[0].prefix.is_empty());

    // A consent given at a lower class, or at another path, permits nothing.
    for config in [
        consent(vec![action_key("browse")], RiskClass::ExternalSubmission),
        consent(vec![action_key("elsewhere")], RiskClass::Financial),
    ] {
        let mut refused = graph();
        let (report, _) = search(&mut refused, config);
        assert_eq!(
            report.finish,
            Finish::Failed(FailureReason::ApprovalRequired)
        );
        assert_eq!(refused.above_ceiling, 0);
    }
}

#[test]
fn rollouts_skip_actions_above_the_ceiling() {
    let mut graph = Graph::new(
        9,
        &[
            (0, "a", 1, 0.5),
            (1, "delete", 2, 0.99),
            (1, "b", 3, 0.01),
            (3, "c", 9, 1.0),
        ],
    )
    .with_risk("delete", RiskClass::Destructive);
    let config = SearchConfig {
        evaluation: Evaluation::Rollout { depth: 4 },
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut graph, config);
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(graph.above_ceiling, 0);
}

#[test]
fn a_rollout_success_is_returned_as_a_path() {
    let mut graph = Graph::new(3, &[(0, "a", 1, 1.0), (1, "b", 2, 1.0), (2, "c", 3, 1.0)]);
    let config = SearchConfig {
        evaluation: Evaluation::Rollout { depth: 5 },
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut graph, config);
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["a", "b", "c"]);
    // One expansion and its rollout found it.
    assert_eq!(report.metrics.iterations, 1);
}

#[test]
fn virtual_loss_sends_concurrent_jobs_to_different_branches() {
    let graph = Graph::new(
        99,
        &[
            (0, "left", 1, 0.5),
            (0, "right", 2, 0.5),
            (1, "l1", 3, 0.5),
            (1, "l2", 4, 0.5),
            (2, "r1", 5, 0.5),
            (2, "r2", 6, 0.5),
        ],
    );
    let root = graph.info(0);
    let candidates = futures::executor::block_on(graph.clone().candidates()).expect("listed");
    let jobs_for = |virtual_loss: f64| {
        let config = SearchConfig {
            virtual_loss,
            widening: Widening {
                coefficient: 1.0,
                exponent: 0.5,
            },
            ..SearchConfig::default()
        };
        let mut tree: Search<&'static str> = Search::new(config, root, candidates.clone(), None);
        // Expand both root children, one at a time.
        for to in [1u32, 2] {
            let Plan::Job(job) = tree.plan(0) else {
                panic!("expected a job");
            };
            let mut env = graph.clone();
            env.state = to;
            let step = Step {
                state: env.info(to),
                cost: Cost::default(),
                executed: 1,
            };
            let next = futures::executor::block_on(env.candidates()).expect("listed");
            tree.complete(
                job.id,
                JobOutcome::Reached {
                    restore: None,
                    step,
                    candidates: next,
                    rollout: vec![],
                },
            );
        }
        // Two workers plan without completing: where do their jobs go?
        let parents: Vec<NodeId> = (0..2)
            .map(|worker| match tree.plan(worker) {
                Plan::Job(job) => job.parent,
                other => panic!("expected a job, got {other:?}"),
            })
            .collect();
        parents
    };
    let with_loss = jobs_for(1.0);
    assert_ne!(with_loss[0], with_loss[1], "virtual loss spreads the work");
    let without = jobs_for(0.0);
    assert_eq!(
        without[0], without[1],
        "without it both pile onto one branch"
    );
}

#[test]
fn several_workers_search_one_tree() {
    let mut workers = vec![chain_with_decoy(), chain_with_decoy(), chain_with_decoy()];
    let (report, _) = futures::executor::block_on(run(
        &mut workers,
        SearchConfig::default(),
        None,
        &mut NoObserver,
    ))
    .expect("runs");
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["a", "b", "c"]);
}

#[test]
fn diverging_replays_are_retried_then_pruned_as_nondeterministic() {
    let mut graph = chain_with_decoy();
    graph.diverge_times = 1;
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(report.metrics.retries, 1);

    let mut graph = chain_with_decoy();
    graph.diverge_times = 1000;
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert!(
        report
            .prunes
            .get("nondeterministic")
            .is_some_and(|&n| n >= 1)
    );
    assert_ne!(report.finish, Finish::Solved);
}

#[test]
fn a_start_that_replay_cannot_reach_ends_the_search_at_its_root() {
    // Every restore below the root finds another start: the root is pruned, once, after the
    // retries, and no node below it is blamed.
    let mut graph = chain_with_decoy();
    graph.root_diverges = true;
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(
        report.finish,
        Finish::Failed(FailureReason::Nondeterministic)
    );
    assert_eq!(
        report.prunes.get("nondeterministic"),
        Some(&1),
        "{report:?}"
    );
    // Each restore was tried three times.
    assert!(
        report.metrics.retries > 0 && report.metrics.retries % 2 == 0,
        "{report:?}"
    );
}

#[test]
fn a_crashed_environment_is_recovered_and_the_job_retried() {
    let mut graph = chain_with_decoy();
    graph.crash_on = vec![2];
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(report.metrics.crashes, 1);

    let mut graph = chain_with_decoy();
    graph.crash_on = (1..100).collect();
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(report.finish, Finish::Failed(FailureReason::BrowserCrashed));
}

#[test]
fn states_past_a_write_live_on_in_kept_pages_only() {
    // 0 -save-> 1 (a write) -next-> 2 -finish-> 3 (goal); the root has decoys that pull the
    // search away from 1, so coming back needs a restore, which replay cannot do.
    let build = || {
        let mut graph = Graph::new(
            3,
            &[
                (0, "save", 1, 0.4),
                (0, "decoy1", 5, 0.3),
                (0, "decoy2", 6, 0.3),
                (1, "next", 2, 0.5),
                (1, "other", 7, 0.5),
                (2, "finish", 3, 1.0),
            ],
        );
        graph.writes = vec!["save"];
        graph
    };
    let mut kept = build();
    kept.keep_pages = true;
    let (report, _) = search(&mut kept, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(labels(&report), ["save", "next", "finish"]);

    let mut lost = build();
    let (report, _) = search(&mut lost, SearchConfig::default());
    assert!(
        report.prunes.get("replay_unsafe").is_some_and(|&n| n >= 1),
        "{:?} {:?} {:?}",
        report.prunes,
        report.finish,
        lost.executed
    );
    // Never replayed: "save" ran exactly once.
    assert_eq!(lost.executed.iter().filter(|a| **a == "save").count(), 1);
}

#[test]
fn the_deadline_stops_the_search() {
    let mut graph = chain_with_decoy();
    let config = SearchConfig {
        deadline: Some(std::time::Duration::ZERO),
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut graph, config);
    assert_eq!(report.finish, Finish::Failed(FailureReason::Timeout));
    assert_eq!(report.metrics.actions, 1);
}

#[test]
fn an_exhausted_search_says_so() {
    let mut graph = Graph::new(9, &[(0, "a", 1, 0.5), (1, "b", 2, 0.5)]);
    let (report, _) = search(&mut graph, SearchConfig::default());
    assert_eq!(
        report.finish,
        Finish::Failed(FailureReason::SearchExhausted)
    );
    assert_eq!(report.metrics.actions, 2);
}

#[test]
fn the_memory_steers_toward_remembered_routes() {
    // Two identical-looking branches; the memory remembers a success through "left".
    let graph = Graph::new(
        99,
        &[
            (0, "right", 2, 0.5),
            (0, "left", 1, 0.5),
            (1, "l1", 3, 0.5),
            (2, "r1", 5, 0.5),
        ],
    );
    let embedder = GoalEmbedder::Ngram;
    let store = FlatMemory::default();
    let step = |location: u64, label: &str| TraceStep {
        location,
        page_family: 0,
        key: action_key(label),
    };
    store.insert(
        "family",
        embedder.embed("reach the goal page").expect("embeds"),
        vec![step(0, "left"), step(1, "l1")],
    );
    let goal = embedder.embed("reach the goal page").expect("embeds");
    let memory = TaskMemory::recall(&store, "family", &goal);
    let memory: Arc<dyn ReplayMemory + Send + Sync> = Arc::new(memory);
    let config = SearchConfig {
        family: "family".into(),
        action_budget: 3,
        ..SearchConfig::default()
    };
    let mut env = graph.clone();
    let (_, tree) = futures::executor::block_on(run(
        std::slice::from_mut(&mut env),
        config.clone(),
        Some(memory),
        &mut NoObserver,
    ))
    .expect("runs");
    // The remembered route first: "left" at the root, "l1" first below it, each with its
    // vote as R; "right" (not remembered) has none.
    let actions: Vec<(&str, f64)> = tree
        .nodes()
        .filter_map(|n| n.action.map(|a| (*a, n.replay)))
        .collect();
    assert_eq!(actions[0].0, "left", "{actions:?}");
    assert_eq!(actions[2].0, "l1", "{actions:?}");
    for (action, replay) in &actions {
        assert_eq!(*replay > 0.0, *action != "right", "{actions:?}");
    }
    assert!(tree.metrics().remembered >= 2);
    // Without the memory, the environment's order: "right" first.
    let mut env = graph.clone();
    let (_, tree) = futures::executor::block_on(run(
        std::slice::from_mut(&mut env),
        config,
        None,
        &mut NoObserver,
    ))
    .expect("runs");
    let first = tree.nodes().nth(1).and_then(|n| n.action.copied());
    assert_eq!(first, Some("right"));
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let graph = Graph::new(
        7,
        &[
            (0, "a", 1, 0.5),
            (0, "b", 2, 0.5),
            (1, "c", 3, 0.5),
            (1, "d", 4, 0.5),
            (2, "e", 5, 0.5),
            (3, "f", 6, 0.5),
            (5, "g", 7, 0.5),
        ],
    );
    let config = SearchConfig {
        evaluation: Evaluation::Rollout { depth: 2 },
        seed: 42,
        ..SearchConfig::default()
    };
    let (first, _) = search(&mut graph.clone(), config.clone());
    let mut again = graph.clone();
    let (second, _) = search(&mut again, config);
    assert_eq!(first, second);
}

#[test]
fn learned_locations_are_skipped_as_if_reached_here() {
    // 0 -a-> 1 -b-> 3 (goal), 0 -c-> 2 -d-> 4.
    let graph = Graph::new(
        3,
        &[
            (0, "a", 1, 0.9),
            (1, "b", 3, 1.0),
            (0, "c", 2, 0.1),
            (2, "d", 4, 1.0),
        ],
    )
    .with_targets();
    let (report, _) = search(&mut graph.clone(), SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);

    // Another search of the task reached state 1 one action from this root: this one leaves
    // it to that search and explores the rest.
    let mut env = graph;
    let mut tree = futures::executor::block_on(start(&mut env, SearchConfig::default(), None))
        .expect("starts");
    tree.learn_locations([(1, 1)]);
    assert!(
        tree.locations()
            .any(|(location, depth)| (location, depth) == (1, 1))
    );
    let (report, tree) = futures::executor::block_on(run_from(
        std::slice::from_mut(&mut env),
        tree,
        &mut NoObserver,
    ));
    assert_eq!(
        report.finish,
        Finish::Failed(FailureReason::SearchExhausted),
        "{:?}",
        env.executed
    );
    assert!(!env.executed.contains(&"a"), "{:?}", env.executed);
    assert_eq!(env.executed, ["c", "d"]);
    assert!(tree.locations().any(|(location, _)| location == 4));
}

#[test]
fn a_flat_board_is_played_out_to_its_end() {
    // A game: three moves of six on a board the eyes cannot read (every value hint alike);
    // a third move wins when the moves' numbers add up to a multiple of three, and loses (a
    // dead end) otherwise. Searched breadth first, 40 actions never reach a third move
    // (6 + 36 of them before the first); played out, a third of the walks win.
    const MOVES: [&str; 6] = ["m0", "m1", "m2", "m3", "m4", "m5"];
    const GOAL: u32 = 10_000;
    let mut edges = Vec::new();
    let mut dead_ends = Vec::new();
    for first in 0..6u32 {
        for second in 0..6u32 {
            let state = 1 + first;
            let next = 10 + first * 6 + second;
            if second == 0 {
                edges.push((0, MOVES[first as usize], state, 0.5));
            }
            edges.push((state, MOVES[second as usize], next, 0.5));
            for third in 0..6u32 {
                let end = if (first + second + third) % 3 == 0 {
                    GOAL
                } else {
                    let lost = 100 + next * 6 + third;
                    dead_ends.push(lost);
                    lost
                };
                edges.push((next, MOVES[third as usize], end, 0.5));
            }
        }
    }
    let build = || {
        let mut graph = Graph::new(GOAL, &edges);
        graph.dead_ends.clone_from(&dead_ends);
        graph
    };
    let config = |flat_playout_depth| SearchConfig {
        action_budget: 40,
        flat_playout_depth,
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut build(), config(FLAT_PLAYOUT_DEPTH));
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.prunes);
    assert_eq!(labels(&report).len(), 3);

    let (report, _) = search(&mut build(), config(0));
    assert_ne!(
        report.finish,
        Finish::Solved,
        "breadth first it does not get there"
    );
}

#[test]
fn a_page_whose_values_differ_is_not_played_out() {
    // Four actions at the start of a wordless page, the goal three steps behind the last. When
    // the eyes value one of the first three above the others, nothing is flat: every action is
    // a job of the tree. When they value all alike, the fourth is played out (more actions
    // than jobs).
    let build = |hint_of_a: f64| {
        let mut graph = Graph::new(
            9,
            &[
                (0, "a", 1, 0.5),
                (0, "b", 2, 0.5),
                (0, "c", 3, 0.5),
                (0, "d", 4, 0.5),
                (4, "e", 5, 0.5),
                (5, "f", 6, 0.5),
                (6, "g", 9, 0.5),
            ],
        );
        graph.hints.insert(1, hint_of_a);
        graph
    };
    let (report, _) = search(&mut build(0.3), SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(u64::from(report.metrics.actions), report.metrics.iterations);

    let (report, _) = search(&mut build(0.0), SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert!(
        u64::from(report.metrics.actions) > report.metrics.iterations,
        "{:?}",
        report.metrics
    );

    // Values that tie on a page whose controls show words (a search form and its results):
    // the words tell the actions apart, nothing is played out.
    let mut worded = build(0.0);
    worded.worded.extend(0..=9);
    let (report, _) = search(&mut worded, SearchConfig::default());
    assert_eq!(report.finish, Finish::Solved);
    assert_eq!(u64::from(report.metrics.actions), report.metrics.iterations);
}

#[test]
fn a_playout_does_not_repeat_an_action_that_changed_nothing() {
    // After "a", a click the eyes favour ("marked", a square already taken) leaves the page
    // as it was; the playout picks it once, then takes the only other action.
    let mut graph = Graph::new(
        9,
        &[
            (0, "a", 1, 0.5),
            (1, "marked", 2, 50.0),
            (1, "go", 9, 0.01),
            (2, "marked", 2, 50.0),
            (2, "go", 9, 0.01),
        ],
    );
    graph.alias.insert(2, 1);
    let config = SearchConfig {
        evaluation: Evaluation::Rollout { depth: 3 },
        ..SearchConfig::default()
    };
    let (report, _) = search(&mut graph, config);
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.prunes);
    assert_eq!(
        report.metrics.iterations, 1,
        "one expansion and its playout"
    );
}

#[test]
fn a_playout_that_ends_the_game_unwon_is_worth_nothing() {
    // Four moves the eyes value alike; after the fourth, the only move loses (a dead end).
    // Its playout says so: that move is worth nothing, the others keep the eyes' value.
    let mut graph = Graph::new(
        99,
        &[
            (0, "a", 1, 0.5),
            (0, "b", 2, 0.5),
            (0, "c", 3, 0.5),
            (0, "d", 4, 0.5),
            (4, "lose", 5, 0.5),
        ],
    );
    graph.hints.extend((0..=4).map(|state| (state, 0.5)));
    graph.dead_ends.push(5);
    let config = SearchConfig {
        action_budget: 5,
        ..SearchConfig::default()
    };
    let (_, search) = search(&mut graph, config);
    let value_of = |label| {
        search
            .nodes()
            .find(|n| n.action == Some(&label))
            .map(|n| n.mean_value)
            .expect("the move was tried")
    };
    assert!(value_of("a") > 0.4, "{}", value_of("a"));
    assert_eq!(value_of("d"), 0.0);
}
