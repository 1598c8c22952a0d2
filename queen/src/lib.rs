//! forager's queen: the actor that owns the top of every task's tree, the journal it
//! writes, the signed artifacts a passing run leaves and the report a person opens. The
//! `forager` program that drives it lives in `queen/cli`.
//!
//! # Layout
//!
//! - [`actor`]: the queen, one actor owning every task's state: commands, the network, the
//!   requests each task decides and the answers handed back to it.
//! - `task`: one task's rules, without I/O: expansion, branch assignment,
//!   reports, verification by a second node, writes claimed once, the result.
//! - [`config`]: how a queen works (`QueenConfig`): its folder, chunks, deadline, key.
//! - [`journal`]: `events.jsonl`, every decision appended and flushed; the result written
//!   atomically beside it.
//! - [`artifacts`]: the signed trajectory a passing run leaves (and `rollouts.json` with
//!   `--keep-all`), and `verify_run_dir`, behind `forager verify`.
//! - [`memory`]: verified successes kept as parametrized workflows, recalled for a new task
//!   of the same kind, exported and imported as signed bundles.
//! - [`shortcut`]: a success that took a detour off the start page, tried again without it.
//! - [`report`]: `report.html`, the page a person looks at.
//! - [`cluster`]: starting a node or a queen: network, replica, worker or queen.
//! - [`http`]: a router served on a loopback port (the demo site, the test fixtures).
//! - [`metrics`]: Prometheus metrics over HTTP (`--metrics` on `forager queen` and
//!   `forager node`): the queen's counters and gauges, and the server that answers scrapes.

pub mod actor;
pub mod artifacts;
pub mod cluster;
pub mod config;
pub mod http;
pub mod journal;
pub mod memory;
pub mod metrics;
pub mod report;
pub mod shortcut;
mod task;
