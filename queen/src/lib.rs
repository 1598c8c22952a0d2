//! forager's coordinator and command-line program.
//!
//! # Layout
//!
//! - [`cli`]: the command line (clap), every flag documented for `--help`.
//! - [`simulate`]: `forager simulate`, strategy comparisons and weight sweeps on synthetic
//!   websites.

pub mod cli;
pub mod simulate;

/// An error caused by the user's input (bad flag values, unreadable task files); the program
/// exits with status 2 for these.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);
