//! Running one task in the node's own Chromium: the search, its progress bar, its event log,
//! and the result document written to the run's directory.

use forager_node::EnvError;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions, NetworkLog};
use forager_node::search::{
    self, Finish, NodeStatus, Search, SearchConfig, SearchError, SearchEvent, SearchObserver,
    SearchReport,
};
use forager_protocol::result::{
    ApprovalNeeded, Metrics, NetworkSummary, RESULT_VERSION, ResultStep, RunError, RunResult,
    Status,
};
use forager_protocol::wire::TaskId;
use forager_protocol::{Action, FailureReason, Fingerprint, TaskSpec};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How to run a task.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Browser contexts searching at once.
    pub workers: u32,
    /// Live pages kept per worker.
    pub page_cache: usize,
    /// JavaScript added to every document.
    pub init_script: Option<String>,
    /// The run's directory.
    pub out: PathBuf,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Chromium.
    pub browser: BrowserOptions,
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

/// Writes the event log (JSONL, schema in `docs/events.md`) and drives the progress bar.
struct RunObserver {
    events: std::io::BufWriter<std::fs::File>,
    started: Instant,
    bar: Option<ProgressBar>,
    best_value: f64,
    interrupted: Arc<AtomicBool>,
    write_error: Option<std::io::Error>,
}

impl RunObserver {
    fn write(&mut self, value: serde_json::Value) {
        if self.write_error.is_some() {
            return;
        }
        if let Err(e) = writeln!(self.events, "{value}") {
            self.write_error = Some(e);
        }
    }

    fn t_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

impl SearchObserver<Action> for RunObserver {
    fn on_event(&mut self, tree: &Search<Action>, event: &SearchEvent) {
        match event {
            SearchEvent::NodeAdded(id) | SearchEvent::NodePruned(id) => {
                let Some(node) = tree.nodes().nth(*id as usize) else {
                    return;
                };
                let (status, reason) = match node.status {
                    NodeStatus::Open => ("open", None),
                    NodeStatus::Success => ("success", None),
                    NodeStatus::Exhausted => ("exhausted", None),
                    NodeStatus::Pruned(reason) => ("pruned", Some(reason.to_string())),
                };
                self.best_value = self.best_value.max(node.mean_value);
                let kind = match event {
                    SearchEvent::NodePruned(_) => "prune",
                    _ => "node",
                };
                let line = json!({
                    "t_ms": self.t_ms(),
                    "event": kind,
                    "node": node.id,
                    "parent": node.parent,
                    "depth": node.depth,
                    "action": node.action.map(Action::label),
                    "risk": node.risk.level(),
                    "fingerprint": node.fingerprint.map(|f| f.to_hex()),
                    "status": status,
                    "reason": reason,
                    "value": node.mean_value,
                });
                self.write(line);
                if let Some(bar) = &self.bar {
                    let metrics = tree.metrics();
                    bar.set_position(u64::from(metrics.actions));
                    bar.set_message(format!(
                        "best value {:.2} · {} nodes",
                        self.best_value, metrics.nodes
                    ));
                }
            }
            SearchEvent::Crashed { worker, error } => {
                let line = json!({"t_ms": self.t_ms(), "event": "crash", "worker": worker, "error": error});
                self.write(line);
            }
            SearchEvent::Finished(finish) => {
                let outcome = match finish {
                    Finish::Solved => "pass".to_owned(),
                    Finish::Failed(reason) => reason.as_str().to_owned(),
                };
                let line = json!({"t_ms": self.t_ms(), "event": "finish", "outcome": outcome});
                self.write(line);
            }
        }
    }

