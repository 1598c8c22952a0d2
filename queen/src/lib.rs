//! forager's coordinator and command-line program.
//!
//! # Layout
//!
//! - [`artifacts`]: the signed trajectory a passing run leaves (and `rollouts.json` with
//!   `--keep-all`), and `forager verify`.
//! - [`report`]: `report.html`, the page a person looks at.
//! - [`replay`]: `forager replay`, a compiled workflow run without search.
//! - [`cli`]: the command line (clap), every flag documented for `--help`.
//! - [`simulate`]: `forager simulate`, strategy comparisons and weight sweeps on synthetic
//!   websites.
//! - [`explore`], [`demo`]: one task in the node's own Chromium; [`run`] runs it (progress,
//!   event log, result document); [`task_input`] builds tasks from flags and files;
//!   [`demo_site`] is the bundled demo website.

pub mod artifacts;
pub mod cli;
pub mod cluster;
pub mod coordinator;
pub mod demo;
pub mod demo_site;
pub mod explore;
pub mod journal;
pub mod peers;
pub mod replay;
pub mod report;
pub mod run;
pub mod simulate;
pub mod task_input;

/// An error caused by the user's input (bad flag values, unreadable task files); the program
/// exits with status 2 for these.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// Resolves when the user asks the program to stop: Ctrl-C (SIGINT) or SIGTERM.
pub async fn stop_requested() {
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
