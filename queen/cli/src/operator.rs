//! The operator's commands against a running queen: `forager status`, `forager cancel` and
//! `forager result`, and the client connection `forager submit` shares with them.
//!
//! [`QueenClient`] is the client connection. `forager result` fetches a finished task's folder in
//! chunks, writes each file beside and renames it, then checks the folder as `forager verify`
//! does: nothing fetched is trusted.

use crate::BadInput;
use crate::cli::{QueenAddressArgs, ResultArgs, StatusArgs, TaskOnQueenArgs};
use crate::cluster_key::read_cluster_key;
use crate::explore::report;
use crate::run::{RunOutcome, default_out};
use forager_node::net::{Network, NetworkConfig, NodeIdentity, Role};
use forager_protocol::result::{RunResult, Status};
use forager_protocol::wire::{ClusterOverview, Message, RefusalReason, TaskId, TaskState};
use libp2p::{Multiaddr, PeerId};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long a client keeps trying to reach a queen (one restarting is worth waiting for).
const REACH_LIMIT: Duration = Duration::from_secs(60);

/// A client's connection to a queen.
pub struct QueenClient {
    network: Network,
    address: Multiaddr,
    peer: PeerId,
}

impl QueenClient {
    /// Starts a client network with the cluster key (nothing is dialled yet).
    pub fn start(args: &QueenAddressArgs) -> anyhow::Result<QueenClient> {
        let address: Multiaddr = args
            .queen
            .parse()
            .map_err(|e| BadInput(format!("--queen {:?} is not a multiaddr: {e}", args.queen)))?;
        let peer = address
            .iter()
            .find_map(|p| match p {
                libp2p::multiaddr::Protocol::P2p(peer) => Some(peer),
                _ => None,
            })
            .ok_or_else(|| BadInput("--queen must end with /p2p/<the queen's peer id>".into()))?;
        let key = read_cluster_key(&args.cluster_key)?;
        let (network, _events) = Network::start(
            &NodeIdentity::generate(),
            NetworkConfig {
                request_timeout: Duration::from_secs(30),
                ..NetworkConfig::new(Role::Client, key)
            },
        )?;
        Ok(QueenClient {
            network,
            address,
            peer,
        })
    }

    /// Sends a request, dialling (again) while the queen cannot be reached, for at most a
    /// minute.
    pub async fn ask(&self, message: Message) -> anyhow::Result<Message> {
        let started = Instant::now();
        loop {
            let _ = self.network.dial(self.address.clone()).await;
            match self.network.request(self.peer, message.clone()).await {
                Ok(answer) => return Ok(answer),
                Err(error) if started.elapsed() > REACH_LIMIT => {
                    anyhow::bail!("cannot reach the queen at {}: {error}", self.address);
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }

    /// Stops the client's network.
    pub async fn stop(self) {
        self.network.shutdown().await;
    }
}

/// A refusal as the error a command reports: the task unknown or the input bad is bad input
/// (exit 2), anything else an error (exit 1).
fn refused(reason: RefusalReason, detail: String) -> anyhow::Error {
    match reason {
        RefusalReason::InvalidTask | RefusalReason::UnknownTask => BadInput(detail).into(),
        other => anyhow::anyhow!("the queen refused ({other}): {detail}"),
    }
}

fn unexpected(answer: &Message) -> anyhow::Error {
    anyhow::anyhow!("unexpected answer from the queen: {answer:?}")
}

/// Reads a task id as `submit` and `status` print it.
fn parse_task(text: &str) -> Result<TaskId, BadInput> {
    let bad = || BadInput(format!("{text:?} is not a task id (32 hex digits)"));
    let text = text.trim();
    if text.len() != 32 {
        return Err(bad());
    }
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16)
            .map_err(|_| bad())?;
    }
    Ok(TaskId(id))
}

/// `forager status`.
pub fn status(args: &StatusArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let overview = runtime.block_on(async {
        let client = QueenClient::start(&args.queen)?;
        let answer = client.ask(Message::Overview).await;
        client.stop().await;
        match answer? {
            Message::ClusterState(overview) => Ok(*overview),
            Message::Refused { reason, detail } => Err(refused(reason, detail)),
            other => Err(unexpected(&other)),
        }
    })?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&overview_json(&overview))?
        );
    } else {
        print!("{}", overview_text(&overview));
    }
    Ok(ExitCode::SUCCESS)
}

fn overview_json(overview: &ClusterOverview) -> serde_json::Value {
    serde_json::json!({
        "uptime_secs": overview.uptime_secs,
        "nodes": overview.nodes.iter().map(|n| serde_json::json!({
            "peer": n.peer,
            "address": n.address,
            "load": n.load,
            "distrusted_in": n.distrusted_in,
            "last_seen_secs": n.last_seen_secs,
        })).collect::<Vec<_>>(),
        "tasks": overview.tasks.iter().map(|t| serde_json::json!({
            "id": t.id.to_string(),
            "goal": t.goal,
            "state": t.phase.name(),
            "failure": t.failure,
            "actions": t.actions,
            "budget": t.budget,
            "best_value": t.best_value,
            "nodes": t.nodes,
            "age_secs": t.age_secs,
        })).collect::<Vec<_>>(),
        "more_tasks": overview.more_tasks,
    })
}