    fn should_stop(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }
}

/// Runs a validated task. Errors are the run's own failures to run (no Chromium, unwritable
/// directory); a search that finds nothing is a `failing` result, not an error.
pub async fn run_task(task: TaskSpec, options: RunOptions) -> anyhow::Result<RunOutcome> {
    let started = Instant::now();
    std::fs::create_dir_all(&options.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", options.out.display()))?;
    let events_path = options.out.join("events.jsonl");
    let events = std::fs::File::create(&events_path)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", events_path.display()))?;
    let task_id = TaskId::of(&task)
        .map(|id| id.0.iter().map(|b| format!("{b:02x}")).collect::<String>())
        .unwrap_or_default();
    let task = Arc::new(task);

    let pool = BrowserPool::new(options.browser.clone());
    if let Err(error) = pool.browser().await {
        pool.shutdown().await;
        anyhow::bail!("{error}");
    }

    let bar = options.progress.then(|| {
        let bar = ProgressBar::new(u64::from(task.budget.actions));
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} actions · {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    });
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::Relaxed);
        }
    });
    let mut observer = RunObserver {
        events: std::io::BufWriter::new(events),
        started,
        bar,
        best_value: 0.0,
        interrupted,
        write_error: None,
    };
    let start_line = json!({
        "t_ms": 0,
        "event": "start",
        "task_id": task_id,
        "goal": task.goal,
        "start_url": task.start_url,
        "seed": task.seed,
        "workers": options.workers,
    });
    observer.write(start_line);

    let env_options = EnvOptions {
        cache_capacity: options.page_cache,
        init_script: options.init_script.clone(),
        ..EnvOptions::default()
    };
    let mut workers = Vec::new();
    for _ in 0..options.workers.max(1) {
        workers.push(
            ChromiumEnv::new(pool.clone(), task.clone(), env_options.clone())
                .map_err(|e| anyhow::anyhow!("{e}"))?,
        );
    }
    let config = SearchConfig::for_task(&task);
    let span = tracing::info_span!("task", id = %task_id, seed = task.seed);
    let outcome = tracing::Instrument::instrument(
        search::run(&mut workers, config, None, &mut observer),
        span,
    )
    .await;
    if let Some(bar) = &observer.bar {
        bar.finish_and_clear();
    }
    ctrl_c.abort();

    let mut result = match outcome {
        Ok((report, tree)) => build_result(&task, &task_id, &report, &tree, &workers),
        Err(SearchError::Start(error)) => start_failure(&task, &task_id, &error),
        Err(other) => anyhow::bail!("{other}"),
    };
    let mut network = NetworkLog::default();
    for env in &workers {
        let log = env.network();
        network.allowed += log.allowed;
        network.blocked += log.blocked;
        network.allowed_origins.extend(log.allowed_origins);
        for url in log.blocked_urls {
            if network.blocked_urls.len() < 100 {
                network.blocked_urls.push(url);
            }
        }
        let stats = env.stats();
        result.metrics.cache_hits += stats.cache_hits;
        result.metrics.cache_misses += stats.cache_misses;
    }
    result.network = NetworkSummary {
        allowed_requests: network.allowed,
        allowed_origins: network.allowed_origins.into_iter().collect(),
        blocked_requests: network.blocked,
        blocked_urls: network.blocked_urls,
    };
    result.metrics.workers = options.workers.max(1);
    result.metrics.wall_ms = started.elapsed().as_millis() as u64;
    for env in &mut workers {
        env.close().await;
    }
    pool.shutdown().await;

    if let Some(error) = observer.write_error.take() {
        anyhow::bail!("writing {}: {error}", events_path.display());
    }
    observer
        .events
        .flush()
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", events_path.display()))?;
    write_json(&options.out.join("result.json"), &result)?;
    Ok(RunOutcome {
        result,
        out: options.out,
    })
}

/// Writes JSON atomically (a temporary file renamed into place): a crash never leaves half a
/// document.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    let temporary = path.with_extension("json.partial");
    std::fs::write(&temporary, text)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    Ok(())
}

