//! Branch searches a node keeps between assignments, and the environment that restores a
//! branch's root before the search below it.
//!
//! A search is checked out while it runs (a second assignment of the branch meanwhile is refused
//! `busy`) and checked in after; beyond `MAX_BRANCHES` (8) the least recently used is dropped. A
//! branch still checked out when its task is released is dropped when it comes back.

use crate::environment::{EnvError, Environment, StateInfo, Step};
use crate::search::Search;
use forager_protocol::wire::{BranchId, TaskId};
use forager_protocol::{Action, Fingerprint};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// An environment restored at a branch's root first, so that the search below it sees the
/// branch root as its start.
pub(super) struct Branch<E> {
    pub(super) inner: E,
    pub(super) prefix: Vec<(Action, Fingerprint)>,
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

pub(super) struct BranchState<E: Environment<Action = Action>> {
    pub(super) env: Branch<E>,
    pub(super) search: Option<Search<Action>>,
    /// Which tree `search` is, in reports (a new one when the search starts over).
    pub(super) tree: u64,
}

/// Branch searches kept between assignments, with when each was last used (a counter). An
/// assignment checks its branch out (the search owns it, no lock is held while it runs) and
/// back in when it is done; a branch checked out is not in `kept`, so it is never dropped.
pub(super) struct Branches<E: Environment<Action = Action>> {
    pub(super) kept: HashMap<(TaskId, BranchId), (BranchState<E>, u64)>,
    pub(super) out: HashSet<(TaskId, BranchId)>,
    pub(super) clock: u64,
    /// Tasks the queen said have ended (the latest [`MAX_RELEASED`]): a branch of theirs that
    /// is checked in is dropped, not kept.
    pub(super) released: std::collections::VecDeque<TaskId>,
    /// How many are kept, for the operator's metrics.
    pub(super) gauge: prometheus_client::metrics::gauge::Gauge,
    /// Per task with a branch search running: set once the queen says the task ended, so
    /// that a search still running stops after its job in hand. A flag no search holds any
    /// more is dropped when the next one is handed out (a task whose queen never releases
    /// it leaves nothing behind).
    pub(super) stops: HashMap<TaskId, Arc<AtomicBool>>,
}

/// Ended tasks remembered, for the assignments still running when their task ended.
pub(super) const MAX_RELEASED: usize = 256;

/// What checking a branch out found.
pub(super) enum Checkout<E: Environment<Action = Action>> {
    /// The kept search, now owned by the caller.
    Kept(Box<BranchState<E>>),
    /// Not searched here before: the caller starts it.
    New,
    /// Another assignment of this node is searching it (the queen gives a branch one holder,
    /// so this is a confused or hostile queen).
    Busy,
}

impl<E: Environment<Action = Action>> Branches<E> {
    pub(super) fn new(gauge: prometheus_client::metrics::gauge::Gauge) -> Self {
        Branches {
            kept: HashMap::new(),
            out: HashSet::new(),
            clock: 0,
            released: std::collections::VecDeque::new(),
            gauge,
            stops: HashMap::new(),
        }
    }

    pub(super) fn count(&self) {
        self.gauge
            .set(i64::try_from(self.kept.len()).unwrap_or(i64::MAX));
    }

    /// Forgets an ended task: returns its kept branches, for the caller to drop outside the
    /// lock; its branches still checked out are dropped when they come back.
    pub(super) fn release(&mut self, task: TaskId) -> Vec<BranchState<E>> {
        if !self.released.contains(&task) {
            if self.released.len() == MAX_RELEASED {
                self.released.pop_front();
            }
            self.released.push_back(task);
        }
        if let Some(stop) = self.stops.remove(&task) {
            stop.store(true, Ordering::Relaxed);
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

    /// The flag that stops the task's searches here once the queen says it ended (set at
    /// once for a task already released).
    pub(super) fn stop_flag(&mut self, task: TaskId) -> Arc<AtomicBool> {
        if self.released.contains(&task) {
            return Arc::new(AtomicBool::new(true));
        }
        self.stops.retain(|_, flag| Arc::strong_count(flag) > 1);
        self.stops.entry(task).or_default().clone()
    }

    pub(super) fn check_out(&mut self, key: (TaskId, BranchId)) -> Checkout<E> {
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
    pub(super) fn check_in(
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

/// Branch searches kept between assignments (each holds an environment: browser contexts).
const MAX_BRANCHES: usize = 8;

/// A branch checked out by a running assignment; dropped without [`CheckedOut::check_in`]
/// (a panic), it frees the branch without its search.
pub(super) struct CheckedOut<'a, E: Environment<Action = Action>> {
    pub(super) branches: &'a std::sync::Mutex<Branches<E>>,
    pub(super) key: (TaskId, BranchId),
    pub(super) returned: bool,
}

impl<E: Environment<Action = Action>> CheckedOut<'_, E> {
    pub(super) fn check_in(mut self, state: BranchState<E>) {
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
pub(super) fn check_in<E: Environment<Action = Action>>(
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

    #[test]
    fn a_release_stops_the_running_searches_and_idle_flags_are_dropped() {
        let mut branches: Branches<Diverging> = Branches::new(Default::default());
        let (a, b) = (TaskId([1; 16]), TaskId([2; 16]));
        let running = branches.stop_flag(a);
        assert!(!running.load(Ordering::Relaxed));
        drop(branches.release(a));
        assert!(
            running.load(Ordering::Relaxed),
            "the running search is told"
        );
        assert!(
            branches.stop_flag(a).load(Ordering::Relaxed),
            "a released task's next search stops at once"
        );
        let idle = branches.stop_flag(b);
        drop(idle);
        let _other = branches.stop_flag(TaskId([3; 16]));
        assert!(
            !branches.stops.contains_key(&b),
            "a flag no search holds is dropped"
        );
    }
}
