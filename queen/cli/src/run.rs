//! Running one task on an embedded cluster: a queen and N nodes in this process, each node
//! with its own Chromium, over libp2p on 127.0.0.1: the same code path as a real cluster.
//! Shows progress, and gathers the queen's files of the task into the run directory:
//! `result.json`, `events.jsonl` (the queen's journal), `report.html`, and for a passing run
//! `workflow.json`, `trajectory.json` and the step screenshots (`rollouts.json` with
//! `--keep-all`).
//!
//! `run_task` spawns the queen (`forager_queen::cluster::spawn_queen`), then per node a browser
//! pool, a `ChromiumFactory` and `spawn_node` (the nodes share one replica), waits until the
//! queen sees them, submits the task to the queen and follows its status with a progress bar. The
//! queen, the nodes and the browsers are shut down on one path whatever happened
//! (`Embedded::shutdown`). A run directory used again runs the task again.

use crate::BadInput;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumFactory, EnvOptions};
use forager_node::index::Replica;
use forager_node::memory::GoalEmbedder;
use forager_node::model::SentenceModel;
use forager_node::net::{NetworkConfig, NodeIdentity, Role};
use forager_node::worker::WorkerConfig;
use forager_protocol::artifact::TRAJECTORY_FILE;
use forager_protocol::result::{RESULT_VERSION, RunError, RunResult, Status};
use forager_protocol::wire::{RefusalReason, TaskId, TaskState};
use forager_protocol::workflow::WORKFLOW_FILE;
use forager_protocol::{FailureReason, TaskSpec};
use forager_queen::actor::Queen;
use forager_queen::artifacts::{ROLLOUTS_FILE, screenshot_name};
use forager_queen::cluster::{
    NodeHandle, QueenHandle, loopback, random_cluster_key, spawn_node, spawn_queen, wait_for_peers,
};
use forager_queen::config::QueenConfig;
use forager_queen::journal::JOURNAL_FILE;
use forager_queen::journal::RESULT_FILE;
use forager_queen::memory::{MemoryLimits, WorkflowMemory};
use forager_queen::report::REPORT_FILE;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to run a task.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Nodes of the embedded cluster.
    pub nodes: u32,
    /// Live pages kept per browser context.
    pub page_cache: usize,
    /// JavaScript added to every document.
    pub init_script: Option<String>,
    /// The run's directory.
    pub out: PathBuf,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Chromium.
    pub browser: BrowserOptions,
    /// Keep every finished trajectory (`rollouts.json`).
    pub keep_all: bool,
    /// The sentence model the nodes read pages with (`None`: n-grams).
    pub model: Option<Arc<SentenceModel>>,
    /// The folder of the memory the nodes share and keep (`None`: in memory only, gone with
    /// the run); one sub-folder per embedder, whose vectors cannot mix.
    pub memory: Option<PathBuf>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The result document.
    pub result: RunResult,
    /// Where it and the event log were written.
    pub out: PathBuf,
}

/// A directory name for a run: `<prefix>-<unix seconds>`.
pub fn default_out(prefix: &str) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from("forager-runs").join(format!("{prefix}-{secs}"))
}

/// Writes JSON atomically (a temporary file renamed into place).
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    let temporary = path.with_extension("json.partial");
    std::fs::write(&temporary, text)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    Ok(())
}

/// How long an interrupted task's files may take to be written before the run gives up on
/// them (a second Ctrl-C ends the program at once anyway).
const INTERRUPT_WAIT: Duration = Duration::from_secs(10);