fn overview_text(overview: &ClusterOverview) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "queen up {} s; {} node(s), {} task(s)",
        overview.uptime_secs,
        overview.nodes.len(),
        overview.tasks.len() + overview.more_tasks as usize
    );
    if !overview.nodes.is_empty() {
        let _ = writeln!(
            out,
            "\nNODE                                                  LOAD  DISTRUSTED  SEEN  ADDRESS"
        );
        for n in &overview.nodes {
            let _ = writeln!(
                out,
                "{:<52}  {:>4}  {:>10}  {:>3}s  {}",
                n.peer,
                n.load,
                n.distrusted_in,
                n.last_seen_secs,
                n.address.as_deref().unwrap_or("-")
            );
        }
    }
    if !overview.tasks.is_empty() {
        let _ = writeln!(
            out,
            "\nTASK                              STATE       ACTIONS     BEST  NODES    AGE  GOAL"
        );
        for t in &overview.tasks {
            let state = match &t.failure {
                Some(reason) => format!("{} ({reason})", t.phase.name()),
                None => t.phase.name().to_owned(),
            };
            let spent = format!("{}/{}", t.actions, t.budget);
            let goal: String = t.goal.chars().take(48).collect();
            let _ = writeln!(
                out,
                "{}  {:<10}  {:>9}  {:>5.2}  {:>5}  {:>4}s  {}",
                t.id, state, spent, t.best_value, t.nodes, t.age_secs, goal
            );
        }
    }
    if overview.more_tasks > 0 {
        let _ = writeln!(out, "(and {} older task(s))", overview.more_tasks);
    }
    out
}

/// `forager cancel`.
pub fn cancel(
    args: &TaskOnQueenArgs,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    let task = parse_task(&args.task)?;
    let state = runtime.block_on(async {
        let client = QueenClient::start(&args.queen)?;
        let answer = client.ask(Message::Cancel(task)).await;
        client.stop().await;
        match answer? {
            Message::State(state) => Ok(*state),
            Message::Refused { reason, detail } => Err(refused(reason, detail)),
            other => Err(unexpected(&other)),
        }
    })?;
    match state {
        TaskState::Done(result) => match result.error {
            Some(error) => eprintln!("task {task}: failing: {}: {}", error.reason, error.detail),
            None => eprintln!("task {task} had already passed"),
        },
        TaskState::Running { .. } => {
            eprintln!("task {task} cancelled; its files are being written")
        }
        TaskState::Unknown => {
            return Err(BadInput(format!("the queen does not know task {task}")).into());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `forager result`.
pub fn result(args: &ResultArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let task = parse_task(&args.target.task)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&format!("result-{task}")));
    let result = runtime.block_on(async {
        let client = QueenClient::start(&args.target.queen)?;
        let fetched = fetch_task(&client, task, &out).await;
        client.stop().await;
        fetched
    })?;
    let outcome = RunOutcome { result, out };
    let code = report(&outcome, args.json);
    if outcome.result.status == Status::Pass {
        // Nothing fetched is trusted: the directory is checked as `forager verify` would.
        match forager_queen::artifacts::verify_run_dir(&outcome.out) {
            Ok(verified) => eprintln!(
                "verified: trajectory signed by queen {}, {} steps, files: {}",
                verified.queen,
                verified.steps,
                verified.files.join(", ")
            ),
            Err(error) => {
                eprintln!("NOT verified: {error}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(code)
}

/// Copies a finished task's folder into `out`, each file whole or not at all (written
/// beside, then renamed); returns its result document.
async fn fetch_task(client: &QueenClient, task: TaskId, out: &Path) -> anyhow::Result<RunResult> {
    let files = match client.ask(Message::ListFiles(task)).await? {
        Message::Files(files) => files,
        Message::Refused {
            reason: RefusalReason::NotFinished,
            detail,
        } => anyhow::bail!("{detail}; `forager status` shows how far it is"),
        Message::Refused { reason, detail } => return Err(refused(reason, detail)),
        other => return Err(unexpected(&other)),
    };
    std::fs::create_dir_all(out)?;
    let total: u64 = files.iter().map(|f| f.bytes).sum();
    eprintln!(
        "fetching {} file(s), {} KiB, into {}",
        files.len(),
        total.div_ceil(1024),
        out.display()
    );
    for file in &files {
        if !forager_protocol::wire::is_task_file_name(&file.name) {
            anyhow::bail!(
                "the queen listed a file name that is not plain: {:?}",
                file.name
            );
        }
        let mut bytes = Vec::new();
        loop {
            let asked = Message::ReadFile {
                task,
                name: file.name.clone(),
                offset: bytes.len() as u64,
            };
            let chunk = match client.ask(asked).await? {
                Message::Chunk(chunk) => chunk,
                Message::Refused { reason, detail } => return Err(refused(reason, detail)),
                other => return Err(unexpected(&other)),
            };
            if chunk.offset != bytes.len() as u64 || chunk.total < chunk.offset {
                anyhow::bail!("the queen sent {} out of order", file.name);
            }
            bytes.extend_from_slice(&chunk.bytes);
            if bytes.len() as u64 >= chunk.total || chunk.bytes.is_empty() {
                break;
            }
        }
        let partial = out.join(format!(".{}.part", file.name));
        std::fs::write(&partial, &bytes)?;
        std::fs::rename(&partial, out.join(&file.name))?;
    }
    let result_path = out.join(forager_queen::journal::RESULT_FILE);
    let text = std::fs::read_to_string(&result_path)
        .map_err(|e| anyhow::anyhow!("the task's folder has no result.json: {e}"))?;
    Ok(serde_json::from_str(&text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_parse_as_printed_and_bad_ones_are_named() {
        let id = TaskId([0xab; 16]);
        assert_eq!(parse_task(&id.to_string()).ok(), Some(id));
        for bad in ["", "abc", "g".repeat(32).as_str(), "a".repeat(33).as_str()] {
            assert!(parse_task(bad).is_err(), "{bad}");
        }
    }
}
