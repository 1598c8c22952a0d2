//! `forager explore`: one task on an embedded cluster (`run.rs`), the result document and the
//! exit status.
//!
//! The task is built and validated (`task_input::build_task`: exit 2 naming the first bad
//! field); a precondition of the goal's plan the task cannot meet is said before a browser
//! starts (`plan::report_for`: exit 1, with `plan.json`); the sentence model is loaded
//! (`embedder::load`); `run::run_task` runs the task and its result is printed. A run that
//! ends `session_expired` with a capsule gets one recovery: with the user key and the login's
//! credentials the session is captured again, the capsule replaced and the task run once more.

use crate::BadInput;
use crate::cli::ExploreArgs;
use crate::run::{RunOptions, RunOutcome, default_out, run_task};
use crate::task_input::{build_task, read_init_script};
use forager_node::browser::BrowserOptions;
use forager_protocol::FailureReason;
use forager_protocol::result::Status;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the command.
pub fn run(args: &ExploreArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    if args.dry_run {
        let built = crate::task_input::build_task_unchecked(&args.task)?;
        let report = crate::plan::report_for(&built.task, None);
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", crate::plan::describe(&report));
        }
        return Ok(if report.ready() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    let built = build_task(&args.task)?;
    let init_script = read_init_script(args.task.init_script.as_deref())?;
    let out = args.out.clone().unwrap_or_else(|| default_out("explore"));
    // A precondition the task cannot meet (a login, with no credentials and no capsule) is
    // said before a browser starts: the search would spend its budget for nothing.
    let planned = crate::plan::report_for(&built.task, None);
    if let Some(unmet) = planned.preconditions.iter().find(|j| j.met == Some(false)) {
        let result = crate::plan::unmet_result(&built.task, &unmet.how);
        std::fs::create_dir_all(&out)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", out.display()))?;
        crate::run::write_json(&out.join("result.json"), &result)?;
        crate::run::write_json(&out.join("plan.json"), &planned)?;
        return Ok(report(&RunOutcome { result, out }, args.json));
    }
    let model = crate::embedder::load(&args.embedder, None)?;
    let options = |out: PathBuf| RunOptions {
        nodes: args.nodes,
        page_cache: args.page_cache,
        init_script: init_script.clone(),
        out,
        progress: std::io::stderr().is_terminal(),
        browser: BrowserOptions::default(),
        keep_all: args.keep_all,
        model: model.clone(),
        memory: if args.no_memory {
            None
        } else {
            args.memory
                .clone()
                .or_else(|| forager_node::model::user_data_dir().map(|d| d.join("memory")))
        },
    };
    let outcome = runtime.block_on(run_task(built.task.clone(), options(out.clone())))?;
    let expired = outcome
        .result
        .error
        .as_ref()
        .is_some_and(|e| e.reason == FailureReason::SessionExpired);
    if !expired {
        return Ok(report(&outcome, args.json));
    }
    // The one recovery: with the credentials and the user key, log in again, replace the
    // capsule, and run once more.
    let Some(mounted) = &built.mounted else {
        return Ok(report(&outcome, args.json));
    };
    let inputs = &built.task.inputs;
    let (Some(user_key), true) = (
        &args.task.user_key,
        crate::capsule::credentials_present(&mounted.capsule, inputs, &built.totp),
    ) else {
        eprintln!(
            "the capsule's session expired; to recover, give --key (your user key) and the \
             login's credentials (--input, --totp), or run `forager capsule refresh`"
        );
        return Ok(report(&outcome, args.json));
    };
    let user = crate::consent::read_user_key(user_key)?;
    let expired_dir = PathBuf::from(format!("{}-expired", out.display()));
    std::fs::rename(&out, &expired_dir)
        .map_err(|e| anyhow::anyhow!("cannot move {} aside: {e}", out.display()))?;
    eprintln!(
        "the capsule's session expired (run in {}); logging in again with the given \
         credentials, then retrying",
        expired_dir.display()
    );
    let validity = mounted
        .capsule
        .value
        .expires_at
        .saturating_sub(mounted.capsule.value.created_at)
        .max(60);
    let fresh = runtime.block_on(crate::capsule::recapture(
        &mounted.capsule,
        inputs,
        &built.totp,
        &mounted.secret,
        &user,
        validity,
    ))?;
    crate::capsule::replace(&mounted.path, &fresh)?;
    eprintln!("recaptured the session into {}", mounted.path.display());
    let session = fresh
        .open(&mounted.secret, forager_node::consent::unix_now(), &[])
        .map_err(|e| anyhow::anyhow!("the fresh capsule does not open: {e}"))?;
    let mut task = built.task.clone();
    crate::capsule::mount_session(&mut task, &fresh, session).map_err(BadInput)?;
    let outcome = runtime.block_on(run_task(task, options(out)))?;
    Ok(report(&outcome, args.json))
}

/// Prints the outcome (the document on stdout with `--json`, a summary on stderr always) and
/// returns the exit status: 0 pass, 1 failing.
pub fn report(outcome: &RunOutcome, json: bool) -> ExitCode {
    let result = &outcome.result;
    if json {
        match serde_json::to_string_pretty(result) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("error: cannot print the result: {e}"),
        }
    }
    match result.status {
        Status::Pass => {
            let judged = match result.judged_by {
                forager_protocol::llm::Judge::Predicates => "",
                forager_protocol::llm::Judge::Model => {
                    " (judged by the model: no success predicate was given)"
                }
            };
            eprintln!("pass in {} steps{judged}:", result.steps.len());
            for step in &result.steps {
                eprintln!("  {}. {}  →  {}", step.index, step.label, step.url);
            }
        }
        Status::Failing => {
            let (reason, detail) = result
                .error
                .as_ref()
                .map(|e| (e.reason.as_str(), e.detail.as_str()))
                .unwrap_or(("failing", ""));
            eprintln!("failing: {reason}: {detail}");
        }
    }
    eprintln!(
        "{} actions, {} nodes, {:.1} s; artifacts in {}",
        result.metrics.actions,
        result.metrics.nodes,
        result.metrics.wall_ms as f64 / 1000.0,
        outcome.out.display()
    );
    let model = &result.metrics.model;
    if !model.is_empty() {
        let cached: u64 = model.tiers.values().map(|t| t.cached).sum();
        eprintln!(
            "model: {} calls ({cached} answered from the cache), {} tokens, cost {:.4}; {} decisions changed, {} left to the rules",
            model.calls(),
            model.tokens(),
            model.cost(),
            model.model_decided,
            model.rules_decided
        );
        if let Some(reason) = &model.fell_back {
            eprintln!("model: stopped asking ({reason}); the rules decided from then on");
        }
    }
    match result.status {
        Status::Pass => ExitCode::SUCCESS,
        Status::Failing => ExitCode::from(1),
    }
}
