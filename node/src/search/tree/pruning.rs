//! What the tree cuts and why: pruned and frozen nodes, redundant children (the same state by
//! another order, a detour past a failure, a chain of hidden changes), transpositions, and
//! untried candidates dropped when a node closes as a copy of known states.

use super::{COPY_AFTER_KNOWN, MAX_DETOUR, NodeId, NodeStatus, ROOT, Search};
use forager_protocol::PruneReason;

impl<A: Clone> Search<A> {
    pub(super) fn prune(&mut self, id: NodeId, reason: PruneReason) {
        *self.prunes.entry(reason.kind()).or_default() += 1;
        self.nodes[id as usize].status = NodeStatus::Pruned(reason);
        self.late_prunes.push(id);
    }

    /// A state that can no longer be reached (its only page is gone and replaying to it would
    /// repeat a write): its untried candidates are lost, but its children, whose pages may
    /// still be kept, stay searchable.
    pub(super) fn freeze(&mut self, id: NodeId) {
        let lost = self.drop_untried(id);
        *self
            .prunes
            .entry(PruneReason::ReplayUnsafe.kind())
            .or_default() += 1;
        tracing::debug!(
            node = id,
            lost,
            "state frozen: no kept page and no safe replay"
        );
    }

    /// Nodes pruned since the last call (for event logs: a node can be cut after it was added).
    pub fn take_late_prunes(&mut self) -> Vec<NodeId> {
        std::mem::take(&mut self.late_prunes)
    }

    /// Why a freshly reached child must be cut, if it must.
    pub(super) fn redundancy(&self, child: NodeId) -> Option<PruneReason> {
        let node = &self.nodes[child as usize];
        let fingerprint = node.fingerprint?;
        let parent = node.parent?;
        if self.nodes[parent as usize].fingerprint == Some(fingerprint) {
            return Some(PruneReason::NoProgress);
        }
        let mut cursor = self.nodes[parent as usize].parent;
        while let Some(ancestor) = cursor {
            if self.nodes[ancestor as usize].fingerprint == Some(fingerprint) {
                return Some(PruneReason::Loop);
            }
            cursor = self.nodes[ancestor as usize].parent;
        }
        if let Some(&owner) = self.table.get(&fingerprint)
            && owner != child
            && !matches!(self.nodes[owner as usize].status, NodeStatus::Pruned(_))
            && self.nodes[owner as usize].depth <= node.depth
        {
            return Some(PruneReason::Transposition);
        }
        if self
            .external_states
            .get(&fingerprint)
            .is_some_and(|&depth| depth <= node.depth)
        {
            return Some(PruneReason::Transposition);
        }
        None
    }

    /// Whether `child` loops back, at most [`MAX_DETOUR`] steps on, to an ancestor's state
    /// where an action failed.
    pub(super) fn detour_past_failure(&self, child: NodeId) -> bool {
        let node = &self.nodes[child as usize];
        let mut cursor = node.parent;
        while let Some(ancestor) = cursor.map(|a| &self.nodes[a as usize]) {
            if node.depth - ancestor.depth > MAX_DETOUR {
                return false;
            }
            if ancestor.fingerprint == node.fingerprint {
                return ancestor.children.iter().any(|&c| {
                    matches!(
                        self.nodes[c as usize].status,
                        NodeStatus::Pruned(PruneReason::ActionFailed { .. })
                    )
                });
            }
            cursor = ancestor.parent;
        }
        false
    }

    /// How many hidden-change nodes end at `id` (`id` and its ancestors, consecutively).
    pub(super) fn hidden_chain(&self, id: NodeId) -> u32 {
        let mut chain = 0;
        let mut cursor = Some(id);
        while let Some(node) = cursor.map(|n| &self.nodes[n as usize])
            && node.hidden
        {
            chain += 1;
            cursor = node.parent;
        }
        chain
    }

    /// Gives the child ownership of its state, superseding a deeper owner.
    pub(super) fn claim_state(&mut self, child: NodeId) {
        let Some(fingerprint) = self.nodes[child as usize].fingerprint else {
            return;
        };
        if let Some(previous) = self.table.insert(fingerprint, child)
            && previous != child
            && self.nodes[previous as usize].status == NodeStatus::Open
        {
            // Reached at a smaller depth now: the deeper copy is redundant.
            self.prune(previous, PruneReason::Transposition);
        }
    }

    /// Drops the candidates `id` has not tried yet (fresh and deferred); returns how many.
    pub(super) fn drop_untried(&mut self, id: NodeId) -> usize {
        let node = &mut self.nodes[id as usize];
        let untried = (node.candidates.len() - node.next_candidate)
            + (node.deferred.len() - node.next_deferred);
        node.next_candidate = node.candidates.len();
        node.next_deferred = node.deferred.len();
        untried
    }

    /// Closes `id` when its actions so far reached only states known elsewhere
    /// ([`COPY_AFTER_KNOWN`] of them, none new): its untried candidates are dropped, its
    /// children stay. The root is never closed: it is the only way into its tree.
    pub(super) fn close_if_copy(&mut self, id: NodeId) {
        let node = &self.nodes[id as usize];
        if id == ROOT || node.status != NodeStatus::Open || self.live_children(id) > 0 {
            return;
        }
        let known = node
            .children
            .iter()
            .filter(|&&c| {
                matches!(
                    self.nodes[c as usize].status,
                    NodeStatus::Pruned(PruneReason::Transposition)
                )
            })
            .count() as u32;
        if known < COPY_AFTER_KNOWN || self.drop_untried(id) == 0 {
            return;
        }
        self.metrics.copies_closed += 1;
        tracing::debug!(node = id, known, "closed as a copy of known states");
    }
}
