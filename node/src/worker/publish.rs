//! Gossip: finished rollouts signed, published and stored in the local replica.
//!
//! Every finished rollout (its goal's vector; its trace of locations, page families and action
//! keys) is signed, published on the trajectory topic and inserted into the local replica.

use crate::index::Replica;
use crate::net::{Network, NodeIdentity};
use crate::search::{NodeStatus, Search, SearchEvent, SearchObserver};
use forager_protocol::Action;
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::trajectory::{Cost, TrajectoryVector};
use forager_protocol::wire::{Announcement, Message, TaskId, TraceStep};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::sync::mpsc;

/// Signs and gossips rollouts; inserts them into the local replica too.
pub(super) struct Publisher {
    pub(super) identity: NodeIdentity,
    pub(super) network: Network,
    pub(super) replica: Arc<Replica>,
    pub(super) sequence: AtomicU64,
}

impl Publisher {
    pub(super) async fn publish(&self, announcement: Announcement) {
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
pub(super) struct RolloutObserver {
    pub(super) task: TaskId,
    pub(super) family: String,
    /// The goal's vector and its embedder; `None`: nothing is gossiped (the goal could not
    /// be embedded).
    pub(super) goal: Option<(TrajectoryVector, forager_protocol::wire::EmbedderId)>,
    /// The branch prefix's steps, from the start URL.
    pub(super) prefix: Vec<TraceStep>,
    pub(super) rollouts: mpsc::Sender<Announcement>,
    /// Set when the queen says the task ended ([`Message::Release`]): the search stops after
    /// its job in hand and reports what it did.
    pub(super) released: Arc<AtomicBool>,
}

impl SearchObserver<Action> for RolloutObserver {
    fn should_stop(&self) -> bool {
        self.released.load(Ordering::Relaxed)
    }

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
