//! `forager`: the command-line program. Parses arguments, sets up logging, runs a command and
//! maps its outcome to an exit status (0 success, 1 failing, 2 bad input). Errors are
//! `anyhow` here, at the edge, and typed everywhere below. Each command gets one tokio runtime
//! with `--runtime-threads` workers (default: the machine's cores); the commands that own
//! browsers or serve catch Ctrl-C and SIGTERM from the start, and whatever is left of a browser
//! is reaped before the process exits.
//!
//! # Layout
//!
//! - [`cli`]: the command line: every command and flag, with what it does and its default.
//! - [`explore`]: `forager explore`: one task on the embedded cluster, its result and exit status.
//! - [`plan`]: `forager plan` and `explore --dry-run`: the goal read as a plan, its
//!   preconditions judged before any search.
//! - [`run`]: running one task on an embedded cluster (a queen and N nodes in this process) and
//!   gathering its files into the run directory.
//! - [`demo`], [`demo_site`]: `forager demo` and the bundled library site it explores.
//! - [`simulate`]: `forager simulate`: strategy comparisons and weight sweeps on synthetic sites.
//! - [`replay`]: `forager replay`: a compiled workflow run in Chromium without search.
//! - [`verify`]: `forager verify`: a run directory's signed trajectory checked.
//! - [`peers`]: `forager node`, `queen`, `submit` and `key`: the cluster over several processes.
//! - [`operator`]: `forager status`, `cancel` and `result` against a running queen, and the
//!   client connection to a queen they share with `submit`.
//! - [`cluster_key`]: the cluster key's file, read or created.
//! - [`capsule`]: `forager capsule`: a login captured, sealed and signed; a capsule mounted
//!   into a task.
//! - [`consent`]: the user's side of consent: `key --user`, `approve`, `revoke`, `--consent`.
//! - [`memory`]: `forager memory`: the workflow memory listed, forgotten, exported, imported.
//! - [`task_input`]: a task built from command-line flags and task files (TOML or JSON).
//! - [`inputs`]: the named values a task types (`--input`, `--totp`), read into maps.
//! - [`embedder`]: the sentence model a command reads pages with, or none.

mod capsule;
mod cli;
mod cluster_key;
mod consent;
mod demo;
mod demo_site;
mod embedder;
mod explore;
mod inputs;
mod memory;
mod operator;
mod peers;
mod plan;
mod replay;
mod run;
mod simulate;
mod task_input;
mod verify;

