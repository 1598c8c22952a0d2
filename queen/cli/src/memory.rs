//! `forager memory`: list, forget, export and import the workflow memory
//! (`forager_queen::memory`), the folder `explore` keeps its verified passes in.

use crate::BadInput;
use crate::cli::{MemoryArgs, MemoryCommand};
use forager_node::memory::GoalEmbedder;
use forager_queen::memory::{MemoryError, MemoryLimits, WORKFLOWS_DIR, WorkflowMemory};
use std::path::PathBuf;
use std::process::ExitCode;

/// The memory folder `args` names, or the per-user default.
pub fn memory_dir(dir: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    dir.cloned()
        .or_else(|| forager_node::model::user_data_dir().map(|d| d.join("memory")))
        .ok_or_else(|| {
            BadInput("no per-user data folder (set HOME or XDG_DATA_HOME), and no --memory".into())
                .into()
        })
}

fn open(args: &MemoryArgs) -> anyhow::Result<WorkflowMemory> {
    let embedder = match crate::embedder::load(&args.embedder, None)? {
        Some(model) => GoalEmbedder::Model(model),
        None => GoalEmbedder::Ngram,
    };
    let dir = memory_dir(args.memory.as_ref())?.join(WORKFLOWS_DIR);
    Ok(WorkflowMemory::open(
        &dir,
        embedder,
        MemoryLimits::default(),
    )?)
}

/// Runs a `forager memory` command.
pub fn run(command: MemoryCommand) -> anyhow::Result<ExitCode> {
    match command {
        MemoryCommand::List { memory, json } => list(&open(&memory)?, json),
        MemoryCommand::Forget { id, memory } => {
            let forgotten = open(&memory)?.forget(&id).map_err(bad_input)?;
            println!("forgot {forgotten} workflow(s)");
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Export { out, key, memory } => {
            let key = crate::consent::read_user_key(&key)?;
            let count = open(&memory)?.export(&key, &out)?;
            println!("exported {count} workflow(s) to {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Import { file, memory } => {
            if !file.is_file() {
                return Err(BadInput(format!("no bundle at {}", file.display())).into());
            }
            let (signer, count) = open(&memory)?.import(&file).map_err(bad_input)?;
            println!("imported {count} workflow(s) signed by {signer}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A refusal the user can act on is bad input (exit 2); a disk failure is not.
fn bad_input(error: MemoryError) -> anyhow::Error {
    match error {
        MemoryError::Io { .. } => error.into(),
        other => BadInput(other.to_string()).into(),
    }
}

fn list(memory: &WorkflowMemory, json: bool) -> anyhow::Result<ExitCode> {
    let records = memory.records();
    if json {
        let rows: Vec<serde_json::Value> = records
            .iter()
            .map(|(id, r)| {
                serde_json::json!({
                    "id": id.to_hex(),
                    "site": r.workflow.site,
                    "template": r.workflow.template.text,
                    "parameters": r.workflow.template.parameters,
                    "steps": r.workflow.steps.len(),
                    "source": r.source,
                    "outcomes": r.outcomes,
                    "retired": r.retired(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if records.is_empty() {
        println!("no remembered workflows in {}", memory.dir().display());
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<12}  {:>5}  {:>6}  {:>7}  {:<40}  goal template",
        "id", "steps", "worked", "failed", "site"
    );
    for (id, r) in &records {
        let failed = if r.retired() {
            format!("{} ret", r.outcomes.failures_in_a_row)
        } else {
            r.outcomes.failures_in_a_row.to_string()
        };
        println!(
            "{:<12}  {:>5}  {:>6}  {:>7}  {:<40}  {}",
            &id.to_hex()[..12],
            r.workflow.steps.len(),
            r.outcomes.worked,
            failed,
            r.workflow.site,
            r.workflow.template.text
        );
    }
    Ok(ExitCode::SUCCESS)
}