fn empty_result(task: &TaskSpec, task_id: &str) -> RunResult {
    RunResult {
        version: RESULT_VERSION,
        status: Status::Failing,
        task_id: task_id.to_owned(),
        goal: task.goal.clone(),
        start_url: task.start_url.clone(),
        seed: task.seed,
        steps: Vec::new(),
        error: None,
        approval_required: Vec::new(),
        metrics: Metrics::default(),
        network: NetworkSummary::default(),
    }
}

fn start_failure(task: &TaskSpec, task_id: &str, error: &EnvError) -> RunResult {
    let reason = match error {
        EnvError::Crashed(_) => FailureReason::BrowserCrashed,
        _ => FailureReason::NavigationFailed,
    };
    RunResult {
        error: Some(RunError {
            reason,
            detail: format!("the start page could not be used: {error}"),
        }),
        ..empty_result(task, task_id)
    }
}

fn build_result(
    task: &TaskSpec,
    task_id: &str,
    report: &SearchReport<Action>,
    tree: &Search<Action>,
    envs: &[ChromiumEnv],
) -> RunResult {
    let mut result = empty_result(task, task_id);
    let root = tree.nodes().next().and_then(|n| n.fingerprint);
    let mut before: Option<Fingerprint> = root;
    for (i, step) in report.best.iter().flatten().enumerate() {
        let page = envs.iter().find_map(|e| e.page(&step.fingerprint));
        let verdict = before.and_then(|b| {
            envs.iter()
                .find_map(|e| e.verdict(&b, &step.fingerprint).cloned())
        });
        let healed = before.and_then(|b| {
            envs.iter()
                .find_map(|e| e.healed_locator(&b, &step.fingerprint))
        });
        result.steps.push(ResultStep {
            index: i as u32 + 1,
            label: step.action.label(),
            action: step.action.clone(),
            url: page.map(|p| p.url.clone()).unwrap_or_default(),
            title: page.map(|p| p.title.clone()).unwrap_or_default(),
            fingerprint: step.fingerprint,
            risk: step.risk,
            reward: step.reward,
            cost_ms: step.cost.browser_ms,
            verdict,
            healed_locator: healed.map(|h| h as u32),
        });
        before = Some(step.fingerprint);
    }
    result.approval_required = report
        .approvals
        .iter()
        .map(|a| ApprovalNeeded {
            prefix: a.prefix.iter().map(Action::label).collect(),
            label: a.action.label(),
            risk: a.class,
        })
        .collect();
    let m = &report.metrics;
    result.metrics = Metrics {
        actions: m.actions,
        replayed_actions: m.replayed_actions,
        browser_ms: m.cost.browser_ms,
        tokens: m.cost.tokens,
        nodes: m.nodes,
        iterations: m.iterations,
        pruned: report
            .prunes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect(),
        ..Metrics::default()
    };
    match report.finish {
        Finish::Solved => result.status = Status::Pass,
        Finish::Failed(reason) => {
            let detail = match reason {
                FailureReason::BudgetExhausted => format!(
                    "the search spent its {} actions without reaching the goal",
                    task.budget.actions
                ),
                FailureReason::ApprovalRequired => match result.approval_required.first() {
                    Some(a) => format!(
                        "the way forward needs a human's approval: {} (risk class {})",
                        a.label, a.risk
                    ),
                    None => "the way forward needs a human's approval".into(),
                },
                FailureReason::SearchExhausted => {
                    "every reachable state was explored without reaching the goal".into()
                }
                FailureReason::Timeout => format!(
                    "the wall-clock limit of {} s passed",
                    task.budget.wall_time_secs
                ),
                FailureReason::NoProgress => "no action changed the page".into(),
                FailureReason::Nondeterministic => {
                    "replays kept reaching different states than recorded".into()
                }
                FailureReason::BrowserCrashed => "the browser crashed too often".into(),
                FailureReason::Interrupted => "interrupted".into(),
                other => other.as_str().replace('_', " "),
            };
            result.error = Some(RunError { reason, detail });
        }
    }
    result
}
