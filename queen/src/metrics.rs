//! Prometheus metrics over HTTP (`--metrics ADDR` on `forager queen` and `forager node`):
//! the queen's counters ([`QueenMetrics`], atomics the queen's actor adds to), the gauges a
//! scrape computes from the queen's [`ClusterOverview`], and a small server that answers
//! `GET /metrics` with what a source function encodes at that moment.

use forager_protocol::wire::{ClusterOverview, TaskPhase};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

/// A label set: `reason="no report"`.
pub type Labels = Vec<(String, String)>;

/// What the queen counts. Clones share the counters.
#[derive(Debug, Clone)]
pub struct QueenMetrics {
    /// Tasks accepted.
    pub submitted: Counter,
    /// Branch assignments sent to nodes.
    pub assignments: Counter,
    /// Seconds from an assignment to its node's report (or its loss).
    pub assignment_seconds: Histogram,
    /// Assignments lost (the node died, went silent or did not report), by reason.
    pub reassigned: Family<Labels, Counter>,
    /// Actions the nodes reported.
    pub actions: Counter,
    /// States the nodes restored, by how (`kept` page or `fresh` replay).
    pub restores: Family<Labels, Counter>,
    /// Reproductions of successes, by verdict (`reproduced`, `rejected`).
    pub reproductions: Family<Labels, Counter>,
    /// Tasks cancelled by an operator.
    pub cancelled: Counter,
}

impl Default for QueenMetrics {
    fn default() -> Self {
        QueenMetrics {
            submitted: Counter::default(),
            assignments: Counter::default(),
            // 0.1 s .. ~410 s: an assignment of 20 actions in Chromium takes seconds to
            // minutes, in simulation milliseconds.
            assignment_seconds: Histogram::new(exponential_buckets(0.1, 2.0, 13)),
            reassigned: Family::default(),
            actions: Counter::default(),
            restores: Family::default(),
            reproductions: Family::default(),
            cancelled: Counter::default(),
        }
    }
}

/// One label.
pub fn label(key: &str, value: &str) -> Labels {
    vec![(key.to_owned(), value.to_owned())]
}

/// The queen's metrics as Prometheus text: its counters, and gauges from `overview`.
pub fn encode_queen(metrics: &QueenMetrics, overview: &ClusterOverview) -> String {
    let mut registry = Registry::with_prefix("forager_queen");
    registry.register("submitted", "Tasks accepted", metrics.submitted.clone());
    registry.register(
        "assignments",
        "Branch assignments sent to nodes",
        metrics.assignments.clone(),
    );
    registry.register(
        "assignment_seconds",
        "Seconds from a branch assignment to its report",
        metrics.assignment_seconds.clone(),
    );
    registry.register(
        "reassigned",
        "Assignments lost and reassigned, by reason",
        metrics.reassigned.clone(),
    );
    registry.register(
        "actions",
        "Actions the nodes reported",
        metrics.actions.clone(),
    );
    registry.register(
        "restores",
        "States the nodes restored, by how (kept page or fresh replay)",
        metrics.restores.clone(),
    );
    registry.register(
        "reproductions",
        "Reproductions of successes, by verdict",
        metrics.reproductions.clone(),
    );
    registry.register(
        "cancelled",
        "Tasks cancelled by an operator",
        metrics.cancelled.clone(),
    );
    let tasks = Family::<Labels, Gauge>::default();
    for phase in TaskPhase::ALL {
        let count = overview.tasks.iter().filter(|t| t.phase == phase).count();
        tasks
            .get_or_create(&label("state", phase.name()))
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }
    registry.register(
        "tasks",
        "Tasks the queen knows, by state (listed ones)",
        tasks,
    );
    let nodes = Gauge::<i64>::default();
    nodes.set(i64::try_from(overview.nodes.len()).unwrap_or(i64::MAX));
    registry.register("nodes", "Connected nodes", nodes);
    let load = Gauge::<i64>::default();
    load.set(overview.nodes.iter().map(|n| i64::from(n.load)).sum());
    registry.register("requests_in_flight", "Requests to nodes in flight", load);
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}

/// Encodes the metrics when asked.
pub type MetricsSource =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = String> + Send>> + Send + Sync>;

/// A metrics endpoint being served. Dropping it stops the server.
#[derive(Debug)]
pub struct MetricsServer {
    /// Where it listens.
    pub address: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `GET /metrics` on `address` (port 0: one the system picks) with what `source`
/// encodes at each request.
pub async fn serve(address: SocketAddr, source: MetricsSource) -> std::io::Result<MetricsServer> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    let address = listener.local_addr()?;
    let router = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let source = source.clone();
            async move {
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    source().await,
                )
            }
        }),
    );
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(%error, "the metrics endpoint stopped");
        }
    });
    Ok(MetricsServer { address, task })
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::wire::{NodeOverview, TaskId, TaskOverview};

    #[test]
    fn counters_and_the_overview_become_prometheus_text() {
        let metrics = QueenMetrics::default();
        metrics.assignments.inc_by(3);
        metrics.assignment_seconds.observe(0.3);
        metrics
            .reassigned
            .get_or_create(&label("reason", "silent"))
            .inc();
        let task = |phase| TaskOverview {
            id: TaskId([1; 16]),
            goal: "g".into(),
            phase,
            failure: None,
            actions: 4,
            budget: 10,
            best_value: 0.5,
            nodes: 1,
            age_secs: 2,
        };
        let overview = ClusterOverview {
            uptime_secs: 5,
            nodes: vec![NodeOverview {
                peer: "p".into(),
                address: None,
                load: 2,
                distrusted_in: 0,
                last_seen_secs: 1,
            }],
            tasks: vec![
                task(TaskPhase::Searching),
                task(TaskPhase::Searching),
                task(TaskPhase::Passed),
            ],
            more_tasks: 0,
        };
        let text = encode_queen(&metrics, &overview);
        for line in [
            "forager_queen_assignments_total 3",
            "forager_queen_reassigned_total{reason=\"silent\"} 1",
            "forager_queen_tasks{state=\"searching\"} 2",
            "forager_queen_tasks{state=\"passed\"} 1",
            "forager_queen_tasks{state=\"failing\"} 0",
            "forager_queen_nodes 1",
            "forager_queen_requests_in_flight 2",
            "forager_queen_assignment_seconds_count 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }
}
