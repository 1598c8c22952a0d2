//! `forager plan` (and `forager explore --dry-run`): the goal read as a plan before any search
//! (`forager_protocol::plan`): its act, object, conditions and preconditions, whether the task
//! brings what the preconditions need, what the memory holds for this kind of task, and, with
//! `--read-start`, what the start page shows (one look in Chromium, no action taken).
//!
//! Exit status: 0 every precondition can be met; 1 one cannot (said before any search spends
//! a budget); 2 bad input.

use crate::cli::PlanArgs;
use crate::run::write_json;
use forager_node::Environment;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions};
use forager_protocol::TaskSpec;
use forager_protocol::plan::{self, LoginMeans, Plan, PlanReport, StartPage};
use std::process::ExitCode;
use std::sync::Arc;

/// What a task brings toward a login: credentials among its inputs, a mounted capsule.
pub fn login_means(task: &TaskSpec) -> LoginMeans {
    // A goal may carry its own ("the password "xyz"").
    let goal = task.goal.to_lowercase();
    let quoted_password = ["password \"", "password: \"", "password '"]
        .iter()
        .any(|p| goal.contains(p));
    LoginMeans {
        credentials: quoted_password
            || task
                .inputs
                .keys()
                .any(|name| forager_protocol::credential::Credential::of(name).is_some()),
        capsule: task.session.is_some() || task.capsule.is_some(),
    }
}

/// The plan of a task and its judged preconditions, without reading any page.
pub fn report_for(task: &TaskSpec, start: Option<StartPage>) -> PlanReport {
    let plan = Plan::of(&task.goal);
    let preconditions = plan::judge(&plan, login_means(task), start.as_ref());
    PlanReport {
        version: plan::PLAN_REPORT_VERSION,
        goal: task.goal.clone(),
        start_url: task.start_url.clone(),
        plan,
        preconditions,
        remembered: None,
        start_page: start,
    }
}

/// Runs the command.
pub fn run(args: &PlanArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let built = crate::task_input::build_task_unchecked(&args.task)?;
    let task = built.task;
    let start = if args.read_start {
        Some(runtime.block_on(read_start(&task))?)
    } else {
        None
    };
    let mut report = report_for(&task, start);
    if !args.no_memory {
        let dir = args
            .memory
            .clone()
            .or_else(|| forager_node::model::user_data_dir().map(|d| d.join("memory")));
        if let Some(dir) = dir.filter(|d| d.exists())
            && let Ok(memory) = forager_queen::memory::WorkflowMemory::open(
                &dir.join(forager_queen::memory::WORKFLOWS_DIR),
                forager_node::memory::GoalEmbedder::Ngram,
                forager_queen::memory::MemoryLimits::default(),
            )
        {
            report.remembered = memory.recall(&task).map(|r| {
                format!(
                    "workflow {} ({}, {} steps)",
                    &r.id.to_hex()[..12],
                    r.matched.as_str(),
                    r.steps.len()
                )
            });
        }
    }
    if let Some(out) = &args.out {
        write_json(out, &report)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", describe(&report));
    }
    Ok(if report.ready() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The result of a run that ends before its search: a precondition of the plan cannot be met.
pub fn unmet_result(task: &TaskSpec, how: &str) -> forager_protocol::result::RunResult {
    use forager_protocol::result::{RESULT_VERSION, RunError, RunResult, Status};
    RunResult {
        version: RESULT_VERSION,
        status: Status::Failing,
        task_id: forager_protocol::wire::TaskId::of(task)
            .map(|id| id.to_string())
            .unwrap_or_default(),
        goal: task.goal.clone(),
        start_url: task.start_url.clone(),
        seed: task.seed,
        steps: Vec::new(),
        error: Some(RunError {
            reason: forager_protocol::FailureReason::PreconditionUnmet,
            detail: format!("{how}; nothing was searched"),
        }),
        approval_required: Vec::new(),
        metrics: Default::default(),
        network: Default::default(),
        judged_by: Default::default(),
        answer: None,
    }
}

/// The report in words, as `forager plan` prints it.
pub fn describe(report: &PlanReport) -> String {
    let plan = &report.plan;
    let mut out = String::new();
    let object = plan
        .object
        .as_deref()
        .map_or(String::new(), |o| format!(" {o}"));
    out.push_str(&format!("plan: {}{object}\n", plan.act.name()));
    if let Some(record) = &plan.record {
        out.push_str(&format!("  record: {}\n", record.describe()));
    }
    if plan.conditions.is_empty() {
        out.push_str("  conditions: none stated\n");
    }
    for (i, condition) in plan.conditions.iter().enumerate() {
        let also = if condition.alternatives.is_empty() {
            String::new()
        } else {
            format!(" (or {})", condition.alternatives.join(", "))
        };
        out.push_str(&format!(
            "  condition {}: {}{also}   ← \"{}\"\n",
            i + 1,
            condition.describe(),
            condition.phrase
        ));
    }
    if let Some(order) = &plan.order {
        let way = match order.descending {
            Some(true) => ", largest first",
            Some(false) => ", smallest first",
            None => "",
        };
        out.push_str(&format!("  order: by {}{way}\n", order.field.join(" ")));
    }
    for judged in &report.preconditions {
        let mark = match judged.met {
            Some(true) => "met",
            Some(false) => "UNMET",
            None => "unknown",
        };
        out.push_str(&format!("  precondition ({mark}): {}\n", judged.how));
    }
    if let Some(page) = &report.start_page {
        out.push_str(&format!(
            "  start page: {} \"{}\" (status {}), {} controls{}\n",
            page.url,
            page.title,
            page.http_status.map_or("?".into(), |s| s.to_string()),
            page.controls,
            if page.asks_to_log_in {
                ", asks to log in"
            } else {
                ""
            }
        ));
    }
    match &report.remembered {
        Some(template) => out.push_str(&format!(
            "  memory: a workflow for this template (\"{template}\")\n"
        )),
        None => out.push_str("  memory: no workflow for this kind of task\n"),
    }
    out.push_str(if report.ready() {
        "ready: every precondition can be met\n"
    } else {
        "not ready: a precondition cannot be met (a search would spend its budget for nothing)\n"
    });
    out
}

/// Opens the start page once in Chromium (the task's guards and capsule, no action) and
/// says what it shows.
async fn read_start(task: &TaskSpec) -> anyhow::Result<StartPage> {
    let pool = BrowserPool::new(BrowserOptions::default());
    let mut env = ChromiumEnv::new(pool.clone(), Arc::new(task.clone()), EnvOptions::default())
        .map_err(|e| anyhow::anyhow!("the start page cannot be opened: {e}"))?;
    let opened = env.restore(&[]).await;
    let page = match (opened, env.observation()) {
        (Ok(_), Some(observation)) => Ok(StartPage {
            url: observation.url.clone(),
            title: observation.title.clone(),
            http_status: observation.http_status,
            asks_to_log_in: observation
                .elements
                .iter()
                .any(|e| e.input_type.eq_ignore_ascii_case("password") && !e.disabled),
            controls: observation.elements.len(),
        }),
        (Err(e), _) => Err(anyhow::anyhow!("the start page did not load: {e}")),
        (Ok(_), None) => Err(anyhow::anyhow!("the start page showed nothing to read")),
    };
    drop(env);
    pool.shutdown().await;
    page
}