/// Ends the task at the queen because the user stopped the run, so that its result keeps
/// what it did (actions, nodes, approvals) and its journal ends with it; the bare
/// [`interrupted`] result when the queen cannot say in time.
async fn interrupt(queen: &Queen, task: &TaskSpec, id: TaskId, started: Instant) -> RunResult {
    eprintln!("stopping: the task's result is being written (a second Ctrl-C stops at once)");
    let ended = async {
        if let Err(refusal) = queen.interrupt(id).await {
            tracing::warn!(%refusal, "the queen could not end the task");
            return None;
        }
        // Done once its files are written.
        loop {
            match queen.status(id).await {
                TaskState::Done(result) => return Some(*result),
                TaskState::Unknown => return None,
                TaskState::Running { .. } => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    };
    match tokio::time::timeout(INTERRUPT_WAIT, ended).await {
        Ok(Some(result)) => result,
        _ => interrupted(task, &id, started),
    }
}

/// The result of a run stopped before the queen could write one.
fn interrupted(task: &TaskSpec, id: &TaskId, started: Instant) -> RunResult {
    RunResult {
        version: RESULT_VERSION,
        status: Status::Failing,
        task_id: id.to_string(),
        goal: task.goal.clone(),
        start_url: task.start_url.clone(),
        seed: task.seed,
        steps: Vec::new(),
        error: Some(RunError {
            reason: FailureReason::Interrupted,
            detail: "interrupted".into(),
        }),
        approval_required: Vec::new(),
        metrics: forager_protocol::result::Metrics {
            wall_ms: started.elapsed().as_millis() as u64,
            ..Default::default()
        },
        network: Default::default(),
        judged_by: Default::default(),
        answer: None,
    }
}

/// The goal embedder the run's nodes and its memory read goals with.
fn embedder_of(options: &RunOptions) -> GoalEmbedder {
    match &options.model {
        Some(model) => GoalEmbedder::Model(model.clone()),
        None => GoalEmbedder::Ngram,
    }
}

/// The workflow memory in the run's memory folder (`workflows/`), if it keeps one.
fn workflow_memory(options: &RunOptions) -> anyhow::Result<Option<WorkflowMemory>> {
    let Some(dir) = &options.memory else {
        return Ok(None);
    };
    let dir = dir.join(forager_queen::memory::WORKFLOWS_DIR);
    let memory = WorkflowMemory::open(&dir, embedder_of(options), MemoryLimits::default())
        .map_err(|e| anyhow::anyhow!("the workflow memory: {e}"))?;
    Ok(Some(memory))
}

/// Runs a validated task on an embedded cluster. Errors are failures to run (no Chromium, no
/// network); a search that finds nothing is a `failing` result, not an error.
pub async fn run_task(task: TaskSpec, options: RunOptions) -> anyhow::Result<RunOutcome> {
    let started = Instant::now();
    std::fs::create_dir_all(&options.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", options.out.display()))?;
    let key = random_cluster_key();
    let queen_data = options.out.join("queen");
    // A run directory used again runs the task again: the queen answers a task it finished
    // before from its folder, so an earlier run's folders go first.
    let earlier = queen_data.join("tasks");
    if earlier.exists() {
        std::fs::remove_dir_all(&earlier)
            .map_err(|e| anyhow::anyhow!("cannot clear {}: {e}", earlier.display()))?;
    }
    let queen = spawn_queen(
        &NodeIdentity::generate(),
        NetworkConfig {
            listen: vec![loopback()],
            ..NetworkConfig::new(Role::Queen, key)
        },
        QueenConfig {
            keep_all: options.keep_all,
            memory: workflow_memory(&options)?,
            ..QueenConfig::new(queen_data.clone())
        },
    )
    .await?;
    let mut cluster = Embedded {
        queen,
        nodes: Vec::new(),
        pools: Vec::new(),
    };
    // Whatever happens from here, the cluster is shut down once, on the one path below.
    let watched = async {
        cluster.launch(&options, key).await?;
        let id = cluster
            .queen
            .queen
            .submit(task.clone())
            .await
            .map_err(|refusal| match refusal.reason {
                RefusalReason::InvalidTask => anyhow::Error::from(BadInput(refusal.detail)),
                _ => anyhow::Error::from(refusal),
            })?;
        let result = watch(&cluster.queen.queen, &task, id, &options, started).await;
        Ok::<_, anyhow::Error>((id, result))
    }
    .await;
    cluster.shutdown().await;
    let (id, result) = watched?;

    // The run directory holds the queen's files of the task as they are (the trajectory
    // names the journal's and the result's digests): events, result, signed trajectory.
    let task_dir = queen_data.join("tasks").join(id.to_string());
    let copy = |from: &str, to: &str| std::fs::copy(task_dir.join(from), options.out.join(to));
    if let Err(error) = copy(JOURNAL_FILE, "events.jsonl") {
        tracing::warn!(%error, "cannot copy the journal to the run directory");
    }
    if copy(RESULT_FILE, RESULT_FILE).is_err() {
        // No result from the queen (an interrupted run): this one is written here.
        write_json(&options.out.join(RESULT_FILE), &result)?;
    }
    // Present only for some runs (a workflow when passing, rollouts with --keep-all).
    for name in [REPORT_FILE, WORKFLOW_FILE, ROLLOUTS_FILE] {
        if task_dir.join(name).exists()
            && let Err(error) = copy(name, name)
        {
            tracing::warn!(%error, "cannot copy {name} to the run directory");
        }
    }
    if result.status == Status::Pass {
        if let Err(error) = copy(TRAJECTORY_FILE, TRAJECTORY_FILE) {
            tracing::warn!(%error, "no signed trajectory to copy to the run directory");
        }
        for step in 1..=result.steps.len() {
            let name = screenshot_name(step);
            if task_dir.join(&name).exists()
                && let Err(error) = copy(&name, &name)
            {
                tracing::warn!(%error, "cannot copy {name} to the run directory");
            }
        }
    }
    Ok(RunOutcome {
        result,
        out: options.out,
    })
}

/// A queen and its nodes in this process, with their browsers.
struct Embedded {
    queen: QueenHandle,
    nodes: Vec<NodeHandle>,
    pools: Vec<BrowserPool>,
}

impl Embedded {
    /// Starts the nodes (each with its own Chromium) and waits until the queen sees them all.
    async fn launch(&mut self, options: &RunOptions, key: [u8; 32]) -> anyhow::Result<()> {
        let mut bootstrap = self.queen.addresses.clone();
        let id = embedder_of(options).id();
        // One memory for the run's nodes (each also hears the other's gossip: stored once).
        let replica = Arc::new(match &options.memory {
            Some(dir) => {
                let dir = dir.join(format!("{}-{}", id.name, &id.digest.to_hex()[..12]));
                let replica = Replica::open(&dir, 100_000, id)
                    .map_err(|e| anyhow::anyhow!("the memory in {}: {e}", dir.display()))?;
                tracing::info!(entries = replica.len(), dir = %dir.display(), "memory");
                replica
            }
            None => Replica::in_memory(10_000, id),
        });
        for _ in 0..options.nodes.max(1) {
            let pool = BrowserPool::new(options.browser.clone());
            self.pools.push(pool.clone());
            // Start Chromium now, so that a missing browser is a clear error at once.
            pool.browser().await?;
            let factory = Arc::new(ChromiumFactory {
                pool,
                options: EnvOptions {
                    cache_capacity: options.page_cache,
                    init_script: options.init_script.clone(),
                    // The user's own machine runs the user's own reset command.
                    allow_reset: true,
                    ..EnvOptions::default()
                },
                model: options.model.clone(),
            });
            let node = spawn_node(
                &NodeIdentity::generate(),
                NetworkConfig {
                    listen: vec![loopback()],
                    bootstrap: bootstrap.clone(),
                    ..NetworkConfig::new(Role::Node, key)
                },
                replica.clone(),
                factory,
                WorkerConfig::default(),
            )
            .await?;
            bootstrap.extend(node.addresses.clone());
            self.nodes.push(node);
        }
        wait_for_peers(
            &self.queen.network,
            Role::Node,
            options.nodes.max(1) as usize,
            Duration::from_secs(30),
        )
        .await?;
        Ok(())
    }

    /// Stops the queen (its artifacts written), the nodes (their workers awaited), the
    /// browsers, and the queen's network, in that order.
    async fn shutdown(self) {
        self.queen.queen.shutdown().await;
        for node in self.nodes {
            node.shutdown(Duration::from_secs(10)).await;
        }
        for pool in &self.pools {
            pool.shutdown().await;
        }
        self.queen.network.shutdown().await;
    }
}

/// Follows a submitted task until it is done or the user stops the run, with a progress bar
/// when asked.
async fn watch(
    queen: &Queen,
    task: &TaskSpec,
    id: TaskId,
    options: &RunOptions,
    started: Instant,
) -> RunResult {
    tracing::info!(task = %id, nodes = options.nodes, "task submitted to the embedded cluster");
    let bar = options.progress.then(|| {
        let bar = ProgressBar::new(u64::from(task.budget.actions));
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} actions · {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    });
    let stop_signal = crate::stop_requested();
    tokio::pin!(stop_signal);
    let result = loop {
        tokio::select! {
            _ = &mut stop_signal => break interrupt(queen, task, id, started).await,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        match queen.status(id).await {
            TaskState::Done(result) => break *result,
            TaskState::Running { actions, nodes } => {
                if let Some(bar) = &bar {
                    bar.set_position(u64::from(actions));
                    bar.set_message(format!("{nodes} nodes busy"));
                }
            }
            TaskState::Unknown => break interrupted(task, &id, started),
        }
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    result
}
