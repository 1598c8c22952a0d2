//! `forager explore`: one task, the embedded browser, the result document and exit status.

use crate::cli::ExploreArgs;
use crate::run::{RunOptions, RunOutcome, default_out, run_task};
use crate::task_input::{build_task, read_init_script};
use forager_node::browser::BrowserOptions;
use forager_protocol::result::Status;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Runs the command.
pub fn run(args: &ExploreArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let task = build_task(&args.task)?;
    let init_script = read_init_script(args.task.init_script.as_deref())?;
    let out = args.out.clone().unwrap_or_else(|| default_out("explore"));
    let outcome = runtime.block_on(run_task(
        task,
        RunOptions {
            nodes: args.nodes,
            page_cache: args.page_cache,
            init_script,
            out,
            progress: std::io::stderr().is_terminal(),
            browser: BrowserOptions::default(),
            keep_all: args.keep_all,
            model: crate::embedder::load(&args.embedder, None)?,
            memory: if args.no_memory {
                None
            } else {
                args.memory
                    .clone()
                    .or_else(|| forager_node::model::user_data_dir().map(|d| d.join("memory")))
            },
        },
    ))?;
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
            eprintln!("pass in {} steps:", result.steps.len());
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
    match result.status {
        Status::Pass => ExitCode::SUCCESS,
        Status::Failing => ExitCode::from(1),
    }
}
