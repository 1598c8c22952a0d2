//! What a node counts for an operator's Prometheus (`forager node --metrics ADDR`): the
//! worker's own counters ([`WorkerMetrics`], atomics the worker's tasks add to), and at each
//! scrape the counters their owners keep (the network's gossip validation, the replica's
//! size, the browser pool's launches), asked for then and encoded as Prometheus text.

use crate::net::GossipCounters;
use forager_protocol::wire::BranchCounters;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A label set: `reason="bad_signature"`.
pub type Labels = Vec<(String, String)>;

/// The worker's counters. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct WorkerMetrics {
    /// Branch assignments searched (answered with a report).
    pub branches: Counter,
    /// Actions executed by the branch searches.
    pub actions: Counter,
    /// Actions replayed to restore states.
    pub replayed: Counter,
    /// Restores of a state, by how (`kept`: a live page walked there, `fresh`: replayed from
    /// the start URL in a new context).
    pub restores: Family<Labels, Counter>,
    /// Success paths reproduced for the queen.
    pub reproductions: Counter,
    /// Start pages opened for the queen.
    pub expansions: Counter,
    /// Branch searches kept between assignments (each holds browser pages); a task's are
    /// dropped when the queen says it ended.
    pub kept_branches: Gauge,
    /// Questions to the model tier, by tier and how they were answered (`answered`,
    /// `cached`, `failed`).
    pub model_calls: Family<Labels, Counter>,
    /// Model tokens spent, by tier and kind (`prompt`, `completion`).
    pub model_tokens: Family<Labels, Counter>,
}

impl WorkerMetrics {
    /// Adds one branch search's report: its actions, the actions it replayed, its counters.
    pub fn add_branch(&self, actions: u32, replayed: u64, counters: &BranchCounters) {
        self.branches.inc();
        self.actions.inc_by(u64::from(actions));
        self.replayed.inc_by(replayed);
        self.restores
            .get_or_create(&vec![("how".into(), "kept".into())])
            .inc_by(counters.cache_hits);
        self.restores
            .get_or_create(&vec![("how".into(), "fresh".into())])
            .inc_by(counters.cache_misses);
        for (tier, usage) in &counters.model.tiers {
            let tier = tier.name().to_owned();
            for (how, n) in [
                ("answered", usage.calls),
                ("cached", usage.cached),
                ("failed", usage.failed),
            ] {
                self.model_calls
                    .get_or_create(&vec![
                        ("tier".into(), tier.clone()),
                        ("how".into(), how.into()),
                    ])
                    .inc_by(n);
            }
            for (kind, n) in [
                ("prompt", usage.prompt_tokens),
                ("completion", usage.completion_tokens),
            ] {
                self.model_tokens
                    .get_or_create(&vec![
                        ("tier".into(), tier.clone()),
                        ("kind".into(), kind.into()),
                    ])
                    .inc_by(n);
            }
        }
    }
}

/// What a scrape reads from the node's other owners.
#[derive(Debug, Clone, Default)]
pub struct NodeSnapshot {
    /// The network's gossip validation counters.
    pub gossip: GossipCounters,
    /// Trajectories in the replica.
    pub replica_entries: u64,
    /// Failed rollouts the replica's retention dropped.
    pub replica_dropped: u64,
    /// Chromium launches (1 + restarts); `None` for a simulated node.
    pub browser_launches: Option<u64>,
}

/// The node's metrics as Prometheus text (the OpenMetrics flavour, `# EOF` last).
pub fn encode_node(worker: &WorkerMetrics, snapshot: &NodeSnapshot) -> String {
    let mut registry = Registry::with_prefix("forager_node");
    registry.register(
        "branches",
        "Branch assignments searched",
        worker.branches.clone(),
    );
    registry.register(
        "actions",
        "Actions executed by branch searches",
        worker.actions.clone(),
    );
    registry.register(
        "replayed_actions",
        "Actions replayed to restore states",
        worker.replayed.clone(),
    );
    registry.register(
        "restores",
        "States restored, by how (kept page or fresh replay)",
        worker.restores.clone(),
    );
    registry.register(
        "reproductions",
        "Success paths reproduced for the queen",
        worker.reproductions.clone(),
    );
    registry.register(
        "expansions",
        "Start pages opened for the queen",
        worker.expansions.clone(),
    );
    registry.register(
        "kept_branches",
        "Branch searches kept between assignments (each holds browser pages)",
        worker.kept_branches.clone(),
    );
    registry.register(
        "model_calls",
        "Questions to the model tier, by tier and how they were answered",
        worker.model_calls.clone(),
    );
    registry.register(
        "model_tokens",
        "Model tokens spent, by tier and kind",
        worker.model_tokens.clone(),
    );
    let accepted = Counter::<u64>::default();
    accepted.inc_by(snapshot.gossip.accepted);
    registry.register(
        "gossip_accepted",
        "Gossiped trajectories that passed validation",
        accepted,
    );
    let rejected = Family::<Labels, Counter>::default();
    for (reason, count) in &snapshot.gossip.rejected {
        rejected
            .get_or_create(&vec![("reason".into(), (*reason).to_owned())])
            .inc_by(*count);
    }
    registry.register(
        "gossip_rejected",
        "Gossiped messages refused, by reason",
        rejected,
    );
    let entries = Gauge::<i64>::default();
    entries.set(i64::try_from(snapshot.replica_entries).unwrap_or(i64::MAX));
    registry.register(
        "replica_entries",
        "Trajectories in this node's replica of the shared index",
        entries,
    );
    let dropped = Counter::<u64>::default();
    dropped.inc_by(snapshot.replica_dropped);
    registry.register(
        "replica_dropped",
        "Failed rollouts dropped from the replica by its retention",
        dropped,
    );
    if let Some(launches) = snapshot.browser_launches {
        let restarts = Counter::<u64>::default();
        restarts.inc_by(launches.saturating_sub(1));
        registry.register(
            "browser_restarts",
            "Chromium restarts after a crash or a stop",
            restarts,
        );
    }
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_and_a_snapshot_are_counted_in_prometheus_text() {
        let worker = WorkerMetrics::default();
        let counters = BranchCounters {
            cache_hits: 2,
            cache_misses: 1,
            ..BranchCounters::default()
        };
        worker.add_branch(7, 3, &counters);
        worker.add_branch(7, 3, &counters);
        let mut snapshot = NodeSnapshot {
            replica_entries: 12,
            replica_dropped: 3,
            browser_launches: Some(3),
            ..NodeSnapshot::default()
        };
        snapshot.gossip.accepted = 5;
        snapshot.gossip.rejected.insert("bad_signature", 4);
        let text = encode_node(&worker, &snapshot);
        for line in [
            "forager_node_branches_total 2",
            "forager_node_actions_total 14",
            "forager_node_replayed_actions_total 6",
            "forager_node_restores_total{how=\"kept\"} 4",
            "forager_node_restores_total{how=\"fresh\"} 2",
            "forager_node_gossip_accepted_total 5",
            "forager_node_gossip_rejected_total{reason=\"bad_signature\"} 4",
            "forager_node_replica_entries 12",
            "forager_node_replica_dropped_total 3",
            "forager_node_browser_restarts_total 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }
}
