//! `forager replay WORKFLOW`: a compiled workflow run in headless Chromium without search.
//!
//! Everything the user can get wrong is checked before a browser starts (the file, its
//! version and fields, every parameter given and nothing else); then the node's replayer runs
//! the steps, and the result document (the same as `explore`'s), the screenshots and
//! `report.html` go to the run directory. Exit status: 0 pass, 1 failing, 2 bad input.

use crate::BadInput;
use crate::cli::ReplayArgs;
use crate::explore::report;
use crate::inputs::parse_inputs;
use crate::run::{RunOutcome, default_out, write_json};
use crate::task_input::read_init_script;
use forager_node::browser::{
    BrowserOptions, BrowserPool, ReplayFailure, ReplayOptions, ReplayRun, replay_workflow,
};
use forager_protocol::FailureReason;
use forager_protocol::result::{Metrics, RESULT_VERSION, ResultStep, RunError, RunResult, Status};
use forager_protocol::workflow::Workflow;
use forager_queen::artifacts::screenshot_name;
use forager_queen::journal::RESULT_FILE;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The file name of the screenshot taken where a replay failed.
pub const FAILURE_SCREENSHOT: &str = "failure.jpg";

/// Reads and checks a workflow and the inputs for it: every error here is the user's (exit 2).
pub fn load(
    path: &Path,
    inputs: &[String],
) -> Result<(Workflow, BTreeMap<String, String>), BadInput> {
    let bytes = std::fs::read(path)
        .map_err(|e| BadInput(format!("cannot read workflow {}: {e}", path.display())))?;
    let workflow = Workflow::from_json(&bytes)
        .map_err(|e| BadInput(format!("workflow {}: {e}", path.display())))?;
    let inputs = parse_inputs(inputs)?;
    workflow
        .check_inputs(&inputs)
        .map_err(|e| BadInput(format!("workflow {}: {e}", path.display())))?;
    Ok((workflow, inputs))
}

/// Runs the command.
pub fn run(args: &ReplayArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let (workflow, inputs) = load(&args.workflow, &args.inputs)?;
    let origins: Vec<String> = url::Url::parse(&workflow.start_url)
        .map(|u| u.origin().ascii_serialization())
        .into_iter()
        .chain(workflow.allowed_origins.iter().cloned())
        .collect();
    let consents =
        crate::consent::consents_for_replay(&workflow.task_id, &origins, &args.consents)?;
    if let Some(step) = workflow
        .unconsented_steps(&consents, |a| forager_node::embed::action_key(&a.label()))
        .first()
    {
        return Err(BadInput(format!(
            "step {} ({}, risk class {}) is above the workflow's ceiling ({}) and no --consent \
             covers it: approve it (`forager approve`) and give the consent",
            step.index,
            step.label,
            step.risk.level(),
            workflow.risk_ceiling.level()
        ))
        .into());
    }
    // The capsule is opened (and everything about it checked) before a browser starts.
    let session = match &args.capsule {
        Some(path) => {
            // The policy bounds what the replay executes: its riskiest step.
            let mut task = workflow.task(inputs.clone());
            task.risk_ceiling = workflow
                .steps
                .iter()
                .map(|s| s.risk)
                .max()
                .unwrap_or(forager_protocol::RiskClass::ReadOnly);
            crate::capsule::mount(&mut task, path, &args.capsule_secret)?;
            task.session
        }
        None => None,
    };
    let init_script = read_init_script(args.init_script.as_deref())?;
    let out = args.out.clone().unwrap_or_else(|| default_out("replay"));
    std::fs::create_dir_all(&out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", out.display()))?;
    let options = ReplayOptions {
        init_script,
        screenshots: args.screenshots,
        session,
        ..ReplayOptions::default()
    };
    let limit = Duration::from_secs(args.timeout);
    let started = Instant::now();
    let replayed = runtime.block_on(async {
        let pool = BrowserPool::new(BrowserOptions::default());
        let replayed = tokio::select! {
            run = tokio::time::timeout(limit, replay_workflow(&pool, &workflow, &inputs, &options)) => run.ok(),
            _ = crate::stop_requested() => None,
        };
        pool.shutdown().await;
        replayed
    });
    let wall_ms = started.elapsed().as_millis() as u64;
    let result = match &replayed {
        Some(run) => result_of(&workflow, run, wall_ms),
        None => {
            let mut result = result_of(&workflow, &ReplayRun::default(), wall_ms);
            result.error = Some(RunError {
                reason: FailureReason::Timeout,
                detail: format!("the replay did not finish within {} s", args.timeout),
            });
            result
        }
    };
    let run = replayed.unwrap_or_default();
    let mut screenshots = Vec::with_capacity(run.steps.len());
    for step in &run.steps {
        if let Some(bytes) = &step.screenshot {
            let name = screenshot_name(step.index as usize);
            std::fs::write(out.join(&name), bytes)
                .map_err(|e| anyhow::anyhow!("writing {name}: {e}"))?;
        }
        screenshots.push(step.screenshot.clone());
    }
    if let Some(bytes) = &run.failure_screenshot {
        std::fs::write(out.join(FAILURE_SCREENSHOT), bytes)
            .map_err(|e| anyhow::anyhow!("writing {FAILURE_SCREENSHOT}: {e}"))?;
    }
    write_json(&out.join(RESULT_FILE), &result)?;
    let html = forager_queen::report::render_replay(
        &workflow,
        &result,
        &screenshots,
        run.failure_screenshot.as_deref(),
        run.failure.as_ref().and_then(ReplayFailure::step),
    );
    forager_queen::report::write_atomically(&out, &html)?;
    for step in &result.steps {
        if let Some(locator) = &step.healed_by {
            eprintln!("step {} healed by {locator}", step.index);
        }
    }
    Ok(report(&RunOutcome { result, out }, args.json))
}

/// The result document of a replay.
fn result_of(workflow: &Workflow, run: &ReplayRun, wall_ms: u64) -> RunResult {
    let steps: Vec<ResultStep> = run
        .steps
        .iter()
        .zip(&workflow.steps)
        .map(|(done, planned)| ResultStep {
            index: done.index,
            label: planned.label.clone(),
            action: planned.action.clone(),
            url: done.url.clone(),
            title: done.title.clone(),
            fingerprint: done.fingerprint,
            risk: planned.risk,
            reward: 0.0,
            cost_ms: done.cost_ms,
            verdict: done.verdict.clone(),
            healed_locator: done.heal.as_ref().map(|h| h.index),
            healed_by: done.heal.as_ref().map(|h| h.locator.clone()),
            // A replay executes every step itself.
            verification: Default::default(),
            why: None,
        })
        .collect();
    let passed = run.failure.is_none() && steps.len() == workflow.steps.len();
    let mut steps = steps;
    if passed && let Some(last) = steps.last_mut() {
        last.reward = 1.0;
    }
    let browser_ms = steps.iter().map(|s| s.cost_ms).sum();
    RunResult {
        version: RESULT_VERSION,
        status: if passed {
            Status::Pass
        } else {
            Status::Failing
        },
        task_id: workflow.task_id.clone(),
        goal: workflow.goal.clone(),
        start_url: workflow.start_url.clone(),
        seed: workflow.seed,
        error: run.failure.as_ref().map(|f| RunError {
            reason: f.reason(),
            detail: f.to_string(),
        }),
        approval_required: Vec::new(),
        metrics: Metrics {
            actions: steps.len() as u32,
            browser_ms,
            wall_ms,
            workers: 1,
            ..Metrics::default()
        },
        network: run.network.summary(),
        judged_by: Default::default(),
        answer: None,
        steps,
    }
}