use clap::Parser;
use cli::{CapsuleCommand, Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.log_format);
    // Chromium's helpers outlive its main process by a moment; adopted, they can be waited for.
    forager_node::browser::adopt_orphans();
    let threads = cli.runtime_threads.map_or_else(
        || std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get),
        std::num::NonZeroUsize::get,
    );
    let runtime = || runtime(threads);
    // Commands that own browsers or serve: Ctrl-C and SIGTERM are caught from the start, so
    // that no signal ends them before they clean up (a browser launching when it came).
    let serving = || {
        let runtime = runtime()?;
        catch_stop_signals(&runtime);
        Ok::<_, anyhow::Error>(runtime)
    };
    // Each runtime is dropped at the end of its arm, before the reaping below.
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Explore(args) => serving().and_then(|rt| explore::run(&args, &rt)),
        Command::Plan(args) => runtime().and_then(|rt| plan::run(&args, &rt)),
        Command::Demo(args) => serving().and_then(|rt| demo::run(&args, &rt)),
        Command::Node(args) => serving().and_then(|rt| peers::node(&args, &rt)),
        Command::Queen(args) => serving().and_then(|rt| peers::queen(&args, &rt)),
        Command::Submit(args) => runtime().and_then(|rt| peers::submit(&args, &rt)),
        Command::Status(args) => runtime().and_then(|rt| operator::status(&args, &rt)),
        Command::Cancel(args) => runtime().and_then(|rt| operator::cancel(&args, &rt)),
        Command::Result(args) => runtime().and_then(|rt| operator::result(&args, &rt)),
        Command::Key { out, user: false } => peers::key(&out),
        Command::Key { out, user: true } => consent::create_user_key(&out),
        Command::Approve(args) => consent::approve(&args),
        Command::Revoke { consent, key } => consent::revoke_consent(&consent, &key, None),
        Command::Verify { dir, json } => verify::run(&dir, json),
        Command::Replay(args) => serving().and_then(|rt| replay::run(&args, &rt)),
        Command::Memory(command) => memory::run(command),
        Command::Capsule(command) => match command {
            CapsuleCommand::Keygen { out } => capsule::keygen(&out),
            CapsuleCommand::Capture(args) => serving().and_then(|rt| capsule::capture(&args, &rt)),
            CapsuleCommand::Inspect {
                capsule,
                secret,
                json,
            } => capsule::inspect(&capsule, &secret, json),
            CapsuleCommand::Revoke { capsule, key } => capsule::revoke(&capsule, &key),
            CapsuleCommand::Refresh(args) => serving().and_then(|rt| capsule::refresh(&args, &rt)),
        },
    };
    // Every runtime is gone by now; whatever is left of a browser dies with us, not after.
    let reaped = forager_node::browser::reap_orphans(forager_node::browser::GROUP_EXIT_LIMIT);
    if reaped > 0 {
        tracing::debug!(reaped, "reaped what was left of the browsers");
    }
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            match error.downcast_ref::<BadInput>() {
                Some(_) => ExitCode::from(2),
                None => ExitCode::from(1),
            }
        }
    }
}

/// The tokio runtime of a command, with `threads` worker threads.
fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()?)
}

/// Logs go to stderr, as text or JSON lines; `-v` shows info, `-vv` debug; `RUST_LOG`
/// overrides.
fn init_logging(verbose: u8, format: cli::LogFormat) {
    // chromiumoxide warns about every CDP event its generated types do not know (harmless,
    // one per page load) and errors when we kill a browser: only shown at -vv.
    let default = match verbose {
        0 => "warn,chromiumoxide=off,libp2p_gossipsub=error,libp2p_swarm=error",
        1 => "info,chromiumoxide=off,libp2p_gossipsub=warn",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        cli::LogFormat::Text => logs.init(),
        cli::LogFormat::Json => logs.json().with_current_span(true).init(),
    }
}

/// An error caused by the user's input (bad flag values, unreadable task files); the program
/// exits with status 2 for these.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// Set once a stop signal has been caught, for commands that catch them from the start.
static STOP: std::sync::OnceLock<tokio::sync::watch::Receiver<bool>> = std::sync::OnceLock::new();

/// Catches Ctrl-C (SIGINT) and SIGTERM from now on: the first one is remembered for
/// [`stop_requested`] (which resolves at once if it came before it was asked); a second one
/// ends the program at once, the user insisting.
fn catch_stop_signals(runtime: &tokio::runtime::Runtime) {
    use tokio::signal::unix::{SignalKind, signal};
    let _entered = runtime.enter();
    // Made here, synchronously: the handlers are in place before this returns.
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let (stopped, receiver) = tokio::sync::watch::channel(false);
    if STOP.set(receiver).is_err() {
        return;
    }
    runtime.spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        let _ = stopped.send(true);
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        eprintln!("stopped at once (a second signal)");
        std::process::exit(130);
    });
}

/// Resolves when the user asks the program to stop: Ctrl-C (SIGINT) or SIGTERM (caught since
/// the command started, for the commands that catch them from the start).
pub async fn stop_requested() {
    if let Some(receiver) = STOP.get() {
        let mut receiver = receiver.clone();
        let _ = receiver.wait_for(|stopped| *stopped).await;
        return;
    }
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match terminate.as_mut() {
                Some(signal) => { signal.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}
